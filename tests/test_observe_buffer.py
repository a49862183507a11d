"""The session buffer: durable appends, retries buffered once, idempotent flushes; flush decisions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from remnic.config import ObserveSettings
from remnic.errors import ValidationError
from remnic.index.embed import get_embedder
from remnic.observe.buffer import BufferedTurn, SessionBuffer, flush_id_for
from remnic.observe.records import Turn
from remnic.observe.triggers import decide_flush


def turn(text: str, *, role: str = "user", turn_id: str | None = None, timestamp: str | None = None) -> Turn:
    return Turn(role=role, text=text, index=0, turn_id=turn_id, timestamp=timestamp)


def test_appends_number_turns_by_session_sequence_across_calls(tmp_path: Path) -> None:
    buffer = SessionBuffer(tmp_path, "agent:main")
    first = buffer.append([turn("We cut releases every Tuesday."), turn("Noted.", role="assistant")])
    second = SessionBuffer(tmp_path, "agent:main").append([turn("Ana owns billing.")])
    assert [t.index for t in first.turns] == [0, 1] and [t.index for t in second.turns] == [2]
    assert [b.turn.text for b in buffer.state().pending] == [
        "We cut releases every Tuesday.",
        "Noted.",
        "Ana owns billing.",
    ]


def test_retries_are_buffered_once(tmp_path: Path) -> None:
    buffer = SessionBuffer(tmp_path, "s")
    buffer.append([turn("a", turn_id="D1:1"), turn("same words")], now="2026-05-02T09:00:00.000Z")
    again = buffer.append([turn("a", turn_id="D1:1"), turn("same words")], now="2026-05-02T09:05:00.000Z")
    assert again.turns == () and again.duplicates == 2
    later = buffer.append([turn("same words")], now="2026-05-02T09:30:00.000Z")
    assert len(later.turns) == 1  # a genuine repeat after the retry window is kept
    assert len(buffer.state().pending) == 3


def test_flush_is_planned_persisted_and_marked_once(tmp_path: Path) -> None:
    buffer = SessionBuffer(tmp_path, "s", namespace="team")
    buffer.append([turn("one", turn_id="t1"), turn("two", turn_id="t2")])
    plan = buffer.begin_flush("explicit")
    assert plan is not None and (plan.first_seq, plan.last_seq) == (0, 1)
    assert plan.flush_id == flush_id_for("team", "s", 0, 1, plan.turns)
    assert plan.begun_at  # journaled with the plan: bounds the look-up of its commit
    assert plan.trailers()["Remnic-Turns"] == "0-1"
    buffer.append([turn("three", turn_id="t3")])  # arrives while the flush is being persisted
    # A crash here: the next flush returns the same open plan, never a bigger one.
    again = SessionBuffer(tmp_path, "s", namespace="team").begin_flush("turn-count")
    assert again == plan
    buffer.complete_flush(plan.flush_id)
    buffer.complete_flush(plan.flush_id)  # completing twice is harmless
    state = buffer.state()
    assert state.open_plan is None and [b.turn.text for b in state.pending] == ["three"]
    assert state.last_flush_at is not None and state.next_seq == 3
    # After compaction, sequence numbers and retry detection carry on.
    assert buffer.append([turn("one", turn_id="t1")]).duplicates == 1
    assert [t.index for t in buffer.append([turn("four")]).turns] == [3]
    lines = buffer.path.read_text().splitlines()
    assert json.loads(lines[0])["op"] == "base" and len(lines) == 3


def test_a_line_id_names_a_turn_only_with_its_words(tmp_path: Path) -> None:
    def line(text: str) -> Turn:
        return Turn(role="user", text=text, index=0, turn_id="L1", positional=True)

    buffer = SessionBuffer(tmp_path, "s")
    assert len(buffer.append([line("The port is 5432.")]).turns) == 1
    assert buffer.append([line("The port is 5432.")]).duplicates == 1  # the same file observed again
    assert len(buffer.append([line("The port is 5433.")]).turns) == 1  # line 1 of another transcript
    plan = buffer.begin_flush("explicit")
    assert plan is not None
    buffer.complete_flush(plan.flush_id)  # compacts the journal into its seen ids
    assert buffer.append([line("The port is 5433.")]).duplicates == 1
    assert len(buffer.append([line("Ben owns billing.")]).turns) == 1
    # A client's id with other words is another turn, named (a host's id read again is a retry: see
    # test_r36_observe_safety_buffer); a bare "L7" journaled before line ids carried their words
    # still makes its line a retry.
    host = buffer.append([turn("first words", turn_id="u1"), turn("other words", turn_id="u1")])
    assert (host.duplicates, host.reworded) == (0, ("u1",))
    old = SessionBuffer(tmp_path, "old")  # its journal's seen ids are bare
    old.path.write_text(json.dumps({"op": "base", "nextSeq": 0, "seenTurnIds": ["L7"]}) + "\n")
    assert old.append([Turn(role="user", text="new", index=0, turn_id="L7", positional=True)]).duplicates == 1


def test_partial_flush_keeps_the_turns_after_the_boundary(tmp_path: Path) -> None:
    buffer = SessionBuffer(tmp_path, "s")
    buffer.append([turn(f"turn {i}") for i in range(5)])
    plan = buffer.begin_flush("topic-shift", upto_seq=2)
    assert plan is not None and [t.index for t in plan.turns] == [0, 1, 2]
    buffer.complete_flush(plan.flush_id)
    assert [b.seq for b in buffer.state().pending] == [3, 4]
    assert buffer.begin_flush("explicit", upto_seq=1) is None  # nothing pending up to there


def test_a_torn_last_line_is_dropped_and_appends_continue(tmp_path: Path) -> None:
    buffer = SessionBuffer(tmp_path, "s")
    buffer.append([turn("kept")])
    with buffer.path.open("ab") as fh:
        fh.write(b'{"op":"turns","turns":[{"role":"user","te')  # a kill -9 mid-write
    assert [b.turn.text for b in buffer.state().pending] == ["kept"]
    buffer.append([turn("next")])
    assert [b.turn.text for b in buffer.state().pending] == ["kept", "next"]
    assert all(json.loads(line) for line in buffer.path.read_text().splitlines())


WRITER = """
import sys
from pathlib import Path
from remnic.observe.buffer import SessionBuffer
from remnic.observe.records import Turn
buffer = SessionBuffer(Path(sys.argv[1]), "crash")
for i in range(100000):
    buffer.append([Turn("user", f"turn {i} " + "x" * 2000, 0, turn_id=f"id{i}")])
    print(i, flush=True)
