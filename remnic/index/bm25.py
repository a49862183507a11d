"""The BM25 side: a tantivy index of stemmed text fields plus raw filter fields.

A long memory's passages (the heading/paragraph passages its vectors are made of) are
documents of a second tantivy index beside the first, tied to the memory by ``path`` and
numbered as in the catalog. They are apart so that the whole memories' statistics (document
count, average field length, document frequencies) stay exactly what they would be without
them: a short note scores the same with or without long notes around it.

Query text is never parsed as tantivy query syntax: it is run through the same
analyzer as the documents (minus stopwords) and turned into a plain OR of term
queries, so quotes, colons, parentheses or 10,000 characters of noise can
never make a query fail. Filters (namespace, category, status) are
constant-score clauses, so they restrict without changing scores.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tantivy

from .text import cjk_bigrams, cjk_unigrams, normal_form, symbols

ANALYZER = "remnic_en"
TEXT_FIELDS = ("title", "body", "tags", "near", "far", "when", "dated")
RAW_FIELDS = ("path", "id", "namespace", "category", "status", "months")
"""``months`` holds ``2023-05``-style keys of the months a memory's dates touch (a date filter's clause)."""
PASSAGE_RAW_FIELDS = ("path", "n", "namespace", "category", "status", "months")
"""A passage document: its memory's path and filter fields, ``n`` its number among the memory's passages."""
MAX_QUERY_TERMS = 64
WRITER_HEAP = 32_000_000
PASSAGE_WRITER_HEAP = 15_000_000  # tantivy's smallest; passages are a small share of a batch
PASSAGES_SUFFIX = "-passages"

# A general English stopword list (question words included: they carry no topic).
_STOPWORD_TEXT = (
    "a about above after again against all also am an and any are as at be because been before being "
    "below between both but by can could did do does doing down during each either else ever every few "
    "for from further get got had has have having he her here hers herself him himself his how i if in "
    "into is it its itself just let like me more most much must my myself no nor not now of off on once "
    "only or other ought our ours ourselves out over own per quite rather really same shall she should so "
    "some such than that the their theirs them themselves then there these they this those through thus "
    "to too under until up upon us very was we were what whatever when whenever where wherever whether "
    "which while who whoever whom whose why will with within without would yet you your yours yourself "
    "yourselves s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn "
    "couldn can't"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_STOP_TOKENS = sorted({p for w in STOPWORDS for p in re.split(r"\W+", w) if p})

_analyzers: dict[tuple[bool, str], Any] = {}
DEFAULT_LANGUAGE = "english"
# tantivy ships stopword lists for these; the other stemmers run without one.
_STOPWORD_LANGUAGES = frozenset(
    [
        "danish",
        "dutch",
        "finnish",
        "french",
        "german",
        "hungarian",
        "italian",
        "norwegian",
        "portuguese",
        "russian",
        "spanish",
        "swedish",
    ]
)


def analyzer_version(language: str) -> str:
    """Names what the analyser does (part of the index fingerprint: a change rebuilds the index)."""
    if language == DEFAULT_LANGUAGE:
        return "cjk3+so14+simple+lower+ascii+stem-en/2"
    return f"cjk3+so14+simple+lower+stop+stem-{language}+ascii/2"


def _analyzer(stop: bool, language: str = DEFAULT_LANGUAGE) -> Any:
    key = (stop, language)
    if key not in _analyzers:
        builder = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
        )
        if language == DEFAULT_LANGUAGE:
            builder = builder.filter(tantivy.Filter.ascii_fold())
            if stop:
                builder = builder.filter(tantivy.Filter.custom_stopword(_STOP_TOKENS))
            builder = builder.filter(tantivy.Filter.stemmer("english"))
        else:
            # Stopwords and stemmers of other languages expect their accents: fold afterwards.
            if stop and language in _STOPWORD_LANGUAGES:
                builder = builder.filter(tantivy.Filter.stopword(language))
            if language != "none":
                builder = builder.filter(tantivy.Filter.stemmer(language))
            builder = builder.filter(tantivy.Filter.ascii_fold())
        _analyzers[key] = builder.build()
    return _analyzers[key]


def analyze(text: str, *, stopwords: bool = False, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """Index-side tokens (lowercased, ascii-folded, stemmed; CJK runs as bigrams; then the emoji and
    other symbols, one each; then the CJK runs' characters), optionally without stopwords. The text is
    read in its :func:`~.text.normal_form` (NFC), as the index has it."""
    text = normal_form(text)
    tokens = _query_tokens(text, stopwords, language)
    unigrams = cjk_unigrams(text)
    return tokens + list(_analyzer(stopwords, language).analyze(unigrams)) if unigrams else tokens


def _query_tokens(text: str, stopwords: bool, language: str) -> list[str]:
    """Query-side tokens: as :func:`analyze`, but a CJK run of two or more characters is its bigrams only."""
    return _words(text, stopwords, language) + symbols(text)


def _words(text: str, stopwords: bool, language: str) -> list[str]:
    """The analyser's own tokens of ``text``, in order (no symbols: tantivy's tokenizer drops them)."""
    return list(_analyzer(stopwords, language).analyze(cjk_bigrams(text)))


def query_terms(
    text: str, *, stopwords: bool = True, limit: int = MAX_QUERY_TERMS, language: str = DEFAULT_LANGUAGE
) -> list[str]:
    """Distinct query terms in order (a query's symbols after its words); if stopword removal leaves
    nothing, keep them all ("what's up?": see :func:`stopword_phrase`)."""
    text = normal_form(text)
    terms = _query_tokens(text, True, language) if stopwords else []
    if not terms:
        terms = _query_tokens(text, False, language)
    return list(dict.fromkeys(terms))[:limit]


def stopword_phrase(text: str, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """The query's words in order, as the index has them, when every one of them is a stopword
    ("the of and is to", "to be or not to be", "The Who"); [] when it has a content word (or a
    symbol) or no word at all. Such a query tells no memory apart by its words one by one."""
    text = normal_form(text)
    if _query_tokens(text, True, language):
        return []
    return _words(text, False, language)[:MAX_QUERY_TERMS]


def build_schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    for name in RAW_FIELDS[1:]:
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    for name in TEXT_FIELDS:
        sb.add_text_field(name, tokenizer_name=ANALYZER, index_option="position")
    return sb.build()


def build_passage_schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("n", stored=True, tokenizer_name="raw", index_option="basic")
    for name in PASSAGE_RAW_FIELDS[2:]:
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("body", stored=True, tokenizer_name=ANALYZER, index_option="freq")
    return sb.build()


def passages_dir(directory: Path) -> Path:
    """Where the passage index of the tantivy index at ``directory`` lives (a sibling directory)."""
    return directory.with_name(directory.name + PASSAGES_SUFFIX)


def _restrictions(
    namespaces: Sequence[str] | None,
    categories: Sequence[str] | None,
    statuses: Sequence[str] | None,
    months: Sequence[str] | None,
    paths: Sequence[str] | None,
) -> tuple[tuple[str, Sequence[str] | None], ...]:
    """The term-set filters a memory search and a passage search share, by field."""
    return (
        ("namespace", namespaces),
        ("category", categories),
        ("status", statuses),
        ("months", months),
        ("path", paths),
    )


def _filtered(schema: Any, should: list[Any], filters: Sequence[tuple[str, Sequence[str] | None]]) -> Any:
    """The OR of ``should``, restricted by constant-score term-set clauses (scores unchanged)."""
    clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
    for field, values in filters:
        if values is not None:
            clauses.append(
                (
                    tantivy.Occur.Must,
                    tantivy.Query.const_score_query(tantivy.Query.term_set_query(schema, field, list(values)), 0.0),
                )
            )
    return clauses[0][1] if len(clauses) == 1 else tantivy.Query.boolean_query(clauses)


class Bm25Index:
    """One tantivy index directory. Writers are short-lived and only ever used under the repo write lock."""

    def __init__(self, directory: Path, *, create: bool = False, language: str = DEFAULT_LANGUAGE) -> None:
        self.directory = directory
        self.language = language
        if create:
            directory.mkdir(parents=True, exist_ok=True)
        elif not (directory / "meta.json").is_file():
            raise OSError(f"no tantivy index at {directory}")
        self.schema = build_schema()
        self.index = tantivy.Index(self.schema, path=str(directory), reuse=not create)
        self.index.register_tokenizer(ANALYZER, _analyzer(False, language))
        self._searcher: Any = None
        self.passage_schema = build_passage_schema()
        self.passages: Any = None
        """The passage index; None for a build made before there was one (its schema version rebuilds it)."""
        pdir = passages_dir(directory)
        if create:
            pdir.mkdir(parents=True, exist_ok=True)
        if create or (pdir / "meta.json").is_file():
            self.passages = tantivy.Index(self.passage_schema, path=str(pdir), reuse=not create)
            self.passages.register_tokenizer(ANALYZER, _analyzer(False, language))
        self._passage_searcher: Any = None
        self._avgdl: float | None = None

    @contextmanager
    def writer(self) -> Iterator[_Writer]:
        """A writer held only for one batch: commit, wait for merges, release tantivy's lock file."""
        if self.passages is None:
            raise OSError(f"no passage index at {passages_dir(self.directory)}")
        raw = self.index.writer(WRITER_HEAP, 1)
        try:
            praw = self.passages.writer(PASSAGE_WRITER_HEAP, 1)
        except BaseException:
            _release(raw)
            raise
        w = _Writer(raw, self.schema, praw, self.passage_schema)
        try:
            yield w
            # Passages first: a failure between the two commits leaves the memories' index as it was,
            # and ``w.committed`` tells the caller the two indexes may now disagree.
            praw.commit()
            w.committed = True
            raw.commit()
        except BaseException:
            for one in (praw, raw):
                try:
                    one.rollback()
                except Exception:  # noqa: BLE001 - the original error matters more
                    pass
            raise
        finally:
            _release(praw)
            _release(raw)
        self.reload()

    def reload(self) -> None:
        self.index.reload()
        self._searcher = None
        if self.passages is not None:
            self.passages.reload()
        self._passage_searcher = None
        self._avgdl = None

    @property
    def searcher(self) -> Any:
        if self._searcher is None:
            self._searcher = self.index.searcher()
        return self._searcher

    def search(
        self,
        terms: Sequence[str],
        limit: int,
        *,
        boosts: Mapping[str, float],
        namespaces: Sequence[str] | None = None,
        categories: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        months: Sequence[str] | None = None,
        extra: Sequence[tuple[str, str, float]] = (),
        paths: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """(path, bm25 score) best first. Terms must already be analyzed (see :func:`query_terms`).

        ``months`` restricts to memories dated in one of those months (see :mod:`.dates`);
        ``extra`` adds (field, token, boost) clauses: a query's date terms; ``paths`` restricts to
        those memories.
        """
        if (not terms and not extra) or limit <= 0:
            return []
        should = []
        for field, boost in boosts.items():
            if boost <= 0 or field not in TEXT_FIELDS:
                continue
            for term in terms:
                q = tantivy.Query.term_query(self.schema, field, term)
                should.append((tantivy.Occur.Should, q if boost == 1.0 else tantivy.Query.boost_query(q, float(boost))))
        for field, term, boost in extra:
            if boost > 0 and field in TEXT_FIELDS:
                q = tantivy.Query.term_query(self.schema, field, term)
                should.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, float(boost))))
        if not should:
            return []
        filters = _restrictions(namespaces, categories, statuses, months, paths)
        query = _filtered(self.schema, should, filters)
        searcher = self.searcher
        result = searcher.search(query, limit, count=False)
        return [(searcher.doc(addr)["path"][0], float(score)) for score, addr in result.hits]

    def search_passages(
        self,
        terms: Sequence[str],
        limit: int,
        *,
        boost: float = 1.0,
        namespaces: Sequence[str] | None = None,
        categories: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        months: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
    ) -> list[tuple[str, int, str]]:
        """(memory path, passage number, passage text) of the long memories' passages that match best,
        best first by BM25 among passages (:mod:`.passage_bm25` scores them as memories' bodies);
        ``paths`` restricts to those memories' passages."""
        if not terms or limit <= 0 or boost <= 0 or self.passages is None:
            return []
        should = []
        for term in terms:
            q = tantivy.Query.term_query(self.passage_schema, "body", term)
            should.append((tantivy.Occur.Should, q if boost == 1.0 else tantivy.Query.boost_query(q, float(boost))))
        filters = _restrictions(namespaces, categories, statuses, months, paths)
        query = _filtered(self.passage_schema, should, filters)
        searcher = self.passage_searcher
        result = searcher.search(query, limit, count=False)
        out = []
        for _score, addr in result.hits:
            doc = searcher.doc(addr)
            out.append((doc["path"][0], int(doc["n"][0]), " ".join(doc["body"])))
        return out

    def tokens(self, text: str) -> list[str]:
        """A passage's ``body`` as :meth:`search_passages` gives it (its indexed text, CJK already
        expanded; its symbols' value stored empty) in tokens: what the field's length counts."""
        text = normal_form(text)
        return list(_analyzer(False, self.language).analyze(text)) + symbols(text)

    def phrase_paths(
        self, words: Sequence[str], fields: Sequence[str] = ("title", "body", "tags"), *, limit: int | None = None
    ) -> list[str]:
        """The memories whose ``fields`` (one of them) hold ``words`` (analysed tokens) in this order, one
        after the other: all of them, or the ``limit`` best by BM25."""
        if not words:
            return []
        should = []
        for field in fields:
            if len(words) == 1:
                q = tantivy.Query.term_query(self.schema, field, words[0])
            else:
                q = tantivy.Query.phrase_query(self.schema, field, list(words))
            should.append((tantivy.Occur.Should, q))
        searcher = self.searcher
        n = int(searcher.num_docs) if limit is None else limit
        if n <= 0:
            return []
        hits = searcher.search(tantivy.Query.boolean_query(should), n, count=False).hits
        return [searcher.doc(addr)["path"][0] for _score, addr in hits]

    def body_avgdl(self, terms: Sequence[str]) -> float | None:
        """The memories' average ``body`` length in tokens, as tantivy's BM25 uses it (read once per reload
        from its explanation of a document holding one of ``terms``; None if none does)."""
        if self._avgdl is None:
            from .passage_bm25 import explained_avgdl

            for term in terms:
                q = tantivy.Query.term_query(self.schema, "body", term)
                hits = self.searcher.search(q, 1, count=False).hits
                if hits:
                    self._avgdl = explained_avgdl(self, q, hits[0][1]) or 0.0
                    break
        return self._avgdl or None

    @property
    def passage_searcher(self) -> Any:
        if self._passage_searcher is None:
            self._passage_searcher = self.passages.searcher()
        return self._passage_searcher


