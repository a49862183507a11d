"""Conversation-aware ranking on a real index: a question lends its match to its reply, and a
query naming someone most memories name is also embedded without the name (its aspect)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from remnic.config import settings_for
from remnic.index.embed import get_embedder
from remnic.recall.aspect import aspect_of, proper_names, without_names
from remnic.recall.neighbours import asks
from remnic.service.memory import Memory

# --------------------------------------------------------------------- pure parts


def test_proper_names_skip_sentence_openings_and_possessives() -> None:
    assert proper_names("What are Nate's favorite desserts?") == ["Nate"]
    assert proper_names("How do Jon and Gina both like to destress?") == ["Jon", "Gina"]
    assert proper_names("Caroline asked. Did Melanie go? I think so") == ["Melanie"]
    assert proper_names("what is the plan for next week?") == []
    assert without_names("What are Nate's favorite desserts?", ["Nate"]) == "What are favorite desserts?"
    assert without_names("Did Jon meet Gina , then?", ["Jon", "Gina"]) == "Did meet, then?"


def test_aspect_leaves_out_only_common_names_and_needs_something_left() -> None:
    shares = {"Ana": 0.6, "Lisbon": 0.01}
    has_terms = lambda text: any(w.isalpha() and len(w) > 3 for w in text.split())  # noqa: E731
    got = aspect_of("What did Ana see in Lisbon?", lambda n: shares.get(n, 0.0), 0.2, has_terms)
    assert got is not None and got.text == "What did see in Lisbon?" and got.names == ("Ana",)
    assert "Ana (in 60% of memories)" in got.describe(0.5)
    assert aspect_of("What did Bo see in Lisbon?", lambda n: shares.get(n, 0.0), 0.2, has_terms) is None
    assert aspect_of("Who is Ana?", lambda n: shares.get(n, 0.0), 0.2, has_terms) is None


def test_a_question_is_text_ending_in_a_question_mark_before_any_trailing_note() -> None:
    assert asks("Ben: Nice, does she practise every day?")
    assert asks("Ana: Where was that? [shares a photo of a lake]")
    assert asks("Is it done? (asked twice)")
    assert not asks("Ben: Yes! The landlord said we can move in March.")
    assert not asks("Why? Because the build broke.")


# --------------------------------------------------------------------- a real conversation

TURNS = [
    "Ana: Hi Ben! How was your week?",
    "Ben: Busy, but good. I finally finished the bookshelf.",
    "Ana: Which concert did you go to on Friday, and what did you think of the concert?",
    "Ben: Loved it, the drummer of Blue Harbor was incredible.",
    "Ana: I have been painting a lot, mostly lakes.",
    "Ben: Ana, your lake paintings always look calm.",
    "Ana: Thanks! I drink green tea every morning before I paint.",
    "Ben: I stick to coffee, Ana.",
]


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("conversation") / "memory"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records(
        [
            {
                "content": text,
                "category": "moment",
                "episodeId": "chat-1",
                "sourceTurnId": f"chat-1:{i}",
                "created": f"2024-05-03T10:00:{i:02d}.000Z",
            }
            for i, text in enumerate(TURNS)
        ]
    )
    memory.recall("warm", top_k=1)
    yield memory
    memory.close()


def _turn(hit) -> int:  # type: ignore[no-untyped-def]
    return int(hit.frontmatter["sourceTurnId"].split(":")[1])


def test_a_question_lends_its_match_to_the_reply_after_it(chat: Memory) -> None:
    query = "which concert did Ben go to on Friday and what did he think of it"
    result = chat.recall(query, top_k=4)
    order = [_turn(h) for h in result.hits]
    assert order.index(3) < order.index(2)  # the answer above the question that repeats the words
    question = next(h for h in result.hits if _turn(h) == 2)
    reply = next(h for h in result.hits if _turn(h) == 3)
    assert question.terms.context == pytest.approx(-0.2)
    assert reply.terms.propagation > 0 and reply.signals["siblingOf"] == question.id
    assert reply.score >= question.terms.base - 1e-9  # lifted to the question's own score
    plain = Memory.open(settings=settings_for(chat.root, recall={"question_penalty": 0.0, "reply_alpha": 0.0}))
    try:
        before = [_turn(h) for h in plain.recall(query, top_k=4).hits]
    finally:
        plain.close()
    assert before.index(2) < before.index(3)  # without the rule the question wins


def test_a_name_most_memories_share_is_left_out_of_the_query_aspect(chat: Memory) -> None:
    weight = 0.5
    result = chat.recall("What does Ana drink in the morning?", top_k=3)
    reason = result.stages[0].reason
    assert "query aspect 'What does drink in the morning?' without Ana (in " in reason
    assert f"weight {weight:g}" in reason
    # A name only one memory holds is what the question is about: no aspect.
    rare = chat.recall("What did Blue Harbor play?", top_k=3)
    assert "query aspect" not in rare.stages[0].reason

    def cosines(query: str, w: float) -> dict[str, float]:
        mem = Memory.open(settings=settings_for(chat.root, recall={"query_aspect_weight": w}))
        try:
            return {c.id: c.chunk_cosine for c in mem.recall(query, top_k=8).candidates}
        finally:
            mem.close()

    mixed = cosines("What does Ana drink in the morning?", weight)
    whole = cosines("What does Ana drink in the morning?", 0.0)
    part = cosines("What does drink in the morning?", 0.0)
    blend = {m: (1 - weight) * whole[m] + weight * part[m] for m in mixed if m in whole and m in part}
    # A memory's similarity is its best sentence's: at most the mean of its two best similarities,
    # and exactly that for a memory of one sentence.
    assert blend and all(mixed[m] <= b + 1e-5 for m, b in blend.items())
    coffee = next(h.id for h in chat.recall("coffee", top_k=8).hits if "coffee" in h.content)
    assert mixed[coffee] == pytest.approx(blend[coffee], abs=1e-5)
    tea = next(h for h in result.hits if "green tea" in h.content)
    assert _turn(tea) == 6


def test_query_vectors_are_batched_and_memoised() -> None:
    embedder = get_embedder()
    embedder.forget_queries()
    a, b = embedder.embed_queries(["What does Ana drink?", "What does drink?"])
    assert np.allclose(a, embedder.embed_query("What does Ana drink?"), atol=1e-5)
    assert np.allclose(b, embedder.embed_query("What does drink?"), atol=1e-5)
    again = embedder.embed_queries(["What does Ana drink?"])[0]
    assert again is a  # from the memo, not the model


def test_memories_scored_alike_rank_by_path_whatever_their_last_bits() -> None:
    from remnic.recall.types import Candidate, ScoreTerms

    def cand(path: str, vector: float, recency: float) -> Candidate:
        return Candidate(0, path, path, 0.5, 0.5, 0.0, terms=ScoreTerms(vector=vector, bm25=0.2, recency=recency))

    # The same score summed in another order: equal to 15 places, not in the last bit.
    a, b = cand("b.md", 0.1, 0.3), cand("a.md", 0.3, 0.1)
    c = cand("c.md", 0.6000001, 0.0)
    assert a.terms.final != b.terms.final
    assert sorted([a, c, b], key=lambda x: x.rank_key) == [c, b, a]
    assert sorted([b, c, a], key=lambda x: x.rank_key) == [c, b, a]
