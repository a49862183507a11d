"""The Recall X-ray and the audit entry, composed from a finished :class:`RecallResult` (pure).

Nothing here retrieves: every field comes from values the recall already
computed (stage counts, per-candidate terms, raw signals and verdicts, the
hits' frontmatter and contents, the tier report). File text is read through
the ``read_text`` callable only to turn a served memory's path into a source
anchor ``{path, lineRange}``. The snapshot is normalised the way the original
Remnic's builder normalises one: trimmed non-empty strings, non-negative
integer counts, finite score terms, edge confidences aligned with their path
and clamped to [0, 1].

Score decomposition (``final`` is exactly the recall's score)::

    final = vector + bm25 + importance + recency + tierPrior + reinforcementBoost
            + status + propagation + projectBoost − mmrPenalty

``recency``, ``status`` (−inactivePenalty for a memory that is not active) and
``propagation`` (the episode-expansion lift) are remnic terms beyond the
original's schema; ``rawScores`` carries the raw cosine similarity and BM25
score that ``vector`` and ``bm25`` were normalised from.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from remnic.memfile.model import STATUSES, format_time, split_file
from remnic.memfile.values import confidence_of
from remnic.render.snapshot import (
    Budget,
    FilterTrace,
    Provenance,
    RecallXraySnapshot,
    ScoreDecomposition,
    SourceAnchor,
    SourceSpan,
    TierExplain,
    XrayResult,
)
from remnic.render.vocabulary import (
    DERIVED_VIA,
    LIFECYCLE_STATES,
    POLICY_CLASSES,
    SOURCE_SPAN_PROVENANCE,
    VERIFICATION_STATES,
)

from .audit import AuditEntry, AuditLog
from .clock import RecallClock
from .ladder import RESULT_LIMIT
from .provenance import assess, context_scopes, current_at
from .types import Candidate, RecallHit, RecallResult, ScoreTerms

log = logging.getLogger("remnic.recall")
ReadText = Callable[[str], str]
PLACES = 9
"""Decimals kept per term: 9 terms rounded this way still sum to ``final`` within 1e-8."""
DISCLOSURE = "section"
"""A recall returns each memory's whole body: the original's ``section`` disclosure level."""
TRIMMED_DISCLOSURE = "chunk"
"""A hit the budget fit trimmed returns only its best passages: the original's ``chunk`` level."""


def _r(x: float) -> float:
    return round(float(x), PLACES) if math.isfinite(x) else 0.0


def _text(value: Any) -> str | None:
    """A trimmed non-empty string (numbers and dates from YAML spelt as text), else None."""
    if value is None or isinstance(value, (bool, list, dict)):
        return None
    text = value if isinstance(value, str) else str(value)
    return text.strip() or None


def _count(value: Any) -> int:
    """A non-negative integer (the schema's counts and budgets)."""
    return math.floor(value) if isinstance(value, (int, float)) and math.isfinite(value) and value > 0 else 0


def decomposition(terms: ScoreTerms) -> ScoreDecomposition:
    """The X-ray's score terms; always-computed terms are always shown, the others when non-zero."""

    def opt(x: float) -> float | None:
        return _r(x) if x != 0 else None

    return ScoreDecomposition(
        final=_r(terms.final),
        vector=_r(terms.vector),
        bm25=_r(terms.bm25),
        importance=_r(terms.importance),
        recency=_r(terms.recency),
        mmr_penalty=_r(terms.mmr_penalty),
        tier_prior=opt(terms.tier_prior),
        reinforcement_boost=_r(terms.reinforcement) if terms.reinforcement > 0 else None,
        status=opt(terms.status),
        propagation=opt(terms.propagation),
        date=opt(terms.date),
        context=opt(terms.context),
        rerank=opt(terms.rerank),
        project_boost=opt(terms.project),
    )


def raw_scores(cosine: float | None, bm25: float | None) -> dict[str, float] | None:
    """The raw similarity (None: the memory's vectors are still pending, so it has none) and BM25
    score (when BM25 matched); None when it has neither."""
    out = {}
    if cosine is not None:
        out["vector"] = _r(cosine)
    if bm25 is not None:
        out["bm25"] = _r(bm25)
    return out or None


