"""Recall X-ray snapshot types (schema v1).

A Recall X-ray is a per-recall attribution snapshot: which tier served each
result, how its score decomposed, which filters it passed (and the first one
that would have rejected it), any graph path traversed, the audit entry id,
provenance/safety context, and the character budget consumed.

This is a *leaf* module: it imports only the standard library, so every
layer (recall pipeline, renderer, HTTP, MCP) can depend on it freely.

Python attributes are snake_case; the JSON form produced by ``to_dict`` (and
accepted by ``from_dict``) uses the camelCase keys of the v1 schema, with a
stable key order so every surface serialises identical bytes.

``from_dict`` is deliberately tolerant: it ignores unknown keys, fills
defaults for missing ones and never raises on wrong types. Non-finite floats
(NaN, inf) are kept as floats; the renderer shows them as ``n/a``/``unknown``
and the JSON serialiser turns them into ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CORRECTION_STATES",
    "SAFETY_LEVELS",
    "SCHEMA_VERSION",
    "SCORE_TERMS",
    "SERVED_BY_TIERS",
    "Budget",
    "FilterTrace",
    "Provenance",
    "RecallXraySnapshot",
    "ScoreDecomposition",
    "TierExplain",
    "XrayResult",
]

SCHEMA_VERSION = "1"

SERVED_BY_TIERS: tuple[str, ...] = (
    "direct-answer",
    "hybrid",
    "graph",
    "recent-scan",
    "procedural",
    "review-context",
)
CORRECTION_STATES: tuple[str, ...] = (
    "none",
    "correction",
    "superseded",
    "disputed",
    "forgotten",
)
SAFETY_LEVELS: tuple[str, ...] = ("safe", "requires-review", "blocked")

# (python attribute, JSON key) for the optional score terms, in the stable
# serialisation / rendering order. ``final`` always comes first.
SCORE_TERMS: tuple[tuple[str, str], ...] = (
    ("vector", "vector"),
    ("bm25", "bm25"),
    ("importance", "importance"),
    ("recency", "recency"),
    ("mmr_penalty", "mmrPenalty"),
    ("tier_prior", "tierPrior"),
    ("reinforcement_boost", "reinforcementBoost"),
    # remnic's own terms beyond the reference schema (signed; see docs/xray.md):
    ("status", "status"),
    ("propagation", "propagation"),
    ("date", "date"),
    ("context", "context"),
    ("rerank", "rerank"),
)


# --------------------------------------------------------------------------
# tolerant coercion helpers (never raise)
# --------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _num(value: Any) -> int | float | None:
    """A real number (int or float, not bool), else None. NaN/inf survive."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    return None


def _num_or(value: Any, default: int | float) -> int | float:
    n = _num(value)
    return default if n is None else n


def _opt_str(value: Any) -> str | None:
    """Strings pass through, numbers are stringified, anything else is None."""
    if isinstance(value, str):
        return value
    if _num(value) is not None:
        return str(value)
    return None


def _str_or(value: Any, default: str) -> str:
    s = _opt_str(value)
    return default if s is None else s


def _bool_or(value: Any, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _str_list(value: Any) -> list[str]:
    if not _is_list(value):
        return []
    out: list[str] = []
    for item in value:
        s = _opt_str(item)
        if s is not None:
            out.append(s)
    return out


def _opt_str_list(value: Any) -> list[str] | None:
    return _str_list(value) if _is_list(value) else None


def _opt_num_list(value: Any) -> list[float] | None:
    if not _is_list(value):
        return None
    return [n for n in (_num(item) for item in value) if n is not None]


# --------------------------------------------------------------------------
# types
# --------------------------------------------------------------------------


@dataclass
class ScoreDecomposition:
    """How a result's final score decomposed. Only ``final`` is guaranteed."""

    final: float
    vector: float | None = None
    bm25: float | None = None
    importance: float | None = None
    recency: float | None = None
    mmr_penalty: float | None = None
    tier_prior: float | None = None
    reinforcement_boost: float | None = None
    # −inactivePenalty for a memory that is not active (e.g. shown as review context)
    status: float | None = None
    # episode-expansion lift borrowed from a strong sibling in the same episode
    propagation: float | None = None
    # a question asking when: the boost of a memory whose text states a time
    date: float | None = None
    # ≤ 0: keeps a memory below an episode neighbour whose own text matches the query better
    context: float | None = None
    # the cross-encoder rerank stage's adjustment (recall.rerank)
    rerank: float | None = None

    def terms(self) -> list[tuple[str, float]]:
        """Present optional terms as (python name, value), in stable order."""
        out: list[tuple[str, float]] = []
        for attr, _key in SCORE_TERMS:
            value = getattr(self, attr)
            if value is not None:
                out.append((attr, value))
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"final": self.final}
        for attr, key in SCORE_TERMS:
            value = getattr(self, attr)
            if value is not None:
                d[key] = value
        return d

    @classmethod
    def from_dict(cls, data: Any) -> ScoreDecomposition:
        d = _mapping(data)
        kwargs = {attr: _num(d.get(key)) for attr, key in SCORE_TERMS}
        return cls(final=_num_or(d.get("final"), 0.0), **kwargs)


