"""Sync: hand edits in an editor become validated, indexed, committed memories.

- :func:`run_sync` (``remnic sync run``): one diff-aware pass; see :mod:`.engine`.
- :mod:`.state`: what the last run reconciled, and stable reads of files being saved.

The watcher and the git hooks that drive a sync live in :mod:`remnic.drivers`.
"""

from __future__ import annotations

from .engine import Change, SyncReport, SyncTarget, run_sync
from .state import SyncState

__all__ = ["Change", "SyncReport", "SyncState", "SyncTarget", "run_sync"]
