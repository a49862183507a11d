"""A file another program holds open for writing is a save in progress: sync neither replaces nor commits it.

Renaming a normalised copy over a file a writer keeps open leaves its handle on the
orphaned inode, and whatever it writes after that is lost (the watcher stamped a
half-written file, then the second half went nowhere). Real subprocesses hold the files
open; real watchdog events drive the watcher.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import git
from test_sync_run import found
from test_sync_watch import Running, porcelain, wait_until, watch  # noqa: F401 - `watch` is a fixture

from remnic import fsio
from remnic.service.memory import Memory
from remnic.sync.held import CHANGED, HELD, HELD_REASON, REPLACED, held_open, replace_unless_held

pytestmark = pytest.mark.skipif(not fsio._SUPPORTED, reason="file leases are Linux-only")

# Opens the file, writes the first part, says "ready", then waits for a line on stdin before the rest.
WRITER = """
import sys
path, mode, first, second = sys.argv[1:5]
f = open(path, mode)
if mode == "r+":
    f.seek(0, 2)
f.write(first)
f.flush()
print("ready", flush=True)
sys.stdin.readline()
f.write(second)
f.close()
"""


class Writer:
    """A separate process holding ``path`` open for writing until :meth:`finish`."""

    def __init__(self, path: Path, mode: str, first: str, second: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), mode, first, second],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def finish(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.close()
        assert self.proc.wait(timeout=10) == 0


@pytest.fixture
def writers() -> Iterator[Callable[..., Writer]]:
    started: list[Writer] = []

    def start(*args: str | Path) -> Writer:
        w = Writer(*args)  # type: ignore[arg-type]
        started.append(w)
        return w

    yield start
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def held_events(running: Running, path: str) -> list[dict[str, object]]:
    return [e for e in running.of("skipped") if e["path"] == path and e["reason"] == HELD_REASON]


def in_head(root: Path, path: str) -> bool:
    return path in git(root, "ls-tree", "-r", "--name-only", "HEAD").split()


def test_watcher_leaves_a_paused_writer_alone_and_syncs_every_byte(
    memory: Memory,
    watch: Callable[..., Running],  # noqa: F811 - the imported fixture
    writers: Callable[..., Writer],
) -> None:
    root, rel = memory.root, "facts/slow-writer.md"
    running = watch()
    writer = writers(root / rel, "w", "first half about wombat ", "second half about kiwi\n")
    # A pass runs while the writer pauses: it must see the file held (the old code stamped and committed it).
    wait_until(lambda: held_events(running, rel) or in_head(root, rel), what="a sync pass over the open file")
    assert held_events(running, rel) and not in_head(root, rel)
    passes = running.watcher.syncs
    wait_until(lambda: running.watcher.syncs > passes, what="a retry while the file is still open")
    assert len(held_events(running, rel)) == 1, "a file still held open is reported once"
    writer.finish()
    wait_until(lambda: in_head(root, rel) and running.idle(root), what="the closed file to be committed")
    text = (root / rel).read_text()
    assert "first half about wombat second half about kiwi" in text
    assert "second half about kiwi" in git(root, "show", f"HEAD:{rel}")
    assert found(memory, "kiwi")


def test_watcher_keeps_appends_through_an_open_r_plus_handle(
    memory: Memory,
    watch: Callable[..., Running],  # noqa: F811 - the imported fixture
    writers: Callable[..., Writer],
) -> None:
    root, rel = memory.root, "facts/appended.md"
    (root / rel).write_text("---\nid: mem_appended\ncategory: fact\n---\nThe garden has a wombat.\n")
    running = watch()
    wait_until(lambda: in_head(root, rel) and running.idle(root), what="the file to be committed")
    head = git(root, "rev-parse", "HEAD")
    writer = writers(root / rel, "r+", "It also has a heron.\n", "And a kiwi at night.\n")
    wait_until(lambda: held_events(running, rel) or git(root, "rev-parse", "HEAD") != head, what="a pass")
    assert held_events(running, rel) and git(root, "rev-parse", "HEAD") == head
    writer.finish()
    wait_until(lambda: "kiwi" in git(root, "show", f"HEAD:{rel}") and running.idle(root), what="the append")
    text = (root / rel).read_text()
    assert "wombat.\nIt also has a heron.\nAnd a kiwi at night.\n" in text
    assert "updated:" in text  # the edit was stamped once the writer was done
    assert found(memory, "kiwi heron") == ["mem_appended"]


def test_sync_run_reports_a_held_file_and_commits_it_once_closed(
    memory: Memory, writers: Callable[..., Writer]
) -> None:
    root, rel = memory.root, "facts/half.md"
    writer = writers(root / rel, "w", "wombats dig burrows ", "and kiwis lay big eggs\n")
    before = (root / rel).read_bytes()
    report = memory.sync()
    assert report.held == [rel] and {"path": rel, "reason": HELD_REASON} in report.skipped
    assert f"~ {rel}: {HELD_REASON}" in report.lines()
    assert (root / rel).read_bytes() == before and not in_head(root, rel)
    assert rel in report.pending  # the next run comes back to it
    writer.finish()
    report = memory.sync()
    assert report.commit and not report.held and in_head(root, rel)
    assert "and kiwis lay big eggs" in git(root, "show", f"HEAD:{rel}")
    assert porcelain(root) == ""


def test_replace_unless_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target, staging = tmp_path / "a.md", tmp_path / "a.md.staged"
    target.write_bytes(b"old\n")
    staging.write_text("new\n")
    # Another descriptor of this very process counts as well: a lease is per open file description.
    with open(target, "ab") as handle:
        assert held_open(target)
        assert replace_unless_held(target, b"old\n", staging) == HELD
        handle.write(b"more\n")
    assert target.read_bytes() == b"old\nmore\n" and staging.exists()
    with open(target, "rb"):  # a reader does not hold a save in progress
        assert not held_open(target)
        assert replace_unless_held(target, b"old\n", staging) == CHANGED
        assert replace_unless_held(target, b"old\nmore\n", staging) == REPLACED
    assert target.read_bytes() == b"new\n" and not staging.exists()
    assert not list(tmp_path.glob("*.old"))
    # Without leases (another system, a filesystem refusing them): compare and rename, as before.
    monkeypatch.setattr(fsio, "_SUPPORTED", False)
    staging.write_text("newer\n")
    with open(target, "ab"):
        assert not held_open(target)
        assert replace_unless_held(target, b"new\n", staging) == REPLACED
    assert os.path.exists(target) and target.read_bytes() == b"newer\n"
