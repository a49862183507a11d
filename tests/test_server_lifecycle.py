"""Starting, finding and stopping servers: bind failures, copied or deleted pid files, CLI sockets.

Real `remnic serve` / `remnic daemon` processes on 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_remnic


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "tokens.json"))
    root = tmp_path / "mem"
    assert run_remnic("init", str(root)).code == 0
    assert run_remnic("token", "generate", "--principal", "ops").code == 0
    return root


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _daemon(root: Path) -> Iterator[dict]:
    started = run_remnic("daemon", "start", "--memory-dir", str(root), "--port", "0", "--json", timeout=60)
    assert started.code == 0, started.err
    info = started.json()
    try:
        yield info
    finally:
        if run_remnic("daemon", "stop", "--memory-dir", str(root)).code != 0 or _alive(info["pid"]):
            os.kill(info["pid"], signal.SIGKILL)  # never leave a server behind


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


# --- a port or host that cannot be bound ---


def test_serve_on_a_busy_port_is_a_plain_error(repo: Path, busy_port: int) -> None:
    r = run_remnic("serve", "--memory-dir", str(repo), "--port", str(busy_port), timeout=60)
    assert r.code == 1, r.err
    assert f"port {busy_port} on 127.0.0.1 is in use" in r.err
    assert "Traceback" not in r.err and "_tending" not in r.err


def test_serve_on_a_host_that_does_not_exist_is_a_plain_error(repo: Path) -> None:
    r = run_remnic("serve", "--memory-dir", str(repo), "--host", "999.1.1.1", "--port", "0", timeout=60)
    assert r.code == 1 and "cannot bind 999.1.1.1:0" in r.err and "Traceback" not in r.err


def test_daemon_start_on_a_busy_port_reports_why(repo: Path, busy_port: int) -> None:
    r = run_remnic("daemon", "start", "--memory-dir", str(repo), "--port", str(busy_port), timeout=60)
    assert r.code == 1 and "Traceback" not in r.err
    assert f"the server did not start: port {busy_port} on 127.0.0.1 is in use" in r.err
    assert run_remnic("daemon", "status", "--memory-dir", str(repo)).code == 3


# --- whose server a pid file names ---


def test_a_copied_repository_does_not_claim_the_originals_server(repo: Path, tmp_path: Path) -> None:
    for info in _daemon(repo):
        copy = tmp_path / "copy"
        subprocess.run(["cp", "-a", str(repo), str(copy)], check=True)  # .remnic/server.pid comes along
        status = run_remnic("daemon", "status", "--memory-dir", str(copy), "--json")
        assert status.code == 3 and status.json()["running"] is False
        assert status.json()["otherServer"]["pid"] == info["pid"]
        assert "not for this directory" in run_remnic("daemon", "status", "--memory-dir", str(copy)).out
        stop = run_remnic("daemon", "stop", "--memory-dir", str(copy))
        assert "not stopping it" in stop.out
        time.sleep(0.2)
        assert _alive(info["pid"])  # the original's server was not signalled
        assert run_remnic("daemon", "status", "--memory-dir", str(repo)).code == 0
        for other in _daemon(copy):  # the copy starts a server of its own
            assert other["pid"] != info["pid"]
            assert run_remnic("daemon", "status", "--memory-dir", str(repo), "--json").json()["pid"] == info["pid"]


def test_a_server_writes_its_pid_file_again_after_rm_rf_state(repo: Path) -> None:
    for info in _daemon(repo):
        since = run_remnic("daemon", "status", "--memory-dir", str(repo), "--json").json()["started"]
        shutil.rmtree(repo / ".remnic")
        deadline = time.monotonic() + 10
        while not (repo / ".remnic" / "server.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        status = run_remnic("daemon", "status", "--memory-dir", str(repo), "--json")
        assert status.code == 0 and status.json()["pid"] == info["pid"]
        assert status.json()["started"] == since
        again = run_remnic("daemon", "start", "--memory-dir", str(repo), "--port", "0")
        assert again.code == 1 and "already running" in again.err
        deadline = time.monotonic() + 10
        while not (repo / ".remnic" / "cli" / "cli.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (repo / ".remnic" / "cli" / "cli.sock").is_socket()


def test_a_server_removes_only_its_own_cli_socket(tmp_path: Path) -> None:
    """A second server bound the socket path after the first one's file went (`rm -rf .remnic`): the
    first one's exit leaves the second one's socket in place, and it never re-binds over it."""
    from types import SimpleNamespace

    from remnic.cli.fastpath import CliServer

    memory = SimpleNamespace(root=tmp_path / "mem")
    first = CliServer(memory, None, lambda _args: 0)
    second = CliServer(memory, None, lambda _args: 0)
    path = Path(first.start())
    path.unlink()
    assert second.start() == str(path)
    inode = path.stat().st_ino
    assert first.relisten() is False  # the path is someone's: not taken back
    first.close()
    assert path.is_socket() and path.stat().st_ino == inode
    second.close()
    assert not path.exists()


# --- a hung server ---


def test_a_stopped_server_does_not_hold_up_the_cli_or_look_reachable(repo: Path) -> None:
    for info in _daemon(repo):
        assert run_remnic("store", "--memory-dir", str(repo), "Ana prefers tabs").code == 0  # through the server
        os.kill(info["pid"], signal.SIGSTOP)
        try:
            started = time.monotonic()
            # A dry run, as the query in-process could wait out the index lock the stopped server holds.
            r = run_remnic("store", "--dry-run", "--memory-dir", str(repo), "Bob prefers spaces", timeout=120)
            assert r.code == 0 and "facts/bob-prefers-spaces.md" in r.out, r.err
            assert "did not answer within 3s" in r.err and time.monotonic() - started < 30
            status = run_remnic("daemon", "status", "--memory-dir", str(repo), "--json", timeout=60)
            assert status.json()["running"] is True and status.json()["reachable"] is False
        finally:
            os.kill(info["pid"], signal.SIGCONT)
        assert run_remnic("daemon", "status", "--memory-dir", str(repo), "--json").json()["reachable"] is True


# --- the tokens file ---


def test_token_generate_refuses_a_tokens_path_inside_any_memory_repository(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert run_remnic("init", str(other)).code == 0
    inside = other / "notes" / "tokens.json"
    r = run_remnic(
        "token", "generate", "--memory-dir", str(repo), "--principal", "x", env={"REMNIC_TOKENS_PATH": str(inside)}
    )
    assert r.code == 2 and f"inside the memory repository {other}" in r.err
    assert not inside.exists()
    assert run_remnic("token", "list", "--memory-dir", str(repo)).code == 0  # outside any repository: fine
