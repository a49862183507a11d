"""Session 35: sync against real editor behaviour.

A stale editor buffer saved over a memory keeps the memory's state; the watcher's last line says
what it left uncommitted; editor backup files are ignored, not reported as attachments. Real git,
real watchdog events, a real process holding a file open.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import git
from test_sync_held import Writer, writers  # noqa: F401 - `writers` is a fixture
from test_sync_run import found
from test_sync_watch import Running, wait_until, watch  # noqa: F401 - `watch` is a fixture

from remnic import fsio
from remnic.config import settings_for
from remnic.drivers.watch import watch_line
from remnic.memfile.model import parse_file
from remnic.memfile.paths import ATTACHMENT, EDITOR_TEMP, MemoryPaths
from remnic.memfile.values import hash_matches
from remnic.service.memory import Memory


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("r35") / "mem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("r35home")))  # no developer's git identity cached
        mem = Memory.init(root, settings=settings_for(root))
    yield mem
    mem.close()


def front(root: Path, rel: str) -> dict[str, object]:
    return parse_file((root / rel).read_text(), rel).frontmatter


def test_a_stale_body_only_save_keeps_the_memorys_committed_state(repo: Memory) -> None:
    root, rel = repo.root, "facts/stale.md"
    (root / rel).write_text("Old server root password was rotated.\n")
    repo.sync()
    mid = str(front(root, rel)["id"])
    repo.update(mid, {"tags": ["ops", "secret"], "importanceScore": 0.9, "supersededBy": "mem_newer"})
    repo.forget(mid)
    before = front(root, rel)
    assert before["status"] == "forgotten" and not found(repo, "old server root password")

    # The editor's buffer still holds the note as it was before sync added frontmatter.
    (root / rel).write_text("Old server root password was rotated. (typo fix)\n")
    report = repo.sync()

    after = front(root, rel)
    for key in ("id", "status", "tags", "importanceScore", "importanceLevel", "created", "supersededBy"):
        assert after[key] == before[key], key
    assert after["updated"] != before["updated"]  # the body changed: stamped as any body edit
    assert hash_matches(after["contentHash"], "Old server root password was rotated. (typo fix)")
    assert (root / rel).read_text().endswith("---\nOld server root password was rotated. (typo fix)\n")
    assert not found(repo, "old server root password")  # still forgotten: never back in recall
    (change,) = report.changes
    assert {"status", "tags", "created", "supersededBy"} <= set(change.kept)
    assert "updated" not in change.kept and "contentHash" not in change.kept
    line = change.describe()
    assert "normalised updated, contentHash" in line and "status: forgotten" in line, line
    assert "added frontmatter" not in line
    assert git(root, "status", "--porcelain", "--", rel) == ""


def test_a_hand_deleted_id_line_with_partial_frontmatter_keeps_what_the_file_says(repo: Memory) -> None:
    root, rel = repo.root, "facts/partial.md"
    (root / rel).write_text("---\ntags: [a]\n---\nThe deploy window is Tuesday.\n")
    repo.sync()
    repo.update(str(front(root, rel)["id"]), {"importanceScore": 0.8})
    before = front(root, rel)
    # The id line and the tags are rewritten by hand; the body stays.
    (root / rel).write_text("---\ntags: [b]\n---\nThe deploy window is Tuesday.\n")
    report = repo.sync()
    after = front(root, rel)
    assert after["id"] == before["id"] and after["tags"] == ["b"] and after["importanceScore"] == 0.8
    assert after["updated"] == before["updated"]  # the body is unchanged: nothing stamped
    assert "tags" not in report.changes[0].kept and "importanceScore" in report.changes[0].kept


def test_editor_backup_files_are_ignored_not_attachments(repo: Memory) -> None:
    root = repo.root
    paths = MemoryPaths()
    for name in ("facts/a.md~", "facts/#a.md#", "facts/a.md.bak", "facts/a.md.orig"):
        assert paths.skip_reason(name) == EDITOR_TEMP and paths.reportable_reason(name) is None
    assert paths.skip_reason("facts/diagram.png") == ATTACHMENT
    (root / "facts/backup-test.md").write_text("Backups are ignored.\n")
    repo.sync()
    (root / "facts/backup-test.md~").write_text("Backups are ignored.\n")
    (root / "facts/#backup-test.md#").write_text("autosave\n")
    (root / "facts/backup-test.md.bak").write_text("Backups are ignored.\n")  # git sees this one
    (root / "facts/diagram.png").write_bytes(b"\x89PNG")
    report = repo.sync(full=True)
    assert [s["path"] for s in report.skipped] == ["facts/diagram.png"]
    (check,) = [c for c in repo.doctor() if c["name"] == "skipped-files"]
    assert not any("backup-test" in p for p in check["problems"]), check
    # remnic init's .gitignore keeps vim's and emacs' backups out of `git status`.
    assert git(root, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        "?? facts/backup-test.md.bak",
        "?? facts/diagram.png",
    ]
    for name in ("diagram.png", "backup-test.md.bak"):
        (root / "facts" / name).unlink()


def test_the_stop_line_names_a_file_left_uncommitted(
    memory: Memory,
    watch: Callable[..., Running],  # noqa: F811
    writers: Callable[..., Writer],  # noqa: F811
) -> None:
    if not fsio._SUPPORTED:
        pytest.skip("file leases are Linux-only")
    rel = "facts/held.md"
    (memory.root / rel).write_text("First line.\n")
    memory.sync()
    running = watch()
    writer = writers(memory.root / rel, "r+", "Second line.\n", "Third line.\n")
    wait_until(lambda: any(e["path"] == rel for e in running.of("skipped")), what="the held file's skip")
    running.stop()
    (stopped,) = running.of("stopped")
    assert stopped["flushed"] is False and stopped["notFlushed"] is None
    assert stopped["left"] == [{"path": rel, "reason": "held open by another program"}]
    line = watch_line(stopped)
    assert line is not None and "pending changes flushed" not in line
    assert f"1 left uncommitted ({rel}: held open by another program); run `remnic sync run`" in line
    writer.finish()
    assert git(memory.root, "status", "--porcelain", "--", rel).startswith(" M")


def test_a_clean_stop_still_says_flushed(memory: Memory, watch: Callable[..., Running]) -> None:  # noqa: F811
    running = watch()
    (memory.root / "facts/clean.md").write_text("Saved just before the stop.\n")
    running.stop()
    (stopped,) = running.of("stopped")
    assert stopped["flushed"] is True and stopped["left"] == []
    assert watch_line(stopped) == (
        f"stopped: {stopped['changes']} change{'' if stopped['changes'] == 1 else 's'} synced in "
        f"{stopped['syncs']} sync passes; pending changes flushed"
    )
    assert git(memory.root, "status", "--porcelain") == ""
    assert watch_line({"event": "stopped", "syncs": 2, "changes": 0, "notFlushed": "the last sync failed"}) == (
        "stopped: 0 changes synced in 2 sync passes; pending changes not flushed (the last sync failed); "
        "run `remnic sync run`"
    )


def test_the_watcher_prints_nothing_for_an_editor_backup(
    memory: Memory,
    watch: Callable[..., Running],  # noqa: F811
) -> None:
    rel = "decisions/pg17.md"
    (memory.root / rel).write_text("Use Postgres 17.\n")
    running = watch()
    wait_until(lambda: git(memory.root, "status", "--porcelain") == "", what="the first sync")
    seen = len(running.of("change"))
    # An emacs-style save: the original copied to `file~`, then the new text written.
    subprocess.run(["cp", str(memory.root / rel), str(memory.root / (rel + "~"))], check=True)
    (memory.root / rel).write_text("Use Postgres 17 everywhere.\n")
    wait_until(lambda: len(running.of("change")) > seen, what="the edit's sync")
    assert not [e for e in running.events if e.get("path") == rel + "~"], running.events


@pytest.mark.parametrize("target", ["facts/payments-oncall.md", "decisions/payments-oncall.md"])
def test_a_stale_body_only_save_under_a_new_name_keeps_the_memorys_committed_state(repo: Memory, target: str) -> None:
    root = repo.root
    made = repo.store(f"Dana is the on-call lead for payments ({target})", tags=["oncall"], importance=0.9).records[0]
    repo.forget(made.id)
    before = front(root, made.path)
    (root / made.path).unlink()  # moved and saved from a buffer without frontmatter, in one go
    (root / target).write_text(f"Dana is the on-call lead for payments ({target})\n")
    repo.sync()

    after = front(root, target)
    for key in ("id", "status", "tags", "importanceScore", "created"):
        assert after[key] == before[key], key
    assert not found(repo, "on-call lead for payments")
    (root / target).unlink()
    repo.sync()
