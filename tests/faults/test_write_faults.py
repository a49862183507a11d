"""A write is done or never happened: under git's own index.lock, a kill -9 at each step, and user edits.

Every test uses a real repository and real processes; a crash is a real SIGKILL of a real
`remnic` process at a named step (``REMNIC_CRASH_AT``), which timing alone could not hit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import git, run_cli, run_remnic, snapshot_tree

from remnic.config import settings_for
from remnic.errors import LedgerError
from remnic.memfile.model import parse_file
from remnic.service import Memory

CRASH_POINTS = ("journal-written", "files-written", "commit-object", "head-moved", "committed")
BEFORE_HEAD_MOVES = {"journal-written", "files-written", "commit-object"}


def fsck(root: Path) -> None:
    subprocess.run(["git", "fsck", "--no-progress"], cwd=root, check=True, capture_output=True)


def status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "mem"
    Memory.init(path, settings=settings_for(path)).close()
    return path


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_store_killed_at_each_step_is_done_or_never_happened(root: Path, point: str) -> None:
    before_head, before_files = head(root), snapshot_tree(root)
    result = run_remnic("store", "Deploys freeze on Fridays", "--memory-dir", str(root), env={"REMNIC_CRASH_AT": point})
    assert result.code == -9  # killed at the step, before any answer
    # Whoever writes next finishes or undoes it; a status check alone must not need to.
    after = run_remnic("store", "An unrelated second memory", "--memory-dir", str(root))
    assert after.code == 0, after.err
    listed = {m["content"] for m in run_cli("list", "--json", "--memory-dir", str(root)).json()["memories"]}
    if point in BEFORE_HEAD_MOVES:
        assert "Deploys freeze on Fridays" not in listed
        assert git(root, "rev-list", "--count", f"{before_head}..HEAD").strip() == "1"
    else:
        assert "Deploys freeze on Fridays" in listed
        assert git(root, "rev-list", "--count", f"{before_head}..HEAD").strip() == "2"
    assert status(root) == ""  # no orphan file, no staged deletion, the git index in step
    assert not list((root / ".remnic" / "txn").glob("*.json"))
    fsck(root)
    files_now = snapshot_tree(root)
    assert {k: v for k, v in files_now.items() if k in before_files} == before_files


@pytest.mark.parametrize("point", ["files-written", "head-moved"])
def test_import_killed_midway_is_all_or_nothing_and_a_retry_never_duplicates(
    root: Path, tmp_path: Path, point: str
) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps({"content": f"Imported fact number {i}"}) + "\n" for i in range(120)))
    killed = run_remnic("import", str(batch), "--memory-dir", str(root), env={"REMNIC_CRASH_AT": point})
    assert killed.code == -9
    retry = run_remnic("import", str(batch), "--memory-dir", str(root), "--json")
    assert retry.code == 0, retry.err
    memories = run_cli("list", "--json", "--memory-dir", str(root)).json()["memories"]
    contents = [m["content"] for m in memories]
    assert len(contents) == len(set(contents)) == 120  # every line once: undone and redone, or kept and skipped
    assert retry.json()["imported"] == (120 if point == "files-written" else 0)
    assert status(root) == ""
    fsck(root)


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_sync_killed_at_each_step_loses_no_hand_edit(root: Path, point: str) -> None:
    with Memory.open(root) as memory:  # setup only: the kill under test is the sync's
        path = root / memory.store("The staging DB port is 5432").record.path
    path.write_text(path.read_text().replace("5432", "5433"))  # a hand edit, then a sync killed mid-commit
    (root / "facts" / "handwritten.md").write_text("Ana prefers tabs over spaces\n")
    killed = run_remnic("sync", "run", "--memory-dir", str(root), env={"REMNIC_CRASH_AT": point})
    assert killed.code == -9
    assert "5433" in path.read_text()  # whatever the kill undid, it was not the user's edit
    again = run_cli("sync", "run", "--memory-dir", str(root), "--json")
    assert again.code == 0, again.err
    assert status(root) == ""  # both edits committed by one sync or the other, nothing left behind
    assert "5433" in git(root, "show", f"HEAD:{path.relative_to(root)}")
    assert "Ana prefers tabs over spaces" in git(root, "show", "HEAD:facts/handwritten.md")
    found = run_cli("query", "staging DB port", "--memory-dir", str(root), "--json").json()
    assert "5433" in found["hits"][0]["content"]
    assert not list((root / ".remnic" / "txn").glob("*.json"))
    fsck(root)


def test_store_with_gits_index_lock_held_is_committed_and_the_index_repaired_later(root: Path) -> None:
    settings = settings_for(root)
    settings.store.git_retry_s = 0.5  # a user's `git commit` holds index.lock with its editor open
    lock = root / ".git" / "index.lock"
    lock.write_text("")
    with Memory.open(settings=settings) as memory:
        result = memory.store("We deploy on Tuesdays")
        assert result.changed and result.commit == head(root)  # HEAD moved: the write is done
        assert (root / result.record.path).is_file()  # and its file is never deleted
        doctor = {c["name"]: c for c in memory.doctor()}
        assert doctor["writes"]["status"] == "warn" and "git's index behind HEAD" in doctor["writes"]["detail"]
        lock.unlink()
        memory.store("Ana prefers tabs")  # the next write repairs git's index first
        assert status(root) == ""
        assert {c["name"]: c for c in memory.doctor()}["writes"]["status"] == "ok"
    fsck(root)


def _short_git_retry(root: Path, seconds: float) -> None:
    config = root / "remnic.config.json"
    data = json.loads(config.read_text())
    data.setdefault("store", {})["gitRetryS"] = seconds
    config.write_text(json.dumps(data))
    git(root, "add", "remnic.config.json")
    git(root, "commit", "-q", "-m", "shorter git retry")


def _unlink_once_a_write_started(root: Path, lock: Path) -> threading.Thread:
    """Release ``lock`` shortly after a write's journal appears: the writer is then at, or nearly at, the lock."""

    def run() -> None:
        deadline = time.monotonic() + 120
        while not list((root / ".remnic" / "txn").glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        lock.unlink()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_cli_store_waits_for_a_released_index_lock_and_reports_a_held_one(root: Path) -> None:
    _short_git_retry(root, 1.5)
    lock = root / ".git" / "index.lock"
    # Released within the bound: the write finishes as if nothing happened.
    lock.write_text("")
    releaser = _unlink_once_a_write_started(root, lock)
    released = run_remnic("store", "We deploy on Tuesdays", "--memory-dir", str(root), "--json")
    releaser.join()
    assert released.code == 0, released.err
    assert "warnings" not in released.json() and released.json()["commit"] == head(root)
    assert status(root) == ""
    # Held past the bound: done (HEAD moved, the file kept), and said so on stderr and in the JSON.
    lock.write_text("")
    held = run_remnic("store", "We deploy on Fridays", "--memory-dir", str(root), "--json")
    assert held.code == 0, held.err
    data = held.json()
    assert data["commit"] == head(root) and (root / data["path"]).is_file()
    [warning] = data["warnings"]
    assert warning["field"] == "gitIndex" and "index.lock" in warning["message"] and "sync run" in warning["message"]
    assert "the write is committed" in held.err
    doctor = {c["name"]: c for c in run_cli("doctor", "--json", "--memory-dir", str(root)).json()["checks"]}
    assert doctor["writes"]["status"] == "warn"
    assert doctor["working-tree"]["status"] == "ok"  # nothing for sync to commit: only git's index lags
    lock.unlink()
    synced = run_cli("sync", "run", "--memory-dir", str(root), "--json")
    assert synced.code == 0, synced.err
    assert status(root) == ""  # the lag repaired, the file never deleted
    assert "We deploy on Fridays" in git(root, "show", f"HEAD:{data['path']}")
    fsck(root)


def test_forget_and_update_under_a_held_index_lock_never_revert_what_head_records(root: Path) -> None:
    settings = settings_for(root)
    settings.store.git_retry_s = 0.3
    with Memory.open(settings=settings) as memory:
        rec = memory.store("The staging DB port is 5432").record
        (root / ".git" / "index.lock").write_text("")
        forgotten = memory.forget(rec.id, reason="moved")
        updated = memory.update(rec.id, {"tags": ["db"]})
        (root / ".git" / "index.lock").unlink()
        assert forgotten.commit and updated.commit == head(root)
        committed = git(root, "show", f"HEAD:{rec.path}")
        meta = parse_file(committed, rec.path).frontmatter
        assert meta["status"] == "forgotten" and meta["tags"] == ["db"]
        assert (root / rec.path).read_text() == committed
        memory.sync()
        assert status(root) == ""


def test_update_carries_a_users_uncommitted_edit_aside(root: Path) -> None:
    with Memory.open(root) as memory:
        rec = memory.store("Ana prefers tabs", category="preference").record
        path = root / rec.path
        path.write_text(path.read_text().replace("Ana prefers tabs", "Ana prefers tabs, width 4"))
        memory.forget(rec.id, reason="obsolete")
    committed = git(root, "show", f"HEAD:{rec.path}")
    assert parse_file(committed, rec.path).status == "forgotten" and "width 4" not in committed  # not in our commit
    on_disk = path.read_text()
    assert parse_file(on_disk, rec.path).status == "forgotten" and "width 4" in on_disk  # and not lost either
    assert status(root).strip() == f"M {rec.path}"  # still hers to commit


def test_concurrent_writers_in_one_process_share_commits_and_lose_nothing(root: Path) -> None:
    errors: list[BaseException] = []
    with Memory.open(root) as memory:
        before = int(git(root, "rev-list", "--count", "HEAD"))

        def writer(n: int) -> None:
            try:
                for i in range(15):
                    memory.store(f"Writer {n} wrote note {i}")
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors
        contents = {r.content for r in memory.list()}
    assert contents == {f"Writer {n} wrote note {i}" for n in range(8) for i in range(15)}
    commits = int(git(root, "rev-list", "--count", "HEAD")) - before
    assert commits < 120  # writers that queued behind a commit were group-committed
    assert status(root) == ""
    fsck(root)


def test_writers_in_several_processes_lose_nothing(root: Path) -> None:
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from remnic.service import Memory\n"
                "m = Memory.open(sys.argv[1])\n"
                "for i in range(6): m.store(f'Process {sys.argv[2]} wrote note {i}')\n"
                "m.close()",
                str(root),
                str(n),
            ],
            stderr=subprocess.PIPE,
        )
        for n in range(4)
    ]
    for proc in procs:
        assert proc.wait(120) == 0, proc.stderr.read() if proc.stderr else ""
    with Memory.open(root) as memory:
        contents = {r.content for r in memory.list()}
    assert contents == {f"Process {n} wrote note {i}" for n in range(4) for i in range(6)}
    assert status(root) == ""


def test_the_repositorys_pre_commit_hook_guards_remnics_writes_when_asked(root: Path) -> None:
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/bin/sh\nif git diff --cached | grep -q FORBIDDEN; then echo 'secret scanner: no' >&2; exit 1; fi\n"
    )
    hook.chmod(0o755)
    with Memory.open(root) as memory:  # by default remnic's commits skip git's hooks (documented)
        assert memory.store("FORBIDDEN words, but hooks are off").changed
    settings = settings_for(root)
    settings.git.run_hooks = True
    with Memory.open(settings=settings) as memory:
        before_head, before_files = head(root), snapshot_tree(root)
        with pytest.raises(LedgerError, match="pre-commit hook refused"):
            memory.store("FORBIDDEN words again")
        assert head(root) == before_head and snapshot_tree(root) == before_files and status(root) == ""
        assert memory.store("Harmless words").commit == head(root)
