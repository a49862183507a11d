"""A plain transcript's time prefix: a 12-hour time with AM/PM, a bracketed clock time, and a speaker
named with digits alone, which is a name unless it looks like the hour of a time."""

from __future__ import annotations

import pytest

from remnic.errors import ValidationError
from remnic.observe.transcripts import parse_transcript


@pytest.mark.parametrize(
    ("line", "speaker", "stamp"),
    [
        ("9:05 PM Cleo: We ship on Mondays.", "Cleo", None),
        ("2026-05-01 9:05 pm Cleo: We ship on Mondays.", "Cleo", "2026-05-01T21:05"),
        ("2026-05-01 12:05 AM Cleo: We ship on Mondays.", "Cleo", "2026-05-01T00:05"),
        ("[09:20] Dev: The repo moved to GitLab.", "Dev", None),
        ("[9:20 PM] Dev: The repo moved to GitLab.", "Dev", None),
        ("007: Our spy budget is classified.", "007", None),
        ("09:15 Ana: We deploy on Fridays.", "Ana", None),
    ],
)
def test_a_time_prefix_is_no_part_of_the_speaker(line: str, speaker: str, stamp: str | None) -> None:
    (turn,) = parse_transcript(line, "plain").turns
    assert (turn.speaker, turn.timestamp) == (speaker, stamp)


@pytest.mark.parametrize("line", ["12:30: Lunch is at noon.", "[2026-05-01T10:00:00Z] 007: Budget.", "[soon] Ana: Hi."])
def test_a_time_read_as_a_speaker_is_refused(line: str) -> None:
    with pytest.raises(ValidationError, match=r"is not a (speaker name|time)"):
        parse_transcript(line, "plain")
