"""Round 38 (observe, more): a team fact said by several people is one memory for dedup too, their events
stay apart; names in other scripts or starting with a non-ASCII letter are read like ASCII ones (facts
kept, tags whole); German/Spanish/French turns are said to meet English-only cues; day-first numeric
transcript times; apostrophe names, multi-word tools in lists and full names after tool cues on entity
pages; a two-word task ("set up") closes its commitment."""

from __future__ import annotations

from typing import Any

import pytest

from remnic.errors import ValidationError
from remnic.observe.commitments import commitment_key
from remnic.observe.entities.rules import text_mentions
from remnic.observe.transcripts import parse_transcript
from remnic.service import Memory


def _observe(memory: Memory, session: str, when: str, *lines: str) -> Any:
    text = "".join(f"[{when}T09:{i:02d}:00Z] {line}\n" for i, line in enumerate(lines))
    return memory.observe_transcript(session, text, fmt="plain", flush=True).flushes[0]


def test_team_events_said_by_two_people_stay_two_memories(memory: Memory) -> None:
    _observe(memory, "a", "2026-06-30", "Priya: We went camping last weekend.")
    _observe(memory, "b", "2026-07-30", "Ewa: We went camping last weekend.")
    assert len([r for r in memory.list() if r.status == "active"]) == 2


def test_dedup_merges_one_team_fact_stored_by_two_speakers(memory: Memory) -> None:
    memory.store("Priya Shah and others deploy with Argo CD.", category="fact")
    memory.store("Ewa Nowak and others deploy with Argo CD.", category="fact")
    memory.store("Kofi and others went camping.", category="fact")
    memory.store("Ana and others went camping.", category="fact")
    (group,) = memory.dedup().groups
    assert {group.survivor.content.strip(), *(r.content.strip() for r in group.others)} == {
        "Priya Shah and others deploy with Argo CD.",
        "Ewa Nowak and others deploy with Argo CD.",
    }


@pytest.mark.parametrize(
    "line",
    [
        "Şükrü owns the search service.",
        "Élodie is the new on-call lead.",
        "Αθηνά Παπαδοπούλου prefers Go.",
        "Юрий prefers Go.",
        "Łukasz is the new on-call lead.",
    ],
)
def test_a_name_in_another_script_keeps_its_fact(memory: Memory, line: str) -> None:
    result = memory.observe_transcript(
        "s", f"[2026-11-27T09:00:00Z] Ana: {line}\n", fmt="plain", dry_run=True, flush=True
    )
    assert [o.fact.content for o in result.observations] == [line]


def test_tags_and_keywords_keep_a_first_non_ascii_letter(memory: Memory) -> None:
    text = "[2026-11-27T09:02:00Z] Şükrü Öztürk: I moved to İstanbul yesterday.\n"
    (obs,) = memory.observe_transcript("e", text, fmt="plain", dry_run=True, flush=True).observations
    assert {"öztürk", "istanbul"} <= set(obs.fact.tags)
    assert {"öztürk", "istanbul"} <= set(obs.importance.keywords)


def test_turns_in_another_language_are_said_to_meet_english_cues(memory: Memory) -> None:
    text = (
        "[2026-11-27T09:00:00Z] Jürgen: Gestern haben wir beschlossen, den Server in Köln abzuschalten.\n"
        "[2026-11-27T09:01:00Z] Amélie: Je préfère le thé.\n"
        "[2026-11-27T09:02:00Z] Ana: We use Jenkins for CI.\n"
    )
    result = memory.observe_transcript("l", text, fmt="plain", dry_run=True, flush=True)
    (said,) = [w for w in result.warnings() if "English" in w]
    assert said.startswith("2 of 3 turn(s) read as German, French")
    assert {"field": "language", "message": said} in result.to_dict()["warnings"]


