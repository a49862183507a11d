"""A query made only of stopwords ("the of and is to", "to be or not to be", "The Who", "It").

Its words, one by one, tell no memory apart: BM25 ranks memories by how often they say "the" and
the vectors by what the model makes of a few function words, so such a recall returned a full
budget of unrelated memories. It is searched as a phrase instead: only the memories whose title,
text or a tag hold the query's words in its order, one after the other, are candidates (BM25 and
the vectors rank them as usual), so Hamlet's line still finds the note that quotes it, and a query
no memory holds finds nothing. ``warnings`` says so on every surface, and the X-ray's
``namespace-scope`` reason too. With ``recall.queryStopwords`` off, stopwords are words like any
other and none of this applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from remnic.config import RecallSettings

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.bm25 import Bm25Index
    from remnic.index.vectors import Snapshot


@dataclass(frozen=True)
class Phrase:
    """A stopword-only query searched as a phrase, and the memories in scope that hold it."""

    words: tuple[str, ...]
    """The query's words as the index has them (lowercased, folded)."""
    paths: list[str]

    @property
    def note(self) -> str:
        """The X-ray's words for it (the ``namespace-scope`` reason)."""
        n = len(self.paths)
        held = "no memory holds it" if not n else f"{n} {'memory holds' if n == 1 else 'memories hold'} it"
        return f"only stopwords: searched as the phrase {' '.join(self.words)!r} ({held})"

    @property
    def warning(self) -> str:
        """What the caller is told (``warnings``): the result is not "the best matches" of its words."""
        n = len(self.paths)
        found = (
            "which no memory holds, so nothing is returned; add a word the memory is about"
            if not n
            else f"so only the {n} {'memory that holds' if n == 1 else 'memories that hold'} it can be returned"
        )
        return f"query: only stopwords, no content words ({' '.join(self.words)!r}): searched as a phrase, {found}"


def phrase_scope(
    bm25: Bm25Index, snap: Snapshot, text: str, s: RecallSettings, language: str, scope: np.ndarray
) -> Phrase | None:
    """For a query of stopwords only, narrow ``scope`` (in place) to the memories holding it as a
    phrase; None (``scope`` untouched) for any other query, or with ``recall.queryStopwords`` off."""
    from remnic.index.bm25 import stopword_phrase

    if not s.query_stopwords:
        return None
    words = stopword_phrase(text, language)
    if not words:
        return None
    holding = np.zeros(len(scope), dtype=bool)
    for path in bm25.phrase_paths(words):
        r = snap.row_of.get(path)
        if r is not None and r < len(holding):  # tantivy may be ahead of the snapshot for a moment
            holding[r] = True
    scope &= holding
    return Phrase(tuple(words), [snap.paths[r] for r in np.flatnonzero(scope)])
