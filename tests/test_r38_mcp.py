"""The MCP surface as a demanding agent uses it (official SDK client, streamable HTTP to a real server on
127.0.0.1, plus the HTTP routes): flushing a session with no new message, turns with no text said and
counted, the original's tool names (memory_entities_list, memory_capture), memory file paths as
memoryId, honest tool annotations, bounded inputs, and bidi controls kept out of commit subjects."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPError
from test_server_http import Env, make_env
from test_server_mcp import http_client, run, text


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def calls(env: Env, *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    """The results of several tool calls made in one MCP session, in order."""

    async def go() -> list[Any]:
        async with http_client(env, env.alice) as client:
            return [await client.call_tool(name, args) for name, args in requests]

    return list(run(go))


def body(result: Any) -> dict[str, Any]:
    return dict(json.loads(text(result)))


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


SAID = [{"role": "user", "content": "We moved the weekly standup to 9:30 on Mondays, starting next week."}]


# --- observe: a flush with no new message, turns with no text ---


def test_an_empty_messages_list_with_flush_flushes_the_session_over_mcp_and_http(env: Env) -> None:
    fed, flushed, refused = calls(
        env,
        ("remnic_observe", {"sessionKey": "sessA", "messages": SAID}),
        ("remnic_observe", {"sessionKey": "sessA", "messages": [], "flush": True}),
        ("remnic_observe", {"sessionKey": "sessA", "messages": []}),
    )
    assert not fed.is_error and body(fed)["pendingTurns"] == 1, text(fed)
    assert not flushed.is_error, text(flushed)
    out = body(flushed)
    assert out["pendingTurns"] == 0 and len(out["flushes"]) == 1 and out["accepted"] == 0
    assert out["lcmArchived"] is False  # nothing new was archived by this call
    assert refused.is_error and body(refused)["details"][0]["field"] == "messages"
    assert "flush" in body(refused)["error"]

    assert env.call("POST", "/remnic/v1/observe", {"sessionKey": "sessB", "messages": SAID}).status == 202
    r = env.call("POST", "/remnic/v1/observe", {"sessionKey": "sessB", "messages": [], "flush": True})
    assert r.status == 202, r.raw
    assert r.json()["pendingTurns"] == 0 and len(r.json()["flushes"]) == 1


def test_turns_with_no_text_are_counted_and_named_and_not_called_archived(env: Env) -> None:
    tool_turns = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"c": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "file.txt"}]},
    ]
    only_tools, mixed = calls(
        env,
        ("remnic_observe", {"sessionKey": "blk", "messages": tool_turns}),
        ("remnic_observe", {"sessionKey": "blk", "messages": [*SAID, tool_turns[0]]}),
    )
    out = body(only_tools)
    assert out["accepted"] == 0 and out["turnsSkipped"] == 2 and out["archivePath"] is None
    assert out["lcmArchived"] is False
    fields = [w["field"] for w in out["warnings"]]
    assert fields == ["messages[0].content", "messages[1].content"]
    assert "tool_use" in out["warnings"][0]["message"] and "not archived" in out["warnings"][0]["message"]
    out = body(mixed)
    assert out["accepted"] == 1 and out["turnsSkipped"] == 1 and out["lcmArchived"] is True
    assert [w["field"] for w in out["warnings"]] == ["messages[1].content"]

    image = {"role": "user", "content": [{"type": "image", "data": "xx"}]}
    r = env.call(
        "POST", "/remnic/v1/observe", {"sessionKey": "img", "messages": [image, {"role": "user", "content": " "}]}
    )
    assert r.status == 202 and r.json()["turnsSkipped"] == 2 and r.json()["lcmArchived"] is False, r.raw
    assert "image" in r.json()["warnings"][0]["message"] and "no words" in r.json()["warnings"][1]["message"]


def test_one_session_key_limit_for_observe_and_recall_and_bounded_fields(env: Env) -> None:
    key = "s" * 300
    recalled, observed, too_big, cwd, tokens, ok, day = calls(
        env,
        ("remnic_recall", {"query": "x", "sessionKey": key}),
        ("remnic_observe", {"sessionKey": key, "messages": SAID, "skipExtraction": True}),
        ("remnic_observe", {"sessionKey": "s" * 513, "messages": SAID}),
        ("remnic_observe", {"sessionKey": "k", "messages": SAID, "cwd": "/" + "d" * 3000}),
        ("remnic_lcm_compaction_record", {"sessionKey": "k", "tokensBefore": 1e308, "tokensAfter": 1}),
        ("remnic_lcm_compaction_record", {"sessionKey": "k", "tokensBefore": 2**53 - 1, "tokensAfter": 1}),
        ("remnic_day_summary", {"sessionKey": "s" * 600}),
    )
    assert not recalled.is_error and not observed.is_error, text(observed)
    assert body(observed)["lcmArchived"] is True
    for refused, field in ((too_big, "sessionKey"), (cwd, "cwd"), (tokens, "tokensBefore"), (day, "sessionKey")):
        assert refused.is_error and body(refused)["details"][0]["field"] == field, text(refused)
    assert "at most 9007199254740991" in body(tokens)["error"]
    assert not ok.is_error, text(ok)


# --- the original's tool names ---


def test_memory_entities_list_is_accepted_in_every_spelling_and_not_listed(env: Env) -> None:
    assert env.call("POST", "/remnic/v1/memories", {"content": "Priya Raman owns the billing service"}).status == 201

    async def go() -> tuple[Any, list[Any]]:
        async with http_client(env, env.alice) as client:
            listed = await client.list_tools()
            names = ("remnic_memory_entities", *(f"{p}memory_entities_list" for p in ("engram.", "remnic.", "remnic_")))
            return listed, [await client.call_tool(name, {"limit": 5}) for name in names]

    listed, (canonical, *aliases) = run(go)
    assert not canonical.is_error and body(canonical)["total"] >= 1, text(canonical)
    for result in aliases:
        assert not result.is_error and text(result) == text(canonical)
    assert not any("entities_list" in t.name for t in listed.tools)


def test_memory_capture_stores_an_explicit_note_with_the_seeds_rules(env: Env) -> None:
    note = "Redis runs on port 6380 in staging"

    async def go() -> tuple[Any, list[Any]]:
        async with http_client(env, env.alice) as client:
            listed = await client.list_tools()
            got = [
                await client.call_tool("engram.memory_capture", {"content": note, "category": "fact"}),
                await client.call_tool("remnic_memory_capture", {"content": note}),
                await client.call_tool("remnic_memory_capture", {"content": "too short"}),
                await client.call_tool("remnic.memory_capture", {"content": f"<memory_note>{note}</memory_note>"}),
                await client.call_tool(
                    "remnic_memory_capture", {"content": "Deploys need two approvals", "dryRun": True}
                ),
            ]
            try:
                await client.call_tool("engram.memory_action_apply", {"action": "store_note"})
            except MCPError as exc:
                got.append(exc.error)
            return listed, got

    listed, (stored, again, short, nested, dry, unknown) = run(go)
    schema = next(t for t in listed.tools if t.name == "remnic_memory_capture")
    assert schema.input_schema["properties"]["content"]["minLength"] == 10
    assert schema.annotations.read_only_hint is False and schema.annotations.destructive_hint is False
    assert not stored.is_error, text(stored)
    out = body(stored)
    assert out["operation"] == "memory_capture" and out["status"] == "stored" and out["commit"]
    Draft202012Validator(schema.output_schema).validate(out)
    record = env.memory.get(out["memoryId"])
    assert record.status == "active" and record.confidence == pytest.approx(0.95) and record.category == "fact"
    assert body(again)["status"] == "duplicate" and body(again)["duplicateOf"] == out["memoryId"]
    assert short.is_error and body(short)["details"][0]["field"] == "content" and "10" in body(short)["error"]
    assert nested.is_error and "memory_note" in body(nested)["error"]
    assert body(dry)["status"] == "validated" and body(dry)["commit"] is None
    assert unknown.code == -32602  # not provided: docs/agents.md says why
    assert "memory_action_apply" in (Path(__file__).resolve().parent.parent / "docs" / "agents.md").read_text()


# --- memoryId takes a file path; annotations ---


def test_tools_that_name_a_memory_take_its_file_path(env: Env) -> None:
    stored = env.call(
        "POST", "/remnic/v1/memories", {"content": "We cut releases every Tuesday", "category": "decision"}
    )
    memory_id, path = stored.json()["memoryId"], stored.json()["path"]
    got, timeline, vote, escape = calls(
        env,
        ("remnic_memory_get", {"memoryId": path}),
        ("remnic_memory_timeline", {"memoryId": path}),
        ("remnic_memory_feedback", {"memoryId": path, "vote": "up"}),
        ("remnic_memory_get", {"memoryId": "decisions/../../etc/passwd.md"}),
    )
    assert not got.is_error and body(got)["memory"]["id"] == memory_id, text(got)
    assert body(timeline)["found"] is True and body(timeline)["count"] >= 1, text(timeline)
    assert not vote.is_error and body(vote)["memoryId"] == memory_id, text(vote)
    assert escape.is_error and body(escape)["details"][0]["field"] == "memoryId"
    started = time.monotonic()  # a long non-ASCII run is refused at once (no exponential backtracking)
    (slow,) = calls(env, ("remnic_memory_get", {"memoryId": "a" + "é" * 60 + "!"}))
    assert slow.is_error and time.monotonic() - started < 5


def test_annotations_say_which_tools_commit_and_which_take_memories_out_of_use(env: Env) -> None:
    async def go() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.list_tools()

    hints = {t.name: t.annotations for t in run(go).tools}
    for name in ("remnic_entity_get", "remnic_memory_entities"):
        assert hints[name].read_only_hint is True, name  # entity reads write nothing (refresh writes pages)
    for name in ("remnic_memory_store", "remnic_observe", "remnic_memory_feedback", "remnic_suggestion_submit"):
        assert hints[name].read_only_hint is False and hints[name].destructive_hint is False, name
    assert hints["remnic_review_disposition"].destructive_hint is True
    assert hints["remnic_recall"].read_only_hint is True and hints["remnic_recall"].destructive_hint is None


# --- commit subjects ---


def test_bidi_controls_never_reach_a_commit_subject(env: Env) -> None:
    (stored,) = calls(env, ("remnic_memory_store", {"content": "Zoë café RTL \u202e gnirts \u2066x\u2069"}))
    assert not stored.is_error, text(stored)
    subject = git(env.root, "log", "-1", "--format=%B")
    assert "Zoë café RTL" in subject
    assert not any(c in subject for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
