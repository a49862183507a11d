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
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from test_server_http import NAMESPACES, Env, make_env, make_shared_env

from remnic.render.xray import render_xray
from remnic.server.mcp import SUPPORTED_VERSIONS, TOOL_NAME_RE, TOOL_NAMES
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
    "lcm_search",
    "lcm_compaction_flush",
    "lcm_compaction_record",
    "memory_entities",
    "entity_get",
    "memory_feedback",
    "review_disposition",
    "memory_promote",
    "citations_observed",
    "suggestion_submit",
    "memory_profile",
    "day_summary",
    "set_coding_context",
    "action_confidence",
    "memory_capture",
)
ALL_TOOLS = {f"remnic_{op}" for op in OPERATIONS}  # listed by default (mcp.toolNames: underscore)
EVERY_SPELLING = {name for op in OPERATIONS for name in (f"remnic_{op}", f"remnic.{op}", f"engram.{op}")}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    """One server for the tests whose requests write nothing."""
    yield from make_shared_env(tmp_path_factory.mktemp("mcp"), namespaces=NAMESPACES)


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
    # XDG_CACHE_HOME: the run's one model cache, as a host's environment has one ~/.cache (not a rewrite per process)
    keep = ("HOME", "PATH", "XDG_CACHE_HOME", "REMNIC_TOKENS_PATH", "REMNIC_XRAY_CLOCK", "REMNIC_CONFIG_PATH")
    env = {k: v for k, v in os.environ.items() if k in keep}
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
        assert TOOL_NAME_RE.match(tool.name), tool.name
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
    store = next(t for t in listed.tools if t.name == "remnic_memory_store")
    assert store.input_schema["required"] == ["content"]
    assert "decision" in store.input_schema["properties"]["category"]["enum"]
    assert store.input_schema["properties"]["namespace"]["pattern"] == "^[a-z0-9][a-z0-9_-]{0,63}$"
    get = next(t for t in listed.tools if t.name == "remnic_memory_get")
    assert get.input_schema["properties"]["memoryId"]["pattern"].startswith("^[A-Za-z0-9]")


# --- stdio ---


async def check_stdio_session(client: Client) -> None:
    """The handshake, the tool list, calls under every spelling, a refused call and an unknown tool."""
    # The SDK's default 'auto' mode probes server/discover first; we answer method-not-found and it
    # falls back to initialize, getting our newest version.
    assert client.protocol_version == SUPPORTED_VERSIONS[0]
    assert client.server_info is not None and client.server_info.name == "remnic"
    with warnings.catch_warnings():  # ping is fine at handshake-era versions; the SDK warns for 2026
        warnings.simplefilter("ignore")
        await client.send_ping()
    await check_tools(client)  # names against ^[a-zA-Z0-9_-]{1,64}$, schemas present
    stored = await client.call_tool("remnic.memory_store", {"content": "Ana prefers tabs", "category": "preference"})
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
    assert not missing.is_error  # the original's answer: a result saying found false
    assert missing.structured_content == json.loads(text(missing))
    assert missing.structured_content["found"] is False and missing.structured_content["code"] == "not_found"
    with pytest.raises(MCPError) as exc:
        await client.call_tool("remnic.forget_everything", {})
    assert "remnic_memory_store" in str(exc.value) and "valid tools" in str(exc.value)


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

    def ask(line: bytes, wait_s: float = 20) -> dict[str, Any]:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], wait_s)  # no reply at all is a failure, not a hang
        assert ready, f"no reply to {line[:60]!r}"
        return json.loads(proc.stdout.readline())

    try:
        # The first reply waits for the process to start too (imports, the model): longer on a busy machine.
        reply = ask(b'{"jsonrpc":"2.0","id":7}', wait_s=120)  # no method and no result: not a response
        assert reply["id"] == 7 and reply["error"]["code"] == -32600
        reply = ask(b'{"jsonrpc":"1.0","id":8,"method":"ping"}')
        assert reply["id"] == 8 and reply["error"]["code"] == -32600
        reply = ask(b'{"jsonrpc":"1.0","id":true,"method":"ping"}')  # not a valid id: null
        assert reply["id"] is None and reply["error"]["code"] == -32600
        for hostile, echoed in (
            (b"[" * 60_000, None),
            # Well-formed but too deep: its plain top-level id is echoed, so the client gets its answer.
            (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b"[" * 500 + b"]" * 500 + b"}}", 1),
            (b'{"jsonrpc":"2.0","id":' + b"1" * 5000 + b',"method":"ping"}', None),  # the id itself is refused
        ):
            reply = ask(hostile)
            assert reply["id"] == echoed and reply["error"]["code"] == -32700, reply
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
    assert out["observe"]["lcmArchived"] is True and out["observe"]["extractionQueued"] is True  # buffered
    assert out["xray_other"] == '{"snapshotFound": false}\n'


