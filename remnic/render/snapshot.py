"""Recall X-ray snapshot types (schema v1): the original Remnic's shape, plus remnic's own terms.

A Recall X-ray is a per-recall attribution snapshot: which tier served each result, how its score
decomposed, which filters it passed (and the first one that would have rejected it), any graph path
traversed, the audit entry id, provenance/safety context, and the character budget consumed.

Python attributes are snake_case; ``to_dict`` writes (and ``from_dict`` reads) the camelCase JSON
of the v1 schema with the original's key order, so a snapshot serialises to the same bytes on every
surface. ``from_dict`` also reads what earlier remnic versions wrote (``tierExplain.reason``,
anchors as ``"path:10-14"`` strings).

``from_dict`` is faithful and tolerant: it keeps the values it is given (an empty string stays empty,
a negative count stays negative, NaN stays NaN: the renderer prints them as the original does),
ignores unknown keys, gives a value of the wrong type its schema default, and never raises.
Normalising a snapshot (trimming, clamping, dropping misaligned edge confidences) is the job of
whoever builds it: remnic's capture (:mod:`remnic.recall.snapshot`) builds normalised ones.

Beyond the original's schema, remnic adds (and the original's consumers ignore):

- ``scoreDecomposition.recency``, ``.status``, ``.propagation``: terms of remnic's score, so
  that every term of ``final`` is shown;
- ``rawScores``: the raw signals the ``vector`` and ``bm25`` terms were normalised from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .coerce import _list, _mapping, _num, _num_or, _opt_num_list, _opt_str_list, _plain, _put, _str, _str_list, _str_or
from .jsfmt import is_number, js_number
from .vocabulary import (
    ABSENT,
    CORRECTION_STATES,
    DISCLOSURES,
    RAW_SCORE_TERMS,
    RETRIEVAL_TIERS,
    SAFETY_LEVELS,
    SCHEMA_VERSION,
    SCORE_TERMS,
    SERVED_BY_TIERS,
    STATE_VIEWS,
)

__all__ = [
    "ABSENT",
    "CORRECTION_STATES",
    "DISCLOSURES",
    "RAW_SCORE_TERMS",
    "RETRIEVAL_TIERS",
    "SAFETY_LEVELS",
    "SCHEMA_VERSION",
    "SCORE_TERMS",
    "SERVED_BY_TIERS",
    "STATE_VIEWS",
    "Budget",
    "FilterTrace",
    "PeerProfileInjection",
    "Provenance",
    "RecallXraySnapshot",
    "ScoreDecomposition",
    "SourceAnchor",
    "SourceSpan",
    "TierExplain",
    "XrayResult",
]

# Provenance keys the original writes after the always-present ones, in its order.
_PROVENANCE_STRINGS: tuple[tuple[str, str], ...] = (
    ("created", "created"),
    ("updated", "updated"),
    ("namespace", "namespace"),
    ("status", "status"),
    ("lifecycle_state", "lifecycleState"),
    ("verification_state", "verificationState"),
    ("policy_class", "policyClass"),
    ("source_memory_id", "sourceMemoryId"),
    ("source_turn_id", "sourceTurnId"),
    ("valid_at", "validAt"),
    ("invalid_at", "invalidAt"),
    ("forgotten_at", "forgottenAt"),
    ("forgotten_reason", "forgottenReason"),
)
_ANCHOR_STRING = re.compile(r"^(.*):(\d+)-(\d+)$", re.S)


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
    mmr_penalty: float | None = None
    """Subtracted: ``final`` is the other terms' sum minus this (a positive penalty, as the original's)."""
    tier_prior: float | None = None
    reinforcement_boost: float | None = None
    recency: float | None = None
    """remnic: weightRecency × 0.5^(age / recencyHalfLifeDays)."""
    status: float | None = None
    """remnic: −inactivePenalty for a memory that is not active (e.g. shown as review context)."""
    propagation: float | None = None
    """remnic: episode-expansion lift borrowed from a strong sibling in the same episode."""
    # a question asking when: the boost of a memory whose text states a time
    date: float | None = None
    # ≤ 0: keeps a memory below an episode neighbour whose own text matches the query better
    context: float | None = None
    # the cross-encoder rerank stage's adjustment (recall.rerank)
    rerank: float | None = None
    project_boost: float | None = None
    """remnic: recall.projectBoost for a memory of the project the recall is for (cwd, projectTag)."""

    def terms(self) -> list[tuple[str, float]]:
        """The terms present, as (python name, value) in stable order, each as the X-ray shows it: so
        ``mmr_penalty`` is positive, and their plain sum is not ``final`` when MMR penalised the result
        (:meth:`signed_terms` and :meth:`total` are)."""
        return [(attr, getattr(self, attr)) for attr, _key in SCORE_TERMS if getattr(self, attr) is not None]

    def signed_terms(self) -> list[tuple[str, float]]:
        """:meth:`terms` with ``mmr_penalty`` negated: the terms that add up to ``final``."""
        return [(attr, -value if attr == "mmr_penalty" else value) for attr, value in self.terms()]

    def total(self) -> float:
        """The sum of :meth:`signed_terms`: ``final`` within rounding (terms have 9 decimals) for every
        result remnic captures."""
        return sum(value for _attr, value in self.signed_terms())

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"final": self.final}
        for attr, key in SCORE_TERMS:
            _put(d, key, getattr(self, attr))
        return d

    @classmethod
    def from_dict(cls, data: Any) -> ScoreDecomposition:
        d = _mapping(data)
        return cls(final=_num_or(d.get("final"), 0), **{attr: _num(d.get(key)) for attr, key in SCORE_TERMS})


@dataclass
class Provenance:
    """Where a retrieved memory came from and whether it is safe to use (the original's
    ``RetrievedMemoryProvenance``)."""

    source: str
    scope: str
    retrieval_reason: str = "retrieved"
    confidence: float = 0.0
    user_context_scopes: list[str] = field(default_factory=list)
    stale: bool = False
    corrected: bool = False
    correction_state: str = "none"
    safe_to_use: bool = True
    safety: str = "safe"
    safety_reasons: list[str] = field(default_factory=list)
    created: str | None = None
    updated: str | None = None
    namespace: str | None = None
    status: str | None = None
    lifecycle_state: str | None = None
    verification_state: str | None = None
    policy_class: str | None = None
    source_memory_id: str | None = None
    source_turn_id: str | None = None
    valid_at: str | None = None
    invalid_at: str | None = None
    forgotten_at: str | None = None
    forgotten_reason: str | None = None
    derived_from: list[str] | None = None
    derived_via: str | None = None
    space: str | None = None
    """The memory space the memory was recalled from (when recall spans several, or the active one is registered)."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "source": self.source,
            "scope": self.scope,
            "userContextScopes": list(self.user_context_scopes),
            "retrievalReason": self.retrieval_reason,
            "confidence": self.confidence,
            "stale": self.stale,
            "corrected": self.corrected,
            "correctionState": self.correction_state,
            "safeToUse": self.safe_to_use,
            "safety": self.safety,
            "safetyReasons": list(self.safety_reasons),
        }
        for attr, key in _PROVENANCE_STRINGS:
            _put(d, key, getattr(self, attr))
        if self.derived_from is not None:
            d["derivedFrom"] = list(self.derived_from)
        _put(d, "derivedVia", self.derived_via)
        _put(d, "space", self.space)
        return d

    @classmethod
    def from_dict(cls, data: Any) -> Provenance:
        d = _mapping(data)
        safe_to_use = d.get("safeToUse")
        corrected = d.get("corrected")
        # Missing members get the original normaliser's defaults; present ones are kept as they are.
        return cls(
            source=_str_or(d.get("source"), "unknown"),
            scope=_str_or(d.get("scope"), "unknown"),
            retrieval_reason=_str_or(d.get("retrievalReason"), "retrieved"),
            confidence=_num_or(d.get("confidence"), 0),
            user_context_scopes=_str_list(d.get("userContextScopes")),
            stale=d.get("stale") is True,
            corrected=corrected is True,
            correction_state=_str_or(d.get("correctionState"), "correction" if corrected is True else "none"),
            safe_to_use=safe_to_use if isinstance(safe_to_use, bool) else True,
            safety=_str_or(d.get("safety"), "requires-review" if safe_to_use is False else "safe"),
            safety_reasons=_str_list(d.get("safetyReasons")),
            derived_from=_opt_str_list(d.get("derivedFrom")),
            derived_via=_str(d.get("derivedVia")),
            space=_str(d.get("space")),
            **{attr: _str(d.get(key)) for attr, key in _PROVENANCE_STRINGS},
        )


