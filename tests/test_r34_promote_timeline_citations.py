"""citations_observed checks the original's ``citations`` object key by key: a typo, an unknown key, a
wrong type or a line range ending before it starts is a 400 validation_error (a tool error over MCP)
naming the field and the valid options, and nothing is committed; the tool schema declares the keys.
Real server on 127.0.0.1, the official MCP client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_server_agent_fixes import tools_listed
from test_server_agents import tool
from test_server_http import Env, commits, make_env
from test_server_mcp import text


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def a_memory(env: Env) -> dict[str, Any]:
    r = env.call("POST", "/remnic/v1/memories", {"content": "The VPN needs a hardware key"})
    assert r.status == 201, r.raw
    return dict(r.json())


def entry(path: str, **more: Any) -> dict[str, Any]:
    return {"path": path, "lineStart": 1, "lineEnd": 2, **more}


BAD: list[tuple[Any, str, str]] = [
    # (citations, the field named, a word of the message)
    ({"entry": [entry("{path}")]}, "citations.entry", "valid options: entries, rolloutIds, threadIds"),
    ({"entries": "{path}"}, "citations.entries", "must be an array"),
    ({"foo": []}, "citations.foo", "unknown field"),
    ({"rolloutIds": ["r1", 2]}, "citations.rolloutIds[1]", "must be a string"),
    ({"entries": [{"lineStart": 1}]}, "citations.entries[0].path", "is required"),
    ({"entries": [entry("{path}", lineStart="a")]}, "citations.entries[0].lineStart", "integer"),
    ({"entries": [entry("{path}", lineStart=5, lineEnd=1)]}, "citations.entries[0].lineEnd", "before lineStart 5"),
    ({"entries": [entry("{path}", bogus=1)]}, "citations.entries[0].bogus", "valid options: path, lineStart"),
    ({"entries": [entry("{path}", lineStart=0)]}, "citations.entries[0].lineStart", "≥ 1"),
    ({"entries": ["{path}"]}, "citations.entries[0]", "must be an object"),
]


def filled(value: Any, path: str) -> Any:
    return json.loads(json.dumps(value).replace("{path}", path))


@pytest.mark.parametrize(("citations", "field", "says"), BAD)
def test_a_malformed_citation_is_refused_naming_the_field(env: Env, citations: Any, field: str, says: str) -> None:
    stored = a_memory(env)
    body_in = {"citations": filled(citations, stored["path"])}
    before = commits(env.root)
    r = env.call("POST", "/v1/citations/observed", body_in)
    assert r.status == 400, r.raw
    body = r.json()
    assert body["code"] == "validation_error", body
    assert [d["field"] for d in body["details"]] == [field] and says in body["error"], body
    result = tool(env, "remnic_citations_observed", body_in)
    assert result.is_error and json.loads(text(result))["error"] == body["error"]
    assert commits(env.root) == before
    fm = env.call("GET", f"/remnic/v1/memories/{stored['memoryId']}").json()["memory"]["frontmatter"]
    assert "reinforcement_count" not in fm and "accessCount" not in fm


def test_every_problem_is_named_in_one_answer(env: Env) -> None:
    r = env.call("POST", "/v1/citations/observed", {"citations": {"entry": [], "rolloutIds": "r1"}})
    assert r.status == 400
    assert {d["field"] for d in r.json()["details"]} == {"citations.entry", "citations.rolloutIds"}


def test_well_formed_citations_still_count_in_the_original_shape(env: Env) -> None:
    stored = a_memory(env)
    ok = {"entries": [entry(stored["path"], note="used"), {"path": stored["path"]}], "rolloutIds": ["r1"]}
    r = env.call("POST", "/v1/citations/observed", {"citations": ok, "sessionId": "s1"})
    assert r.status == 200, r.raw
    body = r.json()
    assert (body["submitted"], body["matched"], body["entriesReceived"], body["rolloutIdsReceived"]) == (2, 1, 2, 1)
    assert body["memoryIds"] == [stored["memoryId"]] and body["commit"]
    legacy = env.call("POST", "/v1/citations/observed", {"citations": {"threadIds": ["t1", "t2"]}})
    assert legacy.status == 200 and legacy.json()["rolloutIdsReceived"] == 2, legacy.raw
    both = env.call("POST", "/v1/citations/observed", {"citations": {"threadIds": [], "rolloutIds": []}})
    assert both.status == 400 and both.json()["details"][0]["field"] == "citations.threadIds"
    floats = env.call(
        "POST", "/v1/citations/observed", {"citations": {"entries": [entry(stored["path"], lineEnd=2.0)]}}
    )
    assert floats.status == 200 and floats.json()["matched"] == 1, floats.raw


def test_the_tool_schema_declares_the_citation_keys(env: Env) -> None:
    schema = tools_listed(env)["remnic_citations_observed"].input_schema["properties"]["citations"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"entries", "rolloutIds", "threadIds"}
    item = schema["properties"]["entries"]["items"]
    assert item["required"] == ["path"] and item["additionalProperties"] is False
    assert set(item["properties"]) == {"path", "lineStart", "lineEnd", "note"}
    assert item["properties"]["lineStart"] == {"type": "integer", "minimum": 1}
    assert schema["properties"]["rolloutIds"]["items"] == {"type": "string"}
