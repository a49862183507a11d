"""The index after an import and after a full pass holds what the files hold, the scan memo answers only
under the settings it was parsed with, and an import whose index step fails still reports its commit.
Real git repositories throughout (the tester's repros of the v4 report)."""

from __future__ import annotations

import glob
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.repo import scan_memo
from remnic.repo.scan_memo import ScanMemo, stat_key
from remnic.service.memory import Memory
from remnic.sync.state import STATE_FILE, SyncState

ITEMS = [{"content": f"Imported memory {i} about animal{i:03d}", "category": "fact"} for i in range(6)]


def _row(memory: Memory, path: str) -> tuple[dict[str, Any], str]:
    with memory.index.lock:
        return memory.index.view()[2].hit_fields([path])[path]


def _catalog(memory: Memory) -> sqlite3.Connection:
    found = glob.glob(str(memory.root / ".remnic" / "index" / "build-*" / "catalog.sqlite"))
    assert len(found) == 1, found
    return sqlite3.connect(found[0])


def _reopen(memory: Memory, **store: Any) -> Memory:
    memory.close()
    return Memory(settings_for(memory.root, store=store))


# --- 1. an edit made while an import runs, then undone, is not left in the index ---


def test_an_undone_edit_indexed_by_the_import_is_repaired_by_the_first_sync(memory: Memory) -> None:
    memory.defer_index(build_missing=False)  # as `remnic import`: commit, then catch the index up
    result = memory.import_records(ITEMS)
    path = result.records[0].path
    full = memory.root / path
    committed = full.read_text()
    full.write_text(committed.replace("animal000", "wombat000"))  # a hand edit before the catch-up
    memory.refresh_index()
    assert "wombat000" not in _row(memory, path)[1]  # the catch-up reads what HEAD holds, not the edit on disk
    git(memory.root, "checkout", "--", path)  # the edit undone: git is clean again
    assert not (memory.root / ".remnic" / STATE_FILE).exists()  # the import recorded no sync base
    report = memory.sync()
    assert report.mode == "full"
    assert _row(memory, path)[1] == result.records[0].content
    assert "wombat000" not in _row(memory, path)[1]


# --- 2 and 3. a full pass re-writes every row, so it repairs one the index holds wrong ---


def test_a_full_pass_rewrites_a_row_whose_values_are_equal_in_python_only(memory: Memory) -> None:
    record = memory.import_records([{"content": "The backup runs nightly", "category": "fact"}]).records[0]
    full = memory.root / record.path
    full.write_text(full.read_text().replace("tags: []", "tags: [1]\nreviewed: 1\nweight: 2"))
    memory.sync()
    assert _row(memory, record.path)[0]["reviewed"] == 1
    text = full.read_text().replace("tags: [1]", "tags: [true]")
    full.write_text(text.replace("reviewed: 1", "reviewed: true").replace("weight: 2", "weight: 2.0"))
    git(memory.root, "commit", "-qam", "hand edit: 1 -> true")
    (memory.root / ".remnic" / STATE_FILE).unlink()  # lost state: the next run is a full pass
    report = memory.sync()
    assert report.mode == "full" and report.indexed == 1
    frontmatter = _row(memory, record.path)[0]
    assert frontmatter["reviewed"] is True and frontmatter["tags"] == [True]
    assert frontmatter["tags"][0] is True and isinstance(frontmatter["weight"], float)
    assert [h.path for h in memory.recall("backup", tags=["1"])] == []


def test_full_sync_repairs_a_damaged_status_and_lost_vectors(memory: Memory) -> None:
    lines = [
        {"content": "The backup runs nightly", "category": "fact"},
        {"content": "Ana prefers tabs", "category": "preference"},
    ]
    backup, tabs = (r.path for r in memory.import_records(lines).records)
    memory.refresh_index()
    memory = _reopen(memory)
    with _catalog(memory) as db:
        db.execute("UPDATE docs SET status = 'forgotten' WHERE path = ?", (backup,))
        db.execute("UPDATE docs SET chunks = x'' WHERE path = ?", (tabs,))
        db.execute("DELETE FROM pending_vectors")
    memory = _reopen(memory)
    report = memory.sync(full=True)
    assert report.mode == "full" and report.indexed == 2
    with _catalog(memory) as db:
        rows = dict(db.execute("SELECT path, status FROM docs"))
        vectors = dict(db.execute("SELECT path, length(chunks) FROM docs"))
        pending = {p for (p,) in db.execute("SELECT path FROM pending_vectors")}
    assert rows == {backup: "active", tabs: "active"}
    assert vectors[tabs] > 0 or tabs in pending
    assert backup in [h.path for h in memory.recall("backup nightly", top_k=3)]
    memory.close()


