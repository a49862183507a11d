"""memory_promote and the space in recall responses, over HTTP and over MCP (the official SDK client,
a real server on 127.0.0.1), with identical JSON."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_server_agents import same_over_both, tool
from test_server_http import Env, commits, make_env
from test_server_mcp import text

from remnic.config import settings_for
from remnic.service.memory import Memory
from remnic.service.spaces import create_space


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setenv("REMNIC_SPACES_PATH", str(tmp_path / "spaces.json"))
    yield from make_env(tmp_path, monkeypatch)


def stored(env: Env, content: str) -> str:
    r = env.call("POST", "/engram/v1/memories", {"content": content, "tags": ["ops"]})
    assert r.status < 300, r.raw
    return r.json()["memoryId"]


def test_promote_to_the_shared_namespace_over_http_and_mcp(env: Env) -> None:
    first, second = stored(env, "Deploys need two approvals"), stored(env, "Hotfixes skip the freeze")
    before = commits(env.root)
    r = env.call("POST", f"/engram/v1/memories/{first}/promote", {})
    assert r.status == 200, r.raw
    body = r.json()
    assert body["promoted"] is True and body["sourceMemoryId"] == first and body["memoryId"] != first
    assert body["namespace"] == "shared" and body["path"].startswith("namespaces/shared/")
    assert commits(env.root) == before + 1
    result = tool(env, "remnic_memory_promote", {"memoryId": second, "targetNamespace": "team-notes"})
    assert not result.is_error, text(result)
    assert set(result.structured_content) == set(body)
    assert result.structured_content["namespace"] == "team-notes"
    # Promoting again finds the copy: the same bytes over both transports.
    again = same_over_both(
        env, "POST", f"/engram/v1/memories/{first}/promote", {}, "remnic_memory_promote", {"memoryId": first}
    )
    assert again["promoted"] is False and again["memoryId"] == body["memoryId"] and again["commit"] is None
    copy = env.call("GET", f"/engram/v1/memories/{body['memoryId']}").json()["memory"]
    assert copy["frontmatter"]["sourceMemoryId"] == first and copy["content"] == "Deploys need two approvals"
    assert env.call("POST", "/engram/v1/memories/mem_nope/promote", {}).status == 404
    unknown = env.call("POST", f"/engram/v1/memories/{first}/promote", {"targetSpace": "nowhere"})
    assert unknown.status == 400 and "nowhere" in unknown.raw.decode()


def test_promote_into_another_space_and_spaces_in_recall(env: Env, tmp_path: Path) -> None:
    create_space("here", env.root)
    create_space("team", tmp_path / "team", kind="team")
    with Memory.init(settings=settings_for(tmp_path / "handbook")) as handbook:
        handbook.store("The office closes early on Fridays in summer", category="fact")
    create_space("handbook", tmp_path / "handbook", read_only=True)
    source = stored(env, "The office plants are watered on Mondays")
    r = env.call("POST", f"/engram/v1/memories/{source}/promote", {"targetSpace": "team"})
    assert r.status == 200, r.raw
    body = r.json()
    assert body["space"] == "team" and body["sourceSpace"] == "here" and body["namespace"] == "default"
    with Memory.open(settings=settings_for(tmp_path / "team")) as team:
        assert team.get(body["memoryId"]).frontmatter["sourceMemoryId"] == source
    refused = env.call("POST", f"/engram/v1/memories/{source}/promote", {"targetSpace": "handbook"})
    assert refused.status == 400 and "read-only" in refused.raw.decode()
    query = {"query": "when does the office close early or water the plants", "topK": 5}
    over_http = env.call("POST", "/engram/v1/recall", query).json()
    over_mcp = tool(env, "remnic_recall", query).structured_content
    assert over_http["results"] == over_mcp["results"]  # the rest carries times and trace ids
    spaces = {r["content"]: r.get("space") for r in over_http["results"]}
    assert spaces["The office plants are watered on Mondays"] == "here"
    assert spaces["The office closes early on Fridays in summer"] == "handbook"
