"""The server as a long-running process: a graceful stop on signals, a memory directory deleted or made
read-only under it, and consolidation that says what it did. Real servers on 127.0.0.1, real signals."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.server import Api, Authenticator, TokenStore, create_server
from remnic.server.errors import MemoryDirGoneError, ReadOnlyError
from remnic.service.consolidate import last_run
from remnic.service.memory import Memory

TOKEN = "rmn_lifecycle_0123456789"
TURN = {"sessionKey": "s", "messages": [{"role": "user", "content": "I prefer tea over coffee."}]}


def init(root: Path) -> None:
    assert run_cli("init", str(root)).code == 0  # set-up, in this process


@contextlib.contextmanager
def serve(root: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    env = {**os.environ, "REMNIC_TOKEN": TOKEN, "REMNIC_TOKENS_PATH": str(tmp_path / "none.json")}
    cmd = [sys.executable, "-m", "remnic", "serve", "--memory-dir", str(root), "--port", "0", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read().decode() if proc.stderr else ""
        yield proc, int(json.loads(line)["port"])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def raw_request(port: int, method: str, path: str, body: bytes) -> socket.socket:
    """A request whose headers and first half of the body are sent: in flight until the rest comes."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock.sendall(head + body[: len(body) // 2])
    return sock


def wait_read(sock: socket.socket) -> None:
    """Until the server has read all that was sent on ``sock`` (its end's receive queue in /proc/net/tcp
    is empty): it took the request and is reading the body, so the request is in progress."""
    client, server = sock.getsockname()[1], sock.getpeername()[1]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, queued = (int(fields[i].rsplit(":", 1)[1], 16) for i in (1, 2, 4))
            if (local, remote, queued) == (server, client, 0):
                return
        time.sleep(0.02)
    pytest.fail("the server did not read the request within 30 s")


def wait_refused(port: int) -> None:
    """Until the server refuses new connections: its stop began (it closed the listening socket)."""
    deadline = time.monotonic() + 15  # the signal is handled within the poll interval; a loaded machine is slower
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.02)
    pytest.fail("the server still accepts connections 15 s after the signal")


def read_response(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection without a response: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")))
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk
        rest += chunk
    return int(head.split()[1]), json.loads(rest[:length])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_lets_the_request_in_flight_finish_and_leaves_git_clean(tmp_path: Path, signum: int) -> None:
    root = tmp_path / "mem"
    init(root)
    with serve(root, tmp_path) as (proc, port):
        body = json.dumps({"content": "We deploy on Tuesdays after the stand-up.", "category": "decision"}).encode()
        sock = raw_request(port, "POST", "/remnic/v1/memories", body)
        wait_read(sock)  # the server is reading the body: the request is in progress
        proc.send_signal(signum)
        wait_refused(port)  # no new connections once the stop began
        assert proc.poll() is None, "the server exited with a request still in progress"
        sock.sendall(body[len(body) // 2 :])
        status, reply = read_response(sock)
        sock.close()
        assert status == 201, reply
        assert proc.wait(timeout=20) == 0
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (root / ".git" / "index.lock").exists()
    assert not list((root / ".remnic").glob("txn/*"))
    assert "Tuesdays" in git(root, "log", "-1", "-p")
    assert not (root / ".remnic" / "server.pid").exists()


def test_deleting_the_memory_directory_stops_the_server_without_a_ghost(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    init(root)
    with serve(root, tmp_path) as (proc, _port):
        shutil.rmtree(root)
        assert proc.wait(timeout=20) is not None
        err = proc.stderr.read().decode() if proc.stderr else ""
    # rmtree is not atomic: the server may notice while .git is gone and the folder not yet ("has no .git any more").
    assert f"memory directory {root} " in err and "(deleted or moved): stopping the server" in err, err
    assert "Traceback" not in err
    # Nothing of the deleted repository is made again (the CLI socket folder is cli/fastpath.py's).
    for rel in (".remnic/server.pid", ".remnic/write.lock", "state", ".remnic/scan-memo.sqlite"):
        assert not (root / rel).exists(), rel


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "secrets" / "tokens.json"))
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    yield Api(memory)
    memory.close()


def test_a_deleted_directory_refuses_writes_naming_it_and_health_says_not_ok(api: Api) -> None:
    root = api.memory.root
    shutil.rmtree(root)
    with pytest.raises(MemoryDirGoneError) as caught:
        api.call("observe", "alice", TURN)
    assert caught.value.code == "memory_dir_missing" and caught.value.http_status == 503
    assert str(root) in caught.value.message and "not a git repository" not in caught.value.message
    with pytest.raises(MemoryDirGoneError):
        api.call("memory_store", "alice", {"content": "x y z"})
    health = api.call("health", "alice", {})
    assert health.status == 503 and health.body["ok"] is False and str(root) in health.body["error"]
    assert not root.exists()  # neither refusal made the directory again


def test_deleted_during_start_up_is_one_line_not_a_traceback(api: Api, tmp_path: Path) -> None:
    shutil.rmtree(api.memory.root)
    store = TokenStore()
    store.generate("alice")
    with pytest.raises(MemoryDirGoneError, match="deleted or moved"):
        create_server(api, Authenticator(store), host="127.0.0.1", port=0)


@contextlib.contextmanager
def read_only(root: Path) -> Iterator[None]:
    """The directory made read-only for real: a read-only bind mount as root, permissions otherwise."""
    if os.geteuid() == 0:
        if shutil.which("mount") is None:
            pytest.skip("no mount(8) to make a read-only bind mount")
        first = subprocess.run(["mount", "--bind", str(root), str(root)], capture_output=True)
        if first.returncode != 0:
            pytest.skip(f"cannot bind-mount here: {first.stderr.decode().strip()}")
        try:
            for _ in range(50):  # "busy" while a file under the new mount is open for writing
                ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(root)], capture_output=True, text=True)
                if ro.returncode == 0:
                    break
                time.sleep(0.1)
            assert ro.returncode == 0, ro.stderr
            yield
        finally:
            subprocess.run(["umount", "-l", str(root)], check=True, capture_output=True)  # -l: the index stays open
        return
    dirs = [root, *(p for p in root.rglob("*") if p.is_dir() and ".git" not in p.parts)]
    for d in dirs:
        d.chmod(0o555)
    try:
        yield
    finally:
        for d in dirs:
            d.chmod(0o755)


