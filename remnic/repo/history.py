"""A memory's versions as git knows them: picking a version, its text, diffs, the timeline.

Pure reads over the ledger and the files; writing a revert stays in the service,
which owns the write path (lock → write → commit → index).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from remnic.errors import MemoryFormatError, RemnicError, UsageError
from remnic.memfile.model import parse_file
from remnic.memfile.values import own_id

from . import gitlog
from .files import MemoryStore
from .ledger import Ledger
from .messages import Version, unified_diff


def pick(versions: list[Version], spec: str, *, allow_working: bool = True) -> Version:
    """The version named by ``v3``, ``3``, a sha prefix (≥ 4 hex) or ``latest``."""
    text = spec.strip().lower()
    if text in ("head", "latest", "current"):
        return versions[-1]
    number = text[1:] if text.startswith("v") else text
    if number.isdigit() and len(number) < 7 and 1 <= int(number) <= len(versions):
        return versions[int(number) - 1]
    matches = [v for v in versions if len(text) >= 4 and v.sha.startswith(text)]
    if len(matches) == 1 and not (number.isdigit() and len(number) < 7):
        return matches[0]
    working = ", 'working'" if allow_working else ""
    raise UsageError(f"no version {spec!r}; valid versions: v1..v{len(versions)}, a commit sha{working} or 'latest'")


@dataclass(frozen=True)
class VersionText:
    """One version of a file as read: a deletion (or a working file that is gone) has no text."""

    label: str
    text: str
    deleted: bool = False
    before: str | None = None
    """For a deleted one, the label of the newest version before it with text (what was deleted)."""


@dataclass(frozen=True)
class MemoryHistory:
    """A memory's committed versions and where its file is on disk now."""

    versions: list[Version]
    memory_id: str | None
    """The id its versions' files carry (None when none has one)."""
    working: str | None
    """The path of its file on disk now: None when it is not on disk (deleted, not committed yet)."""

    uncommitted: bool
    """Whether the file on disk differs from the newest version (edited, moved or deleted since)."""

    @property
    def working_path(self) -> str:
        """Where ``working`` reads: the file on disk, or for a file gone the path it was committed at."""
        return self.working or self.versions[-1].path

    @staticmethod
    def of(ledger: Ledger, versions: list[Version], memory_id: str | None, working: str | None) -> MemoryHistory:
        latest = versions[-1]
        if working is None:
            # Gone from disk is uncommitted only while HEAD still holds it there: a file whose id a
            # committed change replaced holds another memory now, and nothing is left to commit.
            uncommitted = not latest.deleted and _committed_id(ledger, latest.path) in (memory_id, "")
        else:
            uncommitted = working != latest.path or ledger.is_dirty(working)
        return MemoryHistory(versions, memory_id, working, uncommitted)


def read_version(files: MemoryStore, ledger: Ledger, found: MemoryHistory, spec: str) -> VersionText:
    """A version's text; ``working`` is the file as it is on disk now."""
    versions = found.versions
    if spec.strip().lower() == "working":
        path = found.working_path
        try:
            if found.working is None:
                raise FileNotFoundError(path)  # what sits at its old path now is another memory, or nothing
            return VersionText(f"{path}@working", files.read_text(path))
        except FileNotFoundError:
            return VersionText(f"{path}@working", "", deleted=True, before=last_with_text(versions))
    v = pick(versions, spec)
    if v.deleted:  # git has no blob at a deletion: its text is empty, so a diff shows every line removed
        before = last_with_text(versions[: v.number - 1])
        return VersionText(f"{v.path}@{v.label} ({v.short}, deleted)", "", deleted=True, before=before)
    return VersionText(f"{v.path}@{v.label} ({v.short})", ledger.show(v.sha, v.path))


def last_with_text(versions: list[Version]) -> str | None:
    """The label of the newest version that has text (not a deletion), if any."""
    return next((v.label for v in reversed(versions) if not v.deleted), None)


def version_text(files: MemoryStore, ledger: Ledger, found: MemoryHistory, spec: str) -> tuple[str, str]:
    """(label, file text) of a version; ``working`` is the file as it is on disk now."""
    read = read_version(files, ledger, found, spec)
    return read.label, read.text


def version_diff(
    files: MemoryStore, ledger: Ledger, found: MemoryHistory, old: str | None = None, new: str | None = None
) -> str:
    """A unified diff between two versions (default: the last two, or latest vs uncommitted edits)."""
    versions = found.versions
    if old is None and new is None:
        if found.uncommitted:
            old, new = "latest", "working"
        elif len(versions) >= 2:
            old, new = f"v{len(versions) - 1}", f"v{len(versions)}"
        else:
            old, new = "v1", "v1"
    elif new is None:
        new = "latest"
    assert old is not None and new is not None
    old_label, old_text = version_text(files, ledger, found, old)
    new_label, new_text = version_text(files, ledger, found, new)
    return unified_diff(old_text, new_text, old_label, new_label)


def timeline(ledger: Ledger, versions: list[Version]) -> list[dict[str, Any]]:
    """One event per commit, with the memory's status at that version."""
    texts = gitlog.blob_texts(ledger._run_bytes, [(v.sha, v.path) for v in versions])
    events = []
    for v, text in zip(versions, texts):
        entry = v.to_dict()
        # Bulk commits name many memories and namespaces; a timeline shows only what concerns this one.
        entry["trailers"] = {
            k: vals for k, vals in v.trailers.items() if k.endswith(("-Operation", "-Source", "-Reverted-To"))
        }
        entry["status"] = "deleted" if v.deleted else _status(text, v.path)
        events.append(entry)
    return events


def working_fields(found: MemoryHistory) -> dict[str, Any]:
    """The file on disk described with a version's fields (no number, sha or date: it is not committed)."""
    latest = found.versions[-1]
    moved = found.working is not None and found.working != latest.path
    return {
        "version": None,
        "label": "working",
        "sha": "",
        "path": found.working_path,
        "previousPath": latest.path if moved else None,
        "date": "",
    }


def working_event(files: MemoryStore, ledger: Ledger, found: MemoryHistory) -> dict[str, Any] | None:
    """The file on disk as one more event after the commits, when it differs from the newest one."""
    if not found.uncommitted:
        return None
    latest = found.versions[-1]
    read = read_version(files, ledger, found, "working")
    moved = found.working is not None and found.working != latest.path
    return {
        **working_fields(found),
        "author": "",
        "subject": "uncommitted changes on disk",
        "change": "D" if read.deleted else "R" if moved else "M",
        "deleted": read.deleted,
        "operation": "uncommitted",
        "trailers": {},
        "status": "deleted" if read.deleted else _status(read.text, found.working_path),
        "uncommitted": True,
    }


def _committed_id(ledger: Ledger, path: str) -> str | None:
    """The id of the file HEAD records at ``path``: None when there is none, "" when it has no id."""
    data = ledger.committed_bytes(path)
    if data is None:
        return None
    try:
        return own_id(parse_file(data.decode("utf-8"), path).frontmatter) or ""
    except (UnicodeDecodeError, MemoryFormatError, RemnicError):
        return ""


def _status(text: str | None, path: str) -> str:
    if text is None:
        return "malformed"
    try:
        return parse_file(text, path).status
    except (MemoryFormatError, RemnicError):
        return "malformed"
