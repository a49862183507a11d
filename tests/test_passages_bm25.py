"""Long notes scored by their passages on the BM25 side: real files, a real git repository, real tantivy.

A phrase near the end of a 12,000-character note is a few words in a body hundreds of times
longer than a short note's, and whole-document BM25 punishes that length; short notes whose
dates (``when``) or bodies share one or two of the phrase's words then rank above it. Each long
note's passages are documents of a passage index, and a memory's BM25 score is the better of its
whole text's and its best passage's. Vectors are left pending here, so BM25 alone decides.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from remnic.config import settings_for
from remnic.index.bm25 import query_terms
from remnic.render.xray import render_xray
from remnic.service.memory import Memory

WORDS = ["harbour", "market", "ferry", "bakery", "garden", "tower", "bridge", "river", "lantern", "orchard"]
TAIL = "In the end the lighthouse keeper repaints the crimson door every April."
QUERY = "the lighthouse keeper repaints the crimson door every April"


def vault(tmp_path: Path) -> Memory:
    root = tmp_path / "vault"
    settings = settings_for(root, store={"include": ["**"]}, sync={"defer_embeddings_above": 0})
    return Memory.init(root, settings=settings, adopt=["**"])


def write(memory: Memory, rel: str, text: str) -> None:
    path = memory.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def long_note(n: int, tail: str, seed: int = 3) -> str:
    rng = random.Random(seed)
    parts: list[str] = ["# Harbour notes"]
    while sum(len(p) + 2 for p in parts) < n - len(tail) - 40:
        if len(parts) % 6 == 1:
            parts.append(f"## Part {len(parts) // 6 + 1}")
        parts.append(" ".join(" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range(4)))
    return "\n\n".join([*parts, tail, "The end of the harbour notes."]) + "\n"


OTHER_TAILS = [
    "In the end the lighthouse keeper polishes the brass telescope each solstice.",
    "In the end the ferry captain repaints the cedar gate before the regatta.",
    "In the end the night baker waxes the crimson awning after the first frost.",
    "In the end the bell ringer oils the walnut door on leap days.",
]


def crowd(memory: Memory) -> None:
    """What outranked a long note: other long notes sharing words of its phrase, and short notes dated
    in April (``april`` in their ``when`` field) whose text shares one more."""
    for i, tail in enumerate(OTHER_TAILS):
        write(memory, f"notes/other-{i}.md", long_note(9_000 + 2_000 * i, tail, seed=10 + i))
    for day in range(1, 21):
        body = [
            "The crimson shed door sticks after rain.",
            "Ana, our keeper, repaints fences.",
            "A lighthouse postcard.",
        ][day % 3]
        write(memory, f"journal/day-{day}.md", f"---\ncreated: 2024-04-{day:02d}\n---\n{body}\n")


def test_a_long_note_is_found_by_bm25_through_the_passage_holding_a_phrase_near_its_end(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    note = long_note(12_000, TAIL)
    assert len(note) > 11_500 and note.index(TAIL) > 11_000
    write(memory, "notes/harbour.md", note)
    crowd(memory)
    assert memory.sync().commit
    assert memory.vectors_pending()[0] == 25  # BM25 alone: no vector can rescue the long note

    # Whole-document BM25 on its own buries the long note under the April notes and the doors.
    snap, bm25, catalog = memory.index.view()
    terms = query_terms(QUERY)
    whole = [path for path, _score in bm25.search(terms, 50, boosts={"body": 1.0, "when": 3.0})]
    assert whole.index("notes/harbour.md") >= 10

    result = memory.recall(QUERY, xray=True)
    hit = result.hits[0]
    assert hit.path == "notes/harbour.md"
    assert hit.signals["bm25Rank"] == 1 and hit.signals["vectorRank"] is None
    # The passage that scored is the one holding the phrase; the X-ray names it.
    spans = catalog.passages(["notes/harbour.md"])["notes/harbour.md"]["p"]
    start, end, _heading = spans[hit.signals["bm25Passage"]]
    content = memory.get(hit.id).content
    assert start <= content.index(TAIL) < end
    marked = [p for p in hit.passages if p.get("bm25")]
    assert marked and (marked[0]["start"], marked[0]["end"]) == (start, end)
    reason = result.xray.results[0].provenance.retrieval_reason
    assert f"chars {start}-{end}" in reason and "bm25" in reason
    assert TAIL in hit.content and (hit.trimmed or len(content) <= result.budget_chars)
    assert "matched by bm25" in render_xray(result.xray, "text") or "bm25 matched passage" in reason
    memory.close()


def test_short_notes_get_no_passage_documents_and_a_note_s_passages_follow_its_edits(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    note = long_note(6_000, TAIL)
    write(memory, "notes/harbour.md", note)
    write(memory, "notes/short.md", "The lighthouse keeper waves at the ferry.\n")
    memory.sync()

    def passage_docs() -> dict[str, int]:
        _snap, bm25, catalog = memory.index.view()
        found = bm25.search_passages(query_terms("lighthouse keeper harbour river"), 1000)
        counts: dict[str, int] = {}
        for path, _n, _score in found:
            counts[path] = counts.get(path, 0) + 1
        assert bm25.passage_searcher.num_docs == sum(len(m["p"]) for m in catalog.passages(list(counts)).values())
        return counts

    first = passage_docs()
    assert set(first) == {"notes/harbour.md"} and first["notes/harbour.md"] >= 6

    # Shortened below passageChars: its passages go; lengthened again: they come back, renumbered.
    write(memory, "notes/harbour.md", "The lighthouse keeper repaints the crimson door every April.\n")
    memory.sync()
    assert passage_docs() == {}
    write(memory, "notes/harbour.md", long_note(9_000, TAIL, seed=5))
    memory.sync()
    again = passage_docs()
    assert set(again) == {"notes/harbour.md"} and again["notes/harbour.md"] > first["notes/harbour.md"]

    # Deleted: gone from the passage index too.
    (memory.root / "notes/harbour.md").unlink()
    memory.sync()
    assert passage_docs() == {}
    assert [h.path for h in memory.recall("crimson door lighthouse").hits] == ["notes/short.md"]
    memory.close()


def test_a_rebuilt_index_scores_passages_as_the_incremental_one_did(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(memory, "notes/harbour.md", long_note(12_000, TAIL))
    crowd(memory)
    memory.sync()
    before = memory.recall(QUERY).hits[0]
    # Rebuilt from the files alone: the index removed, the next recall builds a whole new one. Its vectors
    # are left pending as the incremental one's were (`reindex` would embed every passage, which BM25 never
    # reads: the same rebuild, minutes of model time on a real vault).
    settings, index_root = memory.settings, memory.index.root
    memory.close()
    shutil.rmtree(index_root)
    memory = Memory.open(settings=settings)
    after = memory.recall(QUERY).hits[0]
    assert memory.index_health()["state"] == "ok" and memory.vectors_pending()[0] == 25
    assert after.path == before.path == "notes/harbour.md"
    assert after.signals["bm25Passage"] == before.signals["bm25Passage"]
    assert abs(after.signals["bm25"] - before.signals["bm25"]) < 1e-6
    memory.close()


def test_a_passage_scores_as_a_short_note_with_its_text_scores(tmp_path: Path) -> None:
    """The passage score uses the memories' own statistics: a note holding exactly that text scores the same."""
    from remnic.index.passage_bm25 import body_score

    memory = vault(tmp_path)
    write(memory, "notes/harbour.md", long_note(12_000, TAIL))
    crowd(memory)
    text = "The lighthouse keeper repaints the crimson door every April, and the door again in May."
    write(memory, "notes/twin.md", text + "\n")
    memory.sync()
    _snap, bm25, _catalog = memory.index.view()
    terms = query_terms(QUERY)
    tantivy_score = dict(bm25.search(terms, 50, boosts={"body": 1.0}))["notes/twin.md"]
    df = {t: bm25.searcher.doc_freq("body", t) for t in terms}
    ours = body_score(bm25.tokens(text), terms, df, bm25.searcher.num_docs, bm25.body_avgdl(terms), 1.0)
    assert abs(ours - tantivy_score) < 1e-4 * tantivy_score
    memory.close()


