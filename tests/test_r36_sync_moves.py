"""Which new file a deleted malformed note moved to, and notes git has that are not UTF-8.

Real vaults in real git repositories (:func:`test_r36_adopt_moves.vault`): notes committed by hand,
adopted, then moved, edited and deleted by hand and synced. A note you committed must never leave
``HEAD`` because sync cannot read it where it went.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import git
from test_r36_adopt_moves import in_head, status, vault
from test_sync_watch import Running, wait_until

from remnic.sync.held import held_open


def note(key: str, title: str, line: str) -> str:
    """A note whose YAML writes ``key`` twice (malformed); notes of one vault share such lines."""
    return f"---\n{key}: a\n{key}: b\n---\n# {title}\n\n{line}\n"


A = note("tags", "Note A", "alpha words here about rockets.")
B = note("tags", "Note B", "beta words here about harbors.")
LATIN = "caf\xe9 au lait, a note saved in latin-1\n".encode("latin-1")


def test_a_deleted_note_does_not_take_the_new_path_of_one_moved_and_edited(tmp_path: Path) -> None:
    # v1's reproduction: a hand-deleted note shares the front matter lines of a moved one.
    memory = vault(tmp_path, {"Notes/a.md": A, "Notes/b.md": B, "Notes/good.md": "good note\n"})
    root = memory.root
    (root / "Notes/a.md").unlink()
    (root / "New").mkdir()
    shutil.move(root / "Notes/b.md", root / "New/b.md")
    (root / "New/b.md").write_text(B + "edited PELICAN\n", encoding="utf-8")
    report = memory.sync()
    head = in_head(memory)
    assert "Notes/b.md" in head and "Notes/a.md" not in head  # b moved (held), a deleted (committed)
    assert [(c.kind, c.path, c.committed) for c in report.changes] == [("deleted", "Notes/a.md", True)]
    held = [s for s in report.skipped if s["reason"].startswith("deletion held")]
    assert [(s["path"], "moved to New/b.md," in s["reason"]) for s in held] == [("Notes/b.md", True)]
    assert report.pending == ["New/b.md", "Notes/b.md"]

    # Fixed, it is committed as the rename it is: both halves in one commit.
    (root / "New/b.md").write_text("---\ntags: b\n---\n# Note B\n\nbeta words here about harbors.\nPELICAN\n")
    fixed = memory.sync()
    assert [(c.kind, c.previous_path, c.path, c.committed) for c in fixed.changes] == [
        ("renamed", "Notes/b.md", "New/b.md", True)
    ]
    assert git(root, "show", "--name-status", "--format=", "HEAD").split() == ["A", "New/b.md", "D", "Notes/b.md"]
    assert status(memory) == "" and not fixed.pending


def test_the_best_match_takes_a_new_file_whatever_the_path_order(tmp_path: Path) -> None:
    index_p = note("status", "Index", "the P index lists p things.")
    index_q = note("status", "Index", "the Q index lists q things.\nand a second line of q.")
    memory = vault(tmp_path, {"X/a.md": A, "X/b.md": B, "P/index.md": index_p, "Q/index.md": index_q})
    root = memory.root
    for gone in ("X/a.md", "P/index.md"):  # deleted by hand; both sort before the note that moved
        (root / gone).unlink()
    (root / "X/b.md").rename(root / "X/c.md")  # renamed and edited: found by its text (a's is 2/3 alike)
    (root / "X/c.md").write_text(B + "edited\n", encoding="utf-8")
    (root / "R").mkdir()
    (root / "Q/index.md").rename(root / "R/index.md")  # moved and edited: two deleted notes have its name
    (root / "R/index.md").write_text(index_q + "edited\n", encoding="utf-8")
    report = memory.sync()
    held = {s["path"]: s["reason"] for s in report.skipped if s["reason"].startswith("deletion held")}
    assert sorted(held) == ["Q/index.md", "X/b.md"]
    assert "moved to X/c.md," in held["X/b.md"] and "moved to R/index.md," in held["Q/index.md"]
    assert sorted((c.kind, c.path) for c in report.changes) == [("deleted", "P/index.md"), ("deleted", "X/a.md")]
    head = in_head(memory)
    assert {"X/b.md", "Q/index.md"} <= set(head) and not {"X/a.md", "P/index.md"} & set(head)


def test_a_held_deletion_waits_while_its_fixed_note_is_still_being_written(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/b.md": B})
    root = memory.root
    (root / "New").mkdir()
    shutil.move(root / "Notes/b.md", root / "New/b.md")
    (root / "New/b.md").write_text(B + "edited\n", encoding="utf-8")
    assert "Notes/b.md" in memory.sync().pending  # held
    with open(root / "New/b.md", "w", encoding="utf-8") as writer:  # the fix, saved in two halves
        writer.write("---\ntags: b\n---\n")
        writer.flush()
        if not held_open(root / "New/b.md"):
            pytest.skip("no file leases here: a file held open cannot be told")
        report = memory.sync()
        # Not committed as a deletion meanwhile: the note would leave git until the writer is done.
        assert report.commit is None and "Notes/b.md" in in_head(memory)
        assert {"Notes/b.md", "New/b.md"} <= set(report.pending)
        writer.write("# Note B\n\nbeta words here about harbors.\n")
    done = memory.sync()
    assert [(c.kind, c.previous_path, c.path) for c in done.changes] == [("renamed", "Notes/b.md", "New/b.md")]
    assert done.commit and status(memory) == ""


def test_a_committed_note_that_is_not_utf8_can_be_moved_and_deleted(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/good.md": "good note\n"})
    root = memory.root
    (root / "Special").mkdir()
    (root / "Special/moved.md").write_bytes(LATIN)
    (root / "Special/gone.md").write_bytes(b"another caf\xe9 note\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "latin-1 notes")
    blob = in_head(memory)["Special/moved.md"]
    (root / "X").mkdir()
    shutil.move(root / "Special/moved.md", root / "X/moved.md")
    (root / "Special/gone.md").unlink()
    report = memory.sync()  # raised UnicodeEncodeError (hashing git's escaped text), on every run
    assert sorted((c.kind, c.previous_path, c.path, c.committed) for c in report.changes) == [
        ("deleted", None, "Special/gone.md", True),
        ("renamed", "Special/moved.md", "X/moved.md", True),
    ]
    assert in_head(memory).get("X/moved.md") == blob and "Special/moved.md" not in in_head(memory)
    assert (root / "X/moved.md").read_bytes() == LATIN and status(memory) == ""
    assert [p.path for p in report.problems] == ["X/moved.md"] and report.problems[0].field == "encoding"


def test_the_watcher_moves_a_committed_note_that_is_not_utf8(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Notes/good.md": "good note\n"})
    root = memory.root
    (root / "Notes/latin.md").write_bytes(LATIN)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a latin-1 note")
    running = Running(memory, debounce_ms=100)
    running.thread.start()
    try:
        wait_until(lambda: running.of("ready"), what="the watcher to be ready")
        shutil.move(root / "Notes", root / "Other")
        wait_until(lambda: "Other/good.md" in in_head(memory), what="the move to be committed")
        assert "Other/latin.md" in in_head(memory) and "Notes/latin.md" not in in_head(memory)
        assert not running.of("error") and status(memory) == ""
    finally:
        running.stop()
