"""The server's timeline reads history as `remnic timeline` does (a deleted memory's too), with one
"not found" shape on HTTP and MCP; and errors name the field as the caller's surface spells it
(`reasonCode` / `supersedes` in a request, `--reason` / `--supersedes` on the CLI). A real server on
127.0.0.1, the official mcp SDK client over streamable HTTP, and the CLI in-process."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from conftest import git, run_cli
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_server_http import NAMESPACES, Env, make_shared_env

MISSING = {"found": False, "count": 0, "total": 0, "truncated": False, "timeline": []}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    """One server for the module, which writes: its HOME is isolated from the start, as each test's is
    (the repository's git identity is settled on its first commit)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        yield from make_shared_env(tmp_path_factory.mktemp("r35"), namespaces=NAMESPACES)


def mcp_call(env: Env, tool: str, arguments: dict[str, Any], token: str = "alice") -> Any:
    async def go() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {getattr(env, token)}"}, timeout=30)
        async with Client(streamable_http_client(env.url + "/mcp", http_client=http)) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(asyncio.wait_for(go(), timeout=60))


def missing_keys(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body.get(k) for k in MISSING}


def store(env: Env, content: str, **fields: Any) -> dict[str, Any]:
    r = env.call("POST", "/remnic/v1/memories", {"content": content, **fields})
    assert r.status == 201, r.raw
    body: dict[str, Any] = r.json()
    return body


def test_a_deleted_memory_has_its_history_over_http_and_mcp_as_in_the_cli(env: Env) -> None:
    stored = store(env, "The axolotl tank is in room 4")
    memory_id = stored["memoryId"]
    git(env.root, "rm", "-q", stored["path"])
    git(env.root, "commit", "-q", "-m", "remove by hand")

    r = env.call("GET", f"/remnic/v1/memories/{memory_id}/timeline")
    assert r.status == 200, r.raw
    body = r.json()
    assert body["found"] is True and body["deleted"] is True and body["namespace"] == "alice"
    assert [(e["operation"], e["status"]) for e in body["timeline"]] == [("store", "active"), ("git-commit", "deleted")]
    cli = run_cli("timeline", memory_id, "--json", "--memory-dir", str(env.root))
    assert cli.code == 0 and cli.json()["events"] == body["timeline"], cli
    tool = mcp_call(env, "remnic_memory_timeline", {"memoryId": memory_id})  # the SDK checks the outputSchema
    assert not tool.is_error and tool.structured_content == body

    # The namespace check goes by where its file was: another principal reads it as missing.
    for r in (
        env.call("GET", f"/remnic/v1/memories/{memory_id}/timeline", token="bob"),
        env.call("GET", f"/remnic/v1/memories/{memory_id}/timeline?namespace=shared"),
    ):
        assert r.status == 404 and missing_keys(r.json()) == MISSING, r.raw
        assert r.json()["error"] == f"no memory with id {memory_id!r}"
    live = store(env, "The axolotl eats on Mondays")["memoryId"]
    assert env.call("GET", f"/remnic/v1/memories/{live}/timeline").json()["deleted"] is False


def test_an_uncommitted_memory_gets_the_documented_not_found_shape_on_http_and_mcp(env: Env) -> None:
    folder = env.root / "namespaces" / "alice" / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hand-note.md").write_text("---\ncategory: fact\n---\nhand written gecko note\n")
    cli = run_cli("get", "namespaces/alice/facts/hand-note.md", "--json", "--memory-dir", str(env.root))
    memory_id = cli.json()["id"]

    r = env.call("GET", f"/remnic/v1/memories/{memory_id}/timeline")
    assert r.status == 404 and missing_keys(r.json()) == MISSING and r.json()["namespace"] == "alice", r.raw
    assert "no committed versions yet" in r.json()["error"] and r.json()["code"] == "not_found"
    tool = mcp_call(env, "remnic_memory_timeline", {"memoryId": memory_id})
    assert not tool.is_error and tool.structured_content == r.json()
    never = mcp_call(env, "remnic_memory_timeline", {"memoryId": "mem_0000000000000000000"})
    assert not never.is_error and never.structured_content.keys() == tool.structured_content.keys()
    # Whoever may not read it learns nothing of the file (not its path, not that it exists).
    other = env.call("GET", f"/remnic/v1/memories/{memory_id}/timeline", token="bob")
    assert other.status == 404 and other.json()["error"] == f"no memory with id {memory_id!r}", other.raw


def test_a_refused_reason_code_names_reasonCode_over_http_and_mcp_and_reason_on_the_cli(env: Env) -> None:
    queued = env.call("POST", "/remnic/v1/suggestions", {"content": "Use ruff for linting"}).json()["memoryId"]
    args = {"memoryId": queued, "status": "active", "reasonCode": "ok\nbut"}
    r = env.call("POST", "/remnic/v1/review-disposition", args)
    assert r.status == 400 and [d["field"] for d in r.json()["details"]] == ["reasonCode"], r.raw
    assert r.json()["error"].startswith("reasonCode: ")
    tool = mcp_call(env, "remnic_review_disposition", args)
    assert tool.is_error and tool.content[0].text == r.raw.decode()
    cli = run_cli("review", "approve", queued, "--reason", "ok\nbut", "--memory-dir", str(env.root))
    assert cli.code == 2 and "error: --reason: must be one line" in cli.err and "reasonCode" not in cli.err, cli


def test_superseding_a_superseded_memory_names_the_field_the_surface_uses(env: Env) -> None:
    old = store(env, "We release on Tuesdays")["memoryId"]
    head = store(env, "We release on Wednesdays", supersedes=old)["memoryId"]
    r = env.call("POST", "/remnic/v1/memories", {"content": "We release on Thursdays", "supersedes": old})
    assert r.status == 400, r.raw
    error, [detail] = r.json()["error"], r.json()["details"]
    assert f"supersede it instead: `supersedes: {head}`" in error and "--supersedes" not in error, error
    assert detail["field"] == "supersedes" and detail["instead"] == head
    tool = mcp_call(env, "remnic_memory_store", {"content": "We release on Thursdays", "supersedes": old})
    assert tool.is_error and tool.content[0].text == r.raw.decode()
    cli = run_cli(
        "store", "We release on Thursdays", "--supersedes", old, "--namespace", "alice", "--memory-dir", str(env.root)
    )
    assert cli.code == 2 and f"`--supersedes {head}`" in cli.err and "--supersedes: " in cli.err, cli
