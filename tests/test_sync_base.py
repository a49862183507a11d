"""The sync base follows remnic's own commits: a hand edit of a file remnic wrote is a modification,
stamped and committed as one, and a sync reports (and counts) only what it changed.

On real git repositories, through the CLI as a person runs it (one-shot commands leave the index to
the next recall, so the index's commit lags behind) and through the API.
"""

from __future__ import annotations

import time
from pathlib import Path

from conftest import git, run_cli
from test_sync_run import assert_index_matches_files, committed_paths, head_subject, porcelain, write

from remnic.memfile.model import original_hash, parse_file
from remnic.repo.transaction import CommitOutcome, Staged
from remnic.service.memory import Memory
from remnic.sync.base import follow_own_commit, may_carry_hand_edit
from remnic.sync.state import SyncState


def cli(memory: Memory, *args: str) -> str:
    result = run_cli(*args, "--memory-dir", str(memory.root))
    assert result.code == 0, result.err + result.out
    return result.out


def report_lines(out: str) -> list[str]:
    """The lines of a sync's text report, without the timing line a slow machine adds."""
    return [line for line in out.splitlines() if not line.startswith("took ")]


def edit(memory: Memory, rel: str, old: str, new: str) -> None:
    """What ``sed -i s/old/new/`` does: the same file, one line changed."""
    path = memory.root / rel
    text = path.read_text()
    assert old in text
    time.sleep(0.01)  # the stamp must be able to differ from the write's own time
    path.write_text(text.replace(old, new))


def test_hand_edit_of_a_stored_memory_is_a_stamped_modification(memory: Memory) -> None:
    cli(memory, "sync", "run")  # sets the sync base
    cli(memory, "store", "Beta fact two")  # remnic's own write: a commit
    rel = "facts/beta-fact-two.md"
    stored = memory.files.read(rel)
    store_commit = memory.ledger.head()
    edit(memory, rel, "Beta fact two", "Beta fact two, edited by hand")

    lines = report_lines(cli(memory, "sync", "run"))
    assert lines[0].startswith(f"M {rel}  {stored.id}  (normalised contentHash, updated)  -> ")
    assert lines[1].startswith("synced 1 change(s) in commit ") and len(lines) == 2
    assert head_subject(memory) == f"remnic sync: edit {rel}"
    assert committed_paths(memory) == [rel]
    assert git(memory.root, "rev-parse", "HEAD~1").strip() == store_commit

    record = memory.files.read(rel)
    assert record.content == "Beta fact two, edited by hand"
    assert record.frontmatter["contentHash"] == original_hash("Beta fact two, edited by hand")
    assert record.frontmatter["contentHash"] != stored.frontmatter["contentHash"]
    assert record.frontmatter["updated"] > stored.frontmatter["updated"]
    assert record.frontmatter["created"] == stored.frontmatter["created"]
    assert porcelain(memory) == ""
    assert SyncState.load(memory.root).commit == memory.ledger.head()
    assert memory.sync().mode == "noop"
    doctor = {c["name"]: c for c in memory.doctor()}
    assert doctor["memory-files"]["status"] == "ok"
    assert_index_matches_files(memory)


def test_hand_edit_of_an_entity_page_is_a_modification(memory: Memory) -> None:
    cli(memory, "sync", "run")
    cli(memory, "store", "Ana Lopez works at Acme on the billing team")
    cli(memory, "store", "Ana Lopez prefers tabs")
    assert "entities/person-ana-lopez.md" in cli(memory, "entities", "list")
    cli(memory, "entities", "refresh")  # writes and commits the page (a read shows it, writing nothing)
    rel = "entities/person-ana-lopez.md"
    assert "remnic entities" in head_subject(memory)
    edit(memory, rel, "billing team", "billing and payments team")

    report = memory.sync()
    assert [(c.kind, c.path, c.origin) for c in report.changes] == [("modified", rel, "working-tree")]
    assert head_subject(memory) == f"remnic sync: edit {rel}"
    assert committed_paths(memory) == [rel]
    assert porcelain(memory) == ""


def test_a_sync_reports_and_counts_only_what_it_changed(memory: Memory) -> None:
    cli(memory, "sync", "run")
    first = memory.store("The deploy window opens at nine", category="fact").record
    memory.store("Invoices go out on the first of the month", category="fact")
    cli(memory, "store", "Mia reviews the release notes")
    memory.update(first.id, {"tags": ["ops"]})
    cli(memory, "forget", memory.store("A memory to forget soon", category="fact").record.id)
    # Nothing edited by hand: nothing to report, nothing to commit.
    before = memory.ledger.head()
    out = cli(memory, "sync", "run")
    assert out.startswith("nothing to sync") and "already in git" not in out
    assert memory.ledger.head() == before

    cli(memory, "store", "Leo owns the billing service")
    edit(memory, first.path, "at nine", "at ten")
    report = memory.sync()
    assert [(c.kind, c.path, c.normalized) for c in report.changes] == [
        ("modified", first.path, ["contentHash", "updated"])
    ]
    assert committed_paths(memory) == [first.path]
    assert_index_matches_files(memory)  # what the index lagged behind is indexed, unreported
    edit(memory, first.path, "at ten", "at eleven")
    memory.store("One more stored memory", category="fact")
    lines = report_lines(cli(memory, "sync", "run"))
    assert len(lines) == 2 and lines[0].startswith(f"M {first.path}  {first.id}  (normalised contentHash, updated)")
    assert lines[1].startswith("synced 1 change(s) in commit ")


