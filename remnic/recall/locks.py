"""The X-ray mutex: one lock per memory root, shared by every surface in the process.

CLI, HTTP and MCP all call ``Memory.recall_xray``; a server hosts HTTP and MCP in
one process with several ``Memory`` objects over time, so the lock is keyed by the
resolved memory root rather than held by one object.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_registry_lock = threading.Lock()
_locks: dict[str, threading.RLock] = {}


def xray_lock(root: str | os.PathLike[str]) -> threading.RLock:
    key = os.path.realpath(Path(root))
    with _registry_lock:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = threading.RLock()
        return lock
