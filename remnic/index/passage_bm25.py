"""A long memory's BM25 score with its best passage as its body.

Whole-document BM25 normalises a term's weight by the body's length, so a phrase at the
end of a 20,000-character note weighs a fraction of what the same words weigh in a short
note. The passage index (:mod:`.bm25`) finds the passages that match; each is then scored
as a body of the memories' own index would be — its idf, its average body length, the same
k1 and b — so a passage counts exactly as much as a short note with that text. The memory's
score becomes its whole score with the body's part replaced by the better of its whole
body's and its best passage's, plus ``blend`` × the lesser of the two: a memory that matches
both as a whole and in one place outranks one that matches in one way only. Short memories
have no passages and keep their score. The query's weighted ``body`` clauses (its expansion's
words) score the passages and the whole body alike: a passage replacing the body must not
drop the matches the body's score held.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .bm25 import Bm25Index

K1 = 1.2
B = 0.75
"""tantivy's BM25 parameters (fixed in tantivy)."""


@dataclass(frozen=True)
class PassageScore:
    """A long memory's whole score, its best passage's body score and which passage that is."""

    whole: float
    """The memory's score as tantivy gives it (title, tags, dates and the whole body)."""
    passage: int
    passage_body: float
    """The passage's own body score (what replaces the whole body's ``whole_body`` when higher)."""
    whole_body: float

    @property
    def wins(self) -> bool:
        """The best passage scores higher as a body than the whole body does."""
        return self.passage_body > self.whole_body

    def blended(self, blend: float) -> float:
        """The whole score with the body's part the better of whole body and best passage,
        plus ``blend`` × the lesser of the two (0: the better one only)."""
        hi, lo = max(self.passage_body, self.whole_body), min(self.passage_body, self.whole_body)
        return self.whole - self.whole_body + hi + blend * lo


def term_score(tf: int, dl: int, df: int, n_docs: int, avgdl: float) -> float:
    """tantivy's BM25 for one term: idf × (k1 + 1) × tf / (tf + k1 × (1 − b + b × dl / avgdl))."""
    if tf <= 0 or n_docs <= 0:
        return 0.0
    idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    norm = K1 * (1.0 - B + B * dl / avgdl) if avgdl > 0 else K1
    return idf * (K1 + 1.0) * tf / (tf + norm)


def body_score(
    tokens: Sequence[str], terms: Sequence[str], doc_freq: Mapping[str, int], n_docs: int, avgdl: float, boost: float
) -> float:
    """The BM25 of a text (its analysed tokens) as a ``body`` among ``n_docs`` memories."""
    counts = Counter(tokens)
    dl = len(tokens)
    return boost * sum(term_score(counts[t], dl, doc_freq.get(t, 0), n_docs, avgdl) for t in terms)


def avgdl_from_explanation(explanation: str) -> float | None:
    """The ``avgdl`` tantivy reports in a BM25 explanation (JSON), or None if it has none."""
    try:
        tree = json.loads(explanation)
    except ValueError:
        return None
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if str(node.get("description", "")).startswith("avgdl") and isinstance(node.get("value"), (int, float)):
                return float(node["value"])
            stack.extend(node.get("details") or [])
    return None


def passage_scores(
    index: Bm25Index,
    terms: Sequence[str],
    limit: int,
    *,
    boosts: Mapping[str, float],
    extra: Sequence[tuple[str, str, float]] = (),
    namespaces: Sequence[str] | None = None,
    categories: Sequence[str] | None = None,
    statuses: Sequence[str] | None = None,
    months: Sequence[str] | None = None,
    paths: Sequence[str] | None = None,
) -> dict[str, PassageScore]:
    """path → the long memory's whole score and best matching passage (among the ``limit`` best of
    the passage index), for the long memories tantivy also scores whole (``paths``: among those).

    ``extra``'s ``body`` clauses (token, weight) count in a passage's body score and in the whole
    body's it is weighed against, as they count in the whole score."""
    boost = float(boosts.get("body", 1.0))
    weighted = [(t, float(w)) for f, t, w in extra if f == "body" and w > 0] if boost > 0 else []
    body_extra = [("body", t, w) for t, w in weighted]
    searched = list(dict.fromkeys([*terms, *(t for t, _ in weighted)]))
    found = index.search_passages(
        searched,
        limit,
        boost=boost,
        namespaces=namespaces,
        categories=categories,
        statuses=statuses,
        months=months,
        paths=paths,
    )
    if not found:
        return {}
    searcher = index.searcher
    n_docs = int(searcher.num_docs)
    doc_freq = {t: int(searcher.doc_freq("body", t)) for t in searched}
    avgdl = index.body_avgdl(terms or searched)
    best: dict[str, tuple[float, int]] = {}
    for path, n, text in found:
        tokens = index.tokens(text)
        a = avgdl or float(len(tokens))
        score = body_score(tokens, terms, doc_freq, n_docs, a, boost) + weighted_score(
            tokens, weighted, doc_freq, n_docs, a
        )
        if path not in best or score > best[path][0]:
            best[path] = (score, n)
    long = sorted(best)
    # The same memories scored whole, and by their body alone (the part the passage replaces).
    whole = dict(index.search(terms, len(long), boosts=boosts, extra=extra, paths=long))
    body = dict(index.search(terms, len(long), boosts={"body": boost}, extra=body_extra, paths=long))
    out = {}
    for path, (score, n) in best.items():
        if path in whole:
            out[path] = PassageScore(whole[path], n, score, body.get(path, 0.0))
    return out


def weighted_score(
    tokens: Sequence[str], weighted: Sequence[tuple[str, float]], doc_freq: Mapping[str, int], n_docs: int, avgdl: float
) -> float:
    """The BM25 of boosted ``body`` clauses (token, weight) over a text, as tantivy scores a boosted term query."""
    if not weighted:
        return 0.0
    counts = Counter(tokens)
    dl = len(tokens)
    return sum(w * term_score(counts[t], dl, doc_freq.get(t, 0), n_docs, avgdl) for t, w in weighted)


def explained_avgdl(index: Any, query: Any, address: Any) -> float | None:
    """``avgdl`` of a term query's field, read from tantivy's explanation of one matching document."""
    try:
        explanation = query.explain(index.searcher, address)
    except (AttributeError, ValueError, RuntimeError):
        return None
    raw = explanation.to_json() if hasattr(explanation, "to_json") else str(explanation)
    return avgdl_from_explanation(raw)
