"""Stage 1: candidates from both retrievers (BM25 ∪ vectors), each keeping its raw signal and rank."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .types import Candidate

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.bm25 import Bm25Index
    from remnic.index.vectors import Snapshot, VectorScores


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
) -> list[Candidate]:
    """Union of the vector top-``depth`` and the BM25 top-``depth`` within ``mask``; vector order first."""
    out: dict[int, Candidate] = {}

    def cand(r: int) -> Candidate:
        c = out.get(r)
        if c is None:
            c = out[r] = Candidate(
                int(r), snap.paths[r], snap.ids[r], float(vec.combined[r]), float(vec.chunk[r]), float(vec.context[r])
            )
        return c

    with_vectors = mask & snap.has_vec[: len(mask)]  # memories still waiting for theirs are BM25's alone
    for rank, r in enumerate(top_rows(vec.combined, with_vectors, depth), 1):
        cand(int(r)).vector_rank = rank
    rank = 0
    for path, score in bm25.search(
        terms,
        depth,
        boosts=boosts,
        namespaces=namespaces,
        categories=categories,
        statuses=statuses,
        months=months,
        extra=extra,
    ):
        r = snap.row_of.get(path)
        if r is None or not mask[r]:
            continue  # tantivy is ahead of the catalog for a moment, or out of scope
        rank += 1
        c = cand(r)
        c.bm25, c.bm25_rank = score, rank
    return list(out.values())
