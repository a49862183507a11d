"""Each part of ``.remnic/`` and the observe buffers damaged in turn: doctor names the part and the cure, and
every command refuses with that one line or recovers, never a traceback."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.errors import RemnicError
from remnic.service import Memory

TURNS = [
    {"role": "user", "speaker": "Ana", "content": "We moved the billing standup to 9:30."},
    {"role": "user", "speaker": "Bo", "content": "I decided we will use Redis for the scheduler locks."},
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("base") / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    for text in ("We deploy on Tuesdays", "Ana prefers tabs in Python", "The staging DB port is 5433"):
        memory.store(text)
    assert memory.recall("tabs").hits[0].content == "Ana prefers tabs in Python"
    memory.observe("s1", TURNS)
    memory.close()
    assert (root / "state" / "observe-buffer" / "default" / "s1.jsonl").is_file()
    return root


@pytest.fixture
def root(base: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "mem"
    shutil.copytree(base, copy, symlinks=True)
    return copy


def doctor(root: Path) -> dict[str, dict[str, Any]]:
    memory = Memory.open(root)
    try:
        return {c["name"]: c for c in memory.doctor()}
    finally:
        memory.close()


def said(checks: dict[str, dict[str, Any]]) -> str:
    return "\n".join(f"{c['status']} {c['name']}: {c['detail']} {c.get('problems', '')}" for c in checks.values())


@pytest.mark.parametrize("content", [b"\xff\xfe\n", b"b" * 300 + b"\n"], ids=["not-utf8", "too-long"])
def test_damaged_current_pointer_is_a_corrupt_index(root: Path, content: bytes) -> None:
    current = root / ".remnic" / "index" / "CURRENT"
    current.write_bytes(content)
    index = doctor(root)["index"]
    assert index["status"] == "warn" and index["detail"].startswith("corrupt")
    assert str(current) in index["detail"] and "remnic reindex" in index["detail"]
    status = run_cli("status", "--json", cwd=root)
    assert "Traceback" not in status.err and status.json()["index"]["state"] == "corrupt"
    synced = run_cli("sync", "run", cwd=root)
    assert synced.code == 0 and "Traceback" not in synced.err, synced.err
    memory = Memory.open(root)
    try:
        result = memory.recall("tabs")
        assert result.hits[0].content == "Ana prefers tabs in Python"
    finally:
        memory.close()
    assert current.read_text(encoding="utf-8").startswith("build-")  # the recall rebuilt it


Damage = Callable[[Path], Path]


def _lock_dir(name: str) -> Damage:
    def damage(root: Path) -> Path:
        path = root / ".remnic" / name
        path.unlink(missing_ok=True)
        path.mkdir()
        return path

    return damage


def _tmp_file(root: Path) -> Path:
    path = root / ".remnic" / "tmp"
    shutil.rmtree(path, ignore_errors=True)
    path.write_text("")
    return path


@pytest.mark.parametrize("damage", [_lock_dir("write.lock"), _tmp_file], ids=["write.lock-folder", "tmp-file"])
def test_a_write_part_of_the_wrong_type_refuses_writes_in_one_line(root: Path, damage: Damage) -> None:
    path = damage(root)
    check = doctor(root)["state-files"]
    assert check["status"] == "fail" and any(str(path) in p and "mv " in p for p in check["problems"])
    memory = Memory.open(root)
    try:
        with pytest.raises(RemnicError) as refused:
            memory.store("Bo likes spaces")
        assert refused.value.code == "state_dir_unusable" and str(path) in refused.value.message
        assert "move it aside" in refused.value.message
    finally:
        memory.close()
    (root / "facts" / "hand.md").write_text("A note written by hand\n")
    synced = run_cli("sync", "run", cwd=root)
    assert synced.code == 1 and "Traceback" not in synced.err and str(path) in synced.err, synced.err


def test_index_lock_folder_is_named_and_recall_scans_the_files(root: Path) -> None:
    path = _lock_dir("index.lock")(root)
    assert any(str(path) in p for p in doctor(root)["state-files"]["problems"])
    (root / "facts" / "hand.md").write_text("A note written by hand about the kettle\n")
    synced = run_cli("sync", "run", cwd=root)
    assert "Traceback" not in synced.err, synced.err
    assert "facts/hand.md" in git(root, "ls-files")  # the commit is made; the index waits for the lock file
    memory = Memory.open(root)
    try:
        assert memory.recall("kettle").hits[0].path == "facts/hand.md"
    finally:
        memory.close()


@pytest.mark.parametrize("suffix", [".lock", ".jsonl"])
def test_a_session_buffer_part_that_is_a_folder(root: Path, suffix: str) -> None:
    path = root / "state" / "observe-buffer" / "default" / f"s1{suffix}"
    if path.is_file():
        path.unlink()
    path.mkdir()
    check = doctor(root)["state-files"]
    assert check["status"] == "fail" and any(str(path) in p and "mv " in p for p in check["problems"])
    memory = Memory.open(root)
    try:
        with pytest.raises(RemnicError) as refused:
            memory.observe("s1", [{"role": "user", "content": "One more thing about the standup."}])
        assert refused.value.code == "state_dir_unusable" and str(path) in refused.value.message
    finally:
        memory.close()


def test_garbage_embedding_cache_is_named(root: Path) -> None:
    cache = root / ".remnic" / "embeddings.sqlite"
    for extra in ("-wal", "-shm"):
        (root / ".remnic" / f"embeddings.sqlite{extra}").unlink(missing_ok=True)
    cache.write_bytes(b"\xa5" * 8192)
    check = doctor(root)["embedding-cache"]
    assert check["status"] == "warn" and str(cache) in check["detail"] and "damaged" in check["detail"]


def test_torn_buffer_line_points_to_the_transcript_archive(root: Path) -> None:
    buffer = root / "state" / "observe-buffer" / "default" / "s1.jsonl"
    with buffer.open("r+b") as f:
        f.truncate(30)
    check = doctor(root)["buffer-lines"]
    archive = root / "state" / "transcripts" / "default" / "s1.jsonl"
    assert check["status"] == "warn" and archive.is_file()
    assert any(str(buffer) in p and str(archive) in p and "--session-key s1" in p for p in check["problems"])


def test_working_tree_warning_lists_ten_paths_then_a_count(root: Path) -> None:
    memory = Memory.open(root)
    try:
        for i in range(13):
            (root / "facts" / f"hand-{i:02d}.md").write_text(f"Hand note number {i}\n")
        check = {c["name"]: c for c in memory.doctor()}["working-tree"]
    finally:
        memory.close()
    assert check["status"] == "warn" and len(check["paths"]) == 13
    assert check["problems"][:10] == check["paths"][:10] and check["problems"][10].startswith("… and 3 more")


def test_skipped_files_list_ten_then_a_count(root: Path) -> None:
    for i in range(12):
        (root / f"note-{i:02d}.md").write_text(f"A root note {i}\n")  # not in a category folder: skipped
    memory = Memory.open(root)
    try:
        check = {c["name"]: c for c in memory.doctor()}["skipped-files"]
    finally:
        memory.close()
    assert len(check["paths"]) >= 12 and len(check["problems"]) == 11
    assert check["problems"][10].startswith(f"… and {len(check['paths']) - 10} more")


def test_a_file_named_remnic_is_git_ignored(root: Path) -> None:
    shutil.rmtree(root / ".remnic")
    (root / ".remnic").write_text("not a folder")
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
