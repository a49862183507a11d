"""Plain records of one recall: candidates, score terms, stage counts, hits, the result.

Everything an X-ray needs is kept here as it is computed, so explaining a
recall never re-runs retrieval.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Order in which terms are summed and shown; ``final`` is their plain sum (mmr_penalty subtracted).
TERM_NAMES = (
    "vector",
    "bm25",
    "date",
    "importance",
    "recency",
    "status",
    "reinforcement",
    "project",
    "propagation",
    "tier_prior",
    "context",
    "rerank",
    "mmr_penalty",
)

# The tiers that can serve a result (the X-ray's ``servedBy``), in the order they claim a candidate.
TIERS = ("review-context", "direct-answer", "procedural", "graph", "recent-scan", "hybrid")


@dataclass
class ScoreTerms:
    """Named additive terms.

    ``final = vector + bm25 + date + importance + recency + status + reinforcement + project + propagation
    + tier_prior + context + rerank - mmr_penalty``
    """

    vector: float = 0.0
    bm25: float = 0.0
    date: float = 0.0
    """For a question asking when: ``weightStatesTime`` if the memory's text states a time (see recall.dates)."""
    importance: float = 0.0
    recency: float = 0.0
    status: float = 0.0
    """0 for an active memory, −inactivePenalty for one that is not (asked for, or shown as review context)."""
    reinforcement: float = 0.0
    """Boost from ``reinforcement_count`` (how often the memory was re-confirmed)."""
    project: float = 0.0
    """``recall.projectBoost`` for a memory of the project the recall is for (cwd, projectTag, coding context)."""
    propagation: float = 0.0
    """Episode-expansion lift: a sibling borrows a discounted share of a strong seed's score, and the
    turn after a question its score (recall.neighbours)."""
    tier_prior: float = 0.0
    """Prior added by the tier that served the memory (direct-answer, procedural, graph, recent-scan)."""
    context: float = 0.0
    """≤ 0: caps a memory below an episode neighbour whose own text matches the query better, and lowers a
    question turn by recall.questionPenalty (recall.neighbours)."""
    rerank: float = 0.0
    """The cross-encoder's adjustment (recall.rerank): ``rerankWeight × (normalised rerank score − fused share)``."""
    mmr_penalty: float = 0.0
    """MMR's diversity penalty: a positive amount, subtracted from ``final`` (the X-ray shows it positive too)."""

    @property
    def base(self) -> float:
        """The memory's own merit: everything except lifts, tier priors, the rerank and the MMR penalty."""
        return (
            self.vector
            + self.bm25
            + self.date
            + self.importance
            + self.recency
            + self.status
            + self.reinforcement
            + self.project
        )

    @property
    def final(self) -> float:
        return self.base + self.propagation + self.tier_prior + self.context + self.rerank - self.mmr_penalty

    def to_dict(self) -> dict[str, float]:
        out = {"final": _r(self.final)}
        for name in TERM_NAMES:
            out[_camel(name)] = _r(getattr(self, name))
        return out


RANK_PLACES = 9


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _r(x: float) -> float:
    return round(float(x), 6) if math.isfinite(x) else 0.0


