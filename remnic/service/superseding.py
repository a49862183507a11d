"""Temporal supersession of observed facts: a newer value for an entity's attribute ("staging DB
port" 5432 → 5433) marks the older active memories stating another value ``superseded`` by it."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord, parse_time
from remnic.observe.records import MemoryObservation, key_part
from remnic.repo.transaction import Transaction

from .writes import patch_staged, supersede

if TYPE_CHECKING:
    from .memory import Memory

__all__ = ["states_other_value", "supersede_older"]


def states_other_value(obs: MemoryObservation, record: MemoryRecord) -> bool:
    """Whether ``record`` states another value for one of the observation's entity/attribute keys."""
    return bool(_conflicting_keys(obs, record.frontmatter))


def _conflicting_keys(obs: MemoryObservation, frontmatter: Mapping[str, Any]) -> list[str]:
    fact = obs.fact
    if not fact.entity_ref or frontmatter.get("entityRef") is None:
        return []
    if key_part(str(frontmatter["entityRef"])) != key_part(fact.entity_ref):
        return []
    theirs = frontmatter.get("structuredAttributes")
    if not isinstance(theirs, Mapping):
        return []
    theirs_norm = {key_part(str(k)): str(v).strip().lower() for k, v in theirs.items()}
    out = []
    for attr, value in fact.structured_attributes.items():
        other = theirs_norm.get(key_part(attr))
        if other is not None and other != str(value).strip().lower():
            out.append(key_part(attr))
    return out


def supersede_older(
    mem: Memory,
    tx: Transaction,
    record: MemoryRecord,
    obs: MemoryObservation,
    unindexed: Sequence[MemoryRecord] = (),
    earlier_in_flush: Collection[str] = (),
    restated: Sequence[MemoryRecord] = (),
) -> list[str]:
    """Mark older active memories that state another value for this fact's keys as superseded by it,
    or this one superseded when another value was said after it (ids returned either way).
    ``unindexed``: memories other processes committed that the index has not taken yet;
    ``earlier_in_flush``: ids this flush wrote before this one (said before it); ``restated``: memories
    this fact says again with another number or denies (they conflict whatever their keys)."""
    entity_ref = obs.fact.entity_ref if obs.fact.structured_attributes else None
    if not entity_ref and not restated:
        return []
    new_when = _said_when(obs.valid_at, record.created)
    replaced: list[str] = []
    later: list[tuple[tuple[float, float], MemoryRecord]] = []
    same = _same_entity(mem, tx, entity_ref, record.namespace, unindexed) if entity_ref else ()
    conflicting = [o for o in same if _conflicting_keys(obs, o.frontmatter)]
    for other in {o.id: o for o in [*conflicting, *restated]}.values():
        if other.id == record.id or other.status != "active":
            continue
        old_when = _said_when(other.frontmatter.get("validAt"), other.created)
        if old_when > new_when:
            later.append((old_when, other))
            continue
        # One flush's facts share a `created` (and a transcript's turns often one timestamp): among
        # those, the order they were said in decides.
        if old_when == new_when and other.id not in earlier_in_flush:
            continue
        if supersede(mem, tx, other, record, when=obs.valid_at or record.created):
            replaced.append(other.id)
    if len(replaced) == 1:
        patch_staged(mem, tx, record, {"supersedes": replaced[0]})
    if later:
        # Another value was said after this one (an older transcript observed late, or observed
        # again): this fact is history from the start, ended by the first statement after it.
        _, ended_by = min(later, key=lambda pair: pair[0])
        if supersede(mem, tx, record, ended_by):
            replaced.append(record.id)
    return replaced


def _said_when(valid_at: Any, created: Any) -> tuple[float, float]:
    """When a fact was said (its turn's time, else its memory's), then when it was written."""
    written = parse_time(created) or 0.0
    return (parse_time(valid_at) or written, written)


def _same_entity(
    mem: Memory, tx: Transaction, entity_ref: str, ns: str, unindexed: Sequence[MemoryRecord]
) -> Iterable[MemoryRecord]:
    """Memories about ``entity_ref``: staged in this flush, committed but not indexed yet, and indexed."""
    key = key_part(entity_ref)
    seen: set[str] = set()
    staged = [*tx.staged_records(), *mem.indexer.pending_records(), *unindexed]
    for record in staged:
        ref = record.frontmatter.get("entityRef")
        if record.namespace == ns and ref is not None and key_part(str(ref)) == key and record.path not in seen:
            seen.add(record.path)
            yield record
    paths = mem.index.with_entity(entity_ref, namespace=ns) if mem.has_index() else []
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        try:
            yield mem.files.read(path)
        except Exception:  # noqa: BLE001 - gone or malformed since it was indexed
            continue
