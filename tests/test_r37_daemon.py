"""A server that runs for a long time: config edits, upgrades, a second server, a deleted log.

Real `remnic daemon` processes on 127.0.0.1 (port 0), real config files, real `python -m remnic` clients.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import Result, kill_server, run_cli, run_remnic

import remnic
from remnic.server.auth import TokenStore


@dataclass
class Served:
    root: Path
    home: Path
    env: dict[str, str]
    url: str
    pid: int
    alice: str
    bob: str


def _make(base: Path, model_cache: Path | None = None) -> tuple[Path, dict[str, str], str, str]:
    home = base / "home"
    home.mkdir()
    env = {"HOME": str(home), "REMNIC_TOKENS_PATH": str(base / "tokens.json")}
    if model_cache is not None:  # a module's fixture is set up before the test's environment names the cache
        env["XDG_CACHE_HOME"] = str(model_cache)
    for var in [k for k in os.environ if k.startswith("REMNIC_") and k not in env]:
        env[var] = ""  # the developer's own REMNIC_* stay out of these servers and commands
    root = base / "mem"
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        assert run_cli("init", str(root)).code == 0
    store = TokenStore(base / "tokens.json")
    return root, env, store.generate("alice")[0], store.generate("bob")[0]


def _daemon(env: dict[str, str], *args: str) -> Result:
    """A `remnic daemon` command in this process, under ``env`` (the same code as `python -m remnic`): it
    reads the pid file, signals the server or launches a real one, which gets ``env`` too."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        return run_cli("daemon", *args)


def _start(root: Path, env: dict[str, str], *extra: str) -> dict[str, Any]:
    started = _daemon(env, "start", "--memory-dir", str(root), "--port", "0", "--json", *extra)
    assert started.code == 0, started.err
    return started.json()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[Served]:
    root, env, alice, bob = _make(tmp_path_factory.mktemp("r37daemon"), model_cache)
    info = _start(root, env)
    try:
        yield Served(root, Path(env["HOME"]), env, info["url"], info["pid"], alice, bob)
    finally:
        _daemon(env, "stop", "--memory-dir", str(root))
        kill_server(info["pid"])


