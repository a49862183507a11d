"""``update`` and ``forget``: a memory's frontmatter (and text) changed in place, every other line kept."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ParamSpec

from remnic.errors import MemoryFormatError, NotFoundError, RemnicError, UsageError, ValidationError
from remnic.memfile.model import MemoryRecord, body_for, derived_fields, new_id, now_iso, parse_file
from remnic.memfile.normalize import in_line_ending, line_ending, render, serialize_like
from remnic.memfile.secrets import subject_excerpt
from remnic.memfile.validate import Checked, check_bytes, check_changes, check_content, check_source
from remnic.repo.messages import subject_text
from remnic.repo.transaction import Plan, PlanOutcome, Staged, Transaction

from .. import superseding as _superseding
from ..moving import category_move, hand_move
from ..superseding import status_changes, supersede, superseded_target, unlink_successor
from .checks import check_writable
from .result import UNGROUPED, WriteResult, Written, result_of, summary

if TYPE_CHECKING:
    from ..memory import Memory

_MISSING = object()
P = ParamSpec("P")


def _patched(
    checked: Checked, changes: Mapping[str, Any], content: str | None = None, now: str | None = None
) -> tuple[str, dict[str, Any]]:
    """(file text, frontmatter) with ``changes`` applied (and the body replaced by ``content``, if given);
    ``updated`` (``now``) and the derived keys kept in step, every other line as it was."""
    record = checked.record
    assert record is not None
    # A new text takes the file's line endings before its hash is computed (CRLF files stay CRLF).
    body = record.body if content is None else in_line_ending(body_for(content), line_ending(checked.text))
    gone = {k for k, v in changes.items() if v is None}  # only these: a user's own `owner:` (null) stays
    meta = {k: v for k, v in {**record.frontmatter, **changes}.items() if k not in gone}
    meta.setdefault("id", record.id)
    meta["updated"] = now or now_iso()
    meta.update(derived_fields(meta, body))
    if any(v is None for v in changes.values()):  # removing a key: patched line by line, comments kept
        return serialize_like(checked.text, meta, body, path=record.path), meta
    text, meta = render(checked, {k: meta[k] for k in meta if meta[k] != record.frontmatter.get(k, _MISSING)})
    if content is not None:
        text = text[: len(text) - len(record.body)] + body
    return text, meta


@dataclass(frozen=True)
class UpdateStep:
    """An update as a plan step (:func:`update_step`): run in a transaction of its own (:meth:`commit`),
    or as one step of a caller's plan (a batch of review decisions)."""

    mem: Memory
    run: Callable[[Transaction], PlanOutcome]
    seen: dict[str, tuple[Written, ...]]
    """Where the run that committed leaves the files it staged (``"written"``)."""
    operation: str
    source: str
    grouped: bool
    """No trailers of its own: it may share a commit with other writes of its operation and source."""

    @property
    def written(self) -> tuple[Written, ...]:
        """Each file the run that committed staged, before and after."""
        return self.seen.get("written", ())

    def commit(self) -> WriteResult:
        """The step committed as a write of its own."""
        key: tuple[str, ...] = (
            (self.operation, self.source) if self.grouped else (self.operation, self.source, UNGROUPED + new_id())
        )
        outcome, commit = self.mem.committer.submit(Plan(key, self.run))
        result = result_of(self.operation, outcome, commit)
        return replace(result, written=self.seen["written"]) if result.changed and "written" in self.seen else result


