"""Regressions of round 37's observe and entity rules (verification V1/V2): one value spelt two ways
("biweekly" / "bi-weekly", "five" / "5") is one memory; a friend after "monitored … with" stays a person,
a tool named so only when what the verb acts on is technical and no memory says it is a person; a
multi-word tool ("Argo CD") is one tool."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from remnic.config import settings_for
from remnic.observe.alike import denies, differs_concretely
from remnic.observe.entities.rules import text_mentions
from remnic.service import Memory
from remnic.service.entities import list_entities


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("r37-regressions") / "mem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        mem = Memory.init(root, settings=settings_for(root))
        yield mem
        mem.close()


def _observe(memory: Memory, session: str, day: int, *lines: str) -> Any:
    text = "".join(f"[2026-10-{day:02d}T09:{i:02d}:00Z] {line}\n" for i, line in enumerate(lines))
    return memory.observe_transcript(session, text, fmt="plain", flush=True).flushes[0]


def _typed(text: str) -> set[tuple[str, str]]:
    return {(m.type, m.name) for m in text_mentions(text)}


# --- R2: a value spelt another way is the same value ---------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Our on-call rotation is biweekly.", "Our on-call rotation is bi-weekly."),
        ("Our on-call rotation is biweekly.", "Our on-call rotation is bi weekly."),
        ("We invoice semimonthly.", "We invoice semi-monthly."),
        ("The offsite is on the twenty-first.", "The offsite is on the 21st."),
        ("The team has five engineers.", "The team has 5 engineers."),
        ("The team has twenty five engineers.", "The team has 25 engineers."),
        ("We have 5 cats and two dogs.", "We have five cats and 2 dogs."),
    ],
)
def test_one_value_spelt_two_ways_is_no_difference(a: str, b: str) -> None:
    assert not differs_concretely(a, b) and not differs_concretely(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Our on-call rotation is weekly.", "Our on-call rotation is bi-weekly."),
        ("We invoice monthly.", "We invoice semi monthly."),
        ("The offsite is on the twentieth.", "The offsite is on the twenty first."),
        ("The team has five engineers.", "The team has 6 engineers."),
        ("The team has twenty engineers.", "The team has 25 engineers."),
        ("The team has 2 engineers.", "The team has engineers."),
    ],
)
def test_another_value_in_any_spelling_still_differs(a: str, b: str) -> None:
    assert differs_concretely(a, b) and differs_concretely(b, a)


def test_a_denial_of_the_number_in_digits_denies_the_number_in_words() -> None:
    assert denies("The team has five engineers.", "The team does not have 5 engineers.")
    assert not denies("The team has five engineers.", "The team does not have 6 engineers.")


def test_bi_weekly_reinforces_biweekly(memory: Memory) -> None:
    _observe(memory, "r2-a", 5, "Ana: Our on-call rotation is biweekly.")
    again = _observe(memory, "r2-b", 12, "Ana: Our on-call rotation is bi-weekly.")
    assert (len(again.created), len(again.reinforced)) == (0, 1)


# --- R4: people stay people; a multi-word tool is one tool ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("I monitored the bake sale with Zoe.", "Zoe"),
        ("My son is monitoring the school garden with Ethan this spring.", "Ethan"),
        ("I bundled the donations with Maya yesterday.", "Maya"),
        ("I compiled a scrapbook with Nora.", "Nora"),
        ("We monitor production with Zoe. Zoe said it was quiet.", "Zoe"),
    ],
)
def test_a_companion_after_a_technical_verb_is_a_person(text: str, person: str) -> None:
    found = _typed(text)
    assert ("person", person) in found and ("tool", person) not in found, found


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("We deploy staging with Flux.", "Flux"),
        ("We deploy with Flux.", "Flux"),
        ("We bundle the frontend with Vite.", "Vite"),
        ("We monitor the API with Grafana Cloud.", "Grafana Cloud"),
    ],
)
def test_the_means_of_a_technical_object_is_a_tool(text: str, tool: str) -> None:
    assert ("tool", tool) in _typed(text)


@pytest.mark.parametrize(
    "text",
    ["We deploy the ledger service with Argo CD instead of Helm charts.", "We deploy with Argo CD."],
)
def test_a_multi_word_tool_is_one_tool(text: str) -> None:
    tools = {name for kind, name in _typed(text) if kind == "tool"}
    assert "Argo CD" in tools and not tools & {"Argo", "CD"}, tools


def test_a_person_in_another_memory_stays_a_person_after_a_technical_with(memory: Memory) -> None:
    _observe(memory, "r4-a", 5, "Ana: Ben prefers tea over coffee.")
    _observe(memory, "r4-b", 6, "Ana: Kim deployed the billing app with Ben yesterday afternoon.")
    _observe(memory, "r4-c", 7, "Ana: I monitored the bake sale with Zoe.")
    rows, _ = list_entities(memory)
    types = {row["name"]: row["type"] for row in rows}
    assert types.get("Ben") == "person" and types.get("Zoe") == "person", types
    assert not any(row["type"] == "tool" and row["name"] in {"Ben", "Zoe"} for row in rows), rows
