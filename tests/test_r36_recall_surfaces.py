"""Recall and X-ray agree across surfaces (h6): the MMR penalty is said to be subtracted, a trimmed hit
says so over HTTP and MCP, an unknown namespace warns on every surface, the X-ray takes ``topK``,
``tagMatch: "all"`` without tags and non-boolean flags are refused, and the ladder explains its order
and its pool cut.

One real repository and server (module scope; namespace policies on, ``mmrLambda`` 0.5 and
``mmrPool`` 3 so the MMR penalty and the pool cut show), driven over HTTP, MCP, Python and the CLI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from conftest import run_cli
from test_server_http import NAMESPACES, Env, make_shared_env

from remnic.errors import ValidationError
from remnic.render.xray import render_xray

ROOT = Path(__file__).resolve().parents[1]
LONG = "\n\n".join(
    f"## Part {i}\nThe hybrid retrieval pipeline blends BM25 and vectors, part {i}. " + "detail " * 70 for i in range(8)
).strip()
PAYMENTS = "payments cluster deploy window Friday 18:00 UTC release board"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    base = tmp_path_factory.mktemp("r36surfaces")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(base / "home"))
        for e in make_shared_env(base, namespaces=NAMESPACES, recall={"mmr_lambda": 0.5, "mmr_pool": 3}):
            mem = e.memory
            mem.store(LONG, category="fact", namespace="alice")
            old = mem.store(
                "The payments cluster deploy window is Friday at 18:00 UTC, approved by the release board",
                category="decision",
                namespace="alice",
            ).record.id
            mem.store(
                "Deploy window for payments moved to Thursday",
                category="decision",
                namespace="alice",
                extra={"supersedes": old},
            )
            mem.store("Release board meets on Mondays", category="fact", namespace="alice")
            mem.store("The payments cluster runs on three nodes", category="fact", namespace="alice")
            for i in range(5):
                mem.store(f"Payments note {i}: invoices are exported nightly", category="fact", namespace="alice")
            mem.store("Bob keeps the payments secrets here", category="fact", namespace="bob")
            yield e


def mcp(env: Env, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tools/call over the server's streamable HTTP endpoint (stateless), as alice."""
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    r = env.call("POST", "/mcp", msg, headers={"Accept": "application/json, text/event-stream"})
    assert r.status == 200, r.raw
    result: dict[str, Any] = r.json()["result"]
    return result


def xray_get(env: Env, **params: Any) -> Any:
    return env.call("GET", "/remnic/v1/recall/xray?" + urlencode(params))


# --- M1: mmr_penalty is a positive amount, subtracted ---


def test_the_mmr_penalty_is_subtracted_and_the_docs_and_help_say_so(env: Env) -> None:
    snap = env.memory.recall_xray(PAYMENTS, namespace="alice", top_k=4)
    assert snap is not None
    penalised = [r for r in snap.results if (r.score.mmr_penalty or 0) > 0]
    assert penalised, "mmrLambda 0.5 should penalise a near-duplicate"
    text = render_xray(snap, "text")
    for line in re.findall(r"score: (final=.*)", text):
        terms = {k: float(v) for k, v in re.findall(r"(\w+)=(-?[\d.]+)", line)}
        others = sum(v for k, v in terms.items() if k not in ("final", "mmr_penalty"))
        assert terms["mmr_penalty"] >= 0
        assert abs(others - terms["mmr_penalty"] - terms["final"]) < 1e-3, line
    xray_doc = (ROOT / "docs" / "xray.md").read_text(encoding="utf-8")
    assert "so they sum to `final` once `mmr_penalty` is subtracted" in xray_doc
    assert "with `mmrPenalty`, a positive number, subtracted" in xray_doc
    help_text = run_cli("xray", "--help").out
    assert "mmr_penalty subtracted" in " ".join(help_text.split())


# --- M2: a trimmed hit says so on every surface ---


