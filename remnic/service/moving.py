"""Where an updated memory's file goes: a category change moves it to that category's folder under
its own file name, and a move made by hand that git does not have yet is committed whole."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from remnic.errors import MemoryFormatError
from remnic.memfile.model import MemoryRecord, parse_file
from remnic.memfile.values import moved_category
from remnic.repo.transaction import Transaction

if TYPE_CHECKING:
    from .memory import Memory


def hand_move(
    mem: Memory, record: MemoryRecord, committed: bytes | None, wanted: dict[str, Any]
) -> tuple[str | None, str | None]:
    """(the committed path the file was moved from by hand, the category that move gives it) for a file
    git does not have yet; the category is set in ``wanted`` unless the update names one itself."""
    moved_from = _moved_from(mem, record) if committed is None else None
    normalised = None
    if moved_from is not None and "category" not in wanted:
        normalised = moved_category(record.frontmatter.get("category"), moved_from, record.path)
        if normalised is not None:
            wanted["category"] = normalised
    return moved_from, normalised


def category_move(mem: Memory, tx: Transaction, record: MemoryRecord, path: str, category: str) -> str:
    """The path the file at ``path`` takes for its new ``category``, the old one staged for removal when it
    differs: the category's folder, the file's own name and sub-path (a vault note's name is its title
    and the target of its ``[[links]]``), another name only on a clash."""
    prefer = _unsuffixed(mem, record, path)
    new_path = mem.files.relocated_path(path, category, record.namespace, taken=tx.exists, prefer=prefer)
    if new_path != path:
        tx.remove(path)
    return new_path


_SUFFIXED = re.compile(r"(.+)-\d+(\.[^./]*)?")


def _unsuffixed(mem: Memory, record: MemoryRecord, path: str) -> str | None:
    """``Plan.md`` for a ``Plan-2.md`` whose memory was once called ``Plan.md`` (a clash gave it the
    suffix): moved where that name is free, it gets its name back, and the vault's ``[[Plan]]`` links
    work again. None for any other name (a suffix the person chose stays)."""
    match = _SUFFIXED.fullmatch(path.rsplit("/", 1)[-1])
    if match is None or not record.has_id:
        return None
    wanted = match.group(1) + (match.group(2) or "")
    former = {v.path.rsplit("/", 1)[-1] for v in mem.ledger.history(path, memory_id=record.id)}
    return wanted if wanted in former else None


def _moved_from(mem: Memory, record: MemoryRecord) -> str | None:
    """The committed path a file git does not have yet was moved from by hand (gone from disk, and its
    committed version names this memory's id), or None."""
    if not record.has_id:
        return None
    for xy, path, orig in mem.ledger.status_porcelain():
        gone = orig if orig is not None and path == record.path else (path if "D" in xy else None)
        if gone is None or gone == record.path or (mem.root / gone).exists() or not mem.files.paths.is_memory(gone):
            continue
        data = mem.ledger.committed_bytes(gone)
        try:
            was = parse_file(data.decode("utf-8"), gone) if data is not None else None
        except (UnicodeDecodeError, MemoryFormatError):
            continue
        if was is not None and was.has_id and was.id == record.id:
            return gone
    return None