def _one_of(value: Any, options: tuple[str, ...]) -> str | None:
    return value if isinstance(value, str) and value in options else None


def provenance(hit: RecallHit, *, recall_namespace: str | None, now_s: float) -> Provenance:
    """The original's ``RetrievedMemoryProvenance`` of a hit, from its frontmatter and the safety verdict."""
    fm = hit.frontmatter
    # The recall judged its hits at its own clock; the snapshot's is the same instant in whole ms.
    same_judgement = hit.recall_namespace == recall_namespace and abs(hit.judged_at - now_s) < 0.001
    verdict = (
        hit.verdict
        if same_judgement
        else assess(
            fm,
            status=hit.status,
            category=hit.category,
            namespace=hit.namespace,
            recall_namespace=recall_namespace,
            now_s=now_s,
            as_of=hit.as_of,
        )
    )
    # Read as get and the index read it (tier words, percentages, the default when absent),
    # so the provenance never contradicts the retrieval reason's confidence.
    confidence = confidence_of(fm)
    reason = f"served-by={hit.served_by}" + (f": {hit.tier_note}" if hit.tier_note else "")
    derived = fm.get("derived_from", fm.get("derivedFrom"))
    derived_from = [t for t in (_text(x) for x in derived) if t] if isinstance(derived, list) else None
    return Provenance(
        source=_text(fm.get("source")) or "unknown",
        scope=f"namespace:{hit.namespace}",
        retrieval_reason=reason,
        confidence=confidence,
        user_context_scopes=context_scopes(fm),
        stale=verdict.stale,
        corrected=verdict.correction_state != "none",
        correction_state=verdict.correction_state,
        safe_to_use=verdict.safe_to_use,
        safety=verdict.safety,
        safety_reasons=list(dict.fromkeys(verdict.reasons)),
        created=_text(fm.get("created")),
        updated=_text(fm.get("updated")),
        namespace=_text(hit.namespace),
        status=_one_of(hit.status, STATUSES),
        lifecycle_state=_one_of(fm.get("lifecycleState"), LIFECYCLE_STATES),
        verification_state=_one_of(fm.get("verificationState"), VERIFICATION_STATES),
        policy_class=_one_of(fm.get("policyClass"), POLICY_CLASSES),
        source_memory_id=_text(fm.get("sourceMemoryId")),
        source_turn_id=_text(fm.get("sourceTurnId")),
        valid_at=_text(fm.get("validAt", fm.get("valid_at"))),
        invalid_at=_text(fm.get("invalidAt", fm.get("invalid_at"))),
        forgotten_at=_text(fm.get("forgottenAt")),
        forgotten_reason=_text(fm.get("forgottenReason", fm.get("forgottenReason"))),
        derived_from=derived_from or None,
        derived_via=_one_of(fm.get("derived_via", fm.get("derivedVia")), DERIVED_VIA),
        space=hit.space,
    )


def source_span(fm: Mapping[str, Any]) -> SourceSpan | None:
    """The first claim-level source of a memory (frontmatter ``sources: [{quote, observedAt, …}]``)."""
    sources = fm.get("sources")
    if isinstance(sources, str):
        try:
            sources = json.loads(sources)
        except ValueError:
            return None
    if not isinstance(sources, list):
        return None
    for item in sources:
        if isinstance(item, Mapping) and isinstance(item.get("quote"), str) and _text(item.get("observedAt")):
            tag = _one_of(fm.get("provenance"), SOURCE_SPAN_PROVENANCE) or "unverified"
            return SourceSpan(item["quote"], str(item["observedAt"]).strip(), tag)
    return None


def tags_of(fm: Mapping[str, Any]) -> list[str] | None:
    tags = fm.get("tags")
    cleaned = [t for t in (_text(x) for x in tags) if t] if isinstance(tags, list) else []
    return cleaned or None


def _supersedes(fm: Mapping[str, Any]) -> list[str]:
    value = fm.get("supersedes")
    values = value if isinstance(value, list) else [value]
    return [t for t in (_text(v) for v in values) if t]


