"""The CLI as a whole: paths typed from a subfolder, doctor without a repository, usage errors,
exit codes, Ctrl-C in `sync watch`, reindex's progress, defaults in help, a light --version."""

from __future__ import annotations

import argparse
import io
import json
import signal
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.service.memory import Memory


def _deploy(memory: Memory) -> Any:
    return memory.store("We deploy on Tuesdays", category="decision").record


def test_write_commands_take_a_path_relative_to_the_folder_they_run_in(memory: Memory) -> None:
    record = _deploy(memory)
    here = memory.root / "decisions"
    name = Path(record.path).name
    assert run_cli("get", name, cwd=here).code == 0  # reads always did

    updated = run_cli("update", name, "--importance", "0.8", "--json", cwd=here)
    assert updated.code == 0, updated.err
    assert updated.json()["frontmatter"]["importanceScore"] == 0.8
    successor = run_cli("store", "We deploy on Wednesdays", "--supersedes", name, "--dry-run", "--json", cwd=here)
    assert successor.code == 0, successor.err
    assert successor.json()["frontmatter"]["supersedes"] == record.id
    flagged = run_cli("review", "flag", name, "--json", cwd=here)
    assert flagged.code == 0, flagged.err
    assert flagged.json()["status"] == "quarantined"
    forgot = run_cli("forget", f"./{name}", "--json", cwd=here)
    assert forgot.code == 0, forgot.err
    assert memory.get(record.id).status == "forgotten"


def test_a_memory_named_from_the_wrong_folder_is_pointed_at_not_sent_to_store_include(memory: Memory) -> None:
    record = _deploy(memory)
    name = Path(record.path).name
    for command in (["update", name, "--importance", "0.8"], ["forget", name], ["get", name]):
        result = run_cli(*command, cwd=memory.root)
        assert result.code == 2, command
        assert "store.include" not in result.err and "--adopt" not in result.err, command
        assert f"no memory file at {name}" in result.err and f"did you mean {record.path}?" in result.err
    assert memory.get(record.id).status == "active"


