"""Entity pages of a team's chat: a tool named beside another ("with Flux, not ArgoCD") is a tool, not a
person; a timeline line is dated when its fact was said, not when it was observed; the people who hold
a role ("Kofi replaced Dana as the billing service owner", "Our team lead is Ewa") have a page, and
one whose fact was replaced since keeps it as history."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from remnic.config import settings_for
from remnic.observe.entities.rules import mentions, text_mentions
from remnic.service import Memory
from remnic.service.entities import get_entity, list_entities

SESSION_1 = (
    "[2026-10-05T09:02:00Z] Ana: We deploy staging with ArgoCD.\n"
    "[2026-10-05T09:03:00Z] Ben: Priya owns the billing service now.\n"
)
SESSION_2 = (
    "[2026-10-12T09:01:00Z] Ana: We deploy staging with Flux, not ArgoCD.\n"
    "[2026-10-12T09:03:00Z] Ben: Kofi replaced Priya as the billing service owner.\n"
)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, dict[str, Any]]]:
    """Two weekly sessions observed (on a later day than they were said), and the entities listed."""
    root = tmp_path_factory.mktemp("entities") / "mem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        mem = Memory.init(root, settings=settings_for(root))
        mem.observe_transcript("s1", SESSION_1, flush=True)
        mem.observe_transcript("s2", SESSION_2, flush=True)
        rows, _ = list_entities(mem)
        yield mem, {row["name"]: row for row in rows}
        mem.close()


def typed(found: list[Any]) -> list[tuple[str, str]]:
    return [(m.type, m.name) for m in found]


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ("We deploy staging with Flux, not ArgoCD.", {"Flux", "ArgoCD"}),
        ("Ana and others deploy staging with Flux, not ArgoCD.", {"Flux", "ArgoCD"}),
        ("We deployed the API with Nomad.", {"Nomad"}),
        ("Flux replaced ArgoCD last week.", {"Flux", "ArgoCD"}),
        ("We replaced Jenkins with Drone.", {"Jenkins", "Drone"}),
        ("We moved CI from Jenkins to Woodpecker.", {"Jenkins", "Woodpecker"}),
    ],
)
def test_a_name_beside_a_tool_or_after_a_technical_with_is_a_tool(text: str, tools: set[str]) -> None:
    found = typed(text_mentions(text))
    assert {name for kind, name in found if kind == "tool"} >= tools, found
    assert not {name for kind, name in found if kind == "person"} & tools, found


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ("Kofi replaced Dana as the billing service owner.", {"Kofi", "Dana"}),
        ("Our team lead is Marta now, Ewa moved to the platform team.", {"Marta", "Ewa"}),
        ("Kofi is the billing service owner.", {"Kofi"}),
        ("Priya is leaving the company on Friday.", {"Priya"}),
        ("Ana and others are kicking off the billing rewrite this sprint.", {"Ana"}),
    ],
)
def test_people_who_hold_a_role_or_spoke_are_people(text: str, people: set[str]) -> None:
    found = typed(text_mentions(text))
    assert {name for kind, name in found if kind == "person"} == people, found


def test_with_a_companion_stays_a_person_with_a_means_does_not() -> None:
    assert typed(text_mentions("I had lunch with Maria yesterday.")) == [("person", "Maria")]
    assert typed(text_mentions("I went hiking with John, not Bob.")) == [("person", "John")]
    assert typed(text_mentions("We replaced Dana with Kofi.")) == [("person", "Kofi")]
    assert typed(text_mentions("We deploy staging with Flux.")) == [("tool", "Flux")]


def test_a_role_attribute_names_its_holder() -> None:
    fm = {"entityRef": "billing-service", "structuredAttributes": {"owner": "Kofi"}}
    assert ("person", "Kofi") in typed(mentions(fm, "The billing service has a new owner."))
    # A team, a tool or a value that is no name holds no person.
    for value in ("team Orion", "Team Orion", "Jenkins", "SRE", "8080"):
        attrs = {"entityRef": "billing-service", "structuredAttributes": {"owner": value}}
        assert not [m for m in mentions(attrs, "") if m.type == "person"], value
    # Nor does a role that a thing holds.
    assert typed(text_mentions("Python is the main developer language.")) == [("tool", "Python")]
    assert typed(text_mentions("Orbit is our deployment tool.")) == []


def test_flux_beside_argocd_is_a_tool_page(team: tuple[Memory, dict[str, Any]]) -> None:
    _, rows = team
    assert rows["Flux"]["type"] == "tool", rows
    assert rows["ArgoCD"]["type"] == "tool", rows


def test_a_timeline_is_dated_when_each_fact_was_said(team: tuple[Memory, dict[str, Any]]) -> None:
    mem, _ = team
    flux = get_entity(mem, "Flux")
    assert [e["timestamp"][:10] for e in flux["timeline"]] == ["2026-10-12"], flux["timeline"]
    assert "on 2026-10-12" in flux["synthesis"]
    argocd = get_entity(mem, "ArgoCD")
    assert [e["timestamp"][:10] for e in argocd["timeline"]] == ["2026-10-05", "2026-10-12"], argocd["timeline"]


def test_role_holders_have_pages_and_a_replaced_owner_keeps_hers(team: tuple[Memory, dict[str, Any]]) -> None:
    mem, rows = team
    assert rows["Kofi"]["type"] == "person", rows
    priya = get_entity(mem, "Priya")
    assert priya["type"] == "person"
    lines = [e["text"] for e in priya["timeline"]]
    assert [t.endswith("(superseded)") for t in lines] == [True, False], lines
    assert [e["timestamp"][:10] for e in priya["timeline"]] == ["2026-10-05", "2026-10-12"]
    assert "1 of them since superseded" in priya["synthesis"]
    # The page's most important memory is the current one, not the replaced one.
    kofi_line = next(t for t in lines if "Kofi" in t)
    assert kofi_line.split(" [[")[0] in priya["synthesis"]
