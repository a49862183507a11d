"""Codex runs a hook of the user's hooks.json only while the trust recorded in its config.toml
matches the handler, and skips it silently otherwise: `connectors doctor codex` must say so, and
`connectors install codex` must name the hooks that need trusting (again).

Trust is read from the config alone, so doctor runs with --no-fire here; test_connectors.py fires
every hook of a trusted Codex install for real.

The hash remnic computes is checked against golden values Codex 0.171's own ``hooks/list`` gave
(``currentHash``); with the real CLI at hand ($REMNIC_HOST_CLIS), against ``codex app-server``
itself, in every state: never trusted, trusted, changed by a reinstall, turned off.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import copied_memory_root, run_cli

from remnic.drivers.connectors.codextrust import EVENT_LABELS, handler_hashes
from remnic.drivers.connectors.hosts import ours
from remnic.service.memory import Memory

CLIS = Path(os.environ["REMNIC_HOST_CLIS"]) if os.environ.get("REMNIC_HOST_CLIS") else None

_R = "REMNIC_MEMORY_DIR=/tmp/r34/f_hooks/c1/mem REMNIC_PYTHON=/work/main/.venv/bin/python /work/main/remnic/_hooks/codex/"
# SessionEnd's handler with the timeout Codex runs it with: 1 s, 3 s
_SE_1 = "2750549eca87a19955f8107db604d78482974f4dbc782d913779a1b89c7aa78e"
_SE_3 = "c76ca0ae9353b8d5c9d52362f8ec4ca8514aa9561458600d89fe90576334d33c"
# (event, group matcher, handler, currentHash from Codex 0.171 `codex app-server` hooks/list)
GOLDEN: list[tuple[str, Any, dict[str, Any], str]] = [
    (
        "PreCompact",
        None,
        {"command": _R + "pre-compact.sh", "timeout": 60},
        "4664bc0bf5e73dd00dd54e9230f8ba73819fcd8cbe22fa931fd212a63606cb5a",
    ),
    (
        "SessionStart",
        "startup|resume|clear|compact|fork",
        {"command": _R + "session-start.sh", "timeout": 60},
        "4280c167823eb97a96cdef083d13266c4c893cc66f8c842ced2bdfff749eb877",
    ),
    (
        "SessionEnd",
        None,
        {"command": _R + "session-end.sh", "timeout": 3},
        _SE_3,
    ),
    (
        "Stop",
        None,
        {"command": _R + "stop.sh", "timeout": 60},
        "62af4aee91c2519eb9bc1d156cf781842aaf8728d7c74fb27d9daac0985cc987",
    ),
    (
        "Stop",
        "foo",
        {"command": "echo a", "timeout": 5, "async": True, "statusMessage": "hi"},
        "f1773518fcd5c2726bb5edf061b8fbf8bf93de0b2ec72481e9f2d4f2170f530d",
    ),
    ("Stop", "foo", {"command": "echo b"}, "bebc61543262d405dfac96ec65b8e84cc20c58f81fd7e463a2181a40c41f7a82"),
    (
        "SessionEnd",
        "other",
        {"command": "echo c", "timeout": 0, "commandWindows": "echo w"},
        "ea1857f4dbc7802d86d15a43e36bc4b2443f85041b39e326a6c90fdb5cdd1c6d",
    ),
    (
        "PreCompact",
        "auto",
        {"command": "echo d", "timeout": 7},
        "10d0d4def52b845d113f06af287b6ce7c31e163fab1f555c519bea07aa8a0957",
    ),
    (
        "SessionStart",
        "*",
        {"command": "echo e", "timeout": 9, "additionalContextLimit": 10},
        "5bb495a0a344791c053601b2d7653a2a0cc18580e4d78feb9e41e9289de03e6c",
    ),
    ("SessionStart", None, {"command": "echo f"}, "36658607b662b08ac20b281143eb3f8143670126bb70409bd1beb841358c5ecb"),
    # Codex hashes the timeout it runs a handler with: SessionEnd's clamped to 3 s, and 1 s when absent
    # (hooks/list timeoutSec 1, 1, 1, 2, 3, 3, 3, 3); the other events' as written, however large.
    ("SessionEnd", None, {"command": _R + "session-end.sh"}, _SE_1),
    ("SessionEnd", None, {"command": _R + "session-end.sh", "timeout": 0}, _SE_1),
    ("SessionEnd", None, {"command": _R + "session-end.sh", "timeout": 1}, _SE_1),
    (
        "SessionEnd",
        None,
        {"command": _R + "session-end.sh", "timeout": 2},
        "b91c2d0eb3faf804fa9dab691e68733ce161c88492aec2be3927394b507f89a1",
    ),
    ("SessionEnd", None, {"command": _R + "session-end.sh", "timeout": 4}, _SE_3),
    ("SessionEnd", None, {"command": _R + "session-end.sh", "timeout": 10}, _SE_3),
    ("SessionEnd", None, {"command": _R + "session-end.sh", "timeout": 600}, _SE_3),
    (
        "SessionEnd",
        "m",
        {"command": _R + "session-end.sh", "timeout": 10},
        "ceb7423fb864f636caef2188da9f12842bae7a23e59e85ade240326dff2a6949",
    ),
    (
        "SessionEnd",
        None,
        {"command": "echo SessionEnd 10 True", "timeout": 10, "async": True},
        "4dcdee1699d53cc42fb8056f9d21bce04c3fd3e37d0f4712de0d2f1720feb4d7",
    ),
    ("Stop", None, {"command": _R + "stop.sh"}, "2045fc9a0b0bbcc4dc14c6b260b94af6e0b523589ad437e1a11f93fc072552fd"),
    (
        "Stop",
        None,
        {"command": _R + "stop.sh", "timeout": 5000},
        "71302b430979922dc2ab452ea7f9968c4dcfb97ceff2581dbd8cddfde09c8b05",
    ),
    (
        "PreCompact",
        None,
        {"command": _R + "pre-compact.sh", "timeout": 100000},
        "cedbb52b1f71fd7d1af0a616042ab994f1b94cca13a5bb6e31b25356ab7f4577",
    ),
    (
        "SessionStart",
        "startup|resume|clear|compact|fork",
        {"command": _R + "session-start.sh", "timeout": 600},
        "a28c17bddd336a690f81744a2eaf63693ddd7f603d88588ed4891c6ebf59067a",
    ),
]


@pytest.mark.parametrize(("event", "matcher", "handler", "current"), GOLDEN)
def test_remnic_hashes_a_handler_as_codex_does(event: str, matcher: Any, handler: dict[str, Any], current: str) -> None:
    hashes = handler_hashes(event, matcher, {"type": "command", **handler})
    assert hashes is not None and f"sha256:{current}" in hashes
    if handler["command"].startswith("REMNIC_"):  # remnic's own: exactly Codex 0.171's
        assert hashes[0] == f"sha256:{current}"


def trust_codex_hooks(codex_home: Path, *, enabled: bool | None = None) -> None:
    """What Codex's /hooks writes when a person trusts remnic's hooks: a trusted_hash per handler key."""
    hooks_json = codex_home / "hooks.json"
    data = json.loads(hooks_json.read_text())
    lines = []
    for event, groups in data["hooks"].items():
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group["hooks"]):
                if ours(handler) is None:
                    continue
                hashes = handler_hashes(event, group.get("matcher"), handler)
                assert hashes is not None
                lines += [
                    f'[hooks.state."{hooks_json}:{EVENT_LABELS[event]}:{gi}:{hi}"]',
                    f'trusted_hash = "{hashes[0]}"',
                ]
                if enabled is not None:
                    lines.append(f"enabled = {str(enabled).lower()}")
    config = codex_home / "config.toml"
    old = config.read_text() if config.exists() else ""
    config.write_text(old + "\n".join(lines) + "\n")


def _trust_checks(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"].split()[0]: c for c in result["checks"] if c["name"].endswith(" trusted by Codex")}


def test_doctor_fails_until_codex_trusts_the_hooks_and_again_after_a_reinstall(
    memory: Memory, memory_template: Path, isolated_home: Path, tmp_path: Path
) -> None:
    events = ["SessionStart", "Stop", "PreCompact", "SessionEnd"]
    install = run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root))
    assert install.code == 0
    assert "SessionStart, Stop, PreCompact, SessionEnd are not trusted" in install.out and "/hooks" in install.out
    again = run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root), "--json").json()
    assert again["codexTrust"] == dict.fromkeys(events, "untrusted")

    doctor = run_cli("connectors", "doctor", "codex", "--no-fire", "--json")
    assert doctor.code == 1 and not doctor.json()["healthy"]
    checks = _trust_checks(doctor.json())
    assert sorted(checks) == sorted(events) and all(c["status"] == "fail" for c in checks.values())
    assert "never trusted" in checks["Stop"]["detail"] and "hooks.json:stop:0:0" in checks["Stop"]["detail"]
    assert "run `codex`, then /hooks" in run_cli("connectors", "doctor", "codex", "--no-fire").out.splitlines()[-1]

    codex_home = isolated_home / ".codex"
    trust_codex_hooks(codex_home)
    trusted = run_cli("connectors", "doctor", "codex", "--no-fire", "--json")
    assert trusted.code == 0, trusted.out
    assert trusted.json()["healthy"] and trusted.json()["warnings"] == []
    assert all(c["status"] == "ok" for c in _trust_checks(trusted.json()).values())
    assert "not trusted" not in run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root)).out

    other = copied_memory_root(memory_template, tmp_path / "other")  # another memory repository
    moved = run_cli("connectors", "install", "codex", "--memory-dir", str(other))
    assert "updated" in moved.out and "must be trusted again" in moved.out
    doctor = run_cli("connectors", "doctor", "codex", "--no-fire", "--json")
    assert doctor.code == 1
    assert all("changed since it was trusted" in c["detail"] for c in _trust_checks(doctor.json()).values())

    (codex_home / "config.toml").write_text("")
    trust_codex_hooks(codex_home, enabled=False)
    off = _trust_checks(run_cli("connectors", "doctor", "codex", "--no-fire", "--json").json())
    assert all(c["status"] == "fail" and "turned off" in c["detail"] for c in off.values())


def test_a_handler_remnic_cannot_hash_is_a_warning_not_healthy(memory: Memory, isolated_home: Path) -> None:
    assert run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root)).code == 0
    codex_home = isolated_home / ".codex"
    trust_codex_hooks(codex_home)
    path = codex_home / "hooks.json"
    data = json.loads(path.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["someFutureKey"] = 1  # a key of a later Codex
    path.write_text(json.dumps(data))
    doctor = run_cli("connectors", "doctor", "codex", "--no-fire", "--json")
    assert doctor.code == 0 and doctor.json()["healthy"] and doctor.json()["warnings"] == ["Stop trusted by Codex"]
    stop = _trust_checks(doctor.json())["Stop"]
    assert stop["ok"] and stop["status"] == "warn" and "cannot verify that Codex trusts it" in stop["detail"]
    text = run_cli("connectors", "doctor", "codex", "--no-fire").out.splitlines()
    assert any(line.startswith("WARN Stop trusted by Codex") for line in text)
    assert text[-1] != "healthy" and "could not verify Stop trusted by Codex" in text[-1]


# A removed timeout (Codex runs it with 1 s) hashes as test_remnic_hashes_a_handler_as_codex_does checks.
@pytest.mark.parametrize(("timeout", "codex_runs_it_with"), [(10, 3)])
def test_a_trusted_session_end_with_its_timeout_raised_or_removed_is_healthy(
    memory: Memory, isolated_home: Path, timeout: int | None, codex_runs_it_with: int
) -> None:
    """Codex clamps SessionEnd's timeout to 3 s (1 s when it has none) before hashing the handler:
    the hash /hooks trusts is that one, which doctor must accept."""
    assert run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root)).code == 0
    codex_home = isolated_home / ".codex"
    trust_codex_hooks(codex_home)  # trusted as installed: SessionEnd at 3 s
    path, config = codex_home / "hooks.json", codex_home / "config.toml"
    data = json.loads(path.read_text())
    handler = data["hooks"]["SessionEnd"][0]["hooks"][0]
    if timeout is None:
        del handler["timeout"]
    else:
        handler["timeout"] = timeout
    path.write_text(json.dumps(data, indent=2))

    doctor = run_cli("connectors", "doctor", "codex", "--no-fire", "--json")
    if codex_runs_it_with == 3:  # Codex's hash is unchanged: still trusted
        assert doctor.code == 0 and doctor.json()["healthy"], doctor.out
    else:  # Codex's hash changed (1 s, not 3 s): Codex calls it modified, and so must doctor
        assert doctor.code == 1
        assert "changed since it was trusted" in _trust_checks(doctor.json())["SessionEnd"]["detail"]

    # What /hooks writes on trusting it now: the hash with the timeout Codex runs it with, written out
    # here rather than taken from handler_hashes (Codex 0.171's currentHash is this, see GOLDEN).
    identity = {
        "event_name": "session_end",
        "hooks": [{"type": "command", "command": handler["command"], "timeout": codex_runs_it_with, "async": False}],
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    codex_hash = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    key = f"{path}:session_end:0:0"
    stored = tomllib.loads(config.read_text())["hooks"]["state"][key]["trusted_hash"]
    config.write_text(config.read_text().replace(stored, codex_hash))

    doctor = run_cli("connectors", "doctor", "codex", "--no-fire", "--json")
    assert doctor.code == 0 and doctor.json()["healthy"] and doctor.json()["warnings"] == [], doctor.out
    assert _trust_checks(doctor.json())["SessionEnd"]["status"] == "ok"


def _codex_hooks(home: Path, cwd: Path) -> list[dict[str, Any]]:
    """Codex's own view of each hook (key, trustStatus, currentHash…), from `codex app-server` hooks/list."""
    assert CLIS is not None
    messages = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "remnic-test", "version": "1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    proc = subprocess.Popen(
        [str(CLIS / "codex"), "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(home)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            reply = json.loads(proc.stdout.readline())
            if reply.get("id") == 2:
                return [h for c in reply["result"]["data"] for h in c["hooks"]]
        raise AssertionError("codex app-server gave no hooks/list reply")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _codex_says(home: Path, cwd: Path) -> dict[str, str]:
    """Codex's own trust status of each hook."""
    return {h["key"]: h["trustStatus"] for h in _codex_hooks(home, cwd)}


@pytest.mark.skipif(CLIS is None, reason="set REMNIC_HOST_CLIS to a folder holding the codex CLI")
def test_doctor_agrees_with_the_real_codex_in_every_state(
    memory: Memory, memory_template: Path, isolated_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    codex_home = isolated_home / ".codex"

    def both() -> tuple[dict[str, str], dict[str, str]]:
        ours_ = {c["detail"].split('[hooks.state."')[1].split('"]')[0]: c for c in _trust_checks(doctor()).values()}
        return {k: c["status"] for k, c in ours_.items()}, _codex_says(isolated_home, folder)

    def doctor() -> dict[str, Any]:
        return run_cli("connectors", "doctor", "codex", "--no-fire", "--json").json()

    assert run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root)).code == 0
    mine, codex = both()
    assert len(mine) == 4 and all(codex[k] == "untrusted" for k in mine) and set(mine.values()) == {"fail"}
    trust_codex_hooks(codex_home)  # the hashes remnic computes: Codex must call them trusted
    mine, codex = both()
    assert all(codex[k] == "trusted" for k in mine) and set(mine.values()) == {"ok"}
    other = copied_memory_root(memory_template, tmp_path / "other")  # another memory repository
    assert run_cli("connectors", "install", "codex", "--memory-dir", str(other)).code == 0
    mine, codex = both()
    assert all(codex[k] == "modified" for k in mine) and set(mine.values()) == {"fail"}


