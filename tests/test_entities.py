"""Entity pages: the rules, the original format, pages kept current in git, the graph tier walking them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.errors import ValidationError
from remnic.observe.entities import mentions, parse_page, render_page
from remnic.service.memory import Memory

# The original Remnic's newer layout, as its docs show it (invented content).
ORIGINAL_PAGE = """# Priya Raman

**Type:** person
**Updated:** 2026-05-10T08:00:00.000Z

## Synthesis

Priya leads Project Atlas and owns the database migration.

## Timeline

- [2026-03-02T15:04:11.120Z] [source=extraction] [session=agent:main:discord:981] Priya joined the Atlas team.
- [2026-05-10T08:00:00.000Z] [source=extraction] Priya approved the Postgres 16 upgrade.

## Connected to

- [[project-atlas]] — leads

## Activity

- 2026-05-10: approved DB upgrade

## Aliases

- P. Raman

## Notes from a person

Keep this paragraph.
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Priya Raman approved the Postgres 16 upgrade for the Atlas project.",
            {("person", "Priya Raman"), ("tool", "Postgres"), ("project", "Atlas")},
        ),
        ("Ana prefers tabs over spaces in vim.", {("person", "Ana"), ("tool", "vim")}),
        ("We moved the office to Lisbon last year.", {("place", "Lisbon")}),
        ("Switched to Ruff in the webapp repo.", {("tool", "Ruff"), ("project", "webapp")}),
        ("Yesterday Priya said the ledger-api service is flaky.", {("person", "Priya"), ("project", "ledger-api")}),
        ("I had lunch with my friend Maria on Monday.", {("person", "Maria")}),
        ("We cut releases every Tuesday.", set()),
        ("Management decided to update the project plan and the billing service.", set()),
        ("The CEO said QA approved it, and CI went green after HR asked the CTO.", set()),
        ("Our PM decided with the API team; CEO Priya approved.", {("person", "Priya")}),
    ],
)
def test_rules_find_people_projects_tools_and_places(text: str, expected: set) -> None:
    assert {(m.type, m.name) for m in mentions({}, text)} == expected


def test_an_acronym_is_a_person_only_when_a_tag_says_so() -> None:
    found = mentions({"tags": ["person:QA"]}, "QA approved the release.")
    assert [(m.type, m.name) for m in found] == [("person", "QA")]


def test_rules_read_the_frontmatter_first() -> None:
    found = mentions({"entityRef": "person-priya-raman", "tags": ["project:atlas", "ops"], "project": "webapp"}, "")
    assert [(m.type, m.name) for m in found] == [("person", "Priya Raman"), ("project", "webapp"), ("project", "atlas")]
    typed_by_text = mentions({"entityRef": "Ana"}, "Ana prefers tabs.")
    assert [(m.type, m.name) for m in typed_by_text] == [("person", "Ana")]


def test_the_original_format_round_trips_and_the_older_layout_reads() -> None:
    page = parse_page(ORIGINAL_PAGE)
    assert (page.name, page.type, page.updated) == ("Priya Raman", "person", "2026-05-10T08:00:00.000Z")
    assert page.timeline[0].session == "agent:main:discord:981" and page.timeline[0].source == "extraction"
    assert page.timeline[1].text == "Priya approved the Postgres 16 upgrade."
    assert page.relationships == [("project-atlas", "leads")] and page.aliases == ["P. Raman"]
    assert page.activity == [("2026-05-10", "approved DB upgrade")]
    assert page.extra_sections == [("Notes from a person", "Keep this paragraph.")]
    assert render_page(page) == ORIGINAL_PAGE

    older = parse_page("# Atlas\n\n**Type:** project\n\n## Summary\n\nThe migration.\n\n## Facts\n\n- Uses Postgres\n")
    assert older.synthesis == "The migration." and older.facts == ["Uses Postgres"]
    assert older.to_dict()["facts"] == ["Uses Postgres"] and older.to_dict()["summary"] == "The migration."


