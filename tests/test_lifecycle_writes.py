"""Lifecycle writes: a hand move committed whole, supersession guarded, status changes that say one
state, import links resolved across the batch, reserved keys refused, records the caller owns."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.errors import ValidationError
from remnic.memfile.paths import check_relpath
from remnic.service.memory import Memory


def _head_files(root: Path) -> list[str]:
    return git(root, "ls-tree", "-r", "--name-only", "HEAD").split()


def _clean(root: Path) -> bool:
    return git(root, "status", "--porcelain").strip() == ""


# --- 1: a hand move, then update or forget ---


@pytest.mark.parametrize("how", ["forget", "update"])
def test_a_write_after_a_hand_move_commits_the_whole_move(memory: Memory, how: str) -> None:
    memory.settle_index()
    rec = memory.store("Deploys happen on Tuesdays after standup", category="fact").record
    root = memory.root
    (root / "rules").mkdir(exist_ok=True)
    shutil.move(root / rec.path, root / "rules" / Path(rec.path).name)
    new_path = f"rules/{Path(rec.path).name}"
    if how == "forget":
        result = memory.forget(rec.id, "moved and dropped")
    else:
        result = memory.update(rec.id, {"tags": ["ops"]})
    assert result.record.path == new_path
    files = _head_files(root)
    assert rec.path not in files and new_path in files  # one file, one id, in HEAD
    assert _clean(root)
    text = git(root, "show", f"HEAD:{new_path}")
    assert "category: rule" in text  # normalised the way sync does it
    assert "moved from" in git(root, "log", "-1", "--format=%s")
    # history follows the move: the store commit is still v1
    ops = [v.operation for v in memory.versions(rec.id)]
    assert ops[0] == "store" and len(ops) == 2


# --- 2: supersedes a forgotten or quarantined memory ---


@pytest.mark.parametrize("status", ["forgotten", "quarantined"])
def test_store_refuses_to_supersede_a_forgotten_or_quarantined_memory(memory: Memory, status: str) -> None:
    old = memory.store("The staging port is 5432").record
    if status == "forgotten":
        memory.forget(old.id)
    else:
        memory.update(old.id, {"status": "quarantined"})
    with pytest.raises(ValidationError) as info:
        memory.store("The staging port is 5433", extra={"supersedes": old.id})
    assert info.value.exit_code == 2
    assert str(info.value).startswith("supersedes:") and status in str(info.value)  # the API's field name
    assert memory.get(old.id).status == status
    head = git(memory.root, "rev-parse", "HEAD")
    result = run_cli("store", "The staging port is 5434", "--supersedes", old.id, "--memory-dir", str(memory.root))
    assert result.code == 2 and status in result.err and "--supersedes" in result.err  # the CLI's flag
    assert git(memory.root, "rev-parse", "HEAD") == head


# --- 3: update --status ---


def test_making_a_superseded_memory_active_drops_the_link_on_both_sides(memory: Memory) -> None:
    old = memory.store("The staging port is 5432").record
    new = memory.store("The staging port is 5433", extra={"supersedes": old.id}).record
    assert memory.get(old.id).frontmatter["supersededBy"] == new.id
    result = memory.update(old.id, {"status": "active"})
    fm = memory.get(old.id).frontmatter
    assert result.record.status == "active"
    assert not {"supersededBy", "supersededAt", "invalidAt"} & set(fm)
    assert "supersedes" not in memory.get(new.id).frontmatter  # no dangling claim
    assert "link dropped" in git(memory.root, "log", "-1", "--format=%s")


def test_status_changes_bring_and_end_their_keys(memory: Memory) -> None:
    rec = memory.store("Ana prefers tabs").record
    memory.update(rec.id, {"status": "forgotten"})
    assert "forgottenAt" in memory.get(rec.id).frontmatter  # the same as forget
    memory.forget(rec.id, "wrong")  # already forgotten: nothing changes
    memory.update(rec.id, {"status": "active"})
    fm = memory.get(rec.id).frontmatter
    assert "forgottenAt" not in fm and "forgottenReason" not in fm
    memory.update(rec.id, {"status": "archived"})
    assert "archivedAt" in memory.get(rec.id).frontmatter
    memory.update(rec.id, {"status": "active"})
    back = memory.get(rec.id)
    assert back.status == "active" and "archivedAt" not in back.frontmatter
    with pytest.raises(ValidationError, match="--supersedes"):
        memory.update(rec.id, {"status": "superseded"})


# --- 4 and 5: import ---


def _write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_import_links_supersedes_to_a_later_line_and_dry_run_agrees(memory: Memory, tmp_path: Path) -> None:
    lines = [
        {"content": "The port is 5433", "id": "mem_new", "supersedes": "mem_old"},
        {"content": "The port is 5432", "id": "mem_old"},
    ]
    assert memory.check_import(lines) == []
    result = memory.import_records(lines)
    assert len(result.records) == 2
    assert memory.get("mem_old").frontmatter["supersededBy"] == "mem_new"
    bad = [{"content": "Another value", "supersedes": "mem_nowhere"}]
    problems = memory.check_import(bad, line_numbers=[7])
    assert problems and problems[0].line == 7 and problems[0].field == "supersedes"
    dry = run_cli("import", str(_write_lines(tmp_path / "b.jsonl", bad)), "--dry-run", "--memory-dir", str(memory.root))
    assert dry.code == 2 and "b.jsonl:1: supersedes" in dry.err


def test_an_export_without_file_reimported_skips_what_is_already_here(memory: Memory, tmp_path: Path) -> None:
    memory.store("We deploy on Tuesdays", category="decision")
    memory.store("Ana prefers tabs", category="preference")
    lines = [{k: v for k, v in line.items() if k != "file"} for line in memory.export(fmt="jsonl").items]
    result = memory.import_records(lines)
    assert result.records == () and len(result.duplicates) == 2
    assert set(result.duplicates) == {line["id"] for line in lines}  # the memories matched, not fresh ids
    twice = memory.import_records([{"content": "Bo likes rye"}, {"content": "Bo likes rye"}])
    assert twice.duplicates == (twice.record.id,)  # a repeat within the batch names what its first line became
    edited = dict(lines[0], content="We deploy on Wednesdays")
    problems = memory.check_import([edited])
    assert problems and problems[0].field == "id" and "leave `id` out" in problems[0].message
    fresh = {k: v for k, v in edited.items() if k != "id"}
    assert len(memory.import_records([fresh]).records) == 1


# --- 6: paths as typed ---


def test_get_and_versions_accept_dot_slash_and_absolute_paths_inside_the_repo(memory: Memory) -> None:
    rec = memory.store("Paths as typed").record
    root = str(memory.root)
    assert check_relpath(f"./{rec.path}") == rec.path
    assert check_relpath(f"{root}/{rec.path}", root=root) == rec.path
    with pytest.raises(ValidationError, match="is not a path inside the memory repository"):
        check_relpath("/etc/facts/x.md", root=root)
    assert run_cli("get", f"./{rec.path}", "--memory-dir", root).code == 0
    assert memory.get(f"{root}/{rec.path}").id == rec.id
    assert memory.forget(f"{root}/{rec.path}").changed and memory.get(rec.id).status == "forgotten"
    for target in (f"./{rec.path}", f"{root}/{rec.path}"):
        listed = run_cli("versions", "list", target, "--memory-dir", root, "--json")
        assert listed.code == 0, listed.err
        assert listed.json()["path"] == rec.path
    outside = run_cli("versions", "list", "/etc/facts/x.md", "--memory-dir", root)
    assert outside.code == 2 and "is not a path inside the memory repository" in outside.err


# --- 7 and 8: the API ---


def test_the_callers_record_is_not_the_indexers(memory: Memory) -> None:
    with memory.indexer.hold():
        result = memory.store("Tags stay as saved", tags=["a"])
        result.record.frontmatter["tags"].append("mutated")
        queued = [r for r in memory.indexer.pending_records() if r.id == result.id]
    assert queued and queued[0].frontmatter["tags"] == ["a"]


REFUSED: list[tuple[Any, str]] = [
    (lambda m, other: m.store("x one", extra={"id": other}), "extra.id"),
    (lambda m, other: m.store("x two", category="fact", extra={"category": "rule"}), "extra.category"),
    (lambda m, other: m.store("x three", extra={"k": object()}), "extra.k"),
    (lambda m, other: m.store("x four", extra={"k": {1, 2}}), "extra.k"),
    (lambda m, other: m.store("x five", extra={"k": datetime.date(2024, 1, 1)}), "extra.k"),
    (lambda m, other: m.store("x six", source=""), "source"),
    (lambda m, other: m.store("x seven", source="  "), "source"),
    (lambda m, other: m.store("x eight", source="s" * 5000), "source"),
    (lambda m, other: m.update(other, {"category": None}), "category"),
    (lambda m, other: m.update(other, {"content": "new"}), "content"),
    (lambda m, other: m.update(other, {"importance": 0.1}), "importance"),
    (lambda m, other: m.update(other, {"k": b"bytes"}), "k"),
]


def test_reserved_keys_and_values_no_file_may_hold_are_refused(memory: Memory) -> None:
    other = memory.store("An existing memory").id
    head = git(memory.root, "rev-parse", "HEAD")
    for i, (call, field) in enumerate(REFUSED):
        with pytest.raises(ValidationError) as info:
            call(memory, other)
        assert info.value.problems[0].field == field, i
    assert git(memory.root, "rev-parse", "HEAD") == head
    assert len(memory.list()) == 1


# --- 9: revert ---


def test_revert_sets_updated_to_now_and_keeps_created(memory: Memory) -> None:
    rec = memory.store("Version one text").record
    memory.update(rec.id, {}, content="Version two text")
    memory.revert(rec.id, "v1")
    now = memory.get(rec.id)
    assert now.content == "Version one text"
    assert now.frontmatter["created"] == rec.frontmatter["created"]
    assert now.frontmatter["updated"] != rec.frontmatter["updated"]
    assert subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=memory.root).returncode == 0
