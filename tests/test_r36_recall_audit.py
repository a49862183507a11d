"""The recall audit ledger is pruned by the wall clock only: a pinned or future recall clock, or a
wall clock that jumped backwards, never deletes a day file (h6 H1: one pinned recall deleted them all)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from remnic import Memory
from remnic.config import settings_for
from remnic.recall.audit import AuditEntry, AuditLog, new_audit_id

FUTURE_MS = 1_900_000_000_000  # 2030-03-17
ANCIENT = 946_771_200  # 2000-01-02


def entry(now: float | None = None) -> AuditEntry:
    return AuditEntry(
        id=new_audit_id(now),
        ts="2000-01-02T00:00:00.000Z",
        query="q",
        namespace="default",
        sessionKey=None,
        traceId=None,
        candidateIds=[],
        returnedIds=[],
        budget={"chars": 100, "used": 0},
        latencyMs=0.0,
    )


def day_file(folder: Path, name: str, mtime: float | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"recall-{name}.jsonl"
    path.write_text(json.dumps({"id": f"audit-{name}-000000000000", "query": "kept"}) + "\n")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def ledger(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("audit") / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    memory.store("the cache is warmed at startup", category="fact")
    yield memory
    memory.close()


def test_a_future_entry_day_does_not_prune(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, retention_days=90)
    ancient = day_file(log.dir, "20000102", ANCIENT)
    log.append(entry(FUTURE_MS / 1000))  # a new day file, but not the wall clock's day
    assert ancient.exists()
    assert ledger(log.dir) == ["recall-20000102.jsonl", "recall-20300317.jsonl"]


def test_prune_keeps_every_file_newer_than_the_wall_clock_cutoff(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, retention_days=90)
    now = time.time()
    day_file(log.dir, "20000102", ANCIENT)  # old by name and by write: goes
    day_file(log.dir, "20000103")  # old by name, written just now (a pinned past X-ray): kept
    day_file(log.dir, "20300317", FUTURE_MS / 1000)  # after the wall clock (it jumped back): kept
    recent = time.strftime("%Y%m%d", time.gmtime(now - 89 * 86_400))
    day_file(log.dir, recent, now - 89 * 86_400)  # inside the window: kept
    assert log.prune() == ["recall-20000102.jsonl"]
    assert ledger(log.dir) == sorted(["recall-20000103.jsonl", "recall-20300317.jsonl", f"recall-{recent}.jsonl"])
    assert AuditLog(tmp_path, retention_days=0).prune() == []


def test_pinned_recalls_never_prune_and_a_live_one_prunes_by_the_wall_clock(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = mem.settings.durable_dir / "audit"
    for path in folder.glob("recall-*.jsonl"):
        path.unlink()
    day_file(folder, "20000102", ANCIENT)
    day_file(folder, "20000103", ANCIENT)
    past_ms = int((ANCIENT + 86_400 * 3) * 1000)  # 2000-01-05: its file starts now, older than 90 days
    for clock in (FUTURE_MS, past_ms):
        mem.recall("cache", clock=clock)
        mem.recall_xray("cache", clock=clock)
    assert ledger(folder) == [
        "recall-20000102.jsonl",
        "recall-20000103.jsonl",
        "recall-20000105.jsonl",
        "recall-20300317.jsonl",
    ]
    with monkeypatch.context() as patch:
        patch.setenv("REMNIC_XRAY_CLOCK", str(FUTURE_MS + 86_400_000))
        mem.recall_xray("cache")
    assert "recall-20000102.jsonl" in ledger(folder)

    live = mem.recall("cache")
    assert live.hits
    today = time.strftime("%Y%m%d", time.gmtime())
    # Only the files old by day and by write go; the pinned past X-ray's file was written just now.
    assert ledger(folder) == sorted(
        ["recall-20000105.jsonl", "recall-20300317.jsonl", "recall-20300318.jsonl", f"recall-{today}.jsonl"]
    )
