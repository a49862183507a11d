"""The repository's own vocabulary, embedded word by word, for expanding a query's words.

A question asks in its own words ("What pets does Nate have?") and a memory answers in
others ("this is Max! [a photo of a dog]"). BM25 only matches the same stems; the
sentence vectors find the paraphrase but blur a list question's many answers. So every
distinct word the indexed texts use is embedded once (one short model run, through the
content-hash cache: a word is embedded once per model, ever), and a query word is also
searched by the vocabulary words nearest it ('pets' → dogs, cats, animals), each weighted
by its cosine. The vocabulary only grows: a word no memory holds any more has no BM25
documents and matches nothing; a rebuild starts it afresh.

A query word's neighbours (the rows of cosine at least the threshold, best first) are cached on
the vocabulary, so a word asked about again costs no product over the whole vocabulary: an entry
is brought up to date by comparing only the rows added since it was made, and liveness (a word
whose last memory was deleted) is checked when the entry is read, never cached.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .text import normal_form

WORD_RE = re.compile(r"[^\W\d_]{3,40}")
"""A vocabulary word: three or more letters (any script), no digits."""

NEIGHBOURS_KEPT = 48
"""Rows a neighbour-cache entry keeps (a word rarely has to skip more: query terms, dead words);
an entry that had more above the threshold is marked incomplete and a scan that runs past it
compares the whole vocabulary again."""

NEIGHBOUR_ENTRIES = 2048
"""Query words whose neighbours are cached (least recently used dropped first; ~0.6 KB each, plus
the vector of a word the vocabulary lacks)."""


def words_of(text: str, stopwords: Iterable[str] = ()) -> list[str]:
    """Distinct lowercased words of ``text`` (in its normal form, as BM25 reads it: a decomposed
    accent would split a word) in order of first use, without ``stopwords``."""
    stop = set(stopwords)
    found = WORD_RE.finditer(normal_form(text))
    return [w for w in dict.fromkeys(m.group(0).lower() for m in found) if w not in stop]


@dataclass(frozen=True)
class Expansion:
    """One vocabulary word a query word was expanded by."""

    source: str
    """The query word."""
    word: str
    term: str
    """The word as the BM25 analyser makes it (what is searched)."""
    similarity: float

    def describe(self) -> str:
        return f"{self.source}→{self.word} {self.similarity:.2f}"


@dataclass
class _Neighbours:
    """A cached scan: the rows below ``upto`` of cosine at least the threshold, best first."""

    vector: np.ndarray | None
    """The vector searched, for a word the vocabulary lacks (its row's vector otherwise)."""
    upto: int
    rows: np.ndarray
    sims: np.ndarray
    complete: bool
    """Whether every row above the threshold is kept (at most ``NEIGHBOURS_KEPT`` are)."""


def _ranked(rows: np.ndarray, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best cosine first; ties in row order (the order a stable sort of the whole column gives)."""
    order = np.lexsort((rows, -sims))
    return rows[order], sims[order]


class Vocab:
    """The vocabulary in memory: words and their unit vectors, rows in the order they were added."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.words: list[str] = []
        self.row_of: dict[str, int] = {}
        self._matrix = np.zeros((64, dim), dtype=np.float32)
        self.gen = -1
        self._neighbours: OrderedDict[tuple[str, float], _Neighbours] = OrderedDict()

    def __len__(self) -> int:
        return len(self.words)

    @property
    def matrix(self) -> np.ndarray:
        return self._matrix[: len(self.words)]

    def add(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        for word, vec in items:
            if word in self.row_of:
                continue
            n = len(self.words)
            if n >= len(self._matrix):
                grown = np.zeros((max(64, int(n * 1.5)), self.dim), dtype=np.float32)
                grown[:n] = self._matrix[:n]
                self._matrix = grown
            self._matrix[n] = vec
            self.row_of[word] = n
            self.words.append(word)

    def vector(self, word: str) -> np.ndarray | None:
        r = self.row_of.get(word)
        return None if r is None else self._matrix[r]

    def forget(self) -> None:
        """Empty the neighbour cache (benchmarks time recalls of words the process has not seen)."""
        self._neighbours.clear()

    def nearest(self, vec: np.ndarray, min_similarity: float, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Rows from ``start`` of cosine with ``vec`` at least ``min_similarity``, best first."""
        return self._scan(vec[None, :], min_similarity, start)[0]

    def _scan(self, vecs: np.ndarray, min_similarity: float, start: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`nearest` of each of ``vecs`` (rows), in one pass over the vocabulary (a large one is
        read from memory once, not once a word).

        einsum, not BLAS: a row's cosine does not depend on which rows or how many vectors are
        compared with it (a cache entry brought up to date equals a fresh scan), and a multi-threaded
        BLAS product on busy cores spends several times the CPU of this single-threaded loop waiting
        for its threads."""
        sims = np.einsum("ij,kj->ik", self._matrix[start : len(self.words)], vecs)
        out = []
        for col in sims.T:
            above = np.flatnonzero(col >= min_similarity)
            out.append(_ranked(above + start, col[above]))
        return out

    def neighbours(self, word: str, vec: np.ndarray, min_similarity: float) -> tuple[np.ndarray, np.ndarray, bool]:
        """:meth:`nearest` for query word ``word`` (of vector ``vec``), at most ``NEIGHBOURS_KEPT`` rows,
        cached; and whether they are all the rows above the threshold."""
        return self.neighbours_of([(word, vec)], min_similarity)[0]

    def neighbours_of(
        self, items: Sequence[tuple[str, np.ndarray]], min_similarity: float
    ) -> list[tuple[np.ndarray, np.ndarray, bool]]:
        """:meth:`neighbours` of each (word, vector); the words not cached are scanned together."""
        n = len(self.words)
        out: list[tuple[np.ndarray, np.ndarray, bool] | None] = []
        misses: list[int] = []
        for i, (word, vec) in enumerate(items):
            key = (word, min_similarity)
            own = word in self.row_of
            hit = self._neighbours.get(key)
            # A word the vocabulary lacked was searched by its own embedding: not its row's once it has one.
            if hit is None or not (
                hit.vector is None if own else hit.vector is not None and np.array_equal(hit.vector, vec)
            ):
                out.append(None)
                misses.append(i)
                continue
            self._neighbours.move_to_end(key)
            if hit.upto < n:
                rows, sims = self.nearest(vec, min_similarity, hit.upto)
                rows, sims = _ranked(np.concatenate([hit.rows, rows]), np.concatenate([hit.sims, sims]))
                hit.complete = hit.complete and len(rows) <= NEIGHBOURS_KEPT
                hit.rows, hit.sims, hit.upto = rows[:NEIGHBOURS_KEPT], sims[:NEIGHBOURS_KEPT], n
            out.append((hit.rows, hit.sims, hit.complete))
        if misses:
            scans = self._scan(np.stack([items[i][1] for i in misses]), min_similarity)
            for i, (rows, sims) in zip(misses, scans):
                word, vec = items[i]
                entry = _Neighbours(
                    None if word in self.row_of else np.array(vec, dtype=np.float32),
                    n,
                    rows[:NEIGHBOURS_KEPT],
                    sims[:NEIGHBOURS_KEPT],
                    len(rows) <= NEIGHBOURS_KEPT,
                )
                self._neighbours[(word, min_similarity)] = entry
                out[i] = (entry.rows, entry.sims, entry.complete)
            while len(self._neighbours) > NEIGHBOUR_ENTRIES:
                self._neighbours.popitem(last=False)
        return [o for o in out if o is not None]


def expand(
    vocab: Vocab,
    sources: Sequence[tuple[str, np.ndarray]],
    query_terms: Iterable[str],
    term_of: Callable[[str], str | None],
    live: Callable[[str], bool],
    *,
    min_similarity: float,
    per_word: int,
) -> list[Expansion]:
    """For each (query word, its vector): up to ``per_word`` vocabulary words of cosine at least
    ``min_similarity``, best first, whose term (``term_of``: the analysed word, None when it is no
    single term) is not a query term and is ``live`` (some memory holds it). Several query words
    reaching one term keep its best similarity."""
    if not len(vocab) or not sources or per_word <= 0:
        return []
    taken = set(query_terms)

    def pick(rows: np.ndarray, sims: np.ndarray) -> list[tuple[str, str, float]]:
        out: list[tuple[str, str, float]] = []
        for r, sim in zip(rows.tolist(), sims.tolist()):
            if len(out) >= per_word:
                break
            word = vocab.words[r]
            term = term_of(word)
            if term is None or term in taken or not live(term):
                continue
            out.append((word, term, sim))
        return out

    best: dict[str, Expansion] = {}
    for (source, vec), (rows, sims, complete) in zip(sources, vocab.neighbours_of(sources, min_similarity)):
        picked = pick(rows, sims)
        if len(picked) < per_word and not complete:
            picked = pick(*vocab.nearest(vec, min_similarity))
        for word, term, sim in picked:
            if term not in best or sim > best[term].similarity:
                best[term] = Expansion(source, word, term, sim)
    return sorted(best.values(), key=lambda e: (-e.similarity, e.term))
