"""Server fixes of round 32, each against a real server on 127.0.0.1 (the fixtures of test_server_http)
and the official MCP client: a dry run refuses what the write refuses; a body over the limit is
413 at once even when the client never sends it; malformed request lines get a status line;
repeated Content-Length or Host is 400; an over-long integer is named in the client's terms;
feedback's arguments are checked before its memory is looked up. Then the verification's follow-ups:
the lingering close after a 413 lasts to the request's deadline; malformed header lines and
Content-Length values are 400; HTTP/0.9 and target-less request lines; dry runs predict duplicates,
a busy repository and leave idempotency keys alone; Expect: 100-continue; empty lines before a
request line; refused MCP messages answered with their id."""

from __future__ import annotations

import io
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli
from test_server_http import Env, commits, make_env, make_shared_env
from test_server_mcp import http_client, run, text

from remnic.errors import RepoBusyError, ValidationError
from remnic.server import Api
from remnic.server.mcp import McpServer, run_stdio

DEADLINE_S = 1.5
"""server.requestTimeoutS here: long enough that a prompt 413 is told apart from the deadline."""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    """A repository and server of the test's own, for the tests that write."""
    yield from make_env(tmp_path, monkeypatch, server={"request_timeout_s": DEADLINE_S})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    """One repository and server for the tests whose requests are refused or dry runs: nothing is written."""
    yield from make_shared_env(tmp_path_factory.mktemp("r32"), server={"request_timeout_s": DEADLINE_S})


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
    served: Env, caplog: pytest.LogCaptureFixture, sent: bytes
) -> None:
    caplog.set_level(logging.INFO, logger="remnic.server")
    limit = served.memory.settings.server.max_body_bytes
    response, took = raw_exchange(served, post_head(served, "/remnic/v1/memories", limit + 60000) + sent)
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 413"), response[:200]
    assert body["code"] == "request_body_too_large" and "server.maxBodyBytes" in body["error"]
    assert headers["connection"] == "close" and headers["x-request-id"]
    assert took < DEADLINE_S - 0.3  # answered (and hung up) long before the request deadline
    no_tracebacks(caplog)


def test_an_oversized_mcp_call_sent_in_full_keeps_its_id_and_the_server_serves_on(served: Env) -> None:
    msg = {"jsonrpc": "2.0", "id": 21, "method": "tools/call"}
    msg["params"] = {"name": "remnic_memory_store", "arguments": {"content": "x" * 200000}}
    data = json.dumps(msg).encode()
    response, _ = raw_exchange(served, post_head(served, "/mcp", len(data), "Content-Type: application/json") + data)
    status, _, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 413") and body["id"] == 21 and body["error"]["code"] == -32600
    assert served.call("GET", "/remnic/v1/health").status == 200


def test_a_stalled_body_within_the_limit_is_408_at_the_deadline(served: Env, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="remnic.server")
    response, took = raw_exchange(served, post_head(served, "/remnic/v1/memories", 1000) + b'{"content":')
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
def test_a_malformed_request_line_is_answered_with_a_status_line(
    served: Env, line: bytes, status: int, code: str
) -> None:
    response, _ = raw_exchange(served, line + b"\r\nHost: 127.0.0.1\r\n\r\n")
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
    served: Env, extra: list[str], field: str
) -> None:
    before = commits(served.root)
    request = post_head(served, "/remnic/v1/memories", 2, *extra) + b"{}"
    # A second request pipelined behind it must not be read: the first one's framing cannot be trusted.
    response, _ = raw_exchange(served, request + b"GET /remnic/v1/livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 400"), response[:300]
    assert body["code"] == "validation_error" and body["details"][0]["field"] == field
    assert "once" in body["error"] and headers["connection"] == "close"
    assert response.count(b"HTTP/1.1 ") == 1 and commits(served.root) == before


