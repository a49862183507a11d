"""Blank tags are refused, the index note names files it could not search, and query dates read as written.

- ``tags=[" "]`` / ``["#"]`` / ``--tag ''`` would filter nothing, so the recall would run unfiltered:
  refused (ValidationError naming ``tags``; the CLI names ``--tag``; HTTP answers 400).
- A malformed hand-edited file is not searched: the index note says which, and ``index.problems``
  carries its problem (the first recall, and the next, when nothing new is indexed).
- ``Aug '23`` is August 2023; a month/day without a year is shown as what it is (no date).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.errors import ValidationError
from remnic.recall import dates
from remnic.service.memory import Memory


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("tags", [[""], [" "], ["#"], ["ops", " # "]])
def test_blank_tags_are_refused(memory: Memory, tags: list[str]) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.recall("deploy", tags=tags)
    assert caught.value.problems[0].field == "tags"


def test_cli_names_the_tag_flag(memory: Memory) -> None:
    out = run_cli("query", "deploy", "--tag", "", "--memory-dir", str(memory.root))
    assert out.code == 2 and "--tag" in out.err and "empty" in out.err


def test_a_malformed_edit_is_named_as_not_searched(memory: Memory) -> None:
    root = memory.root
    for name in ("a", "b"):
        write(
            root, f"facts/{name}.md", f"---\nid: mem_{name}\ncategory: fact\n---\nThe deploy runs on friday {name}.\n"
        )
    write(root, "facts/broken.md", "---\nid: mem_broken\ntags: [unclosed\n---\nThe deploy is broken.\n")
    first = memory.recall("deploy", xray=True)
    assert first.index["worktree"]["dirty"] == 3
    assert "could not search 1 malformed file(s) as on disk (facts/broken.md)" in first.index["note"]
    second = memory.recall("deploy friday", xray=True)
    note = second.index["note"]
    assert note.startswith("searched 2 of 3 uncommitted edit(s) as they are on disk")
    assert "facts/broken.md" in note
    assert any(p.startswith("facts/broken.md") and "YAML" in p for p in second.index["problems"])
    assert second.xray is not None and second.xray.index_note == note
    assert "mem_broken" not in {h.id for h in second.hits}


def test_an_apostrophe_year_after_a_month_is_read() -> None:
    s = settings_for(Path("/nonexistent")).recall
    now = 1776706200.0  # 2026-04-20
    plan = dates.plan("what happened in Aug '23", now, s)
    assert plan is not None and plan.dates.window == (date(2023, 8, 1), date(2023, 8, 31))
    assert dates.full_years("Sept ’99 and May '24", date(2026, 4, 20)) == "Sept 1999 and May 2024"
    assert dates.full_years("rock 'n' roll in '23", date(2026, 4, 20)) == "rock 'n' roll in '23"


def test_a_day_without_a_year_is_not_shown_as_a_date(memory: Memory) -> None:
    write(memory.root, "facts/a.md", "---\nid: mem_a\ncategory: fact\n---\nWe met on 16 August at the lake.\n")
    memory.sync()
    result = memory.recall("what did we do on 16 August", clock=1776706200000)
    stage = next(s for s in result.stages if s.name == dates.STAGE)
    assert "'16 August' (no year: searched as words)" in stage.reason
    assert "2026-08-16" not in stage.reason and "→" not in stage.reason