def test_http_mcp_needs_the_bearer_token(shared: Env) -> None:
    assert shared.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, token=None).status == 401

    async def go() -> None:
        async with http_client(shared, "rmn_wrong"):
            pass

    with pytest.raises(BaseException):  # the SDK surfaces the 401 from initialize
        run(go)


def test_http_mcp_writes_share_the_rate_limit_with_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A small server.writeRateLimit: the limit's size is not what is tested, the one budget for both is.
    for env in make_env(tmp_path, monkeypatch, namespaces=NAMESPACES, server={"write_rate_limit": 3}):
        for i in range(3):
            assert env.call("POST", "/engram/v1/memories", {"content": f"rest write {i}"}).status == 201

        async def go() -> Any:
            async with http_client(env, env.alice) as client:
                return await client.call_tool("remnic.memory_store", {"content": "one more via MCP"})

        result = run(go)
        assert result.is_error and json.loads(text(result))["code"] == "write_rate_limited"


def test_http_mcp_protocol_edges(shared: Env) -> None:
    """Raw JSON-RPC framing: notifications get 202, bad JSON -32700, batches and discover are refused."""
    r = shared.call("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert r.status == 202 and r.raw == b""
    r = shared.call("POST", "/mcp", raw=b"{nope")
    assert r.status == 400 and r.json()["error"]["code"] == -32700
    r = shared.call("POST", "/mcp", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert r.json()["error"]["code"] == -32600
    r = shared.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 7, "method": "server/discover"})
    assert r.json()["id"] == 7 and r.json()["error"]["code"] == -32601
    r = shared.call(
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
    r = shared.call("GET", "/mcp")
    assert r.status == 405 and r.headers["allow"] == "POST"
    assert set(TOOL_NAMES) == EVERY_SPELLING


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

    async def go_http() -> tuple[Any, Any]:
        async with http_client(env, env.alice) as client:
            recalled = await client.call_tool("remnic.recall", {"query": "when do we deploy", "topK": 2})
            return recalled, await client.call_tool("remnic.memory_search", {"query": "tabs", "limit": 1})

    result, searched = run(go_http)
    assert not result.is_error and "Tuesdays" in result.structured_content["results"][0]["content"]
    found = searched.structured_content
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


# --- tool names, output schemas, the stdio write limit ---


async def call_every_tool(client: Client) -> dict[str, Any]:
    """Each tool once with valid arguments (two results for recall_explain: found and not found)."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    results: dict[str, Any] = {}

    async def call(name: str, arguments: dict[str, Any], key: str | None = None) -> Any:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, (name, text(result))
        results[key or name] = (tools[name].output_schema, result.structured_content)
        return result.structured_content

    await call("remnic_recall_explain", {"sessionKey": "nothing yet"}, "remnic_recall_explain (not found)")
    stored = await call("remnic_memory_store", {"content": "We deploy on Tuesdays", "tags": ["ops"]})
    await call("remnic_memory_store", {"content": "We deploy on Tuesdays"}, "remnic_memory_store (duplicate)")
    await call("remnic_memory_get", {"memoryId": stored["memoryId"]})
    await call("remnic_memory_timeline", {"memoryId": stored["memoryId"]})
    await call("remnic_recall", {"query": "when do we deploy", "includeDebug": True, "sessionKey": "s"})
    await call("remnic_recall_explain", {"sessionKey": "s", "format": "markdown"})
    await call("remnic_recall_xray", {"query": "deploy"})
    await call("remnic_memory_search", {"query": "deploy", "limit": 3})
    await call("remnic_observe", {"sessionKey": "s", "messages": [{"role": "user", "content": "hello"}]})
    await call("remnic_review_queue_list", {"limit": 5})
    await call("remnic_lcm_search", {"query": "hello", "limit": 3})
    await call("remnic_lcm_compaction_flush", {"sessionKey": "s"})
    await call("remnic_lcm_compaction_record", {"sessionKey": "s", "tokensBefore": 900, "tokensAfter": 100})
    await call(
        "remnic_memory_store",
        {"content": "Ana prefers tabs over spaces", "category": "preference"},
        "remnic_memory_store (ana)",
    )
    await call("remnic_memory_entities", {"type": "person"})
    await call("remnic_entity_get", {"name": "Ana"})
    await call("remnic_entity_get", {"name": "Nobody"}, "remnic_entity_get (not found)")
    await call("remnic_memory_feedback", {"memoryId": stored["memoryId"], "vote": "up", "note": "helped"})
    await call("remnic_memory_promote", {"memoryId": stored["memoryId"]})
    cited = {"entries": [{"path": stored["path"], "lineStart": 1, "lineEnd": 2}], "rolloutIds": []}
    await call("remnic_citations_observed", {"citations": cited})
    suggested = await call("remnic_suggestion_submit", {"content": "Maybe deploy on Wednesdays"})
    await call(
        "remnic_review_disposition", {"memoryId": suggested["memoryId"], "status": "active", "reasonCode": "approved"}
    )
    await call("remnic_memory_profile", {})
    await call("remnic_day_summary", {"timeZone": "Europe/Lisbon"})
    await call("remnic_set_coding_context", {"sessionKey": "s", "projectTag": "webapp"})
    await call(
        "remnic_set_coding_context", {"sessionKey": "s", "codingContext": None}, "remnic_set_coding_context (clear)"
    )
    await call("remnic_recall", {"query": "deploy", "sessionKey": "s", "cwd": "/"}, "remnic_recall (cwd)")
    await call("remnic_action_confidence", {"confidence": 0.9, "risk": "low", "contextReadiness": "sufficient"})
    await call("remnic_memory_capture", {"content": "Redis runs on port 6380 in staging"})
    assert {name.split(" ")[0] for name in results} == set(tools)
    return results


def assert_results_match_schemas(results: dict[str, Any]) -> None:
    for name, (schema, structured) in results.items():
        Draft202012Validator.check_schema(schema)
        errors = [e.message for e in Draft202012Validator(schema).iter_errors(structured)]
        assert not errors, (name, errors)
    # The schemas are not vacuous: a result missing a required key fails them.
    schema, structured = results["remnic_memory_store"]
    broken = {k: v for k, v in structured.items() if k != "memoryId"}
    assert list(Draft202012Validator(schema).iter_errors(broken))


def test_a_stdio_session_negotiates_lists_and_every_tool_result_matches_its_output_schema(memory: Memory) -> None:
    """One real `remnic mcp` session (the SDK client in its default 'auto' mode) for the handshake, the
    tool list, the spellings and refusals, then every tool once with its result checked against its schema."""

    async def go() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "remnic", "mcp", "--memory-dir", str(memory.root)],
            env={k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "XDG_CACHE_HOME")},
        )
        async with Client(params) as client:
            await check_stdio_session(client)
            return await call_every_tool(client)

    assert_results_match_schemas(run(go))
    assert any(r.content == "Ana prefers tabs" for r in memory.list())


def test_every_tool_result_matches_its_output_schema_over_http(plain_env: Env) -> None:
    async def go() -> dict[str, Any]:
        async with http_client(plain_env, plain_env.alice) as client:
            await check_tools(client)
            return await call_every_tool(client)

    assert_results_match_schemas(run(go))


@pytest.mark.parametrize(
    ("style", "listed"),
    [
        ("underscore", ["remnic_recall"]),
        ("dotted", ["remnic.recall", "engram.recall"]),
        ("both", ["remnic_recall", "remnic.recall", "engram.recall"]),
    ],
)
def test_tool_names_setting_chooses_what_is_listed_and_calls_take_every_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, style: str, listed: list[str]
) -> None:
    for env in make_env(tmp_path, monkeypatch, mcp={"tool_names": style}):
        tools = env.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()["result"]["tools"]
        names = [t["name"] for t in tools]
        assert [n for n in names if n.endswith(("_recall", ".recall"))] == listed
        assert len(names) == len(OPERATIONS) * len(listed)
        canonical = next(t for t in tools if t["name"] == listed[0])
        assert not canonical["description"].startswith("(")
        for alias in listed[1:]:
            described = next(t for t in tools if t["name"] == alias)["description"]
            assert described.startswith(f"(legacy alias of {listed[0]})" if alias.startswith("engram.") else "(alias")
        for i, name in enumerate(("remnic_memory_search", "remnic.memory_search", "engram.memory_search")):
            call = {"name": name, "arguments": {"query": "anything"}}
            reply = env.call("POST", "/mcp", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
            assert reply.json()["result"]["isError"] is False, (style, name)


def test_stdio_writes_past_the_write_limit_succeed_unless_configured(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """server.writeRateLimit is the HTTP clients' budget: a stdio session (the host launched it) is not held
    to it unless mcp.rateLimitStdio says so. A limit of 2 shows it as the default 30 would, in 3 writes."""

    async def writes(count: int) -> list[Any]:
        async with stdio_client(memory.root) as client:
            return [
                await client.call_tool("remnic_memory_store", {"content": f"stdio write {i}"}) for i in range(count)
            ]

    config = tmp_path / "limited.json"
    config.write_text(json.dumps({"server": {"writeRateLimit": 2}}))
    monkeypatch.setenv("REMNIC_CONFIG_PATH", str(config))
    results = run(lambda: writes(3))
    assert all(not r.is_error for r in results), [text(r) for r in results if r.is_error][:1]
    assert results[-1].structured_content["status"] == "stored"

    config.write_text(json.dumps({"mcp": {"rateLimitStdio": True}, "server": {"writeRateLimit": 2}}))
    limited = run(lambda: writes(3))
    assert [r.is_error for r in limited] == [False, False, True]
    assert json.loads(text(limited[2]))["code"] == "write_rate_limited"
