"""A killed `remnic space pull`, continued: a hand edit made while the merge stands cut short is kept (the pull
refuses and names it), a marker whose pid is now another process does not block the repository, and a pull
killed after git committed its merge gets its last step (one memory for one moved on both sides) next time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_space_sync as sync_cases
from conftest import git, run_cli
from test_space_kill_r31 import DEADLINE_S, assert_merged_once, diverge
from test_space_sync import assert_clean, only
from test_spaces_r29 import files_holding

from remnic.errors import RepoBusyError, UncommittedChangesError
from remnic.repo import gitindex
from remnic.repo import remote as _remote
from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair
CUT = "a pull's merge was cut short"
RUNNING = "a pull's git merge is still running"


def write_marker(ben: Memory, pid: int | None, started: float) -> Path:
    git(ben.root, "fetch", "-q", "origin")
    target = git(ben.root, "rev-parse", "origin/main").strip()
    marker = ben.git_dir / gitindex.PULL_MARKER
    data = {"head": ben.head(), "target": target, "tracking": "origin/main", "pid": pid, "started": started}
    marker.write_text(json.dumps(data), encoding="utf-8")
    return marker


def cut_short(ben: Memory) -> None:
    """git killed after it wrote the merged files and copies, before MERGE_HEAD or the commit (a SIGPIPE)."""
    write_marker(ben, None, time.time())
    merge = subprocess.Popen(
        ["git", "merge", "--no-edit", "origin/main"],
        cwd=ben.root,
        env={**os.environ, "REMNIC_SKIP_HOOKS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert merge.stdout is not None and merge.stderr is not None
    merge.stdout.close()
    merge.stderr.close()
    merge.wait(timeout=DEADLINE_S)
    assert ben.ledger.in_progress() == CUT


def test_a_hand_edit_made_while_a_merge_stands_cut_short_is_kept_and_named(pair: Pair) -> None:
    ana, ben = pair
    ids = diverge(ana, ben)
    before = ben.head()
    assert before is not None
    cut_short(ben)
    edited = ben.root / ben.get(ids[0]).path
    copy = next(p for p in git(ben.root, "status", "--porcelain", "-uall").split() if "conflict" in p)
    edited.write_text(edited.read_text(encoding="utf-8") + "USERHANDEDIT0 important note\n", encoding="utf-8")
    time.sleep(0.01)
    (ben.root / copy).write_text((ben.root / copy).read_text(encoding="utf-8") + "USERHANDEDIT1\n", encoding="utf-8")
    doctor = next(c for c in ben.doctor() if c["name"] == "merge")
    assert "kept as it is" in doctor["detail"] and "puts them back" not in doctor["detail"]
    with pytest.raises(UncommittedChangesError) as refused:
        ben.space_pull()
    message = str(refused.value)
    rel = str(edited.relative_to(ben.root))
    assert rel in message and copy in message and gitindex.PULL_MARKER in message
    assert f"git -C {ben.root} checkout HEAD -- PATH" in message
    assert {p.path for p in refused.value.problems} == {rel, copy}
    assert "USERHANDEDIT0" in edited.read_text(encoding="utf-8")  # nothing was put back
    assert "USERHANDEDIT1" in (ben.root / copy).read_text(encoding="utf-8")
    assert ben.ledger.in_progress() == CUT and ben.head() == before
    # The way the refusal gives: keep the edit elsewhere, put the files back, pull, redo the edit.
    (ben.root / copy).unlink()
    git(ben.root, "checkout", "HEAD", "--", rel)
    report = ben.space_pull()
    assert report.finished_previous == "undone, to merge again" and len(report.conflicts) == len(ids)
    assert_merged_once(ben, ids, before)


def test_a_marker_whose_pid_is_another_process_now_does_not_block(pair: Pair) -> None:
    ana, ben = pair
    ana.store("A new fact from ana about the kiwi's nostrils", category="fact")
    ana.space_push()
    other = subprocess.Popen(["sleep", "600"])  # what got the dead git's pid after a reboot
    try:
        write_marker(ben, other.pid, 1700000000.0)
        assert ben.ledger.in_progress() == CUT
        started = time.monotonic()
        report = ben.space_pull()
        assert time.monotonic() - started < 20  # never waits for `sleep` as for git (30 s)
    finally:
        other.kill()
        other.wait()
    assert report.outcome == "fast-forward" and not (ben.git_dir / gitindex.PULL_MARKER).exists()
    assert any("nostrils" in r.content for r in ben.list(category="fact"))
    assert_clean(ben)


def fake_git(cwd: Path) -> subprocess.Popen[bytes]:
    """A process as /proc shows a pull's git merge (``git ... merge``), without merging anything."""
    code = "import time; time.sleep(600)"
    return subprocess.Popen(["git", "-c", code, "merge"], executable=sys.executable, cwd=cwd)


