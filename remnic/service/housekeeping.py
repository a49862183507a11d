"""Housekeeping operations of the ``Memory`` facade: export, duplicates (see :mod:`.portable`, :mod:`.dedup`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError
from remnic.memfile.validate import check_namespace

if TYPE_CHECKING:
    from .dedup import DedupResult
    from .memory import Memory


def _checked_namespace(namespace: str | None) -> None:
    problems = check_namespace(namespace) if namespace else []
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)


class HousekeepingOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    def export(self: Memory, *, fmt: str = "jsonl", namespace: str | None = None) -> Iterator[Any]:
        """Every memory file: JSON-ready objects (``jsonl``: import lines that restore each file byte for
        byte) or Markdown text chunks (``md``: one readable document). Every status is included."""
        from . import portable

        if fmt not in portable.FORMATS:
            raise ValidationError.single("format", f"unknown export format {fmt!r}", options=portable.FORMATS)
        _checked_namespace(namespace)
        if fmt == "md":
            return portable.export_markdown(self, namespace=namespace)
        return portable.export_lines(self, namespace=namespace)

    def dedup(self: Memory, *, merge: bool = False, namespace: str | None = None, source: str = "api") -> DedupResult:
        """Groups of exact and near-duplicate active memories; ``merge`` folds each group into its oldest
        member (the others archived with ``mergedInto``, the survivor's ``derived_from`` naming them),
        every group in one commit."""
        from .dedup import dedup

        _checked_namespace(namespace)
        return dedup(self, merge=merge, namespace=namespace, source=source)
