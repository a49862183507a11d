"""``run_recall``: the stages of one hybrid recall, in order, each recorded as it runs.

scope (namespace, category, the query's dates) → retrieval (BM25 ∪ vectors, plus what a tier
offers) → gates ([tag-match, as-of,] status-active, trust-zone, confidence-floor,
similarity-floor, token-overlap) → scoring (a plain sum of named terms) → episode expansion →
neighbour cap → optional rerank → re-rank pool → tiers → MMR → result limit → budget fit (trims
to passages). The ladder's counts are computed from every candidate's verdicts at the end
(:func:`remnic.recall.ladder.chain`), so they always chain.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from remnic.config import RecallSettings
from remnic.errors import UsageError

from . import dates, graph, neighbours, scoring, tiers
from .aspect import Aspect, aspect_of, proper_names
from .budget import fit_budget
from .candidates import as_similarity, gather
from .clock import LIVE, RecallClock
from .expand import expand
from .expansion import DocCounts, expansions, unembedded
from .expansion import describe as describe_expansions
from .filters import facts_table, filter_scope, make_filters
from .ladder import CANDIDATE_STAGES, RESULT_LIMIT, chain, drop, passed, pool_reason, rejected_summary, scope_stages
from .mmr import mmr_order
from .passages import PassageMatch, describe_matches, rank_passages
from .phrase import phrase_scope
from .pool import ACTIVE, ASSOCIATIONS, TRUST_STATUSES, Pool
from .project import ProjectContext, belongs
from .query import check_query, cut_query
from .rerank import rerank as rerank_stage
from .rerank import tier_note as rerank_note
from .types import Candidate, RecallHit, RecallResult, StageCount, TierReport

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.search import SearchIndex


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
    project: ProjectContext | None = None
    """The project the recall is for: its memories get ``recall.projectBoost``."""
    tags: Sequence[str] | None = None
    """Only memories tagged with any (``tag_match`` "any") or all ("all") of these (:mod:`.filters`)."""
    tag_match: str = "any"
    as_of: float | None = None
    """Only memories valid at this time (epoch seconds): begun by then, not invalidated or superseded."""
    settings: RecallSettings | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def resolve_limits(options: RecallOptions, s: RecallSettings) -> tuple[int, int]:
    top_k = options.top_k if options.top_k is not None else s.top_k
    if top_k <= 0:
        raise UsageError(f"top_k must be a positive integer, got {top_k}")
    budget = options.budget_chars if options.budget_chars is not None else s.budget_chars
    if budget < 0:
        raise UsageError(f"budget_chars must be 0 (no limit) or positive, got {budget}")
    return top_k, budget


def allowed_statuses(options: RecallOptions) -> set[str] | None:
    if options.include_inactive:
        return None
    return set(options.statuses) if options.statuses else {ACTIVE}


def run_recall(
    index: SearchIndex,
    query: str,
    options: RecallOptions,
    settings: RecallSettings,
    fresh: dict[str, Any] | None = None,
    clock: RecallClock = LIVE,
) -> RecallResult:
    """Run the pipeline against an index that ``ensure_fresh`` has just checked."""
    from remnic.index.bm25 import query_terms

    t_start = time.perf_counter()
    s = options.settings or settings
    query = check_query(query)
    text, cut = cut_query(query, s.max_query_chars)
    top_k, budget = resolve_limits(options, s)
    timings: dict[str, float] = {}
    language = index.language
    terms = query_terms(text, stopwords=s.query_stopwords, language=language)
    intent = tiers.intent_of(text, terms)
    t = time.perf_counter()
    focus, words = _prepare(index, text, terms, s, options.namespace)
    if focus is None and not words:
        qvec = index.embed_query(text)
    elif focus is None:
        qvec = index.embed_queries_and_words([text], words)[0]
    else:
        whole, part = index.embed_queries_and_words([text, focus.text], words)
        qvec = (1.0 - s.query_aspect_weight) * whole + s.query_aspect_weight * part
    timings["embed"] = (time.perf_counter() - t) * 1000

    allowed = allowed_statuses(options)
    namespaces = [options.namespace] if options.namespace else None
    categories = [options.category] if options.category else None
    boosts = {
        "title": s.boost_title,
        "body": s.boost_body,
        "tags": s.boost_tags,
        "near": s.boost_near,
        "far": s.boost_far,
    }
    now = clock.now_s()
    filters = make_filters(options.tags, options.tag_match, options.as_of)

    with index.lock:
        snap, bm25, catalog = index.view()
        live = snap.mask()
        scope = snap.mask(namespaces=namespaces, categories=None)
        # Scope is pushed into both retrievers, so every candidate is in scope; the scope stages
        # report the candidate pool (all admitted) and say in their reason how far scope narrowed.
        # A named namespace's count stands alone: a principal held to its namespace must not learn
        # how many memories the others hold.
        in_scope = int(scope.sum()) if options.namespace else int(live.sum())
        scope_notes = [
            (f"namespace={options.namespace}" if options.namespace else "all namespaces")
            + f": {in_scope} {'memory' if in_scope == 1 else 'memories'} in scope"
            + (f"; {cut}" if cut else "")
        ]
        if categories:
            narrowed = scope & snap.mask(categories=categories)
            of_category, before = int(narrowed.sum()), int(scope.sum())
            scope_notes.append(
                f"category={options.category}: {of_category} of {before} in scope, {before - of_category} left out"
            )
            scope = narrowed
        if focus is not None:
            scope_notes[0] += "; " + focus.describe(s.query_aspect_weight)
        scope_names = ["namespace-scope"] + (["category-scope"] if categories else [])
        if options.category != "entity":
            pages = graph.entity_page_rows(snap)
            if pages:  # walked by the graph tier, not returned: their timelines repeat the memories
                scope[pages] = False
                scope_notes[-1] += f"; {len(pages)} entity page(s) left to the graph tier"
        date_plan = dates.plan(text, now, s)
        months: list[str] | None = None
        if date_plan is not None:
            scope, note, months = dates.scope(date_plan, snap, scope)
            scope_names.append(dates.STAGE)
            scope_notes.append(note)
        phrase = phrase_scope(bm25, snap, text, s, language, scope)  # a query of stopwords only: a phrase
        if phrase is not None:
            scope_notes[0] += "; " + phrase.note
        when = dates.when_clauses(text, terms, now, s, language)  # the created-date field, bare numbers left out
        extra = [*when, *(date_plan.extra_terms if date_plan else [])]
        scope_notes[0] += dates.when_note(terms, when)
        t = time.perf_counter()
        expanded = expansions(index, bm25, text, terms, s, options.namespace)
        if expanded:
            weight = s.boost_body * s.query_expansion_weight
            extra = [*extra, *(("body", e.term, weight * e.similarity) for e in expanded)]
            scope_notes[0] += "; " + describe_expansions(expanded, s.query_expansion_weight)
        timings["expand"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        vec = as_similarity(
            snap.scores(qvec, s.context_weight, s.chunk_top_k, s.chunk_top_k_min_chunks), s.context_weight
        )
        timings["vector"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        depth = max(s.candidates, top_k)
        pool = Pool(snap, catalog, vec, scope, allowed, s, terms, now, scope_names)
        pool.language = language
        pool.expanded_by(bm25, boosts, extra, expanded)  # the similarity floor asks for a typed word's match
        if filters is not None:
            pool.filters, pool.facts = filters, facts_table(catalog, snap.gen)
        cands = gather(
            snap,
            bm25,
            vec,
            terms,
            depth=depth,
            boosts=boosts,
            mask=scope,
            namespaces=namespaces,
            categories=categories,
            statuses=None,
            months=months,
            extra=extra,
            passage_blend=s.passage_bm25_blend,
            paths=phrase.paths if phrase is not None else None,
        )
        refetched = 0
        ok = [c for c in cands if pool.status_ok(pool.status(c)) and pool.filtered_out(c.row) is None]
        statuses = pool.searched_statuses()
        if (allowed is not None or filters is not None) and len(ok) < min(depth, len(cands)):
            # Inactive or filtered-out memories crowded the retrievers: fetch again within what passes.
            pushed = snap.mask(namespaces=namespaces, categories=categories, statuses=statuses) & scope
            paths, slack = filter_scope(pool, filters, pushed, within=phrase is not None)
            more = gather(
                snap,
                bm25,
                vec,
                terms,
                depth=depth,
                boosts=boosts,
                mask=pushed,
                namespaces=namespaces,
                categories=categories,
                statuses=statuses,
                months=months,
                extra=extra,
                passage_blend=s.passage_bm25_blend,
                paths=paths,
                slack=slack,
            )
            seen = {c.row for c in cands}
            added = [c for c in more if c.row not in seen]
            # Ranks from the deeper search replace the shallow ones for the admitted set.
            ranks = {c.row: c for c in more}
            for c in ok:
                if c.row in ranks:
                    c.vector_rank, c.bm25_rank, c.bm25, c.bm25_passage = (
                        ranks[c.row].vector_rank,
                        ranks[c.row].bm25_rank,
                        ranks[c.row].bm25,
                        ranks[c.row].bm25_passage,
                    )
            cands += added
            refetched = len(added)
        timings["bm25"] = (time.perf_counter() - t) * 1000
        retrieved = len(cands)
        for c in cands:
            pool.add(c)

        # --- offers from tiers (before the gates, so they walk them like everyone) ---
        procedural = tiers.offer_procedures(pool, intent)
        recent = tiers.offer_recent(pool, intent, top_k)

        # --- the gates ---
        tiers.select_review(pool, pool.cands)
        if s.token_overlap_floor > 0 and terms:
            pool.load(c.row for c in pool.cands)
        for c in list(pool.cands[:retrieved]):
            pool.gate(c)

        # --- scoring: every term is named; final = their sum ---
        t = time.perf_counter()
        admitted = pool.alive()
        # Normalisers come from what the gates admitted on their own (not what a tier kept), plus what only the
        # similarity floor dropped (or recent-scan kept past it): junk must not stretch the survivors apart.
        norms = scoring.norms_for(
            [
                c
                for c in pool.cands
                if (c.dropped_at is None and c.rejected_by in (None, "similarity-floor"))
                or c.dropped_at == "similarity-floor"
            ]
        )

        def score(c: Candidate) -> None:
            r = c.row
            if s.fusion == "rrf":
                c.terms.vector = scoring.rrf_term(c.vector_rank, s.rrf_k, s.weight_vector)
                c.terms.bm25 = scoring.rrf_term(c.bm25_rank, s.rrf_k, s.weight_bm25)
            else:
                c.terms.vector = scoring.vector_term(c.cosine, norms, s.weight_vector)
                c.terms.bm25 = scoring.bm25_term(c.bm25, norms, s.weight_bm25)
            if date_plan is not None:
                c.terms.date = date_plan.date_term(snap, r, s.weight_states_time)
            c.terms.importance = scoring.importance_term(float(snap.importance[r]), s.weight_importance)
            status = pool.status(c)
            active = status == ACTIVE
            # A forgotten or superseded memory's ``updated`` is when that happened: no recency from it.
            recency_w = s.weight_recency if active or status in TRUST_STATUSES else 0.0
            said = scoring.said_ts(pool.fm(r), float(snap.updated[r])) if recency_w else float("nan")
            c.terms.recency = scoring.recency_term(said, now, s.recency_half_life_days, recency_w)
            c.terms.status = 0.0 if active else -abs(s.inactive_penalty)
            if options.project is not None and s.project_boost > 0 and belongs(pool.fm(r), options.project):
                c.terms.project = s.project_boost

        if (options.project is not None and s.project_boost > 0) or s.weight_recency:
            pool.load(c.row for c in admitted)  # one catalog read for every admitted memory's frontmatter
        for c in admitted:
            score(c)
        pool.scorer = score
        timings["score"] = (time.perf_counter() - t) * 1000

        # --- episode expansion (siblings enter the pool and walk the gates) ---
        expansion: StageCount | None = None
        if s.episode_expansion and s.score_propagation_alpha > 0 and admitted:
            own = [c for c in admitted if c.rejected_by is None]
            expansion = expand(
                snap,
                own,
                seeds=s.expansion_seeds,
                window=s.expansion_window,
                alpha=s.score_propagation_alpha,
                make=lambda r: pool.make(r, "episode"),
            )

        # --- in an episode a question lends its match to the reply after it ---
        replies: dict[int, int] = {}
        if s.question_penalty > 0 or s.reply_alpha > 0:
            top_now = sorted(pool.alive(), key=lambda c: c.rank_key)[: max(s.mmr_pool, top_k)]
            if any(snap.episode[c.row] >= 0 for c in top_now):
                replies = neighbours.lend_to_replies(pool, top_now, s.question_penalty, s.reply_alpha)

        # --- neighbours never outrank the turn they borrowed their match from ---
        if s.neighbour_cap and s.neighbor_window > 0 and terms:
            top_now = sorted(pool.alive(), key=lambda c: c.rank_key)[: max(s.mmr_pool, top_k)]
            if any(snap.episode[c.row] >= 0 for c in top_now):
                neighbours.cap_neighbours(
                    pool, top_now, neighbours.idf_weights(bm25, terms), s.neighbor_window, replies
                )

        # --- the optional cross-encoder rerank of the best fused candidates ---
        reranked: StageCount | None = None
        if s.rerank:
            t = time.perf_counter()
            best_first = sorted(pool.alive(), key=lambda c: c.rank_key)
            reranked = rerank_stage(pool, best_first, text, s, pinned=clock.pinned)
            timings["rerank"] = (time.perf_counter() - t) * 1000

        # --- the re-rank pool, then the tiers on it ---
        ranked = sorted(pool.alive(), key=lambda c: c.rank_key)
        size = max(s.mmr_pool, top_k)
        head = ranked[:size] + [c for c in ranked[size:] if c.row in pool.recent_rows]  # asked for: judged
        t_tier = clock.perf_ms()
        t = time.perf_counter()
        outcome = tiers.apply(pool, intent, head, top_k)
        tier_ms = clock.perf_ms() - t_tier
        timings["tiers"] = (time.perf_counter() - t) * 1000
        head.sort(key=lambda c: (c.served_by != "direct-answer", *c.rank_key))
        in_head = {c.row for c in head}
        for c in pool.alive():
            if c.row not in in_head:
                drop(c, "mmr-diversify")
        if s.mmr_lambda < 1.0 and len(head) > 1:
            vectors = snap.doc_vectors([c.row for c in head])
            order, penalties = mmr_order([c.terms.final for c in head], vectors, s.mmr_lambda, len(head))
            for i, p in zip(order, penalties):
                head[i].terms.mmr_penalty = p
            head = [head[i] for i in order]
        head = tiers.serving_order(pool, head, top_k, inactive_last=options.include_inactive)
        for c in head:
            passed(c, "mmr-diversify")
        top = head[:top_k]
        for c in head[top_k:]:
            drop(c, RESULT_LIMIT)
        for c in top:
            passed(c, RESULT_LIMIT)

        # --- budget fit: trims long hits to their best passages instead of dropping them ---
        pool.load(c.row for c in top)
        contents = [pool.content(c.row) for c in top]
        matches = passage_matches(catalog, snap, top, contents, qvec, terms, s.passage_chars, language)
        spans = [[(m.start, m.end) for m in matches.get(i, [])] for i in range(len(top))]
        fitted, used = fit_budget(contents, spans, budget, s.budget_min_chars)
        kept = {f.index: f for f in fitted}
        hits: list[RecallHit] = []
        trimmed = 0
        for i, c in enumerate(top):
            f = kept.get(i)
            if f is None:
                drop(c, "budget-fit")
                continue
            passed(c, "budget-fit")
            trimmed += f.trimmed
            if c.served_by == "hybrid" and not c.tier_note:
                c.tier_note = tiers.hybrid_note(c)
            if i in matches:
                c.tier_note = f"{c.tier_note}; {describe_matches(matches[i], contents[i])}".lstrip("; ")
            fm = dict(pool.fm(c.row))
            status = snap.status_of(c.row)
            ns = snap.namespace_of(c.row)
            hits.append(
                RecallHit(
                    id=c.id,
                    path=c.path,
                    score=c.terms.final,
                    content=f.text,
                    frontmatter=fm,
                    namespace=ns,
                    category=snap.category_of(c.row),
                    status=status,
                    rank=len(hits) + 1,
                    terms=c.terms,
                    signals=c.signals(),
                    admitted_by=list(c.admitted_by),
                    served_by=c.served_by,
                    rejected_by=c.rejected_by,
                    tier_note=c.tier_note,
                    graph_path=c.graph_path,
                    graph_edge_confidences=c.graph_edge_confidences,
                    judged_at=now,
                    as_of=options.as_of,
                    recall_namespace=options.namespace,
                    passages=[m.to_dict() for m in matches[i][:3]] if i in matches else None,
                    trimmed=f.trimmed,
                    content_chars=len(contents[i]),
                )
            )

        entered = _retrieval_reason(pool, depth, retrieved, refetched, procedural, recent)
        index_stages = scope_stages(scope_names, scope_notes, len(pool.cands), entered)
        reasons = _reasons(pool, s, top_k, budget, len(head))
        if trimmed:
            reasons["budget-fit"] += f"; {trimmed} trimmed to their best passages"
        stages = chain(index_stages, pool.cands, (*pool.filter_stages, *CANDIDATE_STAGES), reasons)
        report = _tier_report(hits, pool, outcome, len(head), tier_ms, expansion, reranked)
        report.vectors_pending = snap.vectorless
    timings["total"] = (time.perf_counter() - t_start) * 1000
    # Hits and the rest of the re-rank pool in their final order, then everyone else best first.
    final_order = {id(c): i for i, c in enumerate(head)}
    everyone = sorted(
        pool.cands, key=lambda c: (id(c) not in final_order, final_order.get(id(c), 0), -c.terms.final, c.path)
    )
    return RecallResult(
        query=query,
        hits=hits,
        stages=stages,
        terms=terms,
        namespace=options.namespace,
        budget_chars=budget,
        budget_used=used,
        timings_ms=timings,
        index={**(fresh or {}), **({"vectorsPending": report.vectors_pending} if report.vectors_pending else {})},
        candidates=everyone,
        tier=report,
        expansion=expansion,
        rerank=reranked,
        clock_ms=round(now * 1000),
        result_limit=top_k,
        notes=[cut] if cut else [],
        warnings=[phrase.warning] if phrase is not None else [],
    )


def _prepare(
    index: SearchIndex, text: str, terms: Sequence[str], s: RecallSettings, namespace: str | None
) -> tuple[Aspect | None, list[str]]:
    """The query's aspect (see :mod:`remnic.recall.aspect`) or None, and the query words the
    expansion will embed (embedded with the query, in one model call); a name's share counts only
    ``namespace``'s memories (:class:`.expansion.DocCounts`)."""
    aspect = s.query_aspect_weight > 0 and bool(proper_names(text))
    expanding = s.query_expansion_weight > 0 and s.query_expansion_terms > 0 and bool(terms)
    if not aspect and not expanding:
        return None, []
    from remnic.index.bm25 import analyze, query_terms

    with index.lock:
        bm25 = index.view()[1]
        words = unembedded(index, bm25, text, terms, s, namespace) if expanding else []
        if not aspect:
            return None, words
        counts = DocCounts.of(bm25, namespace)
        n = max(1, counts.num_docs)

        def share(name: str) -> float:
            tokens = analyze(name, language=index.language)
            # A term's document frequency still counts replaced documents until their segment merges.
            return min(1.0, min((counts.doc_freq(t) / n for t in tokens), default=0.0))

        focus = aspect_of(
            text,
            share,
            s.query_aspect_name_ratio,
            lambda rest: bool(query_terms(rest, stopwords=s.query_stopwords, language=index.language)),
        )
        return focus, words


