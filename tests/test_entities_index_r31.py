"""Writing entity pages never waits on embedding them; a note laid out like one is embedded whole."""

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


def test_refreshing_entities_leaves_the_pages_index_update_to_the_next_recall(memory: Memory) -> None:
    _seed(memory)
    root = memory.root
    listed = run_cli("entities", "list", "--json", "--memory-dir", str(root))
    assert listed.code == 0 and listed.err == "" and "rebuilt" not in listed.json()
    assert any(e["id"] == PAGE for e in listed.json()["entities"])  # as a build makes it, in memory
    with Memory.open(settings=settings_for(root)) as fresh:
        assert fresh.index_health()["state"] == "ok"  # the listing wrote nothing to index
    refreshed = run_cli("entities", "refresh", "--json", "--memory-dir", str(root))
    assert refreshed.code == 0 and refreshed.json()["commit"] and refreshed.err == ""
    with Memory.open(settings=settings_for(root)) as fresh:
        health = fresh.index_health()
        assert health["state"] == "behind", health  # the refresh embedded nothing
        assert f"entities/{PAGE}.md" not in (fresh.index.indexed_paths() or set())
        report = fresh.refresh_index()  # what the next recall does first
        assert report.action != "none" and f"entities/{PAGE}.md" in (fresh.index.indexed_paths() or set())
        assert fresh.index_health()["state"] == "ok"
        asked = list(fresh.recall("Priya Raman", category="entity"))
        assert asked and asked[0].path == f"entities/{PAGE}.md"
    shown = run_cli("entities", "show", "Priya", "--memory-dir", str(root))
    assert shown.code == 0 and "on call every second weekend" in shown.out


def test_a_note_that_is_not_an_entity_page_keeps_its_chunks() -> None:
    rules = T.TextRules()
    # A person's note in an entity page's layout: its timeline is what it is about, and is embedded.
    note = (
        "# Atlas launch plan\n**Type:** project plan owned by the growth team\n\n## Timeline\n\n"
        "- March: closed beta with twenty customers in Berlin.\n- September: the mobile app ships.\n"
    )
    assert any("mobile app ships" in t for t in T.chunk_plan(note, "Atlas launch plan", rules).texts)
