"""A real `remnic serve` on 127.0.0.1 against slow, idle, flooding, vanishing and misdirected clients.

The server runs with small limits (2 s request deadline, 0.5 s keep-alive, 8 connections) so
every case takes seconds; its stderr goes to a file the tests read for tracebacks.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_cli

TOKEN = "rmn_faults_0123456789abcdef"
DEADLINE_S = 2.0
KEEP_ALIVE_S = 0.5
CAP = 8


@dataclass
class Served:
    pid: int
    port: int
    log: Path

    def threads(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
        raise AssertionError("no Threads line")

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def get(self, path: str = "/engram/v1/health", *, host: str | None = None, token: str | None = TOKEN) -> tuple:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            if host is not None:
                conn.putrequest("GET", path, skip_host=True)
                conn.putheader("Host", host)
                for key, value in headers.items():
                    conn.putheader(key, value)
                conn.endheaders()
            else:
                conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("faults")
    root = base / "mem"
    config = base / "config.json"
    config.write_text(
        json.dumps(
            {
                "server": {
                    "requestTimeoutS": DEADLINE_S,
                    "keepAliveTimeoutS": KEEP_ALIVE_S,
                    "maxConnections": CAP,
                }
            }
        )
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("REMNIC_")},
        "HOME": str(base),
        "REMNIC_TOKENS_PATH": str(base / "tokens.json"),
        "REMNIC_CONFIG_PATH": str(config),
        "REMNIC_TOKEN": TOKEN,
        "XDG_CACHE_HOME": str(model_cache),  # the run's one model cache (the test's environment is not set yet)
    }
    with pytest.MonkeyPatch.context() as mp:  # set-up in this process; the server below is a real one
        for key, value in env.items():
            mp.setenv(key, value)
        assert run_cli("init", str(root)).code == 0
    log = base / "server.stderr"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "remnic", "serve", "--memory-dir", str(root), "--port", "0", "--json"],
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        yield Served(proc.pid, info["port"], log)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _read_until_closed(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes (or resets) the connection, within ``timeout``."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def test_one_byte_per_second_client_is_cut_at_the_request_deadline(served: Served) -> None:
    request = f"GET /engram/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        started = time.monotonic()
        reply = b""
        for byte in request:
            sock.send(bytes([byte]))
            ready, _, _ = select.select([sock], [], [], 1.0)  # one byte a second, unless the server speaks
            if ready:
                reply = _read_until_closed(sock, 5)
                break
        elapsed = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]
    body = json.loads(reply.split(b"\r\n\r\n", 1)[1])
    assert body["code"] == "request_timeout" and "server.requestTimeoutS" in body["error"]
    assert DEADLINE_S - 0.2 <= elapsed <= DEADLINE_S + 1.5  # the whole request, not per read (that never fires)


def test_idle_keep_alive_connection_is_closed(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(
            f"GET /engram/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
        )
        sock.settimeout(10)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        rest = _read_until_closed(sock, 10)  # then nothing: the server closes the idle connection
        elapsed = time.monotonic() - started
    assert rest == b"" or b"Content-Length" not in rest
    assert KEEP_ALIVE_S - 0.2 <= elapsed <= KEEP_ALIVE_S + 1.5


def test_connection_flood_is_refused_beyond_the_cap_with_bounded_threads(served: Served) -> None:
    assert served.get()[0] == 200  # warm: the worker pool has started
    baseline = served.threads()
    partial = f"GET /engram/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n".encode()  # never finished
    flood: list[socket.socket] = []
    peak = baseline
    try:
        for _ in range(200):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            sock.sendall(partial)
            flood.append(sock)
            if len(flood) % 20 == 0:
                peak = max(peak, served.threads())
        status, headers, body = served.get()  # a well-formed request beyond the cap: refused, clearly
        assert status == 503 and headers["retry-after"] == "1"
        assert json.loads(body)["code"] == "server_busy" and "server.maxConnections" in json.loads(body)["error"]
        peak = max(peak, served.threads())
        replies = [_read_until_closed(sock, DEADLINE_S + 3) for sock in flood]
    finally:
        for sock in flood:
            sock.close()
    refused = [r for r in replies if r.startswith(b"HTTP/1.1 503 ")]
    cut = [r for r in replies if r.startswith(b"HTTP/1.1 408 ")]
    assert len(refused) >= 200 - CAP and len(refused) + len(cut) == 200
    assert json.loads(refused[0].split(b"\r\n\r\n", 1)[1])["code"] == "server_busy"
    assert peak <= baseline + CAP, (baseline, peak)  # threads bounded by the cap, never one per connection
    assert served.get()[0] == 200  # the slow ones were cut at their deadline; normal service resumes


def test_client_vanishing_mid_response_leaves_no_traceback(served: Served) -> None:
    body = json.dumps({"query": "what do we deploy on tuesdays", "topK": 5}).encode()
    request = (
        f"POST /engram/v1/recall HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    for i in range(20):
        sock = socket.create_connection(("127.0.0.1", served.port))
        # Half the clients vanish before the body is complete, half after sending the request.
        sock.sendall(request if i % 2 else request[:-5])
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, not FIN
        sock.close()
    deadline = time.monotonic() + 15
    settled, size = 0, -1
    while time.monotonic() < deadline and not ("client went away" in served.stderr() and settled >= 5):
        now = len(served.stderr())
        settled, size = (settled + 1 if now == size else 0), now  # the log stopped growing: all were handled
        time.sleep(0.05)
    assert served.get()[0] == 200
    log = served.stderr()
    assert "client went away" in log  # the disconnects happened, and were noticed
    assert "Traceback" not in log and "BrokenPipe" not in log and "ConnectionReset" not in log


def test_host_header_naming_another_server_is_refused(served: Served) -> None:
    port = served.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
        assert served.get(host=host)[0] == 200, host
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", "127.0.0.1", f"127.0.0.2:{port}"):
        status, _, raw = served.get(host=host, token=None)  # refused before auth: nothing about tokens leaks
        assert status == 421, (host, raw)
        error = json.loads(raw)
        assert error["code"] == "host_not_allowed"
        assert f"localhost:{port}" in error["error"] and "server.allowedHosts" in error["error"]


def test_no_tracebacks_in_the_server_log(served: Served) -> None:
    assert "Traceback" not in served.stderr()
