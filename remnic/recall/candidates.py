"""Stage 1: candidates from both retrievers (BM25 ∪ vectors), each keeping its raw signal and rank.

A long memory's BM25 score takes the better of its whole body's and its best passage's
body score, plus ``passage_blend`` × the lesser (:mod:`remnic.index.passage_bm25`):
length normalisation over a 20,000-character body would otherwise bury a phrase that a
passage of it holds plainly, and a memory that matches both as a whole and in one place
is the likelier one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from remnic.index.passage_bm25 import PassageScore, passage_scores

from .types import Candidate

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.bm25 import Bm25Index
    from remnic.index.vectors import Snapshot, VectorScores


def as_similarity(vec: VectorScores, context_weight: float) -> VectorScores:
    """``vec`` with ``combined`` the weighted mean of the chunk and context cosines (1 : ``context_weight``)
    rather than their weighted sum: a memory with no context passage of its own (its text is its
    context) then scores its chunk cosine, not 1 + ``context_weight`` times it, so the raw similarity
    is a cosine the similarity floor and the X-ray are read against. One constant divides every row,
    so no ranking and no min-max term changes."""
    if context_weight <= 0:
        return vec
    return replace(vec, combined=vec.combined / np.float32(1.0 + context_weight))


def top_rows(scores: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    """Rows of the k best scores among ``mask``, best first (exact: the corpus is scored in full)."""
    live = np.flatnonzero(mask)
    if k <= 0 or not len(live):
        return live[:0]
    sub = scores[live]
    if k < len(live):
        part = np.argpartition(-sub, k - 1)[:k]
        live, sub = live[part], sub[part]
    order = np.argsort(-sub, kind="stable")
    return live[order]


def gather(
    snap: Snapshot,
    bm25: Bm25Index,
    vec: VectorScores,
    terms: Sequence[str],
    *,
    depth: int,
    boosts: Mapping[str, float],
    mask: np.ndarray,
    namespaces: Sequence[str] | None,
    categories: Sequence[str] | None,
    statuses: Sequence[str] | None,
    months: Sequence[str] | None = None,
    extra: Sequence[tuple[str, str, float]] = (),
    passage_blend: float = 0.0,
    paths: Sequence[str] | None = None,
    slack: int = 0,
) -> list[Candidate]:
    """Union of the vector top-``depth`` and the BM25 top-``depth`` within ``mask``; vector order first.

    When ``mask`` leaves out memories no other filter names (the caller's tag and time filters), BM25
    is kept within it either by ``paths`` (the memories it holds) or by ``slack`` (how many it leaves
    out: BM25 reads that many more, so up to ``depth`` of what it reads are in ``mask``).
    """
    out: dict[int, Candidate] = {}

    def cand(r: int) -> Candidate:
        c = out.get(r)
        if c is None:
            c = out[r] = Candidate(
                int(r),
                snap.paths[r],
                snap.ids[r],
                float(vec.combined[r]),
                float(vec.chunk[r]),
                float(vec.context[r]),
                has_vectors=bool(snap.has_vec[r]),
            )
        return c

    with_vectors = mask & snap.has_vec[: len(mask)]  # memories still waiting for theirs are BM25's alone
    for rank, r in enumerate(top_rows(vec.combined, with_vectors, depth), 1):
        cand(int(r)).vector_rank = rank
    filters = {
        "namespaces": namespaces,
        "categories": categories,
        "statuses": statuses,
        "months": months,
        "paths": paths,
    }
    deep = depth + max(0, slack)
    whole = bm25.search(terms, deep, boosts=boosts, extra=extra, **filters)
    # Twice as deep: several passages of one memory may take the first places.
    passages = passage_scores(bm25, terms, 2 * deep, boosts=boosts, extra=extra, **filters)
    rank = 0
    for path, score, passage in best_of(whole, passages, passage_blend)[:deep]:
        r = snap.row_of.get(path)
        if r is None or not mask[r]:
            continue  # tantivy is ahead of the catalog for a moment, or out of scope
        if rank == depth:
            break
        rank += 1
        c = cand(r)
        c.bm25, c.bm25_rank, c.bm25_passage = score, rank, passage
    return list(out.values())


def best_of(
    whole: Sequence[tuple[str, float]], passages: Mapping[str, PassageScore], blend: float = 0.0
) -> list[tuple[str, float, int | None]]:
    """(path, score, passage number or None) best first: a long memory whose best passage beats its
    whole body takes the score with that passage as its body (and names it); with ``blend`` the
    lesser of the two adds ``blend`` × its score (equal scores keep tantivy's order)."""
    best: dict[str, tuple[float, int | None]] = {path: (score, None) for path, score in whole}
    for path, p in passages.items():
        if p.wins or blend > 0:
            best[path] = (p.blended(blend), p.passage if p.wins else None)
    ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
    return [(path, score, n) for path, (score, n) in ranked]
