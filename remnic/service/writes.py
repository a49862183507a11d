"""Every memory write as a plan for the one write transaction (:mod:`remnic.repo.transaction`).

A plan validates what it can before taking the lock, then — under the lock, inside
the transaction — reads what it needs, checks duplicates and stages the files it
changes. The transaction commits them (group-committed with other plans of the same
kind), and the caller gets one :class:`WriteResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import (
    FieldProblem,
    MemoryFormatError,
    NotFoundError,
    RemnicError,
    RepoBusyError,
    UsageError,
    ValidationError,
)
from remnic.memfile.model import (
    DEFAULT_NAMESPACE,
    MemoryRecord,
    body_for,
    content_hash,
    derived_fields,
    new_id,
    now_iso,
    serialize,
)
from remnic.memfile.normalize import in_line_ending, line_ending, render, serialize_like
from remnic.memfile.validate import (
    Checked,
    PlannedMemory,
    check_bytes,
    check_changes,
    check_content,
    check_namespace,
    check_source,
    file_problems,
    new_frontmatter,
    plan_import,
    store_extra_problems,
)
from remnic.repo.head import DetachedHeadError
from remnic.repo.messages import trailers_for
from remnic.repo.transaction import CommitOutcome, Plan, PlanOutcome, Transaction

from . import superseding as _superseding
from .duplicates import DuplicateLookup, find_duplicate
from .inheriting import inherited
from .moving import category_move, hand_move
from .portable import Restore, new_memory_fields, plan_restores, stage_include
from .superseding import patch_staged as patch_staged  # re-exported: consolidate and flushing stage with it
from .superseding import status_changes, supersede, superseded_target, target_refusal, unlink_successor

if TYPE_CHECKING:
    from .memory import Memory

_MISSING = object()
UNGROUPED = "-"  # a key part that keeps a plan out of any group commit


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the memories it wrote (or found already there) and the commit that holds them."""

    operation: str
    records: tuple[MemoryRecord, ...]
    commit: str | None
    changed: bool = True
    """False when nothing was written: an exact duplicate of an active memory, an already forgotten one."""
    duplicates: tuple[str, ...] = ()
    """Import: for each item skipped as an exact duplicate, the id of the memory it duplicates; a dry-run
    store: the memory the real write would find as its exact duplicate (and so not write)."""
    warnings: tuple[str, ...] = ()
    """The write is done, but something needs the user's attention (git's index lagging behind HEAD)."""

    @property
    def record(self) -> MemoryRecord:
        """The (first) memory written or found; NotFoundError when the write named none (an empty import)."""
        if not self.records:
            raise NotFoundError(f"this {self.operation} wrote no memory (its records are empty)")
        return self.records[0]

    @property
    def id(self) -> str:
        return self.record.id

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "operation": self.operation,
            "changed": self.changed,
            "commit": self.commit,
            "ids": [r.id for r in self.records],
            "paths": [r.path for r in self.records],
        }
        if self.operation == "import":
            out.update(imported=len(self.records), duplicates=len(self.duplicates))
        if self.warnings:
            out["warnings"] = [{"field": "gitIndex", "message": w} for w in self.warnings]
        return out


def summary(problems: Sequence[FieldProblem]) -> str:
    """One line naming the first problem (and how many more), so str(error) alone is useful."""
    return problems[0].describe() + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else "")


def describe(key: tuple[str, ...], outcomes: Sequence[PlanOutcome]) -> tuple[str, dict[str, Any], str | None]:
    """The commit message for one plan, or for a group of plans of one kind."""
    operation, source = key[0], key[1]
    ids = [i for o in outcomes for i in o.ids]
    namespaces = ",".join(sorted({o.namespace for o in outcomes})) or DEFAULT_NAMESPACE
    if len(outcomes) == 1:
        only = outcomes[0]
        return (
            only.subject or f"remnic {operation}",
            trailers_for(operation, ids, namespaces, source, **only.trailers),
            None,
        )
    body = "\n".join(o.subject or "" for o in outcomes)
    return f"remnic {operation}: {len(outcomes)} writes", trailers_for(operation, ids, namespaces, source), body


def result_of(operation: str, outcome: PlanOutcome, commit: CommitOutcome) -> WriteResult:
    value = outcome.value
    if isinstance(value, WriteResult):
        return value
    records = tuple(value) if isinstance(value, list) else (value,)
    return WriteResult(
        operation, records, commit.sha, changed=outcome.subject is not None, warnings=tuple(commit.warnings)
    )


# --- store ---