def _http(url: str, token: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def _log_mark(root: Path) -> int:
    return (root / ".remnic" / "server.log").stat().st_size


def _cli_lines(root: Path, mark: int) -> list[str]:
    with open(root / ".remnic" / "server.log", "rb") as f:
        f.seek(mark)
        return [line for line in f.read().decode().splitlines() if " cli: " in line]


def _poll(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


# --- config edited while the server runs ---


def test_a_namespace_policy_added_while_the_server_runs_applies_at_once(served: Served) -> None:
    api = served.url + "/engram/v1"
    config = served.home / ".config" / "remnic" / "config.json"
    assert _http(api + "/memories", served.bob, "POST", {"content": "Bob note one", "namespace": "secret"})[0] == 201
    policy = {"secret": {"readPrincipals": ["alice"], "writePrincipals": ["alice"]}}
    _write_json(config, {"namespaces": {"enabled": True, "default": "default", "policies": policy}})
    try:
        status, body = _http(api + "/memories", served.bob, "POST", {"content": "Bob note two", "namespace": "secret"})
        assert (status, body["code"]) == (403, "namespace_forbidden")
        status, body = _http(api + "/recall", served.bob, "POST", {"query": "note", "namespace": "secret"})
        assert (status, body["code"]) == (403, "namespace_forbidden")
        assert (
            _http(api + "/memories", served.alice, "POST", {"content": "Alice plan", "namespace": "secret"})[0] == 201
        )
        health = _http(api + "/health", served.alice)[1]
        assert health["namespacesEnabled"] is True and health["configStale"] is False
    finally:
        config.unlink()
    assert _http(api + "/health", served.alice)[1]["namespacesEnabled"] is False


def test_a_shared_config_change_applies_to_http_and_the_cli_alike(served: Served) -> None:
    api = served.url + "/engram/v1"
    for text in ("Deploys run on Tuesdays", "Deploys need a green build", "Deploys are frozen in December"):
        assert _http(api + "/memories", served.alice, "POST", {"content": text})[0] == 201
    shared = served.root / "remnic.config.json"
    _write_json(shared, {"recall": {"topK": 2}, "server": {"writeRateLimit": 1}})
    try:
        status, body = _http(api + "/recall", served.alice, "POST", {"query": "deploys"})
        assert status == 200 and len(body["results"]) == 2
        carol = TokenStore(Path(served.env["REMNIC_TOKENS_PATH"])).generate("carol")[0]  # no writes yet
        assert _http(api + "/memories", carol, "POST", {"content": "Carol writes once"})[0] == 201
        assert _http(api + "/memories", carol, "POST", {"content": "Carol writes twice"})[0] == 429
        mark = _log_mark(served.root)
        query = run_remnic("query", "deploys", "--json", "--memory-dir", str(served.root), env=served.env)
        assert query.code == 0, query.err
        assert len(json.loads(query.out)["hits"]) == 2
        assert "note:" not in query.err
        assert [line.split("cli: ")[1].split(" ")[0] for line in _cli_lines(served.root, mark)] == ["query"]
    finally:
        shared.unlink()


def test_a_setting_that_needs_a_restart_is_reported_and_the_cli_says_why_it_runs_alone(served: Served) -> None:
    api = served.url + "/engram/v1"
    shared = served.root / "remnic.config.json"
    _write_json(shared, {"server": {"port": 1}})
    try:
        health = _http(api + "/health", served.alice)[1]
        assert health["configStale"] is True and health["configStaleKeys"] == ["server.port"]
        assert "remnic daemon restart" in health["configStaleNote"]
        mark = _log_mark(served.root)
        stored = run_remnic("store", "Staging is at 10.0.0.7", "--memory-dir", str(served.root), env=served.env)
        assert stored.code == 0 and stored.out.startswith("stored "), stored.err
        assert "not using the running server" in stored.err and "server.port" in stored.err
        assert "remnic daemon restart" in stored.err and stored.err.count("\n") == 1
        quiet = run_remnic("store", "Prod is 10.0.0.9", "--json", "--memory-dir", str(served.root), env=served.env)
        assert quiet.code == 0 and "note" not in quiet.err
        assert _cli_lines(served.root, mark) == []
        log = (served.root / ".remnic" / "server.log").read_text()
        assert "server.port take effect only after a restart" in log
    finally:
        shared.unlink()
    assert _http(api + "/health", served.alice)[1]["configStale"] is False


# --- another release: a server that runs older code than the CLI ---


def test_a_cli_of_another_release_runs_its_command_itself_and_says_so(served: Served) -> None:
    pid_file = served.root / ".remnic" / "server.pid"
    original = pid_file.read_text()
    record = json.loads(original)
    assert record["version"] == remnic.__version__
    _write_json(pid_file, {**record, "version": "0.0.1"})  # the server as an older release recorded itself
    try:
        mark = _log_mark(served.root)
        stored = run_remnic("store", "Kiwis are birds", "--memory-dir", str(served.root), env=served.env)
        assert stored.code == 0 and stored.out.startswith("stored "), stored.err
        assert f"the running server is remnic 0.0.1 (this is {remnic.__version__})" in stored.err
        assert "`remnic daemon restart`" in stored.err
        assert _cli_lines(served.root, mark) == []
        status = _daemon(served.env, "status", "--memory-dir", str(served.root))
        assert "server: remnic 0.0.1" in status.out
    finally:
        pid_file.write_text(original)
    # The server itself refuses a client of another release (its parser may not know the client's flags).
    from remnic.cli.fastpath import _receive, _send

    request = {"v": 2, "version": "9.9.9", "code": "x", "argv": ["store", "x"], "memoryDir": str(served.root)}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(record["cliSocket"])
        _send(sock, json.dumps(request).encode())
        assert sock.recv(1) == b"\x06"
        reply = json.loads(_receive(sock))
    assert reply["fallback"].startswith(f"the running server is remnic {remnic.__version__} (this is 9.9.9)")


def test_an_upgrade_under_a_running_server_names_the_cause_and_the_fix(tmp_path: Path) -> None:
    """The package replaced under the daemon (as `pip install -U` does): a module first imported now
    needs a name only the new release has."""
    code = tmp_path / "site"
    # mtimes kept, so its bytecode stays valid; the links to hooks/ and the template resolve (or are skipped)
    shutil.copytree(Path(remnic.__file__).parent, code / "remnic", ignore_dangling_symlinks=True)
    root, env, alice, _bob = _make(tmp_path)
    env = {**env, "PYTHONPATH": str(code)}
    info = _start(root, env)
    try:
        errors = code / "remnic" / "errors.py"
        errors.write_text(errors.read_text() + "\n\ndef new_release_helper() -> int:\n    return 1\n")
        observing = code / "remnic" / "service" / "observing.py"
        text = observing.read_text().replace(
            "from __future__ import annotations\n",
            "from __future__ import annotations\n\nfrom remnic.errors import new_release_helper\n",
            1,
        )
        observing.write_text(text)
        message = {"sessionKey": "s1", "messages": [{"role": "user", "content": "I prefer tea over coffee."}]}
        status, body = _http(info["url"] + "/engram/v1/observe", alice, "POST", message)
        assert status == 503 and body["code"] == "server_restart_needed", body
        assert "changed since this server started" in body["error"] and "remnic daemon restart" in body["error"]
        assert _http(info["url"] + "/engram/v1/health", alice)[1]["codeChanged"] is True
        # The CLI of the new files does not hand its command to the old server.
        stored = run_remnic("store", "Tea, not coffee", "--memory-dir", str(root), env=env, cwd=tmp_path)
        assert stored.code == 0, stored.err
        assert "started before remnic's files changed" in stored.err and "remnic daemon restart" in stored.err
    finally:
        _daemon(env, "stop", "--memory-dir", str(root))
        kill_server(info["pid"])


# --- a second server, the log, start/stop/restart ---


def test_serve_refuses_to_become_a_second_server_for_the_directory(served: Served) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "serve", "--memory-dir", str(served.root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **served.env},
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("`remnic serve` ran as a second server for the directory") from None
    assert proc.returncode == 2, err
    assert f"pid {served.pid}" in err and served.url in err and "remnic daemon stop" in err


def test_daemon_start_says_why_it_cannot_open_its_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, env, _alice, _bob = _make(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    log = root / ".remnic" / "server.log"
    log.mkdir(parents=True)
    refused = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0")
    assert refused.code == 1 and "Traceback" not in refused.err
    assert f"cannot open the server log {log}" in refused.err and "move it aside" in refused.err
    as_json = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0", "--json")
    assert as_json.code == 1 and "cannot open the server log" in json.loads(as_json.out or as_json.err)["error"]
    log.rmdir()
    (root / ".remnic" / "server.log.1").mkdir()
    log.write_bytes(b"x" * (10 * 1024 * 1024 + 1))  # over the size moved aside at start, onto a folder
    rotated = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0")
    assert rotated.code == 1 and "cannot move the server log" in rotated.err and "Traceback" not in rotated.err


def test_the_daemon_logs_into_a_new_file_after_rm_rf_state(served: Served) -> None:
    """Last of the module's daemon tests: its state folder is deleted under it."""
    root = served.root
    for _ in range(20):  # rm -rf races the server writing its own files there: again, as a person would
        try:
            shutil.rmtree(root / ".remnic")
            break
        except OSError:
            time.sleep(0.05)
    log = root / ".remnic" / "server.log"
    assert _poll(log.exists), "the server did not open its log again"
    assert _http(served.url + "/engram/v1/health", served.alice)[0] == 200
    assert _poll(lambda: "/engram/v1/health 200" in log.read_text())
    fd_target = os.readlink(f"/proc/{served.pid}/fd/2") if sys.platform == "linux" else str(log)
    assert fd_target == str(log)


def test_stop_logs_why_and_restart_with_none_running_says_so(served: Served) -> None:
    """After the module's other daemon tests: stops its server and starts another on the same port."""
    root = served.root
    assert _daemon(served.env, "stop", "--memory-dir", str(root)).code == 0
    lines = (root / ".remnic" / "server.log").read_text()
    assert f"stopping on SIGTERM (pid {served.pid})" in lines and f"stopped (pid {served.pid})" in lines
    again = _daemon(served.env, "restart", "--memory-dir", str(root))
    assert again.code == 0, again.err
    assert "the server was not running; started it" in again.out and "restarted" not in again.out
    assert f"{served.url} (the last server's port)" in again.out  # where agents found it, not server.port's 4318


def test_a_config_that_no_longer_reads_is_named_in_health_with_its_problems(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from remnic.config import settings_for
    from remnic.server.config_watch import ConfigWatch
    from remnic.service.memory import Memory

    root = tmp_path / "m"
    Memory.init(root, settings=settings_for(root)).close()
    api = SimpleNamespace(settings=settings_for(root), config_report={})
    watch = ConfigWatch(api, env={"HOME": str(tmp_path / "home")})
    (root / "remnic.config.json").write_text('{"recall": {"topK": "abc", "budgetChars": -5}}')
    watch.check()
    error = api.config_report["configError"]
    assert "topK" in error and "budgetChars" in error and "listed below" not in error
