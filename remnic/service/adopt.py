"""Adopting a folder that already holds notes: which patterns make notes memories, and what is left alone."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import REPO_CONFIG_FILE
from remnic.errors import UsageError
from remnic.memfile.paths import glob_match
from remnic.repo.files import MemoryStore

from .health import skipped_files

if TYPE_CHECKING:
    from .memory import Memory

TEMPLATE_SETTINGS = (
    (".obsidian/templates.json", "folder"),
    (".obsidian/plugins/templater-obsidian/data.json", "templates_folder"),
)
"""Where Obsidian (its core Templates plugin, and the Templater plugin) names the vault's templates folder."""
DEFAULT_TEMPLATES = "Templates"
"""Why a note whose name has a newline is left alone (a glob's ``*`` and ``**`` stop at one)."""


def template_excludes(root: Path, patterns: Sequence[str]) -> list[str]:
    """``store.exclude`` patterns for a vault's note templates that ``patterns`` would adopt: their
    ``{{date}}`` placeholders are not YAML, so as memories they would be malformed on every sync."""
    folders = []
    for rel, key in TEMPLATE_SETTINGS:
        try:
            value = json.loads((root / rel).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, str) and value.strip(" /"):
            folders.append(value.strip(" /"))
    if not folders and ((root / ".obsidian").is_dir() or (root / DEFAULT_TEMPLATES).is_dir()):
        folders = [DEFAULT_TEMPLATES]
    return [f"{f}/**" for f in dict.fromkeys(folders) if any(glob_match(p, f"{f}/note.md") for p in patterns)]


def with_include(current: bytes | None, patterns: Sequence[str], root: Path) -> bytes:
    """The repository's remnic.config.json with ``patterns`` added to ``store.include`` (and the vault's
    templates folder to ``store.exclude`` when they would adopt it)."""
    try:
        data = json.loads(current or b"{}")
    except ValueError:
        raise UsageError(f"{root / REPO_CONFIG_FILE} is not valid JSON; fix it before adopting notes") from None
    if not isinstance(data, dict):
        raise UsageError(f"{root / REPO_CONFIG_FILE} must hold a JSON object")
    store = data.setdefault("store", {})
    store["include"] = list(dict.fromkeys([*store.get("include", []), *patterns]))
    templates = template_excludes(root, store["include"])
    if templates:
        store["exclude"] = list(dict.fromkeys([*store.get("exclude", []), *templates]))
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _written_excludes(files: MemoryStore) -> None:
    """Take in the ``store.exclude`` patterns :func:`with_include` just wrote: ``Memory.init`` made this
    handle from the settings before it wrote them, and its summary must say what sync will do."""
    try:
        store = json.loads((files.root / REPO_CONFIG_FILE).read_text(encoding="utf-8")).get("store") or {}
    except (OSError, ValueError, AttributeError):
        return
    wanted = [p for p in store.get("exclude") or [] if isinstance(p, str) and p not in files.paths.exclude]
    if wanted:
        files.paths = replace(files.paths, exclude=(*files.paths.exclude, *wanted))


def summary(files: MemoryStore, include: Sequence[str]) -> dict[str, Any]:
    """What ``sync run`` would adopt: how many memory files, and every other file left alone, with why."""
    _written_excludes(files)
    skipped = skipped_files(files)
    return {
        "memoryFiles": sum(1 for _ in files.iter_paths()),
        "skipped": skipped,
        "include": list(include),
        "exclude": list(files.paths.exclude),
    }


def interrupted_sync(mem: Memory, before: str | None, started: float) -> str:
    """What an interrupted ``sync run`` left, for its last line: the commit that stands (a first adoption's
    notes with their new frontmatter) or the notes given frontmatter and not committed, and what resumes."""
    ledger = mem.ledger
    after = ledger.head()
    if after is not None and after != before:
        paths = ledger.diff_names(before, after) if before is not None else []
        notes = sum(1 for _status, path, _old in paths if mem.files.paths.is_memory(path))
        done = (
            f"commit {after[:8]} stands: {notes} note(s) committed, their frontmatter included; "
            "the index was not finished"
        )
    else:
        written = 0
        for _status, path, _old in ledger.status_porcelain():
            try:  # written by this run: sync renames each rewritten file into place
                fresh = mem.files.paths.is_memory(path) and os.lstat(mem.root / path).st_mtime >= started
            except OSError:
                fresh = False
            written += fresh
        done = (
            f"{written} note(s) got their frontmatter on disk, nothing committed yet"
            if written
            else "nothing was written or committed"
        )
    return f"{done}; `remnic sync run` continues where it stopped (recall works meanwhile)"


def binary_files(root: Path, paths: Sequence[str]) -> list[str]:
    """Of ``paths`` (malformed memory files), those holding binary data (a NUL byte in their first 8 KiB,
    git's own test): an image or a PDF named ``.md``, nothing to fix, only to leave out (``store.exclude``)."""
    out = []
    for path in paths:
        try:
            with open(root / path, "rb") as fh:
                head = fh.read(8192)
        except OSError:
            continue
        if b"\0" in head:
            out.append(path)
    return out