"""


def test_kill_9_loses_no_acknowledged_turn(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    acked = -1
    deadline = time.monotonic() + 60
    while acked < 40 and time.monotonic() < deadline:
        acked = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    acked = max([acked, *(int(x) for x in proc.stdout.read().split())])
    texts = [b.turn.text.split()[1] for b in SessionBuffer(tmp_path, "crash").state().pending]
    assert acked >= 40
    assert texts[: acked + 1] == [str(i) for i in range(acked + 1)]  # every acknowledged turn, in order


def buffered(texts: list[str], *, start: str = "2026-05-02T09:00:00Z", step_s: int = 60) -> list[BufferedTurn]:
    base = time.mktime(time.strptime(start, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    out = []
    for i, text in enumerate(texts):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + i * step_s))
        out.append(BufferedTurn(Turn("user", text, i, timestamp=stamp), stamp))
    return out


def test_events_and_turn_count_flush_everything() -> None:
    settings = ObserveSettings(buffer_max_turns=3)
    assert not decide_flush(buffered(["a", "b"]), settings).flush
    assert decide_flush(buffered(["a", "b"]), settings, event="compaction").reason == "compaction"
    decision = decide_flush(buffered(["a", "b", "c"]), settings)
    assert decision.reason == "turn-count" and decision.upto_seq is None
    assert not decide_flush([], settings, event="explicit").flush
    with pytest.raises(ValidationError, match="valid options: explicit, session-end, compaction, reset"):
        decide_flush(buffered(["a"]), settings, event="bedtime")


def test_time_flushes_the_turns_before_the_pause() -> None:
    settings = ObserveSettings(buffer_max_minutes=30)
    turns = buffered(["a", "b", "c", "d"], step_s=12 * 60)  # 0, 12, 24, 36 minutes
    decision = decide_flush(turns, settings)
    assert decision.reason == "time-elapsed" and decision.upto_seq == 2
    assert not decide_flush(turns, ObserveSettings(buffer_max_minutes=0)).flush


DESIGN = [
    "Let's design the caching layer for the product catalogue service.",
    "The cache should be per-tenant, not global, so one tenant's traffic cannot evict another's entries.",
    "For invalidation we publish catalogue change events and each tenant cache drops the affected keys.",
    "We will keep the cache TTL at five minutes and warm the hot keys after a deploy.",
]
DEBUG = [
    "The integration test test_checkout_flow fails again on CI with a timeout.",
    'Traceback (most recent call last): File "tests/test_checkout.py", line 88, in test_checkout_flow TimeoutError',
    "It only fails when the payment stub starts after the web worker; the fixture order is racy.",
    "Rerun pytest -x tests/test_checkout.py with -p no:randomly to see if the flake goes away.",
]


def test_topic_shift_flushes_before_the_new_topic_with_the_real_model() -> None:
    embed = get_embedder().embed
    settings = ObserveSettings()
    turns = buffered(DESIGN + DEBUG)
    decision = decide_flush(turns, settings, embed=embed)
    assert decision.reason == "topic-shift" and decision.upto_seq == 3, decision
    assert decision.similarity is not None and decision.similarity < settings.topic_similarity_floor
    same_topic = buffered(DESIGN + DESIGN[::-1])
    assert not decide_flush(same_topic, settings, embed=embed).flush
    # Only boundaries next to the new turns are judged.
    assert not decide_flush(turns, settings, embed=embed, new_from_seq=8).flush


def test_a_flush_id_names_what_the_turns_say_not_only_where_they_sit() -> None:
    said = [turn("one", turn_id="t1"), turn("two", turn_id="t2")]
    same = flush_id_for("team", "s", 0, 1, said)
    assert flush_id_for("team", "s", 0, 1, [turn("one", turn_id="t1"), turn("two", turn_id="t2")]) == same
    # A session key reused where the journal is not (a clone, a lost state folder): the numbering starts
    # again at 0, and other turns must not pass for the flush already committed.
    assert flush_id_for("team", "s", 0, 1, [turn("one", turn_id="t1"), turn("three", turn_id="t2")]) != same
    assert flush_id_for("team", "s", 0, 1, [turn("one", turn_id="x1"), turn("two", turn_id="t2")]) != same
    assert flush_id_for("other", "s", 0, 1, said) != same
