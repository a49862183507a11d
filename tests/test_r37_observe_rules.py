"""Observation rules from a memory's whole life (round 37, tester E): a team's decision replaced by its
explicit "X, not Y", values that differ only in "biweekly", an ordinal or a tense kept apart, a correction
of a correction said "Sorry, no: …", a value keyed without its time phrase, and people joining or leaving."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from remnic.config import ObserveSettings, settings_for
from remnic.observe.alike import differs_concretely, replaces
from remnic.observe.keys import value_key
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.service import Memory


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = Path(tmp_path_factory.mktemp("r37-observe")) / "mem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        mem = Memory.init(root, settings=settings_for(root))
        yield mem
        mem.close()


def _plan(*lines: tuple[str, str]) -> list[MemoryObservation]:
    turns = [
        Turn(index=i, role="user", text=text, speaker=who, timestamp=f"2026-10-19T09:{i:02d}:00Z", turn_id=f"L{i}")
        for i, (who, text) in enumerate(lines)
    ]
    return plan_observations(turns, session_key="s", settings=ObserveSettings())


def _observe(memory: Memory, session: str, day: int, line: str) -> Any:
    return memory.observe_transcript(
        session, f"[2026-10-{day:02d}T09:00:00Z] {line}\n", fmt="plain", flush=True
    ).flushes[0]


def _status(memory: Memory, content: str) -> str:
    return next(r.status for r in memory.list() if r.content.strip() == content)


# --- H1: a decision said as a team says it is replaced by "X, not Y" ------------------------------------


@pytest.mark.parametrize(
    "decided",
    [
        "We decided to deploy staging with ArgoCD.",
        "We'll go with ArgoCD for staging deploys.",
        "We will deploy staging with ArgoCD.",
        "Let's deploy staging with ArgoCD.",
    ],
)
def test_a_decision_lead_in_is_no_part_of_what_is_replaced(decided: str) -> None:
    assert replaces("We deploy staging with Flux, not ArgoCD.", decided)
    # The same subject only: a choice with nothing it is for, or for something else, stays.
    assert not replaces("We deploy staging with Flux, not ArgoCD.", "We'll go with ArgoCD.")
    assert not replaces("We deploy staging with Flux, not ArgoCD.", "We'll go with ArgoCD for production deploys.")
    assert not replaces(
        "We deploy staging with Flux, not ArgoCD.", "We decided to deploy staging with Flux and ArgoCD."
    )


def test_the_explicit_replacement_supersedes_the_decision(memory: Memory) -> None:
    _observe(memory, "h1-a", 5, "Ana: We decided to deploy staging with ArgoCD.")
    _observe(memory, "h1-b", 6, "Ana: We'll go with Jenkins for nightly builds.")
    first = _observe(memory, "h1-c", 12, "Ana: We deploy staging with Flux, not ArgoCD.")
    second = _observe(memory, "h1-d", 13, "Ana: We build nightly with Buildkite, not Jenkins.")
    assert (len(first.superseded), len(second.superseded)) == (1, 1)
    assert _status(memory, "We decided to deploy staging with ArgoCD.") == "superseded"
    assert _status(memory, "We will go with Jenkins for nightly builds.") == "superseded"


# --- H2: another frequency, ordinal or tense is another value -------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Our on-call rotation is weekly.", "Our on-call rotation is biweekly."),
        ("Our on-call rotation is weekly.", "Our on-call rotation is twice-weekly."),
        ("We invoice monthly.", "We invoice semi-monthly."),
        ("The offsite is on the twentieth of December.", "The offsite is on the twenty-first of December."),
        ("The offsite is on the first of December.", "The offsite is on the second of December."),
        ("Ana is the billing lead.", "Ana was the billing lead."),
        ("Ana is the billing lead.", "Ana will be the billing lead."),
    ],
)
def test_values_that_differ_only_in_such_a_word_differ_concretely(a: str, b: str) -> None:
    assert differs_concretely(a, b) and differs_concretely(b, a)
    # The same value in other spellings, or another sentence of a story, is no difference.
    assert not differs_concretely("The offsite is on the twenty-first.", "The offsite is on the twenty first.")
    assert not differs_concretely("Our on-call rotation is weekly.", "The on-call rotation is weekly.")
    assert not differs_concretely("It was fun. The kids are happy.", "It was fun. The kids were happy.")


def test_biweekly_is_neither_folded_nor_reinforced_into_weekly(memory: Memory) -> None:
    said = [
        o.fact.content
        for o in _plan(("Ben", "Our on-call rotation is weekly."), ("Carla", "Our on-call rotation is biweekly."))
    ]
    assert said == ["Our on-call rotation is weekly.", "Our on-call rotation is biweekly."]
    _observe(memory, "h2-a", 19, "Ben: Our pager rotation is weekly.")
    flush = _observe(memory, "h2-b", 20, "Carla: Our pager rotation is biweekly.")
    assert (len(flush.created), len(flush.reinforced)) == (1, 0)
    assert _status(memory, "Our pager rotation is biweekly.") == "active"


# --- H5: a correction of a correction is never dropped --------------------------------------------------


@pytest.mark.parametrize(
    ("said", "verdict"),
    [
        ("Sorry, no: it is 8081 after all.", "accept"),
        ("Hmm no, it's 8081 actually.", "accept"),
        # no correction marker: whether it corrects anything, only the speaker knows
        ("Hmm, it is 8081.", "defer"),
        ("It's 8081 though.", "defer"),
    ],
)
def test_a_value_said_right_after_a_keyed_fact_gets_a_verdict(said: str, verdict: str) -> None:
    observed = _plan(("Ben", "The API port is 8081."), ("Ana", "Actually, it is 8082."), ("Ben", said))
    last = next(o for o in observed if "L2" in o.source_turn_ids)
    assert (last.verdict.kind, last.fact.entity_ref, dict(last.fact.structured_attributes)) == (
        verdict,
        "api",
        {"port": "8081"},
    )
    assert last.fact.category == "correction"
    assert observed[-1] is last  # after the 8082 correction, so persisted it replaces it


# --- M4: when it changed is not part of the value -------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("We moved the staging DB to port 6543 over the weekend.", "6543"),
        ("We switched the staging DB to port 6543 last night.", "6543"),
        ("We switched the staging DB to port 6543 this morning.", "6543"),
        ("We switched the staging DB to port 6543 yesterday.", "6543"),
        ("We switched the staging DB to port 6543 on Friday.", "6543"),
        ("The staging DB port is 6543 actually.", "6543"),
    ],
)
def test_a_time_phrase_after_the_value_is_not_the_value(said: str, value: str) -> None:
    assert value_key(said, "Ana") == ("staging-db", {"port": value})
    assert value_key("My favourite film is Love Actually.", "Ana") == ("ana", {"favourite-film": "Love Actually"})


# --- M5: people joining or leaving, and what a person answers for ---------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "Priya is leaving the company on Friday.",
        "Priya left the company.",
        "Priya no longer works here.",
        "Ewa approves all production deploys.",
        "Kofi joined our team.",
    ],
)
def test_a_membership_change_or_a_standing_responsibility_is_kept(said: str) -> None:
    (obs,) = _plan(("Ana", said))
    assert (obs.verdict.kind, obs.fact.category, obs.fact.content) == ("accept", "relationship", said)
    for other in ("Caroline left the party early.", "Ben joined a gym.", "Melanie left the group chat."):
        assert _plan(("Ana", other)) == []
