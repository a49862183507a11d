"""Git's index moves with HEAD under git's own index.lock: a hand `git commit` racing remnic's writes never
records a just-stored memory as deleted, and a writer killed holding the lock leaves nothing locked.

Real git, real threads and processes: the race is hit by committing by hand the moment HEAD moves.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

from conftest import GIT_IDENTITY, git, run_remnic

from remnic.config import settings_for
from remnic.repo import gitindex
from remnic.service import Memory

STORES = 40


def _branch_ref(root: Path) -> Path:
    head = (root / ".git" / "HEAD").read_text().strip()
    assert head.startswith("ref: ")
    return root / ".git" / head[5:]


def _read(ref: Path) -> str:
    try:
        return ref.read_text().strip()
    except FileNotFoundError:  # git replaces it by rename: read again
        return ""


def test_a_hand_commit_racing_remnic_writes_never_records_a_memory_as_deleted(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    notes = root / "notes.txt"
    notes.write_text("hand notes\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-qm", "notes")
    ref = _branch_ref(root)
    stored: list[str] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def writer() -> None:
        try:
            with Memory.open(settings=settings_for(root)) as memory:
                for i in range(STORES):
                    stored.append(memory.store(f"Race note {i}: the deploy window moved to {i} pm").record.path)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    seen = _read(ref)
    thread.start()
    made = refused = 0
    deadline = time.monotonic() + 60
    while not done.is_set() and time.monotonic() < deadline:
        now = _read(ref)
        if now in ("", seen):
            time.sleep(0.0002)
            continue
        # HEAD just moved (remnic committed): commit a hand edit at once, as fast as git can start.
        with notes.open("a") as fh:
            fh.write(f"hand {made + refused}\n")
        for _try in range(3):  # refused by git's own lock: try again, as a user would
            proc = subprocess.run(
                ["git", *GIT_IDENTITY, "commit", "-qam", f"hand {made + refused}"],
                cwd=root,
                capture_output=True,
                text=True,
            )
            if proc.returncode == 0:
                made += 1
                break
            # git's own refusal ("index.lock': File exists", or HEAD moved on): the right outcome
            assert "index.lock" in proc.stderr or "cannot lock ref" in proc.stderr, proc.stderr
            refused += 1
            time.sleep(0.005)
        seen = _read(ref)
    thread.join(timeout=60)
    assert not errors, errors
    assert len(stored) == STORES and made >= 5, (made, refused)

    hand = [line.split("\0") for line in git(root, "log", "--format=%H%x00%s").splitlines()]
    hand_commits = [sha for sha, subject in hand if subject.startswith("hand ")]
    assert len(hand_commits) == made  # every hand commit git reported is in history: none overwritten
    for sha in hand_commits:
        changed = git(root, "diff-tree", "--no-commit-id", "--name-status", "-r", sha).split("\n")
        assert [c for c in changed if c] == ["M\tnotes.txt"], (sha, changed)
    in_head = set(git(root, "ls-tree", "-r", "--name-only", "HEAD").split())
    assert set(stored) <= in_head
    status = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [s for s in status if "notes.txt" not in s] == []  # git's index in step for every memory
    assert not (root / ".git" / "index.lock").exists()


def test_a_writer_killed_holding_gits_index_lock_leaves_git_usable(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    killed = run_remnic(
        "store", "Deploys freeze on Fridays", "--memory-dir", str(root), env={"REMNIC_CRASH_AT": "head-moved"}
    )
    assert killed.code == -9
    assert (root / ".git" / "index.lock").exists()  # killed between moving HEAD and releasing git's lock
    started = time.monotonic()
    after = run_remnic("store", "An unrelated second memory", "--memory-dir", str(root))
    assert after.code == 0, after.err
    assert time.monotonic() - started < 8  # the dead writer's lock removed, not waited out (gitRetryS is 10 s)
    assert not (root / ".git" / "index.lock").exists()
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert "Deploys freeze on Fridays" in git(root, "log", "-p", "-n", "2")
    assert not list((root / ".git").glob("index.remnic-*"))
    (root / "notes.txt").write_text("hand\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-qm", "hand")  # git works again


def test_a_writer_killed_after_installing_the_index_before_head_moved_is_undone(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    before = git(root, "rev-parse", "HEAD")
    index_before = (root / ".git" / "index").read_bytes()
    killed = run_remnic(
        "store", "Deploys freeze on Fridays", "--memory-dir", str(root), env={"REMNIC_CRASH_AT": "index-installed"}
    )
    assert killed.code == -9 and git(root, "rev-parse", "HEAD") == before
    assert (root / ".git" / "index").read_bytes() != index_before  # git's index says what HEAD does not yet
    after = run_remnic("store", "An unrelated second memory", "--memory-dir", str(root), "--json")
    assert after.code == 0, after.err
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""  # the old index put back first
    listed = {m["content"] for m in run_remnic("list", "--json", "--memory-dir", str(root)).json()["memories"]}
    assert listed == {"An unrelated second memory"}
    assert not (root / ".git" / "index.lock").exists() and not list((root / ".git").glob("index.remnic-*"))


def test_a_lock_git_took_after_a_dead_writers_is_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    lock = root / ".git" / "index.lock"
    marker = root / ".remnic" / gitindex.MARKER
    lock.write_text("")
    st = os.stat(lock)
    identity = [st.st_dev, st.st_ino, st.st_mtime_ns]
    lock.unlink()
    lock.write_text("someone else's")  # the user removed the dead writer's lock; git took a new one
    os.utime(lock, ns=(st.st_mtime_ns + 1_000_000_000, st.st_mtime_ns + 1_000_000_000))
    marker.write_text(
        json.dumps({"pid": 2**22 + 7, "lock": str(lock), "identity": identity, "commit": None, "paths": []})
    )
    assert gitindex.clear_stale(marker, lambda sha: False, lambda paths: None) is not None
    assert lock.read_text() == "someone else's" and not marker.exists()