def store(
    mem: Memory,
    content: Any,
    *,
    category: Any,
    tags: Any,
    confidence: Any,
    importance: Any,
    namespace: str | None,
    source: str,
    extra: Mapping[str, Any] | None,
    dry_run: bool,
    dedupe: bool,
) -> WriteResult:
    """Validate, write and commit one memory; an exact duplicate of an active one is returned unchanged.
    ``category`` None is fact, or what the memory named in ``supersedes`` is (see :func:`inherited`)."""
    ns = namespace or mem.settings.namespaces.default
    category, tags, importance = inherited(mem, extra, ns, category, tags, importance)
    problems = check_content(content, mem.settings.store) + check_namespace(ns) + check_source(source)
    owned = store_extra_problems(extra)
    if owned:  # stop here: new_frontmatter would trip over a value YAML cannot write
        problems += owned
        raise ValidationError(summary(problems), problems=problems)
    meta, more = new_frontmatter(
        memory_id=new_id(),
        now=now_iso(),
        content=content if isinstance(content, str) else "",
        category=category,
        settings=mem.settings.store,
        tags=tags,
        confidence=confidence,
        importance=importance,
        source=source,
        extra=extra,
    )
    problems += more
    if not problems:
        problems += file_problems(meta, content, category, ns, mem.settings.store)
    if problems:
        raise ValidationError(summary(problems), problems=problems)
    if dry_run:  # the real write's answer, refusals included, in run()'s order (outside the lock)
        existing = mem.find_duplicate(ns, content_hash(content.strip())) if dedupe else None
        if existing is not None:  # an exact duplicate is that memory, unchanged (no new id, no new path)
            return WriteResult("store", (existing,), None, changed=False, duplicates=(existing.id,))
        check_writable(mem)
        _check_named_ids(mem, None, meta, extra, ns)
        rel = mem.files.allocate_path(category, content, ns)
        return WriteResult("store", (MemoryRecord(rel, meta, body_for(content), ns),), None, changed=False)

    def run(tx: Transaction) -> PlanOutcome:
        if dedupe:
            existing = mem.find_duplicate(ns, content_hash(content.strip()), tx)
            if existing is not None:
                return PlanOutcome(WriteResult("store", (existing,), None, changed=False))
        check_writable(mem)
        old = _check_named_ids(mem, tx, meta, extra, ns)
        rel = mem.files.allocate_path(category, content, ns, taken=tx.exists)
        record = MemoryRecord(rel, meta, body_for(content), ns)
        tx.put(rel, serialize(meta, record.body), record)
        ids = [record.id]
        if old is not None and old.id != record.id and supersede(mem, tx, old, record):
            ids.append(old.id)
        return PlanOutcome(record, f"remnic store: {content.strip()[:60]}", ids, ns)

    outcome, commit = mem.committer.submit(Plan(("store", source), run))
    return result_of("store", outcome, commit)


def _check_named_ids(
    mem: Memory, tx: Transaction | None, meta: Mapping[str, Any], extra: Mapping[str, Any] | None, ns: str
) -> MemoryRecord | None:
    """The ids a new memory names, checked (``tx`` None: a dry run): a caller-chosen id must be free, and
    the memory it supersedes must exist in ``ns`` and be supersedable; returns that memory."""
    if extra and "id" in extra:
        _check_id_free(mem, tx, meta["id"])
    return superseded_target(mem, meta["supersedes"], ns) if meta.get("supersedes") else None


def _check_id_free(mem: Memory, tx: Transaction | None, memory_id: str) -> None:
    """A caller-chosen id must be no other memory's, on disk or staged by a write batched before this one."""
    staged = next((r for r in tx.staged_records() if r.id == memory_id), None) if tx is not None else None
    try:
        taken = staged or mem.get(memory_id)
    except NotFoundError:
        return
    raise ValidationError.single(
        "extra.id", f"{memory_id!r} already exists ({taken.path}); leave id out for a new one, or update that memory"
    )


def check_writable(mem: Memory) -> None:
    """Refuse to commit where the commit would be lost or tangled (detached HEAD, a merge underway)."""
    reason = mem.ledger.busy_reason()
    if reason is not None:
        if "detached" in reason:  # a code of its own: no wait ends it, a checkout of a branch does
            raise DetachedHeadError(f"cannot write memories now: {reason}; check out a branch, then retry")
        if "conflicts" in reason:
            hint = "resolve them, then retry"
        else:  # a merge names `remnic space pull` itself
            hint = "then retry" if "remnic space pull" in reason else "finish it, then retry"
        raise RepoBusyError(f"cannot write memories now: {reason}; {hint}")
    read_only = mem.read_only_space()
    if read_only is not None:
        raise UsageError(
            f"space {read_only!r} is read-only in your spaces registry: remnic does not write to it "
            "(pull it to refresh it; register it without --read-only to write)"
        )