def test_a_budget_trimmed_hit_carries_trimmed_and_content_chars_over_http_and_mcp(env: Env) -> None:
    args = {"query": "hybrid retrieval pipeline BM25 vectors", "topK": 3, "budgetChars": 150, "namespace": "alice"}
    r = env.call("POST", "/remnic/v1/recall", args)
    assert r.status == 200, r.raw
    hit = r.json()["results"][0]
    assert hit["trimmed"] is True and hit["contentChars"] == len(LONG) and len(hit["content"]) <= 150
    tool = mcp(env, "remnic_recall", args)["structuredContent"]["results"][0]
    assert tool["trimmed"] is True and tool["contentChars"] == len(LONG)
    whole = env.call("POST", "/remnic/v1/recall", {**args, "budgetChars": 0}).json()["results"][0]
    assert "trimmed" not in whole and "contentChars" not in whole
    server_doc = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
    assert "results always carry the full content" not in server_doc
    assert "results always carry full content" not in server_doc


# --- M5: an unknown namespace warns on HTTP and MCP, naming only what the caller may read ---


def test_an_empty_namespace_warns_in_recall_and_in_the_xray_over_http_and_mcp(env: Env) -> None:
    said = "no memory file is in that namespace (namespaces here: alice, default)"
    body = env.call("POST", "/remnic/v1/recall", {"query": "payments", "namespace": "shared"}).json()
    assert body["count"] == 0
    assert body["warnings"] == [{"field": "namespace", "message": f"namespace 'shared': {said}"}]
    tool = mcp(env, "remnic_recall", {"query": "payments", "namespace": "shared"})["structuredContent"]
    assert tool["warnings"] == body["warnings"]
    http_xray = xray_get(env, q="payments", namespace="shared")
    tool_xray = mcp(env, "remnic_recall_xray", {"query": "payments", "namespace": "shared"})
    for snapshot in (http_xray.json()["snapshot"], tool_xray["structuredContent"]["snapshot"]):
        scope = next(f for f in snapshot["filters"] if f["name"] == "namespace-scope")
        assert scope["reason"].endswith(said), scope
        assert "bob" not in json.dumps(snapshot)
    # A namespace that holds memories says nothing.
    assert "warnings" not in env.call("POST", "/remnic/v1/recall", {"query": "payments", "namespace": "alice"}).json()
    # Python and the CLI's JSON carry it too (the repository's owner may see every namespace).
    result = env.memory.recall("payments", namespace="nope")
    assert result.warnings == [
        "namespace 'nope': no memory file is in that namespace (namespaces here: alice, bob, default)"
    ]
    assert result.to_dict()["warnings"] == result.warnings


# --- LOW: the X-ray takes topK over HTTP and MCP ---


def test_the_xray_takes_top_k_over_http_and_mcp(env: Env) -> None:
    snap = xray_get(env, q="payments", namespace="alice", topK=2).json()["snapshot"]
    assert snap["appliedResultLimit"] == 2 and len(snap["results"]) <= 2
    limit = next(f for f in snap["filters"] if f["name"] == "recall-result-limit")
    assert limit.get("reason") == "k=2"
    tool = mcp(env, "remnic_recall_xray", {"query": "payments", "namespace": "alice", "topK": 2})
    assert tool["structuredContent"]["snapshot"]["appliedResultLimit"] == 2
    assert xray_get(env, q="payments", topK=0).json() == {"snapshotFound": False}
    refused = xray_get(env, q="payments", topK=201)
    assert refused.status == 400 and "topK: must be at most 200" in refused.json()["error"]


# --- LOW: tagMatch all without tags, refused everywhere ---


def test_tag_match_all_without_tags_is_refused_on_every_surface(env: Env) -> None:
    message = "tagMatch: all needs at least one tag (tags) to match"
    r = env.call("POST", "/remnic/v1/recall", {"query": "payments", "tagMatch": "all"})
    assert r.status == 400 and r.json()["error"] == message
    x = xray_get(env, q="payments", tagMatch="all")
    assert x.status == 400 and x.json()["error"] == message
    tool = mcp(env, "remnic_recall", {"query": "payments", "tagMatch": "all"})
    assert tool["isError"] is True and message in tool["content"][0]["text"]
    with pytest.raises(ValidationError, match=r"all needs at least one tag \(tags\) to match") as exc:
        env.memory.recall("payments", tag_match="all")
    assert exc.value.problems[0].field in ("tag_match", "tagMatch")
    assert len(env.memory.recall("payments", tag_match="all", tags=["x"]).hits) == 0  # with a tag: runs


