"""Round 36 (h2 H2, H3): corrections as people type them replace the value they correct — "Actually the
port is 5433, not 5432.", "Sorry, I meant 5433, not 5432.", "No wait, it's 5433.", "Kofi replaced Priya
Shah as our account owner." — also with the assistant's reply between the fact and its correction."""

from __future__ import annotations

from typing import Any

import pytest

from remnic.config import ObserveSettings
from remnic.observe.keys import value_key
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.service import Memory

PORT = "Dana: The staging DB port is 5432."
OWNER = "Dana: Our account owner is Priya Shah."
NOTED = "Bot: Noted."


def _plan(*lines: str) -> list[MemoryObservation]:
    turns = []
    for i, line in enumerate(lines):
        who, text = line.split(": ", 1)
        role = "assistant" if who == "Bot" else "user"
        turns.append(
            Turn(
                role,
                text,
                i,
                turn_id=f"L{i}",
                speaker=None if who == "Bot" else who,
                timestamp=f"2026-03-04T09:{i:02d}:00Z",
            )
        )
    return plan_observations(turns, session_key="s", settings=ObserveSettings())


def _last(*lines: str) -> MemoryObservation:
    return _plan(*lines)[-1]


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("Actually the port is 5433, not 5432.", "The staging DB port is 5433, not 5432."),
        ("Sorry, I meant 5433, not 5432.", "The staging DB port is 5433, not 5432."),
        ("I meant 5433.", "The staging DB port is 5433."),
        ("No wait, it's 5433.", "The staging DB port is 5433."),
        ("Actually it's 5433.", "The staging DB port is 5433."),
        ("Actually, it is 5433 now.", "The staging DB port is 5433 now."),
    ],
)
def test_a_correction_naming_no_subject_is_stored_standalone_with_the_key_it_corrects(said: str, stored: str) -> None:
    fact = _last(PORT, NOTED, f"Dana: {said}").fact
    assert (fact.content, fact.entity_ref, dict(fact.structured_attributes)) == (stored, "staging-db", {"port": "5433"})


def test_the_assistant_turn_between_a_fact_and_its_correction_keeps_the_antecedent() -> None:
    # h2 H3: every agent transcript has the assistant's reply between the two user turns
    obs = _last(
        "user: The staging DB port is 5432.",
        "Bot: Got it — I'll use 5432 for staging.",
        "user: Actually, it is 5433 now.",
    )
    assert (obs.fact.content, obs.proposed_status) == ("The staging DB port is 5433 now.", "active")


def test_the_speakers_own_turn_in_between_still_resets_the_antecedent() -> None:
    obs = _last(PORT, "Dana: I love hiking in the Alps.", "Dana: Actually, it is 5433 now.")
    assert obs.fact.entity_ref is None and obs.proposed_status == "pending_review"


def test_not_old_picks_the_fact_stating_old_among_several_ports() -> None:
    fact = _last(PORT, "Dana: The prod DB port is 6543.", NOTED, "Dana: Actually the port is 5433, not 5432.").fact
    assert (fact.content, fact.entity_ref) == ("The staging DB port is 5433, not 5432.", "staging-db")


@pytest.mark.parametrize(
    "said",
    [
        "Actually the port is 5433, not 5431.",  # names an old value nobody said
        "Actually the owner is Kofi.",  # no owner key in the flush
        "Actually, it was my idea to hire her.",  # not a value of the port
        "Sorry, I meant the blue one.",  # not a port
    ],
)
def test_a_correction_that_fits_no_earlier_key_stays_as_said(said: str) -> None:
    assert _last(PORT, NOTED, f"Dana: {said}").fact.entity_ref is None


@pytest.mark.parametrize(
    "said",
    [
        "Kofi replaced Priya Shah as our account owner.",
        "Kofi took over as our account owner.",
        "Kofi has taken over as our account owner.",
    ],
)
def test_a_new_holder_of_a_role_has_the_roles_key(said: str) -> None:
    assert value_key(said, "Dana") == ("account", {"owner": "Kofi"})


def test_a_role_taken_over_in_the_future_or_by_a_pronoun_has_no_key() -> None:
    assert value_key("Kofi takes over as our account owner next month.", "Dana") == (None, {})
    assert value_key("She took over as our account owner.", "Dana") == (None, {})
    assert value_key("Kofi replaced Priya Shah as our favourite barista.", "Dana") == (None, {})


def _observe(memory: Memory, session: str, *lines: str) -> Any:
    text = "".join(f"[2026-03-04T09:{i:02d}:00Z] {line}\n" for i, line in enumerate(lines))
    return memory.observe_transcript(session, text, fmt="plain", flush=True).flushes[0]


def _status(memory: Memory, content: str) -> str:
    return next(r.status for r in memory.list() if r.content.strip() == content)


def test_the_typed_correction_supersedes_the_stale_value(memory: Memory) -> None:
    flush = _observe(
        memory, "p1", "Dana: The billing DB port is 5432.", NOTED, "Dana: Actually the port is 5433, not 5432."
    )
    assert len(flush.superseded) == 1
    assert _status(memory, "The billing DB port is 5432.") == "superseded"
    assert _status(memory, "The billing DB port is 5433, not 5432.") == "active"


def test_a_new_account_owner_in_a_later_session_supersedes_the_old(memory: Memory) -> None:
    _observe(memory, "s1", "Dana: Our support owner is Priya Shah.")
    flush = _observe(memory, "s2", "Dana: Kofi took over as our support owner.")
    assert len(flush.superseded) == 1
    assert _status(memory, "Our support owner is Priya Shah.") == "superseded"
