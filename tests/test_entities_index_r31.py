"""Reading entity pages never waits on embedding them, and a page is embedded by its own words only."""

from __future__ import annotations

from conftest import run_cli

from remnic.config import settings_for
from remnic.index import text as T
from remnic.service.memory import Memory

PAGE = "person-priya-raman"


def _seed(memory: Memory) -> None:
    memory.store("Priya Raman approved the Postgres 16 upgrade for the billing database.", category="decision")
    memory.store("Priya Raman is on call every second weekend.")
    memory.store("Ana prefers tabs over spaces.", category="preference")
    memory.settle_index()


def test_listing_entities_leaves_the_pages_index_update_to_the_next_recall(memory: Memory) -> None:
    _seed(memory)
    root = memory.root
    listed = run_cli("entities", "list", "--json", "--memory-dir", str(root))
    assert listed.code == 0 and listed.json()["rebuilt"]["commit"] and listed.err == ""
    assert any(e["id"] == PAGE for e in listed.json()["entities"])  # read from the files just written
    with Memory.open(settings=settings_for(root)) as fresh:
        health = fresh.index_health()
        assert health["state"] == "behind", health  # the listing embedded nothing
        assert f"entities/{PAGE}.md" not in (fresh.index.indexed_paths() or set())
        report = fresh.refresh_index()  # what the next recall does first
        assert report.action != "none" and f"entities/{PAGE}.md" in (fresh.index.indexed_paths() or set())
        assert fresh.index_health()["state"] == "ok"
        asked = list(fresh.recall("Priya Raman", category="entity"))
        assert asked and asked[0].path == f"entities/{PAGE}.md"
    shown = run_cli("entities", "show", "Priya", "--memory-dir", str(root))
    assert shown.code == 0 and "on call every second weekend" in shown.out


def _page(lines: int) -> str:
    timeline = "\n".join(
        f"- [2026-05-{1 + i % 28:02d}T08:00:00.000Z] [source=entity_extraction] Priya reviewed change {i} of the "
        f"billing service. It shipped. [[mem_01a2{i:016x}]]"
        for i in range(lines)
    )
    return (
        "# Priya Raman\n\n**Type:** person\n**Updated:** 2026-05-10T08:00:00.000Z\n\n## Synthesis\n\n"
        "Priya Raman is a person named in 60 memories. She leads the billing team.\n\n## Timeline\n\n"
        f"{timeline}\n\n## Connected to\n\n- [[project-atlas]] — named together in 3 memories\n\n"
        "## Aliases\n\n- P. Raman\n\n## Notes from a person\n\nShe prefers written proposals."
    )


def test_an_entity_page_is_embedded_by_its_own_words_not_its_timeline_quotes() -> None:
    rules = T.TextRules()
    page = _page(60)
    plan = T.chunk_plan(page, "Priya Raman", rules)
    assert T.is_entity_page(page) and 1 <= len(plan.texts) <= 2  # was 16 (one per group of timeline lines)
    embedded = " ".join(plan.texts)
    assert "She leads the billing team" in embedded and "P. Raman" in embedded and "written proposals" in embedded
    assert "reviewed change" not in embedded and "project-atlas" not in embedded
    assert all(len(t) <= rules.passage_chars + 40 for t in plan.texts)
    assert all(0 <= p < len(plan.passages) for p in plan.passage_of)


def test_a_note_that_is_not_an_entity_page_keeps_its_chunks() -> None:
    rules = T.TextRules()
    note = "# Release log\n\nWe ship on Tuesdays.\n\n## Timeline\n\n- Monday: freeze.\n- Tuesday: ship it.\n"
    assert not T.is_entity_page(note)
    assert any("Tuesday: ship it" in t for t in T.chunk_plan(note, "Release log", rules).texts)
