"""``import``: a batch of new memories and exported files, every line checked before anything is written,
then one commit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, NotFoundError, RemnicError, ValidationError
from remnic.memfile.model import DEFAULT_NAMESPACE, MemoryRecord, body_for, content_hash, new_id, now_iso, serialize
from remnic.memfile.validate import PlannedMemory, check_source, plan_import
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from ..duplicates import DuplicateLookup, find_duplicate
from ..portable import Restore, new_memory_fields, plan_restores, stage_include
from ..superseding import supersede, superseded_target, target_refusal
from .checks import check_writable
from .result import UNGROUPED, WriteResult, summary

if TYPE_CHECKING:
    from ..memory import Memory


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
