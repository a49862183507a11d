"""A `remnic space pull` killed with SIGKILL while git runs the merge (the merge driver's moment): git
finishes the merge on its own, and when git itself is killed too the next pull undoes what it left and
merges again, never committing the other side's changes as this clone's hand edits. Also the advice of
the errors and doctor lines around a pull: what blocks a merge, and a merge in progress."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_space_sync as sync_cases
from conftest import git, run_cli
from test_space_sync import assert_clean, edit_body
from test_spaces_r29 import diverge_notes

from remnic.errors import RepoBusyError
from remnic.repo import gitindex
from remnic.repo import remote as _remote
from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair
# Two conflicting files: the pull is killed while git runs the driver on the first, git runs the second on its own.
FACTS = [f"Fact number {i} about kiwis and their long beaks" for i in range(1, 3)]
DEADLINE_S = 90.0


def diverge(ana: Memory, ben: Memory) -> list[str]:
    """Memories both clones edit on the same line (each a true conflict the driver keeps as a copy)."""
    ids = [ana.store(text, category="fact").id for text in FACTS]
    ana.space_push()
    ben.space_pull()
    for memory_id in ids:
        edit_body(ana, memory_id, "long beaks", "long beaks, says ana")
        edit_body(ben, memory_id, "Fact number", "Fact no.")
    ana.sync()
    ana.space_push()
    ben.sync()
    return ids


def driver_pids(root: Path) -> list[int]:
    """`remnic merge-file` processes git runs for ``root``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        # git runs the driver in the pull's scratch work tree (remnic.service.pull_guard)
        if (
            b"merge-file" in cmdline
            and b"remnic" in cmdline
            and Path(cwd) in (root, root / ".git" / "remnic-pull-tree")
        ):
            found.append(int(proc.name))
    return found


