"""Git hooks in a real repository (real `git commit`, checkout, pull, amend) and the agent host hooks."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GIT_IDENTITY, Result, run_cli

from remnic.config import settings_for
from remnic.drivers.hooks import transcript_messages
from remnic.repo.githooks import GIT_HOOKS, hooks_source_dir
from remnic.service.memory import Memory
from remnic.sync.state import SyncState

# remnic is NOT on this PATH: the hooks must find the interpreter recorded at install time.
BARE_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("REMNIC_", "VIRTUAL_ENV"))}
BARE_ENV["PATH"] = "/usr/bin:/bin"


def hook_env(**extra: str) -> dict[str, str]:
    """BARE_ENV for a process of this test: its HOME, and the run's model cache (conftest's model_cache;
    not in BARE_ENV, which is made before any test): a fresh HOME alone would have each hook that loads
    the model rewrite it again (about a second)."""
    return {**BARE_ENV, "HOME": os.environ["HOME"], "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], **extra}


def user_git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, env=BARE_ENV, check=check
    )


@pytest.fixture
def hooked(memory: Memory) -> Memory:
    result = run_cli("hooks", "install", "--memory-dir", str(memory.root))
    assert result.code == 0, result.err
    return memory


def test_install_status_and_recorded_interpreter(hooked: Memory) -> None:
    hooks_dir = hooked.root / ".git" / "hooks"
    for name in (*GIT_HOOKS, "remnic-hook"):
        assert os.access(hooks_dir / name, os.X_OK), name
    assert f"REMNIC_PYTHON_RECORDED={sys.executable}" in (hooks_dir / "remnic-hook").read_text()
    status = run_cli("hooks", "status", "--json", "--memory-dir", str(hooked.root))
    assert status.code == 0
    assert {r["hook"]: r["state"] for r in status.json()["git"]} == {h: "installed" for h in GIT_HOOKS}
    again = run_cli("hooks", "install", "--memory-dir", str(hooked.root))
    assert again.code == 0 and "already installed" in again.out


def test_pre_commit_rejects_a_malformed_file_in_a_real_git_commit(hooked: Memory) -> None:
    root = hooked.root
    bad = root / "facts/bad.md"
    bad.write_text("---\nid: mem_bad\nstatus: [actve\n---\nA memory with a typo in its status\n")
    (root / "facts/good.md").write_text("A good memory.\n")
    user_git(root, "add", "facts/bad.md", "facts/good.md")
    head = hooked.ledger.head()
    proc = user_git(root, "commit", "-m", "add memories by hand", check=False)
    assert proc.returncode != 0
    assert "facts/bad.md:3: frontmatter: invalid YAML" in proc.stderr
    assert "--no-verify" in proc.stderr
    assert hooked.ledger.head() == head

    # The hook reads what is staged: fixing the working tree alone is not enough.
    bad.write_text(bad.read_text().replace("[actve", "active"))
    assert user_git(root, "commit", "-m", "still the staged typo", check=False).returncode != 0
    user_git(root, "add", "facts/bad.md")
    ok = user_git(root, "commit", "-m", "add memories by hand", check=False)
    assert ok.returncode == 0, ok.stderr
    assert hooked.ledger.head() != head


def test_pre_commit_ignores_files_that_are_not_memories(hooked: Memory) -> None:
    (hooked.root / "README.md").write_text("---\nnot: [valid\n---\n")
    (hooked.root / "notes.txt").write_text("anything")
    user_git(hooked.root, "add", "README.md", "notes.txt")
    assert user_git(hooked.root, "commit", "-m", "docs", check=False).returncode == 0


def test_post_checkout_merge_and_rewrite_update_the_index(hooked: Memory, tmp_path: Path) -> None:
    root = hooked.root
    first = hooked.store("Hooks memory one", category="fact").record
    old = hooked.ledger.head()
    second = hooked.store("Hooks memory two", category="fact").record
    hooked.sync()
    new = hooked.ledger.head()

    proc = user_git(root, "checkout", "-q", old)
    assert proc.returncode == 0, proc.stderr
    assert SyncState.load(root).commit == old  # post-checkout ran an index update
    assert hooked.index.manifest().commit == old and hooked.index.path_of(second.id) is None
    user_git(root, "checkout", "-q", "main")
    assert SyncState.load(root).commit == new
    assert hooked.index.manifest().commit == new and hooked.index.path_of(second.id) == second.path

    # post-rewrite: an amend by hand (the hook never commits or rewrites files itself).
    path = root / first.path
    path.write_text(path.read_text().replace("one", "uno"))
    user_git(root, "commit", "-q", "-a", "--amend", "--no-edit", "--no-verify")
    amended = hooked.ledger.head()
    assert SyncState.load(root).commit == amended
    assert user_git(root, "status", "--porcelain").stdout == ""

    hooked.sync()  # the amend left a stale contentHash: fix it before cloning

    # post-merge: a pull into a clone that has the hooks installed.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True, env=BARE_ENV)
    cloned = Memory.open(settings=settings_for(clone))
    try:
        assert run_cli("hooks", "install", "--memory-dir", str(clone)).code == 0
        cloned.sync()
        third = hooked.store("Hooks memory three, pulled", category="fact").record
        pull = user_git(clone, "pull", "-q", "--no-rebase", "origin", "main", check=False)
        assert pull.returncode == 0, pull.stderr
        assert SyncState.load(clone).commit == hooked.ledger.head() == cloned.ledger.head()
        assert cloned.get(third.id).content == "Hooks memory three, pulled"
        try:
            index = cloned.index
        except ImportError:
            index = None
        if index is not None:
            assert index.path_of(third.id) == third.path
            assert index.path_of(second.id) == second.path
    finally:
        cloned.close()


def test_foreign_hook_is_kept_chained_and_restored(memory: Memory) -> None:
    hooks_dir = memory.root / ".git" / "hooks"
    theirs = hooks_dir / "pre-commit"
    theirs.write_text("#!/bin/sh\necho their-hook-ran >&2\nexit 0\n")
    theirs.chmod(0o755)
    result = run_cli("hooks", "install", "--memory-dir", str(memory.root))
    assert result.code == 1 and "pre-commit: skipped" in result.out
    assert "their-hook-ran" in theirs.read_text()
    result = run_cli("hooks", "install", "--force", "--memory-dir", str(memory.root))
    assert result.code == 0 and (hooks_dir / "pre-commit.pre-remnic").exists()
    (memory.root / "facts/bad.md").write_text("---\nconfidence: [lots\n---\nx\n")
    user_git(memory.root, "add", "facts/bad.md")
    proc = user_git(memory.root, "commit", "-m", "x", check=False)
    assert proc.returncode != 0 and "their-hook-ran" in proc.stderr and "invalid YAML" in proc.stderr
    result = run_cli("hooks", "uninstall", "--memory-dir", str(memory.root))
    assert result.code == 0
    assert "their-hook-ran" in theirs.read_text() and not (hooks_dir / "pre-commit.pre-remnic").exists()
    assert not (hooks_dir / "post-merge").exists()


def test_hook_scripts_are_posix_sh() -> None:
    scripts = [p for p in hooks_source_dir().rglob("*") if p.is_file() and p.name != "README.md"]
    assert len(scripts) >= 12
    for script in scripts:
        assert os.access(script, os.X_OK), script
        assert script.read_text().startswith("#!/bin/sh\n"), script
        subprocess.run(["sh", "-n", str(script)], check=True)


CLAUDE_TRANSCRIPT = [
    {"type": "user", "message": {"role": "user", "content": "We deploy on Fridays now."}},
    {
        "type": "assistant",
        "message": {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Noted: deploys move to Friday."},
                {"type": "tool_use", "name": "Bash"},
            ],
        },
    },
    {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}},
    {"type": "user", "isMeta": True, "message": {"role": "user", "content": "<command-name>/clear"}},
]
CODEX_TRANSCRIPT = [
    {"type": "session_meta", "payload": {"id": "s1"}},
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}],
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Use pnpm, not npm."}],
        },
    },
    {"type": "response_item", "payload": {"type": "function_call", "name": "shell"}},
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Switched the scripts to pnpm."}],
        },
    },
]


def test_transcript_parsing_for_both_hosts() -> None:
    claude = transcript_messages(json.dumps(x) for x in CLAUDE_TRANSCRIPT)
    assert claude == [
        {"role": "user", "content": "We deploy on Fridays now."},
        {"role": "assistant", "content": "Noted: deploys move to Friday."},
    ]
    codex = transcript_messages(json.dumps(x) for x in CODEX_TRANSCRIPT)
    assert codex == [
        {"role": "user", "content": "Use pnpm, not npm."},
        {"role": "assistant", "content": "Switched the scripts to pnpm."},
    ]


def run_agent_script(
    host: str, event: str, payload: dict, memory_dir: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    script = hooks_source_dir() / host / f"{event}.sh"
    return subprocess.run(
        [str(script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=hook_env(REMNIC_PYTHON=sys.executable, REMNIC_MEMORY_DIR=str(memory_dir), **env),
        timeout=120,
    )


def run_agent_hook(host: str, event: str, payload: dict, memory_dir: Path) -> Result:
    """`remnic hooks run <event> --host <host>` in this process, ``payload`` on stdin: for a test of what a
    hook does rather than of the scripts that start it (run_agent_script runs those)."""
    stdin, sys.stdin = sys.stdin, io.StringIO(json.dumps(payload))
    try:
        return run_cli("hooks", "run", event, "--host", host, "--memory-dir", str(memory_dir))
    finally:
        sys.stdin = stdin


def imported(log: Path) -> set[str]:
    """The modules a hook run imported, from the PYTHONPROFILEIMPORTTIME lines in its log."""
    lines = log.read_text().splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:") and "|" in line}


# What a hook that flushes nothing needs neither: the extraction rules, other commands' parsers.
NOT_FOR_A_PLAIN_HOOK = {"remnic.observe.pipeline", "remnic.service.flushing", "remnic.cli.memories"}


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_agent_session_start_recalls_memories(memory: Memory, tmp_path: Path, host: str) -> None:
    memory.store("The billing-service deploys through Argo", category="fact", tags=["billing-service"])
    memory.store("Unrelated: the cafeteria opens at eight", category="fact", importance=0.9)
    project = tmp_path / "billing-service"
    project.mkdir()
    log = tmp_path / "hook.log"
    proc = run_agent_script(
        host,
        "session-start",
        {"session_id": "s1", "cwd": str(project), "source": "startup", "hook_event_name": "SessionStart"},
        memory.root,
        REMNIC_HOOK_LOG=str(log),
        PYTHONPROFILEIMPORTTIME="1",
    )
    assert proc.returncode == 0, proc.stderr
    assert "remnic.index.search" in imported(log) and not imported(log) & NOT_FOR_A_PLAIN_HOOK  # no idle session
    out = json.loads(proc.stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    lines = [line for line in context.splitlines() if line.startswith("- ")]
    assert "billing-service deploys through Argo" in lines[0]  # the project's memory comes first


@pytest.mark.parametrize("host,transcript", [("claude-code", CLAUDE_TRANSCRIPT), ("codex", CODEX_TRANSCRIPT)])
def test_agent_stop_hands_new_turns_to_observe_once(
    memory: Memory, tmp_path: Path, host: str, transcript: list
) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in transcript))
    payload = {"session_id": "sess-1", "transcript_path": str(path), "hook_event_name": "Stop"}
    log = tmp_path / "hook.log"
    proc = run_agent_script(host, "stop", payload, memory.root, REMNIC_HOOK_LOG=str(log), PYTHONPROFILEIMPORTTIME="1")
    assert proc.returncode == 0 and proc.stdout == ""
    assert "remnic.service.observing" in imported(log) and not imported(log) & NOT_FOR_A_PLAIN_HOOK  # buffered only
    archived = [
        json.loads(line)
        for f in (memory.root / "state" / "transcripts").rglob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert [a["role"] for a in archived] == ["user", "assistant"]
    assert all(a["sessionKey"] == f"{host}:sess-1" for a in archived)
    # The next Stop (or a PreCompact) hands over only what is new.
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "user", "message": {"role": "user", "content": "One more thing."}}) + "\n")
    assert run_agent_hook(host, "pre-compact", {**payload, "hook_event_name": "PreCompact"}, memory.root).code == 0
    archived = [
        json.loads(line)
        for f in (memory.root / "state" / "transcripts").rglob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert [a["content"] for a in archived][-1] == "One more thing." and len(archived) == 3


DURABLE_TURNS = [
    {"type": "user", "uuid": "u1", "timestamp": "2026-05-04T09:00:00Z",
     "message": {"role": "user", "content": "We decided to cut releases every Tuesday from now on."}},
    {"type": "assistant", "uuid": "a1", "timestamp": "2026-05-04T09:00:05Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted. I'll update the docs now."}]}},
]  # fmt: skip


def _codex(lines: list[dict]) -> list[dict]:
    return [
        {"timestamp": x["timestamp"], "type": "response_item", "payload": {
            "type": "message", "id": x["uuid"], "role": x["message"]["role"],
            "content": [{"type": "input_text", "text": x["message"]["content"]}] if isinstance(
                x["message"]["content"], str) else x["message"]["content"]}}
        for x in lines
    ]  # fmt: skip


def _flush_reasons(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%(trailers:key=Remnic-Flush-Reason,valueonly)"], cwd=root, capture_output=True,
        text=True, check=True,
    ).stdout  # fmt: skip
    return [line.strip() for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "host,end", [("claude-code", "session-end"), ("codex", "pre-compact"), ("codex", "session-end")]
)
def test_agent_hooks_turn_the_session_into_memories_at_its_end_or_compaction(
    memory: Memory, tmp_path: Path, host: str, end: str
) -> None:
    path = tmp_path / "transcript.jsonl"
    lines = DURABLE_TURNS if host == "claude-code" else _codex(DURABLE_TURNS)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    payload = {"session_id": "sess-9", "transcript_path": str(path), "cwd": str(tmp_path)}
    stop = run_agent_hook(host, "stop", {**payload, "hook_event_name": "Stop"}, memory.root)  # its script: above
    assert stop.code == 0 and stop.out == ""
    assert memory.list() == [] and _flush_reasons(memory.root) == []  # a Stop comes after every response
    event = {"hook_event_name": "SessionEnd", "reason": "other"}  # Codex 0.171's only reason
    done = run_agent_script(host, end, {**payload, **event}, memory.root)
    assert done.returncode == 0
    contents = [r.content for r in memory.list()]
    assert contents == ["We decided to cut releases every Tuesday from now on."]  # the chatter is not kept
    record = memory.list()[0]
    assert record.frontmatter["sessionKey"] == f"{host}:sess-9" and record.frontmatter["sourceTurnIds"] == ["u1"]
    assert _flush_reasons(memory.root) == ["session-end" if end == "session-end" else "compaction"]


def test_a_session_left_idle_is_flushed_by_the_next_session_start(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in _codex(DURABLE_TURNS)))
    payload = {"session_id": "left", "transcript_path": str(path), "hook_event_name": "Stop"}
    # The hooks' logic in this process: the scripts are the tests' above.
    assert run_agent_hook("codex", "stop", payload, memory.root).code == 0
    journal = next((memory.root / "state" / "observe-buffer").rglob("*.jsonl"))
    start = {"session_id": "next", "cwd": str(tmp_path), "source": "startup", "hook_event_name": "SessionStart"}
    assert run_agent_hook("codex", "session-start", start, memory.root).code == 0
    assert memory.list() == []  # not idle yet: the session may go on
    hours_ago = journal.stat().st_mtime - 2 * 3600  # observe.bufferMaxMinutes is 30
    os.utime(journal, (hours_ago, hours_ago))
    assert run_agent_hook("codex", "session-start", start, memory.root).code == 0
    assert [r.content for r in memory.list()] == ["We decided to cut releases every Tuesday from now on."]
    assert _flush_reasons(memory.root) == ["session-end"]


def test_agent_hook_never_fails_the_session(tmp_path: Path) -> None:
    proc = run_agent_script("claude-code", "session-start", {"cwd": str(tmp_path)}, tmp_path / "missing")
    # No memories, but not silently: the host shows the user why (see test_first_hour_setup.py).
    assert proc.returncode == 0 and "additionalContext" in proc.stdout
    assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == ""
    proc = run_agent_script("claude-code", "stop", {"cwd": str(tmp_path)}, tmp_path / "missing")
    assert proc.returncode == 0 and proc.stdout == ""


def test_agent_config_points_at_existing_scripts(memory: Memory) -> None:
    result = run_cli("hooks", "agent-config", "claude-code", "--memory-dir", str(memory.root))
    config = json.loads(result.out)
    for event in ("SessionStart", "Stop", "PreCompact"):
        command = config["hooks"][event][0]["hooks"][0]["command"]
        script = command.split()[-1]
        assert Path(script).is_file() and os.access(script, os.X_OK)
        assert f"REMNIC_PYTHON={sys.executable}" in command


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_agent_config_matches_what_connectors_install_writes(memory: Memory, host: str) -> None:
    from remnic.drivers.connectors import HOSTS, command_for, host_events

    config = json.loads(run_cli("hooks", "agent-config", host, "--memory-dir", str(memory.root)).out)["hooks"]
    assert sorted(config) == sorted(host_events(host))
    assert config["SessionStart"][0]["matcher"] == HOSTS[host].session_matcher
    for event, groups in config.items():  # the very commands install writes, memory repository included
        expected = command_for(HOSTS[host], event, python=sys.executable, memory_dir=memory.root)
        assert groups[0]["hooks"][0]["command"] == expected
