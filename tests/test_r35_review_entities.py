"""A hedge said after the value ("…, maybe, not sure.", "…, Bob guesses.") is set aside when a queued fact
is approved, so the approved value replaces the old one; a reported-speech sentence ("Alice said the
ledger service is owned by team Orion") is keyed by what it is about, and a supersession key the observer
made up never becomes an entity page of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from remnic.observe.entities.rules import frontmatter_mentions, mentions
from remnic.observe.keys import statement_key, value_key
from remnic.service import Memory


@pytest.mark.parametrize(
    "content",
    [
        "Bob thinks the staging DB port is now 6543, maybe, not sure.",
        "Bob thinks the staging DB port is probably 6543, Bob guesses.",
        "The staging DB port is probably 6543, I guess.",
        "The staging DB port is 6543, if I remember right.",
        "The staging DB port is 6543, I'm not sure though.",
    ],
)
def test_a_trailing_hedge_is_set_aside_on_approval(content: str) -> None:
    assert statement_key(content) == ("staging-db", {"port": "6543"})


def test_a_trailing_hedge_is_only_a_whole_clause() -> None:
    # The hedge word inside a value stays: only a clause after a comma is a hedge.
    assert statement_key("The staging DB host is db-maybe.internal, probably.") == (
        "staging-db",
        {"host": "db-maybe.internal"},
    )
    assert statement_key("The staging DB host is maybe-db.internal, maybe.") == (
        "staging-db",
        {"host": "maybe-db.internal"},
    )
    # Observed, a hedged value still keys nothing: it is queued, and only the approval sets the hedge aside.
    assert value_key("The staging DB port is 6543, maybe, not sure.", "Bob") == (None, {})


def test_reported_speech_is_keyed_by_what_it_is_about() -> None:
    orion = value_key("Alice said the ledger service is owned by team Orion.", "Fernando")
    assert orion == ("ledger-service", {"owner": "team Orion"})
    assert value_key("Bob said the ledger service is owned by team Vega.", "Fernando")[0] == "ledger-service"
    assert value_key("Dana owns the ledger service now.", "Fernando") == ("ledger-service", {"owner": "Dana"})
    assert value_key("Ana told me the staging DB port is 5434.", "Fernando") == ("staging-db", {"port": "5434"})
    # Whoever says it, a phrase holding a verb of saying is never what a value is of.
    assert value_key("Alice told Bob the ledger is 5.", "Fernando") == (None, {})


def test_a_supersession_key_is_no_entity_of_its_own() -> None:
    keyed = {"entityRef": "alice-said-the-ledger", "structuredAttributes": {"service": "owned by team Orion"}}
    assert frontmatter_mentions(keyed) == []
    found = mentions(keyed, "Alice said the ledger service is owned by team Orion.")
    assert [(m.type, m.name) for m in found] == [("person", "Alice")]
    # Named by the text rules, it is that entity, spelt as written.
    found = mentions({"entityRef": "john", "structuredAttributes": {"team": "Orion"}}, "John's team is Orion.")
    assert [(m.type, m.name) for m in found] == [("person", "John")]
    # An entityRef a person or agent gave (no attributes, a typed id, a name as written) still names one.
    assert [m.type for m in frontmatter_mentions({"entityRef": "staging-db"})] == ["other"]
    typed = {"entityRef": "project-ledger", "structuredAttributes": {"owner": "Dana"}}
    assert [(m.type, m.name) for m in frontmatter_mentions(typed)] == [("project", "Ledger")]
    written = {"entityRef": "Ledger Service", "structuredAttributes": {"owner": "Dana"}}
    assert [m.name for m in frontmatter_mentions(written)] == ["Ledger Service"]


def test_approving_a_value_hedged_after_it_replaces_the_old_value(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    with Memory.open(root) as memory:
        memory.observe_transcript("a", "[2026-11-26T10:00:00Z] Alice: The staging DB port is 5432.\n", flush=True)
        hedged = "Bob: I think the staging DB port is now 6543, maybe, not sure."
        memory.observe_transcript("b", f"[2026-11-27T10:00:00Z] {hedged}\n", flush=True)
        [old] = memory.list(status="active")
        [queued] = memory.list(status="pending_review")
    got = run_cli("review", "approve", queued.id, "--json", "--memory-dir", str(root)).json()
    assert got["frontmatter"]["entityRef"] == "staging-db", got["frontmatter"]
    assert got["frontmatter"]["structuredAttributes"] == {"port": "6543"}
    assert [(a["id"], a["change"]) for a in got["alsoChanged"]] == [(old.id, "superseded")]


def test_reported_speech_makes_no_entity_page_and_a_later_owner_replaces_it(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    d = ["--memory-dir", str(root)]
    assert run_cli("init", str(root), "--quiet").code == 0
    with Memory.open(root) as memory:
        said = "Fernando: Alice said the ledger service is owned by team Orion."
        memory.observe_transcript("a", f"[2026-11-26T10:00:00Z] {said}\n", flush=True)
        [orion] = [r for r in memory.list(status="active") if r.category != "entity"]
        assert orion.frontmatter["entityRef"] == "ledger-service"
    listed = run_cli("entities", "list", "--json", *d).json()
    assert [e["name"] for e in listed["entities"]] == ["Alice"], listed
    with Memory.open(root) as memory:
        memory.observe_transcript(
            "b", "[2026-11-27T10:00:00Z] Fernando: Dana owns the ledger service now.\n", flush=True
        )
        [dana] = [r for r in memory.list(status="active") if r.category != "entity"]
        assert dana.content.startswith("Dana owns") and dana.frontmatter["supersedes"] == orion.id
