"""A memory's timeline over HTTP and MCP keeps the newest ``limit`` events (oldest first) and says how
many there are (``total``) and whether older ones were cut (``truncated``), so the last event is the
memory's current state, as in the CLI's `remnic timeline`. Real server on 127.0.0.1, the MCP client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_remnic
from test_server_agent_fixes import tools_listed
from test_server_agents import same_over_both
from test_server_http import Env, make_env


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def voted_then_forgotten(env: Env, votes: int) -> str:
    memory_id = str(
        env.call("POST", "/remnic/v1/memories", {"content": "Otters hold hands while sleeping"}).json()["memoryId"]
    )
    for _ in range(votes):
        assert env.call("POST", f"/remnic/v1/memories/{memory_id}/feedback", {"vote": "up"}).status == 200
    env.memory.forget(memory_id, "obsolete")
    return memory_id


def test_a_cut_timeline_keeps_the_newest_events_and_says_so(env: Env) -> None:
    memory_id = voted_then_forgotten(env, 5)  # 7 events: store, 5 votes, forget
    body = same_over_both(
        env,
        "GET",
        f"/remnic/v1/memories/{memory_id}/timeline?limit=3",
        None,
        "remnic_memory_timeline",
        {"memoryId": memory_id, "limit": 3},
    )
    assert (body["count"], body["total"], body["truncated"]) == (3, 7, True)
    assert [e["version"] for e in body["timeline"]] == [5, 6, 7]  # the newest, oldest first
    assert body["timeline"][-1]["operation"] == "forget" and body["timeline"][-1]["status"] == "forgotten"
    whole = env.call("GET", f"/remnic/v1/memories/{memory_id}/timeline").json()
    assert (whole["count"], whole["total"], whole["truncated"]) == (7, 7, False)
    assert whole["timeline"][-3:] == body["timeline"]
    cli = run_remnic("timeline", memory_id, "--memory-dir", str(env.root), "--json", env={"REMNIC_NO_DAEMON": "1"})
    assert cli.code == 0, cli.err
    events = cli.json()["events"]
    assert [e["sha"] for e in events] == [e["sha"] for e in whole["timeline"]]  # the CLI shows every event
    assert [e["sha"] for e in events[-3:]] == [e["sha"] for e in body["timeline"]]


def test_a_missing_memory_has_an_empty_timeline_with_total(env: Env) -> None:
    r = env.call("GET", "/remnic/v1/memories/mem_nope/timeline?limit=3")
    assert r.status == 404
    assert r.json() | {"total": 0, "truncated": False, "count": 0, "timeline": []} == r.json()


def test_the_timeline_schemas_say_which_end_is_cut(env: Env) -> None:
    listed = tools_listed(env)["remnic_memory_timeline"]
    assert "newest" in listed.input_schema["properties"]["limit"]["description"]
    output = listed.output_schema
    assert {"total", "truncated"} <= set(output["required"])
    assert output["properties"]["truncated"]["type"] == "boolean"
