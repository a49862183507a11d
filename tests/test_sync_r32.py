"""Sync against git and editors racing it: a hand commit landing mid-run, a sync killed in its index
step, a save that leaves the file missing for a while.

Real git repositories, real git commits by hand, a real process killed with SIGKILL inside the index
step, and a real watchdog watcher (test_sync_watch's fixture).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli
from test_sync_run import assert_index_matches_files, found
from test_sync_watch import Running, subjects, wait_until, watch  # noqa: F401 - the fixture

from remnic.config.settings import DELETE_SETTLE_S
from remnic.memfile.model import parse_file
from remnic.memfile.values import hash_matches
from remnic.service.memory import Memory
from remnic.sync.state import SyncState


@pytest.fixture
def watching(watch: Callable[..., Running]) -> Callable[..., Running]:  # noqa: F811 - the imported fixture
    """test_sync_watch's watcher (debounce 100 ms), with a rescan too slow to hide a missed sync."""
    return lambda **kwargs: watch(**{"rescan_interval_s": 600, **kwargs})


def stamped(root: Path, rel: str) -> bool:
    """Whether the file's ``contentHash`` describes its body (what sync's stamp of an edit gives)."""
    record = parse_file((root / rel).read_text(encoding="utf-8"), rel)
    return hash_matches(record.frontmatter.get("contentHash"), record.content) is True


def stored(memory: Memory, text: str, category: str = "decision") -> str:
    memory.store(text, category=category)
    memory.sync()
    return next(p for p in memory.ledger.worktree_files() if text.split()[-1].lower() in p)


def hand_commit_at(memory: Memory, monkeypatch: pytest.MonkeyPatch, rel: str, *, after_status: bool) -> None:
    """The user's `git commit -- rel` lands during the next sync, right after (or right before) its
    `git status`: the moment of the race the watcher loses now and then."""
    ledger = memory.ledger
    status = ledger.status_porcelain

    def racing() -> Any:
        if not after_status:
            git(memory.root, "commit", "-qm", "hand commit", "--", rel)
        rows = status()
        if after_status:
            git(memory.root, "commit", "-qm", "hand commit", "--", rel)
        monkeypatch.setattr(ledger, "status_porcelain", status)  # once
        return rows

    monkeypatch.setattr(ledger, "status_porcelain", racing)


# --- 1. a hand commit landing while sync runs ---