def test_a_marker_counts_as_running_only_for_a_git_merge_here_started_after_it(pair: Pair, tmp_path: Path) -> None:
    _, ben = pair
    here, elsewhere = fake_git(ben.root), fake_git(tmp_path)  # Popen returns once exec'd: /proc shows git
    try:
        write_marker(ben, here.pid, time.time() - 300)
        assert ben.ledger.in_progress() == RUNNING
        with pytest.raises(RepoBusyError) as refused:
            ben.store("A memory stored while git merges", category="fact")
        assert gitindex.PULL_MARKER in str(refused.value) and f"kill {here.pid}" in str(refused.value)
        check = next(c for c in ben.doctor() if c["name"] == "merge")
        assert check["status"] == "fail" and gitindex.PULL_MARKER in check["detail"]
        write_marker(ben, here.pid, time.time())
        assert next(c for c in ben.doctor() if c["name"] == "merge")["status"] == "warn"
        write_marker(ben, here.pid, time.time() + 60)  # the process is older than the marker: a reused pid
        assert ben.ledger.in_progress() == CUT
        write_marker(ben, elsewhere.pid, time.time() - 300)  # git of another repository
        assert ben.ledger.in_progress() == CUT
    finally:
        for proc in (here, elsewhere):
            proc.kill()
            proc.wait()


def rewrite_and_move_on_both_sides(ana: Memory, ben: Memory) -> tuple[str, dict[str, str]]:
    memory_id = only(ana)
    rewrites = {"rule": "The CI runners moved to the new cluster in March; arm64 builds, x86 tests only"}
    rewrites["principle"] = "Parking permits are renewed in January at the front desk with your badge"
    ana.update(memory_id, {"category": "rule"}, content=rewrites["rule"])
    ben.update(memory_id, {"category": "principle"}, content=rewrites["principle"])
    ana.space_push()
    return memory_id, rewrites


def test_a_pull_killed_after_git_committed_its_merge_finishes_it_next_time(pair: Pair) -> None:
    ana, ben = pair
    memory_id, rewrites = rewrite_and_move_on_both_sides(ana, ben)
    before = ben.head()
    killed = subprocess.run(
        [sys.executable, "-m", "remnic", "space", "pull", "--memory-dir", str(ben.root), "--json"],
        env={**os.environ, "REMNIC_NO_DAEMON": "1", "REMNIC_CRASH_AT": "pull-merging"},
        capture_output=True,
        timeout=DEADLINE_S,
    )
    assert killed.returncode == -9
    assert git(ben.root, "rev-parse", "HEAD^1").strip() == before  # git committed the merge
    # ... in its scratch work tree: HEAD holds the two files, the working tree is not brought over yet
    assert len(git(ben.root, "grep", "-l", f"id: {memory_id}", "HEAD").split()) == 2
    assert len(files_holding(ben, memory_id)) == 1
    assert ben.ledger.in_progress() == "a pull was killed before it finished its merge"
    assert next(c for c in ben.doctor() if c["name"] == "merge")["status"] == "fail"
    with pytest.raises(RepoBusyError, match="remnic space pull"):
        ben.store("A memory stored before the pull finished", category="fact")
    doctor = run_cli("doctor", "--memory-dir", str(ben.root))
    assert "finishes it" in doctor.out
    report = ben.space_pull()
    assert report.finished_previous == "finished" and report.outcome == "merge" and report.before == before
    (path,) = files_holding(ben, memory_id)
    (conflict,) = report.conflicts
    assert conflict["path"] == path and conflict["copyId"] != memory_id and conflict["inReview"]
    assert files_holding(ben, conflict["copyId"]) == [conflict["copyPath"]]
    copy = ben.get(conflict["copyId"])
    assert copy.status == "pending_review"
    assert {ben.get(memory_id).content.strip(), copy.content.strip()} == set(rewrites.values())
    subjects = git(ben.root, "log", "--format=%s", f"{before}..HEAD").splitlines()
    assert subjects[1] == "remnic pull: merge origin/main" and "kept the other side's version" in subjects[0]
    assert not [s for s in subjects if s.startswith("remnic sync")]
    assert git(ben.root, "rev-parse", "HEAD~1^1").strip() == before  # the merge commit itself was amended
    assert not (ben.git_dir / gitindex.PULL_MARKER).exists() and ben.ledger.in_progress() is None
    assert next(c for c in ben.doctor() if c["name"] == "duplicate-ids")["status"] == "ok"
    assert _remote.merge_head(ben.ledger) is None
    assert_clean(ben)
