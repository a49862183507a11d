"""The hooks run in folders remnic does not own: never import Python from there, and say so when
remnic cannot run at all.

Agent hosts run hooks in the session's project folder, git in the memory repository, and Claude
Code starts an MCP server in the project: ``python -m`` would put that folder first on sys.path,
so a project's json.py would run and its uuid.py would stop remnic. Real hook scripts, real git
commits, the real settings files ``connectors install`` writes, in a temporary HOME.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_hooks import hook_env, user_git

from remnic.service.githooks import hooks_source_dir
from remnic.service.memory import Memory

_DECOY = "open({marker!r}, 'w').write('imported')\n"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A project holding a json.py that leaves a marker when imported, and a harmless uuid.py."""
    project, marker = tmp_path / "proj", tmp_path / "MARKER"
    project.mkdir()
    (project / "json.py").write_text(_DECOY.format(marker=str(marker)))
    (project / "uuid.py").write_text("X = 1\n")
    return project, marker


def _commands(home: Path, host: str) -> dict[str, str]:
    path = home / (".claude/settings.json" if host == "claude-code" else ".codex/hooks.json")
    hooks = json.loads(path.read_text())["hooks"]
    return {event: hooks[event][-1]["hooks"][0]["command"] for event in hooks}


def _transcript(path: Path) -> Path:
    rows = [("user", "Our deploys go out on Tuesdays."), ("assistant", "Noted.")]
    with path.open("w") as fh:
        for i, (role, text) in enumerate(rows):
            content = text if role == "user" else [{"type": "text", "text": text}]
            line = {"type": role, "uuid": f"u{i}", "sessionId": "s1", "timestamp": f"2026-11-27T10:0{i}:00Z"}
            fh.write(json.dumps({**line, "message": {"role": role, "content": content}}) + "\n")
    return path


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_installed_agent_hooks_never_import_the_projects_python_files(
    memory: Memory, isolated_home: Path, tmp_path: Path, host: str
) -> None:
    memory.store("Never force-push to main", category="rule", importance=0.95)
    assert run_cli("connectors", "install", host, "--memory-dir", str(memory.root)).code == 0
    commands = _commands(isolated_home, host)
    project, marker = _project(tmp_path)
    env = hook_env(HOME=str(isolated_home), REMNIC_HOOK_STATUS=str(tmp_path / "status.json"))

    def fire(event: str, payload: dict) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "-c", commands[event]],
            input=json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": event, **payload}),
            capture_output=True,
            text=True,
            cwd=project,
            env=env,
            timeout=120,
        )

    start = fire("SessionStart", {"source": "startup"})
    assert start.returncode == 0
    assert "Never force-push to main" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    stop = fire("Stop", {"transcript_path": str(_transcript(tmp_path / "t.jsonl"))})
    assert stop.returncode == 0 and stop.stdout == ""
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["ok"] and status["hook"] == "stop", status
    assert not marker.exists()


def test_git_hooks_never_import_the_memory_repositorys_python_files(memory: Memory, tmp_path: Path) -> None:
    assert run_cli("hooks", "install", "--memory-dir", str(memory.root)).code == 0
    marker = tmp_path / "MARKER"
    (memory.root / "json.py").write_text(_DECOY.format(marker=str(marker)))
    (memory.root / "uuid.py").write_text("X = 1\n")
    user_git(memory.root, "add", "json.py", "uuid.py")
    commit = user_git(memory.root, "commit", "-m", "a shared json.py", check=False)
    assert commit.returncode == 0, commit.stderr
    assert "Traceback" not in commit.stderr
    user_git(memory.root, "checkout", "-q", "-b", "other")  # post-checkout runs too
    assert not marker.exists()


def test_the_mcp_command_install_prints_ignores_the_projects_python_files(
    memory: Memory, isolated_home: Path, tmp_path: Path
) -> None:
    hint = run_cli("connectors", "install", "claude-code", "--memory-dir", str(memory.root), "--json").json()["mcp"]
    command = shlex.split(hint.split(" -- ", 1)[1])
    project, marker = _project(tmp_path)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    proc = subprocess.run(
        command,
        input=json.dumps(hello) + "\n",
        capture_output=True,
        text=True,
        cwd=project,
        env=hook_env(HOME=str(isolated_home)),
        timeout=120,
    )
    assert json.loads(proc.stdout.splitlines()[0])["id"] == 1, proc.stderr[-2000:]
    assert not marker.exists()


