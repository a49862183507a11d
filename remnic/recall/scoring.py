"""Stage 3: fusion and the additive score terms (pure functions of raw signals).

Two fusions, both expressed as per-memory terms so the final score stays a sum:

- ``score`` (default): vector = w_v × (cos − lo) / (hi − lo) over the vector
  candidates (clipped at 0), bm25 = w_b × bm25 / best bm25. Measured best on
  LoCoMo (see docs/retrieval.md): it keeps how *much* better the top hit is.
- ``rrf``: each term = w × (k + 1) / (k + rank), scaled so rank 1 gives w.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from remnic.memfile.model import parse_time

from .types import Candidate


@dataclass(frozen=True)
class Norms:
    """Normalisers of one recall, computed over the candidates the gates admitted on their own."""

    cos_hi: float
    cos_lo: float
    bm25_hi: float


def norms_for(candidates: Sequence[Candidate]) -> Norms:
    vec = [c.cosine for c in candidates if c.vector_rank is not None]
    bm = [c.bm25 for c in candidates if c.bm25 is not None]
    hi = max(vec) if vec else 1.0
    lo = min(vec) if len(vec) > 1 else hi - 1.0
    return Norms(hi, lo, max(bm) if bm else 0.0)


def vector_term(cos: float, norms: Norms, weight: float) -> float:
    span = norms.cos_hi - norms.cos_lo
    if span <= 1e-9:
        return weight if cos >= norms.cos_hi else 0.0
    return weight * min(1.0, max(0.0, (cos - norms.cos_lo) / span))


def bm25_term(score: float | None, norms: Norms, weight: float) -> float:
    """``weight × score / best``, capped at ``weight``: a candidate a tier kept (review context) is not
    among the normalisers, and its raw score may be above their best. For those that are, the cap is
    never reached, so their terms are exactly the uncapped ones."""
    if score is None:
        return 0.0
    if norms.bm25_hi <= 0:  # only candidates outside the normalisers matched: each is the best match
        return weight if score > 0 else 0.0
    return weight * min(1.0, score / norms.bm25_hi)


def rrf_term(rank: int | None, k: int, weight: float) -> float:
    return 0.0 if rank is None else weight * (k + 1) / (k + rank)


def recency_term(updated_ts: float, now_ts: float, half_life_days: float, weight: float) -> float:
    if weight == 0 or not math.isfinite(updated_ts) or half_life_days <= 0:
        return 0.0
    age_days = max(0.0, (now_ts - updated_ts) / 86400.0)
    return weight * 0.5 ** (age_days / half_life_days)


def said_ts(fm: Mapping[str, Any], updated_ts: float) -> float:
    """When a memory's fact was said — its ``validAt``, else its ``observedAt`` — else ``updated_ts``:
    a history observed in one go was written the same minute, but said months apart, and the later
    statement is the fresher one."""
    for key in ("validAt", "observedAt"):
        ts = parse_time(fm.get(key))
        if ts is not None:
            return ts
    return updated_ts


def importance_term(importance: float, weight: float) -> float:
    return weight * min(1.0, max(0.0, importance))
