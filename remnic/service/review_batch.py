"""Several review decisions in one commit (`remnic review approve|dismiss|flag ID [ID ...]`, ``-``,
``--all-pending``): each memory decided as :func:`.review.dispose` decides one, all in one write
transaction. A memory that cannot be decided (not found, not waiting for review, a refused link) is
left out with its reason, and the others are committed: one bad id does not cost the batch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError, UsageError
from remnic.memfile.model import DEFAULT_NAMESPACE, MemoryRecord, new_id
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from . import review as _review
from .browse import newest_first
from .reverting import CLAIMED, REVIVED, SUPERSEDED, UNLINKED, AlsoChanged
from .writes.checks import check_writable
from .writes.result import UNGROUPED, WriteResult, Written

if TYPE_CHECKING:
    from .memory import Memory

__all__ = ["BatchReview", "dispose_many", "pending_ids"]


@dataclass(frozen=True)
class BatchReview:
    """What a batch decided: each memory's answer (as one decision's), each id refused and why, the commit."""

    status: str
    results: tuple[tuple[str, _review.ReviewResult], ...]
    """(the id or path as given, its decision's answer), in the order given."""
    errors: tuple[tuple[str, str], ...]
    """(the id or path as given, why it was not decided): nothing of it was written."""
    commit: str | None

    def to_dict(self) -> dict[str, Any]:
        results: list[dict[str, Any]] = []
        for ref, result in self.results:
            said = result.to_dict()
            results.append(
                {
                    "ref": ref,
                    "ok": True,
                    "id": result.id,
                    "path": result.record.path,
                    "changed": result.changed,
                    "status": result.record.status,
                    "warnings": [w["message"] for w in said.get("warnings", [])],
                    **{k: said[k] for k in ("previousStatus", "decision", "reasonCode", "queueReason", "alsoChanged")},
                }
            )
        results += [{"ref": ref, "ok": False, "error": why} for ref, why in self.errors]
        return {
            "decision": _review.DECISIONS[self.status],
            "commit": self.commit,
            "decided": sum(1 for _, r in self.results if r.changed),
            "unchanged": sum(1 for _, r in self.results if not r.changed),
            "failed": len(self.errors),
            "results": results,
        }


def pending_ids(
    mem: Memory,
    *,
    namespace: str | None = None,
    session: str | None = None,
    category: str | None = None,
    why: str | None = None,
) -> list[str]:
    """Ids of the memories waiting for review (``pending_review``; a flagged one is a person's, and is
    named by id), newest first: only those of the ``session`` key, the ``category``, or whose queue reason
    contains ``why`` (case-insensitive), when given."""
    waiting = sorted(
        (
            r
            for r in mem.list(namespace=namespace)
            if r.status == "pending_review"
            and (session is None or r.frontmatter.get("sessionKey") == session)
            and (category is None or r.category == category)
        ),
        key=newest_first,
    )
    if why is not None:
        reasons = _review.queue_reasons(mem, waiting)
        waiting = [r for r in waiting if why.lower() in (reasons.get(r.id) or "").lower()]
    return [r.id for r in waiting]


def dispose_many(
    mem: Memory,
    refs: Sequence[str],
    status: str,
    reason_code: str | None = None,
    *,
    source: str,
    resolve: Callable[[str], str] | None = None,
) -> BatchReview:
    """Decide each memory ``refs`` names (ids or paths; ``resolve`` turns one into an id) in one commit.
    Each is judged as the batch has left the repository so far, so two values of one key approved
    together are ordered as two decisions one after the other would order them."""
    reason_code = _review.review_status(status, reason_code)
    given = list(dict.fromkeys(refs))
    if not given:
        raise UsageError("no memory to decide: name one or more ids or paths, `-` to read them from standard input")
    steps: dict[str, tuple[_review.Decision, WriteResult, tuple[Written, ...]]] = {}
    errors: dict[str, str] = {}

    def run(tx: Transaction) -> PlanOutcome:
        steps.clear()
        errors.clear()
        ids: list[str] = []
        spaces: set[str] = set()
        also: list[str] = []
        check_writable(mem)  # the whole batch is refused, not each of its memories
        for ref in given:
            mark = tx.mark()
            try:
                memory_id = resolve(ref) if resolve is not None else mem.memory_id(ref)
                record = tx.staged_record(memory_id) or mem.get(memory_id)
                decision = _review.decide(mem, record, status, reason_code, _as_staged(tx, mem))
                if decision.retried:
                    decision.check(record)
                    steps[ref] = (decision, WriteResult("review", (record,), None, changed=False), ())
                    continue
                write = _review.write_step(mem, memory_id, decision, source=source)
                outcome = write.run(tx)
            except RemnicError as exc:  # this one is left out, said by name; the others go on
                tx.rollback(mark)
                errors[ref] = str(exc)
                continue
            if isinstance(outcome.value, WriteResult):  # the file says it all already
                steps[ref] = (decision, outcome.value, ())
                continue
            steps[ref] = (decision, WriteResult("review", (outcome.value,), None), write.written)
            ids += [i for i in outcome.ids if i not in ids]
            spaces.add(outcome.namespace)
            if outcome.trailers.get("Also-Changed"):
                also.append(outcome.trailers["Also-Changed"])
        changed = sum(1 for _, r, _ in steps.values() if r.changed)
        if not changed:
            return PlanOutcome(None)
        trailers = {"Review-Decision": status, **({"Review-Reason": reason_code} if reason_code else {})}
        if also:
            trailers["Also-Changed"] = "; ".join(also)
        noun = "memory" if changed == 1 else "memories"
        subject = f"remnic review: {_review.DECISIONS[status]} {changed} {noun}"
        return PlanOutcome(None, subject, ids, ",".join(sorted(spaces)) or DEFAULT_NAMESPACE, trailers)

    _, commit = mem.committer.submit(Plan(("review", source, UNGROUPED + new_id()), run))
    results = []
    for ref in given:
        if ref not in steps:
            continue
        decision, step, written = steps[ref]
        if step.changed:
            step = WriteResult("review", step.records, commit.sha, warnings=tuple(commit.warnings), written=written)
        results.append((ref, _review.decided(mem, decision, step, _also_changed(step.record, written))))
    return BatchReview(status, tuple(results), tuple((r, errors[r]) for r in given if r in errors), commit.sha)


def _as_staged(tx: Transaction, mem: Memory) -> list[MemoryRecord]:
    """The repository's memories as the batch has them so far (its earlier decisions staged, not on disk)."""
    staged: Mapping[str, MemoryRecord] = {r.id: r for r in tx.staged_records()}
    return [staged.get(r.id, r) for r in mem.files.scan().records]


def _also_changed(record: MemoryRecord, written: Sequence[Written]) -> tuple[AlsoChanged, ...]:
    """The other memories one decision changed, from the files its step staged (the batch's commit holds
    every decision, so it cannot tell them apart)."""
    out = []
    for w in written:
        other = w.after
        if other is None or other.id == record.id:
            continue
        change = REVIVED if other.status == "active" else SUPERSEDED if other.status == "superseded" else UNLINKED
        if change == REVIVED and w.before is not None and w.before.status == "active":
            change = CLAIMED  # active before too: what changed is its `supersedes`
        out.append(AlsoChanged(other.id, w.path, change))
    return tuple(out)
