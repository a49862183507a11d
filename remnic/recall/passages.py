"""A long memory's best passages for one query (pure apart from the analyzer).

Long memories are indexed as passages (:func:`remnic.index.text.passages_for`), each
embedded through its sentence groups. For a hit, every passage is scored by its best
chunk's cosine to the query plus the fraction of the query's terms its text holds;
the best ones are what the X-ray shows as the matched passage and what the budget
keeps when the whole memory does not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PassageMatch:
    start: int
    end: int
    heading: str
    score: float
    cosine: float
    overlap: float
    bm25: bool = False
    """The passage whose BM25 score brought the memory in (see :mod:`.candidates`)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "start": self.start,
            "end": self.end,
            "heading": self.heading,
            "score": round(self.score, 6),
            "cosine": round(self.cosine, 6),
            "overlap": round(self.overlap, 6),
        }
        if self.bm25:
            out["bm25"] = True
        return out

    def describe(self, content: str, what: str = "best passage") -> str:
        where = f"§{self.heading} " if self.heading else ""
        line = content.count("\n", 0, self.start) + 1
        last = content.count("\n", 0, self.end) + 1
        return f"{what} {where}(lines {line}-{last} of the body, chars {self.start}-{self.end})"


def describe_matches(matches: Sequence[PassageMatch], content: str) -> str:
    """The retrieval reason's words for a hit's passages: the best one, and the one BM25 matched."""
    best = matches[0]
    if best.bm25:
        return best.describe(content) + ", matched by bm25"
    by_bm25 = next((m for m in matches if m.bm25), None)
    text = best.describe(content)
    return text if by_bm25 is None else f"{text}; {by_bm25.describe(content, 'bm25 matched passage')}"


def rank_passages(
    content: str,
    passage_map: Mapping[str, Any],
    chunk_sims: np.ndarray,
    terms: Sequence[str],
    analyze: Callable[[str], list[str]],
    bm25_passage: int | None = None,
) -> list[PassageMatch]:
    """The memory's passages, best first (empty when it has fewer than two); ``bm25_passage`` is marked."""
    spans = passage_map.get("p") or []
    owners = passage_map.get("c") or []
    if len(spans) < 2:
        return []
    best = np.full(len(spans), -1.0)
    for sim, p in zip(chunk_sims.tolist(), owners):
        if 0 <= p < len(spans) and sim > best[p]:
            best[p] = sim
    wanted = set(terms)
    out = []
    for i, (start, end, heading) in enumerate(spans):
        toks = set(analyze(content[start:end])) if wanted else set()
        overlap = len(wanted & toks) / len(wanted) if wanted else 0.0
        cos = float(best[i])
        out.append(
            PassageMatch(int(start), int(end), str(heading or ""), cos + overlap, cos, overlap, i == bm25_passage)
        )
    out.sort(key=lambda m: (-m.score, m.start))
    return out
