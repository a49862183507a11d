"""A small smoke run of the LoCoMo harness: real import through the API, real index, real model."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from remnic.bench import locomo

DATA = locomo.default_data_dir()
SESSIONS = 2  # the first sessions of one conversation (44 turns, 17 questions in categories 1–4): a few seconds


def _sessions(data: dict[str, Any], keep: set[str], out: Path) -> Path:
    """A LoCoMo file of only the ``keep`` sessions and the questions whose evidence all lies in them."""
    conv = data.get("conversation", data)
    trimmed = {
        k: v
        for k, v in conv.items()
        if not k.startswith("session_") or k in keep or k.rsplit("_date_time", 1)[0] in keep
    }
    known = {t["dia_id"] for k in keep if k in conv for t in conv[k]}
    qa = [
        q
        for q in data["qa"]
        if set(locomo.normalize_evidence(q.get("evidence", []))) <= known
        and locomo.normalize_evidence(q.get("evidence", []))
    ]
    out.write_text(json.dumps({**trimmed, "qa": qa}), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = DATA / "30.json"
    if not src.is_file():
        pytest.skip(f"LoCoMo data not found at {DATA}")
    data = json.loads(src.read_text(encoding="utf-8"))
    keep = {f"session_{n}" for n in range(1, SESSIONS + 1)}
    return _sessions(data, keep, tmp_path_factory.mktemp("locomo") / "30-head.json")


def test_loader_normalises_the_data(subset: Path) -> None:
    conv = locomo.load_conversation(subset)
    assert conv.turns and conv.questions
    assert all(t.date is not None for t in conv.turns)
    assert locomo.normalize_evidence(["D8:6; D9:17", "D:11:26", "D"]) == ["D8:6", "D9:17", "D11:26"]
    items, holds = locomo.memory_items(conv, "turn")
    first = items[0]
    assert first["sourceTurnId"] == conv.turns[0].dia_id and first["episodeId"] == "session-1"
    assert first["content"].startswith(conv.turns[0].speaker + ": ")
    assert holds[first["id"]] == {conv.turns[0].dia_id}
    sessions, sholds = locomo.memory_items(conv, "session")
    assert len(sessions) == SESSIONS and sum(len(v) for v in sholds.values()) == len(conv.turns)


def test_turn_smoke_run_has_sane_metrics_and_hybrid_beats_bm25(subset: Path) -> None:
    result = locomo.run_locomo([subset], granularity="turn", ks=(1, 5, 10), methods=locomo.BASELINES[:3])
    methods = result["methods"]
    for name, summary in methods.items():
        o = summary["overall"]
        assert o["n"] > 10, name
        assert 0.0 <= o["recall@1"] <= o["recall@5"] <= o["recall@10"] <= 1.0
        assert o["recall@5"] <= o["hit@5"] <= 1.0 and 0.0 < o["mrr"] <= 1.0
        assert o["p50_ms"] > 0
    hybrid, bm25, vec = (methods[m]["overall"] for m in ("hybrid", "bm25-only", "vector-only"))
    # 17 questions: one of them is 0.059 of R@10, so this smoke run allows BM25-only a near tie; on all five
    # conversations hybrid leads (docs/benchmarks.md).
    assert hybrid["recall@10"] >= bm25["recall@10"] - 0.05
    assert hybrid["recall@5"] >= vec["recall@5"]
    assert hybrid["recall@10"] >= 0.6  # far above chance (10 of 44 candidate turns)
    text = locomo.render(result)
    assert "| hybrid |" in text and "single-hop (4) R@5" in text


def _q(conv: str, found: float, category: int = 1) -> locomo.QResult:
    return locomo.QResult(category, {5: found, 10: found}, {5: found, 10: found}, found, 1.0, conv)


def test_cross_validation_keeps_a_setting_only_when_it_wins_out_of_sample() -> None:
    from remnic.bench.locomo_cv import cross_validate

    grid = (locomo.Method("defaults"), locomo.Method("lucky"), locomo.Method("narrow"))
    per = {
        "defaults": [_q(c, 0.5) for c in "ABC" for _ in range(4)],
        # Best on all three pooled (in-sample), but only because of A and B: C, held out, collapses.
        "lucky": [_q(c, 1.0 if c in "AB" else 0.0) for c in "ABC" for _ in range(4)],
        "narrow": [_q(c, 1.0 if c == "A" else 0.0) for c in "ABC" for _ in range(4)],
    }
    cv = cross_validate(per, grid, (5, 10))
    assert cv["inSample"]["chosen"] == "lucky"
    assert cv["inSample"]["summary"]["overall"]["recall@5"] > cv["defaults"]["overall"]["recall@5"]
    chosen = {f["heldOut"]: f["chosen"] for f in cv["folds"]}
    assert chosen == {"A": "defaults", "B": "defaults", "C": "lucky"}  # ties go to the defaults
    assert cv["crossValidated"]["overall"]["recall@5"] < cv["defaults"]["overall"]["recall@5"]
    assert cv["kept"] == "defaults"
    per["lucky"] = [_q(c, 0.9) for c in "ABC" for _ in range(4)]  # now it generalises
    assert cross_validate(per, grid, (5, 10))["kept"] == "lucky"
    # A win smaller than one question's worth (1/12 here) is not a win.
    per["lucky"] = [_q(c, 0.52 if i == 0 else 0.5) for c in "ABC" for i in range(4)]
    cv = cross_validate(per, grid, (5, 10))
    assert cv["inSample"]["chosen"] == "lucky" and cv["crossValidatedObjective"] > cv["defaultObjective"]
    assert cv["margin"] == 1 / 12 and cv["kept"] == "defaults"


def test_cv_flag_needs_two_conversations(subset: Path) -> None:
    from conftest import run_cli

    res = run_cli("benchmark", "locomo", "--cv", "--data", str(subset))
    assert res.code == 2 and "two conversations" in res.err


def test_cv_smoke_run_reports_held_out_figures_per_category(subset: Path, tmp_path: Path) -> None:
    from remnic.bench import locomo_cv

    # Two short conversations, the subset's two sessions apart (28 turns, 16 questions; 16 turns, 4): temporal
    # questions among them, and each one held out once.
    data = json.loads(subset.read_text(encoding="utf-8"))
    first = _sessions(data, {"session_1"}, tmp_path / "30-first1.json")
    second = _sessions(data, {"session_2"}, tmp_path / "30-second2.json")
    grid = (locomo.Method("defaults"), locomo.Method("bm25-only", {"weight_vector": 0.0}))
    cv = locomo_cv.run_cv([first, second], granularity="turn", grid=grid)
    assert [f["heldOut"] for f in cv["folds"]] == sorted(cv["conversations"])
    assert all(f["chosen"] in ("defaults", "bm25-only") for f in cv["folds"])
    overall = cv["crossValidated"]["overall"]
    assert 0.0 < overall["recall@5"] <= overall["recall@10"] <= 1.0
    assert overall["n"] == cv["defaults"]["overall"]["n"]
    text = locomo_cv.render_cv(cv)
    assert "cross-validated (leave one conversation out)" in text and "temporal (2) R@5" in text


def test_pipeline_track_smoke_run_through_the_cli(subset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`remnic benchmark locomo --track pipeline`: observed turn by turn, reported beside the raw turns."""
    from conftest import run_cli

    from remnic.bench import pipeline

    # The model's own throughput line (256 texts of each kind by default) is timed on a few here: this smoke
    # run checks the report's wiring, not the figure.
    monkeypatch.setattr(pipeline, "model_speed", functools.partial(pipeline.model_speed, samples=8))
    result = run_cli("benchmark", "locomo", "--track", "pipeline", "--data", str(subset), "--json")
    assert result.code == 0, result.err
    out = result.json()
    observed, raw = out["pipeline"], out["raw"]
    totals = observed["totals"]
    conv = locomo.load_conversation(subset)
    assert totals["turns"] == len(conv.turns) and totals["primitives"] > 0
    assert totals["accepted"] + totals["rejected"] + totals["deferred"] == totals["verdicts"]
    assert totals["stored"] <= totals["primitives"] and totals["keptTokens"] < totals["traceTokens"]
    assert observed["compression"] == totals["traceTokens"] / totals["keptTokens"] > 1.0
    o = observed["metrics"]["overall"]
    assert o["n"] == raw["methods"]["hybrid"]["overall"]["n"] > 10
    assert 0.0 <= o["recall@5"] <= o["recall@10"] <= 1.0 and o["recall@10"] >= 0.3  # far above chance
    assert observed["turnsPerSecond"] > 0 and observed["turnsPerCpuSecond"] > 0
    assert observed["model"]["factsPerCpuSecond"] > 0 and observed["model"]["passagesPerCpuSecond"] > 0
    text = pipeline.render(observed, raw) + "\n" + pipeline.targets(observed, raw)
    assert "| pipeline (observed) |" in text and "single-hop R@10" in text and "compression ≥ 2×" in text


def test_cli_observe_times_one_whole_process_and_reports_the_target(subset: Path) -> None:
    """The 500-turn `remnic observe` target: a real CLI process on a fresh repository, wall and CPU."""
    from remnic.bench import pipeline

    conv = locomo.load_conversation(subset)
    cli = pipeline.cli_observe(conv, turns=12)
    assert cli["turns"] == 12 and cli["primitives"] > 0
    assert cli["seconds"] > 0 and cli["cpuSeconds"] > 0  # the child's CPU, git included
    row = pipeline.targets({**_fake_pipeline(), "cli": {**cli, "loadBefore": 1.0}}, _fake_raw())
    assert "`remnic observe` of a 500-turn transcript ≤ 5 s" in row and "**missed**" in row.splitlines()[-1]


def _fake_pipeline() -> dict[str, Any]:
    overall = {"recall@10": 0.8}
    return {
        "metrics": {"overall": overall},
        "compression": 2.1,
        "turnsPerSecond": 250.0,
        "observeTurnsPerCpuSecond": 200,
    }


def _fake_raw() -> dict[str, Any]:
    from remnic.bench.locomo import BASELINES

    return {"methods": {BASELINES[0].name: {"overall": {"recall@10": 0.82}}}}
