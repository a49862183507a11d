"""A fact a reviewer dismissed or flagged, said again (see :mod:`.flushing`, docs/observe.md step 1).

A person decided that a memory is wrong (``remnic review dismiss``: status ``rejected``) or doubtful
(``review flag``: ``quarantined``). The same statement observed again is that memory, never a new
copy: it is reinforced (``reinforcement_count``, ``last_reinforced_at``, its turns and session join
its provenance) and keeps the status the reviewer gave it, so recall and the review queue see the
decision stand, with a count that says it keeps being said.

It is that memory when it has its words (content hash), or when it is a near duplicate of it by the
same rule that makes a fact reinforce an active memory (cosine and shared words, no other value of a
key) and the two do not differ concretely (:func:`~remnic.observe.alike.differs_concretely`): a
rewording of the dismissed statement carries the same claim the reviewer rejected, while another
number, name, weekday, a denial or swapped roles is another claim ("We deploy staging with Flux" after
"…with ArgoCD" was dismissed is what the reviewer may have been waiting for), written as a new fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from remnic.memfile.model import MemoryRecord, content_hash
from remnic.observe.alike import differs_concretely, word_overlap
from remnic.observe.records import MemoryObservation
from remnic.repo.transaction import Transaction

from .replaying import as_staged
from .superseding import states_other_value

if TYPE_CHECKING:
    from .flushing import _FlushWork
    from .memory import Memory

__all__ = ["DISMISSED", "dismissed_near", "dismissed_same"]

DISMISSED = ("rejected", "quarantined")
"""The statuses a review gives a memory it takes out of recall: the decision stays when it is said again."""

_UNINDEXED_MAX, _UNINDEXED_CHARS = 128, 1000  # as flushing's NEAR_UNINDEXED_*: more is the index catch-up's work


def dismissed_same(
    mem: Memory, tx: Transaction, obs: MemoryObservation, ns: str, work: _FlushWork
) -> MemoryRecord | None:
    """The dismissed or flagged memory with the words of ``obs`` (its content hash)."""
    digest = content_hash(obs.fact.content)
    for status in DISMISSED:
        found = as_staged(tx, mem.find_duplicate(ns, digest, tx, work.lookup, status=status))
        if found is not None and found.status in DISMISSED:
            return found
    return None


def dismissed_near(
    mem: Memory,
    tx: Transaction,
    obs: MemoryObservation,
    ns: str,
    vector: Any,
    work: _FlushWork,
    indexed: Sequence[tuple[str, str, float]],
) -> MemoryRecord | None:
    """The dismissed or flagged memory ``obs`` says again in other words: a near duplicate (as an active
    memory's is) that does not differ concretely. ``indexed``: the index's nearest memories, whatever
    status the index has them in (it may not have taken a review yet: the file's status decides)."""
    settings = mem.settings.observe
    floor = settings.duplicate_similarity_floor
    candidates: dict[str, tuple[float, MemoryRecord]] = {}
    for memory_id, path, similarity in indexed:
        if similarity < floor:
            continue
        staged = tx.staged.get(path)  # the file as this flush has it
        try:
            record = staged.record if staged is not None and staged.record is not None else mem.files.read(path)
        except Exception:  # noqa: BLE001 - gone or malformed since it was indexed
            continue
        if record.id == memory_id and record.status in DISMISSED and record.namespace == ns:
            candidates[record.path] = (similarity, record)
    for similarity, record in _unindexed(mem, ns, vector, work):
        if similarity >= floor and record.path not in tx.staged:
            candidates.setdefault(record.path, (similarity, record))
    for _similarity, record in sorted(candidates.values(), key=lambda c: -c[0]):
        if (
            word_overlap(obs.fact.content, record.content) >= settings.near_duplicate_word_overlap
            and not states_other_value(obs, record)
            and not differs_concretely(obs.fact.content, record.content)
        ):
            return record
    return None


def _unindexed(mem: Memory, ns: str, vector: Any, work: _FlushWork) -> list[tuple[float, MemoryRecord]]:
    """Dismissed memories the index has not taken as such yet (a review committed since its commit, by
    this process or another), with their cosine to ``vector``; embedded once a flush."""
    if work.dismissed_pool is None:
        assert work.lookup is not None
        committed = work.lookup.unindexed(_UNINDEXED_MAX, statuses=DISMISSED)
        pool = {r.path: r for r in [*committed, *work.queued]}  # the last version of each
        work.dismissed_pool = [
            r
            for r in pool.values()
            if r.namespace == ns and r.status in DISMISSED and 0 < len(r.content.strip()) <= _UNINDEXED_CHARS
        ]
        texts = [r.content for r in work.dismissed_pool]
        work.dismissed_vectors = np.asarray(mem.index.embed_as_memories(texts)) if texts else None
    if work.dismissed_vectors is None:
        return []
    sims = work.dismissed_vectors @ vector
    return [(float(s), r) for s, r in zip(sims, work.dismissed_pool, strict=True)]