# --- import ---


@dataclass(frozen=True)
class ImportPlan:
    """An import batch checked: what to write, in the batch's order, and what is already here."""

    items: list[PlannedMemory | Restore]
    here: frozenset[str] = frozenset()
    """Ids of new-memory lines that are a memory already here (same id, namespace and text): skipped
    as exact duplicates, as an export re-imported without ``file`` is."""


def plan_items(
    mem: Memory, items: Iterable[Any], line_numbers: Sequence[int] | None, namespace: str | None, source: str
) -> tuple[ImportPlan, list[FieldProblem]]:
    """Every line checked: new memories, and exported files to restore exactly (lines with ``file``),
    in the batch's order; or every problem, each naming its line and field."""
    items = list(items)
    restores, offsets, problems = plan_restores(mem, items, line_numbers)
    problems += check_source(source)
    taken = set(offsets)
    rest = [i for i in range(len(items)) if i not in taken]
    numbers = line_numbers or range(1, len(items) + 1)
    existing: dict[str, str] = {}

    def existing_ids() -> dict[str, str]:
        existing.update(mem.files.ids())
        return existing

    here: set[str] = set()

    def already_here(item: PlannedMemory) -> bool:
        meta, content, ns, _category = item
        if _same_memory(mem, existing.get(meta["id"]), ns, content):
            here.add(meta["id"])
            return True
        return False

    planned, more = plan_import(
        [new_memory_fields(items[i]) for i in rest],
        line_numbers=[numbers[i] for i in rest],
        namespace=namespace or mem.settings.namespaces.default,
        source=source,
        store=mem.settings.store,
        existing_ids=existing_ids,
        now=now_iso(),
        already_here=already_here,
    )
    new_ids = {meta["id"] for meta, *_ in planned}
    problems += [
        FieldProblem("id", f"{r.record.id!r} is also the id of a new memory in this batch", line=r.line)
        for r in restores
        if r.record.id in new_ids
    ]
    if problems or more:
        return ImportPlan([]), sorted(problems + more, key=lambda p: p.line or 0)
    problems += _supersedes_problems(mem, planned, [numbers[i] for i in rest], restores)
    if problems:
        return ImportPlan([]), sorted(problems, key=lambda p: p.line or 0)
    ordered: dict[int, PlannedMemory | Restore] = dict(zip(offsets, restores, strict=True))
    ordered.update(zip(rest, planned, strict=True))
    return ImportPlan([ordered[i] for i in sorted(ordered)], frozenset(here)), []


def _same_memory(mem: Memory, path: str | None, namespace: str, content: str) -> bool:
    """Whether the memory file at ``path`` holds ``content`` in ``namespace`` (a line that is that memory)."""
    if path is None:
        return False
    try:
        record = mem.files.read(path)
    except (RemnicError, OSError):
        return False
    return record.namespace == namespace and content_hash(record.content) == content_hash(content.strip())


def _supersedes_problems(
    mem: Memory, planned: Sequence[PlannedMemory], lines: Sequence[int], restores: Sequence[Restore]
) -> list[FieldProblem]:
    """Each ``supersedes`` of a new memory checked against the whole batch and the repository, so a
    line may name a memory a later line brings (export order is path order) and dry-run agrees."""
    batch = {meta["id"]: (str(meta.get("status") or "active"), ns) for meta, _c, ns, _cat in planned}
    batch.update((r.record.id, (r.record.status, r.record.namespace)) for r in restores)
    problems: list[FieldProblem] = []
    for (meta, _content, ns, _category), line in zip(planned, lines, strict=True):
        target = meta.get("supersedes")
        if not target:
            continue
        if not isinstance(target, str):
            problems.append(FieldProblem("supersedes", f"must be one memory id, got {target!r}", line=line))
            continue
        if target == meta["id"]:
            problems.append(FieldProblem("supersedes", f"{target} cannot supersede itself", line=line))
            continue
        if target in batch:
            status, target_ns = batch[target]
        else:
            try:
                found = mem.get(target)
            except NotFoundError:
                why = f"no memory with id {target!r} to supersede (not in this repository, not in this batch)"
                problems.append(FieldProblem("supersedes", why, line=line))
                continue
            status, target_ns = found.status, found.namespace
        refusal = target_refusal(target, status)
        if target_ns != ns:
            refusal = f"{target} is in namespace {target_ns!r}, not {ns!r}"
        if refusal:
            problems.append(FieldProblem("supersedes", refusal, line=line))
    return problems