@dataclass
class SourceSpan:
    """The first source excerpt backing a memory (its frontmatter ``sources``)."""

    quote: str
    observed_at: str
    provenance: str
    """verified | unverified | none"""

    def to_dict(self) -> dict[str, Any]:
        return {"quote": self.quote, "observedAt": self.observed_at, "provenance": self.provenance}

    @classmethod
    def from_dict(cls, data: Any) -> SourceSpan | None:
        d = _mapping(data)
        quote, observed, prov = d.get("quote"), d.get("observedAt"), d.get("provenance")
        if isinstance(quote, str) and isinstance(observed, str) and isinstance(prov, str):
            return cls(quote, observed, prov)
        return None


@dataclass
class XrayResult:
    """One recalled memory and why it surfaced."""

    memory_id: str
    path: str
    served_by: str
    score: ScoreDecomposition
    admitted_by: list[str] = field(default_factory=list)
    graph_path: list[str] | None = None
    graph_edge_confidences: list[float] | None = None
    """Aligned with graph_path: ``len == len(graph_path) - 1``."""
    path_node_ids: list[str] | None = None
    path_penalty_applied: bool | None = None
    state_view: str | None = None
    """current | historical | transition"""
    audit_entry_id: str | None = None
    rejected_by: str | None = None
    disclosure: str | None = None
    """chunk | section | raw: how much of the memory the recall returned."""
    estimated_tokens: int | float | None = None
    tags: list[str] | None = None
    provenance: Provenance | None = None
    source_span: SourceSpan | None = None
    trust: dict[str, Any] | None = None
    """The original's trust-score projection, carried as given (remnic has no trust-score stage)."""
    raw_scores: dict[str, float] | None = None
    """remnic: ``{"vector": cosine, "bm25": raw BM25}`` beside the normalised terms."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "memoryId": self.memory_id,
            "path": self.path,
            "servedBy": self.served_by,
            "scoreDecomposition": self.score.to_dict(),
            "admittedBy": list(self.admitted_by),
        }
        if self.graph_path is not None:
            d["graphPath"] = list(self.graph_path)
        if self.graph_edge_confidences is not None:
            d["graphEdgeConfidences"] = list(self.graph_edge_confidences)
        if self.path_node_ids is not None:
            d["pathNodeIds"] = list(self.path_node_ids)
        _put(d, "pathPenaltyApplied", self.path_penalty_applied)
        _put(d, "stateView", self.state_view)
        _put(d, "auditEntryId", self.audit_entry_id)
        _put(d, "rejectedBy", self.rejected_by)
        _put(d, "disclosure", self.disclosure)
        _put(d, "estimatedTokens", self.estimated_tokens)
        if self.tags is not None:
            d["tags"] = list(self.tags)
        if self.provenance is not None:
            d["provenance"] = self.provenance.to_dict()
        if self.source_span is not None:
            d["sourceSpan"] = self.source_span.to_dict()
        if self.trust is not None:
            d["trust"] = _plain(self.trust)
        if self.raw_scores is not None:
            d["rawScores"] = dict(self.raw_scores)
        return d

    @classmethod
    def from_dict(cls, data: Any) -> XrayResult:
        d = _mapping(data)
        prov = d.get("provenance")
        penalty = d.get("pathPenaltyApplied")
        raw = d.get("rawScores")
        trust = d.get("trust")
        return cls(
            memory_id=_str_or(d.get("memoryId"), ""),
            path=_str_or(d.get("path"), ""),
            served_by=_str_or(d.get("servedBy"), ""),
            score=ScoreDecomposition.from_dict(d.get("scoreDecomposition")),
            admitted_by=_str_list(d.get("admittedBy")),
            graph_path=_opt_str_list(d.get("graphPath")),
            graph_edge_confidences=_opt_num_list(d.get("graphEdgeConfidences")),
            path_node_ids=_opt_str_list(d.get("pathNodeIds")),
            path_penalty_applied=penalty if isinstance(penalty, bool) else None,
            state_view=_str(d.get("stateView")),
            audit_entry_id=_str(d.get("auditEntryId")),
            rejected_by=_str(d.get("rejectedBy")),
            disclosure=_str(d.get("disclosure")),
            estimated_tokens=_num(d.get("estimatedTokens")),
            tags=_opt_str_list(d.get("tags")),
            provenance=Provenance.from_dict(prov) if isinstance(prov, Mapping) else None,
            source_span=SourceSpan.from_dict(d.get("sourceSpan")),
            trust=_plain(trust) if isinstance(trust, Mapping) else None,
            raw_scores=(
                {k: raw[k] for k in RAW_SCORE_TERMS if is_number(raw.get(k))} if isinstance(raw, Mapping) else None
            ),
        )


@dataclass
class FilterTrace:
    """One gate the recall walked: its candidate pool and how many it admitted."""

    name: str
    considered: int | float  # a count; a snapshot from elsewhere may hold a non-finite number
    admitted: int | float
    reason: str | None = None

    @property
    def rejected(self) -> int | float:
        return self.considered - self.admitted

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "considered": self.considered, "admitted": self.admitted}
        _put(d, "reason", self.reason)
        return d

    @classmethod
    def from_dict(cls, data: Any) -> FilterTrace:
        d = _mapping(data)
        return cls(
            name=_str_or(d.get("name"), ""),
            considered=_num_or(d.get("considered"), 0),
            admitted=_num_or(d.get("admitted"), 0),
            reason=_str(d.get("reason")),
        )


@dataclass
class SourceAnchor:
    """Where in a file the tier's answer lives: ``{path, lineRange?: [first, last]}``."""

    path: str
    line_range: tuple[int | float, int | float] | None = None

    def __str__(self) -> str:
        if self.line_range is None:
            return self.path
        return f"{self.path}:{js_number(self.line_range[0])}-{js_number(self.line_range[1])}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path}
        if self.line_range is not None:
            d["lineRange"] = list(self.line_range)
        return d

    @classmethod
    def from_any(cls, data: Any) -> SourceAnchor | None:
        """An anchor object, or the ``"path:10-14"`` string earlier remnic versions wrote."""
        if isinstance(data, str):
            m = _ANCHOR_STRING.match(data)
            return cls(m.group(1), (int(m.group(2)), int(m.group(3)))) if m else cls(data)
        d = _mapping(data)
        path = d.get("path")
        if not isinstance(path, str):
            return None
        lr = d.get("lineRange")
        ok = isinstance(lr, (list, tuple)) and len(lr) == 2 and all(is_number(x) for x in lr)
        return cls(path, (lr[0], lr[1]) if ok and lr is not None else None)


