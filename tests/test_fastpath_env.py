"""The CLI fast path runs a command in a server only when their result-changing REMNIC_* environments agree.

A real `remnic daemon start` whose environment pins REMNIC_XRAY_CLOCK: a client without it must not
get the server's clock ("yesterday" resolved against it, its captured-at): the server refuses the
request and the command runs in the client's own process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli, run_remnic

from remnic.cli.fastpath import CliServer, result_env
from remnic.server.auth import TokenStore
from remnic.service.memory import Memory

PINNED = "1577880000000"  # 2020-01-01T12:00:00.000Z


def _served(root: Path) -> list[str]:
    log = root / ".remnic" / "server.log"
    return [line for line in log.read_text().splitlines() if " cli: " in line] if log.exists() else []


@pytest.fixture
def clocked_daemon(memory: Memory, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    env = {"REMNIC_TOKENS_PATH": str(tmp_path / "tokens.json")}
    for var in [k for k in os.environ if k.startswith("REMNIC_")]:
        env[var] = ""
    root = memory.root
    memory.store("We deployed the release yesterday evening", category="moment")
    memory.close()
    TokenStore(tmp_path / "tokens.json").generate("default")
    server_env = {**env, "REMNIC_XRAY_CLOCK": PINNED}
    started = run_remnic("daemon", "start", "--port", "0", "--memory-dir", str(root), env=server_env)
    assert started.code == 0, started.err
    try:
        yield root, env
    finally:
        run_cli("daemon", "stop", "--memory-dir", str(root))


def test_a_server_with_another_clock_does_not_answer_the_client(clocked_daemon: tuple[Path, dict[str, str]]) -> None:
    root, env = clocked_daemon
    out = run_remnic("query", "what did we deploy yesterday", "--explain", "--memory-dir", str(root), env=env)
    assert out.code == 0, out.err
    assert _served(root) == []  # refused by the server: run here
    captured = re.search(r"captured-at: (\S+)", out.out)
    assert captured is not None and not captured.group(1).startswith("2020-01-01")
    assert "2019-12-31" not in out.out  # "yesterday" against the client's clock, not the server's
    # A client that has the server's environment agrees with it (it sends what it has).
    assert result_env({**env, "REMNIC_XRAY_CLOCK": PINNED, "REMNIC_TOKEN": "x"}) == {"REMNIC_XRAY_CLOCK": PINNED}


def test_the_server_refuses_a_request_from_another_environment(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    server = CliServer(memory, parser=None, execute=lambda args: 0)
    request = {
        "v": 2,
        "argv": ["query", "x"],
        "memoryDir": str(memory.root),
        "settings": json.loads(json.dumps(memory.settings.to_dict(), default=str)),
    }
    monkeypatch.setenv("REMNIC_XRAY_CLOCK", PINNED)
    assert "environment" in server.handle({**request, "env": {}})["fallback"]
    assert "environment" in server.handle(request)["fallback"]  # an older client sends none
    monkeypatch.delenv("REMNIC_XRAY_CLOCK")
    monkeypatch.setenv("REMNIC_TOKEN", "a-server-token-changes-nothing-printed")
    assert "environment" in server.handle({**request, "env": {"REMNIC_XRAY_CLOCK": PINNED}})["fallback"]
