"""The query's aspect: what it asks about a name most memories share.

A small sentence-embedding model's vector of a short question is dominated by the
proper names in it ("What are Nate's favorite desserts?"), and in a store where
most memories name the same people — a conversation between two speakers, one
person's journal — those names tell memories apart least. So a query naming a
name that at least ``queryAspectNameRatio`` of the indexed memories contain is
embedded twice, batched: as written and without those names (its *aspect*:
"What are favorite desserts?"). The query vector is the weighted mean of the
two, so a memory's similarity is the mean of its similarities to both for a
single-chunk memory. Rare names ("Whispering Falls", "Valorant") stay in the
aspect: they are what the question is about.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[^\W\d_]+(?:['’][sS])?")
_SENTENCE_END = ".?!:;\"“”'‘’(\n"


@dataclass(frozen=True)
class Aspect:
    """The aspect query of one recall: the text embedded beside the query, and the names it leaves out."""

    text: str
    names: tuple[str, ...]
    shares: tuple[float, ...]
    """Share of the indexed memories containing each name."""

    def describe(self, weight: float) -> str:
        named = ", ".join(f"{n} (in {round(100 * s)}% of memories)" for n, s in zip(self.names, self.shares))
        return f"query aspect {self.text!r} without {named}, weight {weight:g}"


def proper_names(text: str) -> list[str]:
    """Capitalised words that do not open a sentence, without a possessive ’s, in order, unique."""
    out: dict[str, None] = {}
    for m in _WORD.finditer(text):
        word = m.group(0)
        if not word[0].isupper() or len(word) < 2:
            continue
        before = text[: m.start()].rstrip()
        if not before or before[-1] in _SENTENCE_END:
            continue  # the first word of a sentence is capitalised whatever it is
        out[re.sub(r"['’][sS]$", "", word)] = None
    return list(out)


def without_names(text: str, names: Sequence[str]) -> str:
    """``text`` with every occurrence of ``names`` (and their possessive) removed, spaces tidied."""
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}(?:['’][sS])?\b", "", text)
    text = re.sub(r"\s+([,.?!;:])", r"\1", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def aspect_of(
    text: str,
    share: Callable[[str], float],
    min_share: float,
    has_terms: Callable[[str], bool],
) -> Aspect | None:
    """The aspect of a query, or None: no name in it is common enough, or nothing would be left.

    ``share(name)`` is the share of the indexed memories containing the name; ``has_terms(text)``
    says whether a text still has a searchable term.
    """
    common: list[tuple[str, float]] = []
    for name in proper_names(text):
        s = share(name)
        if s >= min_share:
            common.append((name, s))
    if not common:
        return None
    rest = without_names(text, [n for n, _ in common])
    if not rest or not has_terms(rest):
        return None
    return Aspect(rest, tuple(n for n, _ in common), tuple(s for _, s in common))
