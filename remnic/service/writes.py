"""Every memory write as a plan for the one write transaction (:mod:`remnic.repo.transaction`).

A plan validates what it can before taking the lock, then — under the lock, inside
the transaction — reads what it needs, checks duplicates and stages the files it
changes. The transaction commits them (group-committed with other plans of the same
kind), and the caller gets one :class:`WriteResult`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, MemoryFormatError, RemnicError, UsageError, ValidationError
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
from remnic.memfile.normalize import render
from remnic.memfile.validate import (
    Checked,
    PlannedMemory,
    check_bytes,
    check_changes,
    check_content,
    check_namespace,
    file_problems,
    new_frontmatter,
    plan_import,
)
from remnic.repo.ledger import trailers_for
from remnic.repo.transaction import CommitOutcome, Plan, PlanOutcome, Transaction

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
    """Import: ids of the items skipped as exact duplicates."""

    @property
    def record(self) -> MemoryRecord:
        """The (first) memory written or found."""
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
        return out


def summary(problems: Sequence[FieldProblem]) -> str:
    """One line naming the first problem (and how many more), so str(error) alone is useful."""
    first = problems[0].describe()
    return first if len(problems) == 1 else f"{first} (and {len(problems) - 1} more problem(s))"


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
    return WriteResult(operation, records, commit.sha, changed=outcome.subject is not None)


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
    """Validate, write and commit one memory; an exact duplicate of an active one is returned unchanged."""
    ns = namespace or mem.settings.namespaces.default
    problems = check_content(content, mem.settings.store) + check_namespace(ns)
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
    if dry_run:
        rel = mem.files.allocate_path(category, content, ns)
        return WriteResult("store", (MemoryRecord(rel, meta, body_for(content), ns),), None, changed=False)

    def run(tx: Transaction) -> PlanOutcome:
        if dedupe:
            existing = mem.find_duplicate(ns, content_hash(content.strip()), tx)
            if existing is not None:
                return PlanOutcome(WriteResult("store", (existing,), None, changed=False))
        check_writable(mem)
        rel = mem.files.allocate_path(category, content, ns, taken=tx.exists)
        record = MemoryRecord(rel, meta, body_for(content), ns)
        tx.put(rel, serialize(meta, record.body), record)
        return PlanOutcome(record, f"remnic store: {content.strip()[:60]}", [record.id], ns)

    outcome, commit = mem.committer.submit(Plan(("store", source), run))
    return result_of("store", outcome, commit)


def check_writable(mem: Memory) -> None:
    """Refuse to commit where the commit would be lost or tangled (detached HEAD, a merge underway)."""
    reason = mem.ledger.busy_reason()
    if reason is not None:
        raise RemnicError(f"cannot write memories now: {reason}; finish it or check out a branch, then retry")


# --- import ---


def plan_items(
    mem: Memory, items: Iterable[Any], line_numbers: Sequence[int] | None, namespace: str | None, source: str
) -> tuple[list[PlannedMemory], list[FieldProblem]]:
    return plan_import(
        items,
        line_numbers=line_numbers,
        namespace=namespace or mem.settings.namespaces.default,
        source=source,
        store=mem.settings.store,
        existing_ids=mem.files.ids,
        now=now_iso(),
    )


def import_records(
    mem: Memory,
    items: Iterable[Mapping[str, Any]],
    *,
    source: str,
    namespace: str | None,
    line_numbers: Sequence[int] | None,
    progress: Any = None,
) -> WriteResult:
    """Validate every item first; write nothing unless all are valid; then one commit (all or nothing)."""
    planned, problems = plan_items(mem, list(items), line_numbers, namespace, source)
    if problems:
        raise ValidationError(f"{summary(problems)}; nothing was imported", problems=problems)
    if not planned:
        return WriteResult("import", (), None, changed=False)

    def run(tx: Transaction) -> PlanOutcome:
        check_writable(mem)
        records: list[MemoryRecord] = []
        duplicates: list[str] = []
        seen: set[tuple[str, str]] = set()
        for i, (meta, content, ns, category) in enumerate(planned):
            key = (ns, content_hash(content.strip()))
            if key in seen or mem.find_duplicate(ns, key[1], tx) is not None:
                duplicates.append(meta["id"])
                continue
            seen.add(key)
            rel = mem.files.allocate_path(category, content, ns, taken=tx.exists)
            record = MemoryRecord(rel, meta, body_for(content), ns)
            tx.put(rel, serialize(meta, record.body), record)
            records.append(record)
            if progress:
                progress(i + 1, len(planned))
        namespaces = sorted({r.namespace for r in records}) or [DEFAULT_NAMESPACE]
        result = WriteResult("import", tuple(records), None, bool(records), tuple(duplicates))
        subject = f"remnic import: {len(records)} memories" if records else None
        return PlanOutcome(result, subject, [r.id for r in records], ",".join(namespaces))

    outcome, commit = mem.committer.submit(Plan(("import", source, UNGROUPED + new_id()), run))
    result = outcome.value
    assert isinstance(result, WriteResult)
    return WriteResult("import", result.records, commit.sha, result.changed, result.duplicates)


# --- update and forget ---


def _patched(checked: Checked, changes: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(file text, frontmatter) with ``changes`` applied, ``updated`` and derived keys kept in step."""
    record = checked.record
    assert record is not None
    meta = {k: v for k, v in {**record.frontmatter, **changes}.items() if v is not None}
    meta.setdefault("id", record.id)
    meta["updated"] = now_iso()
    meta.update(derived_fields(meta, record.body))
    if any(v is None for v in changes.values()):  # removing a key: the patcher only sets keys
        return serialize(meta, record.body), meta
    return render(checked, {k: meta[k] for k in meta if meta[k] != record.frontmatter.get(k, _MISSING)})