def test_doctor_without_a_repository_runs_what_it_can_and_fails_the_memory_dir_check(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    result = run_cli("doctor", "--json", "--memory-dir", str(missing))
    assert result.code == 1
    # The report is whole on standard output; standard error has only the {error, code} every failing
    # --json command writes there, naming the failed check.
    assert json.loads(result.err) == {"error": "1 check failed: memory-dir", "code": "check_failed"}
    data = result.json()
    assert data["ok"] is False
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["python"]["status"] == "ok" and checks["git"]["status"] == "ok"
    assert checks["memory-dir"]["status"] == "fail"
    assert str(missing) in checks["memory-dir"]["detail"] and "remnic init" in checks["memory-dir"]["detail"]

    plain = tmp_path / "plain"
    plain.mkdir()
    text = run_cli("doctor", "--memory-dir", str(plain))
    assert text.code == 1
    assert "[ok  ] git:" in text.out
    assert f"[FAIL] memory-dir: {plain} is not a git repository" in text.out


def test_a_bad_import_namespace_is_one_error_naming_the_flag(memory: Memory, tmp_path: Path) -> None:
    lines = tmp_path / "m.jsonl"
    lines.write_text("".join(json.dumps({"content": f"Fact number {i}"}) + "\n" for i in range(40)))
    for extra in (["--dry-run"], []):
        result = run_cli("import", str(lines), "--namespace", "../evil", "--memory-dir", str(memory.root), *extra)
        assert result.code == 2
        assert result.err.count("\n") == 1, result.err
        assert result.err.startswith("remnic: error: --namespace: '../evil' is not a valid namespace")
    as_json = run_cli("import", str(lines), "--namespace", "../evil", "--memory-dir", str(memory.root), "--json")
    details = json.loads(as_json.err)["details"]
    assert len(details) == 1 and details[0]["flag"] == "--namespace"
    assert len(memory.check_import([{"content": "a"}, {"content": "b"}], namespace="../evil")) == 1
    assert memory.list() == []


def test_a_bad_memory_dir_flag_is_a_usage_error_as_a_bad_space_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a_file = tmp_path / "afile"
    a_file.write_text("hi\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    for where in (a_file, tmp_path / "missing", plain):
        result = run_cli("list", "--memory-dir", str(where))
        assert result.code == 2, where
        assert str(where) in result.err
    assert run_cli("list", "--space", "nope").code == 2
    # Not typed on this command line: the directory is not found, a failure (1).
    monkeypatch.setenv("REMNIC_MEMORY_DIR", str(tmp_path / "missing"))
    assert run_cli("list", cwd=tmp_path).code == 1


def test_no_command_is_a_usage_error_on_stderr() -> None:
    plain = run_cli()
    assert plain.code == 2 and plain.out == ""
    assert plain.err.startswith("usage: remnic") and "remnic: error: a command is required" in plain.err
    assert "store" in plain.err
    as_json = run_cli("--json")
    assert as_json.code == 2 and as_json.out == ""
    error = json.loads(as_json.err)
    assert error["code"] == "usage_error" and "a command is required" in error["error"]
    helped = run_cli("--help")
    assert helped.code == 0 and helped.out.startswith("usage: remnic")


def test_an_unknown_flag_shows_the_commands_usage_and_a_typo_gets_a_suggestion(memory: Memory) -> None:
    bogus = run_cli("list", "--bogus", "--memory-dir", str(memory.root))
    assert bogus.code == 2
    assert bogus.err.startswith("usage: remnic list ")
    assert "remnic list: error: unrecognized arguments: --bogus" in bogus.err
    typo = run_cli("lst")
    assert typo.code == 2 and "did you mean 'list'?" in typo.err
    nested = run_cli("versions", "shwo")
    assert nested.code == 2 and "did you mean 'show'?" in nested.err
    as_json = run_cli("--json", "lst")
    assert "did you mean 'list'?" in json.loads(as_json.err)["error"]
    assert "did you mean" not in run_cli("zzzzzz").err


def test_ctrl_c_stops_sync_watch_with_130_after_flushing(memory: Memory) -> None:
    root = memory.root
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "sync", "watch", "--json", "--debounce-ms", "1500", "--memory-dir", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events: list[dict[str, Any]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            events.append(json.loads(line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not any(e["event"] == "ready" for e in events):
            assert time.monotonic() < deadline and proc.poll() is None, "the watcher never got ready"
            time.sleep(0.05)
        (root / "facts" / "before-ctrl-c.md").write_text("Saved just before Ctrl-C.\n")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=5)
    assert proc.returncode == 130, proc.stderr.read() if proc.stderr else ""
    assert events[-1]["event"] == "stopped"
    assert git(root, "status", "--porcelain") == ""
    assert [r.content for r in memory.list()] == ["Saved just before Ctrl-C."]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _reindex_on_a_terminal(root: Path) -> tuple[str, str]:
    from remnic.cli import main

    out, err = io.StringIO(), _Terminal()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["reindex", "--memory-dir", str(root)]) == 0
    return out.getvalue(), err.getvalue()


def test_reindex_progress_counts_what_the_summary_counts(memory: Memory) -> None:
    root = str(memory.root)
    # Stored from the CLI, the texts reach the index (and the embedding cache) only with the next recall.
    assert run_cli("store", "The build server is in the basement", "--memory-dir", root).code == 0
    assert run_cli("store", "Backups run at midnight. They are kept for a month.", "--memory-dir", root).code == 0
    out, err = _reindex_on_a_terminal(memory.root)
    bar = err.replace("\r", "\n").strip().splitlines()[-1]
    assert bar.startswith("embedding [")
    done, total = (int(n) for n in bar.split("] ", 1)[1].split(" ", 1)[0].split("/"))
    assert done == total > 0
    assert f"({total} texts embedded, " in out

    out, err = _reindex_on_a_terminal(memory.root)  # every text in the cache now: no model work to show
    assert "embedding [" not in err
    assert "(0 texts embedded, " in out
    data = run_cli("reindex", "--memory-dir", root, "--json").json()
    assert data["embedded"] == 0 and data["texts"] >= total
    assert f"(0 texts embedded, {data['texts']} from the cache)" in out


def test_every_option_with_a_default_says_it_in_help() -> None:
    from remnic.cli import build_parser
    from remnic.cli.reference import walk

    silent = []
    for words, parser, _ in walk(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if action.default in (None, False, [], argparse.SUPPRESS):
                continue
            if "default" not in (action.help or ""):
                silent.append(f"remnic {' '.join(words)} {action.option_strings or action.dest}")
    assert silent == []
    assert "(default: personal)" in run_cli("space", "create", "--help").out
    assert "(default: team)" in run_cli("space", "clone", "--help").out
    assert "(default: 200)" in run_cli("benchmark", "scale", "--help").out


def test_version_answers_before_the_commands_are_imported() -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "remnic", "--json", "--version"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("remnic ")
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    assert "remnic.version" in imported
    assert not [m for m in imported if m.startswith(("remnic.service", "remnic.cli._common", "git"))]


def test_the_entity_rules_compile_only_for_a_command_that_uses_them() -> None:
    """Their patterns take ~0.16 CPU-s to compile: `remnic status` or `store` must not pay it."""
    code = "import sys, remnic.cli, remnic.service.memory; print('remnic.observe.entities.rules' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr
