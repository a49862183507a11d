"""Round 32: recall across spaces ranks every space's hits on one scale, and the similarity floor
exempts only a candidate BM25 matched on a word the user typed (not only on a word the query
expansion added). Real repositories, real spaces (the registry and the CLI), the real index and model."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import load_settings, settings_for
from remnic.recall.spaces import merge_space_results, space_scales
from remnic.recall.types import TERM_NAMES, RecallHit, RecallResult, ScoreTerms
from remnic.service.memory import Memory

EDITOR = "Ana switched her editor to helix last month"
PORT = "The staging database listens on port 5433"
FRUIT = "Ana's favourite fruit is mango"
DEPLOYS = "Deploys need two approvals"
QUERY = "which editor does Ana use"


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """One clock for every recall of a test: recency terms are then equal from recall to recall."""
    monkeypatch.setenv("REMNIC_XRAY_CLOCK", str(int(time.time() * 1000) + 60_000))


def ok(*args: str) -> dict:
    result = run_cli(*args, "--json")
    assert result.code == 0, (args, result.err)
    return json.loads(result.out) if result.out.strip() else {}


@pytest.fixture
def spaces(tmp_path: Path, spaces_file: Path) -> Path:
    """An active space ``mine`` and a read-only space ``handbook`` (a repository registered as it is)."""
    ok("space", "create", "mine", "--path", str(tmp_path / "mine"))
    ok("init", str(tmp_path / "handbook"))
    for text in (FRUIT, DEPLOYS):
        ok("store", text, "--memory-dir", str(tmp_path / "handbook"))
    ok("space", "create", "handbook", "--path", str(tmp_path / "handbook"), "--read-only")
    for text in (EDITOR, PORT):
        ok("store", text, "--space", "mine")
    return tmp_path


def summed(terms: ScoreTerms) -> float:
    return sum(getattr(terms, n) for n in TERM_NAMES if n != "mmr_penalty") - terms.mmr_penalty


def own_scores(root: Path, query: str) -> dict[str, float]:
    with Memory.open(settings=load_settings(root)) as mem:
        return {h.content: h.score for h in mem.recall(query, top_k=5, spaces=False)}


def test_a_spaces_weak_best_no_longer_ties_with_another_spaces_answer(spaces: Path) -> None:
    alone = own_scores(spaces / "mine", QUERY)
    theirs = own_scores(spaces / "handbook", QUERY)
    # In its own space the fruit note is the best of a bad lot and scores like a perfect match.
    assert theirs[FRUIT] == pytest.approx(alone[EDITOR])
    with Memory.open(settings=load_settings(spaces / "mine")) as mem:
        result = mem.recall(QUERY, top_k=5, xray=True)
    by_text = {h.content: h for h in result.hits}
    assert [h.content for h in result.hits][:2] == [EDITOR, FRUIT]
    assert by_text[FRUIT].space == "handbook" and by_text[EDITOR].space == "mine"
    assert by_text[FRUIT].score < 0.6 * by_text[EDITOR].score  # was a tie (2.295 both)
    # The active space holds the best match: its scores are exactly those of a recall of it alone.
    assert by_text[EDITOR].score == alone[EDITOR]
    assert "space scale" not in by_text[EDITOR].tier_note
    # The read-only space's scores are its own ones times its scale, every term alike.
    scale = result.index["spaces"]["handbook"]["scale"]
    assert 0 < scale < 0.6
    assert by_text[FRUIT].score == pytest.approx(theirs[FRUIT] * scale, rel=1e-5)
    # The X-ray stays truthful: each decomposition sums to the score shown, and says why it is lower.
    for hit in result.hits:
        assert summed(hit.terms) == pytest.approx(hit.score, abs=1e-9)
    xray = {r.memory_id: r for r in result.xray.results}
    fruit = xray[by_text[FRUIT].id]
    assert fruit.score.final == pytest.approx(by_text[FRUIT].score, abs=1e-6)
    assert fruit.provenance.space == "handbook" and "space scale ×" in fruit.provenance.retrieval_reason
    shown = run_cli("query", QUERY, "--space", "mine", "--json")
    hits = json.loads(shown.out)["hits"]
    assert [h["content"] for h in hits][:2] == [EDITOR, FRUIT]
    for h in hits:
        parts = h["scoreDecomposition"]
        total = sum(v for k, v in parts.items() if k not in ("final", "mmrPenalty")) - parts["mmrPenalty"]
        assert total == pytest.approx(h["score"], abs=1e-5) and parts["final"] == h["score"]

    # The other way round: the read-only space holds the better match, and the active space's hits shrink.
    query = "what is Ana's favourite fruit"
    alone = own_scores(spaces / "mine", query)
    with Memory.open(settings=load_settings(spaces / "mine")) as mem:
        result = mem.recall(query, top_k=5)
    by_text = {h.content: h for h in result.hits}
    assert result.hits[0].content == FRUIT and result.hits[0].space == "handbook"  # old code: a tie, active first
    assert result.index["spaces"]["handbook"]["scale"] == 1.0
    assert by_text[EDITOR].score < 0.8 * alone[EDITOR] and "space scale ×" in by_text[EDITOR].tier_note


def test_with_no_other_space_a_recall_is_exactly_what_it_was(tmp_path: Path, spaces_file: Path) -> None:
    ok("space", "create", "mine", "--path", str(tmp_path / "mine"))
    for text in (EDITOR, PORT, FRUIT):
        ok("store", text, "--space", "mine")
    with Memory.open(settings=load_settings(tmp_path / "mine")) as mem:
        spanned = mem.recall(QUERY, top_k=5)
        plain = mem.recall(QUERY, top_k=5, spaces=False)
    assert spanned.spaces == ["mine"] and "spaces" not in spanned.index
    assert [(h.id, h.score, h.terms) for h in spanned.hits] == [(h.id, h.score, h.terms) for h in plain.hits]


def _hit(text: str, vector: float, bm25: float, cosine: float | None, raw_bm25: float | None) -> RecallHit:
    terms = ScoreTerms(vector=vector, bm25=bm25, importance=0.025, recency=0.02, propagation=0.1)
    signals = {"cosine": cosine, "bm25": raw_bm25}
    return RecallHit(text, text, terms.final, text, {}, "default", "fact", "active", 1, terms, signals, [])


def test_space_scales_read_each_signal_against_the_best_of_all_spaces() -> None:
    strong = [_hit("a", 1.0, 1.25, 0.6, 2.0), _hit("b", 0.2, 0.0, 0.3, None)]
    weak = [_hit("c", 1.0, 1.25, 0.15, 0.5)]
    vectors_only = [_hit("d", 1.0, 0.0, 0.3, None)]
    scan = [_hit("e", 0.0, 0.0, None, None)]
    scales = space_scales([strong, weak, vectors_only, scan, []])
    assert scales[0] == 1.0 and scales[3] == 1.0 and scales[4] == 1.0
    assert scales[1] == pytest.approx((1.0 * 0.25 + 1.25 * 0.25) / 2.25)
    assert scales[2] == pytest.approx(0.5)  # no BM25 match of its own: only its cosine is compared

    def result(hits: list[RecallHit]) -> RecallResult:
        return RecallResult("q", hits, [], [], None, 0, 0, {}, result_limit=5)

    merged = merge_space_results(result(strong), "mine", [("ro", result(weak))])
    assert [h.id for h in merged.hits] == ["a", "c", "b"]
    c = merged.hits[1]
    assert c.score == pytest.approx((2.25 + 0.145) * scales[1]) and c.terms.propagation == pytest.approx(
        0.1 * scales[1]
    )
    assert c.score == c.terms.final and merged.index["spaces"]["ro"]["scale"] == pytest.approx(scales[1])


# --------------------------------------------------------------------- the similarity floor


def test_a_match_on_an_expansion_word_alone_does_not_get_past_the_similarity_floor(tmp_path: Path) -> None:
    root = tmp_path / "m"
    invoice = "Invoice 7731 from the catering vendor lists a deposit refund, parking passes and an editor credit"
    freight = "Bulk shipment tracking: pallets, forklifts and warehouse dock schedules for March, carrier Ana Freight"
    grinder = "Replace the broken coffee grinder on floor two"
    with Memory.init(root, settings=settings_for(root)) as mem:
        for text in (DEPLOYS, PORT, invoice, freight):
            mem.store(text)
        mem.store(grinder, tags=["editor"])
        result = mem.recall(QUERY, top_k=10, spaces=False)
    assert "use→need" in result.stages[0].reason  # 'use' was expanded to 'need', which only DEPLOYS holds
    cands = {c.path.split("/")[-1].split("-")[0]: c for c in result.candidates}
    deploys = cands["deploys"]
    assert deploys.bm25 is not None and deploys.chunk_cosine < 0.2
    assert deploys.dropped_at == "similarity-floor"  # old code: exempt, and a hit
    # Words the user typed still exempt a candidate from the floor, whatever its cosine and field.
    kept = {h.content for h in result.hits}
    assert {invoice, freight, grinder} <= kept and DEPLOYS not in kept
    assert all(cands[k].chunk_cosine < 0.2 for k in ("invoice", "bulk", "replace"))
    floor = next(s for s in result.stages if s.name == "similarity-floor")
    assert floor.considered - floor.admitted == 2  # DEPLOYS and the port note (no BM25 match at all)