def _release(raw: Any) -> None:
    """Wait for a writer's merges, which releases tantivy's lock file."""
    try:
        raw.wait_merging_threads()
    except Exception:  # noqa: BLE001 - a consumed writer is fine
        pass


class _Writer:
    def __init__(self, raw: Any, schema: Any, passages: Any, passage_schema: Any) -> None:
        self.raw = raw
        self.schema = schema
        self.passages = passages
        self.passage_schema = passage_schema
        self.committed = False
        """True once the passage index has committed (the memories' index may not have)."""

    def delete(self, path: str) -> None:
        """Remove a memory and its passages."""
        self.raw.delete_documents_by_term("path", path)
        self.passages.delete_documents_by_term("path", path)

    def add(self, fields: Mapping[str, Any]) -> None:
        """Add a memory; ``fields["passages"]`` (a long memory's passage texts) become passage documents."""
        doc = tantivy.Document()
        for name, value in fields.items():
            if name == "passages":
                continue
            _put(doc, name, value)
        self.raw.add_document(doc)
        for n, text in enumerate(fields.get("passages") or ()):
            pdoc = tantivy.Document()
            for name in PASSAGE_RAW_FIELDS:
                _put(pdoc, name, str(n) if name == "n" else fields.get(name))
            _put(pdoc, "body", text)
            self.passages.add_document(pdoc)


def _put(doc: Any, name: str, value: Any) -> None:
    # tantivy's tokenizer cannot make bigrams of CJK runs: analysed fields get them here, as ``analyze``
    # gives them to token overlap (raw fields such as ``path`` stay exact). The runs' characters go in
    # a value of their own, so the bigrams keep their positions; so do the symbols, which the tokenizer
    # would drop: given as tokens, with an empty text (a stored passage keeps them once, in its text).
    # Analysed text is indexed in its normal form (NFC), as queries are analysed.
    items = value if isinstance(value, (list, tuple)) else [value] if value else []
    for item in items:
        if name not in TEXT_FIELDS:
            doc.add_text(name, item)
            continue
        item = normal_form(item)
        doc.add_text(name, cjk_bigrams(item))
        unigrams = cjk_unigrams(item)
        if unigrams:
            doc.add_text(name, unigrams)
        marks = symbols(item)
        if marks:
            doc.add_pre_tokenized_text(name, pre_tokenized(marks))


def pre_tokenized(tokens: Sequence[str]) -> Any:
    """``tokens`` as one value of a field, indexed as they are (no analyser), with an empty text."""
    return tantivy.PreTokenizedString("", [tantivy.Token(t, i, 0, 0) for i, t in enumerate(tokens)])
