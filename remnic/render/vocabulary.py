"""The Recall X-ray schema's vocabulary: value sets, key orders, and the absent marker (standard library).

Shared by the snapshot types (:mod:`.snapshot`), the renderer and remnic's capture, so a
value set is spelt in one place.
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = "1"

SERVED_BY_TIERS: tuple[str, ...] = (
    "direct-answer",
    "hybrid",
    "graph",
    "recent-scan",
    "procedural",
    "review-context",
    "lcm-file-parts",
    "lcm-tool-parts",
)
RETRIEVAL_TIERS: tuple[str, ...] = ("exact-cache", "fuzzy-cache", "direct-answer", "hybrid", "rerank-graph", "agentic")
"""The original's ``tierExplain.tier`` values; remnic's tier explain names the served-by tier that led."""
CORRECTION_STATES: tuple[str, ...] = ("none", "correction", "superseded", "disputed", "forgotten")
SAFETY_LEVELS: tuple[str, ...] = ("safe", "requires-review", "blocked")
STATE_VIEWS: tuple[str, ...] = ("current", "historical", "transition")
DISCLOSURES: tuple[str, ...] = ("chunk", "section", "raw")
SOURCE_SPAN_PROVENANCE: tuple[str, ...] = ("verified", "unverified", "none")

# (python attribute, JSON key) of the optional score terms, in serialisation and rendering
# order: the original's terms first, then remnic's own. ``final`` always comes first.
SCORE_TERMS: tuple[tuple[str, str], ...] = (
    ("vector", "vector"),
    ("bm25", "bm25"),
    ("importance", "importance"),
    ("mmr_penalty", "mmrPenalty"),
    ("tier_prior", "tierPrior"),
    ("reinforcement_boost", "reinforcementBoost"),
    ("recency", "recency"),
    ("status", "status"),
    ("propagation", "propagation"),
    ("date", "date"),
    ("context", "context"),
    ("rerank", "rerank"),
    ("project_boost", "projectBoost"),
)
RAW_SCORE_TERMS: tuple[str, ...] = ("vector", "bm25")
"""``rawScores`` keys: the raw cosine similarity and the raw BM25 score."""

LIFECYCLE_STATES: tuple[str, ...] = ("candidate", "validated", "active", "stale", "archived")
VERIFICATION_STATES: tuple[str, ...] = ("unverified", "user_confirmed", "system_inferred", "disputed")
POLICY_CLASSES: tuple[str, ...] = ("ephemeral", "durable", "protected")
DERIVED_VIA: tuple[str, ...] = ("split", "merge", "update", "pattern-reinforcement")


class _Absent:
    """Marks an optional member that is not there at all (as opposed to JSON ``null``)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()
