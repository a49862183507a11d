"""A transcript rewritten, truncated or replaced under a session's cursor loses no turn and repeats
none; a Codex IDE preamble after a host span is cut; a hook's parse cost follows the new lines (r31b)."""

from __future__ import annotations

import json
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

from remnic.drivers.hooks import observe_transcript
from remnic.observe.injected import strip_injected
from remnic.observe.jsonlines import parse_host_lines
from remnic.service.cursors import Cursor, CursorState, read_new_turns
from remnic.service.memory import Memory


def _claude(uuid: str, text: str, role: str = "user") -> dict[str, Any]:
    return {"type": role, "uuid": uuid, "sessionId": "s1", "message": {"role": role, "content": text}}


def _codex(text: str, role: str = "user", stamp: str | None = None) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    line: dict[str, Any] = {
        "type": "response_item",
        "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
    }
    if stamp:
        line["timestamp"] = stamp
    return line


META = {"type": "session_meta", "payload": {"id": "s1"}}


def _write(path: Path, lines: list[dict[str, Any]], mode: str = "w") -> None:
    with path.open(mode) as fh:
        fh.write("".join(json.dumps(x) + "\n" for x in lines))


def _archived(memory: Memory) -> list[dict[str, Any]]:
    rows = [
        json.loads(x)
        for f in (memory.root / "state" / "transcripts").rglob("*.jsonl")
        for x in f.read_text().splitlines()
    ]
    return sorted(rows, key=lambda r: r["turnIndex"])


def _stop(memory: Memory, path: Path, host: str = "claude-code", session: str = "s1") -> dict[str, Any]:
    payload = {"session_id": session, "transcript_path": str(path), "hook_event_name": "Stop"}
    return observe_transcript(memory, payload, host, "stop")


