"""What doctor, list and query say on a first run (r36 h3): a detached HEAD, the git identity, huge files,
malformed files left out of `list`, and a read-only memory directory."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.errors import RepoBusyError
from remnic.service import health
from remnic.service.memory import Memory

LARGE_FILE_BYTES = 1 << 20  # remnic.service.health_repo's: imported in each test, so each fails on its own


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("r36doc") / "mem"
    with pytest.MonkeyPatch.context() as patch:  # set up before each test's own HOME: no git identity here either
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        memory = Memory.init(root, settings=settings_for(root))
        (root / "facts" / "deploy.md").write_text("The deploy runs on Tuesdays\n")  # a note: no model to store it
        git(root, "add", "facts/deploy.md")
        git(root, "commit", "-q", "-m", "a note")
        yield memory
        memory.close()


def test_doctor_warns_of_a_detached_head_huge_files_and_names_the_identity(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remnic.repo.head import DetachedHeadError
    from remnic.service.health_repo import head_check

    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var, raising=False)
    big = mem.root / "facts" / "huge-note.md"
    big.write_text("---\ntitle: huge\n---\n" + "word " * (LARGE_FILE_BYTES // 5 + 10))
    git(mem.root, "checkout", "-q", "--detach")
    try:
        # doctor's own checks (the model and index checks aside, which take seconds)
        found = health.checks(mem.root, "test", mem.files, mem.ledger, mem.settings.store, {"state": "ok"})
        checks = {c["name"]: c for c in found}
        assert checks["branch"]["status"] == "warn" and "HEAD is detached" in checks["branch"]["detail"]
        assert f"git -C {mem.root} switch main" in checks["branch"]["detail"]
        assert "every write" in checks["branch"]["detail"]
        assert checks["large-files"]["status"] == "warn"
        assert checks["large-files"]["problems"] == ["facts/huge-note.md: 1.0 MiB"]
        assert "commits are made as remnic <remnic@localhost>" in checks["git-identity"]["detail"]
        assert checks["memory-files"]["detail"] == "2 memory files, none malformed"
        # the write's refusal has a code of its own, still a kind of repo_busy (exit 1, HTTP 409)
        with pytest.raises(DetachedHeadError) as refused:
            mem.store("written while detached", category="fact", dry_run=True)
        assert isinstance(refused.value, RepoBusyError) and refused.value.code == "detached_head"
        store = run_cli("store", "x while detached", "--dry-run", "--json", "--memory-dir", str(mem.root))
        assert store.code == 1 and json.loads(store.err)["code"] == "detached_head"
    finally:
        git(mem.root, "checkout", "-q", "main")
        big.unlink()
    assert head_check(mem.ledger) == {"name": "branch", "status": "ok", "detail": "on branch main"}


def test_the_identity_check_names_the_repositorys_own(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    from remnic.service.health_repo import identity_check

    monkeypatch.delenv("GIT_AUTHOR_NAME", raising=False)
    monkeypatch.delenv("GIT_AUTHOR_EMAIL", raising=False)
    git(mem.root, "config", "user.name", "Ana Lima")
    git(mem.root, "config", "user.email", "ana@example.com")
    try:
        fresh = Memory.open(settings=settings_for(mem.root))  # the identity is read once per ledger
        with fresh:
            found = identity_check(fresh.ledger)
    finally:
        git(mem.root, "config", "--unset", "user.name")
        git(mem.root, "config", "--unset", "user.email")
    assert found["detail"] == "commits are made as Ana Lima <ana@example.com> (git config)"


def test_a_file_just_under_the_size_is_not_named(tmp_path: Path) -> None:
    from remnic.service.health_repo import LARGE_FILE_BYTES as SIZE
    from remnic.service.health_repo import large_files_check

    assert SIZE == LARGE_FILE_BYTES
    (tmp_path / "a.md").write_bytes(b"x" * LARGE_FILE_BYTES)
    (tmp_path / "b.md").write_bytes(b"x" * (LARGE_FILE_BYTES + 1))
    found = large_files_check(tmp_path, ["a.md", "b.md", "gone.md"], 20000)
    assert found["problems"] == ["b.md: 1.0 MiB"] and "store.maxContentChars, 20000 characters" in found["detail"]


def test_list_says_which_malformed_files_it_left_out(mem: Memory) -> None:
    broken = mem.root / "facts" / "broken.md"
    broken.write_text("---\ntitle: [unclosed\n---\nbody\n")
    try:
        text = run_cli("list", "--memory-dir", str(mem.root))
        listed = run_cli("list", "--json", "--memory-dir", str(mem.root))
    finally:
        broken.unlink()
    assert text.code == 0 and "1 memory" in text.out
    assert "warning: 1 malformed file left out (facts/broken.md): run `remnic doctor`" in text.err
    assert json.loads(listed.out)["malformed"] == ["facts/broken.md"]
    assert json.loads(run_cli("list", "--json", "--memory-dir", str(mem.root)).out)["malformed"] == []


def test_a_read_only_directory_is_not_promised_a_rebuild(
    mem: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from remnic.service import recall

    why = f"memory directory {mem.root} is not writable (a read-only file system at {mem.root})"
    monkeypatch.setattr(health, "unwritable", lambda root: why)

    def broken(*args: object) -> None:
        raise PermissionError(13, "Permission denied", str(mem.root / ".remnic" / "index.lock"))

    def no_rebuild(*args: object, **kwargs: object) -> None:
        raise AssertionError("a rebuild was tried in a read-only directory")

    monkeypatch.setattr(recall, "_indexed_recall", broken)
    monkeypatch.setattr(mem.index, "rebuild", no_rebuild)
    with caplog.at_level(logging.WARNING):
        result = mem.recall("deploy Tuesdays", audit=False)
    assert [h.path for h in result.hits] == ["facts/deploy.md"]  # the files were scanned
    assert "rebuilding it" not in caplog.text and "not writable" in caplog.text
    # doctor's index line ends with what the index said, without tantivy's empty ". None"
    said = health.index_health_of(mem.root, {"state": "corrupt", "detail": "lock: IoError(Os { code: 13 }). None"})
    assert said["state"] == "unwritable" and said["detail"].endswith("; was: lock: IoError(Os { code: 13 })")
