"""Entity pages from an adopted vault: foreign dates, accented and hyphenated names, junk names,
shared first names, a note's own aliases, quoted #tags, and the --json shapes of the CLI."""

from __future__ import annotations

import json

import pytest
from conftest import git, run_cli

from remnic.errors import ValidationError
from remnic.observe.entities import mentions, parse_page
from remnic.service.memory import Memory


def _write(memory: Memory, rel: str, text: str) -> None:
    path = memory.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _sync(memory: Memory) -> None:
    result = run_cli("sync", "run", "--memory-dir", str(memory.root))
    assert result.code == 0, result.err


def _timeline_lines(memory: Memory, eid: str) -> list[str]:
    text = (memory.root / "entities" / f"{eid}.md").read_text(encoding="utf-8")
    return [line for line in text.split("## Timeline", 1)[1].split("##", 1)[0].splitlines() if line.startswith("- ")]


# --- 1: a foreign created date ---


def test_a_foreign_date_is_an_iso_day_and_a_rebuild_with_nothing_new_writes_nothing(memory: Memory) -> None:
    _write(memory, "facts/budget.md", "---\ncreated: Jan 5, 2024\n---\nPriya Raman approved the budget.\n")
    _write(memory, "facts/older.md", "---\ncreated: 20.11.2023\n---\nPriya Raman said the rota changes.\n")
    _sync(memory)
    assert memory.refresh_entities()["commit"]
    lines = _timeline_lines(memory, "person-priya-raman")
    assert [line.split("]")[0] for line in lines] == ["- [2023-11-20", "- [2024-01-05"]
    assert all("[source=entity_extraction]" in line for line in lines)
    synthesis = memory.entity("Priya Raman")["synthesis"]
    assert "from 2023-11-20 to 2024-01-05." in synthesis
    assert [e["timestamp"] for e in memory.entity("Priya Raman")["timeline"]] == ["2023-11-20", "2024-01-05"]

    head = git(memory.root, "rev-parse", "HEAD")
    memory.store("The heron pond is behind the office.")  # an unrelated change: a rebuild follows
    again = memory.refresh_entities()
    assert again["refreshed"] is True and again["written"] == [] and again["commit"] is None
    forced = memory.refresh_entities(force=True)
    assert forced["written"] == [] and forced["commit"] is None
    assert git(memory.root, "rev-list", "--count", f"{head.strip()}..HEAD").strip() == "1"  # the store only
    assert len(_timeline_lines(memory, "person-priya-raman")) == 2


def test_a_page_already_grown_by_foreign_dates_is_repaired(memory: Memory) -> None:
    _write(memory, "facts/budget.md", "---\ncreated: Jan 5, 2024\n---\nPriya Raman approved the budget.\n")
    _sync(memory)
    memory.refresh_entities()
    mid = memory.entity("Priya Raman")["memoryIds"][0]
    path = memory.root / "entities" / "person-priya-raman.md"
    text = path.read_text(encoding="utf-8")
    start = text.index("## Timeline\n\n") + len("## Timeline\n\n")
    end = text.index("\n", start)
    quoted = f"Priya Raman approved the budget. [[{mid}]]"
    grown = (
        f"- [2026-11-27T10:08:22.582Z] [Jan 5, 2024] [source=entity_extraction] {quoted}\n"
        f"- [2026-11-27T10:08:27.066Z] [Jan 5, 2024] [source=entity_extraction] {quoted}\n"
        f"- [Jan 5, 2024] [source=entity_extraction] {quoted}\n"
        "- [Mar 3, 2023] Met Priya at the offsite."
    )
    path.write_text(text[:start] + grown + text[end:], encoding="utf-8")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-q", "-m", "a page grown by an older build")

    assert memory.refresh_entities(force=True)["written"] == ["entities/person-priya-raman.md"]
    lines = _timeline_lines(memory, "person-priya-raman")
    assert lines == [
        "- [Mar 3, 2023] Met Priya at the offsite.",  # a person's line, its date as they wrote it, in time order
        f"- [2024-01-05] [source=entity_extraction] {quoted}",
    ]
    assert memory.refresh_entities(force=True)["commit"] is None


