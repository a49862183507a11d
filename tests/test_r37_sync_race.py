"""A hand move whose new file is saved again while sync writes it: the old path's deletion waits with it.

The editor's save has to land between sync reading the moved file and replacing it; the wrapper below puts
it exactly there (real sync, real git), as seen under `remnic sync watch` with an editor saving."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

import remnic.sync.engine as engine
from remnic.service.memory import Memory


def test_a_moved_note_saved_mid_sync_is_never_committed_as_a_lone_deletion(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = memory.root
    stored = memory.store("A note about the lighthouse keeper.", category="fact").record
    old = root / stored.path
    new = root / "decisions" / old.name
    new.parent.mkdir(exist_ok=True)
    old.rename(new)  # its category follows the folder, so sync must rewrite it

    real = engine.replace_if_unchanged

    def saved_meanwhile(items, *args, **kwargs):  # type: ignore[no-untyped-def]
        for target, _old, _new in items:
            with open(target, "a", encoding="utf-8") as f:
                f.write("A line the editor saved during the sync.\n")
        return real(items, *args, **kwargs)

    monkeypatch.setattr(engine, "replace_if_unchanged", saved_meanwhile)
    first = memory.sync()
    assert any(s["path"] == f"decisions/{old.name}" for s in first.skipped)
    assert stored.path in git(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert not any(c.kind == "deleted" for c in first.changes)

    monkeypatch.setattr(engine, "replace_if_unchanged", real)
    memory.sync()
    head = git(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert f"decisions/{old.name}" in head and stored.path not in head
    follow = git(root, "log", "--follow", "--format=%s", "--", f"decisions/{old.name}").splitlines()
    assert len(follow) >= 2  # the rename kept the note's history before the move
    assert "A line the editor saved" in Path(new).read_text(encoding="utf-8")
