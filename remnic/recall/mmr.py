"""Stage 5: maximal marginal relevance over the best-scored pool (pure)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def mmr_order(scores: Sequence[float], vectors: np.ndarray, lam: float, k: int) -> tuple[list[int], list[float]]:
    """Greedy MMR: pick argmax(score − (1 − λ) × max cosine to the already picked).

    Returns (picked indices in order, the penalty each paid). λ = 1 is pure
    relevance and costs nothing.
    """
    n = len(scores)
    k = min(k, n)
    if lam >= 1.0 or n == 0:
        order = sorted(range(n), key=lambda i: -scores[i])[:k]
        return order, [0.0] * len(order)
    weight = 1.0 - lam
    base = np.asarray(scores, dtype=np.float64)
    max_sim = np.zeros(n, dtype=np.float64)
    taken = np.zeros(n, dtype=bool)
    picked: list[int] = []
    penalties: list[float] = []
    for _ in range(k):
        value = np.where(taken, -np.inf, base - weight * max_sim)
        i = int(np.argmax(value))
        picked.append(i)
        penalties.append(float(weight * max_sim[i]))
        taken[i] = True
        sims = vectors @ vectors[i]
        np.maximum(max_sim, np.clip(sims, 0.0, None), out=max_sim)
    return picked, penalties
