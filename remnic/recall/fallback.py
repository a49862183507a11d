"""Recall without the index: the recent-scan tier reading the memory files themselves.

Used when the index cannot serve (its directory is corrupt and cannot be
rebuilt, tantivy or the embedding model cannot load). Every memory file in
scope is a candidate; it must share at least one query word; the score is

    final = importance + recency + tierPrior,   tierPrior = weightBm25 × token overlap
                                                           + recentScanPrior × freshness

so the answer favours memories that match more of the query and were updated
recently. The ladder is the same as the indexed recall's, and its counts chain.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from remnic.config import RecallSettings
from remnic.memfile.model import MemoryRecord, jsonable, parse_time

from . import scoring
from .budget import fit_budget
from .clock import LIVE, RecallClock
from .filters import facts_of, make_filters
from .ladder import CANDIDATE_STAGES, RESULT_LIMIT, chain, drop, passed, pool_reason, rejected_summary, token_overlap
from .pipeline import RecallOptions, allowed_statuses, resolve_limits
from .pool import ACTIVE, TRUST_STATUSES
from .query import check_query, cut_query
from .types import Candidate, RecallHit, RecallResult, StageCount, TierReport

_WORD = re.compile(r"[A-Za-z0-9]+")
_FALLBACK_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
        "you",
    ]
)


def analyzer() -> tuple[Callable[[str, bool], list[str]], Callable[[str], set[str]]]:
    """(query terms, document tokens): tantivy's analyzer when it loads, else plain lowercase words."""
    try:
        from remnic.index.bm25 import analyze, query_terms

        return (lambda text, stop: query_terms(text, stopwords=stop)), (lambda text: set(analyze(text)))
    except Exception:  # noqa: BLE001 - the fallback must work without tantivy

        def words(text: str) -> list[str]:
            return [w.lower() for w in _WORD.findall(text) if len(w) < 40]

        def q(text: str, stop: bool) -> list[str]:
            ws = [w for w in words(text) if not stop or w not in _FALLBACK_STOP] or words(text)
            return list(dict.fromkeys(ws))[:64]

        return q, (lambda text: set(words(text)))


