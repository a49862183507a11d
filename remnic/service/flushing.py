"""Persisting one flush: its observations become memories in one commit (see :mod:`.observing`).

- an exact duplicate (content hash) or a near-duplicate (embedding cosine and word overlap) of an
  active memory reinforces it (``reinforcement_count``, ``last_reinforced_at``) instead of adding one;
  so does one of a memory a review dismissed or flagged, which stays so (:mod:`.dismissed`);
- otherwise a primitive is written with its provenance (``source: extraction``, ``sessionKey``,
  ``sourceTurnIds``, ``observedAt``) and supersedes the active memories that state another value for
  one of its entity/attribute keys;
- every verdict goes to the verdict ledger, with the primitive it resulted in. The commit carries
  the flush id, so a flush interrupted after its commit is never persisted twice.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from remnic.errors import ValidationError
from remnic.memfile.model import MemoryRecord, content_hash, new_id, now_iso, parse_time, serialize
from remnic.memfile.validate import check_bytes, new_frontmatter
from remnic.observe.alike import (
    RESTATED_CATEGORIES,
    contradicts,
    differs_concretely,
    group_fact,
    replaced_value,
    replaces,
    word_overlap,
)
from remnic.observe.buffer import FlushPlan
from remnic.observe.ledger import append_verdicts, ledger_has_flush, verdict_event
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import JudgeVerdict, MemoryObservation, host_turn_ids, reinforcement, said_before
from remnic.observe.secrets import SECRET_REASON, holds_secret
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from .dismissed import DISMISSED, dismissed_near, dismissed_same
from .duplicates import DuplicateLookup
from .prefetch import Prefetch
from .replaying import as_staged, replaced_saying, revive, said_anew, successor, superseded_same
from .superseding import current_same_value, states_other_value, supersede_older
from .writes import UNGROUPED, check_writable, patch_staged

if TYPE_CHECKING:
    from collections.abc import Callable

    from .memory import Memory

    Progress = Callable[[int, int], None]


__all__ = ["FlushResult", "persist_flush"]

NEAR_CANDIDATES = 5
# Memories another process committed that the index has not taken yet are compared directly, up to
# this many (each embedded once, through the cache the index reuses); more is a catch-up's work. A
# long note is no near duplicate of a fact, and embedding all its chunks would slow the flush.
NEAR_UNINDEXED_MAX = 128
NEAR_UNINDEXED_CHARS = 1000


@dataclass(frozen=True)
class FlushResult:
    """One flush: the turns it covered, what its observations became, and its commit."""

    flush_id: str
    reason: str
    turns: tuple[int, int]
    commit: str | None
    observations: tuple[MemoryObservation, ...]
    created: tuple[str, ...] = ()
    reinforced: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()
    replayed: bool = False
    """True when this flush's commit was already in git (a flush interrupted after its commit)."""
    predicted: bool = False
    """A dry run's flush: what it would write is not computed (it depends on the memories each fact meets,
    decided under the write lock), so its created/reinforced/superseded counts and ids are None, never 0."""

    def counts(self) -> dict[str, int | None]:
        verdicts = [o.verdict.kind for o in self.observations]
        written = {"created": self.created, "reinforced": self.reinforced, "superseded": self.superseded}
        return {
            "observations": len(self.observations),
            "accepted": verdicts.count("accept"),
            "deferred": verdicts.count("defer"),
            "rejected": verdicts.count("reject"),
            **{k: None if self.predicted else len(v) for k, v in written.items()},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "flushId": self.flush_id,
            "reason": self.reason,
            "turns": list(self.turns),
            "commit": self.commit,
            "replayed": self.replayed,
            **self.counts(),
            "createdIds": None if self.predicted else list(self.created),
            "reinforcedIds": None if self.predicted else list(self.reinforced),
            "supersededIds": None if self.predicted else list(self.superseded),
        }


