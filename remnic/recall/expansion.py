"""Query expansion from the repository's own vocabulary (see :mod:`remnic.index.vocab`).

"What pets does Nate have?" is answered by "this is Max! [a photo of a dog]": BM25 needs
the same stem, and the sentence vectors, which do see the paraphrase, blur a list
question's many answers into one direction. So each query word — not a stopword, and not
one at least ``queryAspectNameRatio`` of the memories contain (the speakers of a
conversation: every memory matches them) — is compared with the embedded vocabulary of the
indexed texts, and its ``queryExpansionTerms`` nearest words of cosine at least
``queryExpansionMinSimilarity`` are searched too, in the memories' text, each with BM25
weight ``queryExpansionWeight`` × its cosine ('pets' → dog 0.70, cat 0.66, animals 0.82).
A query word the vocabulary lacks is embedded (memoised); a word's neighbours are cached on the
vocabulary (:meth:`remnic.index.vocab.Vocab.neighbours`). The expanded words add to the
``bm25`` term; the X-ray's ``namespace-scope`` reason lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from remnic.config import RecallSettings

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.bm25 import Bm25Index
    from remnic.index.search import SearchIndex
    from remnic.index.vocab import Expansion, Vocab


def _sources(
    index: SearchIndex, bm25: Bm25Index, text: str, terms: Sequence[str], s: RecallSettings
) -> tuple[Vocab, list[str], Callable[[str], str | None], Callable[[str], int]] | None:
    """The vocabulary, the query words to expand, and the analyser and document frequency they were
    chosen by; None when nothing is expanded."""
    from functools import cache

    from remnic.index.bm25 import STOPWORDS, analyze
    from remnic.index.vocab import words_of

    if s.query_expansion_weight <= 0 or s.query_expansion_terms <= 0 or not terms:
        return None
    vocab = index.vocab()
    if not len(vocab):
        return None
    searcher = bm25.searcher
    n = max(1, int(searcher.num_docs))
    language = index.language

    @cache
    def term_of(word: str) -> str | None:
        tokens = analyze(word, language=language)
        return tokens[0] if len(tokens) == 1 else None

    @cache
    def doc_freq(term: str) -> int:
        return int(searcher.doc_freq("body", term))

    sources = []
    for word in words_of(text, STOPWORDS):
        term = term_of(word)
        if term is not None and doc_freq(term) < s.query_aspect_name_ratio * n:
            sources.append(word)
    return (vocab, sources, term_of, doc_freq) if sources else None


def unembedded(index: SearchIndex, bm25: Bm25Index, text: str, terms: Sequence[str], s: RecallSettings) -> list[str]:
    """The query words :func:`expansions` will embed (the vocabulary lacks them): the recall embeds
    them with the query, in one model call (call under the index lock, after ``view``)."""
    found = _sources(index, bm25, text, terms, s)
    return [] if found is None else [w for w in found[1] if found[0].vector(w) is None]


def expansions(
    index: SearchIndex, bm25: Bm25Index, text: str, terms: Sequence[str], s: RecallSettings
) -> list[Expansion]:
    """The vocabulary words ``text``'s words expand to (call under the index lock, after ``view``)."""
    from remnic.index.vocab import expand

    found = _sources(index, bm25, text, terms, s)
    if found is None:
        return []
    vocab, sources, term_of, doc_freq = found
    missing = [w for w in sources if vocab.vector(w) is None]
    embedded = dict(zip(missing, index.embed_words(missing))) if missing else {}
    pairs = []
    for w in sources:
        v = vocab.vector(w)
        pairs.append((w, v if v is not None else embedded[w]))
    return expand(
        vocab,
        pairs,
        terms,
        term_of,
        lambda t: doc_freq(t) > 0,
        min_similarity=s.query_expansion_min_similarity,
        per_word=s.query_expansion_terms,
    )


def describe(found: Sequence[Expansion], weight: float) -> str:
    """The X-ray's note: which words were searched for which, with their cosines."""
    return f"query expanded (weight {weight:g} × cosine): " + ", ".join(e.describe() for e in found)
