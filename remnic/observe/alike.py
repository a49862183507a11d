"""Whether two near-identical sentences still say different things: another number, or one denies
what the other says. Embeddings and shared words cannot tell "port 8080" from "port 8081", or
"prefers tabs" from "does not prefer tabs"; these rules can, so such a pair is never one memory."""

from __future__ import annotations

import re

NUMBER_RE = re.compile(r"\d+(?:[.:,]\d+)*")
_NEGATION_RE = re.compile(
    r"\b(not|no|never|none|nobody|nothing|neither|nor|without|cannot|no longer|any more|anymore)\b|n['’]t\b",
    re.IGNORECASE,
)


def numbers(text: str) -> set[str]:
    return set(NUMBER_RE.findall(text))


def negated(text: str) -> bool:
    """Whether the sentence denies something (an odd number of negations: "not unlike" is not one)."""
    return len(_NEGATION_RE.findall(text)) % 2 == 1


def differs_concretely(a: str, b: str) -> bool:
    """Another number, or one of the two denies what the other says."""
    return numbers(a) != numbers(b) or negated(a) != negated(b)


def denies(a: str, b: str) -> bool:
    """One says what the other says and denies it: the same numbers, one negation more."""
    return numbers(a) == numbers(b) and negated(a) != negated(b)


RESTATED_CATEGORIES = frozenset(
    {
        "fact",
        "preference",
        "decision",
        "principle",
        "rule",
        "commitment",
        "correction",
        "relationship",
        "entity",
        "skill",
    }
)
"""Categories that say how things are: said again with another number or denied, the later statement
supersedes the earlier. A moment ("I ran 5 km today") is one more event, kept beside the other."""
