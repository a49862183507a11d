"""Review decisions a pull's merge put back: a memory in review approved (active) on one side and dismissed
(rejected) on the other merges to ``pending_review`` (:data:`remnic.memfile.merge.DISPUTED`), and the pull
names each such memory so the reviewers know their decisions crossed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.errors import MemoryFormatError
from remnic.memfile.merge import DISPUTED, REVIEW_STATUS
from remnic.memfile.model import parse_file

from .pull_guard import blob_bytes, tree_entries

if TYPE_CHECKING:
    from .memory import Memory


def _status(data: bytes | None, path: str) -> tuple[str | None, str | None]:
    """(status, id) of a memory file's bytes; (None, None) when absent or malformed."""
    if data is None:
        return None, None
    try:
        record = parse_file(data.decode("utf-8", "surrogateescape"), path)
    except MemoryFormatError:
        return None, None
    return record.status, record.id


def review_disputes(mem: Memory, ours: str | None, theirs: str | None, paths: list[str]) -> list[dict[str, Any]]:
    """The memories among ``paths`` now waiting for review whose status was active on one side of the merge
    and rejected on the other (``ours``/``theirs``: the two commits merged)."""
    if not ours or not theirs or not paths:
        return []
    entries = {side: tree_entries(mem, side, paths) for side in (ours, theirs, "HEAD")}
    blobs = blob_bytes(mem, {sha for found in entries.values() for _, sha in found.values()})
    out = []
    for path in paths:
        now, memory_id = _status(_bytes(blobs, entries["HEAD"].get(path)), path)
        if now != REVIEW_STATUS:
            continue
        sides = [_status(_bytes(blobs, entries[side].get(path)), path)[0] for side in (ours, theirs)]
        if set(sides) == set(DISPUTED):
            out.append({"path": path, "id": memory_id, "thisSide": sides[0], "otherSide": sides[1]})
    return out


def _bytes(blobs: dict[str, bytes], entry: tuple[str, str] | None) -> bytes | None:
    return blobs.get(entry[1]) if entry is not None else None
