"""A new user's first hour, part one: the README's set-up, the demo's last line, the agent hooks
and the message outside any memory repository — each as the tester met it."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from test_hooks import BARE_ENV

from remnic.repo.githooks import hooks_source_dir
from remnic.service.memory import Memory

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_two_set_up_commands_then_says_to_activate_the_venv() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README, re.DOTALL)
    assert first_block is not None and README.index("```sh") < README.index("## ")
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    between = README[first_block.end() : README.index("## Using it")]
    assert ". .venv/bin/activate" in between and ".venv/bin/remnic" in between
    assert "recreated by every `make demo`" in between


def test_the_demos_closing_command_runs_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from remnic.cli.demo import closing

    monkeypatch.chdir(ROOT)  # where `make demo` runs
    target = ROOT / "build" / "demo-memory"
    text = closing(target)
    assert "(recreated by every `make demo`)" in text
    line = next(x for x in text.splitlines() if x.startswith("Try: "))
    words = shlex.split(line.removeprefix("Try: "))
    # Not on PATH (the venv is not activated): what is printed must work from the project folder.
    env = {**BARE_ENV, "HOME": os.environ["HOME"]}
    if words[0] == "remnic":
        pytest.fail(f"a bare `remnic` is not on PATH after `make demo`: {line}")
    head = words[: words.index("--memory-dir")]
    proc = subprocess.run([*head, "--help"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert words[words.index("--memory-dir") + 1] == "build/demo-memory"


def test_agent_config_names_the_memory_repository(memory: Memory) -> None:
    result = run_cli("hooks", "agent-config", "codex", "--memory-dir", str(memory.root))
    assert result.code == 0, result.err
    for groups in json.loads(result.out)["hooks"].values():
        command = groups[0]["hooks"][0]["command"]
        assert f"REMNIC_MEMORY_DIR={shlex.quote(str(memory.root))} " in command
    # What `connectors install` writes: Codex cuts a SessionEnd timeout over 3 s (and warns each run).
    timeouts = {event: groups[0]["hooks"][0]["timeout"] for event, groups in json.loads(result.out)["hooks"].items()}
    assert timeouts["SessionEnd"] == 3 and timeouts["Stop"] == 60


def test_agent_config_outside_a_memory_repository_is_refused_with_the_ways_to_name_one(tmp_path: Path) -> None:
    result = run_cli("hooks", "agent-config", "claude-code", cwd=tmp_path)
    assert result.code == 1 and result.out == ""
    for way in ("--memory-dir DIR", "REMNIC_MEMORY_DIR", "remnic space create NAME --path DIR --switch", "memoryDir"):
        assert way in result.err, way
    assert "~/.config/remnic/config.json" in result.err


def test_connectors_install_outside_a_repository_offers_the_ways_to_name_one(tmp_path: Path) -> None:
    result = run_cli("connectors", "install", "claude-code", cwd=tmp_path)
    assert result.code == 1
    assert "found via default" not in result.err and "--memory-dir DIR" in result.err
    assert "REMNIC_MEMORY_DIR" in result.err and "space create" in result.err


def test_a_named_but_missing_directory_keeps_the_short_message(tmp_path: Path) -> None:
    result = run_cli("list", "--memory-dir", str(tmp_path / "nope"))
    assert result.code == 2 and "found via --memory-dir" in result.err and "space create" not in result.err


def _run_hook(host: str, event: str, memory_dir: Path, status: Path) -> subprocess.CompletedProcess[str]:
    env = {**BARE_ENV, "HOME": os.environ["HOME"], "REMNIC_PYTHON": sys.executable}
    env.update(REMNIC_MEMORY_DIR=str(memory_dir), REMNIC_HOOK_STATUS=str(status))
    script = hooks_source_dir() / host / f"{event}.sh"
    payload = {"session_id": "s1", "cwd": str(memory_dir.parent), "hook_event_name": "SessionStart"}
    return subprocess.run(
        [str(script)], input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_session_start_without_its_memory_directory_tells_the_user(tmp_path: Path, host: str) -> None:
    missing = tmp_path / "gone"
    proc = _run_hook(host, "session-start", missing, tmp_path / "status.json")
    assert proc.returncode == 0  # never blocks the session
    out = json.loads(proc.stdout)
    assert str(missing) in out["systemMessage"] and "no memories loaded" in out["systemMessage"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"  # Codex requires it
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["ok"] is False and status["memoryDirMissing"] is True and status["memoryDir"] == str(missing)


def test_stop_without_its_memory_directory_reports_it_in_the_status(tmp_path: Path) -> None:
    proc = _run_hook("claude-code", "stop", tmp_path / "gone", tmp_path / "status.json")
    assert proc.returncode == 0 and proc.stdout == ""
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["memoryDirMissing"] is True and "does not exist" in status["error"]


def test_hooks_status_points_to_connectors_install(memory: Memory) -> None:
    out = run_cli("hooks", "status", "--memory-dir", str(memory.root)).out
    assert "remnic connectors install claude-code|codex" in out and "agent-config" not in out


def test_codex_install_names_the_config_toml_it_would_use(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex_home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    result = run_cli("connectors", "install", "codex", "--memory-dir", str(memory.root))
    assert result.code == 0, result.err
    assert f"MCP tools too, in {codex_home / 'config.toml'}:" in result.out and "~/.codex" not in result.out


def test_docs_say_where_the_hook_scripts_are_and_how_connectors_is_called() -> None:
    agents = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    hooks_readme = (ROOT / "hooks" / "README.md").read_text(encoding="utf-8")
    assert "connectors list|install|remove|doctor claude-code|codex" not in agents
    assert "remnic/_hooks/" in agents and "remnic/_hooks/" in hooks_readme
    assert "from your memory repository, or pass `--memory-dir DIR`" in hooks_readme
    # The redirect that replaces a user's other Codex hooks is no longer the suggestion.
    assert "agent-config codex > ~/.codex/hooks.json   #" not in hooks_readme
    assert hooks_source_dir().name == "_hooks"
