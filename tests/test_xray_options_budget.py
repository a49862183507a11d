"""Pinned audit/snapshot ids name the recall's options; the budget keeps the first hit; budget 0 is no limit.

- With ``REMNIC_XRAY_CLOCK`` the audit entry id and snapshot id hash every option that changes the
  result: ``xray Q --top-k 1`` and ``--top-k 3`` are two entries, and ``audit show`` finds each.
- A budget smaller than the rank-1 hit trims that hit (it is never dropped for a lower-ranked one);
  ``budget 1`` still returns it.
- ``0`` means no limit on every surface (``query``/``xray --budget 0``, HTTP ``budgetChars: 0``,
  the X-ray's ``budget`` param) and renders as ``budget: N chars (no limit)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from test_server_http import Env, make_env

from remnic.recall.budget import fit_budget
from remnic.render.xray import render_xray
from remnic.service.memory import Memory

CLOCK = "1776706200000"


def write(root: Path, name: str, body: str, status: str = "active") -> None:
    text = f"---\nid: mem_{name}\ncategory: fact\nstatus: {status}\n---\n{body}\n"
    (root / "facts" / f"{name}.md").write_text(text, encoding="utf-8")


@pytest.fixture
def repo(memory: Memory) -> Memory:
    write(memory.root, "deploy", "We deploy on Tuesdays after the standup.")
    write(memory.root, "freeze", "Deploys freeze on Fridays.")
    write(memory.root, "laptop", "The deploy script lives on the build laptop.")
    memory.sync()
    return memory


def test_pinned_ids_differ_with_the_options(repo: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_XRAY_CLOCK", CLOCK)
    root = str(repo.root)
    snaps = {}
    for k in ("1", "3"):
        out = run_cli("xray", "deploy", "--top-k", k, "--json", "--memory-dir", root)
        assert out.code == 0, out.err
        snaps[k] = out.json()
    one, three = snaps["1"], snaps["3"]
    audit1, audit3 = one["results"][0]["auditEntryId"], three["results"][0]["auditEntryId"]
    assert audit1 != audit3 and one["snapshotId"] != three["snapshotId"]
    for audit_id, snap in ((audit1, one), (audit3, three)):
        shown = run_cli("audit", "show", audit_id, "--json", "--memory-dir", root).json()
        assert shown["returnedIds"] == [r["memoryId"] for r in snap["results"]]
    assert len(one["results"]) == 1 and len(three["results"]) == 3
    again = run_cli("xray", "deploy", "--top-k", "1", "--json", "--memory-dir", root).json()
    assert again["snapshotId"] == one["snapshotId"]  # still reproducible for the same recall
    assert again["results"][0]["auditEntryId"] == audit1
    ids = {repo.recall("deploy", clock=int(CLOCK), **kw).audit_id for kw in ({}, {"budget_chars": 30}, {"tags": ["x"]})}
    assert len(ids) == 3


def test_the_first_hit_is_trimmed_never_dropped_for_a_lower_one() -> None:
    first = "The recall cache TTL is fifteen minutes, decided in May 2026."  # 61 characters
    assert len(first) == 61
    kept, used = fit_budget([first, "cache TTL rumour"], [[], []], 60)
    assert [k.index for k in kept] == [0] and kept[0].trimmed and used == len(kept[0].text) <= 60
    assert kept[0].text.endswith("…")
    tiny, used = fit_budget([first, "short"], [[], []], 1)
    assert [k.index for k in tiny] == [0] and used == 1
    roomy, _ = fit_budget([first, "cache TTL rumour"], [[], []], 500)
    assert [k.index for k in roomy] == [0, 1]


def test_a_tiny_budget_returns_the_best_match(repo: Memory) -> None:
    best = repo.recall("when do we deploy", top_k=2, budget_chars=0).hits[0]
    for budget in (20, 1):
        result = repo.recall("when do we deploy", top_k=2, budget_chars=budget)
        assert [h.id for h in result.hits] == [best.id] and result.hits[0].trimmed
        assert result.budget_used <= budget


def test_budget_zero_is_no_limit_in_the_rendering_and_on_the_cli(repo: Memory) -> None:
    root = str(repo.root)
    snap = repo.recall_xray("deploy", budget_chars=0)
    assert snap is not None and snap.budget.chars == 0
    text = render_xray(snap, "text")
    assert f"budget: {snap.budget.used} chars (no limit)" in text and "/ 0 chars" not in text
    assert f"| Budget | {snap.budget.used} chars (no limit) |" in render_xray(snap, "markdown")
    assert "- budget-fit: 3/3 admitted (no limit)" in text
    xray = run_cli("xray", "deploy", "--budget", "0", "--json", "--memory-dir", root)
    assert xray.code == 0, xray.err
    assert xray.json()["budget"]["chars"] == 0
    query = run_cli("query", "deploy", "--budget", "0", "--json", "--memory-dir", root)
    assert query.code == 0 and len(json.loads(query.out)["hits"]) == 3


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    for e in make_env(tmp_path, monkeypatch):
        write(e.root, "deploy", "We deploy on Tuesdays after the standup. " * 20)
        assert run_cli("sync", "run", "--memory-dir", str(e.root)).code == 0
        yield e


def test_http_budget_zero_is_no_limit(env: Env) -> None:
    r = env.call("POST", "/remnic/v1/recall", {"query": "deploy", "budgetChars": 0})
    assert r.status == 200, r.raw
    body = r.json()
    assert body["budgetsApplied"]["budgetChars"] == 0 and body["count"] == 1
    assert len(body["results"][0]["content"]) > 800  # whole, not cut to the default budget
    x = env.call("GET", "/remnic/v1/recall/xray?q=deploy&budget=0")
    assert x.status == 200, x.raw
    assert x.json()["snapshot"]["budget"]["chars"] == 0
    assert env.call("POST", "/remnic/v1/recall", {"query": "deploy", "budgetChars": -1}).status == 400