@dataclass
class TierExplain:
    """The verdict of the tier that led the recall (the original's ``RecallTierExplain``)."""

    tier: str
    tier_reason: str = ""
    filtered_by: list[str] = field(default_factory=list)
    candidates_considered: int | float = 0
    latency_ms: float = 0
    source_anchors: list[SourceAnchor] | None = None
    vectors_pending: int | float = 0  # remnic's own: memories not embedded yet when it ran (BM25 found them)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "tier": self.tier,
            "tierReason": self.tier_reason,
            "filteredBy": list(self.filtered_by),
            "candidatesConsidered": self.candidates_considered,
            "latencyMs": self.latency_ms,
        }
        if self.source_anchors is not None:
            d["sourceAnchors"] = [a.to_dict() for a in self.source_anchors]
        if self.vectors_pending:
            d["vectorsPending"] = self.vectors_pending
        return d

    @classmethod
    def from_dict(cls, data: Any) -> TierExplain:
        d = _mapping(data)
        reason = d.get("tierReason", d.get("reason"))  # ``reason``: what earlier remnic versions wrote
        anchors = _list(d.get("sourceAnchors"))
        return cls(
            tier=_str_or(d.get("tier"), ""),
            tier_reason=_str_or(reason, ""),
            filtered_by=_str_list(d.get("filteredBy")),
            candidates_considered=_num_or(d.get("candidatesConsidered"), 0),
            latency_ms=_num_or(d.get("latencyMs"), 0),
            source_anchors=None if anchors is None else [a for a in map(SourceAnchor.from_any, anchors) if a],
            vectors_pending=_num_or(d.get("vectorsPending"), 0),
        )