def update_step(
    mem: Memory,
    memory_id: str,
    changes: Mapping[str, Any],
    *,
    operation: str,
    source: str,
    extra_trailers: Mapping[str, str] | None,
    content: str | None = None,
    check: Callable[[MemoryRecord], None] | None = None,
) -> UpdateStep:
    """The plan step of an update (:class:`UpdateStep`); :func:`update` commits it alone.

    Change frontmatter keys (None removes one) and, with ``content``, the text; every other line stays.

    A user's uncommitted edit of the file is carried aside, never committed under remnic's message: the
    commit gets the change applied to the committed version, and the file on disk gets it applied to the
    user's version, which stays uncommitted. (A new text or category would overwrite that edit, so those
    are refused until it is committed.) A new category moves the file to that category's folder;
    ``supersedes`` marks the memory it names superseded by this one. ``check`` may refuse the memory as it
    is under the lock. An update that changes nothing (the file says it all) writes nothing: ``changed`` False.
    """
    problems = check_changes(changes) + check_source(source)
    if content is not None:
        problems += check_content(content, mem.settings.store)
    if problems:
        raise ValidationError(summary(problems), problems=problems)

    seen: dict[str, tuple[Written, ...]] = {}  # what the run that committed staged

    def run(tx: Transaction) -> PlanOutcome:
        seen.pop("written", None)
        start = dict(tx.staged)  # what earlier plans of a batch staged: the files' "before" for this one
        check_writable(mem)
        record = tx.staged_record(memory_id) or mem.get(memory_id)  # a batch's earlier write may have moved it
        if check is not None:
            check(record)
        path = record.path
        wanted, successor = status_changes(record, changes)
        committed = tx.committed_bytes(path)
        # Moved by hand and not committed yet: the commit takes the move whole (sync's rule for the category).
        moved_from, normalised = hand_move(mem, record, committed, wanted)
        disk = tx.read_bytes(path)
        checked = check_bytes(disk or b"", path, mem.settings.store)
        if checked.problems or checked.record is None:
            raise MemoryFormatError(path, checked.problems)
        old = (
            superseded_target(mem, changes["supersedes"], record.namespace, by=record)
            if changes.get("supersedes")
            else None
        )
        # A file git does not have yet is committed by the update even when it already says it all.
        if (
            committed is not None
            and _says_already(checked, wanted, content, old)
            and (committed == disk or _says_already(check_bytes(committed, path, mem.settings.store), wanted))
        ):
            return PlanOutcome(WriteResult(operation, (checked.record,), None, changed=False))
        text, meta = _patched(checked, wanted, content)
        after = check_bytes(text.encode("utf-8"), path, mem.settings.store)
        if after.problems:
            raise ValidationError(
                "the update would make the file invalid; nothing was written", problems=after.problems
            )
        assert after.record is not None
        commit_data = None
        committed_text = after.record.content
        was = record.status  # the status HEAD has: a review decision is judged against it
        moves = "category" in wanted and wanted["category"] != record.category and normalised is None
        if committed is not None and committed != disk:
            if content is not None or moves:
                raise UsageError(
                    f"{path} has uncommitted edits that a new text or category would overwrite; commit them "
                    "first (`remnic sync run`) or edit the file itself"
                )
            base = check_bytes(committed, path, mem.settings.store)
            if base.problems or base.record is None:
                raise UsageError(
                    f"{path} has uncommitted edits and its committed version cannot be read; "
                    "commit your edits first (`remnic sync run`), then retry"
                )
            # One ``updated`` for both: a hand edit the decision takes in whole leaves no difference behind.
            commit_data = _patched(base, wanted, now=meta["updated"])[0].encode("utf-8")
            committed_text = base.record.content  # the commit keeps the committed text; the subject says it
            was = base.record.status
        if moves:
            path = category_move(mem, tx, record, path, meta["category"])
        if moved_from is not None:  # gone from disk already: the commit records the deletion
            tx.remove(moved_from, on_disk=True)
        updated = MemoryRecord(path, meta, after.record.body, record.namespace)
        tx.put(path, text, updated, commit_data=commit_data)
        ids = [record.id]
        if old is not None and old.id != record.id and supersede(mem, tx, old, updated):
            ids.append(old.id)
        trailers = dict(extra_trailers or {})  # a status change names the memories it changed too
        if "status" in wanted:
            ids += _superseding.review_links(mem, tx, record, updated, was=was, trailers=trailers)
        notes = [f"moved from {moved_from}"] if moved_from else []
        if successor is not None:
            unlinked = unlink_successor(mem, tx, successor, record.id)
            ids += [unlinked] if unlinked else []
            notes.append(f"no longer superseded by {successor}: link dropped")
        quoted = subject_excerpt(subject_text(committed_text, record.category))
        subject = f"remnic {operation}: {quoted}" + (f" ({'; '.join(notes)})" if notes else "")
        seen["written"] = _written(mem, tx, start, {record.path: committed})
        return PlanOutcome(updated, subject, ids, record.namespace, trailers)

    return UpdateStep(mem, run, seen, operation, source, grouped=not extra_trailers)


