"""MCP driven by the official ``mcp`` Python SDK client, over stdio and over streamable HTTP.

The stdio server is a real subprocess (``python -m remnic mcp``); the HTTP one a
real server on an ephemeral loopback port with bearer auth. Tool results are
compared byte for byte with the HTTP routes they share an operation with.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import warnings
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import run_cli
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from test_server_http import NAMESPACES, Env, make_env

from remnic.render.xray import render_xray
from remnic.server.mcp import SUPPORTED_VERSIONS, TOOL_NAMES
from remnic.service.memory import Memory

OPERATIONS = (
    "recall",
    "recall_xray",
    "recall_explain",
    "memory_store",
    "memory_get",
    "memory_search",
    "memory_timeline",
    "observe",
    "review_queue_list",
)
ALL_TOOLS = {f"{prefix}.{op}" for prefix in ("remnic", "engram") for op in OPERATIONS}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


@pytest.fixture
def plain_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    """Namespaces disabled: what a CLI user without a policy sees."""
    yield from make_env(tmp_path, monkeypatch)


def run(coro_fn: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(coro_fn(), timeout=60))


def http_client(env: Env, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(env.url + "/mcp", http_client=http))


def stdio_client(root: Path, *extra: str) -> Client:
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "REMNIC_TOKENS_PATH", "REMNIC_XRAY_CLOCK")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "remnic", "mcp", "--memory-dir", str(root), *extra], env=env
    )
    return Client(params, mode="legacy")


def text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


async def check_tools(client: Client) -> None:
    listed = await client.list_tools()
    names = {t.name for t in listed.tools}
    assert names == ALL_TOOLS
    for tool in listed.tools:
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
    store = next(t for t in listed.tools if t.name == "engram.memory_store")
    assert store.input_schema["required"] == ["content"]
    assert "decision" in store.input_schema["properties"]["category"]["enum"]
    assert store.description.startswith("(legacy alias of remnic.memory_store)")


# --- stdio ---


def test_stdio_initialize_list_and_call(memory: Memory) -> None:
    async def go() -> None:
        async with stdio_client(memory.root) as client:
            assert client.protocol_version in SUPPORTED_VERSIONS
            assert client.server_info is not None and client.server_info.name == "remnic"
            with warnings.catch_warnings():  # ping is fine at handshake-era versions; the SDK warns for 2026
                warnings.simplefilter("ignore")
                await client.send_ping()
            await check_tools(client)
            stored = await client.call_tool(
                "remnic.memory_store", {"content": "Ana prefers tabs", "category": "preference"}
            )
            assert not stored.is_error and stored.structured_content["status"] == "stored"
            memory_id = stored.structured_content["memoryId"]
            got = await client.call_tool("engram.memory_get", {"memoryId": memory_id})
            assert json.loads(text(got))["memory"]["content"] == "Ana prefers tabs"
            assert json.loads(text(got))["memory"]["frontmatter"]["source"] == "mcp-stdio:default"
            timeline = await client.call_tool("remnic.memory_timeline", {"memoryId": memory_id})
            assert timeline.structured_content["timeline"][0]["operation"] == "store"

            bad = await client.call_tool("remnic.memory_store", {"content": "x", "category": "gossip", "colour": 1})
            assert bad.is_error
            err = json.loads(text(bad))
            assert err["code"] == "validation_error"
            fields = {d["field"]: d for d in err["details"]}
            assert "preference" in fields["category"]["options"] and "content" in fields["colour"]["options"]
            missing = await client.call_tool("remnic.memory_get", {"memoryId": "mem_nope"})
            assert missing.is_error and json.loads(text(missing))["code"] == "not_found"
            with pytest.raises(MCPError) as exc:
                await client.call_tool("remnic.forget_everything", {})
            assert "remnic.memory_store" in str(exc.value) and "valid tools" in str(exc.value)

    run(go)
    assert any(r.content == "Ana prefers tabs" for r in memory.list())


def test_stdio_auto_negotiation_falls_back_to_initialize(memory: Memory) -> None:
    """The SDK's default 'auto' mode probes server/discover first; we answer method-not-found."""

    async def go() -> str:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "remnic", "mcp", "--memory-dir", str(memory.root)],
            env={k: v for k, v in os.environ.items() if k in ("HOME", "PATH")},
        )
        async with Client(params) as client:
            await check_tools(client)
            return client.protocol_version

    assert run(go) == SUPPORTED_VERSIONS[0]


