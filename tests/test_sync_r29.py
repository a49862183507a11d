"""Sync on hand-made repositories: renames with edits committed by git, repeated skips, hand-committed
malformed files (real git repositories)."""

from __future__ import annotations

from conftest import git

from remnic.memfile.model import parse_file
from remnic.memfile.values import hash_matches
from remnic.service.memory import Memory
from remnic.sync.report import event_line


def test_rename_and_edit_committed_with_git_is_stamped(memory: Memory) -> None:
    record = memory.store("Gamma fact about the deploy window", category="fact").record
    memory.sync()
    before = record.frontmatter["updated"]
    git(memory.root, "mv", record.path, "facts/gamma.md")
    path = memory.root / "facts/gamma.md"
    path.write_text(path.read_text().replace("deploy window", "deploy window on Mondays"))
    git(memory.root, "commit", "-qam", "rename and edit")

    report = memory.sync()

    [change] = report.changes
    assert (change.kind, change.previous_path, change.path) == ("renamed", record.path, "facts/gamma.md")
    assert set(change.normalized) == {"updated", "contentHash"}
    synced = parse_file(path.read_text(), "facts/gamma.md")
    assert synced.id == record.id
    assert synced.frontmatter["updated"] != before
    assert hash_matches(synced.frontmatter["contentHash"], "Gamma fact about the deploy window on Mondays") is True
    assert git(memory.root, "status", "--porcelain") == ""


def test_rename_alone_committed_with_git_is_not_stamped(memory: Memory) -> None:
    record = memory.store("Delta fact about the backup window", category="fact").record
    memory.sync()
    git(memory.root, "mv", record.path, "facts/delta.md")
    git(memory.root, "commit", "-qm", "rename")

    [change] = memory.sync().changes

    assert (change.kind, change.normalized) == ("renamed", [])
    assert parse_file((memory.root / "facts/delta.md").read_text(), "x").frontmatter == record.frontmatter


def test_empty_file_skip_is_a_new_event_once_per_version(memory: Memory) -> None:
    memory.sync()
    (memory.root / "facts/w-empty.md").write_text("")
    first = memory.sync()
    assert [e["path"] for e in first.events(only_new_problems=True) if e["event"] == "skipped"] == ["facts/w-empty.md"]
    (memory.root / "facts/other.md").write_text("An unrelated note\n")
    second = memory.sync()
    # `sync run` still lists it every time; the watcher's events do not repeat it
    assert [s["path"] for s in second.skipped] == ["facts/w-empty.md"]
    assert not [e for e in second.events(only_new_problems=True) if e["event"] == "skipped"]
    (memory.root / "facts/w-empty.md").write_text("   \n")  # a new version, still without text
    (memory.root / "facts/third.md").write_text("A third note\n")
    third = memory.sync()
    assert [e["path"] for e in third.events(only_new_problems=True) if e["event"] == "skipped"] == ["facts/w-empty.md"]


def test_malformed_file_committed_by_hand_is_not_called_uncommitted(memory: Memory) -> None:
    memory.sync()
    (memory.root / "facts/bad.md").write_text("---\ntags: [a\n---\nBody\n")
    (memory.root / "facts/loose.md").write_text("---\ntags: [b\n---\nBody\n")
    git(memory.root, "add", "facts/bad.md")
    git(memory.root, "commit", "-qm", "hand commit")

    report = memory.sync()

    lines = {e["path"]: event_line(e) for e in report.events() if e["event"] == "problem"}
    assert "not committed" not in (lines["facts/bad.md"] or "")
    assert "committed by hand" in (lines["facts/bad.md"] or "")
    assert (lines["facts/loose.md"] or "").endswith("(left untouched, not indexed, not committed)")
