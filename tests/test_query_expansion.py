"""Query expansion from the repository's own vocabulary: the words are embedded at index time
(real ONNX model, real tantivy, real git), and a query word that no memory uses finds the one
that answers it in other words."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from remnic.config import settings_for
from remnic.index.vocab import Vocab, expand, words_of
from remnic.render.xray import render_xray
from remnic.service.memory import Memory

# --------------------------------------------------------------------- pure parts


def test_words_are_lowercased_letters_without_stopwords_or_digits() -> None:
    assert words_of("Nate: This is Max! My dog, my DOG, 3 dogs", {"this", "is", "my"}) == ["nate", "max", "dog", "dogs"]
    assert words_of("a b2b ok été", ()) == ["été"]


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_expand_takes_the_nearest_live_words_that_are_not_query_terms() -> None:
    vocab = Vocab(3)
    vocab.add([("dog", _unit(1, 0.2, 0)), ("dogs", _unit(1, 0.25, 0)), ("cat", _unit(1, 0.6, 0)),
               ("pets", _unit(1, 0, 0)), ("gone", _unit(1, 0.1, 0)), ("car", _unit(0, 0, 1))])  # fmt: skip
    vocab.add([("dog", _unit(0, 0, 1))])  # a word keeps its first vector
    stems = {"dogs": "dog", "pets": "pet"}
    got = expand(
        vocab,
        [("pets", _unit(1, 0, 0))],
        ["pet"],
        lambda w: stems.get(w, w),
        lambda t: t != "gone",
        min_similarity=0.8,
        per_word=3,
    )
    # 'pets' is the query's own term, 'gone' is held by no memory; 'dog' and 'dogs' are one term (best kept).
    assert [(e.word, e.term) for e in got] == [("dog", "dog"), ("cat", "cat")]
    assert got[0].similarity == pytest.approx(float(_unit(1, 0.2, 0) @ _unit(1, 0, 0)), abs=1e-6)
    assert got[0].describe().startswith("pets→dog 0.98")
    assert expand(vocab, [("pets", _unit(1, 0, 0))], [], lambda w: w, lambda t: True, min_similarity=0.99, per_word=3)
    assert not expand(
        vocab, [("pets", _unit(0, 1, 0))], [], lambda w: w, lambda t: True, min_similarity=0.9, per_word=3
    )


def test_a_cached_scan_is_kept_short_and_rescanned_when_it_runs_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import remnic.index.vocab as V

    monkeypatch.setattr(V, "NEIGHBOURS_KEPT", 1)
    vocab = Vocab(3)
    vocab.add([("pet", _unit(1, 0.1, 0)), ("dog", _unit(1, 0.3, 0)), ("cat", _unit(1, 0.5, 0))])
    first = expand(
        vocab, [("pets", _unit(1, 0, 0))], ["pet"], lambda w: w, lambda t: True, min_similarity=0.8, per_word=2
    )
    rows, _, complete = vocab.neighbours("pets", _unit(1, 0, 0), 0.8)
    assert [vocab.words[r] for r in rows] == ["pet"] and not complete
    # The kept row is the query's own term: the whole vocabulary is compared again.
    assert [e.word for e in first] == ["dog", "cat"]
    vocab.add([("puppy", _unit(1, 0.05, 0))])
    rows, sims, _ = vocab.neighbours("pets", _unit(1, 0, 0), 0.8)
    assert [vocab.words[r] for r in rows] == ["puppy"]
    assert sims[0] == pytest.approx(float(_unit(1, 0.05, 0) @ _unit(1, 0, 0)), abs=1e-6)
    again = expand(
        vocab, [("pets", _unit(1, 0, 0))], ["pet"], lambda w: w, lambda t: True, min_similarity=0.8, per_word=2
    )
    assert [e.word for e in again] == ["puppy", "dog"]
    # Another vector under the same word (re-embedded differently) is not served from the cache.
    rows, _, _ = vocab.neighbours("pets", _unit(1, 0.5, 0), 0.8)
    assert vocab.words[rows[0]] == "cat"


# --------------------------------------------------------------------- a real repository

NOTES = [
    "Nate: I just got a new addition to the family, this is Max! [shares a photo of a dog on a couch]",
    "Nate: The new game tournament went well, I came second.",
    "Joanna: I finished my screenplay, it is about loss and identity.",
    "Nate: I made coconut ice cream for the party.",
    "Joanna: The hike by the lake was beautiful this morning.",
]


def _open(root, **recall) -> Memory:  # type: ignore[no-untyped-def]
    return Memory.open(settings=settings_for(root, recall={"budget_chars": 0, **recall}))


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    root = tmp_path_factory.mktemp("expansion") / "memory"
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.import_records(
            [{"id": f"n{i}", "content": text, "category": "moment"} for i, text in enumerate(NOTES)], source="test"
        )
    yield root


def test_the_vocabulary_is_indexed_with_the_memories(chat) -> None:  # type: ignore[no-untyped-def]
    with _open(chat) as memory:
        memory.recall("warm up", top_k=1)
        with memory.index.lock:
            memory.index.view()
            vocab = memory.index.vocab()
            assert {"dog", "screenplay", "coconut", "couch"} <= set(vocab.words)
            assert "the" not in vocab.row_of and "i" not in vocab.row_of
            v = vocab.vector("dog")
            assert v is not None and abs(float(np.linalg.norm(v)) - 1.0) < 1e-3
        # A new memory's new words join the vocabulary with its write.
        memory.store("Joanna: My turtles love the sunny window.", category="moment")
        memory.recall("warm up", top_k=1)
        with memory.index.lock:
            memory.index.view()
            assert "turtles" in memory.index.vocab().row_of


def test_a_query_word_no_memory_uses_finds_the_answer_in_other_words(chat) -> None:  # type: ignore[no-untyped-def]
    with _open(chat) as memory:
        result = memory.recall("What pets does Nate have?", top_k=5)
        reason = result.stages[0].reason
        assert "query expanded (weight 0.5 × cosine): pets→dog" in reason
        dog = next(h for h in result.hits if h.id == "n0")
        assert dog.rank == 1 and dog.terms.bm25 > 0
        # The X-ray shows which words were searched for the query's.
        xray = memory.recall_xray("What pets does Nate have?", top_k=5)
        assert xray is not None and "pets→dog" in render_xray(xray, "text")
    with _open(chat, query_expansion_weight=0.0) as memory:
        plain = memory.recall("What pets does Nate have?", top_k=5)
        assert "query expanded" not in plain.stages[0].reason
        # Without expansion 'pets' matches nothing: the dog's BM25 comes from 'Nate' alone, like every Nate note.
        assert next(h for h in plain.hits if h.id == "n0").terms.bm25 == pytest.approx(
            next(h for h in plain.hits if h.id == "n1").terms.bm25, rel=0.2
        )


def test_words_most_memories_hold_are_not_expanded(chat) -> None:  # type: ignore[no-untyped-def]
    with _open(chat) as memory:
        # 'nate' is in 3 of 6 memories (at least queryAspectNameRatio): it is not expanded.
        result = memory.recall("Nate?", top_k=3)
        assert "query expanded" not in result.stages[0].reason


def test_the_neighbour_cache_follows_the_vocabulary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "memory"
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.import_records(
            [{"id": f"n{i}", "content": text, "category": "moment"} for i, text in enumerate(NOTES)], source="test"
        )
    question = "What pets does Nate have?"

    def expanded(memory: Memory) -> str:
        return memory.recall(question, top_k=5).stages[0].reason

    with _open(root) as memory:
        before = expanded(memory)
        assert "pets→dog" in before and "puppies" not in before
        with memory.index.lock:
            memory.index.view()
            vocab = memory.index.vocab()
            entry = vocab._neighbours[("pets", 0.5)]  # 'pets' is no vocabulary word: searched by its own vector
            upto = entry.upto
        # A new memory's new word is reached by the next recall: the cached entry compares the added rows.
        puppy = memory.store("Joanna: The puppies chewed my slippers again.", category="moment").record
        after = expanded(memory)
        assert "pets→puppies" in after, after
        assert vocab._neighbours[("pets", 0.5)].upto > upto
        # Its only memory deleted, the word stays in the vocabulary but is reached no more.
        (root / puppy.path).unlink()
        memory.ledger.git("add", "-A")
        memory.ledger.git("commit", "-q", "--no-verify", "-m", "delete the puppies")
        gone = expanded(memory)
        assert "puppies" not in gone and "pets→dog" in gone, gone
        with memory.index.lock:
            memory.index.view()
            assert "puppies" in memory.index.vocab().row_of
        # The cache changes nothing: an emptied one gives the same expansion.
        vocab.forget()
        assert expanded(memory) == gone


def test_the_query_words_the_vocabulary_lacks_are_embedded_with_the_query(chat, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with _open(chat) as memory:
        memory.recall("warm up", top_k=1)
        embedder = memory.index.embedder
        question = "What pets does Nate have?"
        queries, words = embedder.embed_queries_and_documents([question], ["pets"])
        assert np.array_equal(queries[0], embedder.embed([question])[0])
        assert np.array_equal(words[0], embedder.embed_documents(["pets"])[0])
        embedder.forget_queries()
        memory.index._word_memo.clear()
        runs: list[list[str]] = []
        embed = embedder.embed
        monkeypatch.setattr(embedder, "embed", lambda texts, *a, **k: runs.append(list(texts)) or embed(texts, *a, **k))
        result = memory.recall(question, top_k=3)
        assert "pets→dog" in result.stages[0].reason
        # One model call: the query (and its aspect without the name) with the word no memory uses.
        assert len(runs) == 1 and "pets" in runs[0] and question in runs[0], runs