def test_a_plain_git_commit_between_keeps_the_base_and_is_still_synced(memory: Memory) -> None:
    memory.sync()
    base = memory.ledger.head()
    write(memory, "facts/by-hand.md", "Committed by hand without frontmatter.\n")
    git(memory.root, "add", "facts/by-hand.md")
    git(memory.root, "commit", "-qm", "by hand")
    memory.store("Stored after a plain git commit", category="fact")
    # The store's parent is not the commit sync reconciled: the base stays, so the hand commit is synced.
    assert SyncState.load(memory.root).commit == base
    edit(memory, "facts/by-hand.md", "by hand", "by hand, then edited")
    report = memory.sync()
    by_path = {c.path: (c.kind, c.origin, c.committed) for c in report.changes}
    assert by_path["facts/by-hand.md"] == ("added", "working-tree", True)
    assert memory.files.read("facts/by-hand.md").has_id
    assert committed_paths(memory) == ["facts/by-hand.md"] and porcelain(memory) == ""


def test_the_counts_of_a_commit_leave_out_what_git_already_had(memory: Memory) -> None:
    record = memory.store("The API rate limit is 100 per minute", category="fact").record
    memory.sync()
    write(memory, "facts/committed.md", "---\nid: mem_committed\n---\nA note committed by hand.\n")
    git(memory.root, "add", "facts/committed.md")
    git(memory.root, "commit", "-qm", "add a note by hand")
    edit(memory, record.path, "is 100 per", "is 250 per")
    out = cli(memory, "sync", "run")
    assert "A facts/committed.md  mem_committed  (already in git)" in out
    assert "synced 1 change(s) in commit " in out and "; indexed 1 already committed in git" in out
    assert committed_paths(memory) == [record.path]


def test_a_write_on_a_repository_never_synced_starts_no_state(memory: Memory) -> None:
    memory.store("Stored before any sync", category="fact")
    assert not (memory.root / ".remnic" / "sync-state.json").exists()


def test_a_hand_edit_a_remnic_write_commits_along_is_still_stamped(memory: Memory) -> None:
    memory.sync()
    old = memory.store("The standup is at nine", category="fact").record
    new = memory.store("The standup moved to half past nine", category="fact").record
    base = memory.ledger.head()
    assert SyncState.load(memory.root).commit == base
    edit(memory, old.path, "at nine", "at nine sharp")
    # Superseding patches the old file's frontmatter on git's copy and on the disk's: the hand edit
    # stays uncommitted (as an update carries one aside), so the sync commits and stamps it.
    memory.update(new.id, {"supersedes": old.id})
    assert old.path in committed_paths(memory) and porcelain(memory) == f" M {old.path}\n"
    assert "sharp" not in git(memory.root, "show", f"HEAD:{old.path}")
    assert "status: superseded" in git(memory.root, "show", f"HEAD:{old.path}")
    report = memory.sync()
    by_path = {c.path: (c.kind, c.normalized) for c in report.changes}
    assert by_path[old.path] == ("modified", ["contentHash", "updated"])
    record = memory.files.read(old.path)
    assert record.frontmatter["contentHash"] == original_hash("The standup is at nine sharp")
    assert record.status == "superseded" and committed_paths(memory) == [old.path]


def test_the_base_moves_only_to_a_direct_child_of_it(tmp_path: Path) -> None:
    (tmp_path / ".remnic").mkdir()
    pending = {"facts/x.md": {"kind": "uncommitted"}}
    SyncState(commit="a" * 40, pending=pending).save(tmp_path)
    # HEAD moved under the write (a plain `git commit` landed first): the commit's parent is not the base.
    follow_own_commit(tmp_path, lambda _sha: ["b" * 40], CommitOutcome("c" * 40, "a" * 40), [])
    assert SyncState.load(tmp_path).commit == "a" * 40
    follow_own_commit(tmp_path, lambda _sha: ["b" * 40], CommitOutcome("c" * 40, "b" * 40), [])
    assert SyncState.load(tmp_path).commit == "a" * 40
    follow_own_commit(tmp_path, lambda _sha: ["a" * 40], CommitOutcome("c" * 40, "a" * 40), [])
    moved = SyncState.load(tmp_path)
    assert moved.commit == "c" * 40 and moved.pending == pending


def test_only_a_file_whose_hash_vouches_for_its_text_lets_the_base_move() -> None:
    text = "---\nid: mem_a\ncontentHash: {}\n---\nHello there\n"
    fresh = text.format(original_hash("Hello there")).encode()
    stale = text.format(original_hash("Hello")).encode()

    def staged(data: bytes, before: bytes | None, commit_data: bytes | None = None) -> Staged:
        return Staged("facts/a.md", data, before, commit_data, parse_file(data.decode(), "facts/a.md"))

    assert not may_carry_hand_edit(staged(fresh, b"old bytes"))
    assert may_carry_hand_edit(staged(stale, b"old bytes"))
    assert not may_carry_hand_edit(staged(stale, None))  # a new file: remnic's own bytes
    assert not may_carry_hand_edit(staged(stale, b"old bytes", commit_data=b"patched committed version"))