def state_views(hits: list[RecallHit]) -> list[str | None]:
    """Each hit's place in a supersession chain among the results (the original's state view):
    ``historical`` for a memory whose successor is also returned (or that is itself superseded),
    ``current`` for the successor of a returned memory, ``transition`` for both; None for a hit
    that takes part in no supersession."""
    keys = {(h.namespace, h.id) for h in hits}
    successor: dict[tuple[str, str], tuple[str, str]] = {}
    for h in hits:
        for old in _supersedes(h.frontmatter):
            successor.setdefault((h.namespace, old), (h.namespace, h.id))
    for h in hits:
        newer = _text(h.frontmatter.get("supersededBy"))
        if newer:
            successor[(h.namespace, h.id)] = (h.namespace, newer)
    out: list[str | None] = []
    for h in hits:
        key = (h.namespace, h.id)
        is_predecessor = successor.get(key) in keys
        is_successor = any(new == key and old in keys for old, new in successor.items())
        superseded = (h.status == "superseded" or bool(_text(h.frontmatter.get("supersededBy")))) and not current_at(
            h.frontmatter, h.status, h.as_of
        )
        if is_predecessor and is_successor:
            out.append("transition")
        elif is_predecessor or (superseded and not is_successor):
            out.append("historical")
        elif is_successor:
            out.append("current")
        else:
            out.append(None)
    return out


def _is_wide(ch: str) -> bool:
    code = ord(ch)
    if 0x1F1E6 <= code <= 0x1F1FF or 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF:
        return True  # regional indicators and pictographs
    if not unicodedata.category(ch).startswith("L"):
        return False
    return not unicodedata.name(ch, "").startswith(("LATIN", "GREEK", "CYRILLIC"))


def estimate_tokens(text: str) -> int:
    """Tokens a model would spend on ``text``, estimated as the original does without a tokenizer:
    a wide-script character (CJK, Thai, Arabic, …, pictographs) is one token, four of any other are one."""
    if not text:
        return 0
    if text.isascii():
        return math.ceil(len(text) / 4)
    text = unicodedata.normalize("NFC", text)
    wide = sum(1 for ch in text if ord(ch) > 0x7F and _is_wide(ch))
    return wide + math.ceil((len(text) - wide) / 4)


def _edge_confidences(path: list[str] | None, confidences: list[float] | None) -> list[float] | None:
    """Aligned with the path (one per edge) and clamped to [0, 1]; dropped when they are not."""
    if not path or len(path) < 2 or confidences is None or len(confidences) != len(path) - 1:
        return None
    if not all(isinstance(c, (int, float)) and math.isfinite(c) for c in confidences):
        return None
    return [min(1.0, max(0.0, float(c))) for c in confidences]


def _path_penalty(served_by: str, confidences: list[float] | None) -> bool | None:
    """Whether the graph tier's lift was discounted by its path (the product of edge confidences < 1)."""
    if served_by != "graph" or not confidences:
        return None
    return math.prod(confidences) < 1.0


def anchor(path: str, read_text: ReadText | None, fallback: str = "") -> SourceAnchor:
    """``{path, lineRange: [first, last]}``: the lines of the file that hold the memory's text (after the frontmatter)."""
    text = None
    if read_text is not None:
        try:
            text = read_text(path)
        except Exception:  # noqa: BLE001 - a moved file still gets an anchor from what was indexed
            text = None
    if text is None:
        return SourceAnchor(path, (1, max(1, len((fallback or "").splitlines()))))
    try:
        _fm, body, _ = split_file(text)
    except Exception:  # noqa: BLE001 - malformed frontmatter: anchor the whole file
        body = text
    offset = text.count("\n", 0, len(text) - len(body)) if body and text.endswith(body) else 0
    lines = body.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if not filled:
        return SourceAnchor(path, (offset + 1, offset + 1))
    return SourceAnchor(path, (offset + filled[0] + 1, offset + filled[-1] + 1))


def _candidate_result(c: Candidate, audit_id: str | None, signals: bool) -> XrayResult:
    """An X-ray result for a candidate that is not a hit (cut by the limit or the budget): no
    frontmatter was loaded for it, so no provenance."""
    graph = list(c.graph_path) if c.graph_path else None
    edges = _edge_confidences(graph, c.graph_edge_confidences)
    return XrayResult(
        memory_id=c.id,
        path=c.path,
        served_by=c.served_by,
        score=decomposition(c.terms),
        admitted_by=list(c.admitted_by),
        graph_path=graph,
        graph_edge_confidences=edges,
        path_penalty_applied=_path_penalty(c.served_by, edges),
        audit_entry_id=_text(audit_id),
        rejected_by=c.rejected_by,
        raw_scores=raw_scores(c.cosine if c.has_vectors else None, c.bm25) if signals else None,
    )


