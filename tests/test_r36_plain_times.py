"""Plain transcripts whose lines start with a bare time (IRC logs, chat exports): the time is not the speaker."""

from __future__ import annotations

import pytest

from remnic.errors import ValidationError
from remnic.observe.transcripts import parse_transcript


def test_a_bare_clock_time_before_the_speaker_is_not_the_speaker() -> None:
    parsed = parse_transcript("09:15 Ana: Our billing service is owned by team Orion.\n", "plain")
    (turn,) = parsed.turns
    assert turn.speaker == "Ana"
    assert turn.text == "Our billing service is owned by team Orion."
    assert not turn.timestamp  # a clock time alone names no day


def test_a_date_and_time_before_the_speaker_is_the_turns_time() -> None:
    parsed = parse_transcript("2026-05-01 10:33 Ben: My manager is Priya.\n", "plain")
    (turn,) = parsed.turns
    assert turn.speaker == "Ben"
    assert turn.text == "My manager is Priya."
    assert turn.timestamp and turn.timestamp.startswith("2026-05-01T10:33")


def test_a_speaker_made_only_of_digits_is_refused_naming_the_line() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_transcript("Ana: hello there\n09:15: hello\n", "plain", source="chat.txt")
    assert "chat.txt:2" in str(caught.value)
    assert "'09' is not a speaker name" in str(caught.value)
