"""A person's decision on a memory in the review queue (`remnic review approve|dismiss|flag`,
POST review-disposition): its new status, when and why, as one commit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.errors import UsageError, ValidationError
from remnic.memfile.model import MemoryRecord, now_iso

from . import writes as _writes
from .browse import REVIEW_STATUSES as QUEUED

if TYPE_CHECKING:
    from .memory import Memory

DISPOSITIONS = ("active", "pending_review", "quarantined", "rejected", "superseded", "archived")
"""The statuses a review may give a memory (approve = active, dismiss = rejected, flag = quarantined)."""
DECIDED = ("active", "rejected")
"""Statuses a review leaves behind: a memory a person approved or dismissed may be decided again."""


def check_reviewable(record: MemoryRecord, status: str) -> None:
    """Refuse a memory that is not waiting for review: a review must not resurrect a forgotten or
    superseded memory (its other keys would still say forgotten or superseded), nor quietly reject an
    ordinary active one. A person's own earlier decision (``reviewedAt``) may be changed, and an
    active memory may be flagged into the queue."""
    if record.status in QUEUED or (record.status in DECIDED and record.frontmatter.get("reviewedAt")):
        return
    if status == "quarantined" and record.status == "active":  # flagging puts a doubtful memory in the queue
        return
    key, said = {"superseded": ("supersededBy", "by"), "archived": ("mergedInto", "merged into")}.get(
        record.status, ("", "")
    )
    link = record.frontmatter.get(key) if key else None
    raise UsageError(
        f"{record.id} is {record.status}{f' ({said} {link})' if link else ''}, not waiting for review: a review "
        f"decides only memories in the review queue ({', '.join(QUEUED)}); to set its status anyway, "
        f"`remnic update {record.id} --status {status}`"
    )


def dispose(mem: Memory, memory_id: str, status: str, reason_code: str | None, *, source: str) -> _writes.WriteResult:
    """Set a queued memory's status with ``reviewedAt`` and ``reviewReasonCode`` (one commit)."""
    if status not in DISPOSITIONS:
        raise ValidationError.single("status", f"unknown review status {status!r}", options=DISPOSITIONS)
    changes: dict[str, Any] = {"status": status, "reviewedAt": now_iso()}
    if reason_code:
        changes["reviewReasonCode"] = reason_code
    elif "reviewReasonCode" in mem.get(memory_id).frontmatter:
        changes["reviewReasonCode"] = None  # an earlier disposition's reason is not this one's
    return _writes.update(
        mem,
        memory_id,
        changes,
        operation="review",
        source=source,
        extra_trailers=None,
        check=lambda record: check_reviewable(record, status),
    )
