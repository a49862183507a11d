"""Server fixes of round 32, each against a real server on 127.0.0.1 (the fixtures of test_server_http)
and the official MCP client: a dry run refuses what the write refuses; a body over the limit is
413 at once even when the client never sends it; malformed request lines get a status line;
repeated Content-Length or Host is 400; an over-long integer is named in the client's terms;
feedback's arguments are checked before its memory is looked up."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_server_http import Env, commits, make_env
from test_server_mcp import http_client, run, text

from remnic.errors import ValidationError

DEADLINE_S = 1.5
"""server.requestTimeoutS here: long enough that a prompt 413 is told apart from the deadline."""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, server={"request_timeout_s": DEADLINE_S})


def raw_exchange(env: Env, data: bytes, *, timeout: float = 5.0) -> tuple[bytes, float]:
    """Send ``data`` on a fresh connection; everything the server sends until it closes, and how long."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", env.port), timeout=timeout) as sock:
        sock.sendall(data)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except ConnectionResetError:
            pass
    return got, time.monotonic() - started


def head_and_body(response: bytes) -> tuple[str, dict[str, str], Any]:
    head, _, body = response.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return status, headers, json.loads(body)


def post_head(env: Env, path: str, length: int, *extra: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{env.port}", f"Authorization: Bearer {env.alice}"]
    lines += [f"Content-Length: {length}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    bad = [
        r for r in caplog.records if r.name.startswith("remnic.server") and (r.exc_info or r.levelno >= logging.ERROR)
    ]
    assert not bad, [r.getMessage() for r in bad]


# --- 2. a dry run refuses a supersedes the write refuses ---


def test_dry_run_refuses_a_missing_or_forgotten_supersedes_as_the_write_does(env: Env) -> None:
    before = commits(env.root)
    for target in ("mem_nope",):
        for dry in (True, False):
            r = env.call("POST", "/remnic/v1/memories", {"content": "x1", "supersedes": target, "dryRun": dry})
            assert r.status == 400, (dry, r.raw)
            assert r.json()["details"][0]["field"] == "supersedes" and "mem_nope" in r.json()["error"]
    old = env.call("POST", "/remnic/v1/memories", {"content": "We ship on Mondays"}).json()["memoryId"]
    env.memory.forget(old, "obsolete")
    answers = []
    for dry in (True, False):
        r = env.call("POST", "/remnic/v1/memories", {"content": "We ship on Fridays", "supersedes": old, "dryRun": dry})
        assert r.status == 400 and "forgotten" in r.json()["error"], r.raw
        answers.append(r.json()["error"])
    assert answers[0] == answers[1]
    assert commits(env.root) == before + 2  # the store and the forget; nothing from the refusals
    # A good target still validates, and an exact duplicate is still the write's answer (before supersedes).
    live = env.call("POST", "/remnic/v1/memories", {"content": "We ship on Tuesdays"}).json()["memoryId"]
    ok = env.call("POST", "/remnic/v1/memories", {"content": "We ship daily", "supersedes": live, "dryRun": True})
    assert ok.status == 200 and ok.json()["status"] == "validated", ok.raw
    dup = env.call("POST", "/remnic/v1/memories", {"content": "We ship on Tuesdays", "supersedes": "mem_nope"})
    dry_dup = env.call(
        "POST", "/remnic/v1/memories", {"content": "We ship on Tuesdays", "supersedes": "mem_nope", "dryRun": True}
    )
    assert dup.json()["status"] == dry_dup.json()["status"] == "duplicate"


def test_dry_run_over_mcp_and_the_cli_and_a_taken_id_in_python(env: Env) -> None:
    async def go() -> None:
        async with http_client(env, env.alice) as client:
            args = {"content": "mcp dry", "supersedes": "mem_nope", "dryRun": True}
            result = await client.call_tool("remnic_memory_store", args)
            assert result.is_error and "mem_nope" in text(result)

    run(go)
    cli = run_cli("--memory-dir", str(env.root), "store", "--dry-run", "--supersedes", "mem_nope", "cli dry")
    assert cli.code == 2 and "supersedes" in cli.err, (cli.out, cli.err)
    taken = env.memory.store("A memory with its own id").record.id
    with pytest.raises(ValidationError) as info:
        env.memory.store("another text", extra={"id": taken}, dry_run=True)
    assert info.value.problems[0].field == "extra.id"


# --- 3. a body over the limit: 413 at once; a stalled body within it: 408 ---


@pytest.mark.parametrize("sent", [b"", b'{"content":"' + b"a" * 10000], ids=["nothing", "part"])
def test_an_announced_body_over_the_limit_is_413_at_once_even_when_never_sent(
    env: Env, caplog: pytest.LogCaptureFixture, sent: bytes
) -> None:
    caplog.set_level(logging.INFO, logger="remnic.server")
    limit = env.memory.settings.server.max_body_bytes
    response, took = raw_exchange(env, post_head(env, "/remnic/v1/memories", limit + 60000) + sent)
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 413"), response[:200]
    assert body["code"] == "request_body_too_large" and "server.maxBodyBytes" in body["error"]
    assert headers["connection"] == "close" and headers["x-request-id"]
    assert took < DEADLINE_S - 0.3  # answered (and hung up) long before the request deadline
    no_tracebacks(caplog)


def test_an_oversized_mcp_call_sent_in_full_keeps_its_id_and_the_server_serves_on(env: Env) -> None:
    msg = {"jsonrpc": "2.0", "id": 21, "method": "tools/call"}
    msg["params"] = {"name": "remnic_memory_store", "arguments": {"content": "x" * 200000}}
    data = json.dumps(msg).encode()
    response, _ = raw_exchange(env, post_head(env, "/mcp", len(data), "Content-Type: application/json") + data)
    status, _, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 413") and body["id"] == 21 and body["error"]["code"] == -32600
    assert env.call("GET", "/remnic/v1/health").status == 200


def test_a_stalled_body_within_the_limit_is_408_at_the_deadline(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="remnic.server")
    response, took = raw_exchange(env, post_head(env, "/remnic/v1/memories", 1000) + b'{"content":')
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 408") and body["code"] == "request_timeout", response[:200]
    assert headers["connection"] == "close" and DEADLINE_S - 0.2 < took < DEADLINE_S + 1.0
    no_tracebacks(caplog)


# --- 4. malformed request lines get a status line and headers ---


@pytest.mark.parametrize(
    ("line", "status", "code"),
    [
        (b"GET /remnic/v1/health HTTP/2.0", 505, "http_version_not_supported"),
        (b"GET /remnic/v1/health HTTP/1.1 extra", 400, "bad_request"),
        (b"GET /remnic/v1/health", 505, "http_version_not_supported"),  # HTTP/0.9
        (b"\x16\x03\x01\x00\xa5\x01", 400, "bad_request"),  # a TLS ClientHello's first bytes
        (b"GET /x HTTP/one", 400, "bad_request"),
    ],
    ids=["http2", "extra-word", "http09", "tls", "bad-version"],
)
def test_a_malformed_request_line_is_answered_with_a_status_line(env: Env, line: bytes, status: int, code: str) -> None:
    response, _ = raw_exchange(env, line + b"\r\nHost: 127.0.0.1\r\n\r\n")
    got, headers, body = head_and_body(response)
    assert got.startswith(f"HTTP/1.1 {status} "), response[:200]
    assert body["code"] == code and headers["x-request-id"] and headers["connection"] == "close"
    assert headers["content-type"].startswith("application/json")


# --- 5. a header a request carries once, repeated ---


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        (["Content-Length: 40"], "Content-Length"),  # two lengths: where the body ends is ambiguous
        (["Content-Length: 2"], "Content-Length"),  # the same length twice is refused too (docs/server.md)
        (["Host: evil.example"], "Host"),
    ],
    ids=["two-lengths", "same-length", "two-hosts"],
)
def test_a_repeated_content_length_or_host_is_400_and_the_connection_closes(
    env: Env, extra: list[str], field: str
) -> None:
    before = commits(env.root)
    request = post_head(env, "/remnic/v1/memories", 2, *extra) + b"{}"
    # A second request pipelined behind it must not be read: the first one's framing cannot be trusted.
    response, _ = raw_exchange(env, request + b"GET /remnic/v1/livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 400"), response[:300]
    assert body["code"] == "validation_error" and body["details"][0]["field"] == field
    assert "once" in body["error"] and headers["connection"] == "close"
    assert response.count(b"HTTP/1.1 ") == 1 and commits(env.root) == before