# --- LOW: Python flags and a misspelt keyword ---


def test_python_flags_must_be_booleans_and_a_misspelt_keyword_names_memory_recall(env: Env) -> None:
    mem = env.memory
    cases: list[tuple[Callable[..., Any], str, object]] = [
        (mem.recall, "include_superseded", "yes"),
        (mem.recall, "include_inactive", 1),
        (mem.recall, "xray", "true"),
        (mem.recall_xray, "include_superseded", "no"),
    ]
    for call, name, value in cases:
        with pytest.raises(ValidationError) as exc:
            call("payments", **{name: value})
        assert exc.value.problems[0].field == name
        assert str(exc.value).startswith(f"{name}: must be a boolean (True or False), got {type(value).__name__}")
    with pytest.raises(TypeError, match=r"^Memory\.recall\(\) got an unexpected keyword argument 'topk'"):
        mem.recall("payments", topk=3)  # type: ignore[call-arg]


# --- LOW: messages that read well ---


def test_audit_list_cuts_a_long_query_and_a_huge_budget_reads_as_a_number(env: Env) -> None:
    query = "payments " + "word " * 600
    env.memory.recall(query, namespace="alice")
    res = run_cli("audit", "list", "--limit", "3", "--memory-dir", str(env.root))
    assert res.code == 0, res.err
    row = res.out.splitlines()[0]
    assert len(row) < 250 and row.endswith("…'"), row
    shown = run_cli("audit", "show", row.split()[0], "--json", "--memory-dir", str(env.root)).json()
    assert len(shown["query"]) > 2000 or shown["query"].startswith("payments word")
    r = env.call("POST", "/remnic/v1/recall", raw=b'{"query": "payments", "budgetChars": 1e30}')
    assert r.status == 400 and r.json()["error"] == "budgetChars: must be at most 1000000, got 1e+30"


def test_audit_list_never_cuts_an_emoji_in_half(env: Env) -> None:
    env.memory.recall("payments " + "\U0001f680" * 300, namespace="alice")
    res = run_cli("audit", "list", "--limit", "1", "--memory-dir", str(env.root))
    assert res.code == 0, res.err
    row = res.out.splitlines()[0]
    assert "\\ud83d" not in row and "\U0001f680\u2026'" in row, row


# --- LOW: the ladder explains its order and its pool cut ---


def test_an_inactive_hit_below_a_weaker_active_one_says_why(env: Env) -> None:
    result = env.memory.recall(PAYMENTS, namespace="alice", include_inactive=True, top_k=4)
    statuses = [h.status for h in result.hits]
    assert "superseded" in statuses and statuses.index("superseded") > 0
    low = min(h.terms.final for h in result.hits if h.status == "active")
    moved = [h for h in result.hits if h.status != "active" and h.terms.final > low]
    assert moved, [(h.status, h.terms.final) for h in result.hits]
    for h in moved:
        assert "listed after the active results whatever the scores (status superseded, include-inactive)" in (
            h.tier_note
        )
    snap = env.memory.recall_xray(PAYMENTS, namespace="alice", include_inactive=True, top_k=4)
    assert snap is not None
    reasons = [r.provenance.retrieval_reason for r in snap.results if r.provenance is not None]
    assert any("listed after the active results" in (why or "") for why in reasons)
    for h in result.hits:
        if h.status == "active":
            assert "listed after" not in h.tier_note


def test_the_mmr_stage_says_its_rejections_are_the_pool_cap(env: Env) -> None:
    result = env.memory.recall(PAYMENTS, namespace="alice", top_k=4)
    mmr = next(s for s in result.stages if s.name == "mmr-diversify")
    assert mmr.rejected > 0
    assert mmr.reason == f"pool=4, lambda=0.5; rejected {mmr.rejected} beyond the re-rank pool (only its best 4 go on)"
