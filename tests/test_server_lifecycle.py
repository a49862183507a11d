"""Starting, finding and stopping servers: bind failures, copied or deleted pid files, CLI sockets.

Real `remnic serve` / `remnic daemon` processes on 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Result, kill_server, run_cli, run_remnic


@dataclass
class Repo:
    root: Path
    env: dict[str, str]
    """HOME and REMNIC_TOKENS_PATH for its commands and servers (a module's fixtures outlive a test's HOME)."""


def _make_repo(base: Path, model_cache: Path) -> Repo:
    (base / "home").mkdir()
    env = {"HOME": str(base / "home"), "REMNIC_TOKENS_PATH": str(base / "tokens.json")}
    # The run's one model cache: a module's fixture is set up before the test's environment has it.
    env["XDG_CACHE_HOME"] = str(model_cache)
    repo = Repo(base / "mem", env)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in repo.env.items():
            mp.setenv(key, value)
        # Set-up in this process (the same commands, no interpreter start each); what is tested runs as a subprocess.
        assert run_cli("init", str(repo.root)).code == 0
        assert run_cli("token", "generate", "--principal", "ops").code == 0
    return repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Repo:
    """A repository with a token and no server: the tests using it fail to start one, or never try."""
    return _make_repo(tmp_path_factory.mktemp("idle"), model_cache)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[tuple[Repo, dict]]:
    """One daemon for the tests that need a running server: each leaves it running and answering."""
    repo = _make_repo(tmp_path_factory.mktemp("served"), model_cache)
    for info in _daemon(repo):
        yield repo, info


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _daemon(repo: Repo) -> Iterator[dict]:
    with pytest.MonkeyPatch.context() as mp:
        for key, value in repo.env.items():
            mp.setenv(key, value)
        # `daemon start` in this process (the same command); the server it launches is a real process.
        started = run_cli("daemon", "start", "--memory-dir", str(repo.root), "--port", "0", "--json")
    assert started.code == 0, started.err
    info = started.json()
    try:
        yield info
    finally:
        if run_cli("daemon", "stop", "--memory-dir", str(repo.root)).code != 0 or _alive(info["pid"]):
            kill_server(info["pid"])  # never leave a server behind


def _status(root: Path) -> Result:
    """`remnic daemon status` run in this process: it only reads the pid file and asks the server's livez."""
    return run_cli("daemon", "status", "--memory-dir", str(root), "--json")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


# --- a port or host that cannot be bound ---


def test_serve_on_a_busy_port_is_a_plain_error(repo: Repo, busy_port: int) -> None:
    r = run_remnic("serve", "--memory-dir", str(repo.root), "--port", str(busy_port), env=repo.env, timeout=60)
    assert r.code == 1, r.err
    assert f"port {busy_port} on 127.0.0.1 is in use" in r.err
    assert "Traceback" not in r.err and "_tending" not in r.err


def test_serve_on_a_host_that_does_not_exist_is_a_plain_error(repo: Repo) -> None:
    r = run_remnic("serve", "--memory-dir", str(repo.root), "--host", "999.1.1.1", "--port", "0", env=repo.env)
    assert r.code == 1 and "cannot bind 999.1.1.1:0" in r.err and "Traceback" not in r.err


