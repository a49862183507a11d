"""The Recall X-ray and the audit entry, composed from a finished :class:`RecallResult` (pure).

Nothing here retrieves: every field comes from values the recall already
computed (stage counts, per-candidate terms and verdicts, the hits'
frontmatter, the tier report). File text is read through the ``read_text``
callable only to turn a served memory's path into a ``path:line-line``
source anchor.

Score decomposition (``final`` is exactly the recall's score)::

    final = vector + bm25 + importance + recency + tierPrior + reinforcementBoost
            + status + propagation − mmrPenalty

``status`` (−inactivePenalty for a memory that is not active) and
``propagation`` (the episode-expansion lift) are remnic terms beyond the
reference schema; they appear only when non-zero, like ``tierPrior`` and
``reinforcementBoost``.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from remnic.memfile.model import format_time, split_file
from remnic.render.snapshot import (
    Budget,
    FilterTrace,
    Provenance,
    RecallXraySnapshot,
    ScoreDecomposition,
    TierExplain,
    XrayResult,
)

from .audit import AuditEntry, AuditLog
from .clock import RecallClock
from .ladder import xray_name
from .provenance import assess, context_scopes
from .types import RecallHit, RecallResult, ScoreTerms

log = logging.getLogger("remnic.recall")
ReadText = Callable[[str], str]
PLACES = 9
"""Decimals kept per term: 9 terms rounded this way still sum to ``final`` within 1e-8."""


def _r(x: float) -> float:
    return round(float(x), PLACES) if math.isfinite(x) else 0.0


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
        reinforcement_boost=opt(terms.reinforcement),
        status=opt(terms.status),
        propagation=opt(terms.propagation),
        date=opt(terms.date),
        context=opt(terms.context),
        rerank=opt(terms.rerank),
    )


def provenance(hit: RecallHit, *, recall_namespace: str | None, now_s: float) -> Provenance:
    fm = hit.frontmatter
    same_judgement = hit.recall_namespace == recall_namespace and hit.judged_at == now_s
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
        )
    )
    conf = fm.get("confidence")
    confidence = float(conf) if isinstance(conf, (int, float)) and not isinstance(conf, bool) else 0.0
    reason = f"served-by={hit.served_by}" + (f": {hit.tier_note}" if hit.tier_note else "")
    return Provenance(
        source=str(fm.get("source") or "unknown"),
        scope=f"namespace:{hit.namespace}",
        retrieval_reason=reason,
        confidence=confidence,
        created=_opt_str(fm.get("created")),
        updated=_opt_str(fm.get("updated")),
        namespace=hit.namespace,
        user_context_scopes=context_scopes(fm),
        stale=verdict.stale,
        corrected=verdict.correction_state != "none",
        correction_state=verdict.correction_state,
        safe_to_use=verdict.safe_to_use,
        safety=verdict.safety,
        safety_reasons=list(verdict.reasons),
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def anchor(path: str, read_text: ReadText | None, fallback: str = "") -> str:
    """``path:first-last`` — the lines of the file that hold the memory's text (after the frontmatter)."""
    text = None
    if read_text is not None:
        try:
            text = read_text(path)
        except Exception:  # noqa: BLE001 - a moved file still gets an anchor from what was indexed
            text = None
    if text is None:
        return f"{path}:1-{max(1, len((fallback or '').splitlines()))}"
    try:
        _fm, body, _ = split_file(text)
    except Exception:  # noqa: BLE001 - malformed frontmatter: anchor the whole file
        body = text
    offset = text.count("\n", 0, len(text) - len(body)) if body and text.endswith(body) else 0
    lines = body.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if not filled:
        return f"{path}:{offset + 1}-{offset + 1}"
    return f"{path}:{offset + filled[0] + 1}-{offset + filled[-1] + 1}"


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
    results = []
    for hit in result.hits:
        results.append(
            XrayResult(
                memory_id=hit.id,
                path=hit.path,
                served_by=hit.served_by,
                score=decomposition(hit.terms),
                admitted_by=[xray_name(n) for n in hit.admitted_by],
                rejected_by=None if hit.rejected_by is None else xray_name(hit.rejected_by),
                graph_path=list(hit.graph_path) if hit.graph_path else None,
                graph_edge_confidences=list(hit.graph_edge_confidences) if hit.graph_path else None,
                audit_entry_id=result.audit_id,
                provenance=provenance(hit, recall_namespace=result.namespace, now_s=now_s),
            )
        )
    filters = [FilterTrace(xray_name(s.name), s.considered, s.admitted, s.reason or None) for s in result.stages]
    tier = None
    if result.tier is not None:
        t = result.tier
        contents = {h.path: h.content for h in result.hits}
        tier = TierExplain(
            tier=t.tier,
            reason=t.reason,
            candidates_considered=t.candidates_considered,
            latency_ms=t.latency_ms if not clock.pinned else 0,
            filtered_by=[xray_name(s.name) for s in result.stages if s.considered > s.admitted],
            source_anchors=[anchor(p, read_text, contents.get(p, "")) for p in t.anchors],
        )
    return RecallXraySnapshot(
        query=result.query,
        snapshot_id=clock.snapshot_id(result.query, namespace, session_key),
        captured_at=result.clock_ms,
        tier_explain=tier,
        results=results,
        filters=filters,
        budget=Budget(int(result.budget_chars), int(result.budget_used)),
        session_key=session_key,
        namespace=namespace,
        trace_id=trace_id,
    )


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
) -> str | None:
    """Append the recall's audit entry; its id, or None if the append failed (logged, never raised)."""
    try:
        audit_id = clock.audit_id(result.query, result.namespace, result.session_key)
        entry = audit_entry(
            result,
            audit_id=audit_id,
            ts=format_time(result.clock_ms / 1000.0),
            namespace=result.namespace,
            session_key=result.session_key,
            trace_id=result.trace_id,
            latency_ms=latency_ms,
            source=source,
        )
        return AuditLog(state_dir, retention_days).append(entry)
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