def test_doctor_fails_a_hooks_folder_that_imports_the_session_folders_python(
    memory: Memory, isolated_home: Path, tmp_path: Path
) -> None:
    """An older remnic's hooks folder (no -P) is what a handler may still name: doctor fires it in a
    folder holding a json.py and says that folder's files get imported. (This remnic's own hooks pass
    that check: test_connectors.py's test_doctor_fires_each_hook_and_says_what_is_missing.)"""
    old = tmp_path / "old" / "_hooks"
    shutil.copytree(hooks_source_dir(), old, symlinks=False)
    runner = old / "agent-hook.sh"
    runner.write_text(runner.read_text().replace(" -P -m remnic", " -m remnic"))
    config = isolated_home / ".claude" / "settings.json"
    assert run_cli("connectors", "install", "claude-code", "--memory-dir", str(memory.root)).code == 0
    settings = json.loads(config.read_text().replace(str(hooks_source_dir()), str(old)))
    # Its Stop handler alone: the check fires one handler of each hooks folder; the others would each be
    # fired too (a recall, two flushes) for checks this test does not read.
    settings["hooks"] = {"Stop": settings["hooks"]["Stop"]}
    config.write_text(json.dumps(settings))
    doctor = run_cli("connectors", "doctor", "claude-code", "--json")
    assert doctor.code == 1
    check = {c["name"]: c for c in doctor.json()["checks"]}["project modules ignored"]
    assert not check["ok"] and check["status"] == "fail" and str(old) in check["detail"]
    assert "connectors install claude-code" in check["detail"]


def _tools(tmp_path: Path) -> Path:
    """A PATH with what a POSIX shell script needs, but neither remnic nor python3."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "mktemp", "cat", "grep", "tail", "rm", "tr", "cut", "sed"):
        found = shutil.which(tool, path="/usr/bin:/bin")
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    return bin_dir


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_session_start_says_so_when_remnic_cannot_run(memory: Memory, tmp_path: Path, host: str) -> None:
    crashing = tmp_path / "crashing-python"
    crashing.write_text("#!/bin/sh\necho 'Fatal Python error: \"boom\" \\\\ here' >&2\nexit 3\n")
    crashing.chmod(0o755)
    cases = [
        ({"REMNIC_PYTHON": "/nonexistent/python", "PATH": str(_tools(tmp_path))}, "no remnic and no python3 on PATH"),
        ({"REMNIC_PYTHON": str(crashing), "PATH": "/usr/bin:/bin"}, 'exited 3: Fatal Python error: "boom" \\ here'),
    ]
    payload = {"session_id": "s", "cwd": str(tmp_path), "source": "startup"}
    for env, why in cases:
        base = {"HOME": str(tmp_path), "REMNIC_MEMORY_DIR": str(memory.root), **env}
        script = hooks_source_dir() / host
        start = subprocess.run(
            [str(script / "session-start.sh")],
            input=json.dumps({**payload, "hook_event_name": "SessionStart"}),
            capture_output=True,
            text=True,
            env=base,
            timeout=60,
        )
        assert start.returncode == 0
        assert len(start.stdout.splitlines()) == 1, start.stdout
        out = json.loads(start.stdout)
        assert out["systemMessage"].startswith("remnic: hooks could not run (") and why in out["systemMessage"]
        assert "remnic connectors doctor" in out["systemMessage"]
        assert out["hookSpecificOutput"] == {"hookEventName": "SessionStart", "additionalContext": ""}
        for event in ("stop", "pre-compact", "session-end"):
            other = subprocess.run(
                [str(script / f"{event}.sh")], input=json.dumps(payload), capture_output=True, text=True, env=base
            )
            assert other.returncode == 0 and other.stdout == "" and other.stderr == ""


def test_a_session_start_that_ran_and_found_nothing_stays_silent(memory: Memory, tmp_path: Path) -> None:
    """Only a run that could not start (or crashed) gets the message: an empty repository is no failure."""
    env = hook_env(HOME=str(tmp_path), REMNIC_PYTHON=sys.executable, REMNIC_MEMORY_DIR=str(memory.root))
    proc = subprocess.run(
        [str(hooks_source_dir() / "claude-code" / "session-start.sh")],
        input=json.dumps({"session_id": "s", "cwd": str(tmp_path), "source": "startup"}),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=os.fspath(tmp_path),
    )
    assert proc.returncode == 0 and proc.stdout == ""