@dataclass
class _FlushWork:
    """What the persisting plan decided, observation by observation."""

    observations: list[MemoryObservation]
    host_ids: frozenset[str] = frozenset()
    """The flush's turn ids that name a turn beyond its session (:func:`~remnic.observe.records.host_turn_ids`)."""
    created: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    created_paths: list[str] = field(default_factory=list)  # every primitive written in this flush
    written_paths: list[str] = field(default_factory=list)  # primitives written in this flush …
    written_vectors: list[Any] = field(default_factory=list)  # … and their embeddings
    unindexed: list[MemoryRecord] | None = None  # earlier writes the index has not taken yet …
    unindexed_vectors: Any = None  # … and their embeddings
    indexed_near: dict[int, list[tuple[str, str, float]]] = field(default_factory=dict)
    """Observation number → the indexed memories nearest its fact (id, path, cosine)."""
    dismissed_near: dict[int, list[tuple[str, str, float]]] = field(default_factory=dict)
    """… and the nearest the index has as rejected or quarantined (:mod:`.dismissed`)."""
    dismissed_pool: list[MemoryRecord] | None = None  # dismissed memories the index does not have as such …
    dismissed_vectors: Any = None  # … and their embeddings
    replaced_pool: list[MemoryRecord] | None = None  # superseded memories the index does not answer for
    lookup: DuplicateLookup | None = None  # exact duplicates: queued writes and files, each read once a flush
    queued: list[MemoryRecord] = field(default_factory=list)
    """This process's writes still on their way into the index, read BEFORE the index is searched: one the
    index worker applies in between is then in one or the other, never in neither."""
    # One `created` for the flush's primitives (one commit): a memory's place in its episode is then
    # its turn's, not the millisecond its file happened to be written in (which varied run to run).
    now: str = field(default_factory=now_iso)


def persist_flush(
    mem: Memory, plan: FlushPlan, *, source: str, resumed: bool = True, progress: Progress | None = None
) -> FlushResult:
    """One commit for one flush (or none, when it is already in git: a ``resumed`` plan is looked for
    in all the history, a new one since a day before it began, so the look-up stays cheap)."""
    settings = mem.settings.observe
    embed = mem.embedder_for_observe(facts=True)
    started = time.perf_counter()
    warm = None
    if embed is not None:
        embedder = mem.index.embedder
        try:
            embedder.load(tokenizer_only=True)  # before extraction keeps the interpreter busy
            warm = embedder.load
        except Exception:  # noqa: BLE001 - the facts' embedding below fails as before, saying why
            pass
    with Prefetch(embed, len(plan.turns), warm=warm) as ahead:
        observations = plan_observations(
            plan.turns,
            session_key=plan.session_key,
            settings=settings,
            embed=ahead.embed,
            prefetch=ahead.add,
            progress=progress,
        )
    # The judge rejects what held a secret; this is the store's own rule on what a file may hold.
    observations = [_without_secret(o) if mem.settings.store.scan_secrets else o for o in observations]
    trailers = {k.removeprefix("Remnic-"): v for k, v in plan.trailers().items()}
    begun = None if resumed else parse_time(plan.begun_at)
    # No wait for the index: what this process wrote but the index has not taken yet is looked at
    # directly (exact duplicates, supersession, near duplicates), so a flush never waits for the
    # previous flush's indexing.

    def run(tx: Transaction) -> PlanOutcome:
        # Under the write lock: another process that took this open plan (two hooks of one session
        # at once) may have committed it since; then it is done, not persisted twice.
        done = mem.ledger.commit_with_trailer("Flush-Id", plan.flush_id, since=begun - 86400 if begun else None)
        if done is not None:
            return PlanOutcome(done)
        check_writable(mem)
        work = _FlushWork(list(observations), host_turn_ids(plan.turns), lookup=DuplicateLookup(mem))
        vectors = _vectors(mem, [o.fact.content for o in observations])
        kept = [i for i, o in enumerate(observations) if o.proposed_status is not None and i in vectors]
        work.queued = mem.indexer.pending_records()
        if kept and mem.has_index():  # one hold of the index lock for the whole flush
            found = mem.index.nearest_many([vectors[i] for i in kept], NEAR_CANDIDATES, namespace=plan.namespace)
            work.indexed_near = dict(zip(kept, found, strict=True))
            found = mem.index.nearest_many(
                [vectors[i] for i in kept], NEAR_CANDIDATES, namespace=plan.namespace, statuses=DISMISSED
            )
            work.dismissed_near = dict(zip(kept, found, strict=True))
        for i, obs in enumerate(observations):
            if obs.proposed_status is None:
                continue
            work.observations[i] = _persist_one(mem, tx, obs, plan, vectors.get(i), work, i)
        counts = {
            "Observations": str(len(observations)),
            "Created": str(len(work.created)),
            "Reinforced": str(len(work.reinforced)),
            "Superseded": str(len(work.superseded)),
        }
        subject = (
            f"remnic observe: {plan.session_key[:40]} turns {plan.first_seq}-{plan.last_seq} "
            f"({len(work.created)} new, {len(work.reinforced)} reinforced, {len(work.superseded)} superseded)"
        )
        ids = list(dict.fromkeys(work.created + work.reinforced + work.superseded))
        return PlanOutcome(work, subject, ids, plan.namespace, {**trailers, **counts})

    outcome, commit = mem.committer.submit(Plan(("observe", source, UNGROUPED + plan.flush_id), run))
    if isinstance(outcome.value, str):
        span = (plan.first_seq, plan.last_seq)
        found = _verdicts_after_crash(mem, plan, observations, outcome.value)
        return FlushResult(plan.flush_id, plan.reason, span, outcome.value, tuple(found), replayed=True)
    work = outcome.value
    assert isinstance(work, _FlushWork)
    elapsed = int((time.perf_counter() - started) * 1000)
    turns = len(plan.turns)
    append_verdicts(mem.root, [_ledger_line(o, plan, elapsed, turns) for o in work.observations])
    return FlushResult(
        plan.flush_id,
        plan.reason,
        (plan.first_seq, plan.last_seq),
        commit.sha,
        tuple(work.observations),
        tuple(work.created),
        tuple(work.reinforced),
        tuple(work.superseded),
    )


