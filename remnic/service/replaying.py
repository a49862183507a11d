"""A statement a correction replaced, said again (see :mod:`.flushing`, docs/observe.md step 2).

A superseded memory is the statement it was, never a copy: said again it is reinforced (a replay of
the transcript that first said it) or revived (said after the memory that replaced it) — but only by a
statement in its very words (content hash). A near duplicate by embedding or shared words is not
enough: "We deploy production with ArgoCD", "We used to deploy staging with ArgoCD" or "We should …"
read like "We deploy staging with ArgoCD", and reviving it on their word would undo a correction and
lose them. They are new facts; a keyed one supersedes through its key as any new value does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from remnic.memfile.model import MemoryRecord, content_hash, now_iso, parse_time
from remnic.observe.records import MemoryObservation
from remnic.repo.transaction import Transaction

from .chain_links import drop_stale_claims
from .superseding import supersede
from .writes import patch_staged

if TYPE_CHECKING:
    from .flushing import _FlushWork
    from .memory import Memory

__all__ = ["as_staged", "replaced_saying", "revive", "said_anew", "successor", "superseded_same"]

_MAX_CHAIN = 16  # supersededBy links followed at most (a loop or a long chain ends the walk)


def as_staged(tx: Transaction, record: MemoryRecord | None) -> MemoryRecord | None:
    """The memory as this flush has it now (an earlier fact of the flush may have superseded it)."""
    staged = tx.staged.get(record.path) if record is not None else None
    return staged.record if staged is not None and staged.record is not None else record


def successor(mem: Memory, tx: Transaction, record: MemoryRecord) -> MemoryRecord | None:
    """The memory that superseded ``record``, as this flush has it — down a chain of replacements to
    the one not superseded (A → B → C: a restatement of A is said against C, C's time decides)."""
    seen = {record.id}
    for _ in range(_MAX_CHAIN):
        new_id = record.frontmatter.get("supersededBy")
        if not isinstance(new_id, str) or new_id in seen:
            return None
        seen.add(new_id)
        written = next((r for r in tx.staged_records() if r.id == new_id), None)  # earlier in this flush
        try:
            record = written or as_staged(tx, mem.get(new_id)) or record
        except Exception:  # noqa: BLE001 - gone or malformed: nothing to revive it against
            return None
        if record.status != "superseded":
            return record
    return None


def superseded_same(
    mem: Memory, tx: Transaction, obs: MemoryObservation, ns: str, work: _FlushWork
) -> tuple[MemoryRecord | None, MemoryRecord | None]:
    """A superseded memory with the words of ``obs`` (its content hash) and the memory in use that
    replaced it; (None, None) when there is none, or nothing known replaced it (then the fact is written
    as a new memory, and a keyed one supersedes through its key as any new value does)."""
    digest = content_hash(obs.fact.content)
    found = mem.find_duplicate(ns, digest, tx, work.lookup, status="superseded")
    for record in [*([found] if found is not None else []), *_replaced_pool(mem, ns, work)]:
        record = as_staged(tx, record) or record
        if record.status != "superseded" or record.namespace != ns or content_hash(record.content) != digest:
            continue
        replacing = successor(mem, tx, record)
        if replacing is not None:
            return record, replacing
    return None, None


def _replaced_pool(mem: Memory, ns: str, work: _FlushWork) -> list[MemoryRecord]:
    """Superseded memories the index does not answer for (read once a flush): this process's writes on
    their way into it — or every file, with no index or one behind another process's commits."""
    if work.replaced_pool is None:
        assert work.lookup is not None
        manifest = mem.index.manifest() if mem.has_index() else None
        recorded, head = (manifest.commit if manifest is not None else None), work.lookup.head()
        if recorded is not None and (recorded == head or mem.indexer.covers(recorded, head)):
            records = list({r.path: r for r in work.queued}.values())  # the last version of each
        else:
            records = mem.files.scan().records
        work.replaced_pool = [r for r in records if r.namespace == ns and r.status == "superseded"]
    return work.replaced_pool


def replaced_saying(mem: Memory, tx: Transaction, record: MemoryRecord, content: str) -> MemoryRecord | None:
    """The memory ``record`` superseded, when its text is ``content``."""
    old_id = record.frontmatter.get("supersedes")
    if not isinstance(old_id, str):
        return None
    try:
        old = mem.get(old_id)
    except Exception:  # noqa: BLE001 - gone or malformed: then it is not there to reinforce
        return None
    old = as_staged(tx, old) or old
    return old if content_hash(old.content) == content_hash(content) else None


def said_anew(obs: MemoryObservation, old: MemoryRecord, replacing: MemoryRecord, work: _FlushWork) -> bool:
    """Whether a statement of a superseded memory is said again after what replaced it — a new
    assertion, so it is current again — rather than a replay of the transcript that first said it
    (its session and turns, or a time before the replacement's), which only reinforces it."""
    if replacing.status != "active":
        return False
    turns = old.frontmatter.get("sourceTurnIds")
    said = {str(t) for t in turns} if isinstance(turns, list) else set()
    if obs.session_id == old.frontmatter.get("sessionKey") and set(obs.source_turn_ids) <= said:
        return False
    said_at = parse_time(obs.valid_at)
    if said_at is None and replacing.id in (*work.created, *work.reinforced):
        return True  # untimed, said earlier in this flush: the order its facts were said in decides
    # A timed statement is after the replacement by its own time only — not because the replacement was
    # reinforced earlier in this flush: a replay of an older transcript reinforces the current value
    # first, and its own older correction is still no newer than that value (one flush as two).
    when = said_at or parse_time(obs.observed_at) or 0.0
    then = parse_time(replacing.frontmatter.get("validAt")) or parse_time(replacing.created) or 0.0
    # The same instant (times to the second, two flushes in one) counts as after: what replaced it was
    # committed by an earlier flush, so this was observed later.
    return when >= then


def revive(
    mem: Memory, tx: Transaction, old: MemoryRecord, replacing: MemoryRecord, obs: MemoryObservation
) -> list[str]:
    """``old`` current again from when it was said anew, superseding the memory that had replaced it.
    The file is revived rather than written again, so one statement stays one memory."""
    when = obs.valid_at or obs.observed_at or now_iso()
    links = {"supersededBy": None, "supersededAt": None, "invalidAt": None}
    revived = patch_staged(mem, tx, old, {"status": "active", **links, "validAt": when, "supersedes": replacing.id})
    if revived is None:
        return []
    if replacing.frontmatter.get("supersedes") == old.id:  # no link loop: it no longer replaced anything
        replacing = patch_staged(mem, tx, replacing, {"supersedes": None}) or replacing
    drop_stale_claims(mem, tx, old.id)  # nor one further back in the chain (5433 in 5432 → 5433 → 6543 → 5432)
    return [replacing.id] if supersede(mem, tx, replacing, revived, when=when) else []
