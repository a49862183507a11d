"""The recall pipeline's pure stages, episode context/expansion on a real index, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from remnic.cli import main
from remnic.config import RecallSettings, describe_settings, settings_for
from remnic.index import text as T
from remnic.index.bm25 import query_terms
from remnic.index.rows import turn_of
from remnic.memfile.model import MemoryRecord
from remnic.recall import scoring
from remnic.recall.budget import fit_budget
from remnic.recall.ladder import run_gate, token_overlap
from remnic.recall.mmr import mmr_order
from remnic.recall.types import Candidate, ScoreTerms
from remnic.service.memory import Memory

# --------------------------------------------------------------------- pure stages


def test_query_terms_drop_stopwords_but_never_everything() -> None:
    assert query_terms("When did Caroline go to the support group?") == ["carolin", "go", "support", "group"]
    assert query_terms("what's up?") == ["what", "s", "up"]
    assert query_terms("x" * 50 + " ok") == ["ok"]  # over-long tokens are dropped
    assert len(query_terms(" ".join(f"w{i}" for i in range(500)))) == 64


def test_chunks_carry_the_lead_label_and_are_bounded() -> None:
    rules = T.TextRules(max_chunks=3)
    assert T.chunks_for("Ana: I moved to Lisbon.", "Ana", rules) == ["Ana: I moved to Lisbon."]
    chunks = T.chunks_for("Ana: I moved to Lisbon. The rent is lower. I miss the rain!", "Ana", rules)
    assert chunks == ["Ana: I moved to Lisbon.", "Ana: The rent is lower.", "Ana: I miss the rain!"]
    many = T.chunks_for(" ".join(f"Sentence number {i} is here." for i in range(10)), "", rules)
    assert len(many) == 3
    assert T.lead_label("Decision: ship on Tuesdays") == "Decision"
    assert T.lead_label("See https://example.com: a link") is None
    assert T.lead_label("Plain text without a label") is None
    rec = MemoryRecord("facts/x.md", {"title": "Release policy"}, "\nWe ship.\n")
    assert T.title_of(rec) == "Release policy"


def test_episode_keys_and_order() -> None:
    assert T.episode_key({"episodeId": "s1"}, "default") == "default\x1fs1"
    assert T.episode_key({"sourceTurnId": "D3:14"}, "default") == "default\x1fD3"
    assert T.episode_key({"sourceTurnId": "sess-7/turn-2"}, "work") == "work\x1fsess-7"
    assert T.episode_key({"sourceTurnId": "lonely"}, "default") is None
    assert T.episode_key({}, "default") is None
    # An agent host's turn ids name no session: an observed fact's episode is the session it was observed in.
    uuid = {"sourceTurnId": "3f2a9c1e-1b2c-4d5e-8f90-123456789abc", "sessionKey": "claude-code:42"}
    assert T.episode_key(uuid, "default") == "default\x1fclaude-code:42"
    assert T.episode_key({"sourceTurnId": "D3:14", "sessionKey": "x"}, "default") == "default\x1fD3"
    # … and its place in it is when it was said: uuids sort any which way.
    said = [
        ("2026-05-02T09:00:10.000Z", "ffe0-1"),
        ("2026-05-02T09:00:02.000Z", "9abc-2"),
        ("2026-05-02T09:01:00.000Z", "0d1e-3"),
    ]
    facts = [
        MemoryRecord(f"f{i}.md", {"observedAt": at, "sourceTurnId": turn}, "\nx\n") for i, (at, turn) in enumerate(said)
    ]
    observed = [T.Member(r.path, "x", 100.0, turn_of(r)) for r in facts]
    assert [m.path for m in sorted(observed, key=T.Member.sort_key)] == ["f1.md", "f0.md", "f2.md"]
    mixed = [T.Member("a.md", "x", 1.0, "9abc"), T.Member("b.md", "x", 1.0, "D1:2"), T.Member("c.md", "x", 1.0, None)]
    assert [m.path for m in sorted(mixed, key=T.Member.sort_key)] == ["c.md", "a.md", "b.md"]  # never a TypeError
    members = [T.Member(f"m{i}.md", f"turn {i}", 100.0, f"D1:{i}") for i in (10, 2, 1, 9)]
    assert [m.path for m in sorted(members, key=T.Member.sort_key)] == ["m1.md", "m2.md", "m9.md", "m10.md"]
    ctx = T.episode_contexts(members, 2, 600)
    assert ctx["m2.md"].near == "turn 1\nturn 9" and ctx["m2.md"].far == "turn 10"
    assert ctx["m2.md"].passage == "turn 1\nturn 2\nturn 9\nturn 10" and ctx["m2.md"].position == 1
    assert T.episode_contexts(members, 0, 600) == {}
    long = [T.Member("a.md", "x" * 700, 1.0, None), T.Member("b.md", "short", 2.0, None)]
    assert set(T.episode_contexts(long, 2, 600)) == {"b.md"}
    assert T.date_words(1683504960.0) == "8 May 2023 Monday d20230508 m202305 y2023"


def test_score_terms_sum_to_final() -> None:
    t = ScoreTerms(
        vector=0.8,
        bm25=1.1,
        importance=0.04,
        recency=0.01,
        status=-0.5,
        reinforcement=0.01,
        project=0.1,
        propagation=0.2,
        tier_prior=0.25,
        date=0.3,
        rerank=-0.15,
        mmr_penalty=0.1,
    )
    assert t.final == pytest.approx(0.8 + 1.1 + 0.3 + 0.04 + 0.01 - 0.5 + 0.01 + 0.1 + 0.2 + 0.25 - 0.15 - 0.1)
    assert t.base == pytest.approx(0.8 + 1.1 + 0.3 + 0.04 + 0.01 - 0.5 + 0.01 + 0.1)
    assert set(t.to_dict()) == {
        "final",
        "vector",
        "bm25",
        "date",
        "context",
        "rerank",
        "importance",
        "recency",
        "status",
        "reinforcement",
        "project",
        "propagation",
        "tierPrior",
        "mmrPenalty",
    }


def test_fusion_terms() -> None:
    cands = [Candidate(i, f"p{i}", f"m{i}", cos, cos, cos, vector_rank=i + 1) for i, cos in enumerate((0.9, 0.7, 0.5))]
    cands[1].bm25, cands[1].bm25_rank = 12.0, 1
    norms = scoring.norms_for(cands)
    assert (norms.cos_hi, norms.cos_lo, norms.bm25_hi) == (0.9, 0.5, 12.0)
    assert scoring.vector_term(0.9, norms, 1.0) == 1.0
    assert scoring.vector_term(0.7, norms, 1.0) == pytest.approx(0.5)
    assert scoring.vector_term(0.1, norms, 1.0) == 0.0  # below the candidates: clipped
    assert scoring.bm25_term(6.0, norms, 1.25) == pytest.approx(0.625)
    assert scoring.bm25_term(None, norms, 1.25) == 0.0
    assert scoring.rrf_term(1, 60, 1.0) == pytest.approx(1.0)
    assert scoring.rrf_term(None, 60, 1.0) == 0.0
    assert scoring.recency_term(1000.0 - 30 * 86400, 1000.0, 30.0, 0.02) == pytest.approx(0.01)
    assert scoring.recency_term(float("nan"), 1000.0, 30.0, 0.02) == 0.0


def test_mmr_penalises_near_duplicates_only_when_asked() -> None:
    v = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    assert mmr_order([1.0, 0.99, 0.8], v, 1.0, 3) == ([0, 1, 2], [0.0, 0.0, 0.0])
    order, penalties = mmr_order([1.0, 0.99, 0.8], v, 0.7, 3)
    assert order == [0, 2, 1] and penalties[2] == pytest.approx(0.3)


def test_budget_and_ladder() -> None:
    a, b, c = "a" * 50, " ".join(["word"] * 20), "c" * 20  # 50, 99 and 20 characters
    kept, used = fit_budget([a, b, c], [[], [], []], 80, min_chars=10)
    # b does not fit whole: it is cut to what is left (30), so c no longer fits and is dropped (0 < 10 left).
    assert [(f.index, f.trimmed) for f in kept] == [(0, False), (1, True)] and 70 < used <= 80
    assert kept[1].text.endswith("…") and len(kept[1].text) <= 30
    kept, used = fit_budget([a, b, c], [[], [], []], 80, min_chars=40)  # too little left to trim b: c fits whole
    assert [(f.index, f.trimmed) for f in kept] == [(0, False), (2, False)] and used == 70
    kept, used = fit_budget([a, b], [[], []], 0)
    assert [f.text for f in kept] == [a, b] and used == len(a) + len(b)
    # The first hit is never dropped (unless the budget itself is under min_chars); it keeps its best passages.
    long = "intro " * 50 + "THE MATCH IS HERE. " + "outro " * 50
    where = long.index("THE MATCH")
    kept, _ = fit_budget([long], [[(where, where + 18), (0, 300)]], 60, min_chars=50)
    assert kept[0].text == "THE MATCH IS HERE." and kept[0].trimmed
    cands = [Candidate(i, f"p{i}", f"m{i}", 0.0, 0.0, 0.0) for i in range(4)]
    kept, stage = run_gate("even", cands, lambda c: c.row % 2 == 0, "odd")
    assert [c.row for c in kept] == [0, 2] and (stage.considered, stage.admitted, stage.reason) == (4, 2, "odd")
    assert cands[1].rejected_by == "even" and cands[0].admitted_by == ["even"]
    assert token_overlap(["a", "b"], {"a"}) == 0.5


def test_long_memories_score_the_mean_of_their_best_chunks() -> None:
    """chunkTopK: a memory with >= chunkTopKMinChunks chunks scores the mean of its k best; short ones their best."""
    from remnic.index.vectors import Snapshot

    rng = np.random.default_rng(0)
    snap = Snapshot(8)
    lengths = [1, 2, 5, 7, 3, 12]
    rows = [
        (
            f"p{i}",
            f"id{i}",
            "ns",
            "fact",
            "active",
            None,
            0.5,
            0.9,
            None,
            0,
            rng.standard_normal((n, 8)).astype(np.float32).tobytes(),
            None,
            1,
        )
        for i, n in enumerate(lengths)
    ]
    snap.apply(rows, [], 1)
    snap.apply([rows[3]], [], 2)  # a rewritten row leaves a dead block behind
    q = rng.standard_normal(8).astype(np.float32)

    def brute(k: int, min_chunks: int) -> list[float]:
        out = []
        for i, n in enumerate(lengths):
            r = snap.row_of[f"p{i}"]
            sims = np.sort(snap.chunks.view[snap.seg_start[r] : snap.seg_start[r] + n] @ q)[::-1]
            out.append(float(sims[:k].mean()) if k > 1 and n >= max(2, min_chunks) else float(sims[0]))
        return out

    for k, min_chunks in ((1, 2), (2, 2), (3, 4), (2, 12), (20, 2)):
        got = snap.scores(q, 0.0, k, min_chunks).chunk
        np.testing.assert_allclose(
            [got[snap.row_of[f"p{i}"]] for i in range(len(lengths))], brute(k, min_chunks), atol=1e-5
        )


def test_every_recall_setting_is_documented() -> None:
    rows = [r for r in describe_settings() if r["key"].startswith("recall.")]
    assert len(rows) == len(RecallSettings.__dataclass_fields__)
    assert all(r["doc"] for r in rows)


# --------------------------------------------------------------------- episodes on a real index

TURNS = [
    ("Ana: Did you hear back about the apartment?", "s1"),
    ("Ben: Yes! The landlord finally said we can move in March.", "s1"),
    ("Ana: Amazing, congratulations!", "s1"),
    ("Ben: Thanks. It has a balcony facing the river.", "s1"),
    ("Ana: My sister started violin lessons last week.", "s2"),
    ("Ben: Nice, does she practise every day?", "s2"),
]


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root = tmp_path_factory.mktemp("chat") / "memory"
    memory = Memory.init(root, settings=settings_for(root))
    items = [
        {
            "content": text,
            "category": "moment",
            "episodeId": ep,
            "sourceTurnId": f"{ep}:{i}",
            "created": f"2024-03-0{1 + i // 4}T10:00:{i:02d}.000Z",
        }
        for i, (text, ep) in enumerate(TURNS)
    ]
    memory.import_records(items)
    memory.recall("warm", top_k=1)
    yield memory
    memory.close()


def test_short_turns_are_indexed_with_their_neighbours(chat: Memory) -> None:
    # "Amazing, congratulations!" says nothing about an apartment; its neighbours do.
    result = chat.recall("apartment landlord congratulations", top_k=3)
    assert any("congratulations" in h.content for h in result.hits)
    assert result.hits[0].frontmatter["sourceTurnId"].startswith("s1:")


def test_episode_expansion_offers_siblings_with_discounted_scores(chat: Memory) -> None:
    strong = Memory.open(
        settings=settings_for(chat.root, recall={"score_propagation_alpha": 0.9, "expansion_seeds": 1})
    )
    result = strong.recall("violin lessons", top_k=6)
    strong.close()
    top = result.hits[0]
    assert "violin" in top.content
    stage = result.expansion  # not a filter, so it is reported apart from the ladder
    assert stage is not None and stage.name == "episode-expansion" and stage.admitted >= 1
    assert all(s.name != "episode-expansion" for s in result.stages)
    sibling = next(h for h in result.hits if h.frontmatter["sourceTurnId"] == "s2:5")
    assert sibling.terms.propagation > 0 and sibling.signals["siblingOf"] == top.id
    # s2:5 asks a question (and nothing follows it): the lift, less the question penalty
    assert sibling.terms.context == pytest.approx(-RecallSettings().question_penalty)
    assert sibling.score == pytest.approx(0.9 * top.terms.base + sibling.terms.context, abs=1e-6)
    assert [h.frontmatter["sourceTurnId"] for h in result.hits[:2]] == ["s2:4", "s2:5"]
    off = Memory.open(settings=settings_for(chat.root, recall={"episode_expansion": False}))
    plain = off.recall("violin lessons", top_k=6)
    assert all(h.terms.propagation == 0 for h in plain.hits)
    assert plain.expansion is None
    off.close()


def test_dates_are_searchable(chat: Memory) -> None:
    # The balcony turn was written in March 2024; the landlord's turn names March itself.
    result = chat.recall("what happened in March 2024 about the balcony", top_k=2)
    assert {h.frontmatter["sourceTurnId"] for h in result.hits} == {"s1:1", "s1:3"}


def test_hits_expose_source_turn_id(chat: Memory) -> None:
    hit = chat.recall("river balcony", top_k=1).hits[0]
    assert hit.source_turn_id == "s1:3"
    assert hit.to_dict()["frontmatter"]["sourceTurnId"] == "s1:3"


# --------------------------------------------------------------------- CLI


def test_cli_query_json_and_text(chat: Memory, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "violin lessons", "--memory-dir", str(chat.root), "--json", "--top-k", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["count"] == 2 and "violin" in data["hits"][0]["content"]
    assert data["hits"][0]["frontmatter"]["sourceTurnId"]
    assert main(["query", "violin lessons", "--memory-dir", str(chat.root), "--explain"]) == 0
    out = capsys.readouterr().out
    # --explain appends the X-ray through the shared renderer (the same layout as `remnic xray`).
    assert "[1]" in out and "=== Recall X-ray ===" in out and "--- filters ---\n- namespace-scope: " in out
    assert "    score: final=" in out and "served-by=" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["query", "x", "--top-k", "0"], "--top-k"),
        (["query", "x", "--top-k", "many"], "--top-k"),
        (["query", "x", "--budget", "-5"], "--budget"),
        (["query", "x", "--category", "nope"], "category"),
    ],
)
def test_cli_bad_flags_exit_2_naming_the_flag(
    chat: Memory, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--memory-dir", str(chat.root)])
    assert exc.value.code == 2
    assert needle in capsys.readouterr().err


def test_cli_empty_query_and_reindex(chat: Memory, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "  ", "--memory-dir", str(chat.root)]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["reindex", "--memory-dir", str(chat.root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["action"] == "rebuild" and data["changed"] == len(TURNS) and data["embedded"] == 0
    assert data["index"]["state"] == "ok"


def test_cli_help_explains(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["query", "--help"])
    out = capsys.readouterr().out
    assert "--top-k" in out and "Hybrid recall" in out and "--namespace" in out


def test_nonsense_queries_find_nothing_and_the_xray_says_why(tmp_path) -> None:
    from remnic.config import settings_for
    from remnic.service.memory import Memory

    mem = Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m"))
    mem.import_records(
        [
            {"content": c}
            for c in (
                "We cut releases every Tuesday",
                "Ana prefers tabs over spaces",
                "The replica lag alarm fires above 200ms",
            )
        ]
    )
    assert len(mem.recall("when do we cut releases?")) >= 1
    assert len(mem.recall("zzzqqq nonexistent")) == 0
    snap = mem.recall_xray("zzzqqq nonexistent")
    floor = next(f for f in snap.filters if f.name == "similarity-floor")
    assert floor.considered > 0 and floor.admitted == 0 and "below-similarity-floor" in floor.reason
    mem.close()
