"""memory_store and suggestion_submit replies name their commit, over HTTP and MCP alike (null for a
dry run and for a duplicate, which commit nothing), and their output schemas declare it. Real server
on 127.0.0.1, the official MCP client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from test_server_agent_fixes import tools_listed
from test_server_agents import tool
from test_server_http import Env, make_env
from test_server_mcp import text


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def head(env: Env) -> str:
    return git(env.root, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize(("route", "name"), [("memories", "memory_store"), ("suggestions", "suggestion_submit")])
def test_a_store_reply_names_its_commit(env: Env, route: str, name: str) -> None:
    r = env.call("POST", f"/remnic/v1/{route}", {"content": f"Store reply check over {route}"})
    assert r.status == 201, r.raw
    body = r.json()
    assert body["commit"] == head(env)
    message = git(env.root, "log", "-1", "--format=%B")
    assert f"Remnic-Memory-Id: {body['memoryId']}" in message
    result = tool(env, f"remnic_{name}", {"content": f"Store reply check over MCP {route}"})
    assert not result.is_error, text(result)
    assert result.structured_content["commit"] == head(env) == json.loads(text(result))["commit"]
    dry = env.call("POST", f"/remnic/v1/{route}", {"content": "A dry run commits nothing", "dryRun": True})
    assert dry.status == 200 and dry.json()["commit"] is None, dry.raw
    active = env.call("POST", "/remnic/v1/memories", {"content": "An active memory to duplicate"}).json()
    again = env.call("POST", f"/remnic/v1/{route}", {"content": "An active memory to duplicate"})
    assert again.json()["status"] == "duplicate" and again.json()["commit"] is None, again.raw
    assert head(env) == active["commit"]


def test_the_store_output_schemas_declare_the_commit(env: Env) -> None:
    listed = tools_listed(env)
    for name in ("remnic_memory_store", "remnic_suggestion_submit"):
        schema = listed[name].output_schema
        assert "commit" in schema["required"] and "commit" in schema["properties"]
        assert {"type": "null"} in schema["properties"]["commit"]["anyOf"]
