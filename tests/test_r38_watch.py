"""Session 38: what `remnic sync watch` says. A malformed note left uncommitted is named by the stop line and
by a watcher starting on it; a symlinked note is said once, not on every pass; a fresh `.git/index.lock` that
defers the sync is said once; an unclosed quote is reported on its own line and key. Real git, real watchdog
events, the real CLI for the stderr check.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git
from test_sync_watch import Running, wait_until, watch  # noqa: F401 - `watch` is a fixture

from remnic.drivers.watch import watch_line
from remnic.errors import MemoryFormatError
from remnic.memfile.model import parse_file
from remnic.service.memory import Memory

BAD = '---\ntitle: "Deploy notes\n---\nDeploy with make release.\n'


def test_the_stop_line_names_a_malformed_file_left_uncommitted(memory: Memory, watch: Callable[..., Running]) -> None:  # noqa: F811
    running = watch()
    (memory.root / "facts").mkdir(exist_ok=True)
    (memory.root / "facts/bad.md").write_text(BAD)
    wait_until(lambda: running.of("problem"), what="the problem")
    running.stop()
    (stopped,) = running.of("stopped")
    assert stopped["flushed"] is False
    assert stopped["left"] == [
        {
            "path": "facts/bad.md",
            "reason": "malformed (line 2: title: invalid YAML: a quoted value is never closed "
            '(its closing " is missing))',
        }
    ]
    line = watch_line(stopped)
    assert line is not None and "pending changes flushed" not in line
    assert "1 left uncommitted (facts/bad.md: malformed (line 2: title:" in line
    assert line.endswith("run `remnic sync run` once fixed, saved and closed")


def test_a_watcher_starting_on_a_malformed_file_says_so(memory: Memory, watch: Callable[..., Running]) -> None:  # noqa: F811
    (memory.root / "facts").mkdir(exist_ok=True)
    (memory.root / "facts/bad.md").write_text(BAD)
    assert memory.sync().problems  # an earlier run saw this very version
    running = watch()
    assert [e["path"] for e in running.of("problem")] == ["facts/bad.md"]


def test_a_symlinked_note_is_said_once_per_version(
    memory: Memory,
    watch: Callable[..., Running],  # noqa: F811
    tmp_path: Path,
) -> None:
    root = memory.root
    (root / "facts").mkdir(exist_ok=True)
    target = tmp_path / "outside.txt"
    target.write_text("not a memory\n")
    os.symlink(target, root / "facts/host.md")
    running = watch(rescan_interval_s=0.2)
    said = lambda: [e for e in running.of("skipped") if e["path"] == "facts/host.md"]  # noqa: E731
    assert len(said()) == 1
    for n in range(3):  # saves of other notes, and idle rescans: passes that list the link again
        (root / f"facts/n{n}.md").write_text(f"Note number {n} about herons.\n")
        wait_until(lambda n=n: f"facts/n{n}.md" in git(root, "ls-files"), what="the note's commit")
    syncs = running.watcher.syncs
    wait_until(lambda: running.watcher.syncs >= syncs + 3, what="three rescans")
    assert len(said()) == 1
    os.unlink(root / "facts/host.md")
    os.symlink(tmp_path, root / "facts/host.md")  # another version: said again
    wait_until(lambda: len(said()) == 2, what="the new link's skip")


def test_a_fresh_git_index_lock_is_said_once(memory: Memory, watch: Callable[..., Running]) -> None:  # noqa: F811
    running = watch()
    lock = memory.root / ".git/index.lock"
    lock.touch()
    (memory.root / "facts").mkdir(exist_ok=True)
    (memory.root / "facts/x.md").write_text("A note saved while git works.\n")
    notes = lambda: [e for e in running.of("note") if "index.lock" in e["message"]]  # noqa: E731
    (note,) = wait_until(notes, what="the note about git's lock")
    assert note["message"].startswith("waiting for git: .git/index.lock is held")
    time.sleep(0.5)
    assert len(notes()) == 1 and not running.of("change")
    lock.unlink()
    wait_until(lambda: "facts/x.md" in git(memory.root, "ls-files"), what="the commit after the lock")
    assert len(notes()) == 1


def test_an_unclosed_quote_is_reported_on_its_line_and_key() -> None:
    for text, line, key, quote in [
        ('---\ntitle: "Deploy notes\ntags: [ops]\n---\nbody\n', 2, "title", '"'),
        ("---\ntitle: x\ntags: [ops, 'unterminated\n---\nbody\n", 3, "tags", "'"),
    ]:
        with pytest.raises(MemoryFormatError) as exc:
            parse_file(text, "facts/q.md")
        (problem,) = exc.value.problems
        assert (problem.line, problem.field) == (line, key)
        assert problem.message == f"invalid YAML: a quoted value is never closed (its closing {quote} is missing)"


def test_a_folder_moved_out_and_back_prints_no_watchdog_internals(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    cli = [sys.executable, "-m", "remnic"]
    env = {**os.environ, "HOME": str(tmp_path)}
    subprocess.run([*cli, "init", str(root), "-q"], check=True, env=env, capture_output=True)
    proc = subprocess.Popen(
        [*cli, "sync", "watch", "--json", "--memory-dir", str(root)],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and '"ready"' in proc.stdout.readline()
        (root / "facts/team").mkdir(parents=True)
        (root / "facts/team/ana.md").write_text("Ana owns billing.\n")
        wait_until(lambda: "facts/team/ana.md" in git(root, "ls-files"), what="ana's commit")
        (root / "notes").mkdir()
        (root / "facts/team").rename(root / "notes/team")
        time.sleep(1.5)
        (root / "notes/team").rename(root / "facts/team")
        time.sleep(1.5)
        (root / "facts/team/ana.md").write_text("Ana owns billing and invoicing.\n")
        wait_until(lambda: "invoicing" in git(root, "show", "HEAD:facts/team/ana.md"), what="the edit's commit")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "RuntimeWarning" not in err and "Callback with id" not in err, err
