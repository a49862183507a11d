"""Leave-one-conversation-out cross-validation of tuned recall settings on LoCoMo.

Tuning weights on the same questions that report them flatters them. Here a
*grid* of candidate settings (named :class:`~remnic.bench.locomo.Method` s, the
first being remnic's defaults) is evaluated once per conversation; then, for
each conversation in turn, the candidate with the best objective on the *other*
conversations is chosen and scored on the held-out one. The pooled held-out
scores are the cross-validated figures; they are reported beside the in-sample
ones (the candidate that is best on all conversations, scored on those same
conversations) and beside the defaults.

A setting is kept only when it wins out of sample: the verdict compares the
cross-validated objective with the defaults' objective on the same questions,
and a win must be worth at least one question (1 / the number of questions of
categories 1–4): a smaller one is a question answered differently by chance.

Objective: mean over the questions of categories 1–4 of (R@5 + R@10) / 2.
Ties go to the earlier candidate, so the defaults win a tie.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import md_table
from .locomo import CATEGORY_NAMES, DEFAULT_KS, Method, QResult, collect, load_all, memory_items, summarize

# The candidates `remnic benchmark locomo --cv` chooses among (the first is the defaults): the previous
# round's defaults (no query aspect, no question/reply rule), one change each to the settings this round
# added (the query aspect, the question penalty and the reply lift), and to fusion, dates, the context
# terms, the neighbour cap and MMR. Sessions (long memories) also try their chunk mean and how a long
# memory's BM25 blends its whole body with its best passage (turns have no passages: a no-op there).
# Both try the query expansion's weight and similarity floor.
PREVIOUS = {
    "query_aspect_weight": 0.0,
    "question_penalty": 0.0,
    "reply_alpha": 0.0,
    "passage_bm25_blend": 0.0,
    "query_expansion_weight": 0.0,
}
EXPANSION = (
    Method("queryExpansionWeight=0", {"query_expansion_weight": 0.0}, "round 4: no query expansion"),
    Method("queryExpansionWeight=0.35", {"query_expansion_weight": 0.35}),
    Method("queryExpansionWeight=0.75", {"query_expansion_weight": 0.75}),
    Method("queryExpansionMinSimilarity=0.6", {"query_expansion_min_similarity": 0.6}),
)
TURN_GRID: tuple[Method, ...] = (
    Method("defaults", {}, "remnic defaults"),
    Method("previous defaults", PREVIOUS, "round 2: no query aspect, no question/reply rule"),
    Method("queryAspectWeight=0", {"query_aspect_weight": 0.0}),
    Method("queryAspectWeight=0.3", {"query_aspect_weight": 0.3}),
    Method("queryAspectWeight=0.7", {"query_aspect_weight": 0.7}),
    Method("questionPenalty=0", {"question_penalty": 0.0}),
    Method("questionPenalty=0.1", {"question_penalty": 0.1}),
    Method("questionPenalty=0.3", {"question_penalty": 0.3}),
    Method("replyAlpha=0", {"reply_alpha": 0.0}),
    Method("replyAlpha=0.5", {"reply_alpha": 0.5}),
    Method("neighbourCap off", {"neighbour_cap": False}),
    Method("weightStatesTime=0.5", {"weight_states_time": 0.5}),
    Method("weightBm25=1.0", {"weight_bm25": 1.0}),
    Method("weightBm25=1.5", {"weight_bm25": 1.5}),
    Method("contextWeight=0.3", {"context_weight": 0.3}),
    Method("contextWeight=0.7", {"context_weight": 0.7}),
    Method("mmr lambda=0.8", {"mmr_lambda": 0.8}),
    *EXPANSION,
)
SESSION_GRID: tuple[Method, ...] = (
    Method("defaults", {}, "remnic defaults"),
    Method("previous defaults", PREVIOUS, "round 2: no query aspect"),
    Method("queryAspectWeight=0.3", {"query_aspect_weight": 0.3}),
    Method("queryAspectWeight=0.7", {"query_aspect_weight": 0.7}),
    Method("weightStatesTime=0.5", {"weight_states_time": 0.5}),
    Method("weightBm25=1.0", {"weight_bm25": 1.0}),
    Method("weightBm25=1.5", {"weight_bm25": 1.5}),
    Method("chunkTopK=1", {"chunk_top_k": 1}),
    Method("chunkTopK=3", {"chunk_top_k": 3}),
    Method("mmr lambda=0.9", {"mmr_lambda": 0.9}),
    Method("passageBm25Blend=0", {"passage_bm25_blend": 0.0}, "round 3: the better of whole body and passage only"),
    Method("passageBm25Blend=1.0", {"passage_bm25_blend": 1.0}),
    *EXPANSION,
)
GRIDS = {"turn": TURN_GRID, "session": SESSION_GRID}


def objective(results: Sequence[QResult]) -> float:
    """Mean of (R@5 + R@10) / 2 over the questions of categories 1–4 (0 when there are none)."""
    main = [r for r in results if r.category != 5]
    if not main:
        return 0.0
    return statistics.fmean((r.found[5] + r.found[10]) / 2 for r in main)


def cross_validate(per_method: dict[str, list[QResult]], grid: Sequence[Method], ks: Sequence[int]) -> dict[str, Any]:
    """Leave-one-conversation-out selection over ``grid`` from per-question results (pure)."""
    names = [m.name for m in grid]
    default = names[0]
    convs = sorted({r.conversation for r in per_method[default]})

    def of(name: str, keep: Callable[[str], bool]) -> list[QResult]:
        return [r for r in per_method[name] if keep(r.conversation)]

    def best(keep: Callable[[str], bool]) -> tuple[str, float]:
        scored = [(objective(of(n, keep)), -i, n) for i, n in enumerate(names)]
        score, _, name = max(scored)
        return name, score

    folds: list[dict[str, Any]] = []
    pooled: list[QResult] = []
    for held in convs:

        def training(c: str, held: str = held) -> bool:
            return c != held

        def testing(c: str, held: str = held) -> bool:
            return c == held

        chosen, train_score = best(training)
        held_results = of(chosen, testing)
        default_results = of(default, testing)
        pooled += held_results
        folds.append(
            {
                "heldOut": held,
                "chosen": chosen,
                "trainObjective": train_score,
                "objective": objective(held_results),
                "defaultObjective": objective(default_results),
                "summary": summarize(held_results, ks),
                "defaultSummary": summarize(default_results, ks),
            }
        )
    in_sample, in_score = best(lambda c: True)
    cv_score, default_score = objective(pooled), objective(per_method[default])
    margin = 1.0 / max(1, sum(1 for r in per_method[default] if r.category != 5))
    return {
        "default": default,
        "folds": folds,
        "crossValidated": summarize(pooled, ks),
        "crossValidatedObjective": cv_score,
        "foldMean": {
            f"recall@{k}": statistics.fmean(f["summary"]["overall"].get(f"recall@{k}", 0.0) for f in folds) for k in ks
        },
        "inSample": {"chosen": in_sample, "objective": in_score, "summary": summarize(per_method[in_sample], ks)},
        "defaults": summarize(per_method[default], ks),
        "defaultObjective": default_score,
        "margin": margin,
        "kept": in_sample if in_sample != default and cv_score >= default_score + margin else default,
        "methods": {n: summarize(per_method[n], ks) for n in names},
    }


def run_cv(
    data: Sequence[str | Path],
    *,
    granularity: str = "turn",
    ks: Sequence[int] = DEFAULT_KS,
    grid: Sequence[Method] | None = None,
    limit_questions: int | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Evaluate the grid on every conversation once, then cross-validate the choice among it."""
    ks = sorted(set(ks) | {5, 10})
    grid = tuple(grid or GRIDS[granularity])
    convs = load_all(data, limit_questions)
    if len(convs) < 2:
        raise ValueError("cross-validation needs at least two conversations")
    t = time.perf_counter()
    per_method, _ = collect(convs, granularity=granularity, ks=ks, methods=grid, log=log)
    out = cross_validate(per_method, grid, ks)
    out.update(
        granularity=granularity,
        ks=ks,
        conversations=[c.name for c in convs],
        memories=sum(len(memory_items(c, granularity)[0]) for c in convs),
        questions=sum(len(c.questions) for c in convs),
        grid=[{"name": m.name, "overrides": m.overrides, "note": m.note} for m in grid],
        seconds=time.perf_counter() - t,
    )
    return out


# --------------------------------------------------------------------------- rendering


def _f(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def render_cv(result: dict[str, Any]) -> str:
    ks = result["ks"]
    rows = [
        ("defaults", result["defaults"]),
        (f"in-sample best ({result['inSample']['chosen']})", result["inSample"]["summary"]),
        ("cross-validated (leave one conversation out)", result["crossValidated"]),
    ]
    head = ["", *[f"R@{k}" for k in ks], "MRR"]
    head += [f"{CATEGORY_NAMES[c]} ({c}) R@{k}" for c in (1, 2, 3, 4) for k in (5, 10)]
    table = []
    for label, s in rows:
        o = s["overall"]
        line = [label, *[_f(o.get(f"recall@{k}", "-")) for k in ks], _f(o.get("mrr", "-"))]
        for c in (1, 2, 3, 4):
            cs = s["categories"].get(c) or s["categories"].get(str(c)) or {}
            line += [_f(cs.get(f"recall@{k}", "-")) for k in (5, 10)]
        table.append(line)
    fold_rows = [
        [
            f["heldOut"],
            f["chosen"],
            _f(f["summary"]["overall"].get("recall@5", "-")),
            _f(f["summary"]["overall"].get("recall@10", "-")),
            _f(f["defaultSummary"]["overall"].get("recall@5", "-")),
            _f(f["defaultSummary"]["overall"].get("recall@10", "-")),
        ]
        for f in result["folds"]
    ]
    kept = result["kept"]
    verdict = (
        f"kept: **{kept}** (cross-validated objective {result['crossValidatedObjective']:.4f} vs defaults "
        f"{result['defaultObjective']:.4f})"
        if kept != result["default"]
        else f"kept: the defaults (cross-validated objective {result['crossValidatedObjective']:.4f}, "
        f"defaults {result['defaultObjective']:.4f}: tuning does not win out of sample by one question's worth, "
        f"{result.get('margin', 0.0):.4f})"
        if result["inSample"]["chosen"] != result["default"]
        else "kept: the defaults (they are also the in-sample best)"
    )
    fold_mean = ", ".join(f"{k.replace('recall@', 'R@')} {v:.3f}" for k, v in result["foldMean"].items())
    return "\n".join(
        [
            f"**{result['granularity']} granularity, cross-validated** — {len(result['conversations'])} "
            f"conversations, {result['memories']} memories, {len(result['grid'])} candidate settings; "
            f"objective (R@5 + R@10) / 2 over categories 1–4.",
            "",
            md_table(head, table),
            "",
            md_table(
                ["held out", "chosen on the other four", "R@5", "R@10", "defaults R@5", "defaults R@10"], fold_rows
            ),
            "",
            f"Mean over folds (each held-out conversation weighted alike; the cross-validated row pools the questions): {fold_mean}. {verdict}.",
        ]
    )