@dataclass
class Candidate:
    """One memory considered by a recall, with the raw signal that brought it in."""

    row: int
    path: str
    id: str
    cosine: float
    """Raw vector similarity: the mean of the best chunk's and the context passage's cosines, weighted
    1 : context_weight (a memory without a context passage: its chunk cosine)."""
    chunk_cosine: float
    context_cosine: float
    has_vectors: bool = True
    """False while its vectors are pending: the cosines above are then placeholders, not similarities."""
    vector_rank: int | None = None
    """1-based rank among the vector retriever's candidates (None: not retrieved by vectors)."""
    bm25: float | None = None
    """Raw tantivy BM25 score (None: not retrieved by BM25)."""
    bm25_rank: int | None = None
    bm25_passage: int | None = None
    """The passage (its number among the memory's passages) whose BM25 score was the memory's."""
    sibling_of: str | None = None
    """Set when the memory entered through episode expansion (the seed's id)."""
    terms: ScoreTerms = field(default_factory=ScoreTerms)
    admitted_by: list[str] = field(default_factory=list)
    """Every ladder stage this candidate passed, in order."""
    rejected_by: str | None = None
    """The first stage that rejected (or would have rejected) this candidate."""
    dropped_at: str | None = None
    """The stage that removed it from the recall; None while it is still in (a tier may keep a
    candidate a gate would have rejected: then ``rejected_by`` is set and ``dropped_at`` is not)."""
    entered_by: str = "retrieval"
    """How it joined the pool: retrieval, episode, graph, procedural, recent-scan."""
    served_by: str = "hybrid"
    tier_note: str = ""
    """Why its tier served it (shown as the X-ray's retrieval reason)."""
    overlap: float | None = None
    """Fraction of the query terms found in its text (computed only where something needs it)."""
    graph_path: list[str] | None = None
    graph_edge_confidences: list[float] | None = None

    @property
    def source(self) -> str:
        if self.entered_by not in ("retrieval", "episode") and self.vector_rank is None and self.bm25_rank is None:
            return self.entered_by
        if self.sibling_of is not None and self.vector_rank is None and self.bm25_rank is None:
            return "sibling"
        if self.vector_rank is not None and self.bm25_rank is not None:
            return "both"
        return "vector" if self.vector_rank is not None else ("bm25" if self.bm25_rank is not None else "sibling")

    @property
    def alive(self) -> bool:
        return self.dropped_at is None

    @property
    def rank_key(self) -> tuple[float, str]:
        """Best first; scores equal to ``RANK_PLACES`` decimals are ties, broken by path. Memories
        scored alike (one episode's facts) differ in the last bits from run to run (summation order,
        the clock of the recency term), and a recall must not reorder them each time."""
        return (-round(self.terms.final, RANK_PLACES), self.path)

    def signals(self) -> dict[str, Any]:
        return {
            "cosine": _r(self.cosine) if self.has_vectors else None,
            "chunkCosine": _r(self.chunk_cosine) if self.has_vectors else None,
            "contextCosine": _r(self.context_cosine) if self.has_vectors else None,
            "vectorRank": self.vector_rank,
            "bm25": None if self.bm25 is None else _r(self.bm25),
            "bm25Rank": self.bm25_rank,
            "source": self.source,
            "siblingOf": self.sibling_of,
        } | ({"bm25Passage": self.bm25_passage} if self.bm25_passage is not None else {})


@dataclass
class StageCount:
    """One gate of the pipeline: how many it saw and how many it let through."""

    name: str
    considered: int
    admitted: int
    reason: str = ""

    @property
    def rejected(self) -> int:
        return self.considered - self.admitted

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "considered": self.considered, "admitted": self.admitted}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class TierReport:
    """What the tier that led the recall did: carried into the X-ray's ``tierExplain``."""

    tier: str
    reason: str
    candidates_considered: int
    latency_ms: float
    anchors: list[str] = field(default_factory=list)
    """Paths of the memories the tier served (the snapshot turns them into ``path:line-line``)."""
    vectors_pending: int = 0
    """Memories in the index whose vectors are not computed yet: BM25 alone could find them."""


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
    served_by: str = "hybrid"
    rejected_by: str | None = None
    tier_note: str = ""
    graph_path: list[str] | None = None
    graph_edge_confidences: list[float] | None = None
    judged_at: float = 0.0
    """The recall's clock (epoch s): staleness is judged at this instant."""
    as_of: float | None = None
    """The recall's ``asOf`` (epoch s): staleness and supersession are judged then instead."""
    recall_namespace: str | None = None
    passages: list[dict[str, Any]] | None = None
    """A long memory's best passages for the query (start, end, heading, score), best first."""
    trimmed: bool = False
    """``content`` is the memory's best passages (or a cut), not all of it: the budget was short."""
    content_chars: int = 0
    """Length of the memory's whole text."""
    space: str | None = None
    """The memory space this hit came from (set when recall knows its space: see :mod:`.spaces`)."""
    _verdict: Any = field(default=None, repr=False)

    @property
    def verdict(self) -> Any:
        """The stale/correction/safety verdict (:func:`remnic.recall.provenance.assess`), computed once."""
        if self._verdict is None:
            from .provenance import assess

            self._verdict = assess(
                self.frontmatter,
                status=self.status,
                category=self.category,
                namespace=self.namespace,
                recall_namespace=self.recall_namespace,
                now_s=self.judged_at,
                as_of=self.as_of,
            )
        return self._verdict

    @property
    def safety(self) -> str:
        """safe | requires-review | blocked (see :mod:`remnic.recall.provenance`)."""
        return self.verdict.safety

    @property
    def source_turn_id(self) -> str | None:
        value = self.frontmatter.get("sourceTurnId")
        return None if value is None else str(value)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "path": self.path,
            "score": _r(self.score),
            "rank": self.rank,
            "namespace": self.namespace,
            "category": self.category,
            "status": self.status,
            "content": self.content,
            "frontmatter": self.frontmatter,
            "servedBy": self.served_by,
            "safety": self.safety,
            "scoreDecomposition": self.terms.to_dict(),
            "signals": self.signals,
            "admittedBy": self.admitted_by,
        }
        if self.rejected_by is not None:
            out["rejectedBy"] = self.rejected_by
        if self.graph_path is not None:
            out["graphPath"] = self.graph_path
            out["graphEdgeConfidences"] = self.graph_edge_confidences
        if self.passages:
            out["passages"] = self.passages
        if self.trimmed:
            out["trimmed"] = True
            out["contentChars"] = self.content_chars
        if self.space is not None:
            out["space"] = self.space
        return out


