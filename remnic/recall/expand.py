"""Stage 4: episode expansion (XTrace's score propagation to siblings).

Memories that share an episode with a strong hit (``episodeId``, or the
``sourceTurnId`` prefix) and sit within ``window`` positions of it are offered
with the seed's score discounted by ``alpha``. The lift is an explicit
``propagation`` term, ``max(0, alpha × seed.base − sibling.base)``, so a
sibling's final score is max(its own, alpha × seed's) and still a plain sum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .types import Candidate, StageCount

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.vectors import Snapshot


def expand(
    snap: Snapshot,
    scored: list[Candidate],
    *,
    seeds: int,
    window: int,
    alpha: float,
    make: Callable[[int], Candidate | None],
) -> StageCount:
    """Add or lift siblings of the ``seeds`` best candidates, in place; returns the stage count."""
    by_row = {c.row: c for c in scored}
    best = sorted(scored, key=lambda c: -c.terms.base)[: max(0, seeds)]
    offered = lifted = 0
    for seed in best:
        rows = snap.episode_rows(seed.row)
        if len(rows) < 2 or seed.terms.base <= 0:
            continue
        i = rows.index(seed.row) if seed.row in rows else 0
        around = rows if window <= 0 else rows[max(0, i - window) : i + window + 1]
        target = alpha * seed.terms.base
        for r in around:
            if r == seed.row:
                continue
            c = by_row.get(r)
            if c is None:
                c = make(r)
                if c is None:
                    continue  # out of scope or filtered (e.g. not active)
                c.sibling_of = seed.id
                by_row[r] = c
                scored.append(c)
                offered += 1
            lift = max(0.0, target - c.terms.base)
            if lift > c.terms.propagation:
                c.terms.propagation = lift
                if c.sibling_of is None:
                    c.sibling_of = seed.id
                lifted += 1
    return StageCount("episode-expansion", offered, lifted, f"alpha={alpha} seeds={seeds} window={window}")