def _hit_results(result: RecallResult, now_s: float) -> list[XrayResult]:
    out = []
    for hit, view in zip(result.hits, state_views(result.hits), strict=True):
        graph = list(hit.graph_path) if hit.graph_path else None
        edges = _edge_confidences(graph, hit.graph_edge_confidences)
        out.append(
            XrayResult(
                memory_id=hit.id,
                path=hit.path,
                served_by=hit.served_by,
                score=decomposition(hit.terms),
                admitted_by=list(hit.admitted_by),
                graph_path=graph,
                graph_edge_confidences=edges,
                path_penalty_applied=_path_penalty(hit.served_by, edges),
                state_view=view,
                audit_entry_id=_text(result.audit_id),
                rejected_by=hit.rejected_by,
                disclosure=TRIMMED_DISCLOSURE if hit.trimmed else DISCLOSURE,
                estimated_tokens=estimate_tokens(hit.content),
                tags=tags_of(hit.frontmatter),
                provenance=provenance(hit, recall_namespace=result.namespace, now_s=now_s),
                source_span=source_span(hit.frontmatter),
                # A file scan's hit has no "cosine" signal at all: no raw scores.
                raw_scores=raw_scores(hit.signals.get("cosine"), hit.signals.get("bm25"))
                if "cosine" in hit.signals
                else None,
            )
        )
    return out


def _partition(
    result: RecallResult, hits: list[XrayResult], signals: bool
) -> tuple[list[XrayResult], list[XrayResult]]:
    """What the result limit admitted (hits and what the budget then dropped) and the best of what
    it cut: the next ``result_limit`` candidates, what a limit twice as large would have added."""
    by_hit = {r.memory_id: r for r in hits}
    applied: list[XrayResult] = []
    headroom: list[XrayResult] = []
    for c in result.candidates:
        if RESULT_LIMIT in c.admitted_by:
            applied.append(by_hit.get(c.id) or _candidate_result(c, result.audit_id, signals))
        elif c.dropped_at == RESULT_LIMIT and len(headroom) < result.result_limit:
            headroom.append(_candidate_result(c, result.audit_id, signals))
    return applied, headroom


def _tier_explain(result: RecallResult, clock: RecallClock, read_text: ReadText | None) -> TierExplain | None:
    t = result.tier
    if t is None:
        return None
    contents = {h.path: h.content for h in result.hits}
    anchors = [anchor(p, read_text, contents.get(p, "")) for p in t.anchors]
    return TierExplain(
        tier=t.tier,
        tier_reason=t.reason,
        filtered_by=[s.name for s in result.stages if s.considered > s.admitted],
        candidates_considered=_count(t.candidates_considered),
        latency_ms=t.latency_ms if not clock.pinned else 0,
        source_anchors=anchors or None,
        vectors_pending=t.vectors_pending,
    )


def build_snapshot(
    result: RecallResult,
    *,
    clock: RecallClock,
    namespace: str | None,
    session_key: str | None = None,
    trace_id: str | None = None,
    read_text: ReadText | None = None,
) -> RecallXraySnapshot:
    """The RecallXraySnapshot (schema v1) of a finished recall."""
    now_s = result.clock_ms / 1000.0
    # A file scan (the index was unusable) has no vectors and no BM25: no raw signals to show.
    signals = (result.index or {}).get("action") != "unavailable"
    results = _hit_results(result, now_s)
    applied, headroom = _partition(result, results, signals)
    filters = [FilterTrace(s.name, _count(s.considered), _count(s.admitted), _text(s.reason)) for s in result.stages]
    return RecallXraySnapshot(
        query=result.query,
        snapshot_id=clock.snapshot_id(result.query, namespace, session_key, *_options(result)),
        captured_at=result.clock_ms,
        tier_explain=_tier_explain(result, clock, read_text),
        results=results,
        applied_result_limit=_count(result.result_limit),
        applied_results=applied,
        headroom_results=headroom,
        filters=filters,
        budget=Budget(_count(result.budget_chars), _count(result.budget_used)),
        session_key=_text(session_key),
        namespace=_text(namespace),
        trace_id=_text(trace_id),
        index_note=_text((result.index or {}).get("note")),
    )