def passage_matches(
    catalog: Any,
    snap: Any,
    top: Sequence[Candidate],
    contents: Sequence[str],
    qvec: Any,
    terms: Sequence[str],
    passage_chars: int,
    language: str = "english",
) -> dict[int, list[PassageMatch]]:
    """Hit position → its passages best first, for the long memories among the hits."""
    from remnic.index.bm25 import analyze

    long = [c.path for c, text in zip(top, contents) if len(text) > passage_chars]
    if not long:
        return {}
    maps = catalog.passages(long)
    out = {}
    for i, c in enumerate(top):
        pmap = maps.get(c.path)
        if pmap:
            ranked = rank_passages(
                contents[i],
                pmap,
                snap.chunk_sims(c.row, qvec),
                terms,
                lambda t: analyze(t, language=language),
                c.bm25_passage,
            )
            if ranked:
                out[i] = ranked
    return out


def _retrieval_reason(pool: Pool, depth: int, retrieved: int, refetched: int, procedural: int, recent: int) -> str:
    parts = [f"bm25 ∪ vector top-{depth} gave {retrieved - refetched} candidates"]
    if refetched:
        parts.append(
            f"+{refetched} refetched within the allowed statuses" + (" and filters" if pool.filters is not None else "")
        )
    counts = {
        "procedural": procedural,
        "recent-scan": recent,
        "episode siblings": sum(1 for c in pool.cands if c.entered_by == "episode"),
        "graph": sum(1 for c in pool.cands if c.entered_by == "graph"),
    }
    parts += [f"+{n} {name}" for name, n in counts.items() if n]
    return "; ".join(parts)


