"""Agent hooks and connectors: the pinned budget, hook status, matchers, write errors (r29)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Result, run_cli

from remnic.drivers.connectors.doctor import _fired
from remnic.drivers.hooks import session_context
from remnic.service.memory import Memory

LONG_RULE = "Release rule: " + "every release needs two reviewer sign-offs and a green CI run. " * 35


def _bullets(context: str) -> list[str]:
    return [line for line in context.splitlines() if line.startswith("- ")]


def _pinned(context: str) -> list[str]:
    section = context.split("Pinned (rules, principles, key preferences):\n", 1)[1].split("\n\n", 1)[0]
    return _bullets(section)


def test_a_pinned_memory_longer_than_the_budget_is_trimmed_and_the_rest_still_pinned(
    memory: Memory, tmp_path: Path
) -> None:
    long = memory.store(LONG_RULE, category="rule", importance=1.0).record
    tests = memory.store("Always run the tests before pushing", category="rule", importance=0.9).record
    tabs = memory.store("Use tabs for indentation in Go", category="preference", importance=0.8).record
    assert len(LONG_RULE) > memory.settings.hooks.pinned_budget_chars
    pinned = _pinned(session_context(memory, {"cwd": str(tmp_path)}))
    assert [line.rsplit("(", 1)[1] for line in pinned] == [f"{long.id})", f"{tests.id})", f"{tabs.id})"]
    assert pinned[0].startswith("- [rule] Release rule: every release needs") and "…" in pinned[0]
    assert not pinned[0].split(" (mem")[0].endswith(("sign-off…", "sign-offs an…"))  # a word boundary
    assert sum(len(line) + 1 for line in pinned) <= memory.settings.hooks.pinned_budget_chars


def test_a_long_pinned_memory_ranked_lower_does_not_drop_the_ones_after_it(memory: Memory, tmp_path: Path) -> None:
    memory.store("Always run the tests before pushing", category="rule", importance=0.9)
    memory.store(LONG_RULE, category="rule", importance=0.75)
    memory.store("Use tabs for indentation in Go", category="preference", importance=0.72)
    pinned = _pinned(session_context(memory, {"cwd": str(tmp_path)}))
    assert len(pinned) == 3
    assert "Always run the tests" in pinned[0] and "Release rule" in pinned[1] and "tabs" in pinned[2]


def test_a_pinned_memory_is_skipped_when_too_little_budget_is_left(memory: Memory, tmp_path: Path) -> None:
    memory.settings.hooks.pinned_budget_chars = 300
    memory.store("R" * 60 + " always review the migration scripts twice", category="rule", importance=0.95)
    memory.store("x" * 150 + " second rule that is fairly long " + "y" * 150, category="rule", importance=0.9)
    memory.store("Short rule", category="rule", importance=0.8)
    pinned = _pinned(session_context(memory, {"cwd": str(tmp_path)}))
    assert any("Short rule" in line for line in pinned)
    assert sum(len(line) + 1 for line in pinned) <= 300


def test_doctor_does_not_say_no_memories_when_there_are_some() -> None:
    run = {"code": 0, "out": "", "log": "", "status": {"ok": True, "memoryDir": "/m", "activeMemories": 4}}
    check = _fired("SessionStart", run)
    assert check["ok"] and "no memories yet" not in check["detail"] and "4 active memories" in check["detail"]
    run["status"] = {"ok": True, "memoryDir": "/m", "activeMemories": 0}
    assert "no memories yet" in _fired("SessionStart", run)["detail"]


def _say(memory: Memory, session: str, texts: list[str], hour: str) -> Any:
    messages = [
        {"role": "user", "speaker": "Ana", "content": t, "timestamp": f"2026-05-05T{hour}:00:00Z"} for t in texts
    ]
    return memory.observe(session, messages, flush=True).flushes[0]


def test_a_flush_reads_each_memory_about_an_entity_once(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    said = [
        "The billing service port is 8001.",
        "The billing service owner is Priya.",
        "The billing service database is postgres.",
        "The billing service region is eu-west-1.",
    ]
    first = _say(memory, "s1", said, "10")
    assert len(first.created) == 4 and memory.has_index()
    reads: Counter[str] = Counter()
    real = memory.files.read

    def counting(rel: str) -> Any:  # the real read, counted
        reads[rel] += 1
        return real(rel)

    monkeypatch.setattr(memory.files, "read", counting)
    new = [
        "The billing service cache is redis.",
        "The billing service language is Go.",
        "The billing service port is 8002.",
    ]
    later = _say(memory, "s2", new, "11")
    assert len(later.superseded) == 1  # the flush still decides as before
    # At most once each: a file the scan memo already holds (older than its two-second racy window on a
    # slow run) is not read at all.
    untouched = [p for p in reads if "port-is-8001" not in p]
    assert len(untouched) <= 3 and all(reads[p] == 1 for p in untouched), reads
    port = memory.get(later.superseded[0])
    assert port.content == "The billing service port is 8001." and port.status == "superseded"


# --- a host config that cannot be written ---


def _connectors(*args: str) -> Any:
    return run_cli("connectors", *args)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder that cannot be written, for real: a read-only tmpfs as root, else a folder chmod 555."""
    where = tmp_path / "ro"
    where.mkdir()
    if os.geteuid() != 0:
        yield where
        return
    if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(where)], capture_output=True).returncode != 0:
        pytest.skip("root without mount: no way to make a folder root cannot write")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)