def test_a_hand_commit_landing_after_git_status_still_has_the_edit_stamped(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = memory.root
    rel = stored(memory, "We deploy on Tuesdays")
    path = root / rel
    path.write_text(path.read_text().replace("Tuesdays", "Thursdays"))
    hand_commit_at(memory, monkeypatch, rel, after_status=True)

    report = memory.sync()
    (change,) = report.changes
    assert change.path == rel and set(change.normalized) == {"contentHash", "updated"} and change.committed
    assert stamped(root, rel) and "Thursdays" in path.read_text()
    assert subjects(root)[:2] == [f"remnic sync: edit {rel}", "hand commit"]
    # The run committed the path the hand commit held, on top of it: it reconciled up to its own commit,
    # and says so (`head` is never older than `commit`); the next run has nothing to report again.
    head = memory.ledger.head()
    assert report.head == report.commit == head == SyncState.load(root).commit
    assert SyncState.load(root).pending == {}
    assert memory.sync().mode == "noop" and stamped(root, rel)
    assert_index_matches_files(memory)


def test_a_hand_commit_landing_before_git_status_is_diffed_and_stamped_by_the_next_run(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run sees only the other edit (the committed one is clean by its `git status`): it must not
    mark the hand commit reconciled, or that edit is never stamped."""
    root = memory.root
    first = stored(memory, "We deploy on Tuesdays")
    other = stored(memory, "Reviews happen on Fridays")
    for rel, old, new in ((first, "Tuesdays", "Thursdays"), (other, "Fridays", "Mondays")):
        (root / rel).write_text((root / rel).read_text().replace(old, new))
    hand_commit_at(memory, monkeypatch, first, after_status=False)

    report = memory.sync()
    assert [c.path for c in report.changes] == [other] and report.commit and stamped(root, other)
    assert not stamped(root, first)  # not seen by this run: its `git status` came after the commit
    assert report.head == report.commit == memory.ledger.head()
    # The hand commit's path is left for the next run, compared with HEAD as this run found it.
    assert SyncState.load(root).pending == {first: {"kind": "committed", "since": report.base}}
    assert found(memory, "Thursdays")  # a recall before the next sync still catches the hand commit up
    nxt = memory.sync()
    # Only the hand commit's edit: never this run's own commit of `other` again ("already in git").
    assert [(c.path, c.origin, sorted(c.normalized)) for c in nxt.changes] == [
        (first, "git", ["contentHash", "updated"])
    ]
    assert nxt.commit and stamped(root, first) and subjects(root)[0] == f"remnic sync: edit {first}"
    assert nxt.head == nxt.commit and SyncState.load(root).pending == {}
    assert memory.sync().mode == "noop" and found(memory, "Thursdays")
    assert_index_matches_files(memory)


# --- 2. a sync killed (-9) in its index step ---

_KILLED_IN_INDEX_STEP = """
import os, signal, sys
from remnic.index.build import IndexWrites
from remnic.service.memory import Memory

marked = IndexWrites._mark_pending

def mark_then_die(self, cat):
    marked(self, cat)  # the index's interrupted-write mark is set: the write is under way ...
    os.kill(os.getpid(), signal.SIGKILL)  # ... and the process is killed -9 there

IndexWrites._mark_pending = mark_then_die
Memory.open(sys.argv[1]).sync()
"""


def killed_in_index_step(memory: Memory, count: int = 4) -> str:
    """New notes, then a real `sync` process killed with SIGKILL inside its index step, after its commit;
    returns the commit it made."""
    root = memory.root
    (root / "facts/bk").mkdir(parents=True)
    for i in range(count):
        (root / f"facts/bk/k{i}.md").write_text(f"Kill note {i} mentions the codeword kx{i}zulu.\n")
    before = memory.ledger.head()
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_IN_INDEX_STEP, str(root)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == -9, proc.stderr
    head = memory.ledger.head()
    assert head != before and subjects(root)[0] == f"remnic sync: {count} hand edits ({count} added)"
    assert memory.index_health()["state"] == "corrupt"  # what the report saw: interrupted write
    return str(head)


def test_sync_run_after_a_sync_killed_in_its_index_step_catches_the_index_up_and_says_so(memory: Memory) -> None:
    root = memory.root
    head = killed_in_index_step(memory)
    result = run_cli("sync", "run", "--memory-dir", str(root))
    assert result.code == 0, result.err
    assert "caught the index up" in result.out and "did not finish its index step" in result.out, result.out
    assert "interrupted write" in result.out
    health = memory.index_health()
    assert health["state"] == "ok" and health["commit"] == head
    assert_index_matches_files(memory)
    assert memory.vectors_pending()[0] == 0 and found(memory, "kx2zulu")
    assert memory.ledger.head() == head  # nothing new to commit
    second = run_cli("sync", "run", "--json", "--memory-dir", str(root)).json()
    assert second["mode"] == "noop" and second["indexNote"] is None


def test_a_watcher_started_after_a_sync_killed_in_its_index_step_catches_the_index_up(
    memory: Memory, watching: Callable[..., Running]
) -> None:
    head = killed_in_index_step(memory)
    running = watching()
    notes = [e["message"] for e in running.of("note")]
    assert any("caught the index up" in n for n in notes), running.events
    assert running.events.index(running.of("note")[0]) < running.events.index(running.of("ready")[0])
    health = memory.index_health()
    assert health["state"] == "ok" and health["commit"] == head
    assert_index_matches_files(memory)


# --- 3. a save that leaves the file missing for a while ---


def test_a_slow_rename_to_backup_save_is_one_stamped_edit_not_a_delete_and_an_add(
    memory: Memory, watching: Callable[..., Running]
) -> None:
    root = memory.root
    rel = stored(memory, "The backup codeword is amber")
    path = root / rel
    running = watching()  # debounce 100 ms
    before = subjects(root)
    new_text = path.read_text().replace("amber", "cobalt")
    os.rename(path, root / f"{rel}~")  # the editor's backup-then-write save ...
    time.sleep(0.45)  # ... on a slow disk: missing well past the debounce
    path.write_text(new_text)
    os.unlink(root / f"{rel}~")
    wait_until(lambda: len(subjects(root)) > len(before) and running.idle(root), what="the save's commit")
    time.sleep(0.3)  # a second commit would come within the debounce
    assert subjects(root)[: len(subjects(root)) - len(before)] == [f"remnic sync: edit {rel}"]
    assert stamped(root, rel) and "cobalt" in path.read_text()
    assert not [e for e in running.of("change") if e["change"] == "deleted"]


def test_a_deletion_is_held_for_the_settle_time_then_committed(
    memory: Memory, watching: Callable[..., Running]
) -> None:
    root = memory.root
    rel = stored(memory, "Temporary note about gravel")
    running = watching()
    t0 = time.monotonic()
    os.unlink(root / rel)
    time.sleep(DELETE_SETTLE_S * 0.6)
    assert f"remnic sync: delete {rel}" not in subjects(root)  # held: it may be a save under way
    wait_until(lambda: f"remnic sync: delete {rel}" in subjects(root), timeout=5, what="the delete commit")
    assert time.monotonic() - t0 < DELETE_SETTLE_S + 3.0  # promptly: the settle time and one sync
    wait_until(lambda: running.idle(root), what="the watcher to be idle")
    assert [e["change"] for e in running.of("change")] == ["deleted"]


def test_nothing_to_sync_after_a_one_shot_write_does_not_claim_the_index_is_at_head(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    assert run_cli("store", "We deploy on Tuesdays", "--memory-dir", str(root)).code == 0
    said = run_cli("sync", "run", "--memory-dir", str(root))
    assert said.code == 0 and said.out.startswith("nothing to sync")
    assert "index at" not in said.out and "files in step with commit" in said.out


# --- 4. (fy2) a move to a markdown path that is not a memory; the report after a commit landing mid-run ---


@pytest.mark.parametrize(
    ("away", "folder_made_first"), [("notes/{name}", False), ("notes/{name}", True), ("facts/README.md", False)]
)
def test_a_move_to_a_markdown_path_that_is_not_a_memory_and_back_is_held_like_a_deletion(
    memory: Memory, watching: Callable[..., Running], away: str, folder_made_first: bool
) -> None:
    """`notes/x.md` is outside the memory folders and `facts/README.md` is README-like: the file is gone
    from sync's view as surely as `x.md~`, so moving it there and back within the hold is no change.
    (A move to another top-level folder reaches watchdog as two halves, the deletion 0.5 s late.)"""
    root = memory.root
    rel = stored(memory, "The parked codeword is basalt", category="fact")
    if folder_made_first:  # watched before the move: the arrival is seen as a created file
        (root / "notes").mkdir()
    running = watching()
    before, syncs = subjects(root), running.watcher.syncs
    dest = root / away.format(name=Path(rel).name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(root / rel, dest)
    time.sleep(0.4)  # well past the debounce (100 ms), well within DELETE_SETTLE_S
    os.rename(dest, root / rel)
    wait_until(lambda: running.watcher.syncs > syncs and running.idle(root), what="the sync after the move back")
    time.sleep(0.2)  # a late commit would come within the debounce
    assert subjects(root) == before
    assert not [e for e in running.of("change") if e["change"] in ("deleted", "added")], running.events


def test_a_file_added_by_a_hand_commit_mid_run_is_reported_once_as_added_by_the_next_run(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand commit adds a note the run never read (its `git status` came after), and the run commits
    another edit on top: the next run reports the added note, and only it."""
    root = memory.root
    other = stored(memory, "Reviews happen on Fridays")
    (root / other).write_text((root / other).read_text().replace("Fridays", "Mondays"))
    (root / "facts").mkdir(exist_ok=True)
    (root / "facts/handmade.md").write_text("A hand made note about quartz.\n")
    git(root, "add", "facts/handmade.md")
    hand_commit_at(memory, monkeypatch, "facts/handmade.md", after_status=False)

    report = memory.sync()
    assert [c.path for c in report.changes] == [other] and report.head == report.commit == memory.ledger.head()
    nxt = memory.sync()
    assert [(c.kind, c.path, c.origin) for c in nxt.changes] == [("added", "facts/handmade.md", "git")]
    assert memory.sync().mode == "noop" and found(memory, "quartz")
    assert_index_matches_files(memory)