def _without_secret(obs: MemoryObservation) -> MemoryObservation:
    """An observation whose content holds a secret, rejected: never a file, nor a file name."""
    if obs.proposed_status is None or not holds_secret(obs.fact.content):
        return obs
    return replace(obs, verdict=JudgeVerdict("reject", SECRET_REASON), proposed_status=None)


def _verdicts_after_crash(
    mem: Memory, plan: FlushPlan, observations: Sequence[MemoryObservation], sha: str
) -> list[MemoryObservation]:
    """A flush found committed: the process that committed it died, perhaps before it wrote the
    verdicts (or it is about to). Each observation is pointed at the primitive the commit holds for
    it, and the verdicts are written unless the ledger has them (its readers count a verdict once)."""
    by_hash: dict[str, str] = {}
    by_turns: list[tuple[set[str], str]] = []
    parents = mem.ledger.parents(sha)
    for status, path, _ in mem.ledger.diff_names(parents[0], sha) if parents else []:
        if status == "D" or not path.endswith(".md"):
            continue
        checked = check_bytes(mem.ledger.show(sha, path).encode("utf-8"), path, mem.settings.store)
        if not checked.ok or checked.record is None or not checked.record.id:
            continue
        record = checked.record
        by_hash.setdefault(content_hash(record.content), record.id)
        turns = record.frontmatter.get("sourceTurnIds")
        if isinstance(turns, list):
            by_turns.append(({str(t) for t in turns}, record.id))
    found = []
    for obs in observations:
        primitive = None
        if obs.proposed_status is not None:
            primitive = by_hash.get(content_hash(obs.fact.content)) or next(
                (mid for held, mid in by_turns if obs.source_turn_ids and set(obs.source_turn_ids) <= held), None
            )
        found.append(replace(obs, resulting_primitive_id=primitive))
    if not ledger_has_flush(mem.root, plan.flush_id):
        lines = [{**_ledger_line(o, plan, 0, len(plan.turns)), "recovered": True} for o in found]
        append_verdicts(mem.root, lines)
    return found


def _ledger_line(obs: MemoryObservation, plan: FlushPlan, elapsed_ms: int, turns: int) -> dict[str, Any]:
    line = verdict_event(obs, plan.session_key, elapsed_ms=elapsed_ms)
    line.update(resultingPrimitiveId=obs.resulting_primitive_id, flushId=plan.flush_id, flushTurns=turns)
    return line


