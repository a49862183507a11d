"""Hybrid recall as explicit stages, each recorded as it runs:

candidates (BM25 ∪ vectors, raw scores and ranks kept) → filter ladder
(namespace-scope, category-scope, status-active, confidence-floor,
token-overlap) → scoring (a plain sum of named terms) → episode expansion →
MMR → top-k → budget fit.

``run_recall`` is the entry point; the service's ``Memory.recall`` wraps it.
The result keeps every candidate's terms and every stage's counts, so an
X-ray can be composed from it without retrieving again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from ..config import RecallSettings
from ..errors import UsageError
from . import scoring
from .budget import fit_budget
from .candidates import gather
from .expand import expand
from .ladder import run_gate, token_overlap
from .mmr import mmr_order
from .types import Candidate, RecallHit, RecallResult, ScoreTerms, StageCount

if TYPE_CHECKING:  # pragma: no cover
    from ..index import SearchIndex

__all__ = ["RecallOptions", "RecallHit", "RecallResult", "ScoreTerms", "StageCount", "Candidate", "run_recall",
           "ACTIVE", "INACTIVE_STATUSES"]

ACTIVE = "active"
INACTIVE_STATUSES = ("pending_review", "rejected", "quarantined", "superseded", "archived", "forgotten")


@dataclass
class RecallOptions:
    """Per-call choices; anything left None comes from ``RecallSettings``."""

    top_k: int | None = None
    namespace: str | None = None
    category: str | None = None
    budget_chars: int | None = None
    statuses: Sequence[str] | None = None
    """Statuses admitted; default only 'active'. ``include_inactive`` admits every status."""
    include_inactive: bool = False
    settings: RecallSettings | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise UsageError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise UsageError("query must not be empty")
    return query


def run_recall(index: "SearchIndex", query: str, options: RecallOptions, settings: RecallSettings,
               fresh: dict[str, Any] | None = None) -> RecallResult:
    """Run the pipeline against an index that ``ensure_fresh`` has just checked."""
    from ..index.bm25 import query_terms

    t_start = time.perf_counter()
    s = options.settings or settings
    query = _check_query(query)
    text = query[: max(1, s.max_query_chars)]
    top_k = options.top_k if options.top_k is not None else s.top_k
    if top_k <= 0:
        raise UsageError(f"top_k must be a positive integer, got {top_k}")
    budget = options.budget_chars if options.budget_chars is not None else s.budget_chars
    if budget < 0:
        raise UsageError(f"budget_chars must be 0 (no limit) or positive, got {budget}")
    timings: dict[str, float] = {}
    terms = query_terms(text, stopwords=s.query_stopwords)
    t = time.perf_counter()
    qvec = index.embed_query(text)
    timings["embed"] = (time.perf_counter() - t) * 1000

    if options.include_inactive:
        allowed: set[str] | None = None
    else:
        allowed = set(options.statuses) if options.statuses else {ACTIVE}
    namespaces = [options.namespace] if options.namespace else None
    categories = [options.category] if options.category else None
    boosts = {"title": s.boost_title, "body": s.boost_body, "tags": s.boost_tags, "near": s.boost_near,
              "far": s.boost_far, "when": s.boost_when}

    with index.lock:
        snap, bm25, catalog = index.view()
        stages: list[StageCount] = []
        live = snap.mask()
        scope = snap.mask(namespaces=namespaces, categories=None)
        stages.append(StageCount("namespace-scope", int(live.sum()), int(scope.sum()),
                                 f"namespace={options.namespace}" if options.namespace else ""))
        if categories:
            narrowed = scope & snap.mask(categories=categories)
            stages.append(StageCount("category-scope", int(scope.sum()), int(narrowed.sum()),
                                     f"category={options.category}"))
            scope = narrowed

        t = time.perf_counter()
        vec = snap.scores(qvec, s.context_weight)
        timings["vector"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        depth = max(s.candidates, top_k)
        cands = gather(snap, bm25, vec, terms, depth=depth, boosts=boosts, mask=scope, namespaces=namespaces,
                       categories=categories, statuses=None)
        timings["bm25"] = (time.perf_counter() - t) * 1000

        def status_ok(c: Candidate) -> bool:
            return allowed is None or snap.status_of(c.row) in allowed

        admitted, stage = run_gate("status-active", cands, status_ok,
                                   "rejected " + ", ".join(sorted({snap.status_of(c.row) for c in cands
                                                                   if not status_ok(c)})))
        if allowed is not None and len(admitted) < min(depth, len(cands)):
            # Inactive memories crowded the retrievers: fetch again within the allowed statuses.
            pushed = snap.mask(namespaces=namespaces, categories=categories, statuses=sorted(allowed))
            more = gather(snap, bm25, vec, terms, depth=depth, boosts=boosts, mask=pushed & scope,
                          namespaces=namespaces, categories=categories, statuses=sorted(allowed))
            seen = {c.row for c in cands}
            extra = [c for c in more if c.row not in seen]
            for c in extra:
                c.admitted_by.append("status-active")
            # Ranks from the deeper search replace the shallow ones for the admitted set.
            ranks = {c.row: c for c in more}
            for c in admitted:
                if c.row in ranks:
                    c.vector_rank, c.bm25_rank, c.bm25 = ranks[c.row].vector_rank, ranks[c.row].bm25_rank, ranks[c.row].bm25
            admitted += extra
            stage = StageCount(stage.name, stage.considered + len(extra), len(admitted), stage.reason)
        stages.append(stage)
        if s.confidence_floor > 0:
            admitted, stage = run_gate("confidence-floor", admitted,
                                       lambda c: float(snap.confidence[c.row]) >= s.confidence_floor,
                                       f"below-confidence-floor ({s.confidence_floor})")
            stages.append(stage)
        if s.token_overlap_floor > 0 and terms:
            from ..index.bm25 import analyze

            texts = catalog.hit_fields([c.path for c in admitted])
            overlap = {c.row: token_overlap(terms, set(analyze(texts.get(c.path, ({}, ""))[1])))
                       for c in admitted}
            admitted, stage = run_gate("token-overlap", admitted, lambda c: overlap[c.row] >= s.token_overlap_floor,
                                       "below-token-overlap-floor")
            stages.append(stage)

        # --- scoring: every term is named; final = their sum ---
        t = time.perf_counter()
        norms = scoring.norms_for(admitted)
        now = time.time()

        def score(c: Candidate) -> None:
            r = c.row
            if s.fusion == "rrf":
                c.terms.vector = scoring.rrf_term(c.vector_rank, s.rrf_k, s.weight_vector)
                c.terms.bm25 = scoring.rrf_term(c.bm25_rank, s.rrf_k, s.weight_bm25)
            else:
                c.terms.vector = scoring.vector_term(c.cosine, norms, s.weight_vector)
                c.terms.bm25 = scoring.bm25_term(c.bm25, norms, s.weight_bm25)
            c.terms.importance = scoring.importance_term(float(snap.importance[r]), s.weight_importance)
            c.terms.recency = scoring.recency_term(float(snap.updated[r]), now, s.recency_half_life_days, s.weight_recency)
            c.terms.status = 0.0 if snap.status_of(r) == ACTIVE else -abs(s.inactive_penalty)

        for c in admitted:
            score(c)
        timings["score"] = (time.perf_counter() - t) * 1000

        # --- episode expansion ---
        if s.episode_expansion and s.score_propagation_alpha > 0 and admitted:
            def make(r: int) -> Candidate | None:
                if not scope[r] or (allowed is not None and snap.status_of(r) not in allowed):
                    return None
                if s.confidence_floor > 0 and float(snap.confidence[r]) < s.confidence_floor:
                    return None
                c = Candidate(r, snap.paths[r], snap.ids[r], float(vec.combined[r]), float(vec.chunk[r]),
                              float(vec.context[r]))
                c.admitted_by.extend(st.name for st in stages if st.name not in ("namespace-scope", "category-scope"))
                score(c)
                return c

            stages.append(expand(snap, admitted, seeds=s.expansion_seeds, window=s.expansion_window,
                                 alpha=s.score_propagation_alpha, make=make))
        for c in admitted:
            c.admitted_by[:0] = [n for n in ("namespace-scope", "category-scope") if any(st.name == n for st in stages)]

        # --- MMR over the best pool, then top-k ---
        ranked = sorted(admitted, key=lambda c: (-c.terms.final, c.path))
        pool = ranked[: max(s.mmr_pool, top_k)]
        if s.mmr_lambda < 1.0 and len(pool) > 1:
            vectors = snap.doc_vectors([c.row for c in pool])
            order, penalties = mmr_order([c.terms.final for c in pool], vectors, s.mmr_lambda, len(pool))
            for i, p in zip(order, penalties):
                pool[i].terms.mmr_penalty = p
            pool = [pool[i] for i in order]
            stages.append(StageCount("mmr-diversify", len(ranked), len(pool), f"lambda={s.mmr_lambda}"))
            for c in pool:
                c.admitted_by.append("mmr-diversify")
        top = pool[:top_k]
        stages.append(StageCount("top-k", len(pool), len(top), f"k={top_k}"))
        for c in top:
            c.admitted_by.append("top-k")

        # --- budget fit ---
        fields = catalog.hit_fields([c.path for c in top])
        contents = [fields.get(c.path, ({}, ""))[1] for c in top]
        kept, used = fit_budget([len(x) for x in contents], budget)
        stages.append(StageCount("budget-fit", len(top), len(kept), f"budget={budget} chars" if budget else "no limit"))
        hits = []
        for rank, i in enumerate(kept, 1):
            c = top[i]
            c.admitted_by.append("budget-fit")
            fm, content = fields.get(c.path, ({}, ""))
            hits.append(RecallHit(
                id=c.id, path=c.path, score=c.terms.final, content=content, frontmatter=fm,
                namespace=snap.namespace_of(c.row), category=snap.category_of(c.row), status=snap.status_of(c.row),
                rank=rank, terms=c.terms, signals=c.signals(), admitted_by=list(c.admitted_by)))
    timings["total"] = (time.perf_counter() - t_start) * 1000
    return RecallResult(query=query, hits=hits, stages=stages, terms=terms, namespace=options.namespace,
                        budget_chars=budget, budget_used=used, timings_ms=timings, index=fresh or {},
                        candidates=ranked)
