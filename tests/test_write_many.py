"""Several files made durable at once, and commits that edit the trees the previous one wrote."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from remnic.fsio import write_atomic_many
from remnic.repo.ledger import Ledger


def test_write_atomic_many_writes_keeps_modes_and_leaves_no_temp_files(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    old = tmp_path / "a" / "old.md"
    old.parent.mkdir()
    old.write_text("before")
    os.chmod(old, 0o600)
    items = [(old, b"after"), (tmp_path / "b" / "c" / "new.md", b"new"), (tmp_path / "top.md", b"top")]
    write_atomic_many(items, tmp_dir=tmp)
    assert [p.read_bytes() for p, _ in items] == [b"after", b"new", b"top"]
    assert old.stat().st_mode & 0o777 == 0o600
    assert list(tmp.iterdir()) == []


def test_write_atomic_many_changes_no_target_when_a_write_fails(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    first = tmp_path / "first.md"
    first.write_text("kept")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError):
        write_atomic_many([(first, b"changed"), (blocker / "x.md", b"x")], tmp_dir=tmp)
    assert first.read_text() == "kept"
    assert list(tmp.iterdir()) == []


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_commits_on_the_trees_the_last_one_wrote_match_git(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    ledger = Ledger.init_repo(root)
    ran: list[str] = []
    run_bytes = ledger._run_bytes

    def spy(args: list[str], stdin: bytes) -> bytes:
        ran.append(args[0])
        return run_bytes(args, stdin)

    ledger._run_bytes = spy  # type: ignore[method-assign]
    steps = [
        {"facts/a.md": "a", "notes/deep/b.md": "b"},
        {"facts/c.md": "c"},  # facts/ and the root come from the cache
        {"decisions/d.md": "d", "notes/deep/b.md": "b2"},
        {"notes/deep/b.md": None},  # an emptied folder disappears
        {"facts/a.md": "a2"},
    ]
    for n, step in enumerate(steps):
        for path, text in step.items():
            full = root / path
            if text is None:
                full.unlink()
            else:
                full.parent.mkdir(parents=True, exist_ok=True)
                full.write_text(text)
        assert ledger.commit(list(step), f"step {n}", {}) is not None
        # What the cached trees produced is what git itself builds from the working tree.
        assert _git(root, "rev-parse", "HEAD^{tree}") == _git(root, "write-tree")
    listing = _git(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert listing == ["decisions/d.md", "facts/a.md", "facts/c.md"]
    assert _git(root, "show", "HEAD:facts/a.md") == "a2"
    _git(root, "fsck", "--strict")
    assert ran.count("cat-file") == 1  # only the step that first touches decisions/ reads a tree
