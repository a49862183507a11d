"""What agents are handed must say what it is: unreviewed suggestions flagged in recall's context,
dry runs that predict duplicates, observe messages checked field by field, MCP schemas that say
what the server accepts. Real server on 127.0.0.1, the official MCP client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_remnic
from test_server_agents import tool
from test_server_http import Env, make_env
from test_server_mcp import http_client, run, text

from remnic.service.memory import Memory


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def tools_listed(env: Env) -> dict[str, Any]:
    async def go() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.list_tools()

    return {t.name: t for t in run(go).tools}


# --- unreviewed suggestions in recall's context ---

SUGGESTION = "Maybe we should release on Fridays"


def test_an_unreviewed_suggestion_is_flagged_in_recall_context_and_results(env: Env) -> None:
    assert env.call("POST", "/remnic/v1/memories", {"content": "We release on Tuesdays after the demo"}).status == 201
    assert env.call("POST", "/remnic/v1/suggestions", {"content": SUGGESTION}).status == 201
    body = env.call("POST", "/remnic/v1/recall", {"query": "release"}).json()
    pending = next(r for r in body["results"] if r["content"] == SUGGESTION)
    active = next(r for r in body["results"] if r["content"] != SUGGESTION)
    assert pending["safety"] == "requires-review" and pending["safeToUse"] is False  # without includeDebug
    assert active["safety"] == "safe" and active["safeToUse"] is True
    context = body["context"]
    assert context.startswith("We release on Tuesdays after the demo")
    paragraphs = context.split("\n\n")
    flagged = next(p for p in paragraphs if SUGGESTION in p)
    assert flagged.startswith("[requires-review] (status=pending_review) ")
    assert paragraphs.index(flagged) > next(i for i, p in enumerate(paragraphs) if p.startswith("Not reviewed"))
    result = tool(env, "remnic_recall", {"query": "release"})
    assert not result.is_error and json.loads(text(result))["context"] == context


def test_session_start_marks_an_unreviewed_suggestion(memory: Memory, tmp_path: Path) -> None:
    from remnic.drivers.hooks import session_context

    memory.suggest("The release train leaves on Fridays now")
    project = tmp_path / "release"
    project.mkdir()
    context = session_context(memory, {"cwd": str(project)})
    line = next(line for line in context.splitlines() if "release train" in line)
    assert "[requires-review: not confirmed]" in line


def test_cli_query_flags_an_unreviewed_suggestion(memory: Memory) -> None:
    memory.suggest(SUGGESTION)
    r = run_remnic("query", "--memory-dir", str(memory.root), "release", "--json", env={"REMNIC_NO_DAEMON": "1"})
    assert r.code == 0, r.err
    hits = r.json()["hits"]
    assert any(h["content"] == SUGGESTION and h["safety"] == "requires-review" for h in hits)


# --- a dry run predicts a duplicate ---

ACTIVE = "We deploy with Argo CD"


@pytest.mark.parametrize("route", ["/remnic/v1/memories", "/remnic/v1/suggestions"])
def test_a_dry_run_of_a_duplicate_answers_as_the_real_write_does(env: Env, route: str) -> None:
    first = env.call("POST", "/remnic/v1/memories", {"content": ACTIVE}).json()
    dry = env.call("POST", route, {"content": ACTIVE, "dryRun": True})
    real = env.call("POST", route, {"content": ACTIVE})
    assert real.status == dry.status == 200
    assert real.json()["status"] == "duplicate" and real.json()["duplicateOf"] == first["memoryId"]
    assert dry.json() == {**real.json(), "dryRun": True}
    assert "-2" not in dry.json()["path"]
    result = tool(env, "remnic_memory_store", {"content": ACTIVE, "dryRun": True})
    assert not result.is_error and json.loads(text(result)) == dry.json() | {"operation": "memory_store"}


def test_cli_store_dry_run_of_a_duplicate_says_so(memory: Memory) -> None:
    stored = memory.store(ACTIVE)
    r = run_remnic("store", "--memory-dir", str(memory.root), ACTIVE, "--dry-run", "--json")
    assert r.code == 0, r.err
    assert r.json()["duplicate"] is True and r.json()["dryRun"] is True and r.json()["id"] == stored.id
    plain = run_remnic("store", "--memory-dir", str(memory.root), ACTIVE, "--dry-run")
    assert f"duplicate of {stored.id}" in plain.out and "nothing would be stored" in plain.out


# --- observe messages are checked key by key ---


@pytest.mark.parametrize(
    "message,field",
    [
        ({"role": "user", "speakr": "Ana", "content": "Ana moved to Lisbon"}, "messages[0].speakr"),
        ({"role": "user", "speaker": 5, "content": "Ana moved to Lisbon"}, "messages[0].speaker"),
        ({"role": "user", "turnId": True, "content": "Ana moved to Lisbon"}, "messages[0].turnId"),
    ],
)
def test_observe_refuses_unknown_and_mistyped_message_fields(env: Env, message: dict, field: str) -> None:
    r = env.call("POST", "/remnic/v1/observe", {"sessionKey": "s1", "messages": [message]})
    assert r.status == 400 and r.json()["code"] == "validation_error", r.raw
    problem = next(d for d in r.json()["details"] if d["field"] == field)
    if field.endswith("speakr"):
        assert problem["options"] == [
            "role",
            "content",
            "speaker",
            "turnId",
            "timestamp",
            "name",
            "sourceFormat",
            "parts",
        ]
    result = tool(env, "remnic_observe", {"sessionKey": "s1", "messages": [message]})
    assert result.is_error and field in text(result)
    assert env.call("GET", "/remnic/v1/lcm/status").json()["stats"]["totalTurns"] == 0  # nothing archived


def test_memory_observe_raises_on_a_misspelt_message_key(memory: Memory) -> None:
    from remnic.errors import ValidationError

    with pytest.raises(ValidationError) as info:
        memory.observe("s1", [{"role": "user", "speakr": "Ana", "content": "Ana moved to Lisbon"}])
    assert [p.field for p in info.value.problems] == ["messages[0].speakr"]
    ok = [{"role": "user", "speaker": "Ana", "turnId": 3, "timestamp": "2026-05-04T09:00:00Z", "content": "Hi"}]
    memory.observe("s1", ok, dry_run=True)


# --- MCP input schemas say what the server accepts ---


def test_mcp_schemas_for_messages_coding_context_and_promote(env: Env) -> None:
    from remnic.observe.transcripts import MESSAGE_KEYS

    listed = tools_listed(env)
    items = listed["remnic_observe"].input_schema["properties"]["messages"]["items"]
    assert tuple(items["properties"]) == MESSAGE_KEYS and items["additionalProperties"] is False
    assert items["properties"]["role"]["enum"] == ["user", "assistant"] and items["required"] == ["role", "content"]
    for name in ("remnic_set_coding_context", "remnic_recall"):
        assert listed[name].input_schema["properties"]["codingContext"]["type"] == ["object", "null"]
    promote = listed["remnic_memory_promote"].input_schema["properties"]
    assert promote["targetNamespace"]["pattern"] == "^[a-z0-9][a-z0-9_-]{0,63}$"


def test_promote_errors_name_the_fields_the_caller_sent(env: Env) -> None:
    memory_id = env.call("POST", "/remnic/v1/memories", {"content": "Ana likes green tea"}).json()["memoryId"]
    for body, field in (({"targetSpace": "nope"}, "targetSpace"), ({"targetNamespace": "Bad/NS"}, "targetNamespace")):
        r = env.call("POST", f"/remnic/v1/memories/{memory_id}/promote", body)
        assert r.status == 400, r.raw
        assert [d["field"] for d in r.json()["details"]] == [field] and r.json()["error"].startswith(field)
        result = tool(env, "remnic_memory_promote", {"memoryId": memory_id, **body})
        assert result.is_error and json.loads(text(result))["details"][0]["field"] == field
