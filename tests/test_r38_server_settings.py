"""A setting derives the same server state whether the server started with it or read it after a config edit.

Real servers on 127.0.0.1, a real user config file, the server's own config watch.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import kill_server, run_cli

from remnic.config import load_settings, settings_for
from remnic.server.api import Api
from remnic.server.auth import Authenticator, TokenStore
from remnic.server.config_watch import ConfigWatch
from remnic.server.http import RemnicHTTPServer, running_server
from remnic.service.memory import Memory

CONFIG = {
    "namespaces": {
        "enabled": True,
        "policies": {"secret": {"readPrincipals": ["alice"], "writePrincipals": ["alice"]}},
    },
    "server": {"writeRateLimit": 7, "writeRateWindowS": 30, "idempotencyWindowS": 45, "allowedHosts": ["memo.test"]},
    "store": {"maxContentChars": 1234},
    "mcp": {"toolNames": "both"},
}
BIND = "127.1"
"""A name for 127.0.0.1 that is not the bound address itself: a client connecting to it sends it as Host."""


def _derived(server: RemnicHTTPServer) -> dict[str, Any]:
    api = server.api
    return {
        "operations": api.operations,
        "policy": (api.policy.enabled, api.policy.default, api.policy.policies),
        "limits": (api.limiter.limit, api.limiter.window_s, api.idempotency.window_s),
        "hosts": (server.host_check.names, server.host_check.wildcard),
        "mcpStyle": server.mcp.style,
    }


def _health(server: RemnicHTTPServer, token: str, host: str) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        conn.request("GET", "/remnic/v1/health", headers={"Authorization": f"Bearer {token}", "Host": host})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def _config(home: Path) -> Path:
    """The user's own config: namespace policies and allowedHosts are set only there."""
    return home / ".config" / "remnic" / "config.json"


def _serve(root: Path, home: Path, token_store: TokenStore) -> Any:
    settings = load_settings(str(root), cwd=root, env={"HOME": str(home)})
    memory = Memory(settings)
    api = Api(memory, settings)
    return memory, api, running_server(api, Authenticator(token_store), host=BIND, port=0)


def test_a_setting_read_at_start_and_after_a_config_edit_derives_the_same_state(tmp_path: Path) -> None:
    tokens = TokenStore(tmp_path / "tokens.json")
    alice, _ = tokens.generate("alice")
    roots = [tmp_path / "started_with", tmp_path / "edited"]
    homes = [tmp_path / "home_a", tmp_path / "home_b"]
    for root, home in zip(roots, homes):
        Memory.init(root, settings=settings_for(root)).close()
        _config(home).parent.mkdir(parents=True)
    _config(homes[0]).write_text(json.dumps(CONFIG))

    memory_a, api_a, serving_a = _serve(roots[0], homes[0], tokens)
    memory_b, api_b, serving_b = _serve(roots[1], homes[1], tokens)
    try:
        with serving_a as started, serving_b as edited:
            edited.config_watch = ConfigWatch(api_b, edited, env={"HOME": str(homes[1])})
            assert _derived(edited) != _derived(started)
            _config(homes[1]).write_text(json.dumps(CONFIG))
            port_b = edited.server_address[1]
            # The next request reads the edited file first, and is answered under it.
            status, body = _health(edited, alice, f"{BIND}:{port_b}")
            assert status == 200, body
            assert body["namespacesEnabled"] is True and body["configStale"] is False
            assert _derived(edited) == _derived(started)
            for name in ("memo.test", BIND, "localhost"):
                assert _health(started, alice, f"{name}:{started.server_address[1]}")[0] == 200
                assert _health(edited, alice, f"{name}:{port_b}")[0] == 200
    finally:
        memory_a.close()
        memory_b.close()


def test_config_and_daemon_status_say_what_the_running_server_does_not_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_r37_daemon import _make

    root, env, _, _ = _make(tmp_path)
    for key, value in env.items():  # the commands run in this process (they read the pid file), the server is real
        monkeypatch.setenv(key, value)
    started = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0", "--json")
    assert started.code == 0, started.err
    info = started.json()
    shared = root / "remnic.config.json"
    try:
        status = run_cli("daemon", "status", "--json", "--memory-dir", str(root)).json()
        assert status["configStale"] is False
        shared.write_text(json.dumps({"server": {"port": 1}}))
        for args in (("daemon", "status"), ("config",)):
            said = run_cli(*args, "--memory-dir", str(root))
            assert said.code == 0, said.err
            line = next(x for x in said.out.splitlines() if x.startswith("server running with settings older than"))
            assert str(shared) in line, said.out
            assert "restart needed for: server.port (`remnic daemon restart`)" in said.out
        status = run_cli("daemon", "status", "--json", "--memory-dir", str(root)).json()
        assert status["configStale"] is True and status["configStaleKeys"] == ["server.port"]
        shown = run_cli("config", "--json", "--memory-dir", str(root)).json()
        assert shown["server"]["pid"] == info["pid"] and shown["server"]["configStaleKeys"] == ["server.port"]
        shared.write_text(json.dumps({"recall": {"topK": "abc"}}))
        broken = run_cli("daemon", "status", "--memory-dir", str(root))
        assert broken.code == 0 and f"pid {info['pid']}" in broken.out, broken.err
        assert "config error: " in broken.out and str(shared) in broken.out and "recall.topK" in broken.out
        status = run_cli("daemon", "status", "--json", "--memory-dir", str(root)).json()
        assert "recall.topK" in status["configError"] and "configStale" not in status
    finally:
        run_cli("daemon", "stop", "--memory-dir", str(root))
        kill_server(info["pid"])


def test_a_state_part_of_the_wrong_type_is_named_with_its_cure_not_an_internal_error(tmp_path: Path) -> None:
    from remnic.server.api import Api

    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    tokens = TokenStore(tmp_path / "tokens.json")
    alice, _ = tokens.generate("alice")
    state = root / ".remnic"
    (state / "lcm.lock").mkdir()  # a folder where the transcript archive's lock file belongs
    (state / "entities.json").mkdir()
    try:
        with running_server(Api(memory), Authenticator(tokens)) as server:
            for method, path, body in (
                ("POST", "/remnic/v1/lcm/search", {"query": "tea"}),
                ("GET", "/remnic/v1/lcm/status", None),
            ):
                conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
                data = None if body is None else json.dumps(body)
                conn.request(method, path, body=data, headers={"Authorization": f"Bearer {alice}"})
                response = conn.getresponse()
                said = json.loads(response.read())
                conn.close()
                assert response.status == 500 and said["code"] == "state_dir_unusable", (path, said)
                assert "is a folder where remnic keeps" in said["error"] and "move it aside (mv " in said["error"]
                assert str(state / "lcm.lock") in said["error"]
            # An entity read writes nothing, so it needs no state file: it answers, never an internal error.
            conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
            conn.request("GET", "/remnic/v1/entities", headers={"Authorization": f"Bearer {alice}"})
            assert conn.getresponse().status == 200
            conn.close()
    finally:
        memory.close()
