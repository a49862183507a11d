"""What ``GET maintenance`` reports besides health: the memories a caller may read by status, the
review queue's size, and the last consolidation pass (its note in the state folder). Read-only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .browse import REVIEW_STATUSES
from .consolidate import last_run

if TYPE_CHECKING:
    from .memory import Memory


def maintenance_summary(
    mem: Memory,
    *,
    namespace: str | None,
    readable: Callable[[str], bool] | None = None,
    whole_repository: bool = True,
) -> dict[str, Any]:
    """``{memories: {total, byStatus}, reviewQueue: {total, pendingReview, quarantined}, lastConsolidation}``
    over ``namespace`` (None: every namespace) and what ``readable(namespace)`` admits.

    ``lastConsolidation`` is ``{at, considered, merged, commit}``, or only ``{at}`` when the caller does
    not see the ``whole_repository`` (a pass spans every namespace, so its counts are not the caller's);
    null before the first pass.
    """
    records = [r for r in mem.list(namespace=namespace) if readable is None or readable(r.namespace)]
    by_status = Counter(r.status for r in records)
    waiting = {status: by_status.get(status, 0) for status in REVIEW_STATUSES}
    note = last_run(mem.settings.state_dir)
    if note is not None:
        keys = ("at", "considered", "merged", "commit") if whole_repository else ("at",)
        note = {key: note.get(key) for key in keys}
    return {
        "memories": {"total": len(records), "byStatus": dict(sorted(by_status.items()))},
        "reviewQueue": {
            "total": sum(waiting.values()),
            "pendingReview": waiting.get("pending_review", 0),
            "quarantined": waiting.get("quarantined", 0),
        },
        "lastConsolidation": note,
    }