def scan_recall(
    records: Sequence[MemoryRecord],
    query: str,
    options: RecallOptions,
    settings: RecallSettings,
    *,
    reason: str,
    clock: RecallClock = LIVE,
) -> RecallResult:
    t_start = time.perf_counter()
    t_tier = clock.perf_ms()
    s = options.settings or settings
    query = check_query(query)
    top_k, budget = resolve_limits(options, s)
    q_terms, tokens = analyzer()
    text, cut = cut_query(query, s.max_query_chars)
    terms = q_terms(text, s.query_stopwords)
    now = clock.now_s()
    allowed = allowed_statuses(options)
    filters = make_filters(options.tags, options.tag_match, options.as_of)
    filter_stages = filters.stages if filters is not None else ()
    verdicts: dict[int, tuple[str, str] | None] = {}

    scoped = [r for r in records if not options.namespace or r.namespace == options.namespace]
    stages = [
        StageCount(
            "namespace-scope",
            len(scoped) if options.namespace else len(records),  # other namespaces' counts stay private
            len(scoped),
            (f"namespace={options.namespace}" if options.namespace else "all namespaces") + (f"; {cut}" if cut else ""),
        )
    ]
    if options.category:
        narrowed = [r for r in scoped if r.category == options.category]
        stages.append(StageCount("category-scope", len(scoped), len(narrowed), f"category={options.category}"))
        scoped = narrowed
    names = [st.name for st in stages]
    last = stages[-1]
    last.reason += f"; index unavailable: scanned {len(scoped)} memory files in scope"
    by_row = {i: rec for i, rec in enumerate(scoped)}
    cands = []
    for i, rec in by_row.items():
        c = Candidate(i, rec.path, rec.id, 0.0, 0.0, 0.0)
        c.admitted_by = list(names)
        c.entered_by = "recent-scan"
        cands.append(c)

    floor = max(s.token_overlap_floor, 1e-9)  # a file scan must share at least one word with the query
    for c in cands:
        rec = by_row[c.row]
        status = rec.status
        if filters is not None:
            facts = facts_of(rec.frontmatter, rec.tags)
            verdicts[c.row] = filters.verdict(facts)
            status = filters.status_at(status, facts)  # as of ``asOf``: superseded later was active then
        else:
            verdicts[c.row] = None
        if any(_filter_gate(c, name, verdicts[c.row]) for name in filter_stages):
            continue
        if allowed is not None and status not in allowed and status not in TRUST_STATUSES:
            drop(c, "status-active")
            continue
        passed(c, "status-active")
        if allowed is not None and status in TRUST_STATUSES and status not in allowed:
            drop(c, "trust-zone")
            continue
        passed(c, "trust-zone")
        if s.confidence_floor > 0 and rec.confidence < s.confidence_floor:
            drop(c, "confidence-floor")
            continue
        passed(c, "confidence-floor")
        passed(c, "similarity-floor")  # no vectors in a file scan: the word-overlap floor below decides
        c.overlap = token_overlap(terms, tokens(rec.content)) if terms else 0.0
        if c.overlap < floor:
            drop(c, "token-overlap")
            continue
        passed(c, "token-overlap")
        updated = parse_time(rec.updated)
        c.terms.importance = scoring.importance_term(rec.importance, s.weight_importance)
        said = scoring.said_ts(rec.frontmatter, updated if updated is not None else float("nan"))
        c.terms.recency = scoring.recency_term(said, now, s.recency_half_life_days, s.weight_recency)
        c.terms.status = 0.0 if status == ACTIVE else -abs(s.inactive_penalty)
        window = s.recent_scan_window_days * 86400.0
        fresh = 0.0
        if updated is not None and window > 0:
            fresh = max(0.0, 1.0 - max(0.0, now - updated) / window)
        c.terms.tier_prior = s.weight_bm25 * c.overlap + s.recent_scan_prior * fresh
        c.served_by = "recent-scan"
        age = f", updated {max(0.0, now - updated) / 86400.0:.1f} day(s) ago" if updated is not None else ""
        c.tier_note = f"index unavailable: file scan, token-overlap {c.overlap:.2f}{age}"

    ranked = sorted((c for c in cands if c.alive), key=lambda c: c.rank_key)
    head = ranked[: max(s.mmr_pool, top_k)]
    for c in ranked[len(head) :]:
        drop(c, "mmr-diversify")
    for c in head:
        passed(c, "mmr-diversify")
    top = head[:top_k]
    for c in head[top_k:]:
        drop(c, RESULT_LIMIT)
    contents = [by_row[c.row].content for c in top]
    spans = [_passage_spans(text, terms, tokens, s.passage_chars) for text in contents]
    fitted, used = fit_budget(contents, spans, budget, s.budget_min_chars)
    kept = {f.index: f for f in fitted}
    hits: list[RecallHit] = []
    for i, c in enumerate(top):
        passed(c, RESULT_LIMIT)
        f = kept.get(i)
        if f is None:
            drop(c, "budget-fit")
            continue
        passed(c, "budget-fit")
        rec = by_row[c.row]
        fm = jsonable(rec.frontmatter)
        hits.append(
            RecallHit(
                id=rec.id,
                path=rec.path,
                score=c.terms.final,
                content=f.text,
                frontmatter=fm,
                namespace=rec.namespace,
                category=rec.category,
                status=rec.status,
                rank=len(hits) + 1,
                terms=c.terms,
                signals={"source": "file-scan", "tokenOverlap": round(c.overlap or 0.0, 6)},
                admitted_by=list(c.admitted_by),
                served_by="recent-scan",
                rejected_by=c.rejected_by,
                tier_note=c.tier_note,
                judged_at=now,
                as_of=options.as_of,
                recall_namespace=options.namespace,
                trimmed=f.trimmed,
                content_chars=len(rec.content),
            )
        )
    status_of = lambda c: by_row[c.row].status  # noqa: E731
    reasons = {
        "status-active": rejected_summary(cands, "status-active", status_of)
        or ("admits every status" if allowed is None else "admits " + ", ".join(sorted(allowed))),
        "trust-zone": rejected_summary(cands, "trust-zone", status_of) or "no quarantined or pending_review files",
        "confidence-floor": f"floor={s.confidence_floor:g}",
        "similarity-floor": "no vectors in a file scan",
        "token-overlap": "a file scan needs at least one query word",
        "mmr-diversify": pool_reason(cands, max(s.mmr_pool, top_k), "no vectors: relevance order"),
        RESULT_LIMIT: f"k={top_k}",
        "budget-fit": f"budget={budget} chars" if budget else "no limit",
    }
    for name in filter_stages:
        assert filters is not None
        why = rejected_summary(cands, name, lambda c: (verdicts.get(c.row) or ("", "?"))[1])
        reasons[name] = filters.describe(name) + (f"; {why}" if why else "")
    ladder = chain(stages, cands, (*filter_stages, *CANDIDATE_STAGES), reasons)
    latency = clock.perf_ms() - t_tier
    report = TierReport(
        "recent-scan",
        f"index unavailable ({reason}): scanned {len(scoped)} memory files, ranked by token overlap and recency",
        len(head),  # candidatesConsidered: the re-rank pool judged, as in an indexed recall (not every file)
        round(latency, 3),
        [h.path for h in hits[:3]],
    )
    order = {id(c): i for i, c in enumerate(head)}
    everyone = sorted(cands, key=lambda c: (id(c) not in order, order.get(id(c), 0), -c.terms.final, c.path))
    return RecallResult(
        query=query,
        hits=hits,
        stages=ladder,
        terms=terms,
        namespace=options.namespace,
        budget_chars=budget,
        budget_used=used,
        timings_ms={"total": (time.perf_counter() - t_start) * 1000},
        index={"action": "unavailable", "reason": reason},
        candidates=everyone,
        tier=report,
        clock_ms=round(now * 1000),
        result_limit=top_k,
        notes=[cut] if cut else [],
    )


def _filter_gate(c: Candidate, stage: str, rejected: tuple[str, str] | None) -> bool:
    """Record ``stage``'s verdict on ``c``; True when it dropped ``c``."""
    if rejected is not None and rejected[0] == stage:
        drop(c, stage)
        return True
    passed(c, stage)
    return False


def _passage_spans(
    text: str, terms: Sequence[str], words: Callable[[str], set[str]], passage_chars: int
) -> list[tuple[int, int]]:
    """A long file's passages, the ones holding most of the query's terms first (no vectors here)."""
    from remnic.index.text import TextRules, passages_for

    passages = passages_for(text, TextRules(passage_chars=passage_chars))
    if len(passages) < 2:
        return []
    wanted = set(terms)
    scored = [(-len(wanted & words(text[p.start : p.end])), p.start, p.end) for p in passages]
    return [(a, b) for _, a, b in sorted(scored)]
