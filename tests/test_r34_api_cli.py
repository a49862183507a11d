"""CLI ergonomics: `--out -` is standard output (export, xray) and both share one rule for paths in the
repository; a mistyped flag gets a suggestion; `daemon start --json` keeps `started` a timestamp; Ctrl-C
under --json is a JSON error; the content limit counts the text as stored; the API exports what it returns."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, run_cli

import remnic
from remnic.service.memory import Memory

# --- --out - and the --out rule ---


def test_export_out_dash_is_standard_output(memory: Memory) -> None:
    memory.store("Otters hold hands while sleeping")
    root = memory.root
    result = run_cli("export", "--out", "-", "--memory-dir", str(root), cwd=root)
    assert result.code == 0, result.err
    assert json.loads(result.out.splitlines()[0])["content"] == "Otters hold hands while sleeping"
    assert not (root / "-").exists()
    plain = run_cli("export", "--memory-dir", str(root), cwd=root)
    assert plain.out == result.out
    dotted = run_cli("export", "--out", "./-", "--memory-dir", str(root), cwd=root)  # a file named -
    assert dotted.code == 0 and (root / "-").read_text() == result.out


def test_xray_out_follows_the_export_rule(memory: Memory) -> None:
    memory.store("Otters hold hands while sleeping")
    root = memory.root
    to_stdout = run_cli("xray", "otters", "--out", "-", "--memory-dir", str(root), cwd=root)
    assert to_stdout.code == 0, to_stdout.err
    assert "=== Recall X-ray ===" in to_stdout.out and not (root / "-").exists()
    notes = run_cli("xray", "otters", "--out", "notes.md", "--memory-dir", str(root), cwd=root)
    assert notes.code == 0, notes.err  # a root notes.md is no memory (README): allowed, as for export
    assert "=== Recall X-ray ===" in (root / "notes.md").read_text()
    for refused, why in (("facts/xray.md", "would be a memory file"), (".git/xray.txt", ".git folder")):
        result = run_cli("xray", "otters", "--out", refused, "--memory-dir", str(root), cwd=root)
        assert result.code == 2 and why in result.err, result.err
        assert not (root / refused).exists()
        exported = run_cli("export", "--out", refused, "--memory-dir", str(root), cwd=root)
        assert exported.code == 2 and why in exported.err
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


@pytest.mark.parametrize("command", [["export"], ["xray", "q"]])
def test_help_says_what_out_refuses(command: list[str]) -> None:
    result = run_cli(*command, "--help")
    text = " ".join(result.out.split())
    assert "'-': standard output" in text and "memory file of this repository" in text and ".git" in text


# --- a mistyped flag ---


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["store", "x", "--categroy", "fact"], "--category"),
        (["list", "--tags", "ops"], "--tag"),
        (["query", "x", "--topk", "3"], "--top-k"),
        (["list", "--statsu=active"], "--status"),
    ],
)
def test_a_mistyped_flag_names_the_closest_one(argv: list[str], meant: str) -> None:
    text = run_cli(*argv)
    assert text.code == 2 and f"unrecognized arguments: {argv[1 if argv[0] == 'list' else 2]}" in text.err
    assert f"did you mean {meant}?" in text.err, text.err
    as_json = run_cli("--json", *argv)
    error = json.loads(as_json.err)
    assert as_json.code == 2 and error["code"] == "usage_error" and f"did you mean {meant}?" in error["error"]
    if argv[0] == "query":
        result = run_cli("list", "--zzzzzz")  # nothing resembles it: no suggestion
        assert (
            result.code == 2 and "unrecognized arguments: --zzzzzz" in result.err and "did you mean" not in result.err
        )


# --- daemon start --json and Ctrl-C under --json ---


def test_daemon_start_json_keeps_started_a_timestamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "tokens.json"))
    root = tmp_path / "mem"
    # The commands run in this process (the same code); the server `daemon start` launches is a real process.
    assert run_cli("init", str(root)).code == 0
    assert run_cli("token", "generate", "--principal", "ops").code == 0
    started = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0", "--json")
    assert started.code == 0, started.err
    info = started.json()
    try:
        status = run_cli("daemon", "status", "--memory-dir", str(root), "--json").json()
        assert isinstance(info["started"], str) and info["started"] == status["started"]
        assert info["launched"] is True and info["running"] is True and info["host"] == "127.0.0.1"
    finally:
        stopped = run_cli("daemon", "stop", "--memory-dir", str(root), "--json")
        if stopped.code != 0 or not stopped.json().get("stopped"):
            os.kill(info["pid"], signal.SIGKILL)  # never leave a server behind


def _blocked_reading(pid: int) -> bool:
    """Whether the process sleeps in a read of its standard input: read(0, …) on x86-64 (any pipe read would
    also match a git subprocess's output being read while remnic starts)."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().split()[:2] == ["0", "0x0"]
    except OSError:
        return False


def test_ctrl_c_under_json_is_a_json_error(memory: Memory) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "remnic",
            "observe",
            "-",
            "--session-key",
            "k",
            "--json",
            "--memory-dir",
            str(memory.root),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A test worker may ignore SIGINT, and a child inherits that: Python then installs no handler.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not _blocked_reading(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert json.loads(err) == {"error": "interrupted", "code": "interrupted"} and out == ""


# --- the content limit counts the text as stored ---


def _piped(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """``text`` on standard input, as a pipe gives it to the command (bytes, to EOF)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8"))


def test_the_limit_counts_the_stored_text_not_surrounding_whitespace(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = memory.settings.store.max_content_chars
    _piped(monkeypatch, "q" * limit + "\n")  # as `echo` sends it
    piped = run_cli("store", "-", "--memory-dir", str(memory.root))
    assert piped.code == 0, piped.err
    assert memory.store("k" * limit + "\n\n  ").changed
    _piped(monkeypatch, "z" * (limit + 1) + "\n")
    over = run_cli("store", "-", "--memory-dir", str(memory.root))
    assert over.code == 2 and f"is {limit + 1} characters" in over.err


# --- the API exports every type it returns ---


def test_returned_types_are_exported_and_listed_by_dir() -> None:
    from remnic.recall.types import ScoreTerms, StageCount
    from remnic.service.portable import FileIssue
    from remnic.service.reverting import RevertResult
    from remnic.sync.report import Change

    for name, cls in (
        ("RevertResult", RevertResult),
        ("StageCount", StageCount),
        ("ScoreTerms", ScoreTerms),
        ("FileIssue", FileIssue),
        ("Change", Change),
    ):
        assert name in remnic.__all__ and getattr(remnic, name) is cls
    listed = dir(remnic)
    assert {"Memory", "RevertResult", "RecallXraySnapshot", "XrayResult"} <= set(listed) and listed == sorted(listed)
