"""One recall over several memory spaces: the active space's result and each read-only space's, merged (pure).

Each space recalls with its own index and ladder; their hits are ranked together by
score (the active space first on a tie), cut to the recall's result limit and its
character budget, and each hit names its space (``space`` in the hit and in its X-ray
provenance). A memory two spaces hold (clones of one remote) is listed once: the active
space's copy, else the first space's. The filter trace stays the active space's own: the other spaces' counts
are in ``index["spaces"]``.

A space's scores are relative to its own best candidate (min-max and score / best fusion), so
before the merge each space's scores are put on one scale (:func:`space_scales`): a space whose
best match is weak next to the others' does not bring it in at the top.
"""

from __future__ import annotations

from collections.abc import Sequence

from .types import TERM_NAMES, RecallHit, RecallResult, ScoreTerms


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
    seen = {hit.id for hit in primary.hits}
    repeated: dict[str, int] = {}
    brought: list[list[RecallHit]] = [list(primary.hits)]
    for name, result in others:
        mine = []
        for hit in result.hits:
            if hit.id in seen:  # a clone of the same remote holds it too: one copy, the active space's first
                repeated[name] = repeated.get(name, 0) + 1
                continue
            seen.add(hit.id)
            hit.space = name
            mine.append(hit)
        brought.append(mine)
    scales = space_scales(brought)
    for result, hits, scale in zip([primary, *(r for _, r in others)], brought, scales, strict=True):
        _rescale(result, hits, scale)
    combined = [hit for hits in brought for hit in hits]
    for _, result in others:
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
                "scale": round(scale, 6),
            }
            for (name, result), scale in zip(others, scales[1:], strict=True)
        },
    }
    return primary


def space_scales(spaces: Sequence[Sequence[RecallHit]]) -> list[float]:
    """The factor each space's scores are multiplied by before the merge, one per space (1 = unchanged).

    Within a space the vector term is min-max over its candidates and the BM25 term score / its
    best, so the best hit of a space scores near ``weightVector + weightBm25`` however weak it is.
    A space's factor is the share of its best hit's relevance (its largest ``vector`` and ``bm25``
    terms) left when each raw signal is read against the best of all the spaces' hits instead of
    its own: ``(V × cos / bestCos + B × bm25 / bestBm25) / (V + B)``, with cos its best raw cosine
    and bm25 its best raw BM25 score. The space holding both bests keeps its scores; a space with
    nothing to compare (no raw signals: a file scan) keeps its own.
    """
    bests = [(_best(hits, "cosine"), _best(hits, "bm25")) for hits in spaces]
    top_cos = max((c for c, _ in bests if c is not None), default=0.0)
    top_bm25 = max((b for _, b in bests if b is not None), default=0.0)
    out = []
    for hits, (cos, bm25) in zip(spaces, bests, strict=True):
        v = max((h.terms.vector for h in hits), default=0.0)
        b = max((h.terms.bm25 for h in hits), default=0.0)
        share = 0.0
        if cos is not None and top_cos > 0:
            share += v * (cos / top_cos)
        else:
            share += v  # no cosine to compare (vectors pending, or none is positive): as it is
        if bm25 is not None and top_bm25 > 0:
            share += b * (bm25 / top_bm25)
        else:
            share += b
        out.append(share / (v + b) if v + b > 0 else 1.0)
    return out


def _best(hits: Sequence[RecallHit], signal: str) -> float | None:
    """The best raw ``signal`` among ``hits`` (a cosine below 0 counts as 0); None when none has it."""
    values = [float(v) for h in hits if (v := h.signals.get(signal)) is not None]
    return max(0.0, max(values)) if values else None


def _rescale(result: RecallResult, hits: Sequence[RecallHit], scale: float) -> None:
    """Every score term of the space's hits and candidates × ``scale``, so each decomposition still sums
    to its score and the space's own order is kept; each hit's retrieval reason says so."""
    if scale == 1.0:
        return
    terms: dict[int, ScoreTerms] = {id(t): t for t in [*(h.terms for h in hits), *(c.terms for c in result.candidates)]}
    for t in terms.values():
        for name in TERM_NAMES:
            setattr(t, name, getattr(t, name) * scale)
    note = f"space scale ×{scale:.3f} (its best match against all the spaces' best)"
    for hit in hits:
        hit.score = hit.terms.final
        hit.tier_note = f"{hit.tier_note}; {note}" if hit.tier_note else note