@dataclass
class RecallResult:
    query: str
    hits: list[RecallHit]
    stages: list[StageCount]
    """The filter ladder, chained: each stage considers what the previous one admitted."""
    terms: list[str]
    """The analysed BM25 query terms."""
    namespace: str | None
    budget_chars: int
    budget_used: int
    timings_ms: dict[str, float]
    index: dict[str, Any] = field(default_factory=dict)
    """What the freshness check did before this recall (action, reason, …)."""
    candidates: list[Candidate] = field(default_factory=list)
    """Every candidate the ladder considered, dropped ones included (for explanation)."""
    tier: TierReport | None = None
    expansion: StageCount | None = None
    """Episode expansion (offered = new siblings, admitted = lifted); not a filter, so not in ``stages``."""
    rerank: StageCount | None = None
    """The cross-encoder stage when recall.rerank is on (considered = top N, admitted = scored in budget)."""
    clock_ms: int = 0
    """The recall's clock (epoch ms): the live time, or the pinned REMNIC_XRAY_CLOCK."""
    result_limit: int = 0
    """The top-k the ``recall-result-limit`` stage cut the ranked list to."""
    audit_id: str | None = None
    """The recall-audit ledger entry this recall appended (None if the append failed)."""
    session_key: str | None = None
    trace_id: str | None = None
    options_key: str = ""
    """The options that shaped the recall (:func:`remnic.recall.audit.options_key`): pinned ids hash them."""
    xray: Any = None
    """The RecallXraySnapshot when capture was asked for (and did not fail)."""
    spaces: list[str] | None = None
    """The memory spaces this recall searched, the active one first (None: just this repository)."""
    notes: list[str] = field(default_factory=list)
    """What the recall did to the query itself, for a person (``remnic query``'s footer; ``notes`` in
    JSON, left out when empty): the query cut to ``recall.maxQueryChars``. The X-ray's
    ``namespace-scope`` reason says the same."""
    warnings: list[str] = field(default_factory=list)
    """What the caller should know about its request (``warnings`` in JSON, left out when empty): a
    named namespace that holds no memory file, so an empty result is a typo, not "nothing relevant"."""

    def __iter__(self) -> Iterator[RecallHit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def to_dict(self, *, with_candidates: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "namespace": self.namespace,
            "count": len(self.hits),
            "hits": [h.to_dict() for h in self.hits],
            "filters": [s.to_dict() for s in self.stages],
            "queryTerms": self.terms,
            "budget": {"chars": self.budget_chars, "used": self.budget_used},
            "timingsMs": {k: round(v, 3) for k, v in self.timings_ms.items()},
            "index": self.index,
            "auditEntryId": self.audit_id,
        }
        if self.spaces is not None:
            out["spaces"] = self.spaces
        if self.notes:
            out["notes"] = self.notes
        if self.warnings:
            out["warnings"] = self.warnings
        if self.rerank is not None:
            out["rerank"] = self.rerank.to_dict()
        if self.tier is not None:
            out["tier"] = {
                "tier": self.tier.tier,
                "reason": self.tier.reason,
                "candidatesConsidered": self.tier.candidates_considered,
            }
        if with_candidates:
            out["candidates"] = [
                {
                    "id": c.id,
                    "path": c.path,
                    "terms": c.terms.to_dict(),
                    "signals": c.signals(),
                    "servedBy": c.served_by,
                    "admittedBy": c.admitted_by,
                    "rejectedBy": c.rejected_by,
                    "droppedAt": c.dropped_at,
                }
                for c in self.candidates
            ]
        return out