def test_one_content_length_and_one_host_still_work(env: Env) -> None:
    data = json.dumps({"content": "framing is fine"}).encode()
    response, _ = raw_exchange(env, post_head(env, "/remnic/v1/memories", len(data), "Connection: close") + data)
    assert response.startswith(b"HTTP/1.1 201"), response[:300]


# --- 6. an over-long integer, in the client's terms ---


def test_an_over_long_integer_is_named_without_a_python_hint(served: Env) -> None:
    r = served.call("POST", "/remnic/v1/memories", raw=b'{"content":"x","importance":' + b"9" * 5000 + b"}")
    assert r.status == 400 and r.json()["code"] == "invalid_json"
    message = r.json()["error"]
    assert "an integer has more than 4,300 digits" in message and "'importance'" in message, message
    assert "sys." not in message
    mcp = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remnic_recall","arguments":{"topK":'
    r = served.call("POST", "/mcp", raw=mcp + b"1" * 4400 + b"}}}")
    assert r.json()["error"]["code"] == -32700 and "more than 4,300 digits" in r.json()["error"]["message"]


# --- 7. feedback's arguments before its memory ---


def test_feedback_without_a_vote_names_the_vote_even_for_an_unknown_memory(served: Env) -> None:
    http = served.call("POST", "/remnic/v1/memories/mem_nope/feedback", {})
    assert http.status == 400 and http.json()["details"][0]["field"] == "vote", http.raw

    async def go() -> None:
        async with http_client(served, served.alice) as client:
            result = await client.call_tool("remnic_memory_feedback", {"memoryId": "x"})
            assert result.is_error
            body = json.loads(text(result))
            assert body["details"][0]["field"] == "vote" and "up or down" in body["error"], body
            bad = await client.call_tool("remnic_memory_feedback", {"memoryId": "x", "vote": "sideways"})
            assert bad.is_error and json.loads(text(bad))["details"][0]["options"] == ["up", "down"]
            missing = await client.call_tool("remnic_memory_feedback", {"memoryId": "x", "vote": "up"})
            assert "no memory with id 'x'" in text(missing)

    run(go)


# --- verification round 2 (D1–D9) ---


