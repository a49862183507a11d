"""What a server command pays before it can answer: `daemon status`/`stop` and a refused `serve` load no
API or recall pipeline, and a server that cannot bind says so before it loads the model and the index."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from remnic.errors import RemnicError
from remnic.server import Api, Authenticator, TokenStore, create_server
from remnic.service.memory import Memory


def test_a_busy_port_is_reported_before_the_warm_up(memory: Memory, tmp_path: Path) -> None:
    warmed: list[bool] = []
    memory.warm_up = lambda: warmed.append(True)  # type: ignore[method-assign]
    store = TokenStore(tmp_path / "tokens.json")
    store.generate("alice")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(RemnicError, match=f"port {port} on 127.0.0.1 is in use"):
            create_server(Api(memory), Authenticator(store), host="127.0.0.1", port=port)
    assert warmed == []  # the model and index were not loaded for a server that never ran
    server = create_server(Api(memory), Authenticator(store), host="127.0.0.1", port=0)
    server.server_close()
    assert warmed == [True]  # a server that binds is warm before it serves


def test_daemon_status_and_a_refused_serve_do_not_load_the_api(memory: Memory) -> None:
    script = (
        "import json, sys\n"
        "from remnic.cli import main\n"
        "codes = [main(['daemon', 'status', '--memory-dir', sys.argv[1]]),\n"
        "         main(['serve', '--token', 'short', '--memory-dir', sys.argv[1]])]\n"
        "print(json.dumps({'codes': codes, 'api': 'remnic.server.api' in sys.modules,\n"
        "                  'recall': 'remnic.service.recall' in sys.modules}))\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(memory.root)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.splitlines()[-1])
    assert out == {"codes": [3, 2], "api": False, "recall": False}, out
