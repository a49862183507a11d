"""``store``: one new memory, checked before the lock, written and committed under it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError
from remnic.memfile.model import MemoryRecord, body_for, content_hash, new_id, now_iso, serialize
from remnic.memfile.secrets import subject_excerpt
from remnic.memfile.validate import (
    check_content,
    check_namespace,
    check_source,
    file_problems,
    new_frontmatter,
    store_extra_problems,
)
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from ..inheriting import inherited
from ..superseding import supersede
from .checks import check_named_ids, check_writable
from .result import WriteResult, result_of, summary

if TYPE_CHECKING:
    from ..memory import Memory


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
        check_named_ids(mem, None, meta, extra, ns)
        rel = mem.files.allocate_path(category, content, ns)
        return WriteResult("store", (MemoryRecord(rel, meta, body_for(content), ns),), None, changed=False)

    def run(tx: Transaction) -> PlanOutcome:
        if dedupe:
            existing = mem.find_duplicate(ns, content_hash(content.strip()), tx)
            if existing is not None:
                return PlanOutcome(WriteResult("store", (existing,), None, changed=False))
        check_writable(mem)
        old = check_named_ids(mem, tx, meta, extra, ns)
        rel = mem.files.allocate_path(category, content, ns, taken=tx.exists)
        record = MemoryRecord(rel, meta, body_for(content), ns)
        tx.put(rel, serialize(meta, record.body), record)
        ids = [record.id]
        if old is not None and old.id != record.id and supersede(mem, tx, old, record):
            ids.append(old.id)
        subject = f"remnic store: {subject_excerpt(content)}"
        return PlanOutcome(record, subject, ids, ns)

    outcome, commit = mem.committer.submit(Plan(("store", source), run))
    return result_of("store", outcome, commit)