def test_a_transcript_rewritten_shorter_keeps_every_turn_never_handed_over(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _write(path, [_claude(f"u{i}", f"Old message {i}.") for i in range(10)])
    assert _stop(memory, path)["observed"] == 10
    _write(path, [_claude(f"n{i}", f"New message {i} after the rewrite.") for i in range(3)])
    out = _stop(memory, path)
    assert out["observed"] == 3 and "rewritten or truncated" in out["warning"]
    _write(path, [_claude(f"n{i}", f"New message {i} after the rewrite.") for i in range(3, 12)], "a")
    again = _stop(memory, path)
    assert again["observed"] == 9 and "warning" not in again  # the cursor now follows the new file
    new = [r["content"] for r in _archived(memory) if r["content"].startswith("New")]
    assert new == [f"New message {i} after the rewrite." for i in range(12)]
    # The old turns, written again as they were (same uuids), are repeats the buffer drops.
    _write(path, [_claude(f"u{i}", f"Old message {i}.") for i in range(10)])
    repeat = _stop(memory, path)
    assert repeat["observed"] == 0 and repeat["duplicateTurns"] == 10


def test_another_file_under_the_same_session_id_is_read_as_new(memory: Memory, tmp_path: Path) -> None:
    first, second = tmp_path / "b1.jsonl", tmp_path / "b2.jsonl"
    _write(first, [_claude(f"a{i}", f"First file turn {i}.") for i in range(5)])
    _stop(memory, first)
    _write(second, [_claude(f"b{i}", f"Second file turn {i}.") for i in range(5)])
    out = _stop(memory, second)
    assert out["observed"] == 5 and "another file" in out["warning"] and str(first) in out["warning"]
    cursor = json.loads(next((memory.root / "state" / "observe-cursors").rglob("*.json")).read_text())
    assert cursor["path"] == str(second) and cursor["lastIndex"] == 5


def test_a_rewritten_file_read_over_several_runs_keeps_the_lines_below_the_old_last_index(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _write(path, [_claude(f"u{i}", f"Old message number {i}.") for i in range(10)])
    cursor = Cursor(tmp_path / "state", "claude-code:s1", "default")
    cursor.save(read_new_turns(path, CursorState()).state)
    assert cursor.load().last_index == 10
    _write(path, [_claude(f"n{i}", f"New message number {i}.") for i in range(8)])
    line = len(json.dumps(_claude("n0", "New message number 0.")) + "\n")
    seen: list[int] = []
    while True:  # at most 3 lines a run: the rewrite's first run is followed by kept-cursor runs
        read = read_new_turns(path, cursor.load(), limit=3 * line)
        seen += [t.index for t in read.turns]
        cursor.save(read.state, restarted=read.rewritten is not None)
        if not read.bytes_left:
            break
    assert seen == list(range(1, 9))


def test_a_cursor_written_before_the_file_was_kept_reads_on_from_its_offset(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _write(path, [_claude("u0", "One."), _claude("u1", "Two.")])
    state = replace(read_new_turns(path, CursorState()).state, file="", path="")
    _write(path, [_claude("u2", "Three.")], "a")
    read = read_new_turns(path, state)
    assert read.rewritten is None and [t.text for t in read.turns] == ["Three."]


def test_a_codex_rollout_rewritten_with_a_longer_prefix_repeats_no_turn_without_an_id(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    said = [_codex("yes"), _codex("Deploy it.", "assistant"), _codex("Did it work?"), _codex("It did.", "assistant")]
    _write(path, [META, *said])
    assert _stop(memory, path, "codex")["observed"] == 4
    # A line more above them: every L<line> id shifts; "yes" said a second time is new.
    _write(path, [META, {"type": "turn_context", "payload": {"cwd": "/x"}}, *said, _codex("yes")])
    out = _stop(memory, path, "codex")
    assert out["observed"] == 1 and out["duplicateTurns"] == 4 and "warning" in out
    assert [(r["turnId"], r["content"]) for r in _archived(memory)] == [
        ("L2", "yes"),
        ("L3", "Deploy it."),
        ("L4", "Did it work?"),
        ("L5", "It did."),
        ("L7", "yes"),
    ]


def test_a_turn_with_the_same_words_but_another_timestamp_is_new_after_a_rewrite(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    _write(path, [META, _codex("Run the tests.", stamp="2026-01-05T10:00:00Z")])
    _stop(memory, path, "codex")
    _write(path, [META, META, _codex("Run the tests.", stamp="2026-01-05T10:00:00Z")])
    assert _stop(memory, path, "codex")["observed"] == 0
    _write(path, [META, _codex("Run the tests.", stamp="2026-01-06T09:00:00Z")], "a")  # said again, a day on
    out = _stop(memory, path, "codex")
    assert out["observed"] == 1 and "warning" not in out
    _write(path, [META, META, META, _codex("Run the tests.", stamp="2026-01-06T09:00:00Z")])
    assert _stop(memory, path, "codex")["observed"] == 0  # moved down again: both are archived
    assert [r["timestamp"] for r in _archived(memory)] == ["2026-01-05T10:00:00Z", "2026-01-06T09:00:00Z"]


BEFORE_PREAMBLE = (
    "<environment_context>\n  <cwd>/home/me/app</cwd>\n</environment_context>\n"
    "# Context from my IDE setup:\n\n## Active file: config/prod.env\n\n## Active selection of the file:\n"
    "DB_PASSWORD_HINT=blue-horse\n\n## My request for Codex:\nWe always deploy on Fridays.\n"
)


def test_a_host_span_before_the_codex_ide_preamble_does_not_let_the_context_through(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    _write(path, [META, _codex(BEFORE_PREAMBLE)])
    assert _stop(memory, path, "codex")["observed"] == 1
    assert [r["content"] for r in _archived(memory)] == ["We always deploy on Fridays."]
    # A selection quoting a host tag never closed must not swallow the request after it.
    quoted = BEFORE_PREAMBLE.replace("DB_PASSWORD_HINT=blue-horse", 'TAG = "<remnic-memory>"')
    assert strip_injected(quoted) == "We always deploy on Fridays."
    assert strip_injected("<environment_context>x</environment_context>\nPlain request.") == "Plain request."


def test_a_block_from_the_middle_is_numbered_without_padding_its_earlier_lines(tmp_path: Path) -> None:
    line = json.dumps(_claude("x", "Late turn."))
    parsed = parse_host_lines(line + "\n", 2_000_000)
    assert [(t.index, t.turn_id) for t in parsed.turns] == [(2_000_001, "x")]
    codex = parse_host_lines(json.dumps(_codex("Late.")) + "\n", 2_000_000)
    assert [(t.index, t.turn_id) for t in codex.turns] == [(2_000_001, "L2000001")]
    # A cursor deep into a session: the parse allocates for the new line, not one per earlier line.
    path = tmp_path / "t.jsonl"
    _write(path, [_claude("a", "Early.")])
    state = replace(read_new_turns(path, CursorState()).state, line=2_000_000)
    _write(path, [_claude("b", "Appended.")], "a")
    tracemalloc.start()
    try:
        read = read_new_turns(path, state)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(t.index, t.text) for t in read.turns] == [(2_000_001, "Appended.")]
    assert peak < 1_000_000  # padding 2M lines costs tens of MB
