"""A transcript observed again after the upgrade that cleans control characters out of turn text: the
journal of the older remnic fingerprinted the uncleaned words, so its lines whose text the cleaning
changed differ now — they are the same turns read again, not new ones (no second archive line, no
second memory); another transcript piped under the session key is still taken."""

from __future__ import annotations

from dataclasses import replace

from remnic import Memory
from remnic.observe.buffer import SessionBuffer
from remnic.observe.transcripts import parse_transcript

RAW = {
    "L1": "Ana: The billing API\x00 listens on port 8443.",
    "L3": "Ana: \x1b[31mOur CI runs on Buildkite\x1b[0m since March.",
}
LINES = [
    RAW["L1"],
    "Bot: Noted.",
    RAW["L3"],
    "Bot: Got it.",
    "Ana: We deploy on Fridays.",
    "Bot: Sure.",
]


def _journal_as_the_old_code_did(memory: Memory, session: str, transcript: str) -> None:
    """What remnic before the cleaning journaled: the reader kept the control characters."""
    turns = parse_transcript(transcript, "plain").turns
    raw = [replace(t, text=RAW[t.turn_id].split(": ", 1)[1]) if t.turn_id in RAW else t for t in turns]
    assert any("\x00" in t.text for t in raw)
    SessionBuffer(memory.durable_dir, session, "default").append(raw)


def test_a_transcript_observed_again_after_the_cleaning_takes_nothing_new(memory: Memory) -> None:
    transcript = "\n".join(LINES)
    _journal_as_the_old_code_did(memory, "up", transcript)
    again = memory.observe_transcript("up", transcript, fmt="plain")
    assert (again.buffered, again.duplicates) == (0, 6)
    assert set(again.reread) == {"L1", "L3"}  # said, not silent
    assert memory.observe_transcript("up", transcript, fmt="plain").reread == ()  # and said once


def test_another_transcript_under_the_session_key_is_still_taken(memory: Memory) -> None:
    _journal_as_the_old_code_did(memory, "up2", "\n".join(LINES))
    other = "\n".join(["Ana: Our staging box runs Debian.", "Bot: Noted.", "Ana: The VPN uses WireGuard."])
    result = memory.observe_transcript("up2", other, fmt="plain")
    assert (result.buffered, result.duplicates) == (2, 1)  # "Bot: Noted." at L2 is the same line