def _seed(memory: Memory) -> dict[str, str]:
    ids = {
        "approved": memory.store(
            "Priya Raman approved the Postgres 16 upgrade for the billing database.",
            category="decision",
            importance=0.8,
        ).id,
        "oncall": memory.store("Priya Raman is on call every second weekend.").id,
        "tabs": memory.store("Ana prefers tabs over spaces.", category="preference").id,
    }
    for text in ("The cafeteria opens at eight.", "Release notes go out on Fridays."):
        memory.store(text)
    return ids


def test_pages_are_built_in_one_commit_and_rebuilt_only_when_memories_change(memory: Memory) -> None:
    ids = _seed(memory)
    first = memory.refresh_entities()
    assert "entities/person-priya-raman.md" in first["written"] and first["commit"]
    assert "Remnic-Operation: entities" in git(memory.root, "log", "-1", "--format=%B")
    page = (memory.root / "entities" / "person-priya-raman.md").read_text()
    assert "source: entities" in page and "synthesis_version: 1" in page and "# Priya Raman" in page
    assert f"[[{ids['approved']}]]" in page and f"[[{ids['oncall']}]]" in page  # the second by name alone
    assert memory.refresh_entities()["refreshed"] is False  # nothing changed: no work, no commit

    memory.store("Priya Raman moved to Lisbon in May.")
    again = memory.refresh_entities()
    assert set(again["written"]) == {"entities/person-priya-raman.md", "entities/place-lisbon.md"}
    got = memory.entity("priya raman")
    assert got["memoryIds"][-1] != ids["approved"] and len(got["timeline"]) == 3
    assert {"target": "place-lisbon", "label": "named together in 1 memory"} in got["relationships"]


def test_a_persons_synthesis_and_sections_are_kept_and_foreign_pages_untouched(memory: Memory) -> None:
    _seed(memory)
    memory.refresh_entities()
    path = memory.root / "entities" / "person-ana.md"
    text = path.read_text()
    start = text.index("## Synthesis\n\n") + len("## Synthesis\n\n")
    end = text.index("## Timeline")
    path.write_text(text[:start] + "Ana is our lead designer.\n\n" + text[end:] + "\n## Notes\n\nLikes jazz.\n")
    foreign = memory.root / "entities" / "person-bo.md"
    foreign.write_text(ORIGINAL_PAGE.replace("Priya Raman", "Bo"))
    assert run_cli("sync", "run", "--memory-dir", str(memory.root)).code == 0

    memory.store("Ana likes dark mode.", category="preference")
    memory.refresh_entities()
    page = memory.entity("Ana")
    assert page["synthesis"] == "Ana is our lead designer."
    assert page["extraSections"] == [{"title": "Notes", "body": "Likes jazz."}]
    assert len(page["timeline"]) == 2
    assert "Bo" in foreign.read_text() and memory.entity("Bo")["managed"] is False


def test_list_and_get_by_name_alias_and_id(memory: Memory) -> None:
    _seed(memory)
    rows, total = memory.entities()
    names = [r["name"] for r in rows]
    assert names == sorted(names, key=str.lower) and total == len(rows) >= 3
    people, _ = memory.entities(entity_type="person")
    assert {r["name"] for r in people} == {"Ana", "Priya Raman"}
    assert memory.entities(query="weekend")[0][0]["name"] == "Priya Raman"
    assert memory.entity("person-ana")["name"] == "Ana"
    with pytest.raises(Exception) as exc:
        memory.entity("Nobody Here")
    assert "no entity named" in str(exc.value)


def test_the_graph_tier_walks_through_entity_pages(memory: Memory) -> None:
    ids = _seed(memory)
    memory.refresh_entities()
    result = memory.recall("who approved the postgres upgrade", xray=True)
    served = {h.id: h for h in result}
    assert ids["approved"] in served
    reached = served[ids["oncall"]]  # shares no word with the query: reached over the page
    assert reached.served_by == "graph"
    assert reached.graph_path == [ids["approved"], "person-priya-raman", ids["oncall"]]
    assert not any(h.path.startswith("entities/") for h in result)  # pages are walked, not returned
    snapshot = result.xray.to_dict()
    xr = next(r for r in snapshot["results"] if r["memoryId"] == ids["oncall"])
    assert xr["servedBy"] == "graph" and "person-priya-raman" in xr["graphPath"]
    asked = list(memory.recall("Priya Raman", category="entity"))
    assert asked[0].path == "entities/person-priya-raman.md"  # asked for the entity category: returned


