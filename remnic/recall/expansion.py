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

A recall held to a namespace counts documents in that namespace only (:class:`DocCounts`): which
words are common, and which vocabulary words any memory holds, must not tell a caller what another
namespace's memories say. When the namespace is the whole index the counts are the index's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from remnic.config import RecallSettings

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.bm25 import Bm25Index
    from remnic.index.search import SearchIndex
    from remnic.index.vocab import Expansion, Vocab


class DocCounts:
    """Memories in the recall's scope (``num_docs``) and those of them whose body holds a term
    (``doc_freq``): the whole index's statistics, or counted within ``namespace`` when the index
    also holds other namespaces' memories."""

    def __init__(self, bm25: Bm25Index, namespace: str | None = None) -> None:
        self._searcher = bm25.searcher
        self._schema = bm25.schema
        self._scope: Any = None
        self.num_docs = int(self._searcher.num_docs)
        self._freq: dict[str, int] = {}
        if namespace is not None:
            scope = self._query("namespace", namespace)
            held = self._count(scope)
            if held != self.num_docs:  # one namespace in the whole index keeps its own statistics, bit for bit
                self._scope, self.num_docs = scope, held

    @property
    def scoped(self) -> bool:
        return self._scope is not None

    @classmethod
    def of(cls, bm25: Bm25Index, namespace: str | None = None) -> DocCounts:
        """The counts for ``bm25``'s current searcher, shared by a recall's stages and the recalls after it
        until the index changes (a namespace's size is one count query; a term's, one more)."""
        last = _LAST.get(namespace)
        if last is not None and last._searcher is bm25.searcher and len(last._freq) < _FREQ_KEPT:
            return last
        made = _LAST[namespace] = cls(bm25, namespace)
        return made

    def _query(self, field: str, term: str) -> Any:
        import tantivy

        return tantivy.Query.term_query(self._schema, field, term)

    def _count(self, query: Any) -> int:
        return int(self._searcher.search(query, 1, count=True).count)

    def doc_freq(self, term: str) -> int:
        """Memories in scope whose ``body`` holds the analysed ``term``."""
        found = self._freq.get(term)
        if found is None:
            if self._scope is None:
                found = int(self._searcher.doc_freq("body", term))
            else:
                import tantivy

                must = tantivy.Occur.Must
                both = tantivy.Query.boolean_query([(must, self._query("body", term)), (must, self._scope)])
                found = self._count(both)
            self._freq[term] = found
        return found


_FREQ_KEPT = 20_000
"""Terms a :class:`DocCounts` remembers before a fresh one is made."""
_LAST: dict[str | None, DocCounts] = {}
"""The latest counts per namespace (one searcher each; replaced when the index reloads)."""


def _sources(
    index: SearchIndex,
    bm25: Bm25Index,
    text: str,
    terms: Sequence[str],
    s: RecallSettings,
    namespace: str | None = None,
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
    counts = DocCounts.of(bm25, namespace)
    n = max(1, counts.num_docs)
    language = index.language

    @cache
    def term_of(word: str) -> str | None:
        tokens = analyze(word, language=language)
        return tokens[0] if len(tokens) == 1 else None

    doc_freq = counts.doc_freq
    sources = []
    for word in words_of(text, STOPWORDS):
        term = term_of(word)
        if term is not None and doc_freq(term) < s.query_aspect_name_ratio * n:
            sources.append(word)
    return (vocab, sources, term_of, doc_freq) if sources else None


def unembedded(
    index: SearchIndex,
    bm25: Bm25Index,
    text: str,
    terms: Sequence[str],
    s: RecallSettings,
    namespace: str | None = None,
) -> list[str]:
    """The query words :func:`expansions` will embed (the vocabulary lacks them): the recall embeds
    them with the query, in one model call (call under the index lock, after ``view``)."""
    found = _sources(index, bm25, text, terms, s, namespace)
    return [] if found is None else [w for w in found[1] if found[0].vector(w) is None]


def expansions(
    index: SearchIndex,
    bm25: Bm25Index,
    text: str,
    terms: Sequence[str],
    s: RecallSettings,
    namespace: str | None = None,
) -> list[Expansion]:
    """The vocabulary words ``text``'s words expand to (call under the index lock, after ``view``),
    only words some memory in ``namespace`` (None: any) holds."""
    from remnic.index.vocab import expand

    found = _sources(index, bm25, text, terms, s, namespace)
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