def recv_all(sock: socket.socket) -> bytes:
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def test_a_client_still_uploading_an_over_limit_body_reads_its_413_and_a_trickling_one_is_cut_at_the_deadline(
    served: Env,
) -> None:
    """The lingering close after a 413 lasts until the request's deadline (not a fixed second): a client
    that sends its whole body before reading (http.client, requests) gets the 413, not a broken pipe."""
    limit = served.memory.settings.server.max_body_bytes
    length = limit + 20000
    head = post_head(served, "/remnic/v1/memories", length)
    results: dict[str, Any] = {}

    def trickling() -> None:
        """Reads the 413 (and our half-close), then sends a byte now and then: the server swallows them
        until the request's deadline, then closes, and the next byte sent fails."""
        with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
            started = time.monotonic()
            sock.sendall(head + b"a" * 5000)
            response = recv_all(sock)
            while time.monotonic() - started < 5:
                time.sleep(0.05)
                try:
                    sock.sendall(b"a")
                except OSError:
                    break
            results["trickling"] = (response, time.monotonic() - started)

    thread = threading.Thread(target=trickling)
    thread.start()
    with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(head + b"a" * 5000)  # the 413 is out at once: its id scan has its 4 KiB
        rest, pieces = length - 5000, 20
        for i in range(pieces):  # the rest over ~1.3 s, past the second the old lingering close lasted
            time.sleep(1.3 / pieces)
            sock.sendall(b"a" * (rest // pieces + (rest % pieces if i == pieces - 1 else 0)))
        response = recv_all(sock)
        took = time.monotonic() - started
    thread.join()
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 413") and body["code"] == "request_body_too_large", response[:200]
    assert headers["connection"] == "close" and 1.2 < took < DEADLINE_S
    trickled, closed_after = results["trickling"]
    assert trickled.startswith(b"HTTP/1.1 413"), trickled[:200]
    assert DEADLINE_S - 0.1 < closed_after < DEADLINE_S + 0.5  # held no longer than a request may be


SMUGGLED = b'{"content":"SMUGGLED write"}'


def test_a_space_before_a_header_colon_is_400_and_the_body_is_never_run_as_a_request(served: Env) -> None:
    inner = (
        f"POST /remnic/v1/memories HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nAuthorization: Bearer {served.alice}\r\n"
        f"Content-Length: {len(SMUGGLED)}\r\nConnection: close\r\n\r\n"
    ).encode() + SMUGGLED
    outer = (
        f"POST /remnic/v1/recall HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nAuthorization: Bearer {served.alice}\r\n"
        f"Content-Length : {len(inner)}\r\n\r\n"
    ).encode()
    before = commits(served.root)
    response, _ = raw_exchange(served, outer + inner)
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 400"), response[:300]
    assert body["details"][0]["field"] == "Content-Length" and "no whitespace" in body["error"], body
    assert headers["connection"] == "close" and response.count(b"HTTP/1.1 ") == 1
    assert commits(served.root) == before
    assert not any("SMUGGLED" in path.read_text() for path in served.root.rglob("*.md"))


@pytest.mark.parametrize("value", ["3_6", "+36", "0x24", "36 36", "36\x0b"])
def test_a_content_length_that_is_not_digits_is_400(served: Env, value: str) -> None:
    data = b'{"content":"cl probe","dryRun":true}'
    assert len(data) == 36
    request = post_head(served, "/remnic/v1/memories", 0).replace(
        b"Content-Length: 0", f"Content-Length: {value}".encode()
    )
    response, _ = raw_exchange(served, request + data)
    status, headers, body = head_and_body(response)
    assert status.startswith("HTTP/1.1 400") and body["details"][0]["field"] == "Content-Length", response[:300]
    assert "digits only" in body["error"] and headers["connection"] == "close"


def test_a_content_length_with_spaces_around_its_digits_still_works(served: Env) -> None:
    data = b'{"content":"cl probe","dryRun":true}'
    request = post_head(served, "/remnic/v1/memories", 0, "Connection: close")
    response, _ = raw_exchange(served, request.replace(b"Content-Length: 0", b"Content-Length: \t36 ") + data)
    assert response.startswith(b"HTTP/1.1 200"), response[:300]


@pytest.mark.parametrize(
    ("line", "status", "said"),
    [
        (b"GET /remnic/v1/health HTTP/0.9", 505, "HTTP/0.9"),
        (b"POST /remnic/v1/memories HTTP/0.9", 505, "HTTP/0.9"),
        (b"GET HTTP/1.1", 400, "no target"),
    ],
    ids=["explicit-0.9", "explicit-0.9-write", "no-target"],
)
def test_an_explicit_http09_gets_a_status_line_and_a_missing_target_is_400(
    served: Env, line: bytes, status: int, said: str
) -> None:
    before = commits(served.root)
    data = b'{"content":"a 0.9 write"}'
    head = f"\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {served.alice}\r\nContent-Length: {len(data)}\r\n\r\n"
    response, _ = raw_exchange(served, line + head.encode() + data)
    got, headers, body = head_and_body(response)
    assert got.startswith(f"HTTP/1.1 {status} "), response[:200]
    assert said in body["error"] and headers["connection"] == "close" and headers["x-request-id"]
    assert commits(served.root) == before


def test_a_python_dry_run_of_an_exact_duplicate_is_the_existing_memory(env: Env) -> None:
    first = env.memory.store("Releases are cut every Tuesday")
    dry = env.memory.store("Releases are cut every Tuesday", dry_run=True)
    real = env.memory.store("Releases are cut every Tuesday")
    assert (
        (dry.id, dry.record.path, dry.changed)
        == (real.id, real.record.path, real.changed)
        == (
            first.id,
            first.record.path,
            False,
        )
    )
    # A duplicate naming a taken id: the real write returns the existing memory, and so does the dry run.
    dry = env.memory.store("Releases are cut every Tuesday", extra={"id": first.id}, dry_run=True)
    assert dry.id == first.id and dry.record.path == first.record.path


def test_a_dry_run_does_not_use_up_its_idempotency_key(env: Env) -> None:
    before = commits(env.root)
    body = {"content": "idempotent after a dry run", "idempotencyKey": "k-dry"}
    dry = env.call("POST", "/remnic/v1/memories", {**body, "dryRun": True})
    assert dry.status == 200 and dry.json()["status"] == "validated", dry.raw
    real = env.call("POST", "/remnic/v1/memories", body)
    assert real.status == 201 and real.json()["status"] == "stored", real.raw
    assert commits(env.root) == before + 1
    replay = env.call("POST", "/remnic/v1/memories", body)
    assert replay.json()["idempotencyReplay"] is True and replay.json()["memoryId"] == real.json()["memoryId"]
    # A dry run with a key another request took is refused as its real write would be.
    other = env.call("POST", "/remnic/v1/memories", {**body, "content": "something else", "dryRun": True})
    assert other.status == 409 and other.json()["code"] == "idempotency_conflict", other.raw


def test_a_dry_run_refuses_a_repository_that_cannot_take_a_commit_as_the_write_does(env: Env) -> None:
    git(env.root, "checkout", "-q", "--detach")
    answers = []
    for dry in (True, False):
        r = env.call("POST", "/remnic/v1/memories", {"content": "written on a detached HEAD", "dryRun": dry})
        assert r.status == 409 and r.json()["code"] == "detached_head", (dry, r.raw)
        answers.append(r.json()["error"])
        with pytest.raises(RepoBusyError) as info:
            env.memory.store("written on a detached HEAD", dry_run=dry)
        assert "detached" in info.value.message
    assert answers[0] == answers[1]
    cli = run_cli("--memory-dir", str(env.root), "store", "--dry-run", "detached dry")
    assert cli.code != 0 and "detached" in cli.err, (cli.out, cli.err)


def expect_100(env: Env, path: str, length: int, token: str) -> tuple[bytes, float, socket.socket]:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{env.port}", f"Authorization: Bearer {token}"]
    lines += [f"Content-Length: {length}", "Expect: 100-continue"]
    sock = socket.create_connection(("127.0.0.1", env.port), timeout=5)
    started = time.monotonic()
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    first = sock.recv(65536)
    return first, time.monotonic() - started, sock


def test_expect_100_continue_gets_the_final_status_at_once_when_the_body_would_be_refused(env: Env) -> None:
    limit = env.memory.settings.server.max_body_bytes
    first, took, sock = expect_100(env, "/remnic/v1/memories", limit + 1, env.alice)
    with sock:
        response = first + recv_all(sock)
    assert response.startswith(b"HTTP/1.1 413") and b"100 Continue" not in response, response[:200]
    assert took < 0.3  # not after the half second a body is waited for
    first, _, sock = expect_100(env, "/remnic/v1/memories", 30, "not-a-token")
    with sock:
        assert (first + recv_all(sock)).startswith(b"HTTP/1.1 401"), first[:200]
    # A body that will be read is invited, then served.
    data = b'{"content":"sent after a 100 Continue"}'
    first, _, sock = expect_100(env, "/remnic/v1/memories", len(data), env.alice)
    with sock:
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n", first
        sock.sendall(data)
        assert sock.recv(65536).startswith(b"HTTP/1.1 201")


def test_an_empty_line_before_a_request_line_is_skipped(served: Env) -> None:
    data = b'{"content":"crlf test","dryRun":true}'
    one = post_head(served, "/remnic/v1/memories", len(data)) + data
    last = post_head(served, "/remnic/v1/memories", len(data), "Connection: close") + data
    response, _ = raw_exchange(served, one + b"\r\n" + last)
    assert response.count(b"HTTP/1.1 200 OK") == 2, response[:400]


def deep_call(msg_id: int) -> bytes:
    args = b'{"content":"x","tags":' + b"[" * 70 + b"]" * 70 + b"}"
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remnic_memory_store","arguments":%s}}' % (
        msg_id,
        args,
    )


def long_int_call(msg_id: int) -> bytes:
    # The id after params, as some clients write it: the whole refused line is scanned for it.
    args = b'{"content":"x","importance":' + b"9" * 5000 + b"}"
    return b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"remnic_memory_store","arguments":%s},"id":%d}' % (
        args,
        msg_id,
    )