def import_records(
    mem: Memory,
    items: Iterable[Mapping[str, Any]],
    *,
    source: str,
    namespace: str | None,
    line_numbers: Sequence[int] | None,
    progress: Any = None,
    checked: ImportPlan | None = None,
) -> WriteResult:
    """Validate every item first (``checked``: already planned) and write nothing unless all are valid; one commit."""
    plan, problems = (checked, []) if checked is not None else plan_items(mem, items, line_numbers, namespace, source)
    if problems:
        raise ValidationError(f"{summary(problems)}; nothing was imported", problems=problems)
    planned = plan.items
    if not planned:
        return WriteResult("import", (), None, changed=False)

    def run(tx: Transaction) -> PlanOutcome:
        check_writable(mem)
        records: list[MemoryRecord] = []
        duplicates: list[str] = []
        seen: dict[tuple[str, str], str] = {}  # a text written by this import → the id it was written under
        lookup = DuplicateLookup(mem)
        by_id: dict[str, MemoryRecord] = {}  # written, restored, or the memory a skipped duplicate is
        links: list[tuple[MemoryRecord, str]] = []
        for i, item in enumerate(planned):
            if progress:
                progress(i + 1, len(planned))
            if isinstance(item, Restore):  # an exported file, back exactly as it was
                tx.put(item.path, item.text, item.record)
                records.append(item.record)
                by_id[item.record.id] = item.record
                continue
            meta, content, ns, category = item
            key = (ns, content_hash(content.strip()))
            found = _here(mem, meta["id"]) if meta["id"] in plan.here else None
            if found is None and key not in seen:
                found = find_duplicate(mem, ns, key[1], tx, lookup)
            if found is not None or key in seen:
                duplicates.append(found.id if found is not None else seen[key])  # the memory it duplicates
                if found is not None:
                    by_id.setdefault(meta["id"], found)
                continue
            seen[key] = meta["id"]
            rel = mem.files.allocate_path(category, content, ns, taken=tx.exists)
            record = MemoryRecord(rel, meta, body_for(content), ns)
            tx.put(rel, serialize(meta, record.body), record)
            records.append(record)
            by_id[record.id] = record
            if meta.get("supersedes"):
                links.append((record, meta["supersedes"]))
        # Linked once every line is staged: a line may name a memory a later line brings.
        for record, target in links:
            old = by_id.get(target) or superseded_target(mem, target, record.namespace)
            if old.id != record.id:
                supersede(mem, tx, old, record)
        stage_include(mem, tx, planned)  # an adopted note's store.include pattern, in the same commit
        namespaces = sorted({r.namespace for r in records}) or [DEFAULT_NAMESPACE]
        result = WriteResult("import", tuple(records), None, bool(records), tuple(duplicates))
        count = f"{len(records)} memory" if len(records) == 1 else f"{len(records)} memories"
        subject = f"remnic import: {count}" if records else None
        return PlanOutcome(result, subject, [r.id for r in records], ",".join(namespaces))

    outcome, commit = mem.committer.submit(Plan(("import", source, UNGROUPED + new_id()), run))
    result = outcome.value
    assert isinstance(result, WriteResult)
    return WriteResult("import", result.records, commit.sha, result.changed, result.duplicates, tuple(commit.warnings))


def _here(mem: Memory, memory_id: str) -> MemoryRecord | None:
    """The memory with this id, still there under the lock (None: gone since the plan)."""
    try:
        return mem.get(memory_id)
    except RemnicError:
        return None


# --- update and forget ---


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


def update(
    mem: Memory,
    memory_id: str,
    changes: Mapping[str, Any],
    *,
    operation: str,
    source: str,
    extra_trailers: Mapping[str, str] | None,
    content: str | None = None,
    check: Callable[[MemoryRecord], None] | None = None,
) -> WriteResult:
    """Change frontmatter keys (None removes one) and, with ``content``, the text; every other line stays.

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

    def run(tx: Transaction) -> PlanOutcome:
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
        subject = f"remnic {operation}: {committed_text[:60]}" + (f" ({'; '.join(notes)})" if notes else "")
        return PlanOutcome(updated, subject, ids, record.namespace, trailers)

    key: tuple[str, ...] = (operation, source) if not extra_trailers else (operation, source, UNGROUPED + new_id())
    outcome, commit = mem.committer.submit(Plan(key, run))
    return result_of(operation, outcome, commit)


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
    record = mem.get(memory_id)
    if record.status == "forgotten":
        return WriteResult("forget", (record,), None, changed=False)
    changes: dict[str, Any] = {"status": "forgotten", "forgottenAt": now_iso()}
    if reason:
        changes["forgottenReason"] = reason
    return update(mem, memory_id, changes, operation="forget", source=source, extra_trailers=None)
