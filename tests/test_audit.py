"""The recall audit ledger: append, show, rotation by day, torn lines."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from remnic.errors import NotFoundError, UsageError
from remnic.recall.audit import AuditEntry, AuditLog, new_audit_id


def entry(query: str, now: float | None = None) -> AuditEntry:
    return AuditEntry(
        id=new_audit_id(now),
        ts="2026-11-21T00:00:00.000Z",
        query=query,
        namespace="default",
        sessionKey=None,
        traceId=None,
        candidateIds=["a", "b"],
        returnedIds=["a"],
        budget={"chars": 100, "used": 10},
        latencyMs=1.5,
    )


def test_append_and_show(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    first = log.append(entry("one"))
    second = log.append(entry("two"))
    assert log.show(first)["query"] == "one"
    assert log.show(second)["returnedIds"] == ["a"]
    assert [e["query"] for e in log.recent()] == ["two", "one"]


def test_rotated_by_day(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    old = log.append(entry("yesterday", now=1_700_000_000))
    new = log.append(entry("today", now=1_700_086_400))
    files = sorted(p.name for p in (tmp_path / "audit").iterdir())
    assert files == ["recall-20231114.jsonl", "recall-20231115.jsonl"]
    assert log.show(old)["query"] == "yesterday" and log.show(new)["query"] == "today"


def test_bad_and_unknown_ids(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    with pytest.raises(UsageError):
        log.show("../../etc/passwd")
    with pytest.raises(NotFoundError):
        log.show(new_audit_id())


def test_torn_line_does_not_hide_others(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    first = log.append(entry("kept"))
    path = next((tmp_path / "audit").iterdir())
    with open(path, "a") as fh:
        fh.write('{"id": "audit-torn')
    with open(path, "a") as fh:
        fh.write("\n")
    second = log.append(entry("after"))
    assert log.show(first)["query"] == "kept" and log.show(second)["query"] == "after"


def _writer(args: tuple[str, int]) -> None:
    root, worker = args
    log = AuditLog(Path(root))
    for i in range(50):
        log.append(entry(f"w{worker}-{i}" + "x" * 5000))


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_writer, [(str(tmp_path), w) for w in range(4)])
    lines = next((tmp_path / "audit").iterdir()).read_text().splitlines()
    assert len(lines) == 200
    assert all(json.loads(line)["query"].startswith("w") for line in lines)


def test_old_days_are_pruned_when_a_new_day_starts(tmp_path: Path) -> None:
    # Pruning follows the wall clock (the entries' own days never trigger it): old entries are made
    # old on disk too, as a ledger that really aged would be.
    log = AuditLog(tmp_path, retention_days=30)
    old = log.append(entry("long ago", now=1_700_000_000))  # 2023-11-14
    kept = log.append(entry("two weeks later", now=1_701_200_000))  # 2023-11-28
    for path in (tmp_path / "audit").iterdir():
        os.utime(path, (1_701_200_000, 1_701_200_000))
    today = log.append(entry("today"))  # starts the wall clock's day file
    names = sorted(p.name for p in (tmp_path / "audit").iterdir())
    assert names == [f"recall-{today[6:14]}.jsonl"]
    with pytest.raises(NotFoundError):
        log.show(old)
    with pytest.raises(NotFoundError):
        log.show(kept)
    forever = AuditLog(tmp_path / "keep", retention_days=0)
    forever.append(entry("a", now=1_700_000_000))
    forever.append(entry("b", now=1_705_000_000))
    assert len(list((tmp_path / "keep" / "audit").iterdir())) == 2
