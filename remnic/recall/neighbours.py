"""Neighbours must not outrank the turn they give context to.

A short episode memory is indexed with its neighbours' text (BM25 fields ``near``/``far``
and a context vector), so "Amazing, congratulations!" is findable by what it congratulates.
The price: a neighbour can outrank the very turn whose words it borrowed. After scoring,
for two memories of one episode within ``neighborWindow`` positions of each other, when
the lower one's *own* text matches the query better — more of the query's IDF-weighted
terms in its own text (not its context) and a closer best-sentence vector — the higher
one is capped just below it. The cap is the
``context`` score term (≤ 0), so the decomposition still adds up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .types import Candidate

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.bm25 import Bm25Index

    from .pool import Pool

MARGIN = 1e-4


def idf_weights(bm25: Bm25Index, terms: Sequence[str]) -> dict[str, float]:
    """BM25's idf of each query term over the memories' own text (``body``)."""
    searcher = bm25.searcher
    n = max(1, searcher.num_docs)
    out = {}
    for t in terms:
        df = searcher.doc_freq("body", t)
        out[t] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    return out


def cap_neighbours(pool: Pool, cands: Sequence[Candidate], idf: dict[str, float], window: int) -> int:
    """Cap memories that outrank an episode neighbour whose own text matches better; returns how many."""
    snap = pool.snap
    by_episode: dict[int, list[Candidate]] = {}
    for c in cands:
        ep = int(snap.episode[c.row])
        if ep >= 0:
            by_episode.setdefault(ep, []).append(c)
    own: dict[int, float] = {}

    def strength(c: Candidate) -> float:
        if c.row not in own:
            toks = pool.tokens(c.row)
            own[c.row] = sum(w for t, w in idf.items() if t in toks)
        return own[c.row]

    capped = 0
    for group in by_episode.values():
        if len(group) < 2:
            continue
        pool.load(c.row for c in group)
        for a in group:
            cap = math.inf
            for b in group:
                if b is a or abs(int(snap.position[a.row]) - int(snap.position[b.row])) > window:
                    continue
                # b's own text matches better on both sides: more of the query's (idf-weighted) words,
                # and a closer sentence vector. Either alone misfires on question/answer pairs.
                if b.terms.final < a.terms.final and strength(b) > strength(a) and b.chunk_cosine > a.chunk_cosine:
                    cap = min(cap, b.terms.final - MARGIN)
            if cap < a.terms.final:
                a.terms.context -= a.terms.final - cap
                capped += 1
    return capped