@dataclass
class Budget:
    """Recall character budget and how much the final payload used."""

    chars: int | float
    used: int | float

    def to_dict(self) -> dict[str, Any]:
        return {"chars": self.chars, "used": self.used}

    @classmethod
    def from_dict(cls, data: Any) -> Budget:
        d = _mapping(data)
        return cls(chars=_num_or(d.get("chars"), 0), used=_num_or(d.get("used"), 0))


@dataclass
class PeerProfileInjection:
    """Which peer's profile a recall injected (the original's peer-profile feature)."""

    peer_id: str
    fields_injected: int | float

    def to_dict(self) -> dict[str, Any]:
        return {"peerId": self.peer_id, "fieldsInjected": self.fields_injected}

    @classmethod
    def from_any(cls, data: Any) -> Any:
        """An injection, None for an explicit ``null`` (none injected), ABSENT for anything else."""
        if data is None:
            return None
        d = _mapping(data)
        if isinstance(d.get("peerId"), str):
            return cls(d["peerId"], _num_or(d.get("fieldsInjected"), 0))
        return ABSENT


def _results(value: Any) -> list[XrayResult]:
    return [XrayResult.from_dict(r) for r in _list(value) or () if isinstance(r, Mapping)]


@dataclass
class RecallXraySnapshot:
    """The unified per-recall attribution snapshot (schema v1)."""

    query: str
    snapshot_id: str
    captured_at: int | float | None
    """Epoch milliseconds; None when a snapshot read from JSON had none."""
    tier_explain: TierExplain | None = None
    results: list[XrayResult] = field(default_factory=list)
    applied_result_limit: int | float = 0
    """The result limit (top-k) the recall applied."""
    applied_results: list[XrayResult] = field(default_factory=list)
    """The candidates that limit admitted, in rank order (before the budget fit)."""
    headroom_results: list[XrayResult] = field(default_factory=list)
    """The best candidates the limit cut: what a larger limit would have added next."""
    filters: list[FilterTrace] = field(default_factory=list)
    budget: Budget = field(default_factory=lambda: Budget(0, 0))
    session_key: str | None = None
    namespace: str | None = None
    trace_id: str | None = None
    peer_profile_injection: Any = ABSENT
    """PeerProfileInjection, None (explicitly none injected) or ABSENT (not recorded)."""
    index_note: str | None = None
    """remnic: what the recall did first about files edited since the last commit (or could not do)."""
    schema_version: str = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"schemaVersion": self.schema_version, "query": self.query, "snapshotId": self.snapshot_id}
        _put(d, "capturedAt", self.captured_at)
        d["tierExplain"] = self.tier_explain.to_dict() if self.tier_explain is not None else None
        d["results"] = [r.to_dict() for r in self.results]
        d["appliedResultLimit"] = self.applied_result_limit
        d["appliedResults"] = [r.to_dict() for r in self.applied_results]
        d["headroomResults"] = [r.to_dict() for r in self.headroom_results]
        d["filters"] = [f.to_dict() for f in self.filters]
        d["budget"] = self.budget.to_dict()
        _put(d, "sessionKey", self.session_key)
        _put(d, "namespace", self.namespace)
        _put(d, "traceId", self.trace_id)
        _put(d, "indexNote", self.index_note)
        if self.peer_profile_injection is not ABSENT:
            pi = self.peer_profile_injection
            d["peerProfileInjection"] = pi.to_dict() if pi is not None else None
        return d

    @classmethod
    def from_dict(cls, data: Any) -> RecallXraySnapshot:
        d = _mapping(data)
        tier = d.get("tierExplain")
        filters = _list(d.get("filters")) or ()
        return cls(
            schema_version=_str_or(d.get("schemaVersion"), SCHEMA_VERSION),
            query=_str_or(d.get("query"), ""),
            snapshot_id=_str_or(d.get("snapshotId"), ""),
            captured_at=_num(d.get("capturedAt")),
            tier_explain=TierExplain.from_dict(tier) if isinstance(tier, Mapping) else None,
            results=_results(d.get("results")),
            applied_result_limit=_num_or(d.get("appliedResultLimit"), 0),
            applied_results=_results(d.get("appliedResults")),
            headroom_results=_results(d.get("headroomResults")),
            filters=[FilterTrace.from_dict(f) for f in filters if isinstance(f, Mapping)],
            budget=Budget.from_dict(d.get("budget")),
            session_key=_str(d.get("sessionKey")),
            namespace=_str(d.get("namespace")),
            trace_id=_str(d.get("traceId")),
            index_note=_str(d.get("indexNote")),
            peer_profile_injection=(
                PeerProfileInjection.from_any(d["peerProfileInjection"]) if "peerProfileInjection" in d else ABSENT
            ),
        )