# --- 2 and 3: the text rules ---


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("José Núñez said the billing API must stay backwards compatible.", {("person", "José Núñez")}),
        ("Søren Kierkegaard-Holm said the warehouse costs doubled.", {("person", "Søren Kierkegaard-Holm")}),
        ("Zoë Ødegaard approved the budget.", {("person", "Zoë Ødegaard")}),
        ("Mary-Jane Watson approved the design.", {("person", "Mary-Jane Watson")}),
        ("Émile Zola prefers tea.", {("person", "Émile Zola")}),
        ("Jose\u0301 said hello.", {("person", "José")}),  # decomposed: one word all the same
        ("Marcus moved to São Paulo in March.", {("person", "Marcus"), ("place", "São Paulo")}),
    ],
)
def test_names_with_accents_and_hyphens_are_found_whole(text: str, expected: set) -> None:
    assert {(m.type, m.name) for m in mentions({}, text)} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- [ ] Book flights to Lisbon\nRandom thought: Kubernetes is hard.\n", {("tool", "Kubernetes")}),
        ("Anyway, Priya Raman approved it. Meanwhile Bob went home.", {("person", "Priya Raman"), ("person", "Bob")}),
        ("Design Review went well. Customer Success asked about SLAs. Finance approved the budget.", set()),
        ("Best flat white: Café Kafka in Lisbon.", set()),
        ("```python\nimport os\nprint('Ana said hi')\n```\nDeploy is done.", set()),
        # real names and tools still come through
        ("Emily said the build is green. Kelly approved it.", {("person", "Emily"), ("person", "Kelly")}),
        ("Priya said: ship it on Friday.", {("person", "Priya")}),
        ("Apache Kafka feeds the warehouse. Use Postgres 16.", {("tool", "Kafka"), ("tool", "Postgres")}),
        ("Franz Kafka wrote letters.", {("person", "Franz Kafka")}),
        ("We run `python` scripts nightly.", {("tool", "python")}),
    ],
)
def test_junk_names_are_refused_and_real_ones_kept(text: str, expected: set) -> None:
    assert {(m.type, m.name) for m in mentions({}, text)} == expected


# --- 4: a shared first name ---


def test_a_first_name_shared_by_two_people_makes_no_third(memory: Memory) -> None:
    memory.store("Ana Silva approved the plan.")
    memory.store("Ana Costa said the palette fails contrast.")
    memory.store("Ana said the budget is fine.")
    memory.refresh_entities()
    people = {r["name"] for r in memory.entities(entity_type="person")[0]}
    assert people == {"Ana Silva", "Ana Costa"}
    assert not (memory.root / "entities" / "person-ana.md").exists()
    with pytest.raises(ValidationError):
        memory.entity("Ana")
    shown = run_cli("entities", "show", "Ana", "--memory-dir", str(memory.root))
    assert shown.code == 2 and "Ana Costa" in shown.err and "Ana Silva" in shown.err


# --- 5: a note's own aliases ---


def test_a_notes_aliases_name_one_person(memory: Memory) -> None:
    _write(
        memory,
        "facts/Robert Smith.md",
        "---\naliases: [Bobby, Rob Smith, PR]\n---\nRobert Smith approved the budget.\n",
    )
    _write(memory, "facts/d1.md", "Bobby said the deploy is done.\n")
    _write(memory, "facts/d2.md", "Rob Smith said the pager is noisy.\n")
    _write(memory, "facts/d3.md", "Rob asked for the runbook.\n")
    _sync(memory)
    memory.refresh_entities()
    rows = memory.entities(entity_type="person")[0]
    assert [(r["name"], r["factCount"]) for r in rows] == [("Robert Smith", 4)]
    found = memory.entity("PR")
    assert found["id"] == "person-robert-smith"
    assert {"Bobby", "Rob Smith", "PR"} <= set(found["aliases"])
    assert memory.entity("Bobby")["id"] == "person-robert-smith"


# --- 6: quoted #tags ---


def test_a_page_does_not_take_the_tags_of_the_memories_it_quotes(memory: Memory) -> None:
    _write(memory, "facts/marcus.md", "#person #team/infra\nMarcus Oyelaran moved to Lisbon in March.\n")
    _sync(memory)
    memory.refresh_entities()
    tagged = {r.id for r in memory.list(tag="person") if r.category == "entity"}
    assert tagged == {"person-marcus-oyelaran"}
    assert not [r for r in memory.list(tag="team/infra") if r.category == "entity"]
    page = parse_page((memory.root / "entities" / "place-lisbon.md").read_text(encoding="utf-8").split("---", 2)[2])
    assert "#person" in page.timeline[0].text  # still quoted, as code


# --- 11: the CLI's --json shapes ---


def test_entities_cli_json_has_the_documented_shapes(memory: Memory) -> None:
    memory.store("Priya Raman approved the budget.")
    memory.store("Ana prefers tabs.")
    root = str(memory.root)
    listed = run_cli("entities", "list", "--json", "--limit", "1", "--offset", "1", "--memory-dir", root)
    data = listed.json()
    assert listed.code == 0
    assert {k: data[k] for k in ("namespace", "total", "count", "limit", "offset")} == {
        "namespace": "default",
        "total": 2,
        "count": 1,
        "limit": 1,
        "offset": 1,
    }
    assert [e["name"] for e in data["entities"]] == ["Priya Raman"]
    shown = run_cli("entities", "show", "Priya", "--json", "--memory-dir", root)
    body = shown.json()
    assert shown.code == 0 and body["found"] is True and body["namespace"] == "default"
    assert body["entity"]["name"] == "Priya Raman"
    missing = run_cli("entities", "show", "Nobody", "--json", "--memory-dir", root)
    assert missing.code == 1 and missing.out == ""  # an error is on standard error under --json, as every one is
    assert json.loads(missing.err) == {
        "found": False,
        "namespace": "default",
        "error": "no entity named 'Nobody'",
        "code": "not_found",
    }