def test_a_too_deep_or_long_integer_mcp_request_is_answered_with_its_id(served: Env) -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
        deep_call(2),
        long_int_call(3),
        b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":}}',  # not JSON, but its id is plain
        b'{"jsonrpc":"2.0","method":"ping","id":5,"id":6,"params":[' + b"[" * 70 + b"]" * 70 + b"]}",  # two ids
        b'{"jsonrpc":"2.0","id":7,"method":"ping"}',
    ]
    out = io.BytesIO()
    run_stdio(
        McpServer(Api(served.memory)),
        "alice",
        max_message_bytes=1 << 20,
        stdin=io.BytesIO(b"\n".join(lines) + b"\n"),
        stdout=out,
    )
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3, 4, None, 7], replies
    for reply, said in zip(replies[1:5], ("deeper than 64", "4,300 digits", "not valid JSON", "deeper than 64")):
        assert reply["error"]["code"] == -32700 and said in reply["error"]["message"], reply
    # Over HTTP the same request's error carries its id too.
    r = served.call("POST", "/mcp", raw=deep_call(9))
    assert r.status == 400 and r.json()["id"] == 9 and r.json()["error"]["code"] == -32700


@pytest.fixture
def quick_idle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, server={"request_timeout_s": DEADLINE_S, "keep_alive_timeout_s": 0.4})