def pull_until_the_driver_runs(ben: Memory) -> tuple[subprocess.Popen[bytes], list[int]]:
    env = {**os.environ, "REMNIC_NO_DAEMON": "1"}
    puller = subprocess.Popen(
        [sys.executable, "-m", "remnic", "space", "pull", "--memory-dir", str(ben.root), "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + DEADLINE_S
    # /proc is scanned once the marker names git's pid (a read of one file before: a scan costs milliseconds)
    while not (drivers := driver_pids(ben.root) if git_merge_pid(ben) else []):
        assert puller.poll() is None, "the pull ended before git ran the merge driver"
        assert time.monotonic() < deadline, "git never ran the merge driver"
        time.sleep(0.005)
    return puller, drivers


def git_merge_pid(ben: Memory) -> int | None:
    """The pid of the pull's ``git merge``, once its marker names one."""
    try:
        pid = json.loads((ben.git_dir / gitindex.PULL_MARKER).read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError):
        return None
    return pid if isinstance(pid, int) else None


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (it may be reaped between two reads of /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while _running(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.05)


def as_if_a_second_passed(ben: Memory) -> None:
    """What waiting 1.1 s does to the two clocks a pull reads to clear the index.lock a killed merge left (taken
    after the merge started, and older than a live git holds one): both set back 1.1 s, no sleep."""
    marker = ben.git_dir / gitindex.PULL_MARKER
    data = json.loads(marker.read_text(encoding="utf-8"))
    data["started"] -= 1.1
    marker.write_text(json.dumps(data), encoding="utf-8")
    lock = ben.git_dir / "index.lock"
    if lock.exists():
        made = lock.stat()
        os.utime(lock, ns=(made.st_atime_ns - 1_100_000_000, made.st_mtime_ns - 1_100_000_000))


def hand_edit_commits(mem: Memory, since: str) -> list[str]:
    subjects = git(mem.root, "log", "--first-parent", "--format=%s", f"{since}..HEAD").splitlines()
    return [s for s in subjects if "hand edit" in s]


def assert_merged_once(ben: Memory, ids: list[str], before: str) -> None:
    """The other side's edits arrived in a merge commit, the copies in remnic's merge commit, none as edits."""
    assert hand_edit_commits(ben, before) == []
    merges = git(ben.root, "log", "--merges", "--format=%s", f"{before}..HEAD").splitlines()
    assert merges == ["remnic pull: merge origin/main"]
    assert git(ben.root, "status", "--porcelain").strip() == ""
    for memory_id in ids:
        record = ben.get(memory_id)
        assert "Fact no." in record.content, record.content  # this side's version stays at the path
    copies = [r for r in ben.list(category="fact") if r.id not in ids]
    assert len(copies) == len(ids) and all("says ana" in c.content for c in copies)
    assert_clean(ben)


def test_kill_9_of_the_pull_while_the_driver_runs_leaves_git_to_finish_the_merge(pair: Pair) -> None:
    ana, ben = pair
    ids = diverge(ana, ben)
    before = ben.head()
    assert before is not None
    puller, _ = pull_until_the_driver_runs(ben)
    git_pid = git_merge_pid(ben)
    assert git_pid is not None
    puller.send_signal(signal.SIGKILL)
    assert puller.wait(timeout=DEADLINE_S) == -9
    deadline = time.monotonic() + DEADLINE_S
    while driver_pids(ben.root) or ben.ledger.in_progress() == "a pull's git merge is still running":
        assert time.monotonic() < deadline, "git never finished the merge"
        time.sleep(0.05)
    wait_gone(git_pid)  # git writes HEAD or MERGE_HEAD after its last driver, then ends
    # One of the documented states: a merge committed (the pull's last step and copies waiting) or in progress.
    committed = "a pull was killed before it finished its merge"
    assert ben.ledger.in_progress() in (committed, "a merge is in progress")
    if ben.ledger.in_progress() == committed:
        assert git(ben.root, "rev-parse", "HEAD^1").strip() == before
        assert git(ben.root, "rev-parse", "HEAD^2").strip() == git(ben.root, "rev-parse", "origin/main").strip()
    report = ben.space_pull()
    assert len(report.conflicts) == len(ids)
    assert_merged_once(ben, ids, before)


def test_a_pull_whose_git_merge_was_killed_too_merges_again_instead_of_committing_hand_edits(pair: Pair) -> None:
    ana, ben = pair
    ids = diverge(ana, ben)
    before = ben.head()
    assert before is not None
    puller, drivers = pull_until_the_driver_runs(ben)
    marker = json.loads((ben.git_dir / gitindex.PULL_MARKER).read_text(encoding="utf-8"))
    # The whole chain dies at once (a process group killed, the OOM killer): nothing cleans up after git.
    for pid in (puller.pid, marker["pid"], *drivers):
        os.kill(pid, signal.SIGKILL)
    puller.wait(timeout=DEADLINE_S)
    for pid in (marker["pid"], *drivers):
        wait_gone(pid)
    assert _remote.merge_head(ben.ledger) is None and ben.head() == before
    assert ben.ledger.in_progress() == "a pull's merge was cut short"
    check = next(c for c in ben.doctor() if c["name"] == "merge")
    assert check["status"] == "fail" and "a file edited since is kept as it is" in check["detail"]
    assert ben.sync().mode == "paused"  # sync never commits what git left as hand edits
    with pytest.raises(RepoBusyError, match="remnic space pull"):
        ben.store("A memory stored while the merge is cut short", category="fact")
    as_if_a_second_passed(ben)  # the killed git's index.lock is older than a live git ever holds one
    report = ben.space_pull()
    assert report.finished_previous == "undone, to merge again" and report.outcome == "merge"
    assert len(report.conflicts) == len(ids)
    assert not (ben.git_dir / gitindex.PULL_MARKER).exists()
    assert_merged_once(ben, ids, before)


def test_the_half_merge_a_sigpipe_left_is_put_back_not_committed(pair: Pair) -> None:
    """The state the report found: git killed after it wrote the merged files, before MERGE_HEAD or the commit
    (as a pipe whose reader died kills it). The marker is what a pull writes around its git merge."""
    ana, ben = pair
    ids = diverge(ana, ben)
    before = ben.head()
    git(ben.root, "fetch", "-q", "origin")
    target = git(ben.root, "rev-parse", "origin/main").strip()
    marker = {"head": before, "target": target, "tracking": "origin/main", "pid": None, "started": time.time()}
    (ben.git_dir / gitindex.PULL_MARKER).write_text(json.dumps(marker), encoding="utf-8")
    env = {**os.environ, "REMNIC_SKIP_HOOKS": "1"}
    merge = subprocess.Popen(
        ["git", "merge", "--no-edit", "origin/main"],
        cwd=ben.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert merge.stdout is not None and merge.stderr is not None
    merge.stdout.close()
    merge.stderr.close()
    assert merge.wait(timeout=DEADLINE_S) == -signal.SIGPIPE
    assert _remote.merge_head(ben.ledger) is None and ben.head() == before
    dirty = git(ben.root, "status", "--porcelain").splitlines()
    assert len(dirty) == 2 * len(ids)  # the merged files and the copies, as in the report
    doctor = run_cli("doctor", "--memory-dir", str(ben.root))
    assert "not hand edits" in doctor.out and "run `remnic sync run`" not in doctor.out
    report = ben.space_pull()
    assert report.edits_commit is None and report.finished_previous == "undone, to merge again"
    assert_merged_once(ben, ids, before)


def test_what_blocks_a_merge_gets_advice_for_its_own_cause(pair: Pair) -> None:
    ana, ben = pair
    (ana.root / "README.md").write_text("theirs\n")
    (ana.root / "docs").mkdir()
    (ana.root / "docs" / "guide.txt").write_text("theirs\n")
    git(ana.root, "add", "README.md", "docs/guide.txt")
    git(ana.root, "commit", "-qm", "readme and guide")
    ana.space_push()
    (ben.root / "README.md").write_text("mine\n")
    git(ben.root, "add", "README.md")
    git(ben.root, "commit", "-qm", "readme")
    (ben.root / "README.md").write_text("mine, changed\n")
    (ben.root / "docs").mkdir()
    (ben.root / "docs" / "guide.txt").write_text("mine\n")
    out = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json")
    assert out.code == 1, out.err
    error = json.loads(out.err)
    assert error["code"] == "uncommitted_changes"
    text = error["error"]
    assert "malformed" not in text and "remnic doctor" not in text
    assert "README.md: uncommitted (not a memory file)" in text
    assert "docs/guide.txt: untracked (not a memory file), and the remote adds a file at this path" in text
    assert "Commit or discard the uncommitted changes, move or delete the untracked files" in text
    assert {d["path"]: d["message"] for d in error["details"]} == {
        "README.md": "uncommitted change the merge would overwrite",
        "docs/guide.txt": "untracked file where the merge adds one",
    }
    assert (ben.root / "docs" / "guide.txt").read_text() == "mine\n"


def test_during_a_merge_store_and_doctor_name_space_pull(pair: Pair) -> None:
    ana, ben = pair
    diverge_notes(ana, ben)
    edit_body(ben, ben.list(category="decision")[0].id, "Tuesdays", "Mondays")
    stored = run_cli("store", "during the merge", "--memory-dir", str(ben.root), "--json")
    assert stored.code == 1
    error = json.loads(stored.err)
    assert error["code"] == "repo_busy" and "`remnic space pull` finishes it" in error["error"]
    doctor = run_cli("doctor", "--memory-dir", str(ben.root))
    tree = next(line for line in doctor.out.splitlines() if "working-tree" in line)
    assert "remnic sync run" not in tree and "remnic space pull" in tree and "sync is paused" in tree