def test_day_first_numeric_transcript_times() -> None:
    (turn,) = parse_transcript("[28.11.2026 09:00] Ana: We use Go.\n", "plain").turns
    assert (turn.timestamp, turn.speaker) == ("2026-11-28T09:00", "Ana")
    (turn,) = parse_transcript("28/11/2026 09:00 Ana: We use Go.\n", "plain").turns
    assert (turn.timestamp, turn.speaker) == ("2026-11-28T09:00", "Ana")
    with pytest.raises(ValidationError, match=r"'03/04/2027 09:00' is an unreadable time \(month or day first"):
        parse_transcript("03/04/2027 09:00 Ana: We use Go.\n", "plain")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A day over 12 anywhere in the transcript tells how all of its dates are written.
        (
            "[28.11.2026 09:00] Ana: We use Go.\n[03.12.2026 10:00] Ana: We use Rust.\n",
            ["2026-11-28T09:00", "2026-12-03T10:00"],
        ),
        (
            "03/12/2026 10:00 Ana: We use Rust.\n28/11/2026 09:00 Ana: We use Go.\n",
            ["2026-12-03T10:00", "2026-11-28T09:00"],
        ),
        (
            "11/28/2026 09:00 Ana: We use Go.\n12/03/2026 10:00 Ana: We use Rust.\n",
            ["2026-11-28T09:00", "2026-12-03T10:00"],
        ),
        ("[28/11/2026] Ana: We use Go.\n[03/04/2027] Ana: We use Rust.\n", ["2026-11-28", "2027-04-03"]),
        ("[11/28/2026 9:05 PM] Ana: We use Go.\n", ["2026-11-28T21:05"]),
    ],
)
def test_numeric_transcript_dates_read_in_the_order_the_transcript_shows(text: str, expected: list[str]) -> None:
    assert [t.timestamp for t in parse_transcript(text, "plain").turns] == expected


def test_numeric_dates_that_disagree_leave_the_ambiguous_one_unread() -> None:
    text = "28/11/2026 09:00 Ana: A.\n11/28/2026 09:00 Ana: B.\n03/04/2026 09:00 Ana: C.\n"
    with pytest.raises(ValidationError, match=r"transcript:3: .*'03/04/2026 09:00' is an unreadable time .*disagree"):
        parse_transcript(text, "plain")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sean O'Neil said the build is green.", [("person", "Sean O'Neil")]),
        ("Zoë O’Brien-Łukasz prefers tea.", [("person", "Zoë O’Brien-Łukasz")]),
        (
            "We use Docker, Terraform and GitHub Actions.",
            [("tool", "Docker"), ("tool", "Terraform"), ("tool", "GitHub Actions")],
        ),
        ("We deployed the app with Ben Carter.", [("person", "Ben Carter")]),
        ("We switched to Ben Carter.", [("person", "Ben Carter")]),
        ("We deploy staging with Flux.", [("tool", "Flux")]),
    ],
)
def test_entity_names(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(m.type, m.name) for m in text_mentions(text)] == expected


@pytest.mark.parametrize(
    ("said", "state"),
    [
        ("Marco will set up the payments sandbox.", "open"),
        ("Marco set up the payments sandbox.", "fulfilled"),
        ("Marco has rolled out the payments sandbox.", None),
    ],
)
def test_a_two_word_task_keys_its_commitment(said: str, state: str | None) -> None:
    key = commitment_key(said, "Ana")
    if state is None:
        assert key[0] != "marco-set-up-payments-sandbox"
    else:
        assert key == ("marco-set-up-payments-sandbox", {"commitment": state})
    assert commitment_key("I signed up for a pottery class.", "Mel") == (None, {})


def test_the_set_up_sandbox_closes_the_open_commitment(memory: Memory) -> None:
    _observe(memory, "a", "2026-11-02", "Marco: I'll set up the payments sandbox by Friday.")
    flush = _observe(memory, "b", "2026-11-05", "Marco: I set up the payments sandbox.")
    assert len(flush.superseded) == 1