# --- 4. the scan memo answers only under the settings it was parsed with ---

SECRET_ITEMS = [{"content": f"note {i} key AKIAIOSFODNN7EXAMPL{i}", "category": "fact"} for i in range(3)]


def test_a_memo_filled_without_the_secret_scan_is_not_used_once_it_is_on(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_memo, "RACY_NS", -1)  # every file counts as settled, so the import memoises it
    memory = _reopen(memory, scan_secrets=False)
    written = memory.import_records(SECRET_ITEMS).records
    assert len(memory.files.scan().records) == 3
    strict = _reopen(memory)
    scan = strict.files.scan()
    assert scan.records == [] and sorted(p.path for p in scan.problems) == sorted(r.path for r in written)
    assert "store.scanSecrets" in str(scan.problems[0])
    assert strict.status()["memories"] == 0
    lenient = _reopen(strict, scan_secrets=False)
    assert len(lenient.files.scan().records) == 3
    lenient.close()


def test_a_memo_written_under_other_settings_meanwhile_is_dropped(tmp_path: Path) -> None:
    state = tmp_path / ".remnic"
    state.mkdir()
    (tmp_path / "a.md").write_text("x")
    key = stat_key((tmp_path / "a.md").stat())
    memory_a = Memory.init(tmp_path / "mem", settings=settings_for(tmp_path / "mem"))
    record = memory_a.store("A memory to memoise", category="fact").record
    memory_a.close()
    lenient = ScanMemo(state, "lenient")
    strict = ScanMemo(state, "strict")
    strict.put("facts/strict.md", (key[0], key[1], 0, 0), record)
    strict.close(None)
    lenient.put("facts/lenient.md", (key[0], key[1], 0, 0), record)
    lenient.close(None)  # opened before strict wrote: its fingerprint is checked again as it writes
    assert ScanMemo(state, "strict").get("facts/strict.md", (key[0], key[1], 0, 0)) is None
    assert ScanMemo(state, "strict").get("facts/lenient.md", (key[0], key[1], 0, 0)) is None
    again = ScanMemo(state, "lenient")
    assert again.get("facts/lenient.md", (key[0], key[1], 0, 0)) is not None
    assert again.get("facts/strict.md", (key[0], key[1], 0, 0)) is None
    again.close(None)


# --- 5. an import whose index step fails reports its commit ---


@contextmanager
def _held(memory: Memory) -> Iterator[None]:
    """Another process holds the index lock (a reindex elsewhere) for the block."""
    code = (
        "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
        "print('held', flush=True); sys.stdin.read()"
    )
    lock = memory.root / ".remnic" / "index.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    try:
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def _impatient(memory: Memory) -> None:
    config = memory.root / "remnic.config.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    data["store"] = {**data.get("store", {}), "lockTimeoutS": 0.5}
    config.write_text(json.dumps(data, indent=1))
    git(memory.root, "add", "remnic.config.json")
    git(memory.root, "commit", "-qm", "impatient lock")


def _ten(tmp_path: Path) -> Path:
    lines = [json.dumps({"content": f"Ten fact {i} about otters", "category": "fact"}) for i in range(10)]
    path = tmp_path / "ten.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_import_reports_its_commit_when_the_index_lock_is_held(memory: Memory, tmp_path: Path) -> None:
    _impatient(memory)
    memory.sync()  # a synced repository: the import moves the base along, so only the mark re-indexes
    memory.close()
    ten = _ten(tmp_path)
    with _held(memory):
        result = run_cli("--memory-dir", str(memory.root), "import", str(ten))
    assert result.code == 0, result.err
    head = git(memory.root, "rev-parse", "HEAD").strip()
    assert f"imported 10 memories in one commit ({head[:8]})" in result.out
    assert "warning: the index was not updated" in result.err and "index lock" in result.err
    assert "`remnic sync run`" in result.err and "next recall" in result.err
    assert SyncState.load(memory.root).index_behind
    again = Memory.open(memory.root)
    report = again.sync()
    assert report.index == "updated"
    assert again.index.manifest().commit == head
    assert len(again.index.indexed_paths()) == 10
    again.close()


def test_import_json_names_the_index_error(memory: Memory, tmp_path: Path) -> None:
    _impatient(memory)
    memory.close()
    with _held(memory):
        result = run_cli("--memory-dir", str(memory.root), "import", str(_ten(tmp_path)), "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["imported"] == 10 and len(data["paths"]) == 10
    assert "index lock" in data["indexError"]
    assert any(w["field"] == "index" and "remnic sync run" in w["message"] for w in data["warnings"])
    assert data["commit"] == git(memory.root, "rev-parse", "HEAD").strip()