def test_stdio_raw_hostile_and_malformed_messages_keep_the_session(memory: Memory) -> None:
    """Raw JSON-RPC over a real `remnic mcp`: every bad line gets an error (id echoed when usable)
    and the session answers the next ping."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "mcp", "--memory-dir", str(memory.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(line: bytes) -> dict[str, Any]:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 20)  # no reply at all is a failure, not a hang
        assert ready, f"no reply to {line[:60]!r}"
        return json.loads(proc.stdout.readline())

    try:
        reply = ask(b'{"jsonrpc":"2.0","id":7}')  # no method and no result: not a response
        assert reply["id"] == 7 and reply["error"]["code"] == -32600
        reply = ask(b'{"jsonrpc":"1.0","id":8,"method":"ping"}')
        assert reply["id"] == 8 and reply["error"]["code"] == -32600
        reply = ask(b'{"jsonrpc":"1.0","id":true,"method":"ping"}')  # not a valid id: null
        assert reply["id"] is None and reply["error"]["code"] == -32600
        for hostile in (
            b"[" * 60_000,
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b"[" * 500 + b"]" * 500 + b"}}",
            b'{"jsonrpc":"2.0","id":' + b"1" * 5000 + b',"method":"ping"}',
        ):
            reply = ask(hostile)
            assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        # A response to a server request is consumed silently: the next line answered is the ping.
        assert ask(b'{"jsonrpc":"2.0","id":3,"result":{}}\n{"jsonrpc":"2.0","id":9,"method":"ping"}') == {
            "jsonrpc": "2.0",
            "id": 9,
            "result": {},
        }
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None and b"Traceback" not in proc.stderr.read()


# --- streamable HTTP ---


def test_http_mcp_initialize_list_call_matches_http_routes(env: Env) -> None:
    async def go() -> dict[str, Any]:
        async with http_client(env, env.alice) as client:
            assert client.protocol_version in SUPPORTED_VERSIONS
            await check_tools(client)
            stored = await client.call_tool(
                "remnic.memory_store", {"content": "Releases go out on Tuesdays", "category": "decision"}
            )
            memory_id = stored.structured_content["memoryId"]
            return {
                "stored": stored.structured_content,
                "get": text(await client.call_tool("engram.memory_get", {"memoryId": memory_id})),
                "timeline": text(await client.call_tool("remnic.memory_timeline", {"memoryId": memory_id})),
                "queue": text(await client.call_tool("remnic.review_queue_list", {})),
                "observe": (
                    await client.call_tool(
                        "remnic.observe", {"sessionKey": "s1", "messages": [{"role": "user", "content": "hello"}]}
                    )
                ).structured_content,
                "xray_other": text(await client.call_tool("remnic.recall_xray", {"query": "x", "namespace": "bob"})),
            }

    out = run(go)
    assert out["stored"]["namespace"] == "alice"
    memory_id = out["stored"]["memoryId"]
    assert out["get"].encode() == env.call("GET", f"/engram/v1/memories/{memory_id}").raw
    assert out["timeline"].encode() == env.call("GET", f"/engram/v1/memories/{memory_id}/timeline").raw
    assert out["queue"].encode() == env.call("GET", "/engram/v1/review-queue").raw
    assert out["observe"]["lcmArchived"] is True and out["observe"]["extractionQueued"] is False
    assert out["xray_other"] == '{"snapshotFound": false}\n'


def test_http_mcp_needs_the_bearer_token(env: Env) -> None:
    assert env.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, token=None).status == 401

    async def go() -> None:
        async with http_client(env, "rmn_wrong"):
            pass

    with pytest.raises(BaseException):  # the SDK surfaces the 401 from initialize
        run(go)


def test_http_mcp_writes_share_the_rate_limit_with_rest(env: Env) -> None:
    for i in range(30):
        assert env.call("POST", "/engram/v1/memories", {"content": f"rest write {i}"}).status == 201

    async def go() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.call_tool("remnic.memory_store", {"content": "one more via MCP"})

    result = run(go)
    assert result.is_error and json.loads(text(result))["code"] == "write_rate_limited"


def test_http_mcp_protocol_edges(env: Env) -> None:
    """Raw JSON-RPC framing: notifications get 202, bad JSON -32700, batches and discover are refused."""
    r = env.call("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert r.status == 202 and r.raw == b""
    r = env.call("POST", "/mcp", raw=b"{nope")
    assert r.status == 400 and r.json()["error"]["code"] == -32700
    r = env.call("POST", "/mcp", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert r.json()["error"]["code"] == -32600
    r = env.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 7, "method": "server/discover"})
    assert r.json()["id"] == 7 and r.json()["error"]["code"] == -32601
    r = env.call(
        "POST",
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "initialize",
            "params": {
                "protocolVersion": "1999-01-01",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
    )
    assert r.json()["result"]["protocolVersion"] == SUPPORTED_VERSIONS[0]
    r = env.call("GET", "/mcp")
    assert r.status == 405 and r.headers["allow"] == "POST"
    assert set(TOOL_NAMES) == ALL_TOOLS


# --- recall and X-ray ---


def test_recall_over_http_and_both_mcp_transports(env: Env) -> None:
    for text_ in ("We deploy on Tuesdays after the standup", "Ana prefers tabs", "The office wifi is slow"):
        assert env.call("POST", "/engram/v1/memories", {"content": text_}).status == 201
    r = env.call("POST", "/engram/v1/recall", {"query": "when do we deploy", "topK": 2, "sessionKey": "s"})
    assert r.status == 200, r.raw
    body = r.json()
    assert set(body) >= {
        "results",
        "count",
        "traceId",
        "plannerMode",
        "fallbackUsed",
        "sourcesUsed",
        "budgetsApplied",
        "latencyMs",
    }
    assert body["count"] == len(body["results"]) <= 2
    assert "Tuesdays" in body["results"][0]["content"]

    async def go_http() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.call_tool("remnic.recall", {"query": "when do we deploy", "topK": 2})

    result = run(go_http)
    assert not result.is_error and "Tuesdays" in result.structured_content["results"][0]["content"]

    async def go_search() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.call_tool("remnic.memory_search", {"query": "tabs", "limit": 1})

    found = run(go_search).structured_content
    assert "searchMode" not in found and found["results"][0]["content"] == "Ana prefers tabs"

    async def go_stdio() -> tuple[Any, Any]:
        async with stdio_client(env.root, "--principal", "alice") as client:
            recalled = await client.call_tool("engram.recall", {"query": "when do we deploy"})
            return recalled, await client.call_tool("remnic.recall_explain", {})

    result, explained = run(go_stdio)
    assert not result.is_error and "Tuesdays" in result.structured_content["results"][0]["content"]
    snap = explained.structured_content["snapshot"]
    assert snap["query"] == "when do we deploy" and snap["traceId"] == result.structured_content["traceId"]


def test_xray_json_is_byte_identical_across_cli_http_and_mcp(plain_env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """One query, one snapshot clock: CLI --format json, GET recall/xray and remnic.recall_xray agree."""
    env = plain_env
    monkeypatch.setenv("REMNIC_XRAY_CLOCK", "1776706200000")  # pins capturedAt, snapshotId, audit ids
    for text_ in ("We deploy on Tuesdays", "Ana prefers tabs", "Deploys freeze on Fridays"):
        env.call("POST", "/engram/v1/memories", {"content": text_})
    # Every process then reads one freshly built index: float sums over vectors laid out in another
    # order (rows appended one write at a time) may differ in the last digits the JSON prints.
    assert run_cli("reindex", "--memory-dir", str(env.root)).code == 0
    http_bytes = env.call("GET", "/engram/v1/recall/xray?q=deploy+days&budget=4096").raw

    async def go(client: Client) -> str:
        async with client:
            return text(await client.call_tool("remnic.recall_xray", {"query": "deploy days", "budget": 4096}))

    mcp_http = run(lambda: go(http_client(env, env.alice)))
    mcp_stdio = run(lambda: go(stdio_client(env.root)))
    cli = run_cli("xray", "deploy days", "--format", "json", "--budget", "4096", "--memory-dir", str(env.root))
    assert cli.code == 0, cli.err
    snap = json.loads(http_bytes)["snapshot"]
    assert snap["capturedAt"] == 1776706200000 and snap["query"] == "deploy days"
    assert any("deploy" in r["path"] for r in snap["results"])
    assert mcp_http.encode() == http_bytes
    assert mcp_stdio.encode() == http_bytes
    # The CLI prints the same snapshot flat (the original's `--format json`), through the same renderer.
    assert cli.out == render_xray(snap, "json") + "\n"
    assert json.loads(cli.out) == {"snapshotFound": True, **snap}