def _vectors(mem: Memory, texts: Sequence[str]) -> dict[int, Any]:
    """Embedding of each fact (for near-duplicates), or nothing when no model loads."""
    if not texts or mem.embedder_for_observe() is None:
        return {}
    try:
        matrix = mem.index.embed_as_memories(texts)
    except Exception:  # noqa: BLE001 - no model: exact duplicates are still caught
        return {}
    return dict(enumerate(matrix))


def _persist_one(
    mem: Memory, tx: Transaction, obs: MemoryObservation, plan: FlushPlan, vector: Any, work: _FlushWork, number: int
) -> MemoryObservation:
    """Reinforce an existing memory or write a new primitive (superseding what it replaces)."""
    fact = obs.fact
    existing = as_staged(tx, mem.find_duplicate(plan.namespace, content_hash(fact.content), tx, work.lookup))
    # Replaced earlier in this flush: said again, it is a restatement of a superseded memory.
    replaced_by = successor(mem, tx, existing) if existing is not None and existing.status == "superseded" else None
    restated: tuple[MemoryRecord, ...] = ()
    if existing is None and obs.proposed_status == "pending_review":
        # Waiting for review already (this flush's, or an earlier session's): reinforced, not queued twice.
        digest = content_hash(fact.content)
        existing = mem.find_duplicate(plan.namespace, digest, tx, work.lookup, status="pending_review")
    if existing is None:
        # Dismissed or flagged by a reviewer, in these words: that memory, and the decision stays.
        existing = dismissed_same(mem, tx, obs, plan.namespace, work)
    if existing is None and vector is not None:
        near = _near_duplicate(mem, tx, obs, plan.namespace, vector, work, work.indexed_near.get(number, []))
        if near is not None and differs_concretely(fact.content, near.content):
            # Another number, name or value: not a repeat. A denial or reversal of how things are
            # replaces it; said again after that replaced it, it is the memory it was.
            if fact.category in RESTATED_CATEGORIES and contradicts(fact.content, near.content):
                existing = replaced_saying(mem, tx, near, fact.content)
                replaced_by = near if existing is not None else None
                restated = () if existing is not None else (near,)
        else:
            existing = near
    if existing is None and not restated and vector is not None:
        # Or said in other words that claim nothing else (the index may have it as it was before the review).
        indexed = [*work.dismissed_near.get(number, []), *work.indexed_near.get(number, [])]
        existing = dismissed_near(mem, tx, obs, plan.namespace, vector, work, indexed)
    if existing is None and not restated:
        # What a correction replaced, said again in its words or as its key's same value: a replay
        # reinforces it (it stays superseded); said after the replacement it is revived below. Only
        # the same statement: a near duplicate ("…production…", "We used to…") is a new fact.
        existing, replaced_by = superseded_same(mem, tx, obs, plan.namespace, work)
    if existing is None and not restated and obs.proposed_status == "active":
        # Its key's current value said again (another speaker, other words): that memory, not a second one.
        unindexed = work.lookup.unindexed(NEAR_UNINDEXED_MAX) if work.lookup else ()
        existing = current_same_value(mem, tx, obs, plan.namespace, unindexed)
    if existing is None and fact.category in RESTATED_CATEGORIES and replaced_value(fact.content):
        # "…6543, not 5433": it names the value it replaces, so the memory stating that value of the
        # same thing is replaced, whatever its key and however far its wording.
        restated += tuple(r for r in _stating_old(mem, tx, obs, plan.namespace, work, number) if r not in restated)
    if existing is not None and said_before(existing.frontmatter, obs.source_turn_ids, work.host_ids):
        # Made from these very turns (a forked session's copy of its parent's lines): nothing new was said.
        return replace(obs, resulting_primitive_id=existing.id)
    if existing is not None:
        anew = replaced_by is not None and said_anew(obs, existing, replaced_by, work)
        _reinforce(mem, tx, existing, obs.source_turn_ids, plan.session_key)
        if existing.id not in work.reinforced and existing.id not in work.created:
            work.reinforced.append(existing.id)
        if anew and replaced_by is not None:
            work.superseded += revive(mem, tx, existing, replaced_by, obs)
        if fact.structured_attributes and (anew or existing.status == "active"):
            work.superseded += _supersede_as_current(mem, tx, existing, obs, work)
        return replace(obs, resulting_primitive_id=existing.id)
    record = _write_primitive(mem, tx, obs, plan, work.now)
    work.created.append(record.id)
    work.created_paths.append(record.path)
    if vector is not None:
        work.written_paths.append(record.path)
        work.written_vectors.append(vector)
    unindexed = work.lookup.unindexed(NEAR_UNINDEXED_MAX) if work.lookup else ()
    replaced = supersede_older(mem, tx, record, obs, unindexed, earlier_in_flush=work.created, restated=restated)
    work.superseded += [r for r in replaced if r not in work.superseded]
    return replace(obs, resulting_primitive_id=record.id)


