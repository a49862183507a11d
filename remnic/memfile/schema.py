"""The memory file's vocabulary: categories and their folders, statuses, tiers, key order, id rules.

Pure constants and two tier functions; every other memfile module builds on these.
"""

from __future__ import annotations

import re

CATEGORIES: tuple[str, ...] = (
    "fact",
    "preference",
    "correction",
    "entity",
    "decision",
    "relationship",
    "principle",
    "commitment",
    "moment",
    "skill",
    "rule",
    "procedure",
    "reasoning_trace",
)
CATEGORY_DIRS: dict[str, str] = {
    "fact": "facts",
    "preference": "preferences",
    "correction": "corrections",
    "entity": "entities",
    "decision": "decisions",
    "relationship": "relationships",
    "principle": "principles",
    "commitment": "commitments",
    "moment": "moments",
    "skill": "skills",
    "rule": "rules",
    "procedure": "procedures",
    "reasoning_trace": "reasoning-traces",
}
DIR_CATEGORIES: dict[str, str] = {v: k for k, v in CATEGORY_DIRS.items()}
STATUSES: tuple[str, ...] = (
    "active",
    "pending_review",
    "rejected",
    "quarantined",
    "superseded",
    "archived",
    "forgotten",
)
CONFIDENCE_TIERS: tuple[tuple[float, str], ...] = (
    (0.95, "explicit"),
    (0.70, "implied"),
    (0.40, "inferred"),
    (0.0, "speculative"),
)
IMPORTANCE_LEVELS: tuple[tuple[float, str], ...] = (
    (0.90, "critical"),
    (0.70, "high"),
    (0.40, "normal"),
    (0.20, "low"),
    (0.0, "trivial"),
)
DEFAULT_NAMESPACE = "default"
NAMESPACES_DIR = "namespaces"

# Known keys in the order they are written; unknown keys follow in their own order.
KEY_ORDER: tuple[str, ...] = (
    "id",
    "category",
    "created",
    "updated",
    "source",
    "confidence",
    "confidenceTier",
    "tags",
    "status",
    "importanceScore",
    "importanceLevel",
    "supersedes",
    "supersededBy",
    "supersededAt",
    "validAt",
    "invalidAt",
    "entityRef",
    "links",
    "episodeId",
    "sourceTurnId",
    "contentHash",
    "reinforcement_count",
    "forgottenAt",
    "forgottenReason",
)

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
TAG_RE = re.compile(r"^[^\s,][^,\n]{0,63}$")
TAG_RULE = "a tag is up to 64 characters with no comma or newline; a comma separates two tags"
"""TAG_RE in words: every write (store, update, import as a new memory) refuses a tag that breaks it,
and ``remnic doctor`` names a file that holds one (kept as written: a file's values are the user's)."""


def confidence_tier(confidence: float) -> str:
    for floor, name in CONFIDENCE_TIERS:
        if confidence >= floor:
            return name
    return "speculative"


def importance_level(score: float) -> str:
    for floor, name in IMPORTANCE_LEVELS:
        if score >= floor:
            return name
    return "trivial"