def test_a_read_only_directory_refuses_observe_and_store_with_read_only(api: Api) -> None:
    api.call("memory_store", "alice", {"content": "We use tabs for indentation in this project."})  # index made
    api.memory.settle_index()
    with read_only(api.memory.root):
        for op, args in (("observe", TURN), ("memory_store", {"content": "x y z"})):
            with pytest.raises(ReadOnlyError) as caught:
                api.call(op, "alice", args)
            assert caught.value.code == "read_only" and caught.value.http_status == 503, op
            assert f"memory directory {api.memory.root} is read-only" in caught.value.message
            assert "\n" not in caught.value.message
    assert api.call("memory_store", "alice", {"content": "Writable again: the release is on Friday."}).status == 201


def test_each_consolidation_pass_is_logged_told_and_noted(memory: Memory, caplog: pytest.LogCaptureFixture) -> None:
    memory.background_work = True
    told: list[Any] = []
    memory.on_consolidated = told.append
    with caplog.at_level(logging.INFO, logger="remnic"):
        memory.schedule_consolidation()
        deadline = time.monotonic() + 30
        while not told and time.monotonic() < deadline:
            time.sleep(0.05)
    assert told and told[0].merged == []
    assert any("consolidation: merged nothing" in r.getMessage() for r in caplog.records)
    note = last_run(memory.settings.state_dir)
    assert note is not None and note["merged"] == 0 and note["at"]


def test_a_stop_lets_a_cli_command_the_server_took_finish(tmp_path: Path) -> None:
    """`remnic store` through the server's socket: the client never runs a command the server took, so a
    stop must let it finish and answer, not cut it (exit 1, the write left uncommitted)."""
    root = tmp_path / "mem"
    init(root)
    with serve(root, tmp_path) as (proc, port):
        lock = root / ".git" / "index.lock"
        lock.write_text("")  # the store waits for git's index: in progress when the stop comes
        env = {k: v for k, v in os.environ.items() if k != "REMNIC_TOKEN"}
        env["REMNIC_TOKENS_PATH"] = str(tmp_path / "none.json")
        cmd = [sys.executable, "-m", "remnic", "store", "Backups run at 02:00 UTC", "--memory-dir", str(root)]
        client = subprocess.Popen([*cmd, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 20
        while not any(root.rglob("*backups-run*.md")) and time.monotonic() < deadline:
            time.sleep(0.05)  # the file is written before the commit waits for the lock
        assert any(root.rglob("*backups-run*.md")), "the server never took the command"
        proc.send_signal(signal.SIGTERM)
        wait_refused(port)  # the stop is under way while the command waits for the lock
        lock.unlink()
        out, err = client.communicate(timeout=30)
        assert client.returncode == 0, err.decode()
        reply = json.loads(out)
        assert proc.wait(timeout=20) == 0
    assert reply["commit"] == git(root, "rev-parse", "HEAD").strip()
    assert "Backups run" in git(root, "log", "-1", "-p")
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert b"cli: store exit 0" in (proc.stderr.read() if proc.stderr else b"")
