"""Writes beside a plain `git pull`, and what an update changed, told by its own transaction.

- A merge git is still making (its index.lock held, its MERGE_HEAD just written) is waited for, so a store
  made while a user runs `git pull` lands; a merge that stays is refused, naming index.lock when git holds it.
- An update's result names every file its transaction staged (``written``), and ``alsoChanged`` comes from
  that: the memory its ``supersedes`` marked, the successor whose claim a revival dropped.

Real git throughout: a real `git pull` paused in its merge commit by a hook, real lock files.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import GIT_IDENTITY, git

from remnic.errors import RepoBusyError
from remnic.service import Memory
from remnic.service import updating as _updating


def _hold_merge(root: Path, *, lock: bool) -> list[Path]:
    """What git leaves while it makes a merge: MERGE_HEAD (and its index.lock, ``lock``)."""
    held = [root / ".git" / "MERGE_HEAD"]
    held[0].write_text(git(root, "rev-parse", "HEAD"))
    if lock:
        held.append(root / ".git" / "index.lock")
        held[1].write_text("")
    return held


def test_a_store_waits_for_a_merge_git_is_still_making(memory: Memory) -> None:
    held = _hold_merge(memory.root, lock=True)
    timer = threading.Timer(0.2, lambda: [p.unlink() for p in held])
    timer.start()
    started = time.monotonic()
    try:
        result = memory.store("Stored while git pull merged", category="fact")
    finally:
        timer.join()
    assert result.commit is not None and time.monotonic() - started >= 0.15
    assert git(memory.root, "log", "-1", "--format=%s").startswith("remnic store: Stored while git pull merged")


def test_a_store_beside_a_real_git_pull_paused_in_its_merge_commit_lands(memory: Memory, tmp_path: Path) -> None:
    root = memory.root
    memory.store("Deploys go out on Tuesdays", category="fact")
    up = tmp_path / "up"
    subprocess.run(["git", "clone", "-q", str(root), str(up)], check=True)
    (up / "notes.txt").write_text("theirs\n")
    git(up, "add", "notes.txt")
    git(up, "commit", "-qm", "their note")
    memory.store("Our side's own memory", category="fact")  # the two histories diverge: git pull merges
    signal = tmp_path / "merging"
    hooks = Path(git(root, "rev-parse", "--git-path", "hooks").strip())
    hook = (root / hooks if not hooks.is_absolute() else hooks) / "prepare-commit-msg"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f'#!/bin/sh\ntouch "{signal}"\nsleep 0.5\n')  # git runs it with MERGE_HEAD written
    hook.chmod(0o755)
    pull = subprocess.Popen(
        ["git", *GIT_IDENTITY, "pull", "-q", "--no-rebase", "--no-edit", str(up), "HEAD"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not signal.exists():
            assert pull.poll() is None and time.monotonic() < deadline, pull.communicate()
            time.sleep(0.01)
        assert (root / ".git" / "MERGE_HEAD").exists()
        result = memory.store("Stored during the user's git pull", category="fact")
    finally:
        _, err = pull.communicate(timeout=30)
    assert pull.returncode == 0, err
    assert result.commit is not None
    subjects = git(root, "log", "--format=%s").splitlines()
    assert subjects[0] == "remnic store: Stored during the user's git pull"
    assert subjects[1].startswith("Merge")  # the pull's merge commit first, the store on top of it
    assert (root / "notes.txt").read_text() == "theirs\n" and not (root / ".git" / "MERGE_HEAD").exists()


def test_a_merge_git_keeps_holding_is_refused_naming_its_index_lock(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("remnic.service.writes.checks.GIT_AT_WORK_WAIT_S", 0.4)
    held = _hold_merge(memory.root, lock=True)
    started = time.monotonic()
    with pytest.raises(RepoBusyError) as refused:
        memory.store("Never written", category="fact")
    waited = time.monotonic() - started
    message = str(refused.value)
    assert message.startswith("cannot write memories now: a merge is in progress")
    assert str(held[1]) in message and message.endswith("then retry")
    assert 0.35 <= waited < 5
    assert "Never written" not in git(memory.root, "log", "--format=%s")


def test_a_merge_stopped_long_ago_is_refused_at_once_as_before(memory: Memory) -> None:
    (head,) = _hold_merge(memory.root, lock=False)
    past = time.time() - 60
    os.utime(head, (past, past))  # git stopped in it a minute ago (conflicts, --no-commit): no one to wait for
    started = time.monotonic()
    with pytest.raises(RepoBusyError) as refused:
        memory.store("Never written", category="fact")
    assert time.monotonic() - started < 1.5
    assert str(refused.value) == (
        "cannot write memories now: a merge is in progress (`remnic space pull` finishes it); then retry"
    )


def test_an_update_names_the_files_its_transaction_staged_and_also_changed_comes_from_them(memory: Memory) -> None:
    old = memory.store("The API port is 8080", category="fact").record
    new = memory.store("The API port is 9090", category="fact").record
    marked = memory.update(new.id, {"supersedes": old.id})
    written = {w.path: w for w in marked.written}
    assert set(written) == {old.path, new.path}
    before, after = written[old.path].before, written[old.path].after
    assert before is not None and after is not None
    assert (before.status, after.status, after.frontmatter.get("supersededBy")) == ("active", "superseded", new.id)
    assert [(a.id, a.path, a.change) for a in _updating.also_changed(marked)] == [(old.id, old.path, "superseded")]
    revived = _updating.update(memory, old.id, {"status": "active"}, source="api")
    assert [(a.id, a.change) for a in revived.also_changed] == [(new.id, "supersedes-dropped")]
    assert revived.to_dict()["alsoChanged"] == [{"id": new.id, "path": new.path, "change": "supersedes-dropped"}]
    again = _updating.update(memory, old.id, {"status": "active"}, source="api")
    assert again.changed is False and again.written == () and again.also_changed == ()
