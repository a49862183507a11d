"""The repository's own vocabulary, embedded word by word, for expanding a query's words.

A question asks in its own words ("What pets does Nate have?") and a memory answers in
others ("this is Max! [a photo of a dog]"). BM25 only matches the same stems; the
sentence vectors find the paraphrase but blur a list question's many answers. So every
distinct word the indexed texts use is embedded once (one short model run, through the
content-hash cache: a word is embedded once per model, ever), and a query word is also
searched by the vocabulary words nearest it ('pets' → dogs, cats, animals), each weighted
by its cosine. The vocabulary only grows: a word no memory holds any more has no BM25
documents and matches nothing; a rebuild starts it afresh.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

WORD_RE = re.compile(r"[^\W\d_]{3,40}")
"""A vocabulary word: three or more letters (any script), no digits."""


def words_of(text: str, stopwords: Iterable[str] = ()) -> list[str]:
    """Distinct lowercased words of ``text`` in order of first use, without ``stopwords``."""
    stop = set(stopwords)
    return [w for w in dict.fromkeys(m.group(0).lower() for m in WORD_RE.finditer(text)) if w not in stop]


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


class Vocab:
    """The vocabulary in memory: words and their unit vectors, rows in the order they were added."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.words: list[str] = []
        self.row_of: dict[str, int] = {}
        self._matrix = np.zeros((64, dim), dtype=np.float32)
        self.gen = -1

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
    best: dict[str, Expansion] = {}
    sims = vocab.matrix @ np.stack([v for _, v in sources]).T  # words × query words
    for j, (source, _) in enumerate(sources):
        col = sims[:, j]
        above = np.flatnonzero(col >= min_similarity)
        n = 0
        for r in above[np.argsort(-col[above], kind="stable")]:
            if n >= per_word:
                break
            word = vocab.words[int(r)]
            term = term_of(word)
            if term is None or term in taken or not live(term):
                continue
            n += 1
            sim = float(col[r])
            if term not in best or sim > best[term].similarity:
                best[term] = Expansion(source, word, term, sim)
    return sorted(best.values(), key=lambda e: (-e.similarity, e.term))
