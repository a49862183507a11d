"""Tool inputs as the official MCP client sends them: schemas that say what the server accepts
(whole-number floats are integers, null is "not given", tags and codingContext spelled out),
the tools table of docs/server.md kept true, a far-future day summary, and an oversized stdio
request answered with its own id. Real server on 127.0.0.1 (and a real `remnic mcp`)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPError
from test_server_agent_fixes import tools_listed
from test_server_agents import tool
from test_server_http import Env, make_env
from test_server_mcp import ALL_TOOLS, stdio_client, text

from remnic.service.memory import Memory

DOCS = Path(__file__).resolve().parent.parent / "docs" / "server.md"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def body(result: Any) -> dict[str, Any]:
    return dict(json.loads(text(result)))


# --- integers, nulls, tags, codingContext, feedback ---


def test_whole_number_floats_are_integers_and_fractions_are_not(env: Env) -> None:
    assert env.call("POST", "/engram/v1/memories", {"content": "We deploy on Tuesdays"}).status == 201
    recalled = tool(env, "remnic_recall", {"query": "when do we deploy", "topK": 1.0})
    assert not recalled.is_error, text(recalled)
    assert body(recalled)["budgetsApplied"]["appliedTopK"] == 1
    found = tool(env, "remnic_memory_search", {"query": "deploy", "limit": 2.0})
    assert not found.is_error and body(found)["count"] == 1
    rec = tool(env, "remnic_lcm_compaction_record", {"sessionKey": "s", "tokensBefore": 900.0, "tokensAfter": 1e2})
    assert not rec.is_error, text(rec)
    refused = tool(env, "remnic_recall", {"query": "deploy", "topK": 5.5})
    assert refused.is_error and body(refused)["details"][0]["field"] == "topK"


def test_schemas_say_null_tags_coding_context_and_feedback(env: Env) -> None:
    listed = tools_listed(env)
    store = listed["remnic_memory_store"].input_schema
    check = Draft202012Validator(store)
    given = {"content": "Ana likes green tea", "confidence": None, "tags": None, "category": None}
    stored = tool(env, "remnic_memory_store", given)  # null is "not given", though the schema says one type
    assert not stored.is_error, text(stored)
    # The MCP Inspector turns `--tool-arg topK=5` into a number only when `type` is the string
    # "integer"; with ["integer", "null"] it sent "5" and the call was refused.
    for name, listed_tool in listed.items():
        for arg, prop in listed_tool.input_schema["properties"].items():
            if arg != "codingContext":  # null clears it: the one argument typed ["object", "null"]
                assert isinstance(prop.get("type"), str), (name, arg, prop)
    for bad in (["a,b"], ["two\nlines"], ["x" * 65], [" "]):
        assert not check.is_valid({"content": "c", "tags": bad}), bad
        refused = tool(env, "remnic_memory_store", {"content": f"tagged {bad!r}", "tags": bad})
        assert refused.is_error, bad
    assert check.is_valid({"content": "c", "tags": ["release-2026", "Ana's team"]})

    recall = Draft202012Validator(listed["remnic_recall"].input_schema)
    ctx = {"projectId": "origin:1234abcd", "branch": None, "rootPath": "/src/app", "defaultBranch": "main"}
    assert recall.is_valid({"query": "q", "codingContext": ctx, "topK": 5.0})
    for bad_ctx in ({**ctx, "projectId": ""}, {**ctx, "projectId": "p" * 129}, {"projectId": "p"}, {**ctx, "x": 1}):
        assert not recall.is_valid({"query": "q", "codingContext": bad_ctx}), bad_ctx
        refused = tool(env, "remnic_recall", {"query": "q", "codingContext": bad_ctx})
        assert refused.is_error and body(refused)["details"][0]["field"].startswith("codingContext"), bad_ctx

    feedback = listed["remnic_memory_feedback"]
    assert (
        "vote or signal" in feedback.description
        and "required" in feedback.input_schema["properties"]["vote"]["description"]
    )
    memory_id = body(stored)["memoryId"]
    refused = tool(env, "remnic_memory_feedback", {"memoryId": memory_id})
    assert refused.is_error and body(refused)["details"][0]["field"] == "vote"
    assert "signal" in body(refused)["error"]


# --- docs/server.md's tools table ---


def documented_tools() -> dict[str, tuple[list[str], set[str]]]:
    """tool → (arguments in the order documented, the required ones), from the MCP tools table."""
    section = DOCS.read_text(encoding="utf-8").split("### Tools", 1)[1].split("\n### ", 1)[0]
    rows: dict[str, tuple[list[str], set[str]]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`remnic_"):
            continue
        names = re.findall(r"`(remnic_\w+)`", cells[0])
        args = re.findall(r"(?:^|, )`(\w+)`(\*?)", cells[1].split(" — ", 1)[0])
        for name in names:
            rows[name] = ([a for a, _ in args], {a for a, star in args if star})
    return rows


def test_the_tools_table_of_server_md_is_what_tools_list_says(env: Env) -> None:
    listed = tools_listed(env)
    assert set(listed) == ALL_TOOLS
    documented = documented_tools()
    assert set(documented) == set(listed), "every tool in tools/list, and only those, has a row"
    for name, t in listed.items():
        args, required = documented[name]
        assert sorted(args) == sorted(t.input_schema["properties"]), name
        assert required == set(t.input_schema["required"]), name
    recall_args = documented["remnic_recall"][0]
    for key in ("citations", "disclosure", "tags", "tagMatch", "asOf", "codingContext", "cwd", "projectTag"):
        assert key in recall_args


def test_server_md_says_recall_uses_the_project_fields() -> None:
    doc = DOCS.read_text(encoding="utf-8")
    compat = doc.split("### Clients written for the original Remnic", 1)[1].split("\n### ", 1)[0]
    never_refused = compat.split("never refused:", 1)[1].split(".", 1)[0]
    for field in ("`cwd`", "`projectTag`", "`codingContext`"):
        assert field not in never_refused.split(" on recall")[0]
    assert "recall.projectBoost" in compat


# --- day summary at the end of the calendar ---


def test_a_day_summary_with_no_next_day_is_a_date_error(env: Env) -> None:
    result = tool(env, "remnic_day_summary", {"date": "9999-12-31", "timeZone": "Pacific/Kiritimati"})
    assert result.is_error, text(result)
    got = body(result)
    assert got["code"] == "validation_error" and got["details"][0]["field"] == "date"
    ok = tool(env, "remnic_day_summary", {"date": "9999-12-30", "timeZone": "Pacific/Kiritimati"})
    assert not ok.is_error and body(ok)["total"] == 0


# --- stdio: an oversized request is answered with its id ---


def test_an_oversized_stdio_call_fails_promptly_instead_of_hanging(memory: Memory) -> None:
    async def go() -> None:
        async with stdio_client(memory.root) as client:
            big = "x" * (memory.settings.server.max_body_bytes + 1000)
            with pytest.raises(MCPError) as info:
                await asyncio.wait_for(client.call_tool("remnic_memory_store", {"content": big}), 20)
            assert info.value.error.code == -32600 and "server.maxBodyBytes" in info.value.error.message
            assert (await client.call_tool("remnic_memory_store", {"content": "small again"})).is_error is False

    asyncio.run(asyncio.wait_for(go(), 60))