def _supersede_as_current(
    mem: Memory, tx: Transaction, record: MemoryRecord, obs: MemoryObservation, work: _FlushWork
) -> list[str]:
    """A keyed fact that reinforced ``record`` makes it the current value of its key: it takes the key
    when it had none, and supersedes the other active values said before this restatement."""
    current = as_staged(tx, record) or record
    if not current.frontmatter.get("entityRef"):
        keyed = {"entityRef": obs.fact.entity_ref, "structuredAttributes": dict(obs.fact.structured_attributes)}
        current = patch_staged(mem, tx, current, keyed) or current
    # Said now, not when the memory was first written: compared by the restatement's time.
    view = MemoryRecord(current.path, {**current.frontmatter, "created": work.now}, current.body, current.namespace)
    unindexed = work.lookup.unindexed(NEAR_UNINDEXED_MAX) if work.lookup else ()
    earlier = [*work.created, *work.reinforced]
    return [
        r for r in supersede_older(mem, tx, view, obs, unindexed, earlier_in_flush=earlier) if r not in work.superseded
    ]


def _write_primitive(mem: Memory, tx: Transaction, obs: MemoryObservation, plan: FlushPlan, now: str) -> MemoryRecord:
    fact = obs.fact
    extra: dict[str, Any] = {
        "status": obs.proposed_status or "active",
        "sessionKey": plan.session_key,
        "sourceTurnIds": list(obs.source_turn_ids),
        "sourceTurnId": obs.source_turn_ids[0] if obs.source_turn_ids else None,
        "observedAt": obs.observed_at or now,
        "importanceReasons": list(obs.importance.reasons),
    }
    if obs.valid_at:
        extra["validAt"] = obs.valid_at
    if fact.entity_ref:
        extra["entityRef"] = fact.entity_ref
    if fact.structured_attributes:
        extra["structuredAttributes"] = dict(sorted(fact.structured_attributes.items()))
    extra = {k: v for k, v in extra.items() if v not in (None, [], "")}
    meta, problems = new_frontmatter(
        memory_id=new_id(),
        now=now,
        content=fact.content,
        category=fact.category,
        settings=mem.settings.store,
        tags=list(fact.tags),
        confidence=fact.confidence,
        importance=obs.importance.score,
        source="extraction",
        extra=extra,
    )
    if problems:  # the rules produced something no file may hold (a secret, say): leave it out
        raise ValidationError(problems[0].describe(), problems=problems)
    rel = mem.files.allocate_path(fact.category, fact.content, plan.namespace, taken=tx.exists)
    record = MemoryRecord(rel, meta, "\n" + fact.content.strip() + "\n", plan.namespace)
    tx.put(rel, serialize(meta, record.body), record)
    return record


def _stating_old(
    mem: Memory, tx: Transaction, obs: MemoryObservation, ns: str, work: _FlushWork, number: int
) -> list[MemoryRecord]:
    """Active memories that ``obs`` ("X is NEW, not OLD") says are wrong: written earlier in this flush,
    committed but not indexed yet, or among the indexed memories nearest it."""
    seen: dict[str, MemoryRecord] = {}
    for path in work.created_paths:
        staged = tx.staged.get(path)
        if staged is not None and staged.record is not None:
            seen[staged.record.id] = staged.record
    for record in [*(work.unindexed or ()), *(work.lookup.unindexed(NEAR_UNINDEXED_MAX) if work.lookup else ())]:
        seen.setdefault(record.id, record)
    for memory_id, path, _similarity in work.indexed_near.get(number, []):
        if memory_id in seen:
            continue
        staged = tx.staged.get(path)
        try:
            record = staged.record if staged is not None and staged.record is not None else mem.files.read(path)
        except Exception:  # noqa: BLE001 - gone or malformed since it was indexed
            continue
        seen[record.id] = record
    return [
        r for r in seen.values() if r.namespace == ns and r.status == "active" and replaces(obs.fact.content, r.content)
    ]


