"""Bad text on every surface: NUL bytes, lone surrogates and non-UTF-8 bytes are refused with
the field and the offset named — 400 over HTTP, a tool error over MCP, exit 2 on the CLI —
and nothing is written.

The MCP SDK client cannot even serialise a lone surrogate, so those cases (and raw
non-UTF-8 bytes) go over raw JSON-RPC: lines to a real `remnic mcp`, bodies to POST /mcp.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import snapshot_tree
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_server_http import Env, commits, make_env

from remnic.service.memory import Memory

NUL = b'{"content": "caf\\u0000e"}'  # JSON escapes: valid UTF-8 bytes, bad text once decoded
SURROGATE = b'{"content": "caf\\ud800e"}'
NOT_UTF8 = b'{"content": "caf\xe9 au lait"}'  # a Latin-1 byte


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def only_problem(body: dict[str, Any]) -> dict[str, Any]:
    assert body["code"] == "validation_error", body
    assert len(body["details"]) == 1, body
    return body["details"][0]


# --- HTTP ---


def test_http_bad_text_is_400_naming_field_and_offset(env: Env) -> None:
    before, tree = commits(env.root), snapshot_tree(env.root)
    cases = [
        ("/engram/v1/memories", NUL, "content", "NUL character at character offset 3"),
        ("/engram/v1/memories", SURROGATE, "content", "U+D800 is a lone surrogate"),
        ("/engram/v1/memories", NOT_UTF8, "content", "undecodable byte 0xE9"),
        ("/engram/v1/memories", b'{"content": "ok", "tags": ["a", "b\\u0000"]}', "tags[1]", "offset 1"),
        ("/engram/v1/memories", b'{"content": "ok", "entityRef": "\\udc00x"}', "entityRef", "offset 0"),
        ("/engram/v1/recall", b'{"query": "caf\xe9"}', "query", "undecodable byte 0xE9"),
        (
            "/engram/v1/observe",
            b'{"sessionKey": "s", "messages": [{"role": "user", "content": "hi \\ud83d"}]}',
            "messages[0].content",
            "U+D83D",
        ),
    ]
    for path, raw, field, words in cases:
        r = env.call("POST", path, raw=raw)
        assert r.status == 400, (path, raw, r.raw)
        problem = only_problem(r.json())
        assert problem["field"] == field and words in problem["message"], problem
    r = env.call("POST", "/engram/v1/memories", raw=b'{"content": "caf\xe9')  # broken JSON too: the byte
    assert r.status == 400 and r.json()["code"] == "invalid_json"
    assert "byte 0xE9 at byte offset 16" in r.json()["error"]
    assert commits(env.root) == before and snapshot_tree(env.root) == tree
    assert not (env.root / ".remnic" / "observe").exists() or not any(
        (env.root / ".remnic" / "observe").rglob("*.jsonl")
    )


# --- MCP over HTTP: the SDK client (NUL), raw JSON-RPC (surrogates, bytes) ---


def test_http_mcp_bad_text_is_a_tool_error(env: Env) -> None:
    before = commits(env.root)

    async def go() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {env.alice}"}, timeout=30)
        async with Client(streamable_http_client(env.url + "/mcp", http_client=http)) as client:
            return await client.call_tool("remnic.memory_store", {"content": "caf\x00e"})

    result = asyncio.run(asyncio.wait_for(go(), timeout=60))
    assert result.is_error
    problem = only_problem(json.loads(result.content[0].text))
    assert problem["field"] == "content" and "NUL character at character offset 3" in problem["message"]

    for arguments, words in ((SURROGATE, "U+D800"), (NOT_UTF8, "undecodable byte 0xE9")):
        raw = b'{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "remnic.memory_store", "arguments": '
        r = env.call("POST", "/mcp", raw=raw + arguments + b"}}")
        assert r.status == 200, r.raw
        reply = r.json()
        assert reply["id"] == 41 and reply["result"]["isError"] is True
        assert "structuredContent" not in reply["result"]  # errors are not the tool's output shape
        problem = only_problem(json.loads(reply["result"]["content"][0]["text"]))
        assert problem["field"] == "content" and words in problem["message"]
    assert commits(env.root) == before


# --- MCP over stdio: raw lines to a real `remnic mcp` ---


def test_stdio_mcp_bad_text_is_a_tool_error_and_the_session_goes_on(memory: Memory) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "mcp", "--memory-dir", str(memory.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k in ("HOME", "PATH")},
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(line: bytes) -> dict[str, Any]:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, f"no reply to {line[:60]!r}"
        return json.loads(proc.stdout.readline())

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        assert "result" in ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
        call = b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "remnic.memory_store", "arguments": %s}}'
        for i, (arguments, words) in enumerate(
            ((NUL, "NUL character at character offset 3"), (SURROGATE, "U+D800"), (NOT_UTF8, "byte 0xE9")), 2
        ):
            reply = ask(call % (i, arguments))
            assert reply["id"] == i and reply["result"]["isError"] is True, reply
            problem = only_problem(json.loads(reply["result"]["content"][0]["text"]))
            assert problem["field"] == "content" and words in problem["message"]
        reply = ask(b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "caf\xe9"}}')
        assert reply["id"] == 9 and "unknown tool" in reply["error"]["message"]  # echoed safely, session intact
        assert ask(b'{"jsonrpc": "2.0", "id": 10, "method": "ping"}') == {"jsonrpc": "2.0", "id": 10, "result": {}}
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None and b"Traceback" not in proc.stderr.read()
    assert memory.list() == []


# --- CLI ---


def remnic(memory: Memory, *args: bytes | str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "remnic", *args, "--memory-dir", str(memory.root)],
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def test_cli_bad_text_exits_2_naming_field_and_offset(memory: Memory, tmp_path: Path) -> None:
    before = commits(memory.root)
    run = remnic(memory, "store", "-", stdin=b"caf\xe9")
    assert run.returncode == 2 and b"Traceback" not in run.stderr
    assert b"TEXT: standard input is not UTF-8 text: byte 0xE9 at byte offset 3" in run.stderr
    run = remnic(memory, "store", "-", stdin=b"caf\x00e")
    assert run.returncode == 2 and b"TEXT: contains a NUL character at character offset 3" in run.stderr
    run = remnic(memory, "store", b"caf\xe9 au lait")  # a non-UTF-8 argument
    assert run.returncode == 2 and b"TEXT: is not valid UTF-8 text at character offset 3" in run.stderr
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(b'{"content": "fine"}\n{"content": "caf\xe9"}\n{"content": "x", "tags": ["\\u0000"]}\n')
    run = remnic(memory, "import", str(batch))
    assert run.returncode == 2 and b"Traceback" not in run.stderr
    assert b"batch.jsonl:2: the line is not UTF-8 text: byte 0xE9 at byte offset 16" in run.stderr
    assert b"batch.jsonl:3: tags[0]: contains a NUL character" in run.stderr
    assert commits(memory.root) == before and memory.list() == []


def test_python_api_refuses_bad_text_in_any_stored_field(memory: Memory) -> None:
    from remnic.errors import ValidationError

    for kwargs, field in (
        ({"content": "caf\udce9"}, "content"),
        ({"content": "ok", "tags": ["t\x00"]}, "tags[0]"),
        ({"content": "ok", "extra": {"sourceReason": "why\ud800"}}, "sourceReason"),
    ):
        with pytest.raises(ValidationError) as exc:
            memory.store(**kwargs)
        assert exc.value.problems[0].field == field
    record = memory.store("keep me")
    with pytest.raises(ValidationError) as exc:
        memory.forget(record.id, reason="no\x00pe")
    assert exc.value.problems[0].field == "forgottenReason" and "offset 2" in exc.value.problems[0].message
    assert memory.get(record.id).status == "active"
