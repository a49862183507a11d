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

from .clock import RecallClock, resolve_clock
from .pipeline import RecallOptions, check_query, run_recall
from .pool import ACTIVE
from .types import Candidate, RecallHit, RecallResult, ScoreTerms, StageCount, TierReport

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
