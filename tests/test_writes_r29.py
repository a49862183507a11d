"""Writes against odd filesystem states: dangling symlinks, symlinked or file-shaped category folders,
a read-only memory directory, and file names git's line-based input cannot carry."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import git, run_cli, snapshot_tree

from remnic.errors import RepoBusyError
from remnic.repo import lock as lock_module
from remnic.repo.files import FILE_NOT_FOLDER, SYMLINKED_FOLDER
from remnic.service.memory import Memory

OUTSIDE = "leads outside the memory repository through a symlinked folder"


def _head(memory: Memory) -> str:
    return git(memory.root, "rev-parse", "HEAD").strip()


def _no_journal(memory: Memory) -> bool:
    txn = memory.root / ".remnic" / "txn"
    return not txn.exists() or not any(txn.iterdir())


def _check(memory: Memory, name: str) -> dict:
    return next(c for c in memory.doctor() if c["name"] == name)


# --- 1. a dangling symlink is the user's: never renamed over ---


def test_store_never_replaces_a_committed_dangling_symlink(memory: Memory) -> None:
    link = memory.root / "facts" / "backup-plan.md"
    link.symlink_to("/mnt/usb/notes/backup-plan.md")
    git(memory.root, "add", "facts/backup-plan.md")
    git(memory.root, "commit", "-qm", "my link")

    result = memory.store("Backup plan", category="fact")

    assert result.record.path == "facts/backup-plan-2.md"
    assert link.is_symlink() and os.readlink(link) == "/mnt/usb/notes/backup-plan.md"
    tree = git(memory.root, "ls-tree", "HEAD", "facts/backup-plan.md")
    assert tree.startswith("120000 "), tree


def test_a_staged_write_never_renames_over_a_link_made_since(memory: Memory) -> None:
    before = _head(memory)
    with memory.committer.exclusive() as tx:
        tx.put("facts/late.md", "---\nid: mem_01a21bc20e07574a1b99\n---\nLate link.\n")
        (memory.root / "facts" / "late.md").symlink_to("/nowhere/late.md")  # made between staging and commit
        with pytest.raises(RepoBusyError, match="symbolic link"):
            tx.commit("remnic store: late", {})
    assert os.readlink(memory.root / "facts" / "late.md") == "/nowhere/late.md"  # neither replaced nor undone
    assert _head(memory) == before and _no_journal(memory)


def test_staging_a_write_on_a_symlink_is_refused(memory: Memory) -> None:
    (memory.root / "facts" / "link.md").symlink_to("/nowhere/x.md")
    with memory.committer.exclusive() as tx, pytest.raises(RepoBusyError, match=r"facts/link\.md is a symbolic link"):
        tx.put("facts/link.md", "---\nid: mem_01a21bc20e07574a1b98\n---\nx\n")


# --- 2. a symlinked category folder: refused like a read, nothing written outside ---


def _link_facts_to(memory: Memory, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    (target / "nas.md").write_text("NAS runs nightly scrubs.\n")
    shutil.rmtree(memory.root / "facts")
    (memory.root / "facts").symlink_to(target, target_is_directory=True)


def test_store_into_a_symlinked_folder_is_refused_and_writes_nothing_outside(memory: Memory, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "facts"
    _link_facts_to(memory, elsewhere)
    before = _head(memory)

    with pytest.raises(RepoBusyError) as caught:
        memory.store("Printer is on floor 2", category="fact")

    assert OUTSIDE in caught.value.message and "facts is a symbolic link" in caught.value.message
    assert sorted(p.name for p in elsewhere.iterdir()) == ["nas.md"]
    assert _head(memory) == before and _no_journal(memory)


def test_store_into_a_symlinked_folder_on_another_filesystem_is_refused_not_exdev(
    memory: Memory, tmp_path: Path
) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second filesystem at /dev/shm")
    elsewhere = shm / f"remnic-test-{os.getpid()}-{tmp_path.name}"
    try:
        _link_facts_to(memory, elsewhere)
        result = run_cli("--memory-dir", str(memory.root), "store", "Store into symlinked folder", "--category", "fact")
        assert result.code == 1, result
        assert OUTSIDE in result.err and "Traceback" not in result.err and "Errno 18" not in result.err
        assert sorted(p.name for p in elsewhere.iterdir()) == ["nas.md"]
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


def test_update_moving_a_memory_into_a_symlinked_folder_is_refused(memory: Memory, tmp_path: Path) -> None:
    fact = memory.store("Kickoff happened on Monday", category="fact").record
    outside = tmp_path / "outside-moments"
    outside.mkdir()
    shutil.rmtree(memory.root / "moments")
    (memory.root / "moments").symlink_to(outside, target_is_directory=True)
    before = _head(memory)

    with pytest.raises(RepoBusyError, match=OUTSIDE):
        memory.update(fact.id, {"category": "moment"})

    assert (memory.root / fact.path).is_file() and not any(outside.iterdir())
    assert _head(memory) == before and _no_journal(memory)


def test_doctor_and_status_list_a_symlinked_folder_as_skipped(memory: Memory, tmp_path: Path) -> None:
    _link_facts_to(memory, tmp_path / "elsewhere" / "facts")

    assert {"path": "facts", "reason": SYMLINKED_FOLDER} in memory.status()["skipped"]
    check = _check(memory, "skipped-files")
    assert check["status"] == "warn" and f"facts: {SYMLINKED_FOLDER}" in check["problems"]
    assert OUTSIDE in SYMLINKED_FOLDER  # the reason reads give, in the same words


# --- 3. a category folder replaced by a file ---


def test_store_and_update_into_a_folder_that_is_a_file_name_it_without_a_traceback(memory: Memory) -> None:
    fact = memory.store("Kickoff happened on Monday", category="fact").record
    shutil.rmtree(memory.root / "moments")
    (memory.root / "moments").write_text("my moments scratch text\n")
    before, files = _head(memory), snapshot_tree(memory.root)
    cwd = ["--memory-dir", str(memory.root)]

    stored = run_cli(*cwd, "store", "We met the new CTO", "--category", "moment")
    moved = run_cli(*cwd, "update", fact.path, "--category", "moment")

    for result in (stored, moved):
        assert result.code == 1, result
        assert "moments is a file, not a folder" in result.err and "cannot store a moment" in result.err
        assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
    assert _head(memory) == before and snapshot_tree(memory.root) == files and _no_journal(memory)
    check = _check(memory, "skipped-files")
    assert check["status"] == "warn" and f"moments: {FILE_NOT_FOLDER}" in check["problems"]


# --- 4. a read-only memory directory ---


def test_a_write_lock_that_cannot_be_created_is_one_line_not_a_traceback(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault a read-only mount gives at the lock file's open, injected (the real mount: below)."""
    real_open = os.open
    lock_file = memory.root / ".remnic" / "write.lock"
    (lock_file).unlink(missing_ok=True)

    def refusing_open(path, flags, *args):  # type: ignore[no-untyped-def]
        if Path(path).name == "write.lock":
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(lock_module.os, "open", refusing_open)
    result = run_cli("--memory-dir", str(memory.root), "store", "Read only repo note")
    assert result.code == 1, result
    assert f"memory directory {memory.root.resolve()} is read-only (cannot create .remnic/write.lock" in result.err
    assert "Traceback" not in result.err


