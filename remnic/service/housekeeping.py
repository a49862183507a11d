"""Housekeeping operations of the ``Memory`` facade: export, duplicates (see :mod:`.portable`, :mod:`.dedup`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from remnic.errors import ValidationError
from remnic.memfile.validate import check_namespace

if TYPE_CHECKING:
    from collections.abc import Callable

    from .dedup import DedupResult
    from .memory import Memory
    from .portable import Export


def _checked_namespace(namespace: str | None) -> None:
    problems = check_namespace(namespace) if namespace else []
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)


class HousekeepingOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    def export(self: Memory, *, fmt: str = "jsonl", namespace: str | None = None) -> Export:
        """Every memory file, every status: ``jsonl`` (JSON-ready import lines that restore each file byte
        for byte) or ``md`` (one readable document, in chunks). A malformed file is carried as it is and
        named in ``malformed``; one that cannot be carried as text is named in ``skipped``."""
        from . import portable

        if fmt not in portable.FORMATS:
            raise ValidationError.single("format", f"unknown export format {fmt!r}", options=portable.FORMATS)
        _checked_namespace(namespace)
        return portable.export(self, fmt, namespace)

    def dedup(
        self: Memory,
        *,
        merge: bool = False,
        namespace: str | None = None,
        source: str = "api",
        progress: Callable[[int, int], None] | None = None,
    ) -> DedupResult:
        """Groups of exact and near-duplicate active memories; ``merge`` folds each group into its oldest
        member (the others archived with ``mergedInto``, the survivor's ``derived_from`` naming them),
        every group in one commit."""
        from .dedup import dedup

        _checked_namespace(namespace)
        return dedup(self, merge=merge, namespace=namespace, source=source, progress=progress)
