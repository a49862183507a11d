"""remnic: git-backed, file-native memory for AI agents and the people who work with them.

The public Python API — everything else is internal::

    from remnic import Memory
    mem = Memory.init("~/memories")          # or Memory.open() to discover it like git
    result = mem.store("We cut releases every Tuesday", category="decision")
    mem.get(result.id); mem.list(category="decision"); mem.versions(result.id)

Every write returns a :class:`WriteResult`; records are :class:`MemoryRecord`; ``observe`` returns
an :class:`ObserveResult` (turns buffered, flushes run, and ``.observations``: the
:class:`MemoryObservation` records its flushes made); ``recall`` returns a ``RecallResult`` of hits.
Errors derive from :class:`RemnicError`; a wrong argument is a :class:`ValidationError` naming it,
and a closed ``Memory`` refuses every call. The package ships ``py.typed``: its types reach your checker.

The names load on first use, so a command that only talks to a running server (``remnic
store`` with the daemon up) never imports the storage and search layers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.version import __version__

if TYPE_CHECKING:
    from remnic.errors import (
        LockTimeoutError,
        MemoryFormatError,
        NotFoundError,
        RemnicError,
        UsageError,
        ValidationError,
    )
    from remnic.memfile.model import MemoryRecord
    from remnic.observe.records import MemoryObservation
    from remnic.service import Memory, WriteResult
    from remnic.service.observing import ObserveResult

_WHERE = {
    "LockTimeoutError": "remnic.errors",
    "MemoryFormatError": "remnic.errors",
    "NotFoundError": "remnic.errors",
    "RemnicError": "remnic.errors",
    "UsageError": "remnic.errors",
    "ValidationError": "remnic.errors",
    "MemoryRecord": "remnic.memfile.model",
    "MemoryObservation": "remnic.observe.records",
    "Memory": "remnic.service",
    "ObserveResult": "remnic.service.observing",
    "WriteResult": "remnic.service",
}

__all__ = [
    "LockTimeoutError",
    "Memory",
    "MemoryFormatError",
    "MemoryObservation",
    "MemoryRecord",
    "NotFoundError",
    "ObserveResult",
    "RemnicError",
    "UsageError",
    "ValidationError",
    "WriteResult",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'remnic' has no attribute {name!r}")
