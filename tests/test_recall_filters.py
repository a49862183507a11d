"""Recall's tag and time filters (``tags``/``tagMatch``, ``asOf``) are stages of the recall itself.

They are filter stages of the ladder (``tag-match``, ``as-of``) decided before the result limit and
the budget, so what a recall returns, its budget, its X-ray and its audit entry agree, on HTTP, MCP
and the CLI, and a recall still returns up to top-k memories that pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_server_http import Env, make_env
from test_server_mcp import http_client, run

from remnic.index.search import SearchIndex
from remnic.memfile.model import parse_time
from remnic.recall.filters import AS_OF_STAGE, TAG_STAGE, facts_of, make_filters

MEMORIES = {
    "r1": ("2023-04-01T00:00:00Z", ["ops", "release"], "The release train leaves every second Tuesday."),
    "r2": ("2024-01-01T00:00:00Z", ["release"], "The release notes are written by the on-call engineer."),
    "r3": ("2025-01-01T00:00:00Z", ["ops"], "Release candidates soak for two days before the release."),
}


def write(root: Path, name: str, created: str, tags: list[str], text: str) -> None:
    tagline = f"tags: [{', '.join(tags)}]\n" if tags else ""
    body = f"---\nid: mem_{name}\ncategory: fact\ncreated: {created}\n{tagline}---\n{text}\n"
    (root / "facts" / f"{name}.md").write_text(body, encoding="utf-8")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    for e in make_env(tmp_path, monkeypatch):
        for name, (created, tags, text) in MEMORIES.items():
            write(e.root, name, created, tags, text)
        assert run_cli("sync", "run", "--memory-dir", str(e.root)).code == 0
        yield e


def audit_ids(root: Path, audit_id: str) -> list[str]:
    shown = run_cli("audit", "show", audit_id, "--json", "--memory-dir", str(root))
    assert shown.code == 0, shown.err
    return shown.json()["returnedIds"]


def stage(filters: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(f for f in filters if f["name"] == name)


def check_consistent(env: Env, body: dict[str, Any], session: str, name: str, considered: int) -> dict[str, Any]:
    """Budget, X-ray and audit entry describe exactly what the recall returned."""
    used = sum(len(r["content"]) for r in body["results"])
    assert body["count"] == len(body["memoryIds"]) and body["budgetsApplied"]["budgetUsed"] == used
    assert audit_ids(env.root, body["auditEntryId"]) == body["memoryIds"]
    snap = env.call("POST", "/remnic/v1/recall/explain", {"sessionKey": session}).json()["snapshot"]
    assert [r["memoryId"] for r in snap["results"]] == body["memoryIds"]
    assert snap["budget"]["used"] == used and snap["appliedResultLimit"] == body["budgetsApplied"]["topK"]
    names = [f["name"] for f in snap["filters"]]
    assert names.index(name) == 1  # right after the scope: the first per-candidate stage
    filt = stage(snap["filters"], name)
    assert (filt["considered"], filt["admitted"]) == (considered, body["count"])
    for prev, cur in zip(snap["filters"], snap["filters"][1:]):
        assert cur["considered"] == prev["admitted"]
    text = env.call("POST", "/remnic/v1/recall/explain", {"sessionKey": session, "format": "text"}).json()
    assert (
        f"budget: {used} / " in text["rendered"]
        and f"- {name}: {body['count']}/{considered} admitted" in text["rendered"]
    )
    return snap


def test_as_of_over_http_is_a_stage_and_budget_xray_audit_agree(env: Env) -> None:
    r = env.call("POST", "/remnic/v1/recall", {"query": "release", "asOf": "2023-05-01", "sessionKey": "s2"})
    assert r.status == 200, r.raw
    body = r.json()
    assert body["memoryIds"] == ["mem_r1"]
    snap = check_consistent(env, body, "s2", AS_OF_STAGE, 3)
    assert "rejected not-yet-valid ×2" in stage(snap["filters"], AS_OF_STAGE)["reason"]
    assert snap["results"][0]["admittedBy"][1] == AS_OF_STAGE


def test_tags_all_over_http_is_a_stage_and_budget_xray_audit_agree(env: Env) -> None:
    request = {"query": "release", "tags": ["ops", "release"], "tagMatch": "all", "sessionKey": "s3"}
    body = env.call("POST", "/remnic/v1/recall", request).json()
    assert body["memoryIds"] == ["mem_r1"]
    snap = check_consistent(env, body, "s3", TAG_STAGE, 3)
    assert stage(snap["filters"], TAG_STAGE)["reason"] == "all of tags ops, release; rejected other-tags ×2"
    anyof = env.call("POST", "/remnic/v1/recall", {"query": "release", "tags": ["OPS"], "sessionKey": "s4"}).json()
    assert sorted(anyof["memoryIds"]) == ["mem_r1", "mem_r3"]  # any (the default), case-insensitive
    check_consistent(env, anyof, "s4", TAG_STAGE, 3)


def test_a_filtered_recall_still_returns_top_k_memories_that_pass(env: Env) -> None:
    # Eight untagged memories match far better than the one tagged memory: the retrievers' first
    # answer holds only them, so the recall must look again within what the filter admits.
    for i in range(8):
        body = {"content": f"Release checklist step {i}: every release checklist step needs a release sign-off"}
        assert env.call("POST", "/remnic/v1/memories", body).status == 201
    request = {"query": "release checklist step sign-off", "tags": ["release"], "topK": 2, "sessionKey": "k"}
    body = env.call("POST", "/remnic/v1/recall", request).json()
    assert body["count"] == 2 and set(body["memoryIds"]) <= {"mem_r1", "mem_r2"}
    assert audit_ids(env.root, body["auditEntryId"]) == body["memoryIds"]


def test_mcp_recall_filters_in_the_recall(env: Env) -> None:
    async def go() -> Any:
        async with http_client(env, env.alice) as client:
            args = {"query": "release", "tags": ["ops"], "asOf": "2024-06-01T00:00:00Z", "sessionKey": "m"}
            return await client.call_tool("remnic_recall", args)

    result = run(go)
    assert not result.is_error
    body = result.structured_content
    assert body["memoryIds"] == ["mem_r1"]  # r3 is tagged ops but was created after asOf
    used = len(body["results"][0]["content"])
    assert body["budgetsApplied"]["budgetUsed"] == used
    assert audit_ids(env.root, body["auditEntryId"]) == ["mem_r1"]
    snap = env.call("POST", "/remnic/v1/recall/explain", {"sessionKey": "m"}).json()["snapshot"]
    assert [r["memoryId"] for r in snap["results"]] == ["mem_r1"] and snap["budget"]["used"] == used
    ladder = {f["name"]: (f["considered"], f["admitted"]) for f in snap["filters"]}
    assert ladder[TAG_STAGE] == (3, 2) and ladder[AS_OF_STAGE] == (2, 1)


def test_cli_query_takes_the_filters(env: Env) -> None:
    root = str(env.root)
    both = run_cli(
        "query", "release", "--tag", "ops", "--tag", "release", "--tag-match", "all", "--json", "--memory-dir", root
    )
    assert both.code == 0, both.err
    data = both.json()
    assert [h["id"] for h in data["hits"]] == ["mem_r1"]
    assert stage(data["filters"], TAG_STAGE)["admitted"] == 1
    past = run_cli("query", "release", "--as-of", "2024-06-01", "--json", "--memory-dir", root).json()
    assert sorted(h["id"] for h in past["hits"]) == ["mem_r1", "mem_r2"]
    bad = run_cli("query", "release", "--as-of", "last tuesday", "--memory-dir", root)
    assert bad.code == 2 and "--as-of:" in bad.err and "ISO 8601" in bad.err


def test_the_file_scan_fallback_applies_the_filters_too(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_model(self: SearchIndex, text: str) -> Any:
        raise RuntimeError("onnx model missing")

    monkeypatch.setattr(SearchIndex, "embed_query", no_model)
    result = env.memory.recall("release", tags=["release"], as_of="2024-06-01")
    assert result.index["action"] == "unavailable"
    assert sorted(h.id for h in result.hits) == ["mem_r1", "mem_r2"]
    names = [s.name for s in result.stages]
    assert names[1:3] == [TAG_STAGE, AS_OF_STAGE]
    assert (result.stages[1].considered, result.stages[1].admitted) == (3, 2)


def test_the_filters_are_pure_verdicts() -> None:
    filters = make_filters([" Ops ", "release", ""], "all", parse_time("2024-01-01"))
    assert filters is not None and filters.tags == ("ops", "release") and filters.stages == (TAG_STAGE, AS_OF_STAGE)
    tagged = {"tags": ["OPS", "release"], "created": "2023-01-01"}
    assert filters.verdict(facts_of(tagged)) is None
    assert filters.verdict(facts_of({"tags": ["ops"]})) == (TAG_STAGE, "other-tags")
    assert filters.verdict(facts_of({})) == (TAG_STAGE, "untagged")
    assert filters.verdict(facts_of({**tagged, "validAt": "2024-02-01"})) == (AS_OF_STAGE, "not-yet-valid")
    assert filters.verdict(facts_of({**tagged, "invalidAt": "2023-06-01"})) == (AS_OF_STAGE, "invalidated")
    assert filters.verdict(facts_of({**tagged, "supersededAt": "2024-01-01"})) == (AS_OF_STAGE, "superseded")
    assert make_filters([], "any", None) is None and make_filters(None) is None


def test_shallow_retrieval_is_refetched_within_the_filters(tmp_path: Path) -> None:
    from remnic.config import settings_for
    from remnic.service.memory import Memory

    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root, recall={"candidates": 3})) as memory:
        for i in range(4):  # the best matches, valid only from 2999: the filter leaves few out (BM25 reads deeper)
            write(root, f"f{i}", "2999-01-01T00:00:00Z", [], f"Release checklist step {i}: release checklist sign-off")
        for i in range(6):  # weaker matches, valid now, tagged: the tag filter keeps few (BM25 gets their paths)
            write(root, f"v{i}", "2024-01-01T00:00:00Z", ["ops"] if i < 2 else [], f"Release {i} went out on time")
        memory.sync()
        query = "release checklist step sign-off"
        assert {h.id for h in memory.recall(query, top_k=3)} <= {f"mem_f{i}" for i in range(4)}
        timed = memory.recall(query, top_k=3, as_of="2026-01-01")
        assert len(timed.hits) == 3 and all(h.id.startswith("mem_v") for h in timed.hits)
        assert "refetched within the allowed statuses and filters" in timed.stages[0].reason
        assert all(h.terms.bm25 > 0 for h in timed.hits)  # BM25 found them too, past the filtered-out ones
        tagged = memory.recall(query, top_k=3, tags=["ops"])
        assert sorted(h.id for h in tagged.hits) == ["mem_v0", "mem_v1"]
        assert all(h.terms.bm25 > 0 for h in tagged.hits)


def test_a_tag_filter_reads_tags_in_every_spelling_the_files_use(tmp_path: Path) -> None:
    """`tags: a, b`, `tags: "#a #b"`, `tag: x`, `"#x"` in a list and the body's #tags all count, as for list."""
    from remnic.service.memory import Memory

    root = tmp_path / "mem"
    with Memory.init(root) as memory:
        notes = {
            "comma": "tags: alpha, beta\n",
            "hashes": 'tags: "#plan #q2"\n',
            "single": "tag: daily\n",
            "listed": 'tags: [person, "#colleague"]\n',
            "body": "",
        }
        for name, line in notes.items():
            body = "Standup notes for the team #inline-tag" if name == "body" else f"Standup notes from {name}"
            (root / "facts" / f"{name}.md").write_text(f"---\nid: mem_{name}\n{line}---\n{body}\n")
        memory.sync()
        for tag, expected in (
            ("alpha", "mem_comma"),
            ("q2", "mem_hashes"),
            ("daily", "mem_single"),
            ("colleague", "mem_listed"),
            ("#colleague", "mem_listed"),
            ("inline-tag", "mem_body"),
        ):
            assert [h.id for h in memory.recall("standup notes", tags=[tag]).hits] == [expected], tag
            assert [r.id for r in memory.list(tag=tag)] == [expected], tag