@pytest.mark.skipif(CLIS is None, reason="set REMNIC_HOST_CLIS to a folder holding the codex CLI")
@pytest.mark.parametrize("timeout", [10, None])
def test_doctor_agrees_with_the_real_codex_on_a_session_end_timeout_it_clamps(
    memory: Memory, isolated_home: Path, tmp_path: Path, timeout: int | None
) -> None:
    """A SessionEnd timeout raised (or removed) and then trusted as /hooks does: with Codex's own
    currentHash. Codex runs it, so doctor must call it trusted."""
    folder = tmp_path / "work"
    folder.mkdir()
    assert run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root)).code == 0
    codex_home = isolated_home / ".codex"
    path = codex_home / "hooks.json"
    data = json.loads(path.read_text())
    handler = data["hooks"]["SessionEnd"][0]["hooks"][0]
    if timeout is None:
        del handler["timeout"]
    else:
        handler["timeout"] = timeout
    path.write_text(json.dumps(data, indent=2))
    listed = _codex_hooks(isolated_home, folder)
    config = codex_home / "config.toml"
    config.write_text(
        (config.read_text() if config.exists() else "")
        + "".join(f'[hooks.state."{h["key"]}"]\ntrusted_hash = "{h["currentHash"]}"\n' for h in listed)
    )
    assert {h["key"]: h["trustStatus"] for h in _codex_hooks(isolated_home, folder)} == dict.fromkeys(
        [h["key"] for h in listed], "trusted"
    )
    doctor = run_cli("connectors", "doctor", "codex", "--no-fire", "--json")
    assert doctor.code == 0 and doctor.json()["healthy"], doctor.out
    assert {c["status"] for c in _trust_checks(doctor.json()).values()} == {"ok"}
