"""The per-session trace buffer under ``state/``: append-only, crash-safe, flushed exactly once.

One JSONL journal per session (``state/observe-buffer/<namespace>/<session>.jsonl``) and a lock
file beside it. Each append is **one line** written with one ``write`` and fsync'd before it
returns, so a batch of turns is either wholly in the journal or, torn by a kill -9 before it was
acknowledged, discarded whole on the next read. Records:

- ``{"op": "turns", "turns": [...], "sessionKey", "namespace"}`` — turns numbered by the session's sequence (``seq``), which
  is their stable ``index`` across the session;
- ``{"op": "plan", "flushId", "from", "to", "reason", "at"}`` — a flush begun for turns from..to;
- ``{"op": "done", "flushId", "at"}`` — that flush is persisted;
- ``{"op": "seen", "seenTurnIds", "at", "sessionKey", "namespace"}`` — turns read again in other words
  and kept as first read (``reread``): their new words are a retry from now on (older code skips it);
- ``{"op": "base", "nextSeq", "seenTurnIds", "lastFlushAt", "sessionKey", "namespace"}`` — the head
  of a compacted journal.

The session key and namespace are in the records because file names are sanitised: a sweep of
idle sessions (:func:`idle_sessions`) finds them there.

A flush is idempotent in three steps the service runs under its write lock::

    plan = buffer.begin_flush(reason)          # journals the plan; returns an open plan if one exists
    if not ledger.has_flush(plan.flush_id):    # the commit trailers name plan.flush_id
        persist(plan_observations(plan.turns, ...), trailers=plan.trailers())
    buffer.complete_flush(plan.flush_id)       # journals "done", then compacts the journal

The flush id is derived from the namespace, session key, turn range and the turns themselves, so a
crash between the commit and ``complete_flush`` is recovered by finding that id in the commit
trailers: the same turns are never persisted twice, and none is lost — nor are other turns under a
reused key taken for them where the journal is not (a clone numbers from 0 again).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from remnic.fsio import write_atomic
from remnic.memfile.model import now_iso, parse_time
from remnic.repo.journal import StateDirError
from remnic.repo.lock import not_a_file

from .archive import archive_name
from .records import Turn

BUFFER_DIR = "observe-buffer"
SEEN_IDS_KEPT = 20_000  # turn ids remembered after compaction, for retry de-duplication


@dataclass(frozen=True)
class BufferedTurn:
    """A turn in the journal: ``turn.index`` is its session sequence number."""

    turn: Turn
    received_at: str

    @property
    def seq(self) -> int:
        return self.turn.index

    @property
    def time(self) -> float | None:
        """When it was said (its timestamp), else when remnic received it; epoch seconds."""
        return parse_time(self.turn.timestamp) or parse_time(self.received_at)

    @property
    def said_at(self) -> float | None:
        """When it was said by its own timestamp; None without one."""
        return parse_time(self.turn.timestamp)


@dataclass(frozen=True)
class FlushPlan:
    """Turns ``first_seq..last_seq`` of a session, to be persisted as one commit."""

    flush_id: str
    session_key: str
    namespace: str
    first_seq: int
    last_seq: int
    reason: str
    turns: tuple[Turn, ...]
    begun_at: str = ""
    """When the plan was journaled (its commit, if any, is newer): bounds the search for it in git."""

    def trailers(self) -> dict[str, str]:
        """Commit trailers that make the flush findable in git (and so never persisted twice)."""
        return {
            "Remnic-Flush-Id": self.flush_id,
            "Remnic-Session": self.session_key,
            "Remnic-Turns": f"{self.first_seq}-{self.last_seq}",
            "Remnic-Flush-Reason": self.reason,
        }


@dataclass(frozen=True)
class BufferState:
    """What the journal says now: unflushed turns (outside any open plan), the open plan, counters."""

    pending: tuple[BufferedTurn, ...]
    open_plan: FlushPlan | None
    next_seq: int
    last_flush_at: str | None


@dataclass(frozen=True)
class AppendResult:
    """Turns journaled by an append (renumbered), and how many were retries already buffered."""

    turns: tuple[Turn, ...]
    duplicates: int
    reworded: tuple[str, ...] = ()
    """Ids of turns taken although the session had a turn of that id with other words: no retry."""
    reread: tuple[str, ...] = ()
    """Host ids read again with other words: the turn the session has (counted in ``duplicates``)."""


def flush_id_for(namespace: str, session_key: str, first_seq: int, last_seq: int, turns: Sequence[Turn] = ()) -> str:
    """``flush_`` + a hash of where the turns come from and what they say: the same plan always gets
    the same id (a crash between its commit and ``done`` is found in git), while other turns under a
    reused session key and sequence — a clone, or a lost journal that numbers from 0 again — get
    another id instead of being taken for a flush already committed."""
    said = "\0".join(f"{t.turn_id or ''}\0{t.speaker or ''}\0{_fingerprint(t)}" for t in turns)
    digest = hashlib.sha256(f"{namespace}\0{session_key}\0{first_seq}\0{last_seq}\0{said}".encode()).hexdigest()
    return f"flush_{digest[:20]}"


def _fingerprint(turn: Turn) -> str:
    return hashlib.sha256(f"{turn.role}\0{turn.text}".encode()).hexdigest()[:24]


def _seen_key(turn: Turn) -> str:
    """What names a turn with an id among the session's seen ones: its id with its words. A retry
    repeats both (whatever time it is stamped with); other words under a seen id are another turn
    (:func:`_take`): line 1 of another transcript piped under the session key, a client's reused id."""
    assert turn.turn_id
    return f"{turn.turn_id}#{_fingerprint(turn)}"