@dataclass
class Provenance:
    """Where a retrieved memory came from and whether it is safe to use."""

    source: str
    scope: str
    retrieval_reason: str = ""
    confidence: float = 0.0
    created: str | None = None
    updated: str | None = None
    namespace: str | None = None
    user_context_scopes: list[str] = field(default_factory=list)
    stale: bool = False
    corrected: bool = False
    correction_state: str = "none"
    safe_to_use: bool = True
    safety: str = "safe"
    safety_reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"source": self.source}
        if self.created is not None:
            d["created"] = self.created
        if self.updated is not None:
            d["updated"] = self.updated
        if self.namespace is not None:
            d["namespace"] = self.namespace
        d["scope"] = self.scope
        d["userContextScopes"] = list(self.user_context_scopes)
        d["retrievalReason"] = self.retrieval_reason
        d["confidence"] = self.confidence
        d["stale"] = self.stale
        d["corrected"] = self.corrected
        d["correctionState"] = self.correction_state
        d["safeToUse"] = self.safe_to_use
        d["safety"] = self.safety
        d["safetyReasons"] = list(self.safety_reasons)
        return d

    @classmethod
    def from_dict(cls, data: Any) -> Provenance:
        d = _mapping(data)
        return cls(
            source=_str_or(d.get("source"), ""),
            created=_opt_str(d.get("created")),
            updated=_opt_str(d.get("updated")),
            namespace=_opt_str(d.get("namespace")),
            scope=_str_or(d.get("scope"), ""),
            user_context_scopes=_str_list(d.get("userContextScopes")),
            retrieval_reason=_str_or(d.get("retrievalReason"), ""),
            confidence=_num_or(d.get("confidence"), 0.0),
            stale=_bool_or(d.get("stale"), False),
            corrected=_bool_or(d.get("corrected"), False),
            correction_state=_str_or(d.get("correctionState"), "none"),
            safe_to_use=_bool_or(d.get("safeToUse"), True),
            safety=_str_or(d.get("safety"), "safe"),
            safety_reasons=_str_list(d.get("safetyReasons")),
        )


@dataclass
class XrayResult:
    """One recalled memory and why it surfaced."""

    memory_id: str
    path: str
    served_by: str
    score: ScoreDecomposition
    admitted_by: list[str] = field(default_factory=list)
    rejected_by: str | None = None
    graph_path: list[str] | None = None
    # aligned with graph_path: len == len(graph_path) - 1
    graph_edge_confidences: list[float] | None = None
    audit_entry_id: str | None = None
    provenance: Provenance | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "memoryId": self.memory_id,
            "path": self.path,
            "servedBy": self.served_by,
            "scoreDecomposition": self.score.to_dict(),
            "admittedBy": list(self.admitted_by),
        }
        if self.rejected_by is not None:
            d["rejectedBy"] = self.rejected_by
        if self.graph_path is not None:
            d["graphPath"] = list(self.graph_path)
        if self.graph_edge_confidences is not None:
            d["graphEdgeConfidences"] = list(self.graph_edge_confidences)
        if self.audit_entry_id is not None:
            d["auditEntryId"] = self.audit_entry_id
        if self.provenance is not None:
            d["provenance"] = self.provenance.to_dict()
        return d

    @classmethod
    def from_dict(cls, data: Any) -> XrayResult:
        d = _mapping(data)
        prov = d.get("provenance")
        return cls(
            memory_id=_str_or(d.get("memoryId"), ""),
            path=_str_or(d.get("path"), ""),
            served_by=_str_or(d.get("servedBy"), ""),
            score=ScoreDecomposition.from_dict(d.get("scoreDecomposition")),
            admitted_by=_str_list(d.get("admittedBy")),
            rejected_by=_opt_str(d.get("rejectedBy")),
            graph_path=_opt_str_list(d.get("graphPath")),
            graph_edge_confidences=_opt_num_list(d.get("graphEdgeConfidences")),
            audit_entry_id=_opt_str(d.get("auditEntryId")),
            provenance=Provenance.from_dict(prov) if isinstance(prov, Mapping) else None,
        )


