"""Neighbours must not outrank the turn they give context to.

A short episode memory is indexed with its neighbours' text (BM25 fields ``near``/``far``
and a context vector), so "Amazing, congratulations!" is findable by what it congratulates.
The price: a neighbour can outrank the very turn whose words it borrowed. After scoring,
for two memories of one episode within ``neighborWindow`` positions of each other, when
the lower one's *own* text matches the query better — more of the query's IDF-weighted
terms in its own text (not its context) and a closer best-sentence vector — the higher
one is capped just below it. The cap is the
``context`` score term (≤ 0), so the decomposition still adds up.

A question turn borrows nothing but still matches a question best — it repeats the
question's words — while the facts are in the turn that answers it. So in an episode a
memory whose text ends with a question lends its score to the reply after it (the
``propagation`` term) and is lowered by ``questionPenalty`` (the ``context`` term).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
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


def cap_neighbours(
    pool: Pool, cands: Sequence[Candidate], idf: dict[str, float], window: int, replies: Mapping[int, int] | None = None
) -> int:
    """Cap memories that outrank an episode neighbour whose own text matches better; returns how many.

    ``replies`` (reply row → question row, from :func:`lend_to_replies`): a reply is never capped below
    the question that lent it its score."""
    replies = replies or {}
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
        # Caps chain (a capped memory can cap the next), so the order must not depend on how the
        # candidates arrived: near-equal vector scores arrive in either order from run to run.
        group.sort(key=lambda c: c.row)
        pool.load(c.row for c in group)
        for a in group:
            cap = math.inf
            for b in group:
                if b is a or abs(int(snap.position[a.row]) - int(snap.position[b.row])) > window:
                    continue
                if replies.get(a.row) == b.row:
                    continue
                # b scores lower (a tie is not lower: see rank_key) yet its own text matches better on both
                # sides: more of the query's (idf-weighted) words, and a closer sentence vector. Either
                # alone misfires on question/answer pairs.
                if b.rank_key[0] > a.rank_key[0] and strength(b) > strength(a) and b.chunk_cosine > a.chunk_cosine:
                    cap = min(cap, b.terms.final - MARGIN)
            if cap < a.terms.final:
                a.terms.context -= a.terms.final - cap
                capped += 1
    return capped


_TRAILING_NOTE = re.compile(r"\s*(?:\[[^\]]*\]|\([^)]*\))\s*$")


def asks(text: str) -> bool:
    """The memory's text ends with a question (ignoring a trailing [note] or (aside))."""
    return _TRAILING_NOTE.sub("", text.strip()).rstrip().endswith("?")


def lend_to_replies(pool: Pool, cands: Sequence[Candidate], penalty: float, alpha: float) -> dict[int, int]:
    """In an episode a question's answer is the turn after it: lift that reply to ``alpha`` × the
    question's own score (the ``propagation`` term, entering it into the pool if need be) and lower
    the question by ``penalty`` (the ``context`` term). Returns reply row → question row."""
    snap = pool.snap
    turns = [c for c in cands if snap.episode[c.row] >= 0]
    pool.load(c.row for c in turns)
    lent: dict[int, int] = {}
    for q in turns:
        if not asks(pool.content(q.row)):
            continue
        q.terms.context -= penalty
        if alpha <= 0:
            continue
        rows = snap.episode_rows(q.row)
        i = rows.index(q.row) if q.row in rows else len(rows)
        if i + 1 >= len(rows):
            continue
        reply = pool.by_row.get(rows[i + 1])
        if reply is None:
            reply = pool.make(rows[i + 1], "episode")
            if reply is None:
                continue  # out of scope or filtered
            reply.sibling_of = q.id
        if not reply.alive:
            continue
        lent.setdefault(reply.row, q.row)
        lift = alpha * q.terms.base - reply.terms.base
        if lift > reply.terms.propagation:
            reply.terms.propagation = lift
            if reply.sibling_of is None:
                reply.sibling_of = q.id
    return lent
