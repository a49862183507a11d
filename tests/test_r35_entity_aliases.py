"""Aliases a person adds to an entity page: kept on every rebuild, found by ``entities show``, and
names that lead to the page ("Priya now goes by Priya Shah": listing "Priya Raman" on her new page
folds the old page into it, keeping what a person wrote on either)."""

from __future__ import annotations

import json

import pytest
from conftest import git

from remnic.config import STATE_DIR
from remnic.errors import NotFoundError
from remnic.service.memory import Memory


def _edit(memory: Memory, rel: str, edit: object) -> None:
    """Edit a page as a person would, and commit it with plain git."""
    path = memory.root / rel
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    git(memory.root, "commit", "-qam", f"edit {rel}")
    memory.sync()


def _add_alias(text: str, alias: str) -> str:
    if "## Aliases\n\n" in text:
        return text.replace("## Aliases\n\n", f"## Aliases\n\n- {alias}\n", 1)
    return text + f"\n## Aliases\n\n- {alias}\n"


def _paths(memory: Memory) -> list[str]:
    return sorted(e["path"] for e in memory.entities(limit=200)[0])


def test_an_alias_a_person_adds_is_kept_and_leads_to_the_page(memory: Memory) -> None:
    memory.store("Alice Moreau approved the ledger budget.")
    memory.store("Alice prefers morning meetings.")
    memory.refresh_entities()
    page = "entities/person-alice-moreau.md"
    assert memory.entity("Alice Moreau")["aliases"] == ["Alice"]  # remnic's own alias (a first name)
    _edit(memory, page, lambda t: _add_alias(t, "Alice Smith"))
    _edit(memory, page, lambda t: t.replace("status: active\n", "status: active\naliases: [Ally]\n", 1))

    memory.refresh_entities(force=True)
    assert "- Alice Smith" in (memory.root / page).read_text(encoding="utf-8")
    assert memory.entity("Alice Smith")["path"] == page
    assert memory.entity("Ally")["path"] == page  # a frontmatter alias is a name of the page too

    # The alias is her name from now on: a verb-less mention, too, is about her; no second page.
    on_call = memory.store("Alice Smith is on call this weekend.").id
    memory.refresh_entities()
    assert on_call in memory.entity("Alice Smith")["memoryIds"]
    assert _paths(memory) == [page]

    # remnic's own alias still follows the memories: once "Alice" starts two names it is neither's.
    memory.store("Alice Chen approved the hiring plan.")
    memory.refresh_entities()
    aliases = memory.entity("person-alice-moreau")["aliases"]
    assert "Alice Smith" in aliases and "Alice" not in aliases
    assert memory.refresh_entities(force=True)["written"] == []  # settled


def test_listing_an_old_name_folds_its_page_into_the_new_one(memory: Memory) -> None:
    memory.store("Priya Raman approved the postgres upgrade.")
    memory.store("Priya Raman prefers coffee.")
    memory.store("Priya Shah approved the new budget.")
    memory.refresh_entities()
    with pytest.raises(Exception, match="ambiguous"):
        memory.entity("Priya")
    old, new = "entities/person-priya-raman.md", "entities/person-priya-shah.md"
    _edit(memory, old, lambda t: t.replace("## Timeline\n\n", "## Timeline\n\n- [2020-01-01] Joined the company.\n"))
    _edit(memory, old, lambda t: t + "\n## Notes\n\nPrefers calls before ten.\n")
    _edit(memory, new, lambda t: _add_alias(t, "Priya Raman"))

    built = memory.refresh_entities()
    assert old in built["removed"] and new in built["written"]
    assert git(memory.root, "show", "--name-only", "--format=", "HEAD").split() == sorted(
        [old, new, "entities/tool-postgres.md"]
    )  # one commit: the fold and the pages that link to her
    assert not (memory.root / old).exists()
    page = memory.entity("Priya Raman")
    assert page["path"] == new and page["name"] == "Priya Shah"
    assert page["aliases"] == ["Priya Raman"]
    assert {"title": "Notes", "body": "Prefers calls before ten."} in page["extraSections"]
    assert "Joined the company." in page["facts"]
    assert len(page["memoryIds"]) == 3
    assert memory.entity("Priya")["path"] == new  # one person now, so no longer ambiguous
    assert memory.entity("person-priya-raman")["path"] == new  # the old id still leads there

    later = memory.store("Priya Raman is on call this weekend.").id
    memory.refresh_entities()
    assert later in memory.entity("Priya Shah")["memoryIds"]
    assert _paths(memory) == ["entities/person-priya-shah.md", "entities/tool-postgres.md"]
    assert memory.refresh_entities(force=True)["written"] == []


def test_an_alias_added_to_a_page_an_older_build_wrote_is_kept(memory: Memory) -> None:
    memory.store("Tomás Ortega approved the release.")
    memory.store("Tomás prefers tea.")
    memory.refresh_entities()
    page = "entities/person-tomas-ortega.md"

    def as_older_build(text: str) -> str:
        # Builds before the builtAliases record: remnic's and a person's lines look alike.
        return _add_alias("".join(line for line in text.splitlines(True) if not line.startswith("builtAliases")), "Tom")

    _edit(memory, page, as_older_build)
    manifest = memory.root / STATE_DIR / "entities.json"
    manifest.write_text(json.dumps({"version": 2, "head": memory.head()}) + "\n", encoding="utf-8")

    memory.refresh_entities()  # the first build after the upgrade (reads write nothing)
    text = (memory.root / page).read_text(encoding="utf-8")
    assert "- Tom\n" in text and 'builtAliases: ["Tomás"]' in text
    assert memory.entity("Tom")["path"] == page
    with pytest.raises(NotFoundError):
        memory.entity("Tommy")
