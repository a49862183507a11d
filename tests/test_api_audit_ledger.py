"""A damaged recall audit ledger: torn lines, bad bytes and odd lines are skipped, counted and said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from remnic import Memory
from remnic.errors import RemnicError
from remnic.recall.audit import AuditEntry, AuditLog, new_audit_id

DAY = 1_700_000_000  # 2023-11-14


def entry(query: str) -> AuditEntry:
    return AuditEntry(
        id=new_audit_id(DAY),
        ts="2023-11-14T22:13:20.000Z",
        query=query,
        namespace="default",
        sessionKey=None,
        traceId=None,
        candidateIds=["a"],
        returnedIds=["a"],
        budget={"chars": 100, "used": 10},
        latencyMs=1.0,
    )


def day_file(base: Path) -> Path:
    return base / "audit" / "recall-20231114.jsonl"


def test_an_append_after_a_torn_line_starts_its_own_line(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    log.append(entry("before"))
    with open(day_file(tmp_path), "ab") as fh:
        fh.write(b'{"id": "audit-20231114-0000')  # a crash mid-append: no newline
    after = log.append(entry("after"))
    assert log.show(after)["query"] == "after"
    assert [e["query"] for e in log.recent()] == ["after", "before"]
    assert log.unreadable() == {str(day_file(tmp_path)): 1}


def test_bad_bytes_and_odd_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    kept = log.append(entry("kept"))
    with open(day_file(tmp_path), "ab") as fh:
        fh.write(b'{"id": "audit-20231114-0123456789ab", "query": "caf\xe9"}\n')  # not UTF-8
        fh.write(b'{"id": 5}\n[1, 2]\n\n')
    assert [e["id"] for e in log.recent()] == [kept]
    assert log.unreadable() == {str(day_file(tmp_path)): 3}
    with pytest.raises(RemnicError, match=r"damaged line \(.*:2\)"):
        log.show("audit-20231114-0123456789ab")


def test_audit_list_says_how_many_lines_it_skipped(memory: Memory) -> None:
    log = AuditLog(memory.settings.durable_dir)
    log.append(entry("kept"))
    with open(day_file(memory.settings.durable_dir), "ab") as fh:
        fh.write(b'{"id": 5}\n\xff\n')
    res = run_cli("audit", "list", "--memory-dir", str(memory.root))
    assert res.code == 0 and "'kept'" in res.out and "None" not in res.out
    assert f"2 unreadable line(s) skipped in {day_file(memory.settings.durable_dir)}" in res.err
    data = run_cli("audit", "list", "--json", "--memory-dir", str(memory.root)).json()
    assert data["count"] == 1 and list(data["unreadable"].values()) == [2]
    json.dumps(data)
