"""The memory file's vocabulary: categories and their folders, statuses, tiers, key order, id rules.

Pure constants and two tier functions; every other memfile module builds on these.
"""

from __future__ import annotations

import re
import unicodedata

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


class IdRule:
    """What an id may be: up to 128 characters, an ASCII letter or digit first, then letters, marks and
    numbers of any script (the original names an entity page ``person-josé-núñez.md``, keeping
    ``\\p{L}\\p{M}\\p{N}``) and ``.``, ``_``, ``:``, ``-``. So an id never holds ``/``, ``\\``, a space or a
    control character, never opens with ``-`` or ``.``, and one with letters beyond ASCII never holds
    ``..``. ``match`` is the rule; ``pattern`` (advertised as the JSON Schema ``pattern``, in Python's and
    ECMAScript's dialects alike) admits every id."""

    pattern = r"^[A-Za-z0-9](?:[\w.:-]|[^\x00-\x7f\s]){0,127}$"
    rule = "an ASCII letter or digit, then letters, marks and digits of any script, '.', '_', ':', '-'; no '/' or '..'"
    """The rule in words, for messages."""
    _ascii = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
    _first = re.compile(r"[A-Za-z0-9]")

    def match(self, text: str) -> bool:
        if not isinstance(text, str):
            return False
        if self._ascii.fullmatch(text):
            return True
        if not 0 < len(text) <= 128 or ".." in text or not self._first.match(text):
            return False
        return all(ch in "._:-" or unicodedata.category(ch)[0] in "LMN" for ch in text)


ID_RE = IdRule()
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
