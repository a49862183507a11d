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
:class:`RecallHit`; ``review_disposition`` a :class:`ReviewResult`. Every type a method returns, and every error it raises, is exported here (but
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
    from remnic.recall.types import Candidate, RecallHit, RecallResult, ScoreTerms, StageCount, TierReport
    from remnic.render.snapshot import (
        Budget,
        FilterTrace,
        PeerProfileInjection,
        Provenance,
        RecallXraySnapshot,
        ScoreDecomposition,
        SourceAnchor,
        SourceSpan,
        TierExplain,
        XrayResult,
    )
    from remnic.repo.history import MemoryHistory, VersionText
    from remnic.repo.messages import Version
    from remnic.service import Memory, WriteResult
    from remnic.service.consolidate import ConsolidationResult
    from remnic.service.dedup import DedupResult, DuplicateGroup
    from remnic.service.flushing import FlushResult
    from remnic.service.importing import ImportResult
    from remnic.service.observing import ObserveResult
    from remnic.service.portable import Export, FileIssue
    from remnic.service.portable import Skip as ImportSkip
    from remnic.service.pull import PullReport
    from remnic.service.reverting import AlsoChanged, RevertResult
    from remnic.service.review import ReviewResult
    from remnic.sync.report import Change, SyncReport

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
    "AlsoChanged": "remnic.service.reverting",
    "Budget": "remnic.render.snapshot",
    "Candidate": "remnic.recall.types",
    "Change": "remnic.sync.report",
    "ConsolidationResult": "remnic.service.consolidate",
    "DedupResult": "remnic.service.dedup",
    "DuplicateGroup": "remnic.service.dedup",
    "Export": "remnic.service.portable",
    "ExtractedFact": "remnic.observe.records",
    "FileIssue": "remnic.service.portable",
    "FilterTrace": "remnic.render.snapshot",
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
    "PeerProfileInjection": "remnic.render.snapshot",
    "Provenance": "remnic.render.snapshot",
    "PullReport": "remnic.service.pull",
    "RecallHit": "remnic.recall.types",
    "RecallResult": "remnic.recall.types",
    "RecallXraySnapshot": "remnic.render.snapshot",
    "RevertResult": "remnic.service.reverting",
    "ReviewResult": "remnic.service.review",
    "ScoreDecomposition": "remnic.render.snapshot",
    "ScoreTerms": "remnic.recall.types",
    "SourceAnchor": "remnic.render.snapshot",
    "SourceSpan": "remnic.render.snapshot",
    "StageCount": "remnic.recall.types",
    "SyncReport": "remnic.sync.report",
    "TierExplain": "remnic.render.snapshot",
    "TierReport": "remnic.recall.types",
    "Version": "remnic.repo.messages",
    "VersionText": "remnic.repo.history",
    "WriteResult": "remnic.service",
    "XrayResult": "remnic.render.snapshot",
}
"""Public name → the module defining it (``module:name`` where the module calls it otherwise)."""

__all__ = [
    "AlsoChanged",
    "Budget",
    "Candidate",
    "Change",
    "ConsolidationResult",
    "DedupResult",
    "DuplicateGroup",
    "Export",
    "ExtractedFact",
    "FieldProblem",
    "FileIssue",
    "FilterTrace",
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
    "PeerProfileInjection",
    "Provenance",
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
    "RevertResult",
    "ReviewResult",
    "ScoreDecomposition",
    "ScoreTerms",
    "SourceAnchor",
    "SourceSpan",
    "StageCount",
    "SyncReport",
    "TierExplain",
    "TierReport",
    "UncommittedChangesError",
    "UsageError",
    "ValidationError",
    "Version",
    "VersionText",
    "WriteConflictError",
    "WriteResult",
    "XrayResult",
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


def __dir__() -> list[str]:
    """The lazily loaded names too, so completion (a REPL, an IDE) offers them before first use."""
    return sorted({*globals(), *__all__})
