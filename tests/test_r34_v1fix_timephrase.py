"""Round 34 (v1 finding 4): a time phrase between "I" and the verb ("I last week started", "I every morning
run") is not conjugated as the verb: "The user last week started …", not "The user lasts week started …"."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from remnic.observe.normalize import replace_first_person
from remnic.service.memory import Memory

TIME_PHRASES = [
    ("I last week started a new job at Datadog.", "Ana last week started a new job at Datadog."),
    ("I this week switched to a standing desk.", "Ana this week switched to a standing desk."),
    ("I every morning run five kilometres before work.", "Ana every morning runs five kilometres before work."),
    ("I last year moved to Lisbon.", "Ana last year moved to Lisbon."),
    ("I next month start at Acme.", "Ana next month starts at Acme."),
    ("I every other day lift weights.", "Ana every other day lifts weights."),
    ("I twice a month visit Porto.", "Ana twice a month visits Porto."),
    ("I once a week go swimming.", "Ana once a week goes swimming."),
    ("I two years ago moved to Berlin.", "Ana two years ago moved to Berlin."),
    ("I every Monday call Kofi.", "Ana every Monday calls Kofi."),
    ("I this morning ate eggs.", "Ana this morning ate eggs."),
    ("I some days work from home.", "Ana some days works from home."),
    # the words are verbs where no time phrase is
    ("I last longer than him.", "Ana lasts longer than him."),
    ("I last saw her in May.", "Ana last saw her in May."),
    ("I march every Sunday.", "Ana marches every Sunday."),
    ("I time my runs.", "Ana times their runs."),
    ("I fall asleep early.", "Ana falls asleep early."),
]


@pytest.mark.parametrize("said,expected", TIME_PHRASES, ids=[s for s, _ in TIME_PHRASES])
def test_a_time_phrase_between_i_and_its_verb_is_not_the_verb(said: str, expected: str) -> None:
    assert replace_first_person(said, "Ana") == expected


def test_the_tester_s_transcript_is_stored_with_the_verbs_agreeing(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text(
        "User: I last week started a new job at Datadog.\nUser: I this week switched to a standing desk.\n"
        "User: I every morning run five kilometres before work.\nUser: I last year moved to Lisbon with my family.\n"
    )
    result = run_cli(
        "observe", str(path), "--session-key", "s1", "--format", "plain", "--flush", "--json", "-q",
        "--memory-dir", str(memory.root),
    )  # fmt: skip
    assert result.code == 0, result.err
    assert sorted(r.content for r in memory.list()) == [
        "The user every morning runs five kilometres before work.",
        "The user last week started a new job at Datadog.",
        "The user last year moved to Lisbon with their family.",
        "The user this week switched to a standing desk.",
    ]