def test_one_content_length_and_one_host_still_work(env: Env) -> None:
    data = json.dumps({"content": "framing is fine"}).encode()
    response, _ = raw_exchange(env, post_head(env, "/remnic/v1/memories", len(data), "Connection: close") + data)
    assert response.startswith(b"HTTP/1.1 201"), response[:300]


# --- 6. an over-long integer, in the client's terms ---


def test_an_over_long_integer_is_named_without_a_python_hint(env: Env) -> None:
    r = env.call("POST", "/remnic/v1/memories", raw=b'{"content":"x","importance":' + b"9" * 5000 + b"}")
    assert r.status == 400 and r.json()["code"] == "invalid_json"
    message = r.json()["error"]
    assert "an integer has more than 4,300 digits" in message and "'importance'" in message, message
    assert "sys." not in message
    mcp = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remnic_recall","arguments":{"topK":'
    r = env.call("POST", "/mcp", raw=mcp + b"1" * 4400 + b"}}}")
    assert r.json()["error"]["code"] == -32700 and "more than 4,300 digits" in r.json()["error"]["message"]


# --- 7. feedback's arguments before its memory ---


def test_feedback_without_a_vote_names_the_vote_even_for_an_unknown_memory(env: Env) -> None:
    http = env.call("POST", "/remnic/v1/memories/mem_nope/feedback", {})
    assert http.status == 400 and http.json()["details"][0]["field"] == "vote", http.raw

    async def go() -> None:
        async with http_client(env, env.alice) as client:
            result = await client.call_tool("remnic_memory_feedback", {"memoryId": "x"})
            assert result.is_error
            body = json.loads(text(result))
            assert body["details"][0]["field"] == "vote" and "up or down" in body["error"], body
            bad = await client.call_tool("remnic_memory_feedback", {"memoryId": "x", "vote": "sideways"})
            assert bad.is_error and json.loads(text(bad))["details"][0]["options"] == ["up", "down"]
            missing = await client.call_tool("remnic_memory_feedback", {"memoryId": "x", "vote": "up"})
            assert "no memory with id 'x'" in text(missing)

    run(go)