def update(
    mem: Memory,
    memory_id: str,
    changes: Mapping[str, Any],
    *,
    operation: str,
    source: str,
    extra_trailers: Mapping[str, str] | None,
) -> WriteResult:
    """Change frontmatter keys (None removes one); the body's bytes and every other line stay as they are.

    A user's uncommitted edit of the file is carried aside, never committed under remnic's
    message: the commit gets the change applied to the committed version, and the file on
    disk gets it applied to the user's version, which stays uncommitted.
    """
    for key in changes:
        if key in ("id", "contentHash"):
            raise ValidationError.single(key, "cannot be changed by an update")
    problems = check_changes(changes)
    if problems:
        raise ValidationError(summary(problems), problems=problems)

    def run(tx: Transaction) -> PlanOutcome:
        check_writable(mem)
        record = mem.get(memory_id)
        path = record.path
        disk = tx.read_bytes(path)
        checked = check_bytes(disk or b"", path, mem.settings.store)
        if checked.problems or checked.record is None:
            raise MemoryFormatError(path, checked.problems)
        text, meta = _patched(checked, changes)
        after = check_bytes(text.encode("utf-8"), path, mem.settings.store)
        if after.problems:
            raise ValidationError(
                "the update would make the file invalid; nothing was written", problems=after.problems
            )
        updated = MemoryRecord(path, meta, checked.record.body, record.namespace)
        committed = mem.ledger.committed_bytes(path)
        commit_data = None
        if committed is not None and committed != disk:
            base = check_bytes(committed, path, mem.settings.store)
            if base.problems or base.record is None:
                raise UsageError(
                    f"{path} has uncommitted edits and its committed version cannot be read; "
                    "commit your edits first (`remnic sync run`), then retry"
                )
            commit_data = _patched(base, changes)[0].encode("utf-8")
        tx.put(path, text, updated, commit_data=commit_data)
        subject = f"remnic {operation}: {record.content[:60]}"
        return PlanOutcome(updated, subject, [record.id], record.namespace, dict(extra_trailers or {}))

    key = (operation, source) if not extra_trailers else (operation, source, UNGROUPED + new_id())
    outcome, commit = mem.committer.submit(Plan(key, run))
    return result_of(operation, outcome, commit)


def forget(mem: Memory, memory_id: str, reason: str | None, *, source: str) -> WriteResult:
    """Mark a memory forgotten (status, forgottenAt, forgottenReason); its text stays in the file and history."""
    record = mem.get(memory_id)
    if record.status == "forgotten":
        return WriteResult("forget", (record,), None, changed=False)
    changes: dict[str, Any] = {"status": "forgotten", "forgottenAt": now_iso()}
    if reason:
        changes["forgottenReason"] = reason
    return update(mem, memory_id, changes, operation="forget", source=source, extra_trailers=None)


def duplicate_in(records: Iterable[MemoryRecord], namespace: str, digest: str) -> MemoryRecord | None:
    """An active record among ``records`` with this content hash."""
    for record in records:
        if record.namespace == namespace and record.status == "active" and content_hash(record.content) == digest:
            return record
    return None
