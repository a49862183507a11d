"""`remnic sync watch` at its edges: long vectors work, folders that come and go, stopping, a busy index.

Real watchdog observers on real git repositories, as in test_sync_watch.py: every test waits for a
condition instead of sleeping a fixed time.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git
from test_adopt_first import long_note
from test_sync_watch import Running, porcelain, subjects, wait_until, watch  # noqa: F401 - the fixture

from remnic.config import settings_for
from remnic.service.memory import Memory


@pytest.fixture
def quiet_watch(watch: Callable[..., Running]) -> Callable[..., Running]:  # noqa: F811 - the imported fixture
    """test_sync_watch's watcher with a rescan too slow to rescue a missed event."""
    return lambda **kwargs: watch(**{"rescan_interval_s": 600, **kwargs})


def cached_vectors(root: Path) -> int:
    path = root / ".remnic" / "embeddings.sqlite"
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=10)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def pending_paths(memory: Memory) -> set[str]:
    with memory.index.lock:
        catalog = memory.index.view()[2]
        return {row[0] for row in catalog.conn.execute("SELECT path FROM pending_vectors")}


def test_a_save_waits_for_one_slice_of_a_long_notes_vectors_not_all_of_them(
    memory: Memory, quiet_watch: Callable[..., Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher embeds a long note's texts a slice at a time: a save made meanwhile is committed
    before the note's vectors are done, they are finished after it, and a stop is prompt."""
    import remnic.drivers.watch as watch_module

    monkeypatch.setattr(watch_module, "_IDLE_BATCH", 2)
    root = memory.root
    running = quiet_watch(settings=settings_for(root, sync={"defer_embeddings_above": 0}))
    before = cached_vectors(root)
    (root / "facts/long.md").write_text(long_note(16_000, "The lighthouse keeper repaints the crimson door."))
    wait_until(lambda: "remnic sync: add facts/long.md" in subjects(root), what="the long note's commit")
    wait_until(lambda: cached_vectors(root) > before, what="the first slice of its vectors")
    (root / "facts/small.md").write_text("A small save made while the long note is embedded.\n")
    wait_until(lambda: "remnic sync: add facts/small.md" in subjects(root), what="the small save's commit")
    assert "facts/long.md" in pending_paths(memory)  # committed before the long note's vectors were done
    wait_until(lambda: running.of("vectors"), timeout=60, what="the long note's vectors")
    assert pending_paths(memory) == set() and running.idle(root)

    (root / "facts/long2.md").write_text(long_note(16_000, "The ferry leaves at dawn.", seed=5))
    wait_until(lambda: "remnic sync: add facts/long2.md" in subjects(root), what="the second long note")
    started = cached_vectors(root)
    wait_until(lambda: cached_vectors(root) > started, what="its vectors under way")
    t0 = time.monotonic()
    running.watcher.request_stop()
    running.thread.join(timeout=20)
    assert not running.thread.is_alive() and time.monotonic() - t0 < 5
    assert running.events[-1]["event"] == "stopped" and "facts/long2.md" in pending_paths(memory)


def test_a_folder_deleted_or_moved_away_and_made_again_is_watched_again(
    memory: Memory, quiet_watch: Callable[..., Running], tmp_path: Path
) -> None:
    root = memory.root
    running = quiet_watch()
    shutil.rmtree(root / "skills")
    time.sleep(0.3)  # the deletion's events arrive before the folder is back
    (root / "skills").mkdir()
    time.sleep(0.3)
    (root / "skills/new.md").write_text("A skill written after its folder came back.\n")
    wait_until(lambda: "remnic sync: add skills/new.md" in subjects(root), timeout=5, what="the save in skills/")

    os.rename(root / "skills", tmp_path / "skills-away")  # moved away (its watch would follow it) ...
    wait_until(lambda: "remnic sync: delete skills/new.md" in subjects(root), timeout=5, what="the move away")
    (root / "skills").mkdir()  # ... and made again
    time.sleep(0.3)
    (root / "skills/again.md").write_text("A skill written in the folder made again.\n")
    wait_until(lambda: "remnic sync: add skills/again.md" in subjects(root), timeout=5, what="the second save")
    time.sleep(0.5)  # the watcher's own commit and normalisation events settle
    wait_until(lambda: not running.watcher.busy and running.watcher._due(time.monotonic()) is None, what="quiet")
    syncs = running.watcher.syncs
    (tmp_path / "skills-away/outside.md").write_text("Not in the repository.\n")  # its old watch is gone
    time.sleep(0.5)
    assert running.watcher.syncs == syncs and not any("outside" in s for s in subjects(root))
    (root / "skills/.gitkeep").write_text("")  # what the two deletions took with them

    # A checkout of a branch without the folder, and back: saves in it are still seen.
    git(root, "checkout", "-q", "-b", "bare")
    git(root, "rm", "-rq", "skills")
    git(root, "commit", "-qm", "no skills here")
    wait_until(lambda: not (root / "skills").exists() and running.idle(root), what="the checkout")
    git(root, "checkout", "-q", "main")
    wait_until(lambda: (root / "skills/again.md").exists() and running.idle(root), what="the checkout back")
    (root / "skills/back.md").write_text("A skill written after checking out main again.\n")
    wait_until(lambda: "remnic sync: add skills/back.md" in subjects(root), timeout=5, what="the save after")


def test_a_stop_survives_the_observers_own_errors_and_still_syncs_what_is_pending(
    memory: Memory, quiet_watch: Callable[..., Running], tmp_path: Path
) -> None:
    """A folder moved in, out, made again and deleted leaves watchdog's inotify bookkeeping with a
    stale path (its stop raises KeyError): the watcher logs it, syncs the last edit and stops."""
    root = memory.root
    running = quiet_watch()
    outside = tmp_path / "d3"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub/t.md").write_text("moved-in note\n")
    os.rename(outside, root / "facts/outdir")
    wait_until(lambda: "remnic sync: add facts/outdir/sub/t.md" in subjects(root), what="the folder moved in")
    os.rename(root / "facts/outdir", tmp_path / "d3back")
    wait_until(lambda: subjects(root)[0] == "remnic sync: delete facts/outdir/sub/t.md", what="moved out")
    (root / "facts/outdir/sub").mkdir(parents=True)
    (root / "facts/outdir/sub/t.md").write_text("again\n")
    wait_until(lambda: subjects(root)[0] == "remnic sync: add facts/outdir/sub/t.md", what="made again")
    shutil.rmtree(root / "facts/outdir")
    wait_until(lambda: subjects(root)[0] == "remnic sync: delete facts/outdir/sub/t.md", what="deleted")
    (root / "facts/last.md").write_text("last edit before stopping\n")
    running.watcher.request_stop()
    running.thread.join(timeout=20)
    assert not running.thread.is_alive()
    assert running.events[-1]["event"] == "stopped"
    assert "remnic sync: add facts/last.md" in subjects(root) and porcelain(root) == ""


def test_a_commit_is_reported_when_the_index_lock_is_held_and_the_index_catches_up(
    memory: Memory, quiet_watch: Callable[..., Running]
) -> None:
    """Another process holds the index lock (a rebuild): the watcher's commit is still reported, the
    message names the index lock and its holder, and the index catches up once the lock is free."""
    import subprocess
    import sys

    from remnic.sync.engine import indexed_paths

    root = memory.root
    memory.store("The index exists before the lock is taken", category="fact")
    lock = root / ".remnic" / "index.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX); os.ftruncate(fd, 0); os.write(fd, b'%d\\n' % os.getpid())\n"
            "print('held', flush=True); time.sleep(60)\n",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        running = quiet_watch(settings=settings_for(root, store={"lock_timeout_s": 0.5}))
        (root / "facts/a.md").write_text("An edit saved while the index is being rebuilt elsewhere.\n")
        change = wait_until(lambda: [e for e in running.of("change") if e["path"] == "facts/a.md"], what="the change")
        assert change[0]["commit"] and subjects(root)[0] == "remnic sync: add facts/a.md"
        warning = next(e["message"] for e in running.of("warning") if "index" in e["message"])
        assert "the index lock" in warning and "write lock" not in warning
        assert f"held by process {holder.pid}" in warning and "the index catches up" in warning
    finally:
        holder.kill()
        holder.wait()
    wait_until(lambda: "facts/a.md" in indexed_paths(memory.index), what="the index to catch up")
    assert not [e for e in running.of("change") if e["path"] == "facts/a.md"][1:]  # reported once