def _make_read_only(where: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
    else:
        where.chmod(0o555)


@pytest.mark.parametrize("installed", [False, True])
def test_install_and_remove_on_a_read_only_config_change_nothing_and_say_why(
    memory: Memory, read_only_dir: Path, installed: bool
) -> None:
    path = read_only_dir / "settings.json"
    path.write_text('{"model": "opus"}\n')
    if installed:
        assert _connectors("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root)).code == 0
        for backup in read_only_dir.glob("*.remnic-backup-*"):
            backup.unlink()
    before = path.read_bytes()
    _make_read_only(read_only_dir)
    try:
        cmd = (
            ("remove", "claude-code", "--config", str(path))
            if installed
            else ("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root))
        )
        text = _connectors(*cmd)
        assert text.code == 1 and "Traceback" not in text.err, text.err
        assert text.err.startswith(f"remnic: error: cannot write {path}: ") and text.err.count("\n") == 1
        assert "read-only file system" in text.err or "permission denied" in text.err
        js = _connectors(*cmd, "--json")
        assert js.code == 1 and json.loads(js.err)["code"] == "config_not_written"
        assert path.read_bytes() == before and not list(read_only_dir.glob("*.remnic-backup-*"))
    finally:
        if os.geteuid() != 0:
            read_only_dir.chmod(0o755)


def test_install_where_the_config_folder_cannot_be_made_is_one_clear_error(
    memory: Memory, read_only_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _make_read_only(read_only_dir)
    path = read_only_dir / "claude" / "settings.json"
    try:
        # A --config folder that is missing is refused before anything is tried (a folder typed wrong
        # would get hooks no host reads): one line naming the flag, the folder and the way out.
        text = _connectors("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root))
        assert text.code == 2 and "Traceback" not in text.err and text.err.count("\n") == 1
        assert text.err.startswith(f"remnic: error: --config {str(path)!r}: directory {path.parent} does not exist")
        assert "create it first, or leave out --config" in text.err
        js = _connectors("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root), "--json")
        assert js.code == 2 and js.out == "" and json.loads(js.err)["code"] == "input_error"
        assert str(path.parent) in json.loads(js.err)["error"] and not path.parent.exists()
        # The host's own config folder is made when missing; where it cannot be, that is the one error.
        monkeypatch.setenv("HOME", str(read_only_dir / "home"))
        own = read_only_dir / "home" / ".claude" / "settings.json"
        text = _connectors("install", "claude-code", "--memory-dir", str(memory.root))
        assert text.code == 1 and "Traceback" not in text.err and text.err.count("\n") == 1, text.err
        assert text.err.startswith(f"remnic: error: cannot write {own}: cannot create its folder {own.parent.parent}")
        js = _connectors("install", "claude-code", "--memory-dir", str(memory.root), "--json")
        assert js.code == 1 and json.loads(js.err)["code"] == "config_not_written"
        assert str(own) in json.loads(js.err)["error"] and not (read_only_dir / "home").exists()
    finally:
        if os.geteuid() != 0:
            read_only_dir.chmod(0o755)


# --- SessionStart matchers, Codex's SessionEnd ---

OLD_REMNIC_START = "REMNIC_PYTHON=/usr/bin/python3 /opt/remnic/hooks/claude-code/session-start.sh"


def _start_groups(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["hooks"]["SessionStart"]


def test_upgrading_an_older_handler_widens_its_narrow_matcher_and_doctor_flags_it(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "settings.json"
    theirs = {"hooks": [{"type": "command", "command": "~/.claude/hooks/claude-code/session-start.sh --my-own"}]}
    old = {"matcher": "startup", "hooks": [{"type": "command", "command": OLD_REMNIC_START}]}
    path.write_text(json.dumps({"hooks": {"SessionStart": [old, theirs]}}, indent=2) + "\n")
    # the matcher is the config's: doctor need not fire the hooks to judge it
    doctor = _connectors("doctor", "claude-code", "--config", str(path), "--no-fire", "--json")
    check = {c["name"]: c for c in doctor.json()["checks"]}["SessionStart matcher"]
    assert doctor.code == 1 and not check["ok"] and "resume, clear, compact" in check["detail"]
    installed = _connectors("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root), "--json")
    assert (
        installed.code == 0
        and "SessionStart: matcher widened to startup|resume|clear|compact" in (installed.json()["changes"])
    )
    groups = _start_groups(path)
    assert (
        groups[0]["matcher"] == "startup|resume|clear|compact" and str(memory.root) in groups[0]["hooks"][0]["command"]
    )
    assert groups[1] == theirs  # someone else's group is untouched
    again = _connectors("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root), "--json")
    assert again.json()["status"] == "already_installed"
    after = {
        c["name"]: c
        for c in _connectors("doctor", "claude-code", "--config", str(path), "--no-fire", "--json").json()["checks"]
    }
    assert after["SessionStart matcher"]["ok"]


def test_a_narrow_group_shared_with_another_hook_keeps_its_matcher_and_remnic_moves_out(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "settings.json"
    mine = {"type": "command", "command": "/usr/local/bin/on-start"}
    shared = {"matcher": "startup", "hooks": [mine, {"type": "command", "command": OLD_REMNIC_START}]}
    path.write_text(json.dumps({"hooks": {"SessionStart": [shared]}}))
    result = _connectors("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root), "--json")
    assert result.code == 0, result.err
    groups = _start_groups(path)
    assert groups[0] == {"matcher": "startup", "hooks": [mine]}
    assert len(groups) == 2 and groups[1]["matcher"] == "startup|resume|clear|compact"
    assert groups[1]["hooks"][0]["command"].endswith("/claude-code/session-start.sh")
    assert _connectors("install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root)).code == 0
    assert len(_start_groups(path)) == 2  # idempotent


def test_codex_gets_session_end_and_the_compact_and_fork_sources(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    result = _connectors("install", "codex", "--config", str(path), "--memory-dir", str(memory.root), "--json")
    assert result.code == 0, result.err
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact|fork"
    end = hooks["SessionEnd"][0]["hooks"][0]["command"]
    assert end.endswith("/codex/session-end.sh") and os.access(end.split()[-1], os.X_OK)
    # A Codex install made before (startup|resume|clear, no SessionEnd) is brought up to date.
    hooks["SessionStart"][0]["matcher"] = "startup|resume|clear"
    del hooks["SessionEnd"]
    path.write_text(json.dumps({"hooks": hooks}))
    changes = _connectors("install", "codex", "--config", str(path), "--memory-dir", str(memory.root), "--json")
    assert sorted(changes.json()["changes"]) == [
        "SessionEnd: added",
        "SessionStart: matcher widened to startup|resume|clear|compact|fork",
    ]


# --- the hook's status: a payload or transcript remnic cannot read ---


def _run_hook(
    event: str, stdin: str, memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Result, dict]:
    """`remnic hooks run <event>` in this process (the scripts that start it are test_hooks.py's), ``stdin``
    as the host sends it: what it printed, and the status it reported in $REMNIC_HOOK_STATUS."""
    status = tmp_path / "status.json"
    monkeypatch.setenv("REMNIC_HOOK_STATUS", str(status))
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    result = run_cli("hooks", "run", event, "--host", "claude-code", "--memory-dir", str(memory.root))
    return result, json.loads(status.read_text())


@pytest.mark.parametrize(
    ("stdin", "says"),
    [
        ("not json", "stdin is not JSON"),
        ("[1, 2]", "not an object (got list)"),
        ('{"session_id": "x1", "transcript_path": "/nonexistent/t.jsonl"}', "cannot read the transcript /nonexistent"),
        ('{"session_id": 123, "transcript_path": ["a"]}', "transcript_path must be a string (got list)"),
    ],
)
def test_a_stop_with_input_remnic_cannot_read_reports_ok_false_and_exits_0(
    memory: Memory, tmp_path: Path, stdin: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, status = _run_hook("stop", stdin, memory, tmp_path, monkeypatch)
    assert result.code == 0 and result.out == ""
    assert status["ok"] is False and says in status["error"], status
    assert not (Path.cwd() / "['a']").exists()


def test_a_good_stop_and_an_unparsable_session_start_report_as_they_went(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.store("Always run the tests before pushing", category="rule", importance=0.9)
    result, status = _run_hook("stop", '{"session_id": "s", "cwd": "/tmp"}', memory, tmp_path, monkeypatch)
    assert result.code == 0 and status["ok"] is True and "error" not in status
    result, status = _run_hook("session-start", "not json", memory, tmp_path, monkeypatch)
    assert result.code == 0 and "Always run the tests" in result.out  # the session still gets its memories
    assert status["ok"] is False and "stdin is not JSON" in status["error"]
    check = _fired("SessionStart", {"code": 0, "out": result.out, "log": "", "status": status})
    assert not check["ok"] and "stdin is not JSON" in check["detail"]


# --- what list and install say in JSON ---


def test_list_json_has_the_state_the_text_shows(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    codex.mkdir()
    (codex / "hooks.json").write_text('{"hooks": [1]}')
    assert _connectors("install", "claude-code", "--memory-dir", str(memory.root)).code == 0
    listed = {r["host"]: r for r in _connectors("list", "--json").json()["connectors"]}
    assert listed["claude-code"]["state"] == "installed" and listed["codex"]["state"] == "unreadable"
    settings = json.loads((claude / "settings.json").read_text())
    del settings["hooks"]["Stop"]
    (claude / "settings.json").write_text(json.dumps(settings))
    (codex / "hooks.json").write_text("{}")
    listed = {r["host"]: r for r in _connectors("list", "--json").json()["connectors"]}
    assert listed["claude-code"]["state"] == "partly" and listed["codex"]["state"] == "not installed"
    row = next(line for line in _connectors("list").out.splitlines() if line.startswith("claude-code"))
    assert row.split()[1] == "partly"


def test_install_json_names_the_config_by_its_absolute_path(memory: Memory, tmp_path: Path) -> None:
    (tmp_path / "s1.json").write_text('{"model": "opus"}\n')
    result = run_cli("connectors", "install", "claude-code", "--config", "s1.json", "--memory-dir", str(memory.root),
                     "--json", cwd=tmp_path)  # fmt: skip
    assert result.code == 0, result.err
    out = result.json()
    assert out["configPath"] == str(tmp_path / "s1.json") and out["backup"].startswith(str(tmp_path / "s1.json"))
    assert Path(out["backup"]).is_file()
