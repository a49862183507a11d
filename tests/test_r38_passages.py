"""A long memory's passages are scored for BM25 with the query expansion's words, as its whole body is.

The expansion ('pets' → dog) adds weighted ``body`` clauses to the query. A long memory's BM25 is its
whole score with the body's part replaced by its best passage's when that is higher; scored without
those clauses, a passage holding 'dog' matched nothing, and a memory whose best passage replaced its
body lost its expansion matches. Real repository, real tantivy, the packaged model.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from remnic.config import settings_for
from remnic.index.bm25 import query_terms
from remnic.index.passage_bm25 import body_score, passage_scores, term_score
from remnic.service.memory import Memory

FILLER = ["harbour", "market", "ferry", "bakery", "garden", "tower", "bridge", "river", "lantern", "orchard"]
TAIL = "Max the dog naps on the porch, and the dog dreams of another dog."
QUESTION = "What pets does Nate have?"
SHORT = [
    "Nate: The new game tournament went well, I came second.",
    "Joanna: I finished my screenplay, it is about loss and identity.",
    "Nate: I made coconut ice cream for the party.",
    "Joanna: The hike by the lake was beautiful this morning.",
]


def long_note() -> str:
    rng = random.Random(7)
    parts = ["Nate keeps this harbour diary."]  # no heading: a heading would be every passage's context
    while sum(len(p) + 2 for p in parts) < 6_000:
        parts.append(" ".join(" ".join(rng.choice(FILLER) for _ in range(12)).capitalize() + "." for _ in range(4)))
    return "\n\n".join([*parts, TAIL]) + "\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("r38-passages") / "memory"
    records = [{"id": "long", "content": long_note(), "category": "moment"}]
    records += [{"id": f"s{i}", "content": text, "category": "moment"} for i, text in enumerate(SHORT)]
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.import_records(records, source="test")
    yield root


def test_a_passage_matching_only_through_an_expansion_word_scores_it(repo: Path) -> None:
    with Memory.open(settings=settings_for(repo, recall={"budget_chars": 0})) as memory:
        result = memory.recall(QUESTION, top_k=5)
        assert "pets→dog" in result.stages[0].reason
        hit = next(h for h in result.hits if h.id == "long")
        with memory.index.lock:
            _snap, bm25, _catalog = memory.index.view()
            path = hit.path
            held = {n: t for _p, n, t in bm25.search_passages(["dog", "nate"], 50, paths=[path])}
            dog_n = next(n for n, t in held.items() if "dog" in bm25.tokens(t))
            assert "nate" not in bm25.tokens(held[dog_n])  # it matches the query through 'dog' alone
            # That passage is the one the memory's BM25 was scored by (before: it was never searched).
            assert hit.signals["bm25Passage"] == dog_n

            # The scores themselves: the clause counts in the passage as in the whole body it is weighed against.
            terms = query_terms(QUESTION)
            weight = 0.4
            extra = [("body", "dog", weight)]
            found = passage_scores(bm25, terms, 50, boosts={"body": 1.0}, extra=extra)
            p = found[path]
            assert p.passage == dog_n
            passage = held[dog_n]
            tokens = bm25.tokens(passage)
            searcher = bm25.searcher
            n_docs = int(searcher.num_docs)
            df = {t: int(searcher.doc_freq("body", t)) for t in [*terms, "dog"]}
            avgdl = bm25.body_avgdl(terms or ["dog"]) or float(len(tokens))
            dog = weight * term_score(tokens.count("dog"), len(tokens), df["dog"], n_docs, avgdl)
            assert dog > 0
            assert p.passage_body == pytest.approx(body_score(tokens, terms, df, n_docs, avgdl, 1.0) + dog, rel=1e-6)
            body = dict(bm25.search(terms, 10, boosts={"body": 1.0}, extra=extra, paths=[path]))[path]
            assert p.whole_body == pytest.approx(body, rel=1e-6)
            assert p.wins and p.blended(0.0) > p.whole
