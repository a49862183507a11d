"""Entity pages of accented names: ids remnic's own validation accepts, older builds' accented
files renamed on the next build, a page with a rejected id never served as a memory, one page
for names equal without accents, and a tool's name inside a longer name kept off its page."""

from __future__ import annotations

import json

import pytest
from conftest import git

from remnic.config import STATE_DIR
from remnic.memfile.model import ID_RE
from remnic.observe.entities import entity_id
from remnic.recall.graph import is_entity_page
from remnic.service.memory import Memory


def _write(memory: Memory, rel: str, text: str) -> None:
    path = memory.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _sync(memory: Memory) -> None:
    memory.sync()


def _seed_jose(memory: Memory) -> dict[str, str]:
    return {
        "budget": memory.store("José Núñez approved the budget for the Lisbon office.").id,
        "tea": memory.store("José Núñez prefers green tea.").id,
        "release": memory.store("Priya Raman approved the release plan.").id,
        "coffee": memory.store("Priya Raman prefers coffee.").id,
    }


def _as_an_older_build_wrote_it(memory: Memory) -> str:
    """The José Núñez page as builds before r33 named it (accents kept in its id and file name),
    with a section a person added; committed by plain git."""
    new = memory.root / "entities" / "person-jose-nunez.md"
    old = memory.root / "entities" / "person-josé-núñez.md"
    built = new if new.exists() else old  # (the older build itself wrote ``old``)
    text = built.read_text(encoding="utf-8").replace("id: person-jose-nunez", "id: person-josé-núñez")
    built.unlink()
    old.write_text(text + "\n## Notes\n\nPrefers calls before ten.\n", encoding="utf-8")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-q", "-m", "a page as an older build named it")
    _sync(memory)
    return "entities/person-josé-núñez.md"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("José Núñez", "person-jose-nunez"),
        ("Zoë Ødegaard", "person-zoe-odegaard"),
        ("Łukasz Straße", "person-lukasz-strasse"),
        ("Иван Петров", "person-xn--80adrw-xn--b1af1acgl"),
        ("Priya Raman", "person-priya-raman"),
        ("person-priya-raman", "person-priya-raman"),
    ],
)
def test_entity_ids_are_ids_remnic_accepts(name: str, expected: str) -> None:
    eid = entity_id("person", name)
    assert eid == expected and ID_RE.match(eid) and ID_RE.match(f"team-a:{eid}")


def test_a_very_long_name_still_gives_a_valid_id() -> None:
    eid = entity_id("company", "名" * 80)
    assert ID_RE.match(eid) and len(eid) <= 100


def test_an_accented_name_gets_a_page_recall_leaves_to_the_graph_tier(memory: Memory) -> None:
    ids = _seed_jose(memory)
    built = memory.refresh_entities()
    assert "entities/person-jose-nunez.md" in built["written"]
    page = memory.entity("José Núñez")
    assert page["id"] == "person-jose-nunez" and page["name"] == "José Núñez"
    assert memory.get("person-jose-nunez").path == "entities/person-jose-nunez.md"
    for query in ("who approved things?", "x", "green tea"):
        assert not any(h.path.startswith("entities/") for h in memory.recall(query)), query
    served = {h.id: h for h in memory.recall("who approved the budget for the Lisbon office", xray=True)}
    assert served[ids["tea"]].graph_path == [ids["budget"], "person-jose-nunez", ids["tea"]]  # as Priya's


def test_a_page_whose_id_remnic_rejects_is_never_served_as_a_memory(memory: Memory) -> None:
    _seed_jose(memory)
    memory.refresh_entities()
    old = _as_an_older_build_wrote_it(memory)
    record = memory.find(old)
    assert record.id == "person-josé-núñez"  # the file name, as the original reads it
    assert is_entity_page(old, record.id)
    for query in ("who approved things?", "x", "green tea"):
        assert not any(h.path.startswith("entities/") for h in memory.recall(query)), query
    # A memory stored in the entities folder keeps its own id: a memory, not a page.
    stored = memory.store("person-notes: José likes the window seat.", category="entity")
    assert not is_entity_page(memory.find(stored.id).path, stored.id)


