"""Messy-transcript rules: lead-ins typed without a comma, a role said name first, a clause after the
corrected value, a short answer to a question, and a fact waiting for review said again."""

from __future__ import annotations

from typing import Any

import pytest

from remnic.config import ObserveSettings
from remnic.observe.keys import value_key
from remnic.observe.normalize import strip_markers
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.service import Memory


def _plan(*lines: tuple[str, str]) -> list[MemoryObservation]:
    turns = [
        Turn(index=i, role="user", text=text, speaker=who, timestamp=f"2026-03-02T08:{i:02d}:00Z", turn_id=f"L{i}")
        for i, (who, text) in enumerate(lines)
    ]
    return plan_observations(turns, session_key="s", settings=ObserveSettings())


def _observe(memory: Memory, session: str, *lines: str) -> Any:
    text = "".join(f"[2026-03-02T{8 + i:02d}:00:00Z] {line}\n" for i, line in enumerate(lines))
    return memory.observe_transcript(session, text, fmt="plain", flush=True).flushes[0]


def _statuses(memory: Memory) -> dict[str, str]:
    return {r.content.strip(): r.status for r in memory.list()}


# --- a lead-in without its comma ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "bare"),
    [
        ("Actually the staging DB port is 5433, not 5432.", "the staging DB port is 5433, not 5432."),
        ("Sorry my birthday is on 15 February.", "my birthday is on 15 February."),
        ("Well I moved to Porto.", "I moved to Porto."),
        ("Oh the build is green again.", "the build is green again."),
        # not lead-ins: an exclamation, a noun, an apology for something
        ("Oh my god the build is green.", "Oh my god the build is green."),
        ("Well water is safe to drink here.", "Well water is safe to drink here."),
        ("Actually helps a lot.", "Actually helps a lot."),
    ],
)
def test_a_lead_in_before_a_subject_goes_without_its_comma(said: str, bare: str) -> None:
    assert strip_markers(said) == bare


def test_a_comma_less_lead_in_is_neither_stored_nor_keyed() -> None:
    (obs,) = _plan(("Ana", "Actually the staging DB port is 5433, not 5432."))
    assert obs.fact.content == "The staging DB port is 5433, not 5432."
    assert (obs.fact.entity_ref, dict(obs.fact.structured_attributes)) == ("staging-db", {"port": "5433"})


def test_a_later_value_supersedes_a_correction_said_without_a_comma(memory: Memory) -> None:
    _observe(memory, "a", "Ana: Actually the staging DB port is 5433, not 5432.")
    flush = _observe(memory, "b", "Ana: The staging DB port is 6000 now.")
    assert len(flush.superseded) == 1
    statuses = _statuses(memory)
    assert statuses["The staging DB port is 5433, not 5432."] == "superseded"
    assert statuses["The staging DB port is 6000 now."] == "active"


# --- "NAME is our ROLE now" --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("Dana Kim is our account owner now.", ("account", {"owner": "Dana Kim"})),
        ("Dana Kim is the new account owner.", ("account", {"owner": "Dana Kim"})),
        ("Ewa is our team lead since March.", ("team", {"lead": "Ewa"})),
        ("Tomasz is my manager now.", ("marco", {"manager": "Tomasz"})),
        ("Dana Kim is our account owner now, her email is dana.kim@acme.com.", ("account", {"owner": "Dana Kim"})),
        # one of several, not a role one person holds, or no name at all
        ("Argo is our deployment tool.", (None, {})),
        ("Ana is my friend.", (None, {})),
        ("Today is our tenth wedding anniversary.", (None, {})),
        ("It is our team lead.", (None, {})),
        ("Ana is the lead on this project.", (None, {})),
    ],
)
def test_a_role_said_name_first_has_the_key_of_the_role_said_first(sentence: str, key: Any) -> None:
    assert value_key(sentence, "Marco") == key


def test_a_new_owner_said_name_first_supersedes_the_old(memory: Memory) -> None:
    flush = _observe(memory, "a", "Bot: The account owner is Priya Shah.", "Marco: Dana Kim is our account owner now.")
    assert len(flush.superseded) == 1
    statuses = _statuses(memory)
    assert statuses["The account owner is Priya Shah."] == "superseded"
    assert statuses["Dana Kim is our account owner now."] == "active"


# --- a clause after the corrected value -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        (
            "My birthday is on 15 February, I always mix it up with Valentine's.",
            ("nina", {"birthday": "on 15 February"}),
        ),
        ("Our team lead is Ewa, she really knows the codebase.", ("team", {"lead": "Ewa"})),
        ("The staging DB port is 5434, it always clashed with 5433.", ("staging-db", {"port": "5434"})),
        # a list is not a clause
        ("The attendees are Ana, Ben and Caro.", (None, {})),
        ("The attendees are Ana, Ben and I.", (None, {})),
    ],
)
def test_a_clause_after_the_value_is_cut_from_it(sentence: str, key: Any) -> None:
    assert value_key(sentence, "Nina") == key


def test_a_corrected_value_with_a_clause_after_it_supersedes(memory: Memory) -> None:
    _observe(memory, "a", "Nina: My birthday is on 14 February.")
    flush = _observe(memory, "b", "Nina: Sorry, my birthday is on 15 February, I always mix it up with Valentine's.")
    assert len(flush.superseded) == 1
    assert _statuses(memory)["Nina's birthday is on 14 February."] == "superseded"


# --- a short answer to a question ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "answer", "stored"),
    [
        ("When is the baby due?", "In October.", 'Nina, asked "When is the baby due?": In October.'),
        ("Where do you live?", "In Lisbon.", 'Nina, asked "Where do you live?": In Lisbon.'),
    ],
)
def test_a_short_answer_to_a_question_is_kept(asked: str, answer: str, stored: str) -> None:
    kept = [o for o in _plan(("Sam", asked), ("Nina", answer)) if o.proposed_status is not None]
    assert [o.fact.content for o in kept] == [stored]


def test_a_short_answer_to_a_filler_question_is_still_trivial() -> None:
    kept = [o for o in _plan(("Sam", "How's it going?"), ("Nina", "Pretty good.")) if o.proposed_status is not None]
    assert kept == []


# --- a fact waiting for review said again ---------------------------------------------------------------


def test_a_fact_waiting_for_review_said_twice_in_one_flush_is_one(memory: Memory) -> None:
    flush = _observe(
        memory,
        "a",
        "Jo: I think we should keep dbt for transformations.",
        "Ana: Sure.",
        "Jo: I think we should keep dbt for transformations.",
    )
    assert len([r for r in memory.list() if r.status == "pending_review"]) == 1
    assert len(flush.created) == 1
