"""Hybrid recall as explicit stages, each recorded as it runs.

candidates (BM25 ∪ vectors, raw scores and ranks kept; the query's dates as
terms) → filter ladder (namespace-scope, category-scope, date-scope, tag-match,
as-of, status-active, trust-zone, confidence-floor, similarity-floor,
token-overlap) → scoring (a plain
sum of named terms) → episode expansion → neighbour cap → optional cross-encoder
rerank → tiers (review-context, direct-answer, procedural, graph, recent-scan) →
MMR → result limit → budget fit (long hits trimmed to their best passages).

``run_recall`` (in :mod:`.pipeline`) is the entry point; the service's
``Memory.recall`` wraps it, falls back to :mod:`.fallback` when the index
cannot be used, and turns the result into an X-ray with :mod:`.snapshot`
when asked. The result keeps every candidate's terms and verdicts and every
stage's counts, so an X-ray is composed from it without retrieving again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from remnic.lazy import lazy_exports

if TYPE_CHECKING:
    from .clock import RecallClock, resolve_clock
    from .pipeline import RecallOptions, check_query, run_recall
    from .pool import ACTIVE
    from .types import Candidate, RecallHit, RecallResult, ScoreTerms, StageCount, TierReport

# Loaded on first use: importing one light submodule (``remnic.recall.citations``) must not load the whole
# pipeline, the index and numpy into every command's start-up.
_WHERE = {
    "RecallClock": "clock",
    "resolve_clock": "clock",
    "RecallOptions": "pipeline",
    "check_query": "pipeline",
    "run_recall": "pipeline",
    "ACTIVE": "pool",
    **dict.fromkeys(("Candidate", "RecallHit", "RecallResult", "ScoreTerms", "StageCount", "TierReport"), "types"),
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())


__all__ = [
    "ACTIVE",
    "Candidate",
    "RecallClock",
    "RecallHit",
    "RecallOptions",
    "RecallResult",
    "ScoreTerms",
    "StageCount",
    "TierReport",
    "check_query",
    "resolve_clock",
    "run_recall",
]
