"""Caller-chosen ids that clash: within one import, or with a memory already in the repository.

Ids compare in Unicode NFC, so two spellings of one accented id (``café-1`` precomposed, ``cafe\\u0301-1``
decomposed) are one id: the second is refused, and the message says why they are one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from remnic.errors import FieldProblem

PlannedMemory = tuple[dict[str, Any], str, str, str]
_NFC_NOTE = " (ids compare in Unicode NFC: an accented letter typed precomposed or decomposed is one id)"


def duplicate_ids(
    chosen: Sequence[tuple[str, int, PlannedMemory]],
    existing_ids: Callable[[], Mapping[str, str]],
    already_here: Callable[[PlannedMemory], bool] | None,
) -> list[FieldProblem]:
    """Caller-chosen ids that repeat within the batch or name another existing memory (two files, one id)."""
    if not chosen:
        return []
    existing = existing_ids()
    seen: dict[str, int] = {}
    problems = []
    for memory_id, line, item in chosen:
        if memory_id in seen:
            problems.append(
                FieldProblem(
                    "id", f"{memory_id!r} is used again (first on line {seen[memory_id]}){_note(memory_id)}", line=line
                )
            )
        elif memory_id in existing and not (already_here and already_here(item)):
            problems.append(
                FieldProblem(
                    "id",
                    f"{memory_id!r} already exists ({existing[memory_id]}){_note(memory_id)}; leave `id` out to import the line "
                    "as a new memory with an id of its own",
                    line=line,
                )
            )
        seen.setdefault(memory_id, line)
    return problems


def _note(memory_id: str) -> str:
    return "" if memory_id.isascii() else _NFC_NOTE
