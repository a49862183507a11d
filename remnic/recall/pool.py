"""The candidate pool of one recall: every memory the ladder considered, and the gates they walked.

Retrieval fills it first; tiers (procedural, recent-scan, graph) and episode
expansion may add memories later through :meth:`Pool.make`, which sends them
through the same gates, so every candidate's verdicts are recorded the same
way and the ladder's counts chain (see :mod:`remnic.recall.ladder`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from remnic.config import RecallSettings

from .filters import SUPERSEDED, Facts, RecallFilters, facts_of
from .ladder import drop, exempt, passed, token_overlap
from .types import Candidate

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from remnic.index.bm25 import Bm25Index
    from remnic.index.catalog import Catalog
    from remnic.index.vectors import Snapshot, VectorScores
    from remnic.index.vocab import Expansion

ACTIVE = "active"
TRUST_STATUSES = ("pending_review", "quarantined")
"""Statuses the trust-zone gate decides in a default recall (status-active leaves them to it)."""
ASSOCIATIONS = ("episode", "graph")
_EMPTY: Mapping[str, Any] = {}
"""Ways of entering the pool that do not need the query's words (token-overlap exempts them)."""


class Pool:
    def __init__(
        self,
        snap: Snapshot,
        catalog: Catalog,
        vec: VectorScores,
        scope: np.ndarray,
        allowed: set[str] | None,
        settings: RecallSettings,
        terms: Sequence[str],
        now_s: float,
        index_stage_names: Sequence[str],
    ) -> None:
        self.snap = snap
        self.language = "english"
        """The BM25 analyser's language (``index.language``): token overlap compares its terms."""
        self.catalog = catalog
        self.vec = vec
        self.scope = scope
        self.allowed = allowed
        self.s = settings
        self.terms = list(terms)
        self.now_s = now_s
        self.index_stage_names = list(index_stage_names)
        self.cands: list[Candidate] = []
        self.by_row: dict[int, Candidate] = {}
        self.fields: dict[int, tuple[Mapping[str, Any], str]] = {}
        self.review_rows: set[int] = set()
        """pending_review rows the review-context tier keeps (exempt from trust-zone)."""
        self.recent_rows: set[int] = set()
        """Rows a recency query asked for (:func:`.tiers.offer_recent`): exempt from the word and
        similarity floors, since their recency, not their wording, is what the query asked about."""
        self.scorer: Callable[[Candidate], None] | None = None
        self._tokens: dict[int, set[str]] = {}
        self.filters: RecallFilters | None = None
        """The caller's tag and time filters (:mod:`.filters`): the first gates."""
        self.facts: Mapping[str, Facts] = {}
        """path → what the filters read, for every memory of the index (:func:`.filters.facts_table`)."""
        self.typed_query: tuple[Bm25Index, Mapping[str, float], list[tuple[str, str, float]]] | None = None
        """With query expansion: the recall's BM25 query less the expansion's words (:meth:`expanded_by`)."""
        self._typed: dict[int, bool] = {}

    # --- membership ---

    def add(self, c: Candidate, entered_by: str = "retrieval") -> Candidate:
        c.entered_by = entered_by
        c.admitted_by[:0] = self.index_stage_names
        self.cands.append(c)
        self.by_row[c.row] = c
        return c

    def new(self, r: int) -> Candidate:
        v = self.vec
        return Candidate(
            int(r),
            self.snap.paths[r],
            self.snap.ids[r],
            float(v.combined[r]),
            float(v.chunk[r]),
            float(v.context[r]),
            has_vectors=bool(self.snap.has_vec[r]),
        )

    def make(self, r: int, entered_by: str, *, score: bool = True) -> Candidate | None:
        """Offer memory ``r`` to the pool from a tier or expansion; the candidate if it passed the gates."""
        if not self.scope[r] or r in self.by_row:
            return None
        c = self.add(self.new(r), entered_by)
        self.gate(c)
        if not c.alive:
            return None
        if score and self.scorer is not None:
            self.scorer(c)
        return c

    def alive(self) -> list[Candidate]:
        return [c for c in self.cands if c.alive]

    # --- text ---

    def load(self, rows: Iterable[int]) -> None:
        fields = self.fields
        missing = [r for r in dict.fromkeys(rows) if r not in fields]
        if missing:
            got = self.catalog.hit_fields([self.snap.paths[r] for r in missing])
            for r in missing:
                fields[r] = got.get(self.snap.paths[r], ({}, ""))

    def load_flagged(self, rows: Sequence[int]) -> None:
        """Load only those of ``rows`` whose frontmatter mentions a key a tier looks at.

        Reinforcement and dispute flags are rare, so the paths that carry one are kept
        per index build and generation (:func:`flagged_paths`); rows left unloaded are
        known to carry neither flag, and no re-rank candidate's frontmatter is parsed
        just to find that out.
        """
        try:
            flagged = flagged_paths(self.catalog, self.snap.gen)
        except Exception:  # noqa: BLE001 - unknown: look at every row instead
            self.load(rows)
            return
        if flagged:
            self.load(r for r in rows if self.snap.paths[r] in flagged)

    def fm(self, r: int) -> Mapping[str, Any]:
        f = self.fields.get(r)
        if f is None:
            self.load([r])
            f = self.fields[r]
        return f[0]

    def known_fm(self, r: int) -> Mapping[str, Any]:
        """The frontmatter if it was loaded, else {} (after ``load_flagged``: no flags there)."""
        f = self.fields.get(r)
        return f[0] if f is not None else _EMPTY

    def content(self, r: int) -> str:
        f = self.fields.get(r)
        if f is None:
            self.load([r])
            f = self.fields[r]
        return f[1]

    def tokens(self, r: int) -> set[str]:
        toks = self._tokens.get(r)
        if toks is None:
            from remnic.index.bm25 import analyze

            toks = self._tokens[r] = set(analyze(self.content(r), language=self.language))
        return toks

    def overlap(self, c: Candidate) -> float:
        if c.overlap is None:
            self.load([c.row])
            c.overlap = token_overlap(self.terms, self.tokens(c.row))
        return c.overlap

    def overlap_with(self, r: int, terms: Sequence[str]) -> float:
        return token_overlap(terms, self.tokens(r))

    # --- BM25 matches on the words the user typed ---

    def expanded_by(
        self,
        bm25: Bm25Index,
        boosts: Mapping[str, float],
        extra: Sequence[tuple[str, str, float]],
        expanded: Sequence[Expansion],
    ) -> None:
        """Keep the recall's BM25 query (its ``extra`` clauses) less the query expansion's (``expanded``,
        searched in ``body``), for :meth:`typed_match`; nothing to keep when nothing was expanded."""
        if not expanded:
            return
        words = {e.term for e in expanded}
        self.typed_query = (bm25, boosts, [x for x in extra if not (x[0] == "body" and x[1] in words)])

    def typed_match(self, c: Candidate) -> bool:
        """BM25 matched ``c`` on a word the user typed (or on the query's date clauses, read from them),
        not only on a word the query expansion added ('use' → need)."""
        if c.bm25_rank is None:
            return False
        if self.typed_query is None:
            return True
        if c.row not in self._typed:
            # Every candidate the similarity floor may ask about, in one search.
            rows = [
                x.row
                for x in self.cands
                if x.bm25_rank is not None and x.row not in self._typed and x.chunk_cosine < self.s.min_similarity
            ]
            rows = rows if c.row in rows else [*rows, c.row]
            bm25, boosts, extra = self.typed_query
            paths = [self.snap.paths[r] for r in rows]
            found = {p for p, _ in bm25.search(self.terms, len(paths), boosts=boosts, extra=extra, paths=paths)}
            self._typed.update((r, self.snap.paths[r] in found) for r in rows)
        return self._typed[c.row]

    # --- the gates ---

    def status(self, c: Candidate) -> str:
        """Its status, as of the recall's ``asOf`` when it has one (:meth:`.RecallFilters.status_at`)."""
        status = self.snap.status_of(c.row)
        if status == SUPERSEDED and self.filters is not None and self.filters.as_of is not None:
            return self.filters.status_at(status, self._facts(c.row))
        return status

    def searched_statuses(self) -> list[str] | None:
        """The statuses a refetch pushes into the retrievers: the allowed ones, and with ``asOf`` the
        superseded ones too (some were current then; the gates decide)."""
        if self.allowed is None:
            return None
        as_of = self.filters is not None and self.filters.as_of is not None
        return sorted(self.allowed | ({SUPERSEDED} if as_of else set()))

    @property
    def chosen_statuses(self) -> bool:
        """The recall named its statuses (not the default — active only, superseded added or not — nor
        every status)."""
        return self.allowed is not None and self.allowed not in ({ACTIVE}, {ACTIVE, SUPERSEDED})

    def status_ok(self, status: str) -> bool:
        """Passes both status gates without a tier's help."""
        return self.allowed is None or status in self.allowed

    @property
    def filter_stages(self) -> tuple[str, ...]:
        return self.filters.stages if self.filters is not None else ()

    def filtered_out(self, r: int) -> tuple[str, str] | None:
        """(stage, why) when one of the caller's filters rejects row ``r``; None when they admit it."""
        if self.filters is None:
            return None
        return self.filters.verdict(self._facts(r))

    def _facts(self, r: int) -> Facts:
        facts = self.facts.get(self.snap.paths[r])
        return facts if facts is not None else facts_of(self.fm(r))

    def trust_reason(self, rejected: str) -> str:
        """The trust-zone stage's reason: what it rejected (``rejected``), kept as review context, or
        admitted because the recall asked for those statuses (or for every status)."""
        parts = [rejected] if rejected else []
        kept = sum(1 for c in self.cands if c.rejected_by == "trust-zone" and c.dropped_at != "trust-zone")
        if kept:
            parts.append(f"{kept} pending_review kept as review-context")
        asked = Counter(
            st for c in self.cands if "trust-zone" in c.admitted_by and (st := self.status(c)) in TRUST_STATUSES
        )
        if asked:
            why = "every status is admitted" if self.allowed is None else "the recall asked for them"
            parts.append(f"admitted {', '.join(f'{k} ×{n}' for k, n in sorted(asked.items()))}: {why}")
        return "; ".join(parts) or "no quarantined or pending_review candidates"

    def gate(self, c: Candidate) -> None:
        """[tag-match → as-of →] status-active → trust-zone → confidence-floor → similarity-floor → token-overlap,
        recording each verdict. The caller's filters exempt no one: not even a tier may bring a memory in past them."""
        if self.filters is not None:
            rejected = self.filtered_out(c.row)
            for name in self.filter_stages:
                if rejected is not None and rejected[0] == name:
                    return drop(c, name)
                passed(c, name)
        s, allowed = self.s, self.allowed
        status = self.status(c)
        # Trust statuses are trust-zone's to judge in a default recall (review context may keep one);
        # a recall that named its statuses and left them out rejects them here, like any other.
        if allowed is not None and status not in allowed and (status not in TRUST_STATUSES or self.chosen_statuses):
            return drop(c, "status-active")
        passed(c, "status-active")
        if allowed is not None and status in TRUST_STATUSES and status not in allowed:
            if c.row in self.review_rows:
                exempt(c, "trust-zone")
            else:
                return drop(c, "trust-zone")
        else:
            passed(c, "trust-zone")
        if s.confidence_floor > 0 and float(self.snap.confidence[c.row]) < s.confidence_floor:
            return drop(c, "confidence-floor")
        passed(c, "confidence-floor")
        # Min-max fusion makes the best of a bad lot look perfect; a raw cosine floor for candidates
        # that matched no query term keeps nonsense queries from filling the page. A word the query
        # expansion added is no query term: it is a guess at one.
        vouched = c.entered_by in ASSOCIATIONS or c.row in self.recent_rows
        if s.min_similarity > 0 and c.chunk_cosine < s.min_similarity and not self.typed_match(c):
            if vouched:
                exempt(c, "similarity-floor")
            else:
                return drop(c, "similarity-floor")
        else:
            passed(c, "similarity-floor")
        if s.token_overlap_floor > 0 and self.terms and self.overlap(c) < s.token_overlap_floor:
            if vouched:
                return exempt(c, "token-overlap")
            return drop(c, "token-overlap")
        passed(c, "token-overlap")


# --- paths whose frontmatter carries a tier flag, per catalog file, kept current by generation ---

_FLAG_SQL = "(frontmatter LIKE '%reinforcement_count%' OR frontmatter LIKE '%disputed%')"
_flag_lock = threading.Lock()
_flags: dict[str, tuple[int, set[str]]] = {}


def flagged_paths(catalog: Catalog, gen: int) -> set[str]:
    """Paths whose frontmatter mentions ``reinforcement_count`` or ``disputed``.

    The first call per catalog scans it once; later calls read only the rows
    written (and the tombstones left) since the generation they last saw.
    """
    key = str(catalog.path)
    with _flag_lock:
        seen = _flags.get(key)
        if seen is not None and seen[0] == gen:
            return seen[1]
        conn = catalog.conn
        if seen is None:
            paths = {p for (p,) in conn.execute(f"SELECT path FROM docs WHERE {_FLAG_SQL}")}
        else:
            paths = set(seen[1])
            for p, flag in conn.execute(f"SELECT path, {_FLAG_SQL} FROM docs WHERE gen > ?", (seen[0],)):
                (paths.add if flag else paths.discard)(p)
            for p in catalog.tombstones_since(seen[0]):
                paths.discard(p)
        _flags[key] = (gen, paths)
        return paths
