"""Housekeeping operations of the ``Memory`` facade: status and doctor, export, duplicates (see
:mod:`.health`, :mod:`.portable`, :mod:`.dedup`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError
from remnic.memfile.validate import check_namespace

if TYPE_CHECKING:
    from collections.abc import Callable

    from remnic.errors import FieldProblem
    from remnic.memfile.model import MemoryRecord

    from .dedup import DedupResult
    from .memory import Memory
    from .portable import Export


def _checked_namespace(namespace: str | None) -> None:
    problems = check_namespace(namespace) if namespace else []
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)


class HousekeepingOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    # --- health ---

    def status(self: Memory) -> dict[str, Any]:
        from . import health as _doctor
        from .model_checks import rerank_files

        health = self._index_health()
        found = _doctor.status(
            self.root, self.files, self.ledger, self.settings.store, health, self.index.indexed_paths()
        )
        return {**found, "rerank": rerank_files(self.settings.recall)}

    def doctor(self: Memory) -> list[dict[str, Any]]:
        """Checks with status ok|warn|fail and a detail line each."""
        from . import health as _doctor
        from .model_checks import model_checks

        return [
            *_doctor.checks(
                self.root,
                self.settings.origins.get("memoryDir", "default"),
                self.files,
                self.ledger,
                self.settings.store,
                self._index_health(deep=True),
                self.index.indexed_paths(),
            ),
            *model_checks(self.index, self.settings.recall),
            _doctor.buffers_check(self.durable_dir, self.settings.observe.buffer_max_minutes),
            self.merge_check(),
        ]

    def check_files(self: Memory) -> tuple[list[MemoryRecord], list[FieldProblem]]:
        """Every memory file checked as sync checks it (schema, namespace folder, secrets, conflict markers)."""
        from . import health as _doctor

        return _doctor.check_files(self.files, self.settings.store)

    def _index_health(self: Memory, *, deep: bool = False) -> dict[str, Any]:
        self.settle_index()
        try:
            return self.index.health(deep=deep).to_dict()
        except Exception as exc:  # noqa: BLE001 - health must report, not crash
            return {"state": "error", "detail": str(exc)}

    # --- export and duplicates ---

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