def _reasons(pool: Pool, s: RecallSettings, top_k: int, budget: int, head: int) -> dict[str, str]:
    cands = pool.cands
    status = lambda c: pool.snap.status_of(c.row)  # noqa: E731 - a label for the summaries
    out = {
        "status-active": rejected_summary(cands, "status-active", status)
        or ("admits every status" if pool.allowed is None else "admits " + ", ".join(sorted(pool.allowed))),
        "confidence-floor": rejected_summary(cands, "confidence-floor", lambda c: "below-confidence-floor")
        or f"floor={s.confidence_floor:g}",
        "similarity-floor": rejected_summary(cands, "similarity-floor", lambda c: "below-similarity-floor")
        or f"floor={s.min_similarity:g} (candidates with no BM25 match on a word typed)",
        "token-overlap": rejected_summary(cands, "token-overlap", lambda c: "below-token-overlap-floor")
        or f"floor={s.token_overlap_floor:g}",
        "mmr-diversify": pool_reason(cands, max(s.mmr_pool, top_k), f"lambda={s.mmr_lambda:g}"),
        RESULT_LIMIT: f"k={top_k}",
        "budget-fit": f"budget={budget} chars" if budget else "no limit",
    }
    for name in pool.filter_stages:
        assert pool.filters is not None
        why = rejected_summary(cands, name, lambda c: (pool.filtered_out(c.row) or ("", "?"))[1])
        out[name] = pool.filters.describe(name) + (f"; {why}" if why else "")
    out["trust-zone"] = pool.trust_reason(rejected_summary(cands, "trust-zone", status))
    assoc = sum(
        1 for c in cands if c.rejected_by == "token-overlap" and c.dropped_at is None and c.entered_by in ASSOCIATIONS
    )
    if assoc and s.token_overlap_floor > 0:
        out["token-overlap"] += f"; {assoc} episode/graph neighbour(s) exempt"
    return out


def _tier_report(
    hits: list[RecallHit],
    pool: Pool,
    outcome: tiers.TierOutcome,
    considered: int,
    latency_ms: float,
    expansion: StageCount | None,
    reranked: StageCount | None = None,
) -> TierReport:
    lead = hits[0].served_by if hits else "hybrid"
    anchors = [h.path for h in hits if h.served_by == lead][:3]
    if lead == "direct-answer":
        reason = outcome.direct_reason
    elif lead == "hybrid":
        reason = "bm25 ∪ vector fusion" + (
            f"; direct-answer not taken: {outcome.direct_reason}" if outcome.direct_reason else ""
        )
        if expansion is not None and expansion.admitted:
            reason += f"; {expansion.admitted} episode sibling(s) lifted"
        if reranked is not None:
            reason += f"; {rerank_note(reranked)}"
    else:
        reason = hits[0].tier_note
    return TierReport(lead, reason, considered, round(latency_ms, 3), anchors)