def test_a_long_hit_that_fits_is_trimmed_when_it_would_leave_the_hits_after_it_no_room() -> None:
    from remnic.recall.budget import fit_budget

    long = "intro words. " * 600 + "THE MATCH IS HERE. " + "outro words. " * 28  # 8,183 characters
    where = long.index("THE MATCH")
    short = ["a short note of forty characters or so.", "another short note, also a few words."]
    kept, used = fit_budget([long, *short], [[(where, where + 18), (0, 500)], [], []], 8192, min_chars=200)
    # Kept whole it would have left 60 characters: both short notes would have been dropped.
    assert [(f.index, f.trimmed) for f in kept] == [(0, True), (1, False), (2, False)]
    assert "THE MATCH IS HERE." in kept[0].text and used <= 8192
    # Without hits after it, the same note fits and stays whole.
    kept, _ = fit_budget([long], [[(where, where + 18)]], 8192, min_chars=200)
    assert kept[0].text == long and not kept[0].trimmed


def test_passage_blend_lifts_a_long_note_that_matches_as_a_whole_and_in_one_place(tmp_path: Path) -> None:
    """Two long notes hold the same phrase in one passage; one also names the phrase's words elsewhere.
    With the blend off they tie on BM25 (the best passage decides both); with it on, the note that
    matches both as a whole and in one place ranks first, by exactly blend × its lesser body score."""
    from remnic.index.passage_bm25 import passage_scores
    from remnic.recall.candidates import best_of

    memory = vault(tmp_path)
    plain = long_note(9_000, TAIL, seed=21)
    echoed = plain.replace("## Part 3", "## Part 3\n\nThe keeper mentioned a crimson door in April.", 1)
    assert echoed != plain
    write(memory, "notes/plain.md", plain)
    write(memory, "notes/echoed.md", echoed)
    crowd(memory)
    assert memory.sync().commit
    _snap, bm25, _catalog = memory.index.view()
    terms = query_terms(QUERY)
    boosts = {"body": 1.0}
    whole = bm25.search(terms, 50, boosts=boosts)
    found = passage_scores(bm25, terms, 100, boosts=boosts)
    p, e = found["notes/plain.md"], found["notes/echoed.md"]
    assert p.wins and e.wins and abs(p.passage_body - e.passage_body) < 1e-4 * p.passage_body
    assert e.whole_body > p.whole_body > 0

    off = {path: score for path, score, _n in best_of(whole, found, 0.0)}
    on = dict((path, score) for path, score, _n in best_of(whole, found, 0.5))
    assert abs(off["notes/echoed.md"] - off["notes/plain.md"]) < 1e-3 * off["notes/plain.md"]
    assert abs(on["notes/echoed.md"] - (e.whole - e.whole_body + e.passage_body + 0.5 * e.whole_body)) < 1e-9
    assert on["notes/echoed.md"] > on["notes/plain.md"] + 0.1 * e.whole_body

    settings = settings_for(memory.root, recall={"passage_bm25_blend": 0.5})
    with Memory.open(settings=settings) as blended:
        hits = blended.recall(QUERY).hits
        assert [h.path for h in hits[:2]] == ["notes/echoed.md", "notes/plain.md"]
        assert hits[0].signals["bm25Passage"] is not None
    memory.close()
