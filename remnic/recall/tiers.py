"""The tiers that serve results besides plain hybrid fusion, each only on its own conditions.

They act on the re-rank pool (the best ``mmrPool`` candidates after scoring),
whose frontmatter and text are loaded once, and claim a candidate in this
order (a claimed candidate is not claimed again):

- **review-context** — a pending_review memory kept by the trust-zone gate (at most
  ``reviewContextMax``, each sharing ≥ ``reviewContextMinOverlap`` of the query terms),
  or a disputed one: shown flagged ``requires-review``, never as an answer. Not active,
  so it carries the ``status`` penalty.
- **direct-answer** — the best trusted decision/fact/principle (active, confidence ≥
  ``directAnswerMinConfidence``, importance ≥ ``directAnswerMinImportance``, token overlap ≥
  ``directAnswerMinOverlap``, not stale, not disputed) leading every other candidate by ≥
  ``directAnswerMargin``: pinned first with ``tierPrior = directAnswerPrior``.
- **procedural** — for how-to queries: procedures/skills with token overlap ≥
  ``proceduralMinOverlap`` get ``tierPrior = proceduralPrior``; procedures the retrievers missed
  are offered (up to ``proceduralMax``) before the gates.
- **graph** — one or two hops over links / [[wikilinks]] / shared entityRef from the strongest
  hits (:mod:`remnic.recall.graph`): a reached memory is lifted to ``graphAlpha × path
  confidence × seed score``; the lift is its ``tierPrior``.
- **recent-scan** — for queries about what is recent/new/changed. With topic words left besides
  the recency words (:data:`RECENCY_WORDS`), memories updated within ``recentScanWindowDays`` that
  share one get ``tierPrior = recentScanPrior × freshness``, and the newest of them (up to
  ``recentScanMax`` the retrievers found, and as many they missed, offered) are asked for past the
  similarity and word floors. A query about recency alone ("what changed recently?") asks for every
  memory of the window, newest first, up to top-k: each is asked for past the floors and lifted
  ahead of every older candidate. It is also the whole recall when the index cannot be used
  (:mod:`remnic.recall.fallback`).
- everything else is **hybrid**.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import graph as G
from .candidates import top_rows
from .filters import SUPERSEDED
from .ladder import exempt, passed
from .pool import ACTIVE, Pool
from .provenance import as_of_view, is_disputed, is_stale
from .types import Candidate

DIRECT_CATEGORIES = ("decision", "fact", "principle")
PROCEDURAL_CATEGORIES = ("procedure", "skill")

HOW_TO_RE = re.compile(
    r"\bhow\s+(?:do|does|can|should|would|could|to)\s+(?:i|we|you|one|they|people|to)\b|\bhow\s+to\b"
    r"|\bsteps?\s+(?:to|for)\b|\bprocedures?\b|\brunbooks?\b|\bplaybooks?\b|\binstructions?\b"
    r"|\bwhat(?:'s| is)\s+the\s+(?:process|procedure)\b|\bwalk\s+me\s+through\b",
    re.IGNORECASE,
)
RECENT_RE = re.compile(
    r"\b(?:recent|recently|lately|latest|newest|today|yesterday|this\s+week|last\s+week|just\s+now"
    r"|what(?:'s| is| has)\s+new|what\s+changed|(?:has|have|was|were)\s+(?:changed|updated))\b",
    re.IGNORECASE,
)
RECENCY_WORDS = (
    "recent recently lately latest newest new news today yesterday week just now changed change changes"
    " updated update updates happened happen happening anything"
)
"""Words of a recency query (:data:`RECENT_RE`) that ask only for recency, not for a topic: what is
left are its topic words. The generic words of such questions ("what happened lately?", "any news
lately?") are among them, and the phrase "going on" ("what is going on recently?": "going" alone would
make "what's new in Go?" a question about recency alone); docs/xray.md lists them."""
GOING_ON_RE = re.compile(r"\bgoing\s+on\b", re.IGNORECASE)


@dataclass
class Intent:
    how_to: bool = False
    recent: bool = False
    topic_terms: list[str] = field(default_factory=list)
    """The query terms without the words that only ask for recency."""

    @property
    def recency_only(self) -> bool:
        """A recency query naming no topic ("what changed recently?"): its recency is all it asks about."""
        return self.recent and not self.topic_terms


def intent_of(text: str, terms: Sequence[str]) -> Intent:
    how_to = bool(HOW_TO_RE.search(text))
    recent = bool(RECENT_RE.search(text))
    topic = list(terms)
    if recent:
        from remnic.index.bm25 import analyze

        recency = set(analyze(RECENCY_WORDS))
        if GOING_ON_RE.search(text):
            recency |= set(analyze("going on"))
        topic = [t for t in terms if t not in recency]
    return Intent(how_to, recent, topic)


# --------------------------------------------------------------------- before the gates


def select_review(pool: Pool, cands: Sequence[Candidate]) -> None:
    """Choose the pending_review candidates the trust-zone gate keeps as review context."""
    s = pool.s
    if not s.review_context or s.review_context_max <= 0 or pool.allowed is None or pool.chosen_statuses:
        return  # only a default recall (superseded added or not) adds review context; a status choice is kept
    pending = [c for c in cands if pool.status(c) == "pending_review" and pool.filtered_out(c.row) is None]
    if not pending:
        return
    pool.load(c.row for c in pending)
    ok = [c for c in pending if pool.overlap(c) >= s.review_context_min_overlap]
    ok.sort(key=lambda c: (-(c.overlap or 0.0), -(c.bm25 or 0.0), -c.cosine, c.path))
    pool.review_rows.update(c.row for c in ok[: s.review_context_max])


def offer_procedures(pool: Pool, intent: Intent) -> int:
    """How-to queries: procedures the retrievers missed, best by vector similarity, if they share words."""
    s = pool.s
    if not (s.procedural and intent.how_to and s.procedural_max > 0):
        return 0
    snap = pool.snap
    mask = pool.scope & snap.mask(
        categories=PROCEDURAL_CATEGORIES, statuses=sorted(pool.allowed) if pool.allowed is not None else None
    )
    rows = [
        int(r) for r in top_rows(pool.vec.combined, mask, max(s.procedural_max * 4, 8)) if int(r) not in pool.by_row
    ]
    if not rows:
        return 0
    pool.load(rows)
    added = 0
    for r in rows:
        if added >= s.procedural_max:
            break
        if pool.overlap_with(r, pool.terms) >= s.procedural_min_overlap:
            c = pool.make(r, "procedural", score=False)
            added += c is not None
    return added


def offer_recent(pool: Pool, intent: Intent, top_k: int, *, limit_probe: int | None = None) -> int:
    """Recency queries: the newest memories updated within the window are asked for. With topic words,
    those sharing one: up to ``recentScanMax`` the retrievers found, and up to ``recentScanMax`` they
    missed (offered). A query about recency alone asks for every one, newest first, up to ``top_k``
    found and offered together: a small repository, where the retrievers find everything, gets them
    all too.

    They walk the gates exempt from the similarity and token-overlap floors (:attr:`.Pool.recent_rows`):
    "what changed recently?" names no word of what changed, so their wording cannot match it.
    """
    s = pool.s
    only = intent.recency_only
    cap = top_k if only else s.recent_scan_max
    if not (s.recent_scan and intent.recent and cap > 0):
        return 0
    snap = pool.snap
    n = snap.n
    updated = snap.updated[:n]
    window = s.recent_scan_window_days * 86400.0
    with np.errstate(invalid="ignore"):
        recent = pool.scope & (updated >= pool.now_s - window) & (updated <= pool.now_s + 86400.0)
    if pool.allowed is not None:
        recent &= snap.mask(statuses=sorted(pool.allowed))
    probe = max(limit_probe or s.recent_scan_probe, cap if only else 0)
    rows = [int(r) for r in top_rows(np.nan_to_num(updated, nan=-np.inf), recent, probe)]
    if not only:
        pool.load(rows)
    found = added = 0
    for r in rows:
        if (found + added >= cap) if only else (found >= cap and added >= cap):
            break
        c = pool.by_row.get(r)
        if (c is not None and c.dropped_at is not None) or pool.filtered_out(r) is not None:
            continue  # gated and left out already, or rejected by the caller's filters (no tier passes them)
        if not only and pool.overlap_with(r, intent.topic_terms) <= 0:
            continue
        if c is not None and (only or found < cap):  # found: its gates are still to come
            pool.recent_rows.add(r)
            found += 1
        elif c is None and (only or added < cap):
            pool.recent_rows.add(r)  # before its gates run: it is asked for past the floors
            if pool.make(r, "recent-scan", score=False) is not None:
                added += 1
            else:
                pool.recent_rows.discard(r)
    return added


# --------------------------------------------------------------------- on the re-rank pool


@dataclass
class TierOutcome:
    direct: Candidate | None = None
    direct_reason: str = ""
    graph_added: int = 0


def _claimable(c: Candidate) -> bool:
    return c.served_by == "hybrid"


def apply(pool: Pool, intent: Intent, ranked: list[Candidate], top_k: int) -> TierOutcome:
    """Run the tiers over ``ranked`` (the re-rank pool, best first); may append graph neighbours to it."""
    s = pool.s
    out = TierOutcome()
    pool.load(c.row for c in ranked[:top_k])  # the likely hits: budget-fit reads them anyway
    pool.load_flagged([c.row for c in ranked[top_k:]])
    _reinforce(pool, ranked)
    for c in ranked:  # review-context first: safety over everything
        fm, status = pool.known_fm(c.row), pool.status(c)
        # pending_review the recall asked for (its status, or every status) is what it wanted, not context
        pending = status == "pending_review" and not pool.status_ok(status)
        if s.review_context and (pending or is_disputed(fm)):
            c.served_by = "review-context"
            c.tier_note = (
                "pending review: shown for review, not as an answer"
                if pending
                else "disputed: shown for review, not as an answer"
            )
    if s.direct_answer and s.recent_scan and intent.recency_only and pool.recent_rows:
        # "what changed recently?" asks for what is new, not for a fact: no old decision is pinned above it
        out.direct_reason = "a query about recency alone: recent-scan lists the newest memories first"
    elif s.direct_answer:
        _direct_answer(pool, ranked, out)
    if s.procedural and intent.how_to:
        for c in ranked:
            if _claimable(c) and pool.snap.category_of(c.row) in PROCEDURAL_CATEGORIES:
                ov = pool.overlap(c)
                if ov >= s.procedural_min_overlap:
                    c.terms.tier_prior = s.procedural_prior
                    c.served_by = "procedural"
                    c.tier_note = f"how-to query: {pool.snap.category_of(c.row)} sharing {ov:.2f} of the query terms"
    if s.graph and s.graph_max_hops > 0 and s.graph_max_nodes > 0:
        out.graph_added = _graph(pool, ranked)
    if s.recent_scan and intent.recent:
        _recent(pool, intent, ranked)
    return out


def _reinforce(pool: Pool, ranked: Sequence[Candidate]) -> None:
    s = pool.s
    if s.reinforcement_weight <= 0 or s.reinforcement_cap <= 0:
        return
    for c in ranked:
        count = pool.known_fm(c.row).get("reinforcement_count")
        if isinstance(count, (int, float)) and not isinstance(count, bool) and count > 0:
            c.terms.reinforcement = (
                s.reinforcement_weight * min(float(count), s.reinforcement_cap) / s.reinforcement_cap
            )


def _direct_answer(pool: Pool, ranked: Sequence[Candidate], out: TierOutcome) -> None:
    s, snap = pool.s, pool.snap
    qualified: list[Candidate] = []
    closest = ""
    for c in ranked:
        r = c.row
        if not _claimable(c) or snap.category_of(r) not in DIRECT_CATEGORIES or pool.status(c) != ACTIVE:
            continue
        imp, conf = float(snap.importance[r]), float(snap.confidence[r])
        low = [
            f"{name} {value:.2f} < {floor}"
            for name, value, floor in (
                ("importance", imp, s.direct_answer_min_importance),
                ("confidence", conf, s.direct_answer_min_confidence),
            )
            if value < floor
        ]
        if low:
            closest = closest or f"{c.id}: {', '.join(low)}"
            continue
        # Judged as provenance judges it: with asOf, as the memory stood then (a memory superseded
        # later was active and not stale at that time).
        as_of = pool.filters.as_of if pool.filters is not None else None
        fm, _ = as_of_view(pool.fm(r), snap.status_of(r), as_of) if as_of is not None else (pool.fm(r), ACTIVE)
        stale, why = is_stale(fm, ACTIVE, pool.now_s if as_of is None else as_of)
        if stale or is_disputed(fm):
            closest = closest or f"{c.id}: " + (f"stale ({', '.join(why)})" if stale else "disputed")
            continue
        ov = pool.overlap(c)
        if ov < s.direct_answer_min_overlap:
            closest = closest or f"{c.id}: token-overlap {ov:.2f} < {s.direct_answer_min_overlap}"
            continue
        qualified.append(c)
    if not qualified:
        out.direct_reason = (
            "no trusted decision/fact/principle with importance ≥ "
            f"{s.direct_answer_min_importance}, confidence ≥ {s.direct_answer_min_confidence}"
            f" and token-overlap ≥ {s.direct_answer_min_overlap}" + (f" ({closest})" if closest else "")
        )
        return
    best = max(qualified, key=lambda c: (c.terms.final, c.path))
    rivals = [c for c in ranked if c is not best]
    rival = max(rivals, key=lambda c: c.terms.final) if rivals else None
    margin = best.terms.final - rival.terms.final if rival is not None else float("inf")
    if margin < s.direct_answer_margin:
        assert rival is not None  # without one the margin is infinite
        # The best eligible memory may score below an ineligible rival: then it trails it, not leads it.
        gap = (
            f"leads {rival.id} by {margin:.3f} < margin {s.direct_answer_margin}"
            if margin >= 0
            else f"trails {rival.id} by {-margin:.3f} (a lead of margin {s.direct_answer_margin} is needed)"
        )
        out.direct_reason = f"ambiguous: {best.id} {gap}"
        return
    best.terms.tier_prior = s.direct_answer_prior
    best.served_by = "direct-answer"
    kind = snap.category_of(best.row)
    margin_text = "no rival" if rival is None else f"margin {margin:.2f}"
    best.tier_note = (
        f"trusted {kind} (importance {float(snap.importance[best.row]):.2f}, confidence "
        f"{float(snap.confidence[best.row]):.2f}), token-overlap {pool.overlap(best):.2f}, "
        f"unambiguous ({margin_text})"
    )
    out.direct = best
    out.direct_reason = best.tier_note


def _graph(pool: Pool, ranked: list[Candidate]) -> int:
    s, snap = pool.s, pool.snap
    if not ranked:
        return 0
    top = ranked[0].terms.final
    seeds = [
        c
        for c in ranked[: max(1, s.graph_seeds) * 3]
        if c.served_by in ("hybrid", "direct-answer", "procedural")
        and pool.status(c) == ACTIVE
        and c.terms.base > 0
        and c.terms.final >= s.graph_seed_ratio * top
    ][: s.graph_seeds]
    if not seeds:
        return 0
    lookup = G.CatalogLookup(snap, pool.catalog, snap.alive)
    lookup.prime({r: pool.fields[r] for r in pool.fields})
    by_row = {c.row: c for c in seeds}
    reached = G.traverse(
        [c.row for c in seeds],
        lookup,
        max_hops=s.graph_max_hops,
        min_confidence=s.graph_min_confidence,
        link_conf=s.graph_link_confidence,
        wikilink_conf=s.graph_wikilink_confidence,
        entity_conf=s.graph_entity_confidence,
        max_nodes=s.graph_max_nodes * 3,
    )
    in_ranked = {c.row for c in ranked}
    served = added = 0
    for hit in reached:
        if served >= s.graph_max_nodes:
            break
        c = pool.by_row.get(hit.row)
        if c is None:
            c = pool.make(hit.row, "graph")
            if c is None:
                continue
            pool.load([c.row])
        elif c.dropped_at == "similarity-floor":
            c.dropped_at = None  # reached over an edge: the link, not its weak wording, brings it in
            if s.token_overlap_floor > 0 and pool.terms and pool.overlap(c) < s.token_overlap_floor:
                exempt(c, "token-overlap")
            else:
                passed(c, "token-overlap")
        elif not c.alive or not _claimable(c) or c.dropped_at is not None:
            continue
        seed = by_row[hit.seed_row]
        lift = s.graph_alpha * hit.confidence * seed.terms.base - (c.terms.base + c.terms.propagation)
        if lift <= 1e-9:
            continue  # already scores as well on its own: it stays what served it
        c.terms.tier_prior = lift
        c.served_by = "graph"
        c.graph_path = G.ids_of(hit.path_rows, snap)
        c.graph_edge_confidences = [round(x, 4) for x in hit.confidences]
        c.tier_note = (
            f"{len(hit.confidences)} hop(s) from {seed.id} over {' → '.join(hit.kinds)} "
            f"(path confidence {hit.confidence:.2f})"
        )
        served += 1
        if c.row not in in_ranked:
            ranked.append(c)
            in_ranked.add(c.row)
            added += 1
    return added


def _recent(pool: Pool, intent: Intent, ranked: Sequence[Candidate]) -> None:
    s, snap = pool.s, pool.snap
    window = s.recent_scan_window_days * 86400.0
    if window <= 0:
        return
    only = intent.recency_only
    if not only:
        pool.load(c.row for c in ranked)
    served: list[tuple[Candidate, float]] = []
    for c in ranked:
        updated = float(snap.updated[c.row])
        age = pool.now_s - updated if np.isfinite(updated) else np.inf
        if age > window or age < -86400.0 or not _claimable(c):
            continue
        if not only and pool.overlap_with(c.row, intent.topic_terms) <= 0:
            continue
        freshness = max(0.0, 1.0 - max(age, 0.0) / window)
        served.append((c, freshness))
        c.served_by = "recent-scan"
        c.tier_note = f"recency query: updated {max(age, 0.0) / 86400.0:.1f} day(s) ago" + (
            ", listed newest first ahead of older memories" if only else ""
        )
    # With topic words the topic decides and recency only adds its prior. Asked about recency alone,
    # what is recent leads every other candidate, newest first: the months-old "no production *changes*
    # on Fridays" only shares the recency word of "what changed recently?". The bar is the pool's own
    # best score, never a rule keyed to what a memory's text says.
    top = max((c.terms.final for c in ranked), default=0.0) if only else 0.0
    for c, freshness in served:
        lead = s.recent_scan_prior * freshness
        c.terms.tier_prior = top + lead - c.terms.final if only else lead


def serving_order(pool: Pool, head: list[Candidate], top_k: int, *, inactive_last: bool) -> list[Candidate]:
    """The re-rank pool in the order the top-k cut takes it: every successor of a superseded memory
    moved up to just before it (:func:`successors_first`), before the cut, so the cut never serves the
    replaced memory without what replaced it. With ``inactive_last`` (``include_inactive``) the hits
    are picked so, then every non-active one follows every active one, whatever the scores; the
    active ones keep their order by score. A non-active hit listed below an active one that scored
    less says so in its reason (the X-ray's order and ``final`` disagree there on purpose)."""
    out = successors_first(pool, head)
    if inactive_last:
        pos = {c.row: i for i, c in enumerate(head)}
        top = sorted(out[:top_k], key=lambda c: (pool.status(c) != ACTIVE, pos[c.row]))
        out[:top_k] = successors_first(pool, top)  # an inactive successor still leads its predecessor
        lowest = min((c.terms.final for c in out[:top_k] if pool.status(c) == ACTIVE), default=None)
        for c in out[:top_k]:
            if lowest is not None and pool.status(c) != ACTIVE and c.terms.final > lowest:
                if c.served_by == "hybrid" and not c.tier_note:
                    c.tier_note = hybrid_note(c)
                why = f"status {pool.status(c)}, include-inactive"
                c.tier_note = f"{c.tier_note}; listed after the active results whatever the scores ({why})".lstrip("; ")
    return out


def successors_first(pool: Pool, hits: list[Candidate]) -> list[Candidate]:
    """``hits`` with the successor of every superseded memory among them moved up to just before it:
    admitted beside it (``--include-superseded``), a replaced memory never leads what replaced it,
    however close their scores (min-max over a few candidates can make 0.007 of cosine worth 1.0).
    Run on the whole re-rank pool before the top-k cut, so the cut never keeps the replaced memory and
    drops its successor; a successor is pulled up rather than its predecessor pushed down, so the
    better-matching memory is never pushed off the page either."""
    if not any(pool.status(c) == SUPERSEDED for c in hits):
        return hits
    by_id = {c.id: c for c in hits}
    pos = {c.row: i for i, c in enumerate(hits)}
    succs: dict[int, set[int]] = {c.row: set() for c in hits}  # superseded row → the rows that replaced it
    for c in hits:
        fm = pool.fm(c.row)
        for succ in _ids(fm.get("supersededBy")) if pool.status(c) == SUPERSEDED else ():
            if succ in by_id:
                succs[c.row].add(by_id[succ].row)
        for prev in _ids(fm.get("supersedes")):
            if prev in by_id and pool.status(by_id[prev]) == SUPERSEDED:
                succs[by_id[prev].row].add(c.row)
    out: list[Candidate] = []
    placed: set[int] = set()

    def place(c: Candidate, seen: frozenset[int]) -> None:
        if c.row in seen or c.row in placed:
            return  # placed already, or a cycle of supersessions
        for succ in sorted(succs[c.row] - {c.row}, key=lambda r: pos[r]):
            place(hits[pos[succ]], seen | {c.row})
        placed.add(c.row)
        out.append(c)

    for c in hits:
        place(c, frozenset())
    return out


def _ids(value: object) -> list[str]:
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    return [str(v).strip() for v in value if str(v).strip()] if isinstance(value, list) else []


def hybrid_note(c: Candidate) -> str:
    parts = []
    if c.bm25_rank is not None:
        parts.append(f"bm25 #{c.bm25_rank}")
    if c.vector_rank is not None:
        parts.append(f"vector #{c.vector_rank}")
    if c.sibling_of is not None:
        parts.append(f"episode sibling of {c.sibling_of}")
    return " + ".join(parts) or "hybrid fusion"
