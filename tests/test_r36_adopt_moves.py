"""A note you committed that sync cannot take (malformed, empty) never leaves git when it moves.

Real vaults in real git repositories: notes committed by hand, adopted with ``--adopt '**'``, then
a folder moved by hand and synced. Before, the move committed the old path's deletion and left the
new path untracked, so ``HEAD`` (and every clone) lost the note.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import git, run_cli
from test_sync_watch import Running, wait_until

from remnic.config import settings_for
from remnic.service.memory import Memory

BAD = "---\ntags: a\ntags: b\n---\nbad note BADKEY\nsecond line\nthird line\n"


def vault(tmp_path: Path, notes: dict[str, str]) -> Memory:
    """A notes vault committed by hand, adopted and synced once."""
    root = tmp_path / "vault"
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "my notes")
    memory = Memory.init(root, settings=settings_for(root, store={"include": ["**"]}), adopt=["**"])
    memory.sync()
    return memory


def in_head(memory: Memory) -> dict[str, str]:
    """Path → blob id of every note HEAD has."""
    rows = git(memory.root, "ls-tree", "-r", "HEAD").splitlines()
    return {r.split("\t", 1)[1]: r.split()[2] for r in rows if r.endswith(".md")}


def status(memory: Memory) -> str:
    return git(memory.root, "status", "--porcelain", "--untracked-files=all")


def test_a_moved_folder_commits_its_malformed_note_as_a_pure_rename(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/bad.md": BAD, "Notes/good.md": "good note\n", "Notes/empty.md": ""})
    blob, empty_blob = in_head(memory)["Notes/bad.md"], in_head(memory)["Notes/empty.md"]
    shutil.move(memory.root / "Notes", memory.root / "Other")
    out = run_cli("sync", "run", "--memory-dir", str(memory.root))
    head = in_head(memory)
    # The note is in git at its new path, byte for byte as committed; nothing of it is left uncommitted.
    assert head.get("Other/bad.md") == blob and "Notes/bad.md" not in head, out.out
    assert head.get("Other/empty.md") == empty_blob and "Notes/empty.md" not in head  # an empty note too
    assert (memory.root / "Other/bad.md").read_text() == BAD
    assert status(memory) == ""
    lines = out.out.splitlines()
    assert any(
        line.startswith("R Notes/bad.md -> Other/bad.md  (malformed: moved as you committed it, content unchanged")
        for line in lines
    ), out.out
    assert any(
        line.startswith("R Notes/empty.md -> Other/empty.md  (no text yet: moved as you committed") for line in lines
    )
    problem = next(line for line in lines if line.startswith("! Other/bad.md:3"))
    assert problem.endswith("(left untouched, not indexed, its move from Notes/bad.md committed, as it was)")
    assert out.code == 1  # the note is still malformed
    # git follows the move.
    log = git(memory.root, "log", "--follow", "--format=%s", "--", "Other/bad.md").splitlines()
    assert log[-1] == "my notes" and len(log) == 2


def test_a_moved_and_edited_malformed_note_holds_its_deletion_until_it_is_fixed(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/bad.md": BAD, "Notes/good.md": "good note\n"})
    shutil.move(memory.root / "Notes", memory.root / "Other")
    (memory.root / "Other/bad.md").write_text(BAD + "an edit\n", encoding="utf-8")
    report = memory.sync()
    assert "Notes/bad.md" in in_head(memory)  # not deleted from git: its note is what moved
    held = next(s for s in report.skipped if s["path"] == "Notes/bad.md")
    assert held["reason"].startswith("deletion held: the note looks moved to Other/bad.md, which is malformed")
    assert "Notes/bad.md" in report.pending and not any(c.path == "Notes/bad.md" for c in report.changes)
    assert {c.path for c in report.changes} == {"Other/good.md"}
    # The next run says it again (sync run), but a watcher hears it once.
    again = memory.sync()
    assert "Notes/bad.md" in again.repeated_skips and "Notes/bad.md" in in_head(memory)

    (memory.root / "Other/bad.md").write_text("---\ntags: a\n---\nbad note fixed\n", encoding="utf-8")
    fixed = memory.sync()
    # Committed together, as the move it is (one change: the rename), not an addition beside a deletion.
    assert [(c.kind, c.previous_path, c.path) for c in fixed.changes] == [("renamed", "Notes/bad.md", "Other/bad.md")]
    assert fixed.commit and all(c.committed for c in fixed.changes)
    assert "Notes/bad.md" not in in_head(memory) and "Other/bad.md" in in_head(memory)
    assert status(memory) == ""


def test_a_renamed_and_edited_malformed_note_is_found_by_its_text(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/bad.md": BAD})
    (memory.root / "Notes/bad.md").rename(memory.root / "Notes/renamed.md")
    (memory.root / "Notes/renamed.md").write_text(BAD + "one more line\n", encoding="utf-8")
    for _run in range(2):  # held on the run after too, though the new file is no longer new
        report = memory.sync()
        assert report.commit is None and "Notes/bad.md" in in_head(memory)
        assert any(s["path"] == "Notes/bad.md" and "Notes/renamed.md" in s["reason"] for s in report.skipped)


def test_a_malformed_note_deleted_by_hand_is_a_plain_deletion(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/bad.md": BAD, "Notes/good.md": "good note\n"})
    (memory.root / "Notes/bad.md").unlink()
    report = memory.sync()
    assert [(c.kind, c.path, c.committed) for c in report.changes] == [("deleted", "Notes/bad.md", True)]
    assert "Notes/bad.md" not in in_head(memory) and status(memory) == ""


def test_the_watcher_commits_a_moved_folder_with_its_malformed_note(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/bad.md": BAD, "Notes/good.md": "good note\n"})
    blob = in_head(memory)["Notes/bad.md"]
    running = Running(memory, debounce_ms=100)
    running.thread.start()
    try:
        wait_until(lambda: running.of("ready"), what="the watcher to be ready")
        shutil.move(memory.root / "Notes", memory.root / "Other")
        wait_until(lambda: "Other/good.md" in in_head(memory), what="the move to be committed")
        assert in_head(memory).get("Other/bad.md") == blob and "Notes/bad.md" not in in_head(memory)
        assert status(memory) == ""
        problem = wait_until(
            lambda: next((e for e in running.of("problem") if e["path"] == "Other/bad.md"), None),
            what="the moved note's problem line",
        )
        assert problem["movedFrom"] == "Notes/bad.md" and problem["inGit"] is True
    finally:
        running.stop()