def _alone(step: Callable[P, UpdateStep]) -> Callable[P, WriteResult]:
    """``step``'s update committed as a write of its own: it takes ``step``'s arguments, listed there only."""

    def update(*args: P.args, **kwargs: P.kwargs) -> WriteResult:
        """:func:`update_step` committed as a write of its own (see there)."""
        return step(*args, **kwargs).commit()

    return update


update = _alone(update_step)


def _written(
    mem: Memory, tx: Transaction, start: Mapping[str, Staged], known: Mapping[str, bytes | None]
) -> tuple[Written, ...]:
    """Each file this plan staged in ``tx`` (``start``: what was staged before it ran; ``known``: what the
    commit's parent holds for a path the plan read already), before and after."""
    out = []
    for path, now in tx.staged.items():
        earlier = start.get(path)
        if earlier is now:
            continue
        if earlier is not None:
            before = _committed(earlier)
        else:
            before = known[path] if path in known else mem.ledger.committed_bytes(path)
        out.append(Written(path, _memory(before, path), _memory(_committed(now), path)))
    return tuple(out)


def _committed(staged: Staged) -> bytes | None:
    """What git records for a staged file (a carried-aside edit stays on disk only)."""
    return staged.commit_data if staged.commit_data is not None else staged.data


def _memory(data: bytes | None, path: str) -> MemoryRecord | None:
    if data is None:
        return None
    try:
        return parse_file(data.decode("utf-8"), path)
    except (ValueError, RemnicError):  # not UTF-8, or unreadable: no link to judge
        return None


def _says_already(
    checked: Checked, changes: Mapping[str, Any], content: str | None = None, old: MemoryRecord | None = None
) -> bool:
    """Whether the file already has every value ``changes`` sets (and the text ``content``), and the
    memory it names in ``supersedes`` is already marked superseded by it: then an update is a no-op."""
    record = checked.record
    if checked.problems or record is None:
        return False
    if content is not None and in_line_ending(body_for(content), line_ending(checked.text)) != record.body:
        return False
    if old is not None and (old.status != "superseded" or old.frontmatter.get("supersededBy") != record.id):
        return False
    fm = record.frontmatter
    for key, value in changes.items():
        if value is None and key in fm:
            return False
        # An empty list where the file has no such key (no tags) says nothing new either.
        if value is not None and fm.get(key, _MISSING) != value and not (value == [] and key not in fm):
            return False
    return True


def forget(mem: Memory, memory_id: str, reason: str | None, *, source: str) -> WriteResult:
    """Mark a memory forgotten (status, forgottenAt, forgottenReason); its text stays in the file and history."""
    try:
        record = mem.get(memory_id)
    except NotFoundError as exc:
        from remnic.observe.entities import ENTITY_TYPES

        if mem.settings.entities.enabled and memory_id.split("-", 1)[0] in ENTITY_TYPES:
            # `entities list|show` show pages without writing them: the one named may not exist yet.
            raise NotFoundError(
                f"{exc}; an entity page a read shows is written by `remnic entities refresh`: run it, then forget the page"
            ) from None
        raise
    if record.status == "forgotten":
        return WriteResult("forget", (record,), None, changed=False)
    changes: dict[str, Any] = {"status": "forgotten", "forgottenAt": now_iso()}
    if reason:
        changes["forgottenReason"] = reason
    return update(mem, memory_id, changes, operation="forget", source=source, extra_trailers=None)
