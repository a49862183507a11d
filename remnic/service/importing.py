"""An import batch as every surface runs it (``Memory.import_records``, ``remnic import``).

First the batch is checked as a dry run checks it (:func:`.portable.prepare_import`): a line restoring
a file that is here byte for byte, a line whose text an active memory of its namespace already has (or,
for a line with another status, a memory with that text, status and category), and a line repeating an
earlier one's text are exact duplicates, named with their line and reason and left out, so an import
run again writes nothing new. Then the rest is written in one commit (:func:`.writes.import_records`):
all or nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError
from remnic.memfile.model import content_hash

from . import writes as _writes
from .portable import ImportCheck, Skip, prepare_import
from .writes import WriteResult

if TYPE_CHECKING:
    from .memory import Memory


@dataclass(frozen=True)
class ImportResult(WriteResult):
    """What an import did: a :class:`WriteResult` (``records`` written or restored, ``duplicates``: the id
    each skipped line duplicates) with the lines skipped as exact duplicates, each naming its reason."""

    skipped: tuple[Skip, ...] = ()
    """The lines found to be exact duplicates before writing, in line order: ``file`` (this very file
    is here), ``text`` (a memory here has its text) or ``batch`` (an earlier line has it)."""
    phases: Mapping[str, float] = field(default_factory=dict)
    """Seconds spent checking the batch (``validate``) and writing it (``write``)."""

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "skipped": [s.to_dict() for s in self.skipped]}


def import_batch(
    mem: Memory,
    items: Sequence[Any],
    *,
    line_numbers: Sequence[int] | None,
    namespace: str | None,
    source: str,
    progress: Callable[[int, int], None] | None = None,
) -> ImportResult:
    """Check the whole batch, skip its exact duplicates, write the rest in one commit; nothing is
    written unless every line is valid (a ValidationError names each problem's line and field)."""
    started = time.perf_counter()
    checked = prepare_import(mem, items, line_numbers, namespace, source)
    if checked.problems:
        summary = _writes.summary(checked.problems)
        raise ValidationError(f"{summary}; nothing was imported", problems=checked.problems)
    validated = time.perf_counter()
    if checked.items:
        written: WriteResult = _writes.import_records(
            mem,
            checked.items,
            source=source,
            namespace=namespace,
            line_numbers=checked.line_numbers,
            progress=progress,
            checked=checked.plan,
        )
    else:
        written = WriteResult("import", (), None, changed=False)
    phases = {"validate": validated - started, "write": time.perf_counter() - validated}
    return ImportResult(
        "import",
        written.records,
        written.commit,
        written.changed,
        (*_skipped_ids(mem, checked, written), *written.duplicates),
        written.warnings,
        skipped=tuple(checked.skipped),
        phases=phases,
    )


def _skipped_ids(mem: Memory, checked: ImportCheck, written: WriteResult) -> Iterable[str]:
    """The id each line skipped before writing duplicates (one the write skipped itself is in its own
    ``duplicates``); a ``batch`` line duplicates the memory its earlier line was written as."""
    by_text = {(r.namespace, content_hash(r.content)): r.id for r in written.records}
    for skip in checked.skipped:
        if skip.kept:
            continue
        if skip.id is not None:
            yield skip.id
            continue
        key = checked.texts[skip.line]
        found = by_text.get(key)
        if found is None:  # the earlier line was itself found a duplicate while writing
            record = mem.find_duplicate(*key)
            found = record.id if record is not None else None
        if found is not None:
            yield found