def test_entities_cli(memory: Memory) -> None:
    _seed(memory)
    root = str(memory.root)
    head = git(memory.root, "rev-parse", "HEAD")
    listed = run_cli("entities", "list", "--type", "person", "--memory-dir", root)
    assert listed.code == 0 and "Priya Raman" in listed.out and "entities/person-ana.md" in listed.out
    shown = run_cli("entities", "show", "Priya", "--memory-dir", root)
    assert shown.code == 0 and "on call every second weekend" in shown.out
    # The reads showed the pages a build makes, and wrote none: refresh writes them, then they are current.
    assert git(memory.root, "rev-parse", "HEAD") == head and not list((memory.root / "entities").glob("*.md"))
    assert "3 pages written" in run_cli("entities", "refresh", "--memory-dir", root).out
    assert "current" in run_cli("entities", "refresh", "--memory-dir", root).out
    assert run_cli("entities", "show", "Priya", "--memory-dir", root).out == shown.out
    assert run_cli("entities", "show", "nobody", "--memory-dir", root).code == 1


def test_pages_follow_their_namespace(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    try:
        memory.store("Ana prefers tabs.", namespace="work")
        memory.refresh_entities()
        assert (root / "namespaces" / "work" / "entities" / "person-ana.md").is_file()
        got = memory.entity("Ana", namespace="work")
        assert got["id"] == "work:person-ana" and got["namespace"] == "work"
        assert memory.entities(namespace="default")[1] == 0
    finally:
        memory.close()


def test_a_forgotten_page_stays_forgotten_across_rebuilds(memory: Memory) -> None:
    _seed(memory)
    memory.refresh_entities()
    memory.forget("person-priya-raman", "not a person I track")
    page = memory.root / "entities" / "person-priya-raman.md"
    memory.store("Priya Raman said the pager rota changes in June")  # the memories change: a rebuild follows
    memory.refresh_entities(force=True)
    assert "status: forgotten" in page.read_text() and "forgottenAt:" in page.read_text()
    assert "Priya Raman" not in {r["name"] for r in memory.entities()[0]}
    with pytest.raises(Exception) as exc:
        memory.entity("Priya Raman")
    assert "no entity named" in str(exc.value)
    assert run_cli("entities", "show", "Priya Raman", "--memory-dir", str(memory.root)).code == 1


def test_a_first_name_shared_by_two_people_is_ambiguous(memory: Memory) -> None:
    memory.store("Ana Silva approved the budget.")
    memory.store("Ana Costa approved the hiring plan.")
    with pytest.raises(ValidationError) as exc:
        memory.entity("Ana")
    assert "Ana Costa" in str(exc.value) and "Ana Silva" in str(exc.value)
    assert memory.entity("Ana Costa")["name"] == "Ana Costa"
    shown = run_cli("entities", "show", "Ana", "--memory-dir", str(memory.root))
    assert shown.code == 2 and "Ana Costa" in shown.err and "Ana Silva" in shown.err


def test_a_line_a_person_wrote_in_the_timeline_survives_a_rebuild(memory: Memory) -> None:
    _seed(memory)
    memory.refresh_entities()
    path = memory.root / "entities" / "person-ana.md"
    text = path.read_text()
    end = text.index("## Timeline") + len("## Timeline\n\n")
    line = "- [2020-01-01T00:00:00.000Z] Met Ana at the Lisbon offsite.\n"
    path.write_text(text[:end] + line + text[end:])
    assert run_cli("sync", "run", "--memory-dir", str(memory.root)).code == 0
    memory.store("Ana likes dark mode.", category="preference")
    memory.refresh_entities()
    timeline = memory.entity("Ana")["timeline"]
    assert timeline[0]["text"] == "Met Ana at the Lisbon offsite." and len(timeline) == 3
    assert "Met Ana at the Lisbon offsite." in path.read_text()
