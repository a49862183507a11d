"""A person's decision on a memory in the review queue (`remnic review approve|dismiss|flag`,
POST review-disposition): its new status, when and why, as one commit.

An approved fact that states a value of something ("the staging DB port is 5434", hedged when it
was said, so queued without a key) takes its place among that key's values as an accepted fact
would: a value said after it stays current (the fact is approved as superseded by it, and the
result says so), and it supersedes a value said before it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError, UsageError, ValidationError
from remnic.memfile.model import MemoryRecord, now_iso, parse_file, parse_time
from remnic.memfile.validate import check_bytes
from remnic.observe.ledger import VERDICT_LEDGER
from remnic.observe.records import key_part

from . import arguments as _check
from . import writes as _writes
from .browse import REVIEW_STATUSES as QUEUED
from .browse import newest_first
from .chain_links import hidden_by_flag
from .chains import Links, ids_of
from .reverting import CLAIMED, REVIVED, SUPERSEDED, UNLINKED, AlsoChanged
from .superseding import SUPERSEDED_NOTE, stranded_by
from .writes.patching import UpdateStep, update_step

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


_PRIMITIVE_ID = re.compile(r'"resultingPrimitiveId":\s*"([^"]+)"')


def queue_reasons(mem: Memory, records: Sequence[MemoryRecord]) -> dict[str, str]:
    """Why each memory waits for review, by id: a person flagged it (with their reason code), or the
    observer's judge queued it — its reason in the verdict ledger (``state/``, so on the machine that
    observed it), or a confidence below ``observe.reviewBelowConfidence``. A memory queued otherwise
    (a status set by hand) has none."""
    out = {
        r.id: "flagged by a person" + (f" ({code})" if (code := _reason(r)) else "")
        for r in records
        if r.status == "quarantined" and r.frontmatter.get("reviewedAt")
    }
    wanted = {r.id for r in records if r.status == "pending_review"}
    if not wanted:  # the verdict ledger grows with every observation: read it only for a judge's reason
        return out
    try:
        lines = (mem.root / VERDICT_LEDGER).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:  # the first verdict that names a memory made it; later ones reinforced it
        found = _PRIMITIVE_ID.search(line)
        if found is None or found.group(1) not in wanted or found.group(1) in out:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        confidence, floor = event.get("confidence"), mem.settings.observe.review_below_confidence
        if event.get("verdictKind") == "defer" and event.get("reason"):
            out[found.group(1)] = str(event["reason"])
        elif isinstance(confidence, (int, float)) and confidence < floor:
            out[found.group(1)] = f"confidence {confidence:g} below observe.reviewBelowConfidence {floor:g}"
    return out


@dataclass(frozen=True)
class ReviewPage:
    """A page of the review queue with why each memory on it waits (:func:`queue_listing`)."""

    memories: list[MemoryRecord]
    total: int
    reasons: dict[str, str]
    """By id: the judge's reason or a person's flag (:func:`queue_reasons`); a memory with none is absent."""

    def reason(self, memory_id: str) -> str | None:
        """The ``queueReason`` every surface shows: None when nothing says why."""
        return self.reasons.get(memory_id)


def queue_listing(
    mem: Memory,
    *,
    namespace: str | None = None,
    limit: int = 50,
    offset: int = 0,
    readable: Callable[[str], bool] | None = None,
) -> ReviewPage:
    """The review queue's page (:meth:`Memory.review_page`) with each memory's reason, so `remnic review
    list`, GET review-queue and the MCP tool say the same why."""
    records, total = mem.review_page(namespace=namespace, limit=limit, offset=offset, readable=readable)
    return ReviewPage(records, total, queue_reasons(mem, records))


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


DECISIONS = {"active": "approved", "rejected": "dismissed", "quarantined": "flagged"}
"""How each decision is named in the output (the commit's ``Remnic-Review-Decision`` is the status)."""


@dataclass(frozen=True)
class ReviewResult(_writes.WriteResult):
    """A review decision's :class:`WriteResult`: the status before it, the reason, why it waited for review,
    and each other memory the decision changed (a dismissed correction's predecessor current again, an approved one's
    superseded again), as ``versions revert`` reports its own."""

    previous_status: str = ""
    reason_code: str | None = None
    also_changed: tuple[AlsoChanged, ...] = ()
    queue_reason: str | None = None
    """Why the memory waited for review when it was decided (:func:`queue_reasons`); None when nothing said."""
    notes: tuple[str, ...] = ()
    """The decision's own warnings among ``warnings`` (a claim dropped, a value hidden by a flag); the
    others are the write's (git's index lagging behind)."""

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.warnings:  # each named by the request field it is about, as every route's warnings are
            out["warnings"] = [
                {"field": _note_field(w) if w in self.notes else "gitIndex", "message": w} for w in self.warnings
            ]
        return {
            **out,
            "status": self.record.status,
            "previousStatus": self.previous_status,
            "decision": DECISIONS.get(self.record.status, self.record.status),
            "reasonCode": self.reason_code,
            "queueReason": self.queue_reason,
            "alsoChanged": [a.to_dict() for a in self.also_changed],
        }


@dataclass(frozen=True)
class Decision:
    """What deciding a memory writes (:func:`decide`), before the write checks it under the lock."""

    record: MemoryRecord
    status: str
    reason_code: str | None
    changes: dict[str, Any]
    trailers: dict[str, str]
    note: str | None
    """The approval's own note (approved as superseded, a claim dropped, no key)."""
    stranded: bool
    """A rejection committed by hand left what it replaced superseded by it: the dismissal revives it."""
    retried: bool
    """The same decision again (status and reason): nothing to write."""

    def check(self, record: MemoryRecord) -> None:
        """Refuses a memory that is not waiting for review, as the write finds it."""
        if not (self.stranded and record.status == "rejected"):
            check_reviewable(record, self.status)


def review_status(status: str, reason_code: str | None) -> str | None:
    """The reason code as stored (None for none), or a ValidationError naming a status no review gives."""
    if status not in DISPOSITIONS:
        raise ValidationError.single(
            "status",
            f"{status!r} is not a review decision (approve: active, dismiss: rejected, flag: quarantined; "
            "another status is set by an update)",
            options=DISPOSITIONS,
        )
    # The request's name: a Python caller is told reason_code (arguments.guard), the CLI --reason.
    return _check.one_line(reason_code, "reasonCode") or None


def decide(
    mem: Memory, record: MemoryRecord, status: str, reason_code: str | None, memories: Sequence[MemoryRecord]
) -> Decision:
    """What a person's ``status`` on ``record`` changes in its file, judged against ``memories`` (the
    repository as the decision sees it) and the status git has for it."""
    changes: dict[str, Any] = {"status": status, "reviewedAt": now_iso()}
    was = _committed_status(mem, record)  # a status set by hand and not committed yet is no decision yet
    # A rejection committed by hand (sync) left what it replaced superseded by a rejected memory: the
    # dismissal is what revives it, so it is no retry even when the file already says rejected.
    stranded = status == "rejected" == record.status and bool(stranded_by(memories, record.id))
    retried = (
        record.status == status == was
        and bool(record.frontmatter.get("reviewedAt"))
        and reason_code == _reason(record)
        and not stranded
    )
    if reason_code:
        changes["reviewReasonCode"] = reason_code
    elif "reviewReasonCode" in record.frontmatter:
        changes["reviewReasonCode"] = None  # an earlier disposition's reason is not this one's
    note = None
    if status == "active" and was != "active" and not retried:
        # A fact the observer queued got its key from the hedged text ("Maybe the staging DB port …"):
        # what is approved is the statement without the hedge, so its key is computed again.
        rekey = "pending_review" in (was, record.status) and record.frontmatter.get("source") == "extraction"
        keyed, note = approval_changes(record, list(memories), rekey=rekey)
        changes.update(keyed)
        if "supersedes" not in changes and "status" not in keyed:
            keyed_now = bool(changes.get("entityRef") or record.frontmatter.get("structuredAttributes"))
            claimed, note = claim_changes(record, memories, note, keyed=keyed_now)
            changes.update(claimed)
    trailers = {"Review-Decision": status, **({"Review-Reason": reason_code} if reason_code else {})}
    if changes.get("supersedes"):  # the update supersedes it, or refuses the decision when it cannot
        trailers["Also-Changed"] = f"{changes['supersedes']} {SUPERSEDED_NOTE}"
    return Decision(record, status, reason_code, changes, trailers, note, stranded, retried)


def dispose(mem: Memory, memory_id: str, status: str, reason_code: str | None, *, source: str) -> ReviewResult:
    """Set a queued memory's status with ``reviewedAt`` and ``reviewReasonCode`` (one commit, whose trailers
    name the decision, the reason and what it changed in the memories the decided one replaced)."""
    reason_code = review_status(status, reason_code)
    record = mem.get(memory_id)
    decision = decide(mem, record, status, reason_code, mem.files.scan().records)
    if decision.retried:
        check_reviewable(record, status)
        return decided(mem, decision, _writes.WriteResult("review", (record,), None, changed=False))
    result = write_step(mem, memory_id, decision, source=source).commit()
    return decided(mem, decision, result, _also_changed(mem, result))


def write_step(mem: Memory, memory_id: str, decision: Decision, *, source: str) -> UpdateStep:
    """The update that writes ``decision`` in ``memory_id``'s file: committed alone (:func:`dispose`) or as one
    step of a batch's transaction (:func:`.review_batch.dispose_many`)."""
    return update_step(
        mem,
        memory_id,
        decision.changes,
        operation="review",
        source=source,
        extra_trailers=decision.trailers,
        check=decision.check,
    )


def decided(
    mem: Memory, decision: Decision, result: _writes.WriteResult, also: tuple[AlsoChanged, ...] = ()
) -> ReviewResult:
    """The answer to a decision its write (``result``, committed) made; ``also``: the other memories it changed."""
    record, status = decision.record, decision.status
    # A flagged memory leaves recall, and with it the value it replaced: said, as forget says it.
    hidden = hidden_by_flag(mem.files.scan().records, record.id) if status == "quarantined" and result.changed else []
    # As committed: the decision's links may have changed the decided memory's own `supersedes` after it.
    records = (_reread(mem, result.record),) if result.changed else result.records
    note = None if decision.retried else decision.note
    dropped = [
        i
        for i in ids_of(record.frontmatter.get("supersedes"))
        if i not in _claims(records) and not _dismissed(mem, i)  # a dismissed claim's note is claim_changes'
    ]
    if dropped and status == "active" and not decision.retried:  # another memory replaced that value since
        note = "; ".join([*([note] if note else []), f"no longer supersedes {', '.join(dropped)}: replaced since"])
    notes = (*([note] if note else []), *hidden)
    return ReviewResult(
        result.operation,
        records,
        result.commit,
        changed=result.changed,
        warnings=(*result.warnings, *notes),
        notes=notes,
        previous_status=record.status,
        reason_code=decision.reason_code,
        queue_reason=queue_reasons(mem, [record]).get(record.id),  # what the person decided on
        also_changed=also,
    )


def _note_field(note: str) -> str:
    """The request field a decision's note is about: the claim it applied or dropped (``supersedes``), or the
    status it gave (approved as superseded, a flag hiding a value)."""
    return "supersedes" if note.startswith(("no longer supersedes", "nothing superseded")) else "status"


def _also_changed(mem: Memory, result: _writes.WriteResult) -> tuple[AlsoChanged, ...]:
    """The other memories the decision's commit changed (it holds this decision only: a review is never
    grouped with other writes), each as it is in that commit."""
    if result.commit is None:
        return ()
    out = []
    for _, path, _ in mem.ledger.diff_names(f"{result.commit}^", result.commit):
        if path == result.record.path:
            continue
        try:
            other = parse_file(mem.ledger.show(result.commit, path), path)
        except (ValueError, RemnicError):  # deleted or unreadable: not one a decision changes
            continue
        change = REVIVED if other.status == "active" else SUPERSEDED if other.status == "superseded" else UNLINKED
        if change == REVIVED and _status_at(mem, f"{result.commit}^", path) == "active":
            change = CLAIMED  # active before too: what changed is its `supersedes`, now naming the decided one
        out.append(AlsoChanged(other.id, path, change))
    return tuple(out)


def _dismissed(mem: Memory, memory_id: str) -> bool:
    try:
        return mem.get(memory_id).status == "rejected"
    except RemnicError:
        return False


def _claims(records: Sequence[MemoryRecord]) -> list[str]:
    return ids_of(records[0].frontmatter.get("supersedes")) if records else []


def _reread(mem: Memory, record: MemoryRecord) -> MemoryRecord:
    try:
        return mem.get(record.id)
    except RemnicError:  # moved or changed by hand since: the answer is the write's own
        return record


def _status_at(mem: Memory, rev: str, path: str) -> str | None:
    try:
        return parse_file(mem.ledger.show(rev, path), path).status
    except (ValueError, RemnicError):  # not there then, or unreadable
        return None


NO_KEY_NOTE = "nothing superseded: no value key in its text (`remnic update {id} --supersedes OTHER` replaces a memory)"
"""An approval's note when the memory states no value remnic keys, so it can replace none by itself."""


def approval_changes(
    record: MemoryRecord, memories: list[MemoryRecord], *, rekey: bool = False
) -> tuple[dict[str, Any], str | None]:
    """What approving ``record`` changes besides its status, when it states a value of something: its
    key, and either ``supersedes`` (the latest value said before it) or — a value of the key was said
    after it — status superseded by the latest such value, with a note saying so; with no key, a note
    that it supersedes nothing (:data:`NO_KEY_NOTE`). ``rekey``: the key the file has was given to the
    hedged text, so the statement's own key (when it has one) replaces it."""
    entity, attributes = record.frontmatter.get("entityRef"), record.frontmatter.get("structuredAttributes")
    changes: dict[str, Any] = {}
    keyed = bool(entity) and isinstance(attributes, Mapping) and bool(attributes)
    if rekey or not keyed:
        from remnic.observe.keys import statement_key  # the observe rules load on review, not every start-up

        said, said_attributes = statement_key(record.content)
        if said and not (keyed and _same_key(entity, attributes, said, said_attributes)):
            entity, attributes = said, said_attributes
            changes = {"entityRef": said, "structuredAttributes": dict(sorted(said_attributes.items()))}
        elif not keyed:
            # Said so: the reviewer may expect it to replace a value it states in other words. A memory that
            # names one in `supersedes` (a suggestion) replaces that one on approval.
            return {}, None if record.frontmatter.get("supersedes") else NO_KEY_NOTE.format(id=record.id)
    assert isinstance(attributes, Mapping)
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


def claim_changes(
    record: MemoryRecord, memories: Sequence[MemoryRecord], note: str | None, *, keyed: bool = False
) -> tuple[dict[str, Any], str | None]:
    """What approving ``record`` changes so that its claims (``supersedes``) leave its value one current memory,
    when no value key decided that (:func:`approval_changes`), and the decision's note. A claim on a dismissed
    memory stands for what that one replaced (a rejected memory's ``supersedes`` names them): kept, the
    value it replaced would stay current beside the approved one. A claim on a memory another current one
    replaced since is a claim on that one: the approved memory replaces it, or — said after the approved
    one — stays current, and the approved one is approved as superseded by it (as a keyed value is). ``keyed``:
    the memory states a value remnic keys, and its key decided already what it replaces (a memory stating
    the same value stays current beside it), so only its claims on dismissed memories change."""
    links = Links(memories)
    claims = ids_of(record.frontmatter.get("supersedes"))
    resolved: list[str] = []
    seen, stack = {record.id}, list(reversed(claims))
    while stack:
        claim = stack.pop()
        if claim in seen:
            continue
        seen.add(claim)
        other = links.by_id.get(claim)
        if other is not None and other.status == "rejected":
            stack.extend(reversed(ids_of(other.frontmatter.get("supersedes"))))
            continue
        if (
            not keyed
            and other is not None
            and other.status != "active"
            and other.frontmatter.get("supersededBy") != record.id
        ):
            heads = [h for h in links.heads(other, seen=(record.id,)) if h.status == "active"]
            if heads:
                claim = max(heads, key=_said_when).id
        if claim not in resolved:
            resolved.append(claim)
    if resolved == claims:
        return {}, note
    dismissed = [i for i in claims if (other := links.by_id.get(i)) is not None and other.status == "rejected"]
    if dismissed:  # said here: the general "replaced since" note leaves dismissed claims out
        said = f"no longer supersedes {', '.join(dismissed)}: dismissed, so it replaces what that replaced"
        note = "; ".join([*([note] if note else []), said])
    active = [links.by_id[i] for i in resolved if i in links.by_id and links.by_id[i].status == "active"]
    later = [o for o in active if _said_when(o) > _said_when(record)]
    if later:
        current = max(later, key=_said_when)
        invalid = current.frontmatter.get("validAt") or current.created or now_iso()
        changes = {"status": "superseded", "supersededBy": current.id, "supersededAt": now_iso(), "invalidAt": invalid}
        said = f"approved as superseded: overtaken by {current.id} ({current.content[:80]!r}), said later"
        return changes, "; ".join([*([note] if note else []), said])
    return {"supersedes": (resolved[0] if len(resolved) == 1 else resolved) if resolved else None}, note


def _same_key(entity: Any, attributes: Any, said: str, said_attributes: Mapping[str, Any]) -> bool:
    def norm(attrs: Mapping[str, Any]) -> dict[str, str]:
        return {key_part(str(k)): str(v).strip().lower() for k, v in attrs.items()}

    return key_part(str(entity)) == key_part(said) and norm(attributes) == norm(said_attributes)


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