_READ_ONLY_SCRIPT = textwrap.dedent(
    """\
    set -u
    mount --bind "$REPO" "$REPO" && mount -o remount,ro,bind "$REPO" || exit 77
    cd "$REPO"
    run() {{ name=$1; shift; "$PY" -m remnic "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"; }}
    run store store "x" --category fact
    run sync sync run
    run status --json status
    run doctor --json doctor
    run serve serve --port 0 --token abcdefghijklmnop1234
    """
)


def test_a_read_only_memory_directory_refuses_writes_and_serve_and_keeps_the_index_healthy(
    memory: Memory, tmp_path: Path
) -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a read-only bind mount")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("unshare -m is not permitted here")
    memory.store("Read only repo note", category="fact")
    memory.refresh_index()
    (memory.root / "facts" / "hand.md").write_text("hand note\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "REPO": str(memory.root), "OUT": str(out), "PY": sys.executable, "REMNIC_NO_DAEMON": "1"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(["unshare", "-m", "bash", "-c", _READ_ONLY_SCRIPT.format()], env=env, timeout=300)
    if done.returncode == 77:
        pytest.skip("a read-only bind mount is not permitted here")

    def read(name: str, ext: str) -> str:
        return (out / f"{name}.{ext}").read_text()

    for name in ("store", "sync", "serve"):
        assert read(name, "rc").strip() == "1", (name, read(name, "err"))
        assert "Traceback" not in read(name, "err"), read(name, "err")
    assert "is read-only (cannot create .remnic/write.lock" in read("store", "err")
    assert "is read-only (cannot create .remnic/write.lock" in read("sync", "err")
    assert "is not writable (a read-only file system" in read("serve", "err")
    index = json.loads(read("status", "out"))["index"]
    assert index["state"] == "unwritable" and "not writable" in index["detail"], index
    checks = {c["name"]: c for c in json.loads(read("doctor", "out"))["checks"]}
    assert "corrupt" not in checks["index"]["detail"].split(";")[0], checks["index"]
    assert checks["memory-dir"]["status"] == "warn" and "not writable" in checks["memory-dir"]["detail"]


# --- 7. a file name with a newline: git's index follows every commit ---


def test_a_newline_in_a_file_name_leaves_gits_index_in_step(memory: Memory, caplog: pytest.LogCaptureFixture) -> None:
    name = "facts/gym\nnotes.md"
    (memory.root / name).write_text("Newline named note about the gym.\n")

    memory.sync()
    assert git(memory.root, "status", "--porcelain") == ""
    assert "update-index" not in caplog.text  # staged NUL-terminated, not refused and then repaired

    record = memory.get(memory.resolve(name))
    memory.update(record.id, {"tags": ["gym"]})
    assert git(memory.root, "status", "--porcelain") == ""
    git(memory.root, "commit", "-qam", "my own commit", "--allow-empty")
    assert name in git(memory.root, "ls-tree", "-r", "-z", "HEAD", "--name-only").split("\0")


def test_doctor_does_not_call_gits_index_in_step_when_it_is_not(memory: Memory) -> None:
    path = memory.store("Gym opens at six", category="fact").record.path
    git(memory.root, "rm", "-q", "--cached", path)  # the index lost a file HEAD and the disk still have

    check = _check(memory, "writes")

    assert check["status"] == "warn" and "in step with HEAD" not in check["detail"], check
    assert check["problems"] == [path]
    git(memory.root, "reset", "-q", "--", path)
    assert _check(memory, "writes")["status"] == "ok"


def test_sync_lists_a_blocked_category_folder_among_the_skipped(memory: Memory) -> None:
    elsewhere = memory.root.parent / "elsewhere-moments"
    elsewhere.mkdir()
    shutil.rmtree(memory.root / "moments")
    (memory.root / "moments").symlink_to(elsewhere)
    first = run_cli("sync", "run", "--json", "--memory-dir", str(memory.root))
    assert first.code == 0, first.err
    skipped = {s["path"]: s["reason"] for s in first.json()["skipped"]}
    assert "symbolic link to a folder" in skipped.get("moments", ""), skipped
