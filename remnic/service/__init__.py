"""The service: the one API every surface (CLI, HTTP, MCP, hooks, Python) calls.

- :mod:`.memory`: the ``Memory`` facade;
- :mod:`.browse`: filtered, paged listing and the review queue;
- :mod:`.health`: ``status`` and ``doctor``.
"""

from __future__ import annotations

from remnic.sync.engine import SyncReport
from remnic.sync.engine import event_line as sync_event_line

from .memory import Memory
from .writes import WriteResult

__all__ = ["Memory", "SyncReport", "WriteResult", "sync_event_line"]