def _reinforce(
    mem: Memory, tx: Transaction, record: MemoryRecord, turn_ids: Sequence[str] = (), session: str | None = None
) -> None:
    checked = check_bytes(tx.read_bytes(record.path) or b"", record.path, mem.settings.store)
    if not checked.ok or checked.record is None:
        return
    patch_staged(mem, tx, record, reinforcement(checked.record.frontmatter, turn_ids, now_iso(), session))


def _near_duplicate(
    mem: Memory,
    tx: Transaction,
    obs: MemoryObservation,
    ns: str,
    vector: Any,
    work: _FlushWork,
    indexed: Sequence[tuple[str, str, float]],
) -> MemoryRecord | None:
    """An active memory saying the same thing: cosine ≥ the floor, enough shared words, no other value.
    A team's fact said by another of the team (:func:`~remnic.observe.alike.group_fact`) is that memory
    whatever the cosine: the two names set the embeddings apart."""
    settings = mem.settings.observe
    floor = settings.duplicate_similarity_floor
    group = group_fact(obs.fact.content)

    def near(similarity: float, record: MemoryRecord) -> bool:
        return similarity >= floor or (group is not None and group_fact(record.content) == group)

    def rows(sims: np.ndarray) -> Sequence[int]:
        return range(len(sims)) if group is not None else np.flatnonzero(sims >= floor).tolist()

    candidates: list[tuple[float, MemoryRecord]] = []
    if work.written_paths:  # primitives written earlier in this flush
        sims = np.asarray(work.written_vectors) @ vector
        for row in rows(sims):
            path, similarity = work.written_paths[int(row)], sims[row]
            staged = tx.staged.get(path)
            record = staged.record if staged is not None else None
            # A fact waiting for review said again in this flush is that fact, not a second one to review.
            waiting = (
                obs.proposed_status == "pending_review" and record is not None and record.status == obs.proposed_status
            )
            if (
                record is not None
                and record.namespace == ns
                and (record.status == "active" or waiting)
                and near(float(similarity), record)
            ):
                candidates.append((float(similarity), record))
    if work.unindexed is None:  # committed but not in the index yet (this process's or another's): once a flush
        assert work.lookup is not None
        others = [r for r in work.lookup.unindexed(NEAR_UNINDEXED_MAX) if len(r.content) <= NEAR_UNINDEXED_CHARS]
        unindexed = {r.path: r for r in [*others, *work.queued]}
        records = [r for r in unindexed.values() if r.namespace == ns and r.content.strip()]
        work.unindexed = records
        work.unindexed_vectors = (
            np.asarray(mem.index.embed_as_memories([r.content for r in records])) if records else None
        )
    if work.unindexed_vectors is not None:
        sims = work.unindexed_vectors @ vector
        for row in rows(sims):
            record = work.unindexed[int(row)]
            if record.status == "active" and record.path not in tx.staged and near(float(sims[row]), record):
                candidates.append((float(sims[row]), record))
    for memory_id, path, similarity in indexed:
        if similarity < floor and group is None:
            continue
        staged = tx.staged.get(path)  # as this flush has it: revived, reinforced or superseded
        try:
            record = staged.record if staged is not None and staged.record is not None else mem.files.read(path)
        except Exception:  # noqa: BLE001 - gone or malformed since it was indexed
            continue
        if (
            record.id == memory_id
            and record.status == "active"
            and near(similarity, record)
            and all(r.path != path for _, r in candidates)
        ):
            candidates.append((similarity, record))
    for _similarity, record in sorted(candidates, key=lambda c: -c[0]):
        overlap = word_overlap(obs.fact.content, record.content)
        if overlap >= settings.near_duplicate_word_overlap and not states_other_value(obs, record):
            return record
    return None