def _options(result: RecallResult) -> tuple[str, ...]:
    """What a pinned clock's ids hash besides the query, namespace and session: the recall's options."""
    return (result.options_key,) if result.options_key else ()


def audit_entry(
    result: RecallResult,
    *,
    audit_id: str,
    ts: str,
    namespace: str | None,
    session_key: str | None,
    trace_id: str | None,
    latency_ms: float,
    source: str,
    index_ms: float = 0.0,
    total_ms: float = 0.0,
) -> AuditEntry:
    served = Counter(h.served_by for h in result.hits)
    return AuditEntry(
        id=audit_id,
        ts=ts,
        query=result.query,
        namespace=namespace,
        sessionKey=session_key,
        traceId=trace_id,
        candidateIds=[c.id for c in result.candidates],
        returnedIds=[h.id for h in result.hits],
        budget={"chars": int(result.budget_chars), "used": int(result.budget_used)},
        latencyMs=round(latency_ms, 3),
        indexMs=round(index_ms, 3),
        totalMs=round(total_ms, 3),
        servedBy=dict(sorted(served.items())),
        source=source,
    )


def capture(
    result: RecallResult, *, clock: RecallClock, namespace: str | None, read_text: ReadText | None = None
) -> RecallXraySnapshot | None:
    """:func:`build_snapshot`, but a failure is logged and gives None: capture never breaks a recall."""
    try:
        return build_snapshot(
            result,
            clock=clock,
            namespace=namespace,
            session_key=result.session_key,
            trace_id=result.trace_id,
            read_text=read_text,
        )
    except Exception:
        log.exception("recall X-ray capture failed; returning the recall without it")
        return None


def record_audit(
    state_dir: Path,
    result: RecallResult,
    *,
    clock: RecallClock,
    latency_ms: float,
    source: str,
    retention_days: int = 0,
    index_ms: float = 0.0,
    total_ms: float = 0.0,
) -> str | None:
    """Append the recall's audit entry; its id, or None if the append failed (logged, never raised)."""
    try:
        audit_id = clock.audit_id(result.query, result.namespace, result.session_key, *_options(result))
        entry = audit_entry(
            result,
            audit_id=audit_id,
            ts=format_time(result.clock_ms / 1000.0),
            namespace=result.namespace,
            session_key=result.session_key,
            trace_id=result.trace_id,
            latency_ms=latency_ms,
            source=source,
            index_ms=index_ms,
            total_ms=total_ms,
        )
        return AuditLog(state_dir, retention_days).append(entry, prune=not clock.pinned)
    except Exception as exc:  # noqa: BLE001 - the ledger records recalls; it is never a reason to fail one
        log.warning("recall audit append failed: %s", exc)
        return None


def check_sums(snapshot: RecallXraySnapshot, tol: float = 1e-6) -> list[str]:
    """Results whose terms do not add up to ``final`` (empty when every one does)."""
    bad = []
    for r in snapshot.results:
        total = sum(v for name, v in r.score.terms() if name != "mmr_penalty") - (r.score.mmr_penalty or 0.0)
        if abs(total - r.score.final) > tol:
            bad.append(f"{r.memory_id}: terms sum to {total}, final is {r.score.final}")
    return bad


def filters_chain(snapshot: RecallXraySnapshot | Mapping[str, Any]) -> list[str]:
    """Problems with the filter ladder's counts (empty when they chain and add up)."""
    if not isinstance(snapshot, RecallXraySnapshot):
        snapshot = RecallXraySnapshot.from_dict(snapshot)
    filters = snapshot.filters
    out = []
    for prev, cur in itertools.pairwise(filters):
        if cur.considered != prev.admitted:
            out.append(f"{cur.name} considered {cur.considered}, {prev.name} admitted {prev.admitted}")
    for f in filters:
        if f.admitted > f.considered or f.admitted < 0:
            out.append(f"{f.name}: admitted {f.admitted} of {f.considered}")
    return out
