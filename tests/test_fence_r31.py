"""A memory file that lost its opening '---' is malformed even when its frontmatter block holds a
comment, a blank line or a quoted key; a plain note with a rule is still a plain note."""

from __future__ import annotations

import pytest
from conftest import git, run_cli

from remnic.config import StoreSettings
from remnic.memfile.model import lost_open_fence
from remnic.memfile.validate import check_text
from remnic.service.memory import Memory

LOST = "the opening '---' line is missing: add '---' as line 1"
BLOCK = "id: mem_1\ncategory: fact\ncreated: 2026-04-02T10:00:00Z\nstatus: archived\n---\n\nBody.\n"


OWN_ID = "mem_0190a1b2c3d4e5f60718"
MEMORY = (
    f"id: {OWN_ID}\ncategory: fact\ncreated: 2026-11-27T12:22:50.406Z\nupdated: 2026-11-27T12:22:50.406Z\n---\nBody.\n"
)


@pytest.mark.parametrize(
    "text",
    [
        BLOCK.replace("category: fact\n", "category: fact\n# note to self\n"),
        BLOCK.replace("status:", "# edited by hand\nstatus:"),
        BLOCK.replace("category: fact\n", "category: fact\n\n"),
        BLOCK.replace("status: archived", '"status": archived'),
        BLOCK.replace("category: fact", "'category': fact"),
        f'"id": {OWN_ID}\n"status": archived\n---\nBody.\n',  # quoted keys; remnic's id shape is enough
        BLOCK.replace("\n", "\r\n").replace("category: fact\r\n", "category: fact\r\n# kept\r\n\r\n"),
        "\n" + MEMORY,  # the fence line blanked, not deleted
        "   \n" + MEMORY,
        "# checked by Ann\n" + MEMORY,  # a comment that followed the fence
        "\n# checked by Ann\n\n" + MEMORY,
        "id: fact-1735000000000-zz11\nsource: extraction\n---\nThe original's id.\n",
        "id: mem_p0123456789abcdef012\n---\nThe id sync gives an adopted note.\n",
        "category: fact\nstatus: archived  # by hand\n---\nNo id, two own pairs.\n",
        'created: "2026-01-02T10:00:00Z"\nupdated: 2026-01-02T10:00:00+01:00\n---\nTwo remnic timestamps.\n',
    ],
)
def test_a_lost_fence_with_comments_blank_lines_or_quoted_keys_is_malformed(text: str) -> None:
    assert lost_open_fence(text)
    checked = check_text(text, "facts/a.md", StoreSettings())
    assert not checked.ok and checked.record is None
    [problem] = checked.problems
    assert (problem.path, problem.line, problem.field, problem.message) == ("facts/a.md", 1, "frontmatter", LOST)


@pytest.mark.parametrize(
    "text",
    [
        "status: draft\n\n# Agenda\n\n---\nA note with a heading above its rule.\n",  # one own key and a heading
        "date: 2026-04-02\nstatus: draft\n\n# Agenda\n\nWe talked.\n---\n",  # prose before the rule
        "# Meeting\nid: x\ncategory: fact\n---\n",  # an id of no remnic shape and one own pair
        "\nid: x\ncategory: fact\n---\n",
        "title: x\n# Heading\nauthor: me\n---\nOnly foreign keys.\n",
        '"Title": x\n\n---\nA quoted foreign key.\n',
        # the verification's notes: values no remnic key holds
        "status: draft\ncreated: 2024-05-01\n\n# Project Falcon kickoff\n\n---\n\nWe met the Falcon team.\n",
        "status: blocked on review\n---\nWeekly sync notes for the data team.\n",
        "id: 42 is the answer\n---\nA quiz.\n",
        "created: 2024-05-01\nupdated: 2024-05-03\n\n# Notes\n---\nDates without a time, as notes write them.\n",
        "status: active\n---\nOne own pair is not enough.\n",
        "category: decision\n# Why\n---\nOne own pair and a heading.\n",
        "# Heading\n\n- id: mem_0190a1b2c3d4e5f60718\n---\nA list first.\n",
        "created: yesterday\nstatus: draft\n---\nValues remnic would not write.\n",
    ],
)
def test_a_plain_note_with_a_rule_is_still_a_plain_note(text: str) -> None:
    assert not lost_open_fence(text)
    assert check_text(text, "facts/a.md", StoreSettings()).ok


def test_sync_adopts_notes_that_open_with_status_or_created(memory: Memory) -> None:
    falcon = "status: draft\ncreated: 2024-05-01\n\n# Project Falcon kickoff\n\n---\n\nWe met the Falcon team.\n"
    (memory.root / "facts" / "falcon.md").write_text(falcon, encoding="utf-8")
    (memory.root / "facts" / "weekly.md").write_text("status: blocked on review\n---\nWeekly notes.\n", "utf-8")
    result = run_cli("sync", "run", "--json", "--memory-dir", str(memory.root))
    assert result.code == 0 and result.json()["malformed"] == [], result
    assert {r.path for r in memory.list()} >= {"facts/falcon.md", "facts/weekly.md"}


@pytest.mark.parametrize(
    ("extra", "first", "fence"),
    [
        ("# note to self", False, ""),
        ("", False, ""),
        ('"confidence": 0.9', False, ""),
        ("# checked by Ann", True, ""),  # the comment that followed the fence now opens the file
        ("", False, "\n"),  # the fence line blanked in an editor
        ("# checked by Ann", True, "\n"),
    ],
)
def test_sync_and_doctor_leave_a_commented_fenceless_file_alone(
    memory: Memory, extra: str, first: bool, fence: str
) -> None:
    stored = memory.store("Hotel wifi password rotates monthly", category="fact").record
    memory.update(stored.id, {"status": "archived"})
    path = memory.root / stored.path
    rel = stored.path
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[0] == "---\n"
    at = 0 if first else next(i for i, line in enumerate(lines) if line.startswith("source:"))
    lines.insert(at + 1, extra + "\n")
    path.write_text(fence + "".join(lines[1:]), encoding="utf-8")
    damaged = path.read_bytes()
    head = git(memory.root, "rev-parse", "HEAD")

    dry = run_cli("sync", "run", "--dry-run", "--json", "--memory-dir", str(memory.root))
    assert dry.json()["malformed"] == [rel] and dry.json()["changes"] == [], dry
    result = run_cli("sync", "run", "--memory-dir", str(memory.root))
    assert result.code == 1, result
    assert f"{rel}:1: frontmatter: {LOST}" in result.out + result.err
    assert "added frontmatter" not in result.out + result.err
    assert path.read_bytes() == damaged  # no second frontmatter block on top
    assert git(memory.root, "rev-parse", "HEAD") == head
    assert "status: archived" in git(memory.root, "show", f"HEAD:{rel}")

    doctor = run_cli("doctor", "--json", "--memory-dir", str(memory.root))
    check = {c["name"]: c for c in doctor.json()["checks"]}["memory-files"]
    assert check["status"] == "fail" and f"{rel}:1: frontmatter: {LOST}" in check["problems"], check
    assert doctor.code != 0
