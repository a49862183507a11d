"""Import: an active line is never lost to an inactive line of the same text (the batch keeps one line
per text, and the active one wins), and one run names every line's problems, the checks that need every
field valid (``supersedes``, a superseded line's successor) included.

Real repositories in temp dirs, driven through the CLI and the service.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, snapshot_tree

from remnic.errors import ValidationError
from remnic.service.memory import Memory

WIFI = "The office wifi password rotates monthly."


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def where(memory: Memory) -> tuple[str, str]:
    return ("--memory-dir", str(memory.root))


# --- 6. the active line of a text wins over an inactive one, whatever their order ---


@pytest.mark.parametrize("inactive", ["archived", "rejected", "pending_review"])
def test_an_active_line_after_an_inactive_one_of_its_text_is_written(
    memory: Memory, tmp_path: Path, inactive: str
) -> None:
    path = write_lines(tmp_path / "w.jsonl", [{"content": WIFI, "status": inactive}, {"content": WIFI}])
    dry = run_cli("import", str(path), *where(memory), "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert dry.json()["wouldImport"] == 1 and dry.json()["skipped"] == [{"line": 1, "reason": "batch", "sameAsLine": 2}]
    result = run_cli("import", str(path), *where(memory), "--json")
    assert result.code == 0, result.err
    assert result.json()["imported"] == 1
    assert [(r.content, r.status) for r in memory.files.scan().records] == [(WIFI, "active")]
    hits = memory.recall("office wifi password")
    assert [h.content for h in hits.hits] == [WIFI]
    # run again: nothing new, both lines the memory written
    again = memory.import_records([{"content": WIFI, "status": inactive}, {"content": WIFI}])
    assert not again.records and len(again.skipped) == 2
    assert {s.id for s in again.skipped} == {memory.files.scan().records[0].id}


def test_an_active_line_after_one_matching_an_inactive_memory_is_written(memory: Memory) -> None:
    first = memory.import_records([{"content": WIFI, "status": "archived"}])
    assert [r.status for r in first.records] == ["archived"]
    result = memory.import_records([{"content": WIFI, "status": "archived"}, {"content": WIFI}])
    assert [(r.content, r.status) for r in result.records] == [(WIFI, "active")]
    assert [(s.line, s.reason) for s in result.skipped] == [(1, "text")]
    assert sorted(r.status for r in memory.files.scan().records) == ["active", "archived"]


def test_a_line_after_the_active_one_is_still_its_batch_duplicate(memory: Memory) -> None:
    result = memory.import_records(
        [{"content": WIFI, "status": "archived"}, {"content": WIFI}, {"content": WIFI, "status": "rejected"}]
    )
    assert [r.status for r in result.records] == ["active"]
    assert [(s.line, s.reason, s.same_as_line) for s in result.skipped] == [(1, "batch", 2), (3, "batch", 2)]
    assert set(result.duplicates) == {result.records[0].id}


# --- 9. one run names every line's problems ---


def test_field_problems_and_a_missing_successor_are_named_in_one_run(memory: Memory, tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "two.jsonl",
        [{"content": "Line one text.", "importanceScore": 5}, {"content": "Line two text.", "status": "superseded"}],
    )
    tree = snapshot_tree(memory.root)
    for extra in ((), ("--dry-run",)):
        result = run_cli("import", str(path), *where(memory), *extra)
        assert result.code == 2
        assert "two.jsonl:1: importanceScore: must be from 0 to 1, got 5" in result.err
        assert "two.jsonl:2: status: superseded needs the memory that replaces this one" in result.err
    assert snapshot_tree(memory.root) == tree


def test_supersedes_problems_and_a_missing_successor_are_named_in_one_run(memory: Memory) -> None:
    lines = [
        {"content": "old value", "status": "superseded", "supersededBy": "mem_01a21cddb3235ed8cb99"},
        {"content": "new value", "supersedes": "mem_01a21cddb3235ed8cb11"},
        {"content": "other value", "supersedes": "mem_01a21cddb3235ed8cb22"},
    ]
    with pytest.raises(ValidationError) as caught:
        memory.import_records(lines)
    named = sorted((p.line, p.field) for p in caught.value.problems)
    assert named == [(1, "supersededBy"), (2, "supersedes"), (3, "supersedes")]
    assert memory.files.scan().records == []


def test_a_line_left_out_for_its_problem_does_not_make_up_problems_for_others(memory: Memory) -> None:
    old = "mem_01a21cddb3235ed8cb77"
    lines = [
        {"id": old, "content": "the old rule", "status": "superseded", "importanceScore": 9},
        {"content": "the new rule", "supersedes": old},
        {"content": "an older rule", "status": "superseded", "supersededBy": old},
        {"id": "mem_01a21cddb3235ed8cb78", "content": "replaced", "status": "superseded"},
        {"content": "its replacement", "supersedes": "mem_01a21cddb3235ed8cb78", "importanceScore": -1},
    ]
    with pytest.raises(ValidationError) as caught:
        memory.import_records(lines)
    assert sorted((p.line, p.field) for p in caught.value.problems) == [(1, "importanceScore"), (5, "importanceScore")]
