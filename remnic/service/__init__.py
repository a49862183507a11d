"""The service: the one API every surface (CLI, HTTP, MCP, hooks, Python) calls.

- :mod:`.memory`: the ``Memory`` facade;
- :mod:`.browse`: filtered, paged listing and the review queue;
- :mod:`.health`: ``status`` and ``doctor``.

The names load on first use, so a light module of the service (the merge driver git starts once per
file) does not import the storage, sync and recall layers with the package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remnic.sync.engine import SyncReport
    from remnic.sync.engine import event_line as sync_event_line

    from .memory import Memory
    from .writes import WriteResult

__all__ = ["Memory", "SyncReport", "WriteResult", "sync_event_line"]
_WHERE = {
    "Memory": ("remnic.service.memory", "Memory"),
    "WriteResult": ("remnic.service.writes", "WriteResult"),
    "SyncReport": ("remnic.sync.engine", "SyncReport"),
    "sync_event_line": ("remnic.sync.engine", "event_line"),
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _WHERE[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
