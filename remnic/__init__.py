"""remnic: git-backed, file-native memory for AI agents and the people who work with them.

The public Python API — everything else is internal::

    from remnic import Memory
    mem = Memory.init("~/memories")          # or Memory.open() to discover it like git
    result = mem.store("We cut releases every Tuesday", category="decision")
    mem.get(result.id); mem.list(category="decision"); mem.versions(result.id)

Every write returns a :class:`WriteResult` (``import_records``: an :class:`ImportResult`, naming
each line skipped as an :class:`ImportSkip`); records are :class:`MemoryRecord`; ``observe`` returns
an :class:`ObserveResult` (turns buffered, each :class:`FlushResult`, and ``.observations``: the
:class:`MemoryObservation` records its flushes made, holding an :class:`ExtractedFact`, its
:class:`Importance` and :class:`JudgeVerdict`); ``recall`` returns a :class:`RecallResult` of
:class:`RecallHit`. Every type a method returns, and every error it raises, is exported here (but
``Memory.index``, the search index itself, which is internal).
Errors derive from :class:`RemnicError`; a wrong argument is a :class:`ValidationError` naming it
(``.problems``: :class:`FieldProblem`), and a closed ``Memory`` refuses every call. The package
ships ``py.typed``: its types reach your checker.

The names load on first use, so a command that only talks to a running server (``remnic
store`` with the daemon up) never imports the storage and search layers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.version import __version__

if TYPE_CHECKING:
    from remnic.errors import (
        FieldProblem,
        LedgerError,
        LockTimeoutError,
        MemoryDirGoneError,
        MemoryFormatError,
        NotFoundError,
        PushRejectedError,
        ReadOnlyError,
        RemnicError,
        RemoteMovedError,
        RemoteUnreachableError,
        RepoBusyError,
        UncommittedChangesError,
        UsageError,
        ValidationError,
        WriteConflictError,
    )
    from remnic.index.state import FreshReport
    from remnic.memfile.model import MemoryRecord
    from remnic.observe.records import ExtractedFact, Importance, JudgeVerdict, MemoryObservation
    from remnic.recall.types import RecallHit, RecallResult
    from remnic.render.snapshot import RecallXraySnapshot
    from remnic.repo.history import MemoryHistory, VersionText
    from remnic.repo.messages import Version
    from remnic.service import Memory, WriteResult
    from remnic.service.consolidate import ConsolidationResult
    from remnic.service.dedup import DedupResult, DuplicateGroup
    from remnic.service.flushing import FlushResult
    from remnic.service.importing import ImportResult
    from remnic.service.observing import ObserveResult
    from remnic.service.portable import Export
    from remnic.service.portable import Skip as ImportSkip
    from remnic.service.pull import PullReport
    from remnic.sync.report import SyncReport

_ERRORS = (
    "FieldProblem",
    "LedgerError",
    "LockTimeoutError",
    "MemoryDirGoneError",
    "MemoryFormatError",
    "NotFoundError",
    "PushRejectedError",
    "ReadOnlyError",
    "RemnicError",
    "RemoteMovedError",
    "RemoteUnreachableError",
    "RepoBusyError",
    "UncommittedChangesError",
    "UsageError",
    "ValidationError",
    "WriteConflictError",
)
_WHERE = {
    **dict.fromkeys(_ERRORS, "remnic.errors"),
    "ConsolidationResult": "remnic.service.consolidate",
    "DedupResult": "remnic.service.dedup",
    "DuplicateGroup": "remnic.service.dedup",
    "Export": "remnic.service.portable",
    "ExtractedFact": "remnic.observe.records",
    "FlushResult": "remnic.service.flushing",
    "FreshReport": "remnic.index.state",
    "ImportResult": "remnic.service.importing",
    "ImportSkip": "remnic.service.portable:Skip",
    "Importance": "remnic.observe.records",
    "JudgeVerdict": "remnic.observe.records",
    "Memory": "remnic.service",
    "MemoryHistory": "remnic.repo.history",
    "MemoryObservation": "remnic.observe.records",
    "MemoryRecord": "remnic.memfile.model",
    "ObserveResult": "remnic.service.observing",
    "PullReport": "remnic.service.pull",
    "RecallHit": "remnic.recall.types",
    "RecallResult": "remnic.recall.types",
    "RecallXraySnapshot": "remnic.render.snapshot",
    "SyncReport": "remnic.sync.report",
    "Version": "remnic.repo.messages",
    "VersionText": "remnic.repo.history",
    "WriteResult": "remnic.service",
}
"""Public name → the module defining it (``module:name`` where the module calls it otherwise)."""

__all__ = [
    "ConsolidationResult",
    "DedupResult",
    "DuplicateGroup",
    "Export",
    "ExtractedFact",
    "FieldProblem",
    "FlushResult",
    "FreshReport",
    "ImportResult",
    "ImportSkip",
    "Importance",
    "JudgeVerdict",
    "LedgerError",
    "LockTimeoutError",
    "Memory",
    "MemoryDirGoneError",
    "MemoryFormatError",
    "MemoryHistory",
    "MemoryObservation",
    "MemoryRecord",
    "NotFoundError",
    "ObserveResult",
    "PullReport",
    "PushRejectedError",
    "ReadOnlyError",
    "RecallHit",
    "RecallResult",
    "RecallXraySnapshot",
    "RemnicError",
    "RemoteMovedError",
    "RemoteUnreachableError",
    "RepoBusyError",
    "SyncReport",
    "UncommittedChangesError",
    "UsageError",
    "ValidationError",
    "Version",
    "VersionText",
    "WriteConflictError",
    "WriteResult",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        module, _, attr = _WHERE[name].partition(":")
        value = getattr(importlib.import_module(module), attr or name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'remnic' has no attribute {name!r}")