@dataclass
class FilterTrace:
    """One gate the recall walked: its candidate pool and how many it admitted."""

    name: str
    considered: int
    admitted: int
    reason: str | None = None

    @property
    def rejected(self) -> int:
        return self.considered - self.admitted

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "considered": self.considered,
            "admitted": self.admitted,
        }
        if self.reason is not None:
            d["reason"] = self.reason
        return d

    @classmethod
    def from_dict(cls, data: Any) -> FilterTrace:
        d = _mapping(data)
        return cls(
            name=_str_or(d.get("name"), ""),
            considered=_num_or(d.get("considered"), 0),
            admitted=_num_or(d.get("admitted"), 0),
            reason=_opt_str(d.get("reason")),
        )


@dataclass
class TierExplain:
    """The tier-explain verdict, carried verbatim when the tier ran."""

    tier: str
    reason: str = ""
    candidates_considered: int = 0
    latency_ms: float = 0
    filtered_by: list[str] = field(default_factory=list)
    # e.g. "decisions/recall-cache-ttl.md:10-14"
    source_anchors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "reason": self.reason,
            "candidatesConsidered": self.candidates_considered,
            "latencyMs": self.latency_ms,
            "filteredBy": list(self.filtered_by),
            "sourceAnchors": list(self.source_anchors),
        }

    @classmethod
    def from_dict(cls, data: Any) -> TierExplain:
        d = _mapping(data)
        return cls(
            tier=_str_or(d.get("tier"), ""),
            reason=_str_or(d.get("reason"), ""),
            candidates_considered=_num_or(d.get("candidatesConsidered"), 0),
            latency_ms=_num_or(d.get("latencyMs"), 0),
            filtered_by=_str_list(d.get("filteredBy")),
            source_anchors=_str_list(d.get("sourceAnchors")),
        )


@dataclass
class Budget:
    """Recall character budget and how much the final payload used."""

    chars: int
    used: int

    def to_dict(self) -> dict[str, Any]:
        return {"chars": self.chars, "used": self.used}

    @classmethod
    def from_dict(cls, data: Any) -> Budget:
        d = _mapping(data)
        return cls(chars=_num_or(d.get("chars"), 0), used=_num_or(d.get("used"), 0))


@dataclass
class RecallXraySnapshot:
    """The unified per-recall attribution snapshot (schema v1)."""

    query: str
    snapshot_id: str
    captured_at: float  # epoch milliseconds
    tier_explain: TierExplain | None = None
    results: list[XrayResult] = field(default_factory=list)
    filters: list[FilterTrace] = field(default_factory=list)
    budget: Budget = field(default_factory=lambda: Budget(0, 0))
    session_key: str | None = None
    namespace: str | None = None
    trace_id: str | None = None
    schema_version: str = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schemaVersion": self.schema_version,
            "query": self.query,
            "snapshotId": self.snapshot_id,
            "capturedAt": self.captured_at,
        }
        if self.session_key is not None:
            d["sessionKey"] = self.session_key
        if self.namespace is not None:
            d["namespace"] = self.namespace
        if self.trace_id is not None:
            d["traceId"] = self.trace_id
        d["tierExplain"] = self.tier_explain.to_dict() if self.tier_explain is not None else None
        d["filters"] = [f.to_dict() for f in self.filters]
        d["results"] = [r.to_dict() for r in self.results]
        d["budget"] = self.budget.to_dict()
        return d

    @classmethod
    def from_dict(cls, data: Any) -> RecallXraySnapshot:
        d = _mapping(data)
        tier = d.get("tierExplain")
        results = d.get("results")
        filters = d.get("filters")
        return cls(
            schema_version=_str_or(d.get("schemaVersion"), SCHEMA_VERSION),
            query=_str_or(d.get("query"), ""),
            snapshot_id=_str_or(d.get("snapshotId"), ""),
            captured_at=_num_or(d.get("capturedAt"), 0),
            session_key=_opt_str(d.get("sessionKey")),
            namespace=_opt_str(d.get("namespace")),
            trace_id=_opt_str(d.get("traceId")),
            tier_explain=TierExplain.from_dict(tier) if isinstance(tier, Mapping) else None,
            filters=[
                FilterTrace.from_dict(f) for f in (filters if _is_list(filters) else ()) if isinstance(f, Mapping)
            ],
            results=[XrayResult.from_dict(r) for r in (results if _is_list(results) else ()) if isinstance(r, Mapping)],
            budget=Budget.from_dict(d.get("budget")),
        )