def test_daemon_start_on_a_busy_port_reports_why(repo: Repo, busy_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in repo.env.items():
        monkeypatch.setenv(key, value)
    # `daemon start` in this process; the server it launches (and that fails to bind) is a real process.
    r = run_cli("daemon", "start", "--memory-dir", str(repo.root), "--port", str(busy_port))
    assert r.code == 1 and "Traceback" not in r.err
    assert f"the server did not start: port {busy_port} on 127.0.0.1 is in use" in r.err
    assert run_cli("daemon", "status", "--memory-dir", str(repo.root)).code == 3


# --- the tokens file ---


def test_token_generate_refuses_a_tokens_path_inside_any_memory_repository(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    assert run_cli("init", str(other)).code == 0
    inside = other / "notes" / "tokens.json"
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(inside))
    r = run_cli("token", "generate", "--memory-dir", str(repo.root), "--principal", "x")
    assert r.code == 2 and f"inside the memory repository {other}" in r.err
    assert not inside.exists()
    monkeypatch.setenv("REMNIC_TOKENS_PATH", repo.env["REMNIC_TOKENS_PATH"])
    assert run_cli("token", "list", "--memory-dir", str(repo.root)).code == 0  # outside any repository: fine


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


# --- one running server (the module's): whose server a pid file names, a hung server, rm -rf of its state ---


def test_a_copied_repository_does_not_claim_the_originals_server(served: tuple[Repo, dict], tmp_path: Path) -> None:
    repo, info = served
    copy = Repo(tmp_path / "copy", repo.env)
    subprocess.run(["cp", "-a", str(repo.root), str(copy.root)], check=True)  # .remnic/server.pid comes along
    status = _status(copy.root)
    assert status.code == 3 and status.json()["running"] is False
    assert status.json()["otherServer"]["pid"] == info["pid"]
    assert "not for this directory" in run_cli("daemon", "status", "--memory-dir", str(copy.root)).out
    stop = run_cli("daemon", "stop", "--memory-dir", str(copy.root))
    assert "not stopping it" in stop.out
    time.sleep(0.2)
    assert _alive(info["pid"])  # the original's server was not signalled
    assert _status(repo.root).code == 0 and _status(repo.root).json()["reachable"] is True
    for other in _daemon(copy):  # the copy starts a server of its own
        assert other["pid"] != info["pid"]
        assert _status(repo.root).json()["pid"] == info["pid"]


def test_a_stopped_server_does_not_hold_up_the_cli_or_look_reachable(served: tuple[Repo, dict]) -> None:
    repo, info = served
    stored = run_remnic("store", "--memory-dir", str(repo.root), "Ana prefers tabs", env=repo.env)
    assert stored.code == 0, stored.err  # through the server
    os.kill(info["pid"], signal.SIGSTOP)
    try:
        started = time.monotonic()
        # A dry run, as the query in-process could wait out the index lock the stopped server holds.
        argv = [
            sys.executable,
            "-m",
            "remnic",
            "store",
            "--dry-run",
            "--memory-dir",
            str(repo.root),
            "Bob prefers spaces",
        ]
        dry = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **repo.env}
        )
        # While it waits for the hung server, `daemon status` waits for its livez: the two waits overlap.
        status = _status(repo.root)
        out, err = dry.communicate(timeout=120)
        assert dry.returncode == 0 and "facts/bob-prefers-spaces.md" in out, err
        assert "did not answer within 3s" in err and time.monotonic() - started < 30
        assert status.json()["running"] is True and status.json()["reachable"] is False
    finally:
        os.kill(info["pid"], signal.SIGCONT)
    assert _status(repo.root).json()["reachable"] is True


def test_a_server_writes_its_pid_file_again_after_rm_rf_state(served: tuple[Repo, dict]) -> None:
    """Last of the module's server tests: its state folder is deleted under it."""
    repo, info = served
    root = repo.root
    since = _status(root).json()["started"]
    for _ in range(20):  # `rm -rf` races the running server writing its own files there: try again, as a person would
        try:
            shutil.rmtree(root / ".remnic")
            break
        except OSError:
            time.sleep(0.05)
    else:
        raise AssertionError("could not delete .remnic under the running server")
    deadline = time.monotonic() + 10
    while not (root / ".remnic" / "server.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    status = _status(root)
    assert status.code == 0 and status.json()["pid"] == info["pid"]
    assert status.json()["started"] == since
    again = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0")
    assert again.code == 1 and "already running" in again.err
    deadline = time.monotonic() + 10
    while not (root / ".remnic" / "cli" / "cli.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (root / ".remnic" / "cli" / "cli.sock").is_socket()
