"""Stage 7: fit the ranked hits into a character budget (pure)."""

from __future__ import annotations

from collections.abc import Sequence


def fit_budget(lengths: Sequence[int], budget: int) -> tuple[list[int], int]:
    """Greedy fill in rank order: a hit that does not fit is skipped, smaller later ones may still fit.

    Returns (kept indices, characters used); ``budget`` 0 means no limit.
    """
    if budget <= 0:
        return list(range(len(lengths))), sum(lengths)
    kept, used = [], 0
    for i, n in enumerate(lengths):
        if used + n <= budget:
            kept.append(i)
            used += n
    return kept, used
