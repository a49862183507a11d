"""Every memory write as a plan for the one write transaction (:mod:`remnic.repo.transaction`).

A plan validates what it can before taking the lock, then — under the lock, inside
the transaction — reads what it needs, checks duplicates and stages the files it
changes. The transaction commits them (group-committed with other plans of the same
kind), and the caller gets one :class:`WriteResult`.

- :mod:`.result`: :class:`WriteResult` and the commit message of a plan or a group;
- :mod:`.checks`: what is checked before anything is staged (may the repository take a commit now,
  are the ids a new memory names free and there);
- :mod:`.storing`, :mod:`.batch`, :mod:`.patching`: store, import, update and forget.
"""

from __future__ import annotations

from ..superseding import patch_staged as patch_staged  # re-exported: consolidate and flushing stage with it
from .batch import ImportPlan, import_records, plan_items
from .checks import GIT_AT_WORK_WAIT_S, check_writable
from .patching import forget, update
from .result import UNGROUPED, WriteResult, Written, describe, result_of, summary
from .storing import store

__all__ = [
    "GIT_AT_WORK_WAIT_S",
    "UNGROUPED",
    "ImportPlan",
    "WriteResult",
    "Written",
    "check_writable",
    "describe",
    "forget",
    "import_records",
    "patch_staged",
    "plan_items",
    "result_of",
    "store",
    "summary",
    "update",
]
