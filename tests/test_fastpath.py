"""remnic store and query through a running server: same output, no model load in the command.

A real `remnic daemon start` in a temporary repository, real `python -m remnic` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli, run_remnic

from remnic.config import settings_for
from remnic.server.auth import TokenStore
from remnic.service.memory import Memory


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """One daemon for the module's tests: each counts the commands it served from its own start on."""
    base = tmp_path_factory.mktemp("fastpath")
    (base / "home").mkdir()
    # HOME is the server's and every client's (a client with another HOME is refused: git's identity).
    env = {"REMNIC_TOKENS_PATH": str(base / "tokens.json"), "HOME": str(base / "home")}
    env["XDG_CACHE_HOME"] = str(model_cache)  # the run's one model cache (the test's environment is not set yet)
    for var in [k for k in os.environ if k.startswith("REMNIC_") and k not in env]:
        env[var] = ""  # the developer's REMNIC_* must not change what the commands do
    root = base / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    TokenStore(base / "tokens.json").generate("default")
    with pytest.MonkeyPatch.context() as mp:  # `daemon start` in this process; the server is a real one
        for key, value in env.items():
            mp.setenv(key, value)
        started = run_cli("daemon", "start", "--port", "0", "--memory-dir", str(root))
    assert started.code == 0, started.err
    try:
        yield root, env
    finally:
        run_cli("daemon", "stop", "--memory-dir", str(root))


@pytest.fixture
def daemon(served: tuple[Path, dict[str, str]]) -> tuple[Path, dict[str, str]]:
    root, env = served
    _MARK[root] = (root / ".remnic" / "server.log").stat().st_size
    return root, env


_MARK: dict[Path, int] = {}
"""Where the server log stood when the current test began."""


def _served(root: Path) -> list[str]:
    """The CLI commands the server ran since this test began."""
    with open(root / ".remnic" / "server.log", "rb") as f:
        f.seek(_MARK.get(root, 0))
        log = f.read().decode()
    return [line.split("cli: ", 1)[1] for line in log.splitlines() if " cli: " in line]


def _clean(env: dict[str, str]) -> dict[str, str]:
    return env  # empty REMNIC_* values count as unset (the developer's own stay out of these commands)


def test_store_and_query_go_through_the_daemon_with_the_same_output(daemon: tuple[Path, dict[str, str]]) -> None:
    root, env = daemon
    env = _clean(env)
    stored = run_remnic(
        "store",
        "We deploy on Tuesdays after standup",
        "--category",
        "decision",
        "--json",
        "--memory-dir",
        str(root),
        env=env,
    )
    assert stored.code == 0, stored.err
    record = json.loads(stored.out)
    assert record["category"] == "decision" and record["commit"]
    piped = run_remnic("store", "-", "--memory-dir", str(root), stdin="Ana prefers tabs\n", env=env)
    assert piped.code == 0 and piped.out.startswith("stored mem_")
    bad = run_remnic("store", "x", "--category", "gossip", "--memory-dir", str(root), env=env)
    assert bad.code == 2 and "gossip" in bad.err
    served = run_remnic("query", "when do we deploy", "--json", "--memory-dir", str(root), env=env)
    assert served.code == 0, served.err
    # `-` reads standard input here, as the command does (bytes, to EOF, from a terminal too)
    assert [line.split(" exit ")[0] for line in _served(root)] == ["store", "store", "query"]
    assert [line.split(" exit ")[1].split(" ")[0] for line in _served(root)] == ["0", "2", "0"]

    local = run_remnic(
        "query", "when do we deploy", "--json", "--memory-dir", str(root), env={**env, "REMNIC_NO_DAEMON": "1"}
    )
    assert len(_served(root)) == 3  # that one ran in its own process

    def same(out: str) -> list[tuple[str, float]]:
        return [(h["id"], h["score"]) for h in json.loads(out)["hits"]]

    assert same(served.out) == same(local.out)
    assert json.loads(served.out)["hits"][0]["id"] == record["id"]


def test_other_settings_run_in_process(daemon: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, env = daemon
    config = tmp_path / "other.json"
    config.write_text(json.dumps({"recall": {"topK": 1}}))
    env = {**_clean(env), "REMNIC_CONFIG_PATH": str(config)}
    for text in ("Lunch is served at noon", "Lunch moves to one on Fridays"):
        assert run_remnic("store", text, "--memory-dir", str(root), env=env).code == 0
    out = run_remnic("query", "lunch", "--json", "--memory-dir", str(root), env=env)
    assert out.code == 0 and len(json.loads(out.out)["hits"]) == 1  # this process's topK, not the server's
    assert _served(root) == []


def test_a_stopped_daemon_leaves_the_cli_working(memory: Memory, tmp_path: Path) -> None:
    root = memory.root
    (root / ".remnic" / "server.pid").write_text(
        json.dumps({"pid": 2**22 + 7, "cliSocket": str(tmp_path / "gone.sock")})
    )
    started = time.monotonic()
    result = run_remnic("store", "Still works without a server", "--memory-dir", str(root))
    assert result.code == 0 and "stored" in result.out
    assert time.monotonic() - started < 60


def test_a_command_for_another_repository_or_git_identity_runs_in_process(
    daemon: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, env = daemon
    other = tmp_path / "other"
    Memory.init(other, settings=settings_for(other)).close()
    # argparse's abbreviation and a repeated flag name the other repository: the served one must not answer
    for argv in (
        ["store", "Kiwis are birds", "--memory-d", str(other)],
        ["--memory-dir", str(root), "store", "Takahe are birds", "--memory-dir", str(other)],
    ):
        stored = run_remnic(*argv, "--json", env=env, cwd=root)
        assert stored.code == 0, stored.err
        assert (other / json.loads(stored.out)["path"]).is_file()
    assert _served(root) == []
    authored = run_remnic(
        "store", "Wekas are birds", "--memory-dir", str(root), env={**env, "GIT_AUTHOR_NAME": "Alice Example"}
    )
    assert authored.code == 0 and _served(root) == []
    assert (
        "Alice Example"
        in subprocess.run(
            ["git", "log", "-1", "--format=%an"], cwd=root, capture_output=True, text=True, check=True
        ).stdout
    )