def test_an_empty_line_after_a_response_leaves_the_connection_idle_not_timed_out(quick_idle: Env) -> None:
    """A stray CRLF starts no request: the keep-alive timeout closes the connection silently, no 408."""
    data = b'{"content":"crlf then idle","dryRun":true}'
    response, took = raw_exchange(quick_idle, post_head(quick_idle, "/remnic/v1/memories", len(data)) + data + b"\r\n")
    assert response.count(b"HTTP/1.1 ") == 1 and response.startswith(b"HTTP/1.1 200"), response[-300:]
    assert took < DEADLINE_S - 0.3


def test_a_multipart_content_type_is_not_a_framing_error(env: Env) -> None:
    body = json.dumps({"content": "Multipart clients still get an answer"}).encode()
    extra = ("Content-Type: multipart/form-data; boundary=x", "Connection: close")
    status, _, answer = head_and_body(
        raw_exchange(env, post_head(env, "/remnic/v1/memories", len(body), *extra) + body)[0]
    )
    assert status.split()[1] == "201", (status, answer)  # the body is JSON: stored, as before


def test_a_lingering_close_ends_within_linger_max_s_whatever_the_request_deadline() -> None:
    from remnic.server.transport import LINGER_MAX_S, DeadlineReader

    a, b = socket.socketpair()
    with a, b:
        reader = DeadlineReader(a, request_s=30.0, idle_s=5.0)
        reader.started = time.monotonic()
        reader.linger(1.0)
        left = reader.deadline - time.monotonic()
        assert 0.9 < left <= LINGER_MAX_S < 30.0  # a stalled uploader gives its slot back in seconds
        reader.started = time.monotonic() - 29.9  # the request's own deadline nearly spent: the grace holds
        reader.linger(1.0)
        assert 0.9 < reader.deadline - time.monotonic() <= 1.0
