"""What sync and the watcher say about states around them: git's index lagging behind HEAD, a merge or
rebase pausing sync, an interrupted index write, and the time stamp of an edit carried aside."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import time
from collections.abc import Callable

from conftest import git
from test_sync_watch import Running, wait_until, watch  # noqa: F401 - `watch` is a fixture

from remnic.index.manifest import read_current
from remnic.memfile.model import parse_file
from remnic.service.memory import Memory


def in_head(root: os.PathLike[str], path: str) -> bool:
    return path in git(root, "ls-tree", "-r", "--name-only", "HEAD").split()  # type: ignore[arg-type]


def test_watcher_warns_when_git_index_lags_and_does_not_report_head_files_again(
    memory: Memory,
    watch: Callable[..., Running],  # noqa: F811 - the imported fixture
) -> None:
    root = memory.root
    store = dataclasses.replace(memory.settings.store, git_retry_s=0.2)
    running = watch(settings=dataclasses.replace(memory.settings, store=store))
    lock = root / ".git" / "index.lock"
    lock.write_text("")  # left by a git that died; old enough that the watcher does not wait on it
    os.utime(lock, (time.time() - 120, time.time() - 120))
    try:
        (root / "facts/lag-a.md").write_text("The lagging index note about otters.\n")
        wait_until(lambda: in_head(root, "facts/lag-a.md"), what="the first commit")
        warned = wait_until(
            lambda: [e for e in running.of("warning") if "index.lock" in e["message"]], what="a warning event"
        )
        assert "git status" in warned[0]["message"]
        (root / "facts/lag-b.md").write_text("A second note about beavers.\n")
        wait_until(lambda: in_head(root, "facts/lag-b.md") and not running.watcher.busy, what="the second commit")
        again = [e for e in running.of("change") if e["path"] == "facts/lag-a.md"]
        assert len(again) == 1 and again[0]["committed"], again  # not re-reported as an uncommitted add
        other = Memory.open(settings=running.memory.settings)  # `sync run` beside the watcher
        try:
            report = other.sync()
            assert not report.changes and not report.pending
            writes = next(c for c in other.doctor() if c["name"] == "writes")
        finally:
            other.close()
        assert "git's index behind HEAD" in writes["detail"] and "index.lock is still there" in writes["detail"]
    finally:
        lock.unlink(missing_ok=True)


def test_watcher_says_once_when_a_merge_pauses_sync_and_when_it_resumes(
    memory: Memory,
    watch: Callable[..., Running],  # noqa: F811 - the imported fixture
) -> None:
    root = memory.root
    running = watch()
    merge_head = root / ".git" / "MERGE_HEAD"
    merge_head.write_text(git(root, "rev-parse", "HEAD"))
    (root / "facts/during-1.md").write_text("Written during the merge.\n")
    paused = wait_until(lambda: running.of("paused"), what="a paused event")
    assert "a merge is in progress" in paused[0]["message"]
    syncs = running.watcher.syncs
    (root / "facts/during-2.md").write_text("Also written during the merge.\n")
    wait_until(lambda: running.watcher.syncs > syncs and not running.watcher.busy, what="another paused pass")
    assert len(running.of("paused")) == 1 and not running.of("change") and not running.of("resumed")
    merge_head.unlink()
    (root / "facts/after.md").write_text("Written after the merge.\n")
    wait_until(lambda: in_head(root, "facts/after.md") and running.of("resumed"), what="sync to resume")
    assert len(running.of("resumed")) == 1 and in_head(root, "facts/during-1.md")


def test_an_interrupted_index_write_is_worded_as_such(memory: Memory) -> None:
    memory.store("Tabs are preferred over spaces.")
    memory.recall("tabs", top_k=1)
    build = read_current(memory.root / ".remnic" / "index")
    memory.close()
    conn = sqlite3.connect(memory.root / ".remnic" / "index" / build / "catalog.sqlite")
    conn.execute("UPDATE meta SET value = '999999999:0' WHERE key = 'pending'")  # a writer killed mid-write
    conn.commit()
    conn.close()
    reopened = Memory.open(settings=memory.settings)
    try:
        health = reopened.index.health(reopened.ledger)
        assert health.state == "corrupt"  # recall rebuilds on this state
        assert health.detail.startswith("interrupted write (999999999:0); the next recall")
        assert "`remnic reindex`" in health.detail and "repairs it" in health.detail
        assert reopened.recall("tabs", top_k=1).hits
        assert reopened.index.health(reopened.ledger).state in ("ok", "behind")
    finally:
        reopened.close()


def test_sync_stamps_an_edit_carried_aside_by_an_update_forward_in_time(memory: Memory) -> None:
    stored = memory.store("The heron nests by the river.").records[0]
    path = memory.root / stored.path
    path.write_text(path.read_text().replace("by the river", "by the old mill"))  # a hand edit, uncommitted
    memory.update(stored.id, {"tags": ["birds"]})  # carries the edit aside; fits contentHash to it
    committed = parse_file(git(memory.root, "show", f"HEAD:{stored.path}"), stored.path).frontmatter["updated"]
    time.sleep(0.01)
    report = memory.sync()
    assert report.commit and [c.path for c in report.changes] == [stored.path]
    after = parse_file(git(memory.root, "show", f"HEAD:{stored.path}"), stored.path)
    assert "old mill" in after.content and after.frontmatter["tags"] == ["birds"]
    assert str(after.frontmatter["updated"]) > str(committed), (committed, after.frontmatter["updated"])