def _seen_id(key: str) -> str:
    """The turn id of a seen key (a bare id: journaled before keys carried the words)."""
    head, sep, tail = key.rpartition("#")
    return head if sep and len(tail) == 24 else key


def _take(
    turns: Sequence[Turn],
    seq: int,
    seen: dict[str, None],
    recent: dict[str, float],
    at_epoch: float,
    retry_window_s: float,
) -> AppendResult:
    """The turns a session takes (renumbered from ``seq``) and how many are retries; ``seen`` and
    ``recent`` are updated as the journal would be.

    Other words under an id the session has seen are taken — dropped as a retry they were lost from
    memory and from the archive —, and named in ``reworded``; except a host's own id (a Claude Code
    ``uuid``) read again in a later call: it names one turn of the host's file, and the same file read
    again after remnic changed how it reads host text is a retry that must not be persisted twice
    (named in ``reread``), and line ids of the same transcript read again (:func:`_same_file_again`). A
    bare id in ``seen`` (journaled before keys carried the words) is a retry."""
    accepted: list[Turn] = []
    duplicates = 0
    reworded: list[str] = []
    reread: list[str] = []
    before = {_seen_id(k) for k in seen} if any(t.turn_id for t in turns) else set()  # the ids of earlier calls
    now: set[str] = set()  # the ids of this call
    reread_file = _same_file_again(turns, seen, before)
    for turn in turns:
        if turn.turn_id:
            key = _seen_key(turn)
            is_retry = key in seen or turn.turn_id in seen
            if not is_retry and turn.positional and reread_file and turn.turn_id in before:
                is_retry = True
                reread.append(turn.turn_id)
            elif not is_retry and not turn.positional:
                if turn.turn_id in before and turn.host_id:
                    is_retry = True
                    reread.append(turn.turn_id)
                elif turn.turn_id in before or turn.turn_id in now:
                    reworded.append(turn.turn_id)
                now.add(turn.turn_id)
            seen[key] = None
        else:
            fingerprint = _fingerprint(turn)
            is_retry = at_epoch - recent.get(fingerprint, float("-inf")) <= retry_window_s
            recent[fingerprint] = at_epoch
        if is_retry:
            duplicates += 1
            continue
        accepted.append(replace(turn, index=seq))
        seq += 1
    return AppendResult(tuple(accepted), duplicates, tuple(reworded), tuple(reread))


def _same_file_again(turns: Sequence[Turn], seen: dict[str, None], before: set[str]) -> bool:
    """Whether line ids (``L3``) seen with other words are the same transcript read again: most of its
    seen lines repeat their words. Text read by an older remnic was fingerprinted before the control
    characters and secrets it held were cleaned out, so those lines alone differ now, and taking them
    again would archive and remember them twice; another transcript under the session key shares few
    lines with the first at the same place, and its lines are taken."""
    same = other = 0
    for turn in turns:
        if turn.turn_id and turn.positional and turn.turn_id in before:
            if _seen_key(turn) in seen:
                same += 1
            else:
                other += 1
    return other > 0 and same >= other


