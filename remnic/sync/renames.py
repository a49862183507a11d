"""Deleted paths paired with new ones: a file moved or renamed keeps its id and history; who else holds an id."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from remnic.errors import MemoryFormatError, RemnicError
from remnic.memfile.model import MemoryRecord, content_hash, parse_file
from remnic.memfile.normalize import Checked
from remnic.memfile.paths import MemoryPaths
from remnic.repo.ledger import Ledger


@dataclass
class OldFile:
    """What a deleted path held: its id and content hash, from the last sync or git."""

    id: str | None
    hash: str | None
    explicit_id: bool = False


def old_info(ledger: Ledger, path: str, pending: dict[str, Any] | None, refs: Iterable[str | None]) -> OldFile:
    if pending and pending.get("id"):
        return OldFile(pending.get("id"), pending.get("hash"), bool(pending.get("explicitId")))
    record = next(_committed_versions(ledger, path, refs), None)
    return OldFile(record.id, content_hash(record.content), record.has_id) if record else OldFile(None, None)


def _committed_versions(ledger: Ledger, path: str, refs: Iterable[str | None]) -> Iterator[MemoryRecord]:
    """The readable versions of ``path`` at each of ``refs``, in order."""
    for ref in refs:
        if not ref:
            continue
        try:
            yield parse_file(ledger.show(ref, path), path)
        except (RemnicError, MemoryFormatError):
            continue


def committed_id(ledger: Ledger, path: str, refs: Iterable[str | None]) -> str | None:
    """The id the committed version at ``path`` names itself (the first of ``refs`` whose version has a
    valid one): a file whose ``id:`` line was deleted by hand keeps it."""
    return next((r.id for r in _committed_versions(ledger, path, refs) if r.has_id), None)


def pair_renames(
    valid: list[tuple[str, bytes, Checked]], old: dict[str, OldFile], is_new: Callable[[str], bool]
) -> tuple[dict[str, str], dict[str, str]]:
    """New path → the deleted path it was renamed from; new path → the id it inherits."""
    by_id = {o.id: p for p, o in old.items() if o.id}
    by_hash = {o.hash: p for p, o in old.items() if o.hash}
    partner_of: dict[str, str] = {}
    forced_id: dict[str, str] = {}
    for path, _data, checked in valid:
        if not is_new(path):
            continue
        record = checked.record
        assert record is not None
        explicit = str(record.frontmatter["id"]) if record.has_id else None
        partner = by_id.get(explicit) if explicit else by_hash.get(content_hash(record.content))
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
