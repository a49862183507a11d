"""A memory's file name and its entity's id fold accented names the same way (one `fold`)."""

from __future__ import annotations

from remnic.observe.entities import slugify as entity_slug
from remnic.service.memory import Memory


def test_file_name_and_entity_id_share_the_folding(memory: Memory) -> None:
    written = memory.store("Ødegaard leads the Łódź office").record
    assert str(written.path).endswith("odegaard-leads-the-lodz-office.md"), written.path
    assert entity_slug("Ødegaard") == "odegaard"
    assert entity_slug("Ødegaard") in str(written.path)


def test_an_entity_is_found_by_its_name_typed_without_accents(memory: Memory) -> None:
    memory.store("Tomás Ortega approved the budget for the Lisbon office.")
    memory.store("Tomás Ortega prefers green tea.")
    memory.refresh_entities()
    for typed in ("Tomás Ortega", "tomas ortega", "Tomas", "TOMÁS"):
        assert memory.entity(typed)["name"] == "Tomás Ortega", typed