class SessionBuffer:
    """The journal of one session. Every method takes the session's lock; safe across processes."""

    def __init__(self, state_dir: Path, session_key: str, namespace: str = "default") -> None:
        self.session_key = session_key
        self.namespace = namespace
        folder = state_dir / BUFFER_DIR / archive_name(namespace)
        self.path = folder / f"{archive_name(session_key)}.jsonl"
        self.lock_path = folder / f"{archive_name(session_key)}.lock"

    def _names(self) -> dict[str, str]:
        return {"sessionKey": self.session_key, "namespace": self.namespace}

    # --- journal I/O ---

    def unusable(self) -> str | None:
        """Why this session's buffer cannot be used (a folder where its journal or lock file belongs:
        one line naming it and the cure), else None."""
        return not_a_file(self.lock_path) or not_a_file(self.path, "a session's buffered turns")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        said = self.unusable()
        if said is not None:
            raise StateDirError(said)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def _records(self) -> list[dict[str, Any]]:
        """Every complete record; a torn last line (never acknowledged) or a corrupt one is skipped."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except IsADirectoryError:
            raise StateDirError(not_a_file(self.path, "a session's buffered turns") or str(self.path)) from None
        complete = data[: data.rfind(b"\n") + 1]
        records = []
        for raw in complete.splitlines():
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("op"), str):
                records.append(record)
        return records

    def _append_record(self, record: dict[str, Any], *, durable: bool = True) -> None:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size:  # cut a torn tail so the new record starts on a line of its own
                os.lseek(fd, size - 1, os.SEEK_SET)
                if os.read(fd, 1) != b"\n":
                    tail = self.path.read_bytes()
                    os.ftruncate(fd, tail.rfind(b"\n") + 1)
            os.write(fd, line)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)

    # --- reading state ---

    def _replay(self, records: list[dict[str, Any]]) -> tuple[BufferState, dict[str, None], dict[str, float]]:
        turns: dict[int, BufferedTurn] = {}
        plans: dict[str, dict[str, Any]] = {}
        done: set[str] = set()
        seen: dict[str, None] = {}  # insertion-ordered: the newest ids survive the cap
        recent: dict[str, float] = {}
        next_seq, last_flush_at = 0, None
        for record in records:
            op = record["op"]
            if op == "base":
                next_seq = int(record.get("nextSeq", 0))
                seen.update(dict.fromkeys(str(t) for t in record.get("seenTurnIds", [])))
                recent.update({str(k): float(v) for k, v in record.get("recentTexts", {}).items()})
                last_flush_at = record.get("lastFlushAt")
            elif op == "turns":
                for item in record.get("turns", []):
                    buffered = BufferedTurn(Turn.from_dict(item), str(record.get("at", "")))
                    turns[buffered.seq] = buffered
                    next_seq = max(next_seq, buffered.seq + 1)
            elif op == "seen":
                seen.update(dict.fromkeys(str(t) for t in record.get("seenTurnIds", [])))
            elif op == "plan":
                plans[record["flushId"]] = record
            elif op == "done":
                done.add(record["flushId"])
                last_flush_at = record.get("at", last_flush_at)
        flushed: set[int] = set()
        open_plan = None
        for flush_id, plan in plans.items():
            span = range(int(plan["from"]), int(plan["to"]) + 1)
            if flush_id in done:
                flushed.update(span)
            elif open_plan is None:
                open_plan = FlushPlan(
                    flush_id,
                    self.session_key,
                    self.namespace,
                    span.start,
                    span.stop - 1,
                    str(plan.get("reason", "")),
                    tuple(turns[s].turn for s in span if s in turns),
                    str(plan.get("at", "")),
                )
        held = set(range(open_plan.first_seq, open_plan.last_seq + 1)) if open_plan else set()
        pending = tuple(turns[s] for s in sorted(turns) if s not in flushed and s not in held)
        for seq in sorted(turns):
            buffered = turns[seq]
            received = parse_time(buffered.received_at)
            if buffered.turn.turn_id:
                seen[_seen_key(buffered.turn)] = None
            elif received is not None:
                recent[_fingerprint(buffered.turn)] = received
        return BufferState(pending, open_plan, next_seq, last_flush_at), seen, recent

    def state(self) -> BufferState:
        with self._locked():
            return self._replay(self._records())[0]

    # --- writing ---

    def append(self, turns: Sequence[Turn], *, now: str | None = None, retry_window_s: float = 600.0) -> AppendResult:
        """Journal the turns durably (one fsync'd line) and return them renumbered by session sequence.

        A turn whose ``turn_id`` the session has seen with the same role and words, or one without an id
        repeating them within ``retry_window_s`` of receipt, is a retry and is not journaled again; other
        words under a seen id are taken (``reworded``), but for a host's id read again (``reread``).
        """
        at = now or now_iso()
        with self._locked():
            state, seen, recent = self._replay(self._records())
            result = _take(turns, state.next_seq, seen, recent, parse_time(at) or 0.0, retry_window_s)
            if result.turns:
                self._append_record(
                    {"op": "turns", "at": at, "turns": [t.to_dict(journal=True) for t in result.turns], **self._names()}
                )
            if result.reread:  # warned once: the same words again are a plain retry
                keys = [_seen_key(t) for t in turns if t.turn_id in result.reread]
                self._append_record({"op": "seen", "at": at, "seenTurnIds": keys, **self._names()})
            return result

    def preview(
        self, turns: Sequence[Turn], *, now: str | None = None, retry_window_s: float = 600.0
    ) -> tuple[BufferState, AppendResult]:
        """What ``append`` would take, with the state it would add to. Nothing is written, not even the
        lock file: a dry run reads the journal as it is (appends are whole lines; a torn one is skipped)."""
        state, seen, recent = self._replay(self._records())
        at_epoch = parse_time(now or now_iso()) or 0.0
        return state, _take(turns, state.next_seq, seen, recent, at_epoch, retry_window_s)

    def begin_flush(self, reason: str, *, upto_seq: int | None = None, now: str | None = None) -> FlushPlan | None:
        """Journal a flush of the pending turns (up to ``upto_seq``); None when there is nothing to flush.

        An open plan (begun, never completed: a crash mid-flush) is returned as it is, whatever the
        arguments: it must be finished before anything else is flushed.
        """
        with self._locked():
            state = self._replay(self._records())[0]
            if state.open_plan is not None:
                return state.open_plan
            turns = [b.turn for b in state.pending if upto_seq is None or b.seq <= upto_seq]
            if not turns:
                return None
            first, last = turns[0].index, turns[-1].index
            at = now or now_iso()
            plan = FlushPlan(
                flush_id_for(self.namespace, self.session_key, first, last, turns),
                self.session_key,
                self.namespace,
                first,
                last,
                reason,
                tuple(turns),
                at,
            )
            self._append_record(
                {
                    "op": "plan",
                    "flushId": plan.flush_id,
                    "from": first,
                    "to": last,
                    "reason": reason,
                    "at": at,
                }
            )
            return plan

    def complete_flush(self, flush_id: str, *, now: str | None = None) -> None:
        """Mark a begun flush persisted, then compact the journal to the turns still pending."""
        at = now or now_iso()
        with self._locked():
            state, seen, recent = self._replay(self._records())
            if state.open_plan is None or state.open_plan.flush_id != flush_id:
                return  # already completed (or never begun): completing twice is harmless
            # Not fsync'd: the compaction right after durably drops the plan, and a plan found open
            # after a power cut is resumed as a replay of its commit.
            self._append_record({"op": "done", "flushId": flush_id, "at": at}, durable=False)
            self._compact(state, seen, recent, at)

    def _compact(self, state: BufferState, seen: dict[str, None], recent: dict[str, float], flushed_at: str) -> None:
        """Rewrite the journal atomically as a base record plus the turns still pending.

        The base keeps what retry detection needs: the session's turn ids and the recent texts.
        """
        lines: list[dict[str, Any]] = [
            {
                "op": "base",
                "nextSeq": state.next_seq,
                "seenTurnIds": list(seen)[-SEEN_IDS_KEPT:],
                "recentTexts": dict(list(recent.items())[-SEEN_IDS_KEPT:]),
                "lastFlushAt": flushed_at,
                **self._names(),
            }
        ]
        for buffered in state.pending:
            lines.append({"op": "turns", "at": buffered.received_at, "turns": [buffered.turn.to_dict(journal=True)]})
        text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in lines)
        write_atomic(self.path, text, mode=0o600)


def idle_sessions(state_dir: Path, idle_s: float, *, now: float | None = None) -> list[tuple[str, str]]:
    """``(namespace, session key)`` of every journal not written to for ``idle_s`` seconds that may
    still hold unflushed turns (a session whose host never said it ended), oldest first.

    Journals from before the records named their session are skipped: their key is unknown.
    """
    import time

    now = time.time() if now is None else now
    found: list[tuple[float, str, str]] = []
    for path in (state_dir / BUFFER_DIR).glob("*/*.jsonl"):
        try:
            mtime = path.stat().st_mtime
            if now - mtime < idle_s:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        lines = text.splitlines()
        if not any('"op":"turns"' in line for line in lines):
            continue  # only a base record: nothing pending
        for line in reversed(lines):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("sessionKey"), str):
                found.append((mtime, str(record.get("namespace") or "default"), record["sessionKey"]))
                break
    return [(ns, key) for _, ns, key in sorted(found)]


@dataclass(frozen=True)
class Waiting:
    """A session buffer holding turns no flush has persisted yet (see :func:`waiting_sessions`)."""

    namespace: str
    session_key: str
    turns: int
    oldest: float | None
    """When the oldest of them was received (epoch s)."""
    interrupted: bool
    """A flush was begun and never completed (a crash): the next call for the session finishes it."""


def waiting_sessions(state_dir: Path) -> list[Waiting]:
    """Every session whose buffer holds unflushed turns, oldest first (for `remnic doctor`)."""
    out = []
    for namespace, key in idle_sessions(state_dir, 0.0):
        buffer = SessionBuffer(state_dir, key, namespace)
        if buffer.unusable() is not None:  # doctor names it in a check of its own
            continue
        state = buffer.state()
        held = list(state.open_plan.turns) if state.open_plan else []
        times = [t for t in (parse_time(b.received_at) for b in state.pending) if t is not None]
        if state.pending or held:
            out.append(Waiting(namespace, key, len(state.pending) + len(held), min(times, default=None), bool(held)))
    return out
