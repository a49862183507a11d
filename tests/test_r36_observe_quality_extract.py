"""Round 36 (h2 M1, M4, M5): a bare answer keeps its question, no "Lee ares", filler and work artifacts
are not memories, "Our CI" is no name, "by the way" goes like "btw", a date range is a date, the words
typed after a pasted log are kept, and a named person's lasting trait is a fact."""

from __future__ import annotations

import pytest

from remnic.config import ObserveSettings
from remnic.observe.cues import TIME_RE
from remnic.observe.normalize import replace_first_person, standalone
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.observe.text import prose_lines


def _plan(*lines: str) -> list[MemoryObservation]:
    turns = []
    for i, line in enumerate(lines):
        who, text = line.split(": ", 1)
        role = "assistant" if who == "assistant" else "user"
        speaker = None if who in ("assistant", "user") else who
        turns.append(Turn(role, text, i, turn_id=f"L{i}", speaker=speaker, timestamp=f"2026-03-04T09:{i:02d}:00Z"))
    return plan_observations(turns, session_key="s", settings=ObserveSettings())


def _contents(*lines: str) -> list[str]:
    return [o.fact.content for o in _plan(*lines)]


# --- M1: a bare answer that names a date, or has a cue word, keeps its question ------------------------


@pytest.mark.parametrize(
    ("asked", "answer", "stored"),
    [
        (
            "Ben: When is the demo?",
            "Ana: Next Friday at 3pm.",
            'Ana, asked "When is the demo?": On Friday, 6 March 2026 at 3pm.',
        ),
        (
            "Ben: When did you start at Acme?",
            "Ana: Two years ago.",
            'Ana, asked "When did you start at Acme?": In 2024.',
        ),
        (
            "assistant: And which region should it deploy to?",
            "user: eu-west-1, always.",
            'The user, asked "which region should it deploy to?": eu-west-1, always.',
        ),
    ],
)
def test_a_bare_answer_keeps_its_question(asked: str, answer: str, stored: str) -> None:
    assert _contents(asked, answer) == [stored]


def test_an_answer_that_is_a_clause_does_not_carry_the_question() -> None:
    assert _contents("Ben: When is the demo?", "Ana: The demo is next Friday at 3pm.") == [
        "The demo is on Friday, 6 March 2026 at 3pm."
    ]


# --- M4: wrong or noise memories -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("My brother and I are opening a bakery in Leeds.", "Lee's brother and Lee are opening a bakery in Leeds."),
        ("Ana and I have two kids.", "Ana and Lee have two kids."),
        ("My wife and I've been married for 5 years.", "Lee's wife and Lee have been married for 5 years."),
        ("I think Ana and I work well together.", "Lee thinks Ana and Lee work well together."),
        # an "I" after "and" that opens a clause of its own still agrees
        ("I love hiking and I go every week.", "Lee loves hiking and Lee goes every week."),
        ("The team has been really nice and I'm having fun.", "The team has been really nice and Lee is having fun."),
        ("It's all a process and I care about it.", "It's all a process and Lee cares about it."),
    ],
)
def test_i_in_a_plural_subject_keeps_the_plural_verb(said: str, expected: str) -> None:
    assert replace_first_person(said, "Lee") == expected


@pytest.mark.parametrize(
    "said",
    [
        "Lee: Let me think about it.",
        "Lee: Let me check with my team first.",
        "Lee: Hmm, let me sleep on it.",
        "user: Here's a screenshot of our dashboard.",
        "user: Here are the logs from our CI run.",
    ],
)
def test_putting_off_an_answer_and_showing_a_work_artifact_are_no_memories(said: str) -> None:
    assert _contents(said) == []


def test_showing_ones_own_things_is_still_a_memory() -> None:
    assert _contents("Ana: Here's a pic of my family camping at the beach.") == [
        "Ana shares a pic of their family camping at the beach."
    ]


def test_a_system_running_somewhere_is_no_relationship() -> None:
    assert [o.fact.category for o in _plan("user: Our CI runs on Buildkite.")] == ["fact"]
    assert [o.fact.category for o in _plan("user: Priya runs the billing team.")] == ["relationship"]


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("I hate YAML, by the way.", "Ana hates YAML."),
        ("Our CI, by the way, runs on Buildkite.", "Our CI runs on Buildkite."),
        ("He showed me by the way of example.", "He showed Ana by the way of example."),
    ],
)
def test_by_the_way_goes_like_btw(said: str, stored: str) -> None:
    assert standalone(said, speaker="Ana", timestamp=None)[0] == stored


def test_a_value_said_with_a_chat_aside_keeps_its_key() -> None:
    (obs,) = _plan("Ana: The staging DB port is 5433 btw.")
    assert (obs.fact.entity_ref, dict(obs.fact.structured_attributes)) == ("staging-db", {"port": "5433"})


def test_a_date_range_is_a_date() -> None:
    (obs,) = _plan("Sam: I will be out of office from 10 to 14 June.")
    assert (obs.verdict.kind, obs.proposed_status) == ("accept", "active")
    assert TIME_RE.search("on June 14th") and TIME_RE.search("1 June 2026") and TIME_RE.search("5 may 2023")
    assert not TIME_RE.search("I may 2 things")


# --- M5: missed durable facts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "2026-08-01T01:06:59.123Z INFO server started on port 3000\n"
            "2026-08-01T01:07:00.001Z WARN cache miss ratio 0.9\nOur cache hit target is 95 percent.",
            ["Our cache hit target is 95 percent."],
        ),
        (
            "Error: connect ECONNREFUSED 127.0.0.1:5432\n"
            "    at TCPConnectWrapper.afterConnect [as oncomplete] (node:net:1555:16)\n"
            "FYI the staging DB port is 5433 since Monday.",
            ["FYI the staging DB port is 5433 since Monday."],
        ),
        # a paste with nothing typed after it, or with more output after it, still goes whole
        ('Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nValueError: bad', []),
        ("$ npm test\nnpm ERR! code 1\n1 failed, 3 passed\nok", []),
    ],
)
def test_words_typed_after_a_pasted_log_are_kept(text: str, kept: list[str]) -> None:
    assert prose_lines(text) == kept


@pytest.mark.parametrize(
    "said",
    ["Ana doesn't eat pork.", "Priya doesn't drink coffee.", "Ben is allergic to peanuts.", "Kofi is vegetarian."],
)
def test_a_named_persons_lasting_trait_is_a_fact(said: str) -> None:
    # r36 f14: only a known person's — here a speaker of the flush ("Waymo doesn't drive in snow" is no trait)
    name = said.split()[0]
    assert said in _contents(f"{name}: Hi all.", f"Dana: {said}")


@pytest.mark.parametrize("said", ["Ana doesn't know yet.", "The API doesn't eat much memory.", "Monday is vegetarian."])
def test_what_holds_today_or_is_no_person_is_not_a_trait(said: str) -> None:
    assert all("trait" not in o.verdict.reason for o in _plan(f"user: {said}"))
