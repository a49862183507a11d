"""The session buffer keys a retry on a turn's id and its words: other words under a seen id are taken
(with a warning naming the id), never dropped from memory and from the archive; and a turn without a
timestamp among timed ones makes no time boundary (it flushed one turn alone)."""

from __future__ import annotations

import json
from pathlib import Path

from remnic import Memory
from remnic.config import ObserveSettings
from remnic.observe.buffer import BufferedTurn, SessionBuffer
from remnic.observe.records import Turn
from remnic.observe.triggers import decide_flush

REPEATED = [
    {"role": "user", "turnId": "1", "content": "Our release train leaves every second Wednesday."},
    {"role": "assistant", "turnId": "2", "content": "Got it."},
    {"role": "user", "turnId": "1", "content": "My favourite database is SQLite.", "timestamp": "2026-04-01T10:01:00Z"},
    {"role": "user", "turnId": "3", "content": "The on-call phone number is 555-0199."},
    {"role": "user", "turnId": "3", "content": "The on-call phone number is 555-0199."},
]


def _archived(memory: Memory, session: str) -> list[str]:
    (path,) = [p for p in memory.durable_dir.rglob("*.jsonl") if "transcripts" in p.parts and session in p.name]
    return [json.loads(line)["content"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_other_words_under_a_seen_id_are_taken_and_named_a_real_retry_is_not(memory: Memory) -> None:
    result = memory.observe("rep", REPEATED)
    assert (result.buffered, result.duplicates) == (4, 1)  # the second "3" says the same: a retry
    assert result.to_dict()["warnings"] == [
        {
            "field": "turnId",
            "message": "turn id '1' was seen before in this session with other words: taken as a new turn "
            "(a retry repeats a turn's id and its words)",
        }
    ]
    assert "My favourite database is SQLite." in _archived(memory, "rep")
    again = memory.observe("rep", REPEATED, flush=True)  # the whole request retried: nothing twice
    assert (again.buffered, again.duplicates) == (0, 5) and "warnings" not in again.to_dict()
    assert _archived(memory, "rep").count("My favourite database is SQLite.") == 1
    flushed = [o.fact.content for o in again.observations if o.proposed_status]
    assert any("SQLite" in c for c in flushed), flushed


def test_a_retry_stamped_with_another_time_is_still_a_retry(memory: Memory) -> None:
    said = {"role": "user", "turnId": "a1", "content": "We deploy on Fridays."}
    memory.observe("t", [{**said, "timestamp": "2026-04-01T10:00:00Z"}])
    again = memory.observe("t", [{**said, "timestamp": "2026-04-01T10:05:00Z"}])
    assert (again.buffered, again.duplicates) == (0, 1)


def _claude(uuid: str, text: str, minute: int) -> str:
    message = {"role": "user", "content": text}
    stamp = f"2026-04-01T10:0{minute}:00Z"
    return json.dumps({"type": "user", "uuid": uuid, "sessionId": "s", "timestamp": stamp, "message": message})


def test_two_lines_of_one_host_file_under_one_uuid_are_two_turns(memory: Memory) -> None:
    text = "\n".join([_claude("dup", "We host everything on Hetzner.", 0), _claude("dup", "I prefer Terraform.", 1)])
    result = memory.observe_transcript("cc:s", text, fmt="claude-code")
    assert (result.buffered, result.reworded) == (2, ("dup",))
    assert "I prefer Terraform." in _archived(memory, "cc")
    assert memory.observe_transcript("cc:s", text, fmt="claude-code").duplicates == 2  # observed again


def test_a_host_turn_read_again_in_other_words_is_the_turn_first_read(memory: Memory) -> None:
    # The same file read again after remnic changed how it reads host text: persisting it twice would
    # archive (and extract) one turn twice; it is said, not dropped in silence.
    memory.observe_transcript("cc:t", _claude("u1", "First words.", 0), fmt="claude-code")
    again = memory.observe_transcript("cc:t", _claude("u1", "Fir5t words.", 0), fmt="claude-code")
    assert (again.buffered, again.duplicates, again.reread) == (0, 1, ("u1",))
    assert "turn id 'u1' was read before with other words" in again.to_dict()["warnings"][0]["message"]
    assert _archived(memory, "cc") == ["First words."]


def test_a_journal_from_before_keys_carried_words_still_drops_its_ids(tmp_path: Path) -> None:
    buffer = SessionBuffer(tmp_path, "old")
    buffer.path.parent.mkdir(parents=True)
    buffer.path.write_text(json.dumps({"op": "base", "nextSeq": 1, "seenTurnIds": ["u1"]}) + "\n")
    taken = buffer.append([Turn("user", "Other words.", 0, turn_id="u1", host_id=True)])
    assert (len(taken.turns), taken.duplicates) == (0, 1)  # what it said then is unknown: a retry


def _turn(seq: int, stamp: str | None, received: str = "2026-11-28T12:00:00Z") -> BufferedTurn:
    return BufferedTurn(Turn("user" if stamp else "assistant", f"turn {seq}", seq, timestamp=stamp), received)


def test_an_untimed_turn_among_timed_ones_makes_no_time_boundary() -> None:
    settings = ObserveSettings()
    pending = [_turn(i, None if i % 2 else f"2026-03-04T09:0{i // 2}:00Z") for i in range(12)]
    assert not decide_flush(pending, settings).flush
    late = [*pending, _turn(12, "2026-03-04T11:30:00Z")]  # a timed turn two and a half hours later does
    decision = decide_flush(late, settings)
    assert (decision.reason, decision.upto_seq) == ("time-elapsed", 11)


def test_untimed_turns_alone_still_flush_by_when_they_came() -> None:
    old, new = _turn(0, None, "2026-11-28T09:00:00Z"), _turn(1, None, "2026-11-28T12:00:00Z")
    decision = decide_flush([old, new], ObserveSettings())
    assert (decision.reason, decision.upto_seq) == ("time-elapsed", 0)


def test_a_mixed_transcript_observed_without_flush_waits_whole(memory: Memory) -> None:
    messages: list[dict[str, str]] = []
    for i in range(6):
        stamp = f"2026-03-04T09:0{i}:00Z"
        messages += [{"role": "user", "content": f"Service {i} runs on port 800{i}.", "timestamp": stamp}]
        messages += [{"role": "assistant", "content": "Noted."}]  # no time of its own, as hosts write it
    result = memory.observe_transcript("mixed", json.dumps(messages), fmt="openai")
    assert not result.flushes and result.pending == 12
