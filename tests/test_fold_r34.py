"""A memory's file name and its entity's id fold accented names the same way (one `fold`)."""

from __future__ import annotations

from remnic.observe.entities import slugify as entity_slug
from remnic.service.memory import Memory


def test_file_name_and_entity_id_share_the_folding(memory: Memory) -> None:
    written = memory.store("Ødegaard leads the Łódź office").record
    assert str(written.path).endswith("odegaard-leads-the-lodz-office.md"), written.path
    assert entity_slug("Ødegaard") == "odegaard"
    assert entity_slug("Ødegaard") in str(written.path)
