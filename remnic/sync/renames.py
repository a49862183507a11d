"""Deleted paths paired with new ones: a file moved or renamed keeps its id and history; who else holds an id."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from remnic.errors import MemoryFormatError, RemnicError
from remnic.memfile.model import MemoryRecord, content_hash, parse_file
from remnic.memfile.normalize import Checked
from remnic.memfile.paths import MemoryPaths, folder_category
from remnic.memfile.values import CREATED_KEYS, UPDATED_KEYS, category_of
from remnic.repo.ledger import Ledger


@dataclass
class OldFile:
    """What a deleted path held: its id and content hash, from the last sync or git."""

    id: str | None
    hash: str | None
    explicit_id: bool = False
    held_for: str | None = None
    """The new path its deletion was held for (:mod:`.moves`): that file, once valid, is the note moved."""


def old_info(ledger: Ledger, path: str, pending: dict[str, Any] | None, refs: Iterable[str | None]) -> OldFile:
    held_for = str(pending["heldFor"]) if pending and pending.get("heldFor") else None
    if pending and pending.get("id"):
        return OldFile(pending.get("id"), pending.get("hash"), bool(pending.get("explicitId")), held_for)
    record = next(_committed_versions(ledger, path, refs), None)
    if record is None:
        return OldFile(None, None, held_for=held_for)
    return OldFile(record.id, content_hash(record.content), record.has_id, held_for)


def _committed_versions(ledger: Ledger, path: str, refs: Iterable[str | None]) -> Iterator[MemoryRecord]:
    """The readable versions of ``path`` at each of ``refs``, in order (one that is not UTF-8 is
    malformed, as sync's check says: git's text of it holds escaped bytes no hash can take)."""
    for ref in refs:
        if not ref:
            continue
        try:
            text = ledger.show(ref, path)
            text.encode("utf-8")
            record = parse_file(text, path)
        except (RemnicError, MemoryFormatError, UnicodeEncodeError):
            continue
        yield record


def committed_record(ledger: Ledger, path: str, refs: Iterable[str | None]) -> MemoryRecord | None:
    """The committed version at ``path`` that names its id (the first of ``refs`` whose version has a
    valid one): a file whose ``id:`` line was deleted by hand keeps it, with the rest of its frontmatter."""
    return next((r for r in _committed_versions(ledger, path, refs) if r.has_id), None)


_SAID_TOGETHER = (
    CREATED_KEYS,
    UPDATED_KEYS,
    ("tags", "tag"),
    ("confidence", "confidenceTier"),
    ("importanceScore", "importance", "priority", "importanceLevel"),
)
"""Keys that say one thing: a file stating one of them keeps its word, its committed siblings stay out."""


def kept_keys(meta: Mapping[str, Any], committed: Mapping[str, Any]) -> dict[str, Any]:
    """The committed frontmatter keys a file lost with its ``id`` (an editor saving a buffer from
    before sync added the frontmatter): the edit was to the body, so its state (status, tags, scores,
    ``created``, supersession) comes back rather than defaults. Keys the file states win."""
    said = set(meta)
    for group in _SAID_TOGETHER:
        if said & set(group):
            said |= set(group)
    return {k: v for k, v in committed.items() if k not in said}


def kept_note(kept: Mapping[str, Any]) -> str:
    """The sync line's word on what came back: every key but the id and the times a body edit stamps."""
    names = [k for k in kept if k not in ("id", "contentHash", *UPDATED_KEYS)]
    if "status" in kept:
        names[names.index("status")] = f"status: {kept['status']}"
    return "frontmatter kept from the committed version: " + ", ".join(names) if names else ""


def with_kept(checked: Checked, kept: Mapping[str, Any]) -> Checked:
    """``checked`` as if its file still had the ``kept`` keys: what normalising plans against."""
    record = checked.record
    assert record is not None
    merged = MemoryRecord(record.path, {**kept, **record.frontmatter}, record.body, record.namespace)
    return replace(checked, record=merged)


def moved_category(record: MemoryRecord, partner: str | None) -> str | None:
    """The new folder's category for a file moved between category folders whose ``category``
    named the old one (a folder move is how a person recategorises a note)."""
    if partner is None:
        return None
    old, new = folder_category(partner), folder_category(record.path)
    if old is None or new is None or old == new:
        return None
    said = record.frontmatter.get("category")
    return new if said is not None and category_of({"category": said}, partner) == old else None


def pair_renames(
    valid: list[tuple[str, bytes, Checked]], old: dict[str, OldFile], is_new: Callable[[str], bool]
) -> tuple[dict[str, str], dict[str, str]]:
    """New path → the deleted path it was renamed from; new path → the id it inherits."""
    by_id = {o.id: p for p, o in old.items() if o.id}
    by_hash = {o.hash: p for p, o in old.items() if o.hash}
    held = {o.held_for: p for p, o in old.items() if o.held_for}  # moved malformed, fixed since: a rename too
    partner_of: dict[str, str] = {}
    forced_id: dict[str, str] = {}
    for path, _data, checked in valid:
        if not is_new(path):
            continue
        record = checked.record
        assert record is not None
        explicit = str(record.frontmatter["id"]) if record.has_id else None
        partner = (by_id.get(explicit) if explicit else by_hash.get(content_hash(record.content))) or held.get(path)
        if partner and partner not in partner_of.values():
            partner_of[path] = partner
            if not explicit and old[partner].id:
                forced_id[path] = str(old[partner].id)
    return partner_of, forced_id


def holder_of(ledger: Ledger, paths: MemoryPaths, memory_id: str, path: str, index: Any) -> str | None:
    """Another path that holds ``memory_id``: the index's answer, or git's committed files without one."""
    if index is not None:
        try:
            return index.path_of(memory_id)
        except Exception:  # noqa: BLE001 - a failed lookup must not stop sync
            return None
    if ledger.head() is None:
        return None
    try:
        out = ledger.git("grep", "-l", "-F", "-e", f"id: {memory_id}", "HEAD", "--", "*.md")
    except RemnicError:  # git grep exits 1 when nothing matches
        return None
    hits = [line.split(":", 1)[1] for line in out.splitlines() if ":" in line]
    return next((h for h in hits if h != path and paths.is_memory(h)), None)
