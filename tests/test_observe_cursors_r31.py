"""An agent hook reads only what the host appended to its transcript, with a cap per run (r31)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from remnic.drivers.hooks import observe_transcript
from remnic.service.cursors import Cursor, CursorState, read_new_turns
from remnic.service.memory import Memory


def _claude(i: int, text: str, role: str = "user") -> dict[str, Any]:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    return {"type": role, "uuid": f"{role[0]}{i}", "message": {"role": role, "content": content}}


def _codex(text: str, role: str = "user") -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return {
        "type": "response_item",
        "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
    }


TOOL_RESULT = {
    "type": "user",
    "uuid": "tool",
    "toolUseResult": {},
    "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x" * 5000}]},
}


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


def _cursor(memory: Memory, session: str) -> dict[str, Any]:
    return json.loads(next((memory.root / "state" / "observe-cursors").rglob(f"*{session}*.json")).read_text())


def _stop(memory: Memory, path: Path, session: str = "s1", host: str = "codex") -> dict[str, Any]:
    payload = {"session_id": session, "transcript_path": str(path), "hook_event_name": "Stop"}
    return observe_transcript(memory, payload, host, "stop")


def test_a_stop_reads_only_the_bytes_appended_and_turn_indexes_stay_those_of_a_full_read(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "rollout.jsonl"
    # Codex messages without ids: a turn's id is its line number, so a wrong count would show.
    _write(path, [{"type": "session_meta", "payload": {"id": "s1"}}, _codex("We deploy on Tuesdays."), TOOL_RESULT])
    first = _stop(memory, path)
    assert first["observed"] == 1 and first["transcriptBytesRead"] == path.stat().st_size
    assert _cursor(memory, "s1")["offset"] == path.stat().st_size and _cursor(memory, "s1")["line"] == 3
    assert _stop(memory, path)["transcriptBytesRead"] == 0  # nothing new: nothing read
    size = path.stat().st_size
    _write(path, [_codex("Noted.", "assistant"), TOOL_RESULT, _codex("And staging on Mondays.")], "a")
    again = _stop(memory, path)
    assert again["observed"] == 2 and again["transcriptBytesRead"] == path.stat().st_size - size
    assert [(r["turnId"], r["content"]) for r in _archived(memory)] == [
        ("L2", "We deploy on Tuesdays."),
        ("L4", "Noted."),
        ("L6", "And staging on Mondays."),
    ]


def test_an_older_cursor_with_only_last_index_is_read_in_full_once_then_upgraded(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "session.jsonl"
    _write(path, [_claude(1, "Old turn one."), _claude(2, "Old reply.", "assistant"), _claude(3, "The new turn.")])
    real = Cursor(memory.durable_dir, "claude-code:s2", "default").path  # where an older remnic wrote it
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text('{"lastIndex": 2}\n')
    out = _stop(memory, path, "s2", "claude-code")
    assert out["observed"] == 1 and [r["content"] for r in _archived(memory)] == ["The new turn."]
    upgraded = json.loads(real.read_text())
    assert upgraded["lastIndex"] == 3 and upgraded["offset"] == path.stat().st_size and upgraded["line"] == 3


def test_a_rewritten_transcript_is_read_from_its_start_again(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _write(path, [_claude(1, "First words."), _claude(2, "Reply.", "assistant")])
    _stop(memory, path, "s3", "claude-code")
    # Rewritten in place (same length before the old offset, other bytes): the offset is not trusted.
    _write(path, [_claude(1, "Fir5t words."), _claude(2, "Reply.", "assistant"), _claude(3, "A third turn.")])
    out = _stop(memory, path, "s3", "claude-code")
    assert out["transcriptBytesRead"] == path.stat().st_size
    assert [r["content"] for r in _archived(memory)] == ["First words.", "Reply.", "A third turn."]
    # Truncated below the offset: read again from the start, turns already taken skipped.
    _write(path, [_claude(1, "First words.")])
    assert _stop(memory, path, "s3", "claude-code")["observed"] == 0


def test_one_run_reads_at_most_the_limit_and_the_next_run_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    turns = [_claude(i, f"Turn number {i} of the session.") for i in range(1, 21)]
    _write(path, turns)
    line = len(json.dumps(turns[0]) + "\n")
    state, seen, runs = CursorState(), [], 0
    while True:
        read = read_new_turns(path, state, limit=5 * line)
        runs += 1
        assert read.bytes_read <= 5 * line
        seen += [t.index for t in read.turns]
        state = read.state
        if not read.bytes_left:
            break
    assert seen == list(range(1, 21)) and runs >= 4


def test_a_line_longer_than_the_limit_is_skipped_and_the_lines_after_it_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _write(path, [_claude(1, "Before."), {**TOOL_RESULT, "pad": "z" * 20000}, _claude(3, "After.")])
    state, seen = CursorState(), []
    for _ in range(10):
        read = read_new_turns(path, state, limit=4096)
        seen += [(t.index, t.text) for t in read.turns]
        state = read.state
        if not read.bytes_left:
            break
    assert seen == [(1, "Before."), (3, "After.")]


def test_a_half_written_last_line_is_read_again_once_complete(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    whole = json.dumps(_claude(2, "The second turn.")) + "\n"
    _write(path, [_claude(1, "The first turn.")])
    with path.open("a") as fh:
        fh.write(whole[:30])
    assert _stop(memory, path, "s4", "claude-code")["observed"] == 1
    with path.open("a") as fh:
        fh.write(whole[30:])
    assert _stop(memory, path, "s4", "claude-code")["observed"] == 1
    assert [r["content"] for r in _archived(memory)] == ["The first turn.", "The second turn."]


def test_a_json_line_holding_a_raw_line_separator_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    # JSON.stringify leaves U+2028 and U+0085 raw: they are characters of the line, not breaks.
    path.write_text(
        json.dumps(_claude(1, "one\u2028two\x85three"), ensure_ascii=False)
        + "\n"
        + json.dumps(_claude(2, "Next."))
        + "\n",
        encoding="utf-8",
    )
    read = read_new_turns(path, CursorState())
    assert [(t.index, t.text) for t in read.turns] == [(1, "one\u2028two\x85three"), (2, "Next.")]


def test_a_path_that_is_no_regular_file_is_refused_with_the_field_named(memory: Memory, tmp_path: Path) -> None:
    out = _stop(memory, Path("/dev/zero"))
    assert (
        out["observed"] == 0
        and out["error"] == "transcript_path: /dev/zero is a device; it must name the host's transcript file"
    )
    assert "directory" in _stop(memory, tmp_path)["error"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_transcript_path_does_not_hang_the_hook(memory: Memory, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    payload = json.dumps({"session_id": "f", "transcript_path": str(fifo), "hook_event_name": "Stop"})
    status = tmp_path / "status.json"
    env = {**os.environ, "REMNIC_MEMORY_DIR": str(memory.root), "REMNIC_HOOK_STATUS": str(status)}
    proc = subprocess.run(
        [sys.executable, "-m", "remnic", "hooks", "run", "stop", "--host", "codex"],
        input=payload, capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    reported = json.loads(status.read_text())
    assert reported["ok"] is False and "pipe (FIFO)" in reported["error"] and str(fifo) in reported["error"]


def test_lines_longer_than_a_block_are_parsed_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from remnic.service import cursors

    monkeypatch.setattr(cursors, "BLOCK", 64)  # every line below spans several blocks
    path = tmp_path / "session.jsonl"
    _write(path, [_claude(i, f"Turn {i}: " + "words " * 30) for i in range(1, 6)])
    read = read_new_turns(path, CursorState())
    assert [t.index for t in read.turns] == [1, 2, 3, 4, 5] and read.bytes_left == 0
    assert read.state.offset == path.stat().st_size and read.state.line == 5
