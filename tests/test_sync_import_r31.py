"""After an import at scale: the first sync is a full pass (the import records no sync base), a full pass
re-writes every index row and shows its read phase, the scan memo holds the imported files, and listing asks the path rule
once per file. Real git repositories throughout."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import git

from remnic.memfile.paths import MemoryPaths
from remnic.memfile.validate import check_bytes
from remnic.repo import scan_memo
from remnic.repo.files import MEMOISE_WAIT_FROM
from remnic.service.memory import Memory
from remnic.sync.state import STATE_FILE, SyncState

ITEMS = [
    {"content": f"Imported fact number {i} about the kafka cluster", "tags": ["ops"] if i % 2 else []}
    for i in range(12)
]


def _state_path(memory: Memory) -> Path:
    return memory.root / ".remnic" / STATE_FILE


def _memo_rows(memory: Memory) -> dict[str, tuple[int, int, int, int, str, str, str]]:
    conn = sqlite3.connect(memory.root / ".remnic" / scan_memo.FILE)
    try:
        return {row[0]: row[1:] for row in conn.execute("SELECT * FROM memo")}
    finally:
        conn.close()


# --- the first sync after an import ---


def test_first_sync_after_init_and_import_is_a_full_pass_with_nothing_to_report(memory: Memory) -> None:
    assert not _state_path(memory).exists()
    result = memory.import_records(ITEMS)
    assert not _state_path(memory).exists()  # the index may hold a hand edit's text: no base is vouched for
    report = memory.sync()
    assert report.mode == "full" and report.changes == [] and report.commit is None
    state = SyncState.load(memory.root)
    assert state.commit == result.commit == memory.ledger.head()
    assert state.rules == repr(MemoryPaths.from_store(memory.settings.store))
    assert memory.sync().mode == "noop"


def test_after_import_hand_edits_are_still_synced_incrementally(memory: Memory) -> None:
    memory.sync()
    result = memory.import_records(ITEMS)  # its commit moves the base along
    edited = memory.root / result.records[0].path
    edited.write_text(edited.read_text().replace("number 0", "number zero"))
    (memory.root / "facts/by-hand.md").write_text("Written by hand after the import.\n")
    report = memory.sync()
    assert report.mode == "incremental"
    assert sorted((c.kind, c.path) for c in report.changes) == [
        ("added", "facts/by-hand.md"),
        ("modified", result.records[0].path),
    ]
    assert memory.files.read("facts/by-hand.md").has_id
    assert git(memory.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_committed_note_before_the_import_still_gets_its_full_pass(memory: Memory) -> None:
    # A note committed by plain git was never looked at by a sync: the first sync must still read it.
    (memory.root / "facts/plain.md").write_text("Committed by hand, no frontmatter.\n")
    git(memory.root, "add", "facts/plain.md")
    git(memory.root, "commit", "-qm", "plain note")
    memory.import_records(ITEMS)
    assert not _state_path(memory).exists()
    report = memory.sync()
    assert report.mode == "full"
    assert [c.path for c in report.changes] == ["facts/plain.md"]
    assert "id" in memory.files.read("facts/plain.md").frontmatter


def test_init_alone_leaves_the_first_sync_a_full_pass(memory: Memory) -> None:
    memory.store("A single stored memory", category="fact")
    assert memory.sync().mode == "full"


# --- a full pass over an index that is already current ---


def test_full_pass_after_a_lost_state_rewrites_every_row(memory: Memory) -> None:
    memory.import_records(ITEMS)
    memory.refresh_index()
    _state_path(memory).unlink(missing_ok=True)
    edited = memory.root / memory.list()[3].path
    edited.write_text(edited.read_text().replace("kafka cluster", "zookeeper ensemble"))
    report = memory.sync()
    assert report.mode == "full"
    assert report.indexed == len(ITEMS)  # every row: one the index holds wrong is repaired too
    live = {r.path: r.id for r in memory.list()}
    assert memory.index.indexed_paths() == set(live)
    assert memory.index.manifest().commit == memory.ledger.head()
    hits = [h.id for h in memory.recall("zookeeper ensemble", top_k=3)]
    assert hits and memory.get(hits[0]).path == str(edited.relative_to(memory.root))


READ_LABEL = "reading"


class Bar:
    """A progress callback that records which phase it was given to."""

    def __init__(self, label: str, calls: list[tuple[str, int, int]]) -> None:
        self.label, self.calls = label, calls

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((self.label, done, total))


def test_full_pass_reports_its_read_phase_under_its_own_label(memory: Memory) -> None:
    memory.import_records(ITEMS)
    _state_path(memory).unlink(missing_ok=True)
    calls: list[tuple[str, int, int]] = []
    report = memory.sync(progress=Bar("indexing", calls), read_progress=Bar(READ_LABEL, calls))
    assert report.mode == "full"
    reads = [c for c in calls if c[0] == READ_LABEL]
    assert reads and reads[-1][1] == reads[-1][2] == len(memory.list())
    assert all(c[0] in (READ_LABEL, "indexing") for c in calls)


def test_a_small_incremental_sync_shows_no_read_progress(memory: Memory) -> None:
    memory.import_records(ITEMS)
    memory.sync()
    (memory.root / "facts/one.md").write_text("One hand edit.\n")
    calls: list[tuple[str, int, int]] = []
    memory.sync(progress=Bar("indexing", calls), read_progress=Bar(READ_LABEL, calls))
    assert not [c for c in calls if c[0] == READ_LABEL]


# --- the scan memo after an import ---


def test_import_fills_the_scan_memo_with_what_a_parse_gives(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    # Files written this very second are too fresh for their stat to vouch for them (RACY_NS); the
    # import here is faster than that, so the test lets every file count as settled.
    monkeypatch.setattr(scan_memo, "RACY_NS", -1)
    result = memory.import_records(ITEMS)
    rows = _memo_rows(memory)
    assert {r.path for r in result.records} <= set(rows)
    for record in result.records:
        st = os.lstat(memory.root / record.path)
        ino, size, mtime, ctime, namespace, frontmatter, body = rows[record.path]
        assert (ino, size, mtime, ctime) == scan_memo.stat_key(st)
        fresh = check_bytes((memory.root / record.path).read_bytes(), record.path, memory.settings.store).record
        assert fresh is not None
        assert (json.loads(frontmatter), body, namespace) == (fresh.frontmatter, fresh.body, fresh.namespace)


def test_a_hand_edit_after_the_import_is_read_not_the_memoised_parse(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_memo, "RACY_NS", -1)
    result = memory.import_records(ITEMS)
    path = result.records[1].path
    full = memory.root / path
    full.write_text(full.read_text().replace("number 1 ", "number 7 "))  # same size, new bytes
    assert memory.files.read(path).content.startswith("Imported fact number 7 ")
    assert any(r.content.startswith("Imported fact number 7 ") for r in memory.list())


def test_fresh_files_are_not_memoised_until_they_settle(memory: Memory) -> None:
    (memory.root / "facts/a.md").write_text("A note written just now.\n")
    assert memory.files.memoise(["facts/a.md"]) == 0
    time.sleep(scan_memo.RACY_NS / 1e9 + 0.2)  # ctime counts too, so only waiting ages a file
    assert memory.files.memoise(["facts/a.md"]) == 1
    assert "facts/a.md" in _memo_rows(memory)


# --- listing asks the path rule once per file ---


class CountingPaths(MemoryPaths):
    """The same rule, counting how often it is asked."""

    asked: list[str] = []

    def skip_reason(self, path: str) -> str | None:
        CountingPaths.asked.append(path)
        return super().skip_reason(path)


def test_status_asks_the_path_rule_once_per_file(memory: Memory) -> None:
    result = memory.import_records(ITEMS)
    (memory.root / "notes").mkdir()
    (memory.root / "notes/outside.md").write_text("Not in a memory folder.\n")
    os.symlink(memory.root / "facts", memory.root / "facts/link.md")
    memory.files.paths = CountingPaths(**vars(memory.files.paths))
    CountingPaths.asked = []
    memory.status()
    assert CountingPaths.asked.count(result.records[0].path) == 1  # the scan, then the skipped files
    reasons = dict(memory.files.skipped())
    assert "notes/outside.md" in reasons and "facts/link.md" in reasons
    assert {r.path for r in memory.files.scan().records} == {r.path for r in result.records}


def test_a_changed_rule_is_asked_afresh(memory: Memory) -> None:
    result = memory.import_records(ITEMS)
    gone = result.records[0].path
    assert gone in {r.path for r in memory.files.scan().records}
    memory.files.paths = replace(memory.files.paths, exclude=(gone,))
    assert gone not in {r.path for r in memory.files.scan().records}


def test_a_large_import_waits_for_its_files_to_settle_and_memoises_them_all(memory: Memory) -> None:
    items = [{"content": f"Bulk memory {i} on the deploy pipeline"} for i in range(MEMOISE_WAIT_FROM)]
    result = memory.import_records(items)
    rows = _memo_rows(memory)
    assert len(result.records) == MEMOISE_WAIT_FROM
    assert all(r.path in rows for r in result.records)
