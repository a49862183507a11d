"""Sync: hand edits in an editor become validated, indexed, committed memories.

- :func:`run_sync` (``remnic sync run``): one diff-aware pass; see :mod:`.engine`.
- :class:`Watcher` (``remnic sync watch``): a watchdog observer that batches
  bursts of saves into one sync each; see :mod:`.watch`.
- :mod:`.check`: pure validation and frontmatter normalisation of one file.
- :mod:`.hooks`: git hooks (pre-commit validation, post-merge/checkout/rewrite
  index updates) and the agent host hooks.
"""

from __future__ import annotations

from .check import Checked, check_bytes, check_text, planned_changes, render
from .engine import Change, SyncReport, run_sync
from .state import SyncState

__all__ = ["Change", "Checked", "SyncReport", "SyncState", "check_bytes", "check_text", "planned_changes",
           "render", "run_sync"]
