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


_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
"""Unicode's ``Default_Ignorable_Code_Point`` ranges (DerivedCoreProperties.txt): drawn as nothing, so an id
holding one looks exactly like the id without it (``pay\\u3164pal``, ``payp\\ufe0fal``). Python's
``unicodedata`` does not carry the property."""


def invisible(ch: str) -> bool:
    """Whether ``ch`` is a default-ignorable code point (a filler, joiner, variation selector, tag…)."""
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _IGNORABLE)


def nfc_id(text: str) -> str:
    """An id in Unicode NFC: how every id is compared, so ``café-1`` typed precomposed and the decomposed
    ``cafe\\u0301-1`` (a macOS file name) name one memory. Files keep their names and text as written."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


class IdRule:
    """What an id may be: up to 128 characters, an ASCII letter or digit first, then letters, marks and
    numbers of any script (the original names an entity page ``person-josé-núñez.md``, keeping
    ``\\p{L}\\p{M}\\p{N}``) and ``.``, ``_``, ``:``, ``-``. So an id never holds ``/``, ``\\``, a space or a
    control character, never opens with ``-`` or ``.``, and one with letters beyond ASCII never holds
    ``..``, an invisible (default-ignorable) character, or a mark that does not follow a letter, digit
    or mark it combines with. Ids are compared in NFC (:func:`nfc_id`). ``match`` is the rule; ``pattern``
    (advertised as the JSON Schema ``pattern``, in Python's and ECMAScript's dialects alike) admits every id."""

    pattern = r"^[A-Za-z0-9](?:[\w.:-]|[^\x00-\x7f\s]){0,127}$"
    rule = (
        "up to 128 characters: an ASCII letter or digit, then letters, marks and digits of any script, '.', '_',"
        " ':', '-'; no '/', no '..' beside a non-ASCII letter, no invisible characters"
    )
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
        previous = ""
        for ch in text:
            kind = "." if ch in "._:-" else unicodedata.category(ch)[0]
            if kind not in "LMN." or invisible(ch) or (kind == "M" and previous not in "LMN"):
                return False
            previous = kind
        return True


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