def test_an_older_builds_accented_page_is_renamed_in_one_commit_and_links_to_it_still_lead_there(
    memory: Memory,
) -> None:
    ids = _seed_jose(memory)
    memory.refresh_entities()
    created = memory.get("person-jose-nunez").frontmatter["created"]
    old = _as_an_older_build_wrote_it(memory)
    linking = memory.store("Expense rules for the Lisbon office: ask [[person-josé-núñez]].").id
    head = git(memory.root, "rev-parse", "HEAD").strip()

    rebuilt = memory.refresh_entities()
    assert rebuilt["written"] == ["entities/person-jose-nunez.md"] and rebuilt["removed"] == [old]
    assert git(memory.root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    changed = git(
        memory.root, "-c", "core.quotePath=false", "show", "--no-renames", "--name-status", "--format=", "HEAD"
    )
    assert sorted(changed.splitlines()) == ["A\tentities/person-jose-nunez.md", f"D\t{old}"]
    assert not (memory.root / old).exists()
    record = memory.get("person-jose-nunez")
    assert record.frontmatter["created"] == created  # the same page, moved
    assert "person-josé-núñez" in record.frontmatter["aliases"]
    page = memory.entity("José Núñez")
    assert page["extraSections"] == [{"title": "Notes", "body": "Prefers calls before ten."}]  # nothing lost
    assert memory.entity("person-josé-núñez")["id"] == "person-jose-nunez"
    assert set(page["memoryIds"]) >= {ids["budget"], ids["tea"]}
    assert memory.refresh_entities(force=True)["written"] == []  # settled: the next build writes nothing

    # [[person-josé-núñez]] in a memory still leads to the page, and on to José's memories.
    served = {h.id: h for h in memory.recall("expense rules for the Lisbon office", xray=True)}
    assert linking in served
    paths = [h.graph_path or [] for h in served.values() if h.served_by == "graph"]
    reached = [p for p in paths if p[:1] == [linking]]
    assert reached and all(p[1] == "person-jose-nunez" for p in reached)


def test_names_equal_without_accents_are_one_entity(memory: Memory) -> None:
    _write(
        memory,
        "facts/owner.md",
        "---\nentityRef: person-tomas-ortega\n---\nTomás Ortega owns the billing-api service.\n",
    )
    _write(memory, "facts/pairing.md", "---\nentityRef: person-tomas-ortega\n---\nTomás prefers pair programming.\n")
    _write(memory, "facts/oncall.md", "Tomas Ortega is on call this week.\n")
    _sync(memory)
    memory.refresh_entities()
    people, _ = memory.entities(entity_type="person")
    assert [(p["name"], p["id"], p["factCount"]) for p in people] == [("Tomás Ortega", "person-tomas-ortega", 3)]
    assert people[0]["aliases"] == []  # "Tomas Ortega" is the name spelt without accents, not another name
    assert memory.entity("Tomas Ortega")["name"] == "Tomás Ortega"


def test_a_known_tools_name_inside_a_longer_name_does_not_join_the_tools_page(memory: Memory) -> None:
    kafka = memory.store("The search-indexer consumes Kafka topic orbit.events.").id
    cafe = memory.store("The team's favourite coffee place near the office is Café Kafka.").id
    apache = memory.store("Our brokers run Apache Kafka 3.7.").id
    memory.refresh_entities()
    cited = memory.entity("tool-kafka")["memoryIds"]
    assert kafka in cited and apache in cited and cafe not in cited


def _seed_tomas_as_an_older_build_left_it(memory: Memory) -> str:
    """Builds before r33 made two pages for Tomás: ``person-tomas-ortega`` (the ``entityRef``) and
    ``person-tomás-ortega`` (the text); a person wrote on both. Committed by plain git."""
    _write(
        memory,
        "facts/owner.md",
        "---\nentityRef: person-tomas-ortega\n---\nTomás Ortega owns the billing-api service.\n",
    )
    _write(memory, "facts/pairing.md", "Tomás Ortega prefers pair programming in the morning.\n")
    _sync(memory)
    memory.refresh_entities()
    ascii_page = memory.root / "entities" / "person-tomas-ortega.md"
    built = ascii_page.read_text(encoding="utf-8")
    ascii_page.write_text(built + "\n## Notes\n\nOn call in March.\n", encoding="utf-8")
    start = built.index("## Synthesis\n\n") + len("## Synthesis\n\n")
    end = built.index("## Timeline")
    accented = (
        built[:start].replace("id: person-tomas-ortega", "id: person-tomás-ortega")
        + "Tomás runs billing escalations.\n\n"
        + built[end:].replace("## Timeline\n\n", "## Timeline\n\n- [2026-01-05] Joined the billing team.\n")
        + "\n## Notes\n\nTomás is the billing escalation contact.\n\n## Contact\n\nSlack first.\n"
    )
    (memory.root / "entities" / "person-tomás-ortega.md").write_text(accented, encoding="utf-8")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-q", "-m", "two pages for Tomás, as an older build left them, edited")
    _sync(memory)
    return "entities/person-tomás-ortega.md"


def test_an_older_builds_second_page_for_a_person_is_merged_with_what_a_person_wrote_on_it(
    memory: Memory,
) -> None:
    old = _seed_tomas_as_an_older_build_left_it(memory)
    head = git(memory.root, "rev-parse", "HEAD").strip()

    rebuilt = memory.refresh_entities()
    assert rebuilt["written"] == ["entities/person-tomas-ortega.md"] and rebuilt["removed"] == [old]
    assert git(memory.root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"  # one commit
    assert not (memory.root / old).exists()
    people, _ = memory.entities(entity_type="person")
    assert [(p["name"], p["path"]) for p in people] == [("Tomás Ortega", "entities/person-tomas-ortega.md")]
    page = memory.entity("person-tomás-ortega")  # the old id finds the surviving page
    assert page["id"] == "person-tomas-ortega"
    assert "person-tomás-ortega" in memory.get("person-tomas-ortega").frontmatter["aliases"]
    # Nothing a person wrote is lost; where both pages had a Notes section, both stay, the carried one named.
    assert page["extraSections"] == [
        {"title": "Notes", "body": "On call in March."},
        {"title": "Notes (from person-tomás-ortega)", "body": "Tomás is the billing escalation contact."},
        {"title": "Contact", "body": "Slack first."},
    ]
    assert page["synthesis"] == "Tomás runs billing escalations."  # their rewrite, not the rules' text
    assert "Joined the billing team." in page["facts"]
    assert memory.refresh_entities(force=True)["written"] == []  # settled
    assert not [c for c in memory.doctor() if any(old in str(p) for p in c.get("problems", []))]


def test_a_read_after_an_upgrade_shows_the_migration_and_refresh_makes_it_though_no_memory_changed(
    memory: Memory,
) -> None:
    _seed_jose(memory)
    memory.refresh_entities()
    old = _as_an_older_build_wrote_it(memory)
    # The older remnic built at this HEAD and said so: its manifest names HEAD, with its version.
    manifest = memory.root / STATE_DIR / "entities.json"
    manifest.write_text(json.dumps({"version": 1, "head": memory.head()}) + "\n", encoding="utf-8")
    head = memory.head()

    # A read shows the pages as this remnic's build makes them, and writes and commits nothing.
    people, _ = memory.entities(entity_type="person")
    assert "entities/person-jose-nunez.md" in [p["path"] for p in people]
    assert old not in [p["path"] for p in people]
    shown = memory.entity("person-josé-núñez")
    assert shown["extraSections"] == [{"title": "Notes", "body": "Prefers calls before ten."}]
    assert (memory.root / old).exists() and not (memory.root / "entities" / "person-jose-nunez.md").exists()
    assert memory.head() == head and git(memory.root, "status", "--porcelain") == ""

    # The migration is refresh's, though no memory changed (no --force): the manifest's version is older.
    result = memory.refresh_entities()
    assert result["refreshed"] and "entities/person-jose-nunez.md" in result["written"]
    assert not (memory.root / old).exists() and memory.head() != head
    written = memory.entity("person-josé-núñez")
    assert {**written, "updated": ""} == {**shown, "updated": ""}  # what the read showed, built a moment later
