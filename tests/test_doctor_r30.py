"""Doctor, sync and get on a memory file that lost its opening '---'; doctor's foreign time values;
the next step for an index that is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.config import StoreSettings
from remnic.memfile.model import lost_open_fence
from remnic.memfile.validate import check_text
from remnic.service.memory import Memory

LOST = "the opening '---' line is missing: add '---' as line 1"


def _checks(root: Path) -> dict[str, dict]:
    result = run_cli("doctor", "--json", "--memory-dir", str(root))
    return {c["name"]: c for c in result.json()["checks"]}


def _fenceless(memory: Memory) -> tuple[Path, str, str]:
    """A stored memory whose first line ('---') was deleted and committed as a hand edit would be."""
    stored = memory.store("Ana prefers tabs over spaces.", category="preference").record
    path = memory.root / stored.path
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    path.write_text(text.removeprefix("---\n"), encoding="utf-8")
    return path, stored.id, text


# --- 1. a memory file whose opening fence was deleted ---


@pytest.mark.parametrize(
    "text",
    [
        "id: mem_1\ncategory: fact\ncreated: 2026-04-02T10:00:00Z\ntags:\n  - a\n---\n\nBody.\n",
        "\ufeffcreated: 2026-04-02T10:00:00Z\nupdated: 2026-04-02T10:00:00Z\nauthor: me\n---\nBody.\n",
        "title: x\nstatus: active\ncategory: fact\n---\r\nBody.\r\n",
        "category: fact\nstatus: archived\ntags:\n- a\n- b\n---\nBody.\n",
    ],
)
def test_a_file_that_starts_with_remnic_keys_and_a_lone_fence_lost_its_opening_line(text: str) -> None:
    assert lost_open_fence(text)
    checked = check_text(text, "facts/a.md", StoreSettings())
    assert not checked.ok and checked.record is None
    [problem] = checked.problems
    assert (problem.path, problem.line, problem.field, problem.message) == ("facts/a.md", 1, "frontmatter", LOST)


@pytest.mark.parametrize(
    "text",
    [
        "Title: x\n\n---\n\nA note with a horizontal rule.\n",
        "Title: x\n---\nA setext heading above.\n",
        "title: x\nauthor: me\n---\nOnly foreign keys.\n",
        "id: mem_1\n\nA paragraph.\n\n---\nthen a rule.\n",  # a blank line: not one block of keys
        "Some text: with a colon\nid: x\n---\n",  # the first line is prose
        "---\nid: mem_1\n---\nA real frontmatter.\n",
        "id: mem_1\ncategory: fact\n",  # no closing fence
        # One piece of evidence, or values no memory of remnic's has (a date without a time): a note's keys.
        "\ufeffcreated: 2026-04-02\nauthor: me\n---\nBody.\n",
        "title: x\nstatus: active\n---\r\nBody.\r\n",
        "category: fact\ntags:\n- a\n- b\n---\nBody.\n",
    ],
)
def test_a_note_that_merely_opens_with_a_key_line_is_not_refused(text: str) -> None:
    assert not lost_open_fence(text)
    assert check_text(text, "facts/a.md", StoreSettings()).ok


def test_doctor_reports_the_lost_fence_and_sync_leaves_the_file_untouched(memory: Memory) -> None:
    path, old_id, _ = _fenceless(memory)
    rel = path.relative_to(memory.root).as_posix()
    damaged = path.read_bytes()

    check = _checks(memory.root)["memory-files"]
    assert check["status"] == "fail", check
    assert f"{rel}:1: frontmatter: {LOST}" in check["problems"], check

    for args in (("sync", "run", "--dry-run"), ("sync", "run")):
        result = run_cli(*args, "--memory-dir", str(memory.root))
        assert result.code == 1, (args, result)
        assert f"{rel}:1: frontmatter: {LOST}" in result.out + result.err
        assert "added frontmatter" not in result.out + result.err
        assert path.read_bytes() == damaged  # no second frontmatter block on top
    assert rel in git(memory.root, "status", "--porcelain")  # nothing committed

    got = run_cli("get", old_id, "--memory-dir", str(memory.root))
    assert got.code == 1 and old_id in got.err
    query = run_cli("query", "tabs over spaces", "--memory-dir", str(memory.root))
    assert f"malformed file(s) as on disk ({rel})" in query.out + query.err


def test_restoring_the_fence_brings_the_memory_back_with_its_id_and_times(memory: Memory) -> None:
    path, old_id, original = _fenceless(memory)
    path.write_text("---\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert _checks(memory.root)["memory-files"]["status"] == "ok"
    got = run_cli("get", old_id, "--json", "--memory-dir", str(memory.root))
    assert got.code == 0 and got.json()["id"] == old_id
    assert path.read_text(encoding="utf-8") == original


# --- 2. time values that cannot be read as a time ---


def test_doctor_lists_created_and_updated_that_cannot_be_read_as_a_time(memory: Memory) -> None:
    stored = memory.store("Ana prefers tabs over spaces.", category="preference").record
    path = memory.root / stored.path
    text = path.read_text(encoding="utf-8")
    lines = [
        "created: last tuesday"
        if line.startswith("created:")
        else "updated: soon-ish"
        if line.startswith("updated:")
        else line
        for line in text.splitlines()
    ]
    path.write_text("\n".join(lines) + "\nvalidAt: 2026-04-02\n", encoding="utf-8")
    git(memory.root, "commit", "-qam", "edit")

    check = _checks(memory.root)["foreign-values"]
    problems = "\n".join(check["problems"])
    assert f"{stored.path}: created 'last tuesday' cannot be read as a time" in problems, check
    assert f"{stored.path}: updated 'soon-ish' cannot be read as a time" in problems, check
    assert "validAt" not in problems  # a readable time is not foreign
    assert "2 value(s) outside remnic's vocabulary" in check["detail"]
    assert check["status"] == "ok"  # kept as written, never an error


# --- 7. a missing index names its next step ---


def test_a_missing_index_names_the_next_step_in_doctor_and_status(memory: Memory) -> None:
    memory.store("Ana prefers tabs over spaces.", category="preference")
    memory.close()
    shutil.rmtree(memory.root / ".remnic")

    index = _checks(memory.root)["index"]
    assert index["status"] == "warn"
    assert "the next recall builds it, or run `remnic reindex` now" in index["detail"], index
    status = run_cli("status", "--json", "--memory-dir", str(memory.root)).json()["index"]
    assert status["state"] == "missing" and "`remnic reindex`" in status["detail"], status
    text = run_cli("status", "--memory-dir", str(memory.root)).out
    assert "index: missing (no index yet: the next recall builds it, or run `remnic reindex` now)" in text
