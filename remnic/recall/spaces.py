"""One recall over several memory spaces: the active space's result and each read-only space's, merged (pure).

Each space recalls with its own index and ladder; their hits are ranked together by
score (the active space first on a tie), cut to the recall's result limit and its
character budget, and each hit names its space (``space`` in the hit and in its X-ray
provenance). A memory two spaces hold (clones of one remote) is listed once: the active
space's copy, else the first space's. The filter trace stays the active space's own: the other spaces' counts
are in ``index["spaces"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .types import RecallResult


def merge_space_results(
    primary: RecallResult, own: str | None, others: Sequence[tuple[str, RecallResult]]
) -> RecallResult:
    """``primary`` with the other spaces' hits merged in (changed in place and returned)."""
    for hit in primary.hits:
        hit.space = own
    if not others:
        if own is not None:
            primary.spaces = [own]
        return primary
    combined = list(primary.hits)
    seen = {hit.id for hit in primary.hits}
    repeated: dict[str, int] = {}
    for name, result in others:
        for hit in result.hits:
            if hit.id in seen:  # a clone of the same remote holds it too: one copy, the active space's first
                repeated[name] = repeated.get(name, 0) + 1
                continue
            seen.add(hit.id)
            hit.space = name
            combined.append(hit)
        primary.candidates.extend(result.candidates)
    order = {id(h): i for i, h in enumerate(combined)}
    combined.sort(key=lambda h: (-h.score, order[id(h)]))
    limit = primary.result_limit or len(combined)
    kept = combined[:limit]
    if primary.budget_chars:
        while kept and sum(len(h.content) for h in kept) > primary.budget_chars and len(kept) > 1:
            kept.pop()
    for rank, hit in enumerate(kept, start=1):
        hit.rank = rank
    primary.hits = kept
    primary.budget_used = sum(len(h.content) for h in kept)
    primary.spaces = [own or "(this repository)", *(name for name, _ in others)]
    primary.index = {
        **primary.index,
        "spaces": {
            name: {
                "hits": len(result.hits),
                "index": result.index.get("action"),
                "sameIdAsEarlier": repeated.get(name, 0),
            }
            for name, result in others
        },
    }
    return primary
