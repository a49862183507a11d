"""A person's decision on a memory in the review queue (`remnic review approve|dismiss|flag`,
POST review-disposition): its new status, when and why, as one commit.

An approved fact that states a value of something ("the staging DB port is 5434", hedged when it
was said, so queued without a key) takes its place among that key's values as an accepted fact
would: a value said after it stays current (the fact is approved as superseded by it, and the
result says so), and it supersedes a value said before it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from remnic.errors import UsageError, ValidationError
from remnic.memfile.model import MemoryRecord, now_iso, parse_time
from remnic.memfile.validate import check_bytes
from remnic.observe.keys import statement_key
from remnic.observe.records import key_part

from . import arguments as _check
from . import writes as _writes
from .browse import REVIEW_STATUSES as QUEUED
from .browse import newest_first
from .superseding import stranded_by

if TYPE_CHECKING:
    from .memory import Memory

DISPOSITIONS = ("active", "rejected", "quarantined")
"""The statuses a review may give a memory: approve = active, dismiss = rejected, flag = quarantined.
Any other status is set with an update (`remnic update ID --status`), which keeps its own links."""
DECIDED = ("active", "rejected")
"""Statuses a review leaves behind: a memory a person approved or dismissed may be decided again."""


def queue_page(
    mem: Memory,
    *,
    namespace: str | None = None,
    limit: int = 50,
    offset: int = 0,
    readable: Callable[[str], bool] | None = None,
) -> tuple[list[MemoryRecord], int]:
    """The review queue (pending_review and quarantined), newest first: (the page from ``offset``, how
    many wait in all), so a reviewer sees the queue's size and can page through it as ``list`` pages.
    ``readable(namespace)``: only what the caller may read counts (a server's token)."""
    limit, offset = _check.count(limit, "limit"), _check.count(offset, "offset")
    waiting = sorted(
        (
            r
            for r in mem.list(namespace=namespace)
            if r.status in QUEUED and (readable is None or readable(r.namespace))
        ),
        key=newest_first,
    )
    return waiting[offset : offset + limit], len(waiting)


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
        raise ValidationError.single(
            "status",
            f"{status!r} is not a review decision (approve: active, dismiss: rejected, flag: quarantined; "
            "another status is set by an update)",
            options=DISPOSITIONS,
        )
    reason_code = _check.one_line(reason_code, "reason_code")
    changes: dict[str, Any] = {"status": status, "reviewedAt": now_iso()}
    record = mem.get(memory_id)
    was = _committed_status(mem, record)  # a status set by hand and not committed yet is no decision yet
    # A rejection committed by hand (sync) left what it replaced superseded by a rejected memory: the
    # dismissal is what revives it, so it is no retry even when the file already says rejected.
    stranded = status == "rejected" == record.status and bool(stranded_by(mem.files.scan().records, record.id))
    if (
        record.status == status == was
        and record.frontmatter.get("reviewedAt")
        and (reason_code or None) == _reason(record)
        and not stranded
    ):
        check_reviewable(record, status)
        return _writes.WriteResult("review", (record,), None, changed=False)  # a retried decision: no new commit
    if reason_code:
        changes["reviewReasonCode"] = reason_code
    elif "reviewReasonCode" in record.frontmatter:
        changes["reviewReasonCode"] = None  # an earlier disposition's reason is not this one's
    note = None
    if status == "active" and was != "active":
        keyed, note = approval_changes(record, mem.files.scan().records)
        changes.update(keyed)
    result = _writes.update(
        mem,
        memory_id,
        changes,
        operation="review",
        source=source,
        extra_trailers=None,
        check=lambda record: None if stranded and record.status == "rejected" else check_reviewable(record, status),
    )
    return dataclasses.replace(result, warnings=(*result.warnings, note)) if note else result


def approval_changes(record: MemoryRecord, memories: list[MemoryRecord]) -> tuple[dict[str, Any], str | None]:
    """What approving ``record`` changes besides its status, when it states a value of something: its
    key, and either ``supersedes`` (the latest value said before it) or — a value of the key was said
    after it — status superseded by the latest such value, with a note saying so."""
    entity, attributes = record.frontmatter.get("entityRef"), record.frontmatter.get("structuredAttributes")
    changes: dict[str, Any] = {}
    if not entity or not isinstance(attributes, Mapping) or not attributes:
        entity, attributes = statement_key(record.content)
        if not entity:
            return {}, None
        changes = {"entityRef": entity, "structuredAttributes": dict(sorted(attributes.items()))}
    others = [
        o
        for o in memories
        if o.id != record.id
        and o.namespace == record.namespace
        and o.status == "active"
        and _other_value(o, str(entity), attributes)
    ]
    when = _said_when(record)
    newer = [o for o in others if _said_when(o) > when]
    if newer:
        current = max(newer, key=_said_when)
        invalid = current.frontmatter.get("validAt") or current.created or now_iso()
        changes.update(status="superseded", supersededBy=current.id, supersededAt=now_iso(), invalidAt=invalid)
        return changes, f"approved as superseded: overtaken by {current.id} ({current.content[:80]!r}), said later"
    if others:
        changes["supersedes"] = max(others, key=_said_when).id
    return changes, None


def _other_value(record: MemoryRecord, entity: str, attributes: Mapping[str, Any]) -> bool:
    """Whether ``record`` states another value for one of ``entity``'s ``attributes``."""
    theirs = record.frontmatter.get("structuredAttributes")
    if key_part(str(record.frontmatter.get("entityRef") or "")) != key_part(entity) or not isinstance(theirs, Mapping):
        return False
    mine = {key_part(str(k)): str(v).strip().lower() for k, v in attributes.items()}
    return any(key_part(str(k)) in mine and mine[key_part(str(k))] != str(v).strip().lower() for k, v in theirs.items())


def _said_when(record: MemoryRecord) -> float:
    return parse_time(record.frontmatter.get("validAt")) or parse_time(record.created) or 0.0


def _committed_status(mem: Memory, record: MemoryRecord) -> str:
    """The status git has for the memory's file (its status on disk when git has no readable copy)."""
    data = mem.ledger.committed_bytes(record.path)
    checked = check_bytes(data, record.path, mem.settings.store) if data is not None else None
    return checked.record.status if checked is not None and checked.ok and checked.record else record.status


def _reason(record: MemoryRecord) -> str | None:
    said = record.frontmatter.get("reviewReasonCode")
    return str(said) if said else None
