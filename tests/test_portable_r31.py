"""Importing a JSONL file again: lines that carry a status are exact duplicates of the memory they
were imported as, so re-running an import writes nothing new; and a line imported as superseded
must name a successor that exists.

Real repositories in temp dirs, driven through the CLI and the service.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, snapshot_tree

from remnic.errors import ValidationError
from remnic.service.memory import Memory


def where(memory: Memory) -> tuple[str, str]:
    return ("--memory-dir", str(memory.root))


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def statuses(memory: Memory) -> list[tuple[str, str]]:
    return sorted((r.content, r.status) for r in memory.files.scan().records)


MIXED = [
    {"content": "Bob left Acme in 2023", "status": "archived"},
    {"content": "Needs a look", "status": "pending_review"},
    {"content": "Active one"},
    {"content": "Old rule", "status": "rejected", "category": "decision"},
    {"content": "Needs a look", "status": "archived"},  # same text as line 2: the batch's duplicate
]


# --- 1. a re-run import is idempotent, whatever status its lines carry ---


def test_importing_the_same_file_twice_adds_nothing_the_second_time(memory: Memory, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", MIXED)
    first = run_cli("import", str(path), *where(memory), "--json")
    assert first.code == 0, first.err
    assert first.json()["imported"] == 4
    after_first, head = statuses(memory), git(memory.root, "rev-parse", "HEAD")
    tree = snapshot_tree(memory.root)

    again = run_cli("import", str(path), *where(memory), "--json")
    assert again.code == 0, again.err
    data = again.json()
    assert data["imported"] == 0 and data["commit"] is None
    by_line = {s["line"]: s for s in data["skipped"]}
    assert sorted(by_line) == [1, 2, 3, 4, 5]
    ids = {r.content + "/" + r.status: r.id for r in memory.files.scan().records}
    assert (by_line[1]["reason"], by_line[1]["id"]) == ("text", ids["Bob left Acme in 2023/archived"])
    assert (by_line[2]["reason"], by_line[2]["id"]) == ("text", ids["Needs a look/pending_review"])
    assert (by_line[4]["reason"], by_line[4]["id"]) == ("text", ids["Old rule/rejected"])
    assert (by_line[5]["reason"], by_line[5]["sameAsLine"]) == ("batch", 2)
    assert statuses(memory) == after_first and snapshot_tree(memory.root) == tree
    assert git(memory.root, "rev-parse", "HEAD") == head

    text = run_cli("import", str(path), *where(memory))
    assert text.code == 0, text.err
    assert f"line 1: has the text of {ids['Bob left Acme in 2023/archived']} (facts/" in text.out
    assert statuses(memory) == after_first


def test_a_dry_run_of_the_second_import_predicts_it(memory: Memory, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", MIXED)
    assert run_cli("import", str(path), *where(memory)).code == 0
    dry = run_cli("import", str(path), *where(memory), "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert dry.json()["wouldImport"] == 0 and len(dry.json()["skipped"]) == 5


def test_an_interrupted_import_run_again_brings_only_the_missing_lines(memory: Memory, tmp_path: Path) -> None:
    lines = [{"content": f"note {i}", "status": ("archived", "pending_review", "active")[i % 3]} for i in range(12)]
    memory.import_records(lines[:7])  # what landed before the interruption
    result = memory.import_records(lines)
    assert sorted(r.content for r in result.records) == sorted(f"note {i}" for i in range(7, 12))
    assert len(memory.files.scan().records) == 12


@pytest.mark.parametrize(
    "line",
    [
        {"content": "Bob left Acme in 2023", "status": "pending_review"},  # another status
        {"content": "Bob left Acme in 2023", "status": "archived", "category": "decision"},  # another category
        {"content": "Bob left Acme in 2023", "status": "archived", "namespace": "work"},  # another namespace
    ],
)
def test_the_same_text_with_another_status_category_or_namespace_is_a_new_memory(
    tmp_path: Path, line: dict[str, Any]
) -> None:
    from remnic.config import settings_for

    root = tmp_path / "ns"
    memory = Memory.init(root, settings=settings_for(root, namespaces={"enabled": True}))
    try:
        memory.import_records([{"content": "Bob left Acme in 2023", "status": "archived"}])
        result = memory.import_records([line])
        assert len(result.records) == 1 and not result.skipped
        assert len(memory.files.scan().records) == 2
    finally:
        memory.close()


def test_an_active_memory_still_absorbs_a_line_of_its_text_with_a_status(memory: Memory) -> None:
    kept = memory.store("Deploys happen on Tuesdays").record
    result = memory.import_records([{"content": "Deploys happen on Tuesdays", "status": "archived"}])
    assert not result.records and [s.id for s in result.skipped] == [kept.id]


# --- 5. superseded lines need a successor that exists ---


def test_a_superseded_line_without_a_successor_is_refused(memory: Memory, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", [{"content": "ok"}, {"content": "orphan", "status": "superseded"}])
    tree = snapshot_tree(memory.root)
    result = run_cli("import", str(path), *where(memory))
    assert result.code == 2
    assert ":2: status: superseded needs the memory that replaces this one: give supersededBy" in result.err
    assert "valid options: active, " in result.err and "nothing was imported" in result.err
    assert snapshot_tree(memory.root) == tree


def test_a_superseded_line_naming_a_memory_that_is_nowhere_is_refused(memory: Memory) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.import_records([{"content": "x11", "status": "superseded", "supersededBy": "mem_nonexistent"}])
    [problem] = caught.value.problems
    assert (problem.field, problem.line) == ("supersededBy", 1)
    assert "'mem_nonexistent'" in problem.message and "not in this repository" in problem.message
    assert memory.files.scan().records == []


def test_a_superseded_line_is_accepted_when_its_successor_is_here_or_in_the_import(memory: Memory) -> None:
    here = memory.store("The new rule").record
    newer = "mem_01a21cddb3235ed8cb99"
    named = "mem_01a21cddb3235ed8cb77"
    result = memory.import_records(
        [
            {"content": "old rule", "status": "superseded", "supersededBy": here.id},
            {"content": "older rule", "status": "superseded", "supersededBy": newer},
            {"id": newer, "content": "a later line brings it"},
            {"id": named, "content": "replaced by a later line", "status": "superseded"},
            {"content": "the replacement", "supersedes": named},
        ]
    )
    assert len(result.records) == 5
    replacement = next(r for r in result.records if r.content == "the replacement")
    linked = memory.get(named)
    assert linked.status == "superseded" and linked.frontmatter["supersededBy"] == replacement.id


def test_a_dry_run_reports_the_missing_successor_too(memory: Memory, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", [{"content": "orphan", "status": "superseded", "supersededBy": 5}])
    result = run_cli("import", str(path), *where(memory), "--dry-run")
    assert result.code == 2 and "supersededBy: must be one memory id" in result.err
