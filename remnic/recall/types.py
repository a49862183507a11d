"""Plain records of one recall: candidates, score terms, stage counts, hits, the result.

Everything an X-ray needs is kept here as it is computed, so explaining a
recall never re-runs retrieval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

# Order in which terms are summed and shown; ``final`` is their plain sum.
TERM_NAMES = ("vector", "bm25", "importance", "recency", "status", "propagation", "mmr_penalty")


@dataclass
class ScoreTerms:
    """Named additive terms: ``final = vector + bm25 + importance + recency + status + propagation - mmr_penalty``."""

    vector: float = 0.0
    bm25: float = 0.0
    importance: float = 0.0
    recency: float = 0.0
    status: float = 0.0
    propagation: float = 0.0
    mmr_penalty: float = 0.0

    @property
    def base(self) -> float:
        """Everything except episode propagation and the MMR penalty."""
        return self.vector + self.bm25 + self.importance + self.recency + self.status

    @property
    def final(self) -> float:
        return self.base + self.propagation - self.mmr_penalty

    def to_dict(self) -> dict[str, float]:
        out = {"final": _r(self.final)}
        for name in TERM_NAMES:
            key = "mmrPenalty" if name == "mmr_penalty" else name
            out[key] = _r(getattr(self, name))
        return out


def _r(x: float) -> float:
    return round(float(x), 6) if math.isfinite(x) else 0.0


@dataclass
class Candidate:
    """One memory considered by a recall, with the raw signal that brought it in."""

    row: int
    path: str
    id: str
    cosine: float
    """Raw vector similarity: best chunk + context_weight × context passage."""
    chunk_cosine: float
    context_cosine: float
    vector_rank: int | None = None
    """1-based rank among the vector retriever's candidates (None: not retrieved by vectors)."""
    bm25: float | None = None
    """Raw tantivy BM25 score (None: not retrieved by BM25)."""
    bm25_rank: int | None = None
    sibling_of: str | None = None
    """Set when the memory entered through episode expansion (the seed's id)."""
    terms: ScoreTerms = field(default_factory=ScoreTerms)
    admitted_by: list[str] = field(default_factory=list)
    rejected_by: str | None = None

    @property
    def source(self) -> str:
        if self.sibling_of is not None and self.vector_rank is None and self.bm25_rank is None:
            return "sibling"
        if self.vector_rank is not None and self.bm25_rank is not None:
            return "both"
        return "vector" if self.vector_rank is not None else ("bm25" if self.bm25_rank is not None else "sibling")

    def signals(self) -> dict[str, Any]:
        return {"cosine": _r(self.cosine), "chunkCosine": _r(self.chunk_cosine), "contextCosine": _r(self.context_cosine),
                "vectorRank": self.vector_rank, "bm25": None if self.bm25 is None else _r(self.bm25),
                "bm25Rank": self.bm25_rank, "source": self.source, "siblingOf": self.sibling_of}


@dataclass
class StageCount:
    """One gate of the pipeline: how many it saw and how many it let through."""

    name: str
    considered: int
    admitted: int
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "considered": self.considered, "admitted": self.admitted}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class RecallHit:
    id: str
    path: str
    score: float
    content: str
    frontmatter: dict[str, Any]
    namespace: str
    category: str
    status: str
    rank: int
    terms: ScoreTerms
    signals: dict[str, Any]
    admitted_by: list[str]

    @property
    def source_turn_id(self) -> str | None:
        value = self.frontmatter.get("sourceTurnId")
        return None if value is None else str(value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "path": self.path, "score": _r(self.score), "rank": self.rank,
            "namespace": self.namespace, "category": self.category, "status": self.status,
            "content": self.content, "frontmatter": self.frontmatter,
            "scoreDecomposition": self.terms.to_dict(), "signals": self.signals, "admittedBy": self.admitted_by,
        }


@dataclass
class RecallResult:
    query: str
    hits: list[RecallHit]
    stages: list[StageCount]
    terms: list[str]
    """The analysed BM25 query terms."""
    namespace: str | None
    budget_chars: int
    budget_used: int
    timings_ms: dict[str, float]
    index: dict[str, Any] = field(default_factory=dict)
    """What the freshness check did before this recall (action, reason, …)."""
    candidates: list[Candidate] = field(default_factory=list)
    """Every candidate that was scored, hits included (for explanation)."""

    def __iter__(self):  # noqa: ANN204 - iterate hits like a list
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def to_dict(self, *, with_candidates: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query, "namespace": self.namespace, "count": len(self.hits),
            "hits": [h.to_dict() for h in self.hits],
            "filters": [s.to_dict() for s in self.stages], "queryTerms": self.terms,
            "budget": {"chars": self.budget_chars, "used": self.budget_used},
            "timingsMs": {k: round(v, 3) for k, v in self.timings_ms.items()}, "index": self.index,
        }
        if with_candidates:
            out["candidates"] = [{"id": c.id, "path": c.path, "terms": c.terms.to_dict(), "signals": c.signals(),
                                  "admittedBy": c.admitted_by, "rejectedBy": c.rejected_by} for c in self.candidates]
        return out
