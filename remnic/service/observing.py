"""Observation through the service: conversation turns become memories, with no LLM.

``observe`` validates the messages, archives them, journals them in the session's
buffer and asks the flush triggers whether to flush. A flush plans observations
(:func:`remnic.observe.pipeline.plan_observations`) and persists them as one plan of
the write transaction, one commit per flush (:mod:`.flushing`).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from remnic.errors import RepoBusyError, ValidationError
from remnic.memfile.model import now_iso
from remnic.memfile.validate import check_namespace
from remnic.observe.archive import MAX_SESSION_KEY, archive
from remnic.observe.buffer import BufferedTurn, SessionBuffer, flush_id_for, idle_sessions
from remnic.observe.dates import names_a_date
from remnic.observe.language import english_cues_warning
from remnic.observe.lcm.store import session_file
from remnic.observe.records import MemoryObservation, Turn
from remnic.observe.secrets import redact_secrets
from remnic.observe.transcripts import parse_transcript, turns_from_messages
from remnic.observe.triggers import FLUSH_EVENTS, Embed, decide_flush
from remnic.repo.lock import READ_ONLY_ERRNOS

from .cursors import READ_LIMIT, Cursor, FileRead, read_new_turns
from .flush_runs import flush_due

if TYPE_CHECKING:
    from collections.abc import Callable

    from .flushing import FlushResult
    from .memory import Memory

    Progress = Callable[[int, int], None]

log = logging.getLogger("remnic")

__all__ = [
    "FileRead",
    "ObserveResult",
    "observe",
    "observe_transcript",
    "observe_transcript_file",
    "parse_transcript",
]


@dataclass(frozen=True)
class ObserveResult:
    """What one ``observe`` call did: turns taken in, flushes run, observations made."""

    session_key: str
    namespace: str
    received: int
    buffered: int
    duplicates: int
    pending: int
    flushes: tuple[FlushResult, ...] = ()
    dry_run: bool = False
    planned: tuple[MemoryObservation, ...] = ()
    """With ``dry_run``: the observations the flushes of :attr:`would_flush` would make (nothing is written)."""
    would_flush: tuple[FlushResult, ...] = ()
    """With ``dry_run``: the flushes the same call without it would run (no commit, ``predicted``: their
    created/reinforced/superseded counts are not computed); ``pending`` is then the turns it would leave
    waiting."""
    archive_path: str | None = None
    """Where the new turns were archived (``state/transcripts/…``); None when no turn was new."""
    first_turn_index: int | None = None
    """The archive's number for the first new turn (turns are numbered per session)."""
    reworded: tuple[str, ...] = ()
    """Ids of turns taken although the session had seen the id with other words (see :meth:`warnings`)."""
    reread: tuple[str, ...] = ()
    """Host ids read again with other words: the turns the session has, counted among the duplicates."""
    deferred: str | None = None
    """Why flushes that were due stopped with turns left in the buffer (a hook's time budget was spent)."""
    skipped: tuple[tuple[str, str], ...] = ()
    """(field, why) of each message that held no text (tool calls and results, images): no turn was made."""
    language: str | None = None
    """Why turns in another language yield nothing (:func:`~remnic.observe.language.english_cues_warning`)."""

    def warnings(self) -> list[str]:
        """What the caller should know of the turns: ids reused with other words, relative dates left
        as said (:meth:`undated_warning`)."""
        undated = self.undated_warning()
        skipped = [f"{field}: {why}" for field, why in self.skipped]
        return skipped + self.turn_id_warnings() + [w for w in (undated, self.language) if w]

    def turn_id_warnings(self) -> list[str]:
        return [
            f"turn id {i!r} was seen before in this session with other words: taken as a new turn "
            "(a retry repeats a turn's id and its words)"
            for i in self.reworded
        ] + [
            f"turn id {i!r} was read before with other words: kept as first read (the id names one turn "
            "of the transcript, a host's or a line's; remnic may read its text differently now)"
            for i in self.reread
        ]

    def undated(self) -> list[MemoryObservation]:
        """Facts that keep a relative date ("yesterday") because their turns had no timestamp to resolve
        it against (the receipt time is not used: observing the same transcript again must give the same
        facts)."""
        return [o for o in self.observations if o.valid_at is None and names_a_date(o.fact.content)]

    def undated_warning(self) -> str | None:
        undated = self.undated()
        if not undated:
            return None
        turns = sorted({t for o in undated for t in o.source_turn_ids})
        shown = ", ".join(turns[:5]) + (" …" if len(turns) > 5 else "")
        return (
            f'{len(undated)} fact(s) keep a relative date ("yesterday", "last week") as said: turn(s) '
            f"{shown} have no timestamp to make it absolute; give each message a timestamp"
        )

    @property
    def observations(self) -> list[MemoryObservation]:
        return list(self.planned) + [o for f in self.flushes for o in f.observations]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "sessionKey": self.session_key,
            "namespace": self.namespace,
            "dryRun": self.dry_run,
            "turnsReceived": self.received,
            "turnsBuffered": self.buffered,
            "duplicateTurns": self.duplicates,
            "pendingTurns": self.pending,
            "flushes": [f.to_dict() for f in (self.would_flush if self.dry_run else self.flushes)],
            "observations": [o.to_dict() for o in self.observations],
            "turnsSkipped": len(self.skipped),
            "archivePath": self.archive_path,
            "firstTurnIndex": self.first_turn_index,
            "lcmArchived": self.archive_path is not None,  # true only when this call archived a turn
        }
        if self.deferred:
            out["flushDeferred"] = self.deferred
        warnings = [{"field": field, "message": why} for field, why in self.skipped]
        warnings += [{"field": "turnId", "message": w} for w in self.turn_id_warnings()]
        undated = self.undated_warning()
        if undated:
            warnings.append({"field": "timestamp", "message": undated})
        if self.language:
            warnings.append({"field": "language", "message": self.language})
        if warnings:
            out["warnings"] = warnings
        return out


def observe(
    mem: Memory,
    session_key: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    namespace: str | None = None,
    source: str = "api",
    flush: bool = False,
    event: str | None = None,
    dry_run: bool = False,
    extract: bool = True,
) -> ObserveResult:
    """Take conversation messages into the session's buffer and flush it when a trigger says so
    (``extract=False``: archive them only). No messages with ``flush`` flushes what the session holds,
    as ``remnic observe - --flush </dev/null`` does. A message with no text (only tool or image blocks)
    is no turn: it is counted in ``skipped`` and named in the warnings."""
    check_event(event)
    turns = turns_from_messages(messages, allow_empty=flush)
    result = observe_turns(
        mem,
        session_key,
        turns,
        namespace=namespace,
        source=source,
        flush=flush,
        event=event,
        dry_run=dry_run,
        extract=extract,
    )
    skipped = _skipped(messages, {t.index for t in turns})
    return replace(result, skipped=skipped) if skipped else result


def _skipped(messages: Sequence[Mapping[str, Any]], taken: set[int]) -> tuple[tuple[str, str], ...]:
    """(field, why) of each message that became no turn: nothing of it is buffered or archived."""
    out = []
    for i, msg in enumerate(messages):
        if i in taken:
            continue
        content = msg.get("content")
        kinds = (
            sorted({str(b.get("type")) for b in content if isinstance(b, Mapping)}) if isinstance(content, list) else []
        )
        said = f"only {', '.join(kinds)} blocks" if kinds else "no words (empty, or only context a host injected)"
        why = f"no text to observe ({said}): not archived, not buffered; only text content is observed"
        out.append((f"messages[{i}].content", why))
    return tuple(out)


def observe_transcript(
    mem: Memory,
    session_key: str,
    text: str,
    *,
    fmt: str = "auto",
    name: str = "transcript",
    namespace: str | None = None,
    source: str = "api",
    flush: bool = False,
    event: str | None = None,
    dry_run: bool = False,
    strict: bool = True,
    only_new: bool = False,
    progress: Progress | None = None,
) -> ObserveResult:
    """Observe a whole transcript file's text (any supported format). ``progress(done, total)``
    hears each turn of a flush extracted.

    With ``only_new`` the turns at or before this session's cursor (the last turn index an earlier
    call took) are skipped; a turn taken twice anyway is a retry the buffer keeps once.
    """
    check_event(event)
    parsed = parse_transcript(text, fmt, source=name, strict=strict)
    turns = list(parsed.turns)
    ns = namespace or mem.settings.namespaces.default
    cursor = Cursor(mem.durable_dir, session_key, ns) if only_new and not dry_run else None
    if cursor is not None:
        last = cursor.read()
        turns = [t for t in turns if t.index > last]
    result = observe_turns(
        mem,
        session_key,
        turns,
        namespace=ns,
        source=source,
        flush=flush,
        event=event,
        dry_run=dry_run,
        progress=progress,
    )
    if cursor is not None and parsed.turns:
        cursor.write(max(t.index for t in parsed.turns))
    return result


def observe_transcript_file(
    mem: Memory,
    session_key: str,
    path: str,
    *,
    namespace: str | None = None,
    source: str = "api",
    event: str | None = None,
    deadline: float | None = None,
) -> tuple[ObserveResult, FileRead]:
    """Observe what a host appended to its transcript file since this session's last call (an agent
    hook after each response): read from the byte where that call stopped, at most
    :data:`~.cursors.READ_LIMIT` bytes a call (see :mod:`.cursors`). A path that is not a regular
    file is a ValidationError naming ``transcript_path``; an unreadable one an OSError.

    A file rewritten since (or another file under the session id) is read from its start again: the
    buffer drops the turns it has seen by host id, and :func:`_not_archived` those without one.

    The cursor moves on once the new turns are journaled (fsync'd) and archived, before any flush; the
    flushes due then run in chunks of at most :data:`~.flush_runs.HOOK_FLUSH_TURNS` turns, each its own commit, and
    none is begun past ``deadline`` (``time.monotonic()``; default :func:`hook_deadline`): what is left
    stays buffered (``deferred`` says so) for the next hook, a running server or ``remnic observe --flush``.
    A hook the host kills keeps the turns it read and the chunks it committed."""
    check_event(event)
    deadline = hook_deadline(mem) if deadline is None else deadline
    ns = namespace or mem.settings.namespaces.default
    cursor = Cursor(mem.durable_dir, session_key, ns)
    state = cursor.load()
    read = read_new_turns(path, state)
    turns = _not_archived(mem, ns, session_key, read.turns) if read.recheck else read.turns
    if state.offset is None or read.rewritten is not None or read.recheck:
        # Read from the file's start: a fork's copies of its parent's lines are there, if anywhere.
        turns = _seen_elsewhere(mem, ns, session_key, turns)
    result = observe_turns(
        mem,
        session_key,
        turns,
        namespace=ns,
        source=source,
        flush=False,
        event=event,
        dry_run=False,
        deadline=deadline,
        # Journaled and archived: read again, they would only be found to be retries.
        taken=lambda: cursor.save(read.state, restarted=read.rewritten is not None),
    )
    if len(turns) < len(read.turns):  # re-read turns found in the archive count as repeats
        result = replace(result, received=len(read.turns), duplicates=result.duplicates + len(read.turns) - len(turns))
    return result, read


def hook_deadline(mem: Memory) -> float:
    """The ``time.monotonic()`` past which an agent hook begins no flush: ``observe.hookBudgetS`` from now."""
    return time.monotonic() + mem.settings.observe.hook_budget_s


_LINE_ID = re.compile(r"L\d+")


def _seen_elsewhere(mem: Memory, namespace: str, session_key: str, turns: Sequence[Turn]) -> list[Turn]:
    """The turns minus those whose host id (a Claude Code ``uuid``) is archived under another session of
    the same host (``<host>:`` keys) in ``namespace``: a forked or branched session starts with a copy of
    its parent's lines, uuids and timestamps kept, which its parent's hooks handed over already. Asked of
    the archive's search index (:meth:`~remnic.observe.lcm.index.LcmIndex.turn_ids_elsewhere`), only when
    the namespace has another session's archive; without the index the turns are all kept, and a
    copied turn then never reinforces the memories it made (:func:`~remnic.observe.records.said_before`)."""
    host, colon, _ = session_key.partition(":")
    ids = [t.turn_id for t in turns if t.turn_id and t.host_id]  # a caller's "1" is not the parent's "1"
    if not colon or not ids:
        return list(turns)
    own = session_file(mem.root, namespace, session_key)
    try:
        others = any(p.name != own.name for p in own.parent.glob("*.jsonl"))
    except OSError:
        others = False
    if not others:
        return list(turns)
    try:
        from remnic.observe.lcm.index import LcmIndex  # tantivy loads only when another session may hold them

        seen = LcmIndex(mem.root).turn_ids_elsewhere(
            ids, namespace=namespace, session_prefix=f"{host}:", session_key=session_key
        )
    except Exception:  # a cache that cannot answer (read-only, corrupt): observe as before
        log.warning("cannot look up %s's turns in the archive index; observing them all", session_key, exc_info=True)
        return list(turns)
    return [t for t in turns if not t.host_id or t.turn_id not in seen]


def _not_archived(mem: Memory, namespace: str, session_key: str, turns: Sequence[Turn]) -> list[Turn]:
    """The turns of a rewritten transcript minus those without a host id (``L<line>``: it shifts
    when lines are added or removed above) already in the session's archive with the same role,
    words and timestamp. Each archived turn stands for one re-read turn, so words said again more
    often than archived are kept; the archive's last :data:`~.cursors.READ_LIMIT` bytes are read
    (a rewrite moves a turn a few lines, not past a run's whole read)."""
    if not any(t.positional for t in turns):
        return list(turns)
    path = session_file(mem.root, namespace, session_key)
    try:
        with path.open("rb") as fh:
            start = max(0, fh.seek(0, 2) - READ_LIMIT)
            fh.seek(start)
            lines = fh.read().split(b"\n")[1 if start else 0 :]
    except FileNotFoundError:
        return list(turns)
    archived: Counter[tuple[str, str, str | None]] = Counter()
    for raw in lines:
        if b'"L' not in raw:
            continue  # no line id in it: not the kind of turn checked here
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("turnId"), str) and _LINE_ID.fullmatch(row["turnId"]):
            archived[(str(row.get("role")), str(row.get("content")), row.get("timestamp"))] += 1
    scan = mem.settings.store.scan_secrets  # the archive holds the words as observe_turns left them
    out = []
    for turn in turns:
        key = (turn.role, redact_secrets(turn.text) if scan else turn.text, turn.timestamp or None)
        if turn.positional and archived[key] > 0:
            archived[key] -= 1
            continue
        out.append(turn)
    return out


def check_event(event: str | None) -> None:
    """A flush event must be one the triggers know: checked before anything is written."""
    if event is not None and event not in FLUSH_EVENTS:
        raise ValidationError.single("event", f"unknown flush event {event!r}", options=FLUSH_EVENTS)


def observe_turns(mem: Memory, session_key: str, turns: Sequence[Turn], **how: Any) -> ObserveResult:
    """:func:`_observe_turns`, saying when turns are in a language the extraction cues cannot read."""
    result = _observe_turns(mem, session_key, turns, **how)
    said = english_cues_warning(turns) if how.get("extract", True) else None
    return replace(result, language=said) if said else result


def _observe_turns(
    mem: Memory,
    session_key: str,
    turns: Sequence[Turn],
    *,
    namespace: str | None,
    source: str,
    flush: bool,
    event: str | None,
    dry_run: bool,
    extract: bool = True,
    progress: Progress | None = None,
    deadline: float | None = None,
    taken: Callable[[], None] | None = None,
) -> ObserveResult:
    """:func:`observe`'s work. ``taken`` is called once the turns are journaled and archived, before any
    flush; with a ``deadline`` the flushes are chunked and bounded in time (:func:`.flush_runs.flush_due`)."""
    ns = namespace or mem.settings.namespaces.default
    problems = check_namespace(ns)
    if not isinstance(session_key, str) or not session_key.strip() or len(session_key) > MAX_SESSION_KEY:
        raise ValidationError.single(
            "sessionKey", f"must be a non-empty string of at most {MAX_SESSION_KEY} characters"
        )
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)
    check_event(event)
    if mem.settings.store.scan_secrets:
        # A pasted key is neither journaled nor archived as it was said (the archive may be committed:
        # state.commit); the judge rejects the sentence that held it.
        turns = [t if (clean := redact_secrets(t.text)) == t.text else replace(t, text=clean) for t in turns]
    settings = mem.settings.observe
    embed = mem.embedder_for_observe()
    if dry_run:
        trigger = "explicit" if flush else event
        return _preview(mem, session_key, ns, turns, trigger=trigger, embed=embed, progress=progress)
    if not extract:
        placed = archive(mem.root, session_key, [_archived(t) for t in turns], ns, source) if turns else {}
        return ObserveResult(
            session_key,
            ns,
            len(turns),
            0,
            0,
            0,
            archive_path=placed.get("archivePath"),
            first_turn_index=placed.get("firstTurnIndex"),
        )
    buffer = SessionBuffer(mem.durable_dir, session_key, ns)
    try:
        added = buffer.append(list(turns), retry_window_s=settings.retry_window_s)
    except OSError as exc:
        if exc.errno not in READ_ONLY_ERRNOS:
            raise
        # One line, as every other write in a read-only directory says it (not a traceback).
        raise RepoBusyError(
            f"memory directory {mem.root} is read-only (cannot write the observe buffer "
            f"{exc.filename or mem.durable_dir}: {exc.strerror or exc}); nothing was observed"
        ) from None
    # Only the turns the buffer took are archived: a retried transcript is not archived twice.
    placed = archive(mem.root, session_key, [_archived(t) for t in added.turns], ns, source) if added.turns else {}
    if taken is not None:
        taken()
    trigger = "explicit" if flush else event
    new_from = added.turns[0].index if added.turns else None
    flushes, state, deferred = flush_due(mem, buffer, trigger, embed, new_from, source, progress, deadline)
    if flushes and mem.settings.observe.consolidate_after_flush:
        mem.schedule_consolidation()
    return ObserveResult(
        session_key,
        ns,
        len(turns),
        len(added.turns),
        added.duplicates,
        len(state.pending),
        tuple(flushes),
        archive_path=placed.get("archivePath"),
        first_turn_index=placed.get("firstTurnIndex"),
        reworded=added.reworded,
        reread=added.reread,
        deferred=deferred,
    )


def _preview(
    mem: Memory,
    session_key: str,
    ns: str,
    turns: Sequence[Turn],
    *,
    trigger: str | None,
    embed: Embed | None,
    progress: Progress | None,
) -> ObserveResult:
    """What the same call without ``dry_run`` would do, written nowhere: the turns the buffer would
    take, the flushes its triggers would run (an open plan first, as :func:`observe_turns` resumes
    it), the observations each would make and the turns left waiting."""
    settings = mem.settings.observe
    state, taken = SessionBuffer(mem.durable_dir, session_key, ns).preview(
        list(turns), retry_window_s=settings.retry_window_s
    )
    at = now_iso()
    pending = [*state.pending, *(BufferedTurn(t, at) for t in taken.turns)]
    new_from = taken.turns[0].index if taken.turns else None
    decision = decide_flush(pending, settings, event=trigger, embed=embed, new_from_seq=new_from)
    open_plan = state.open_plan
    runs: list[tuple[str, str, list[Turn]]] = []  # (flush id, reason, turns) in the order they would run
    while decision.flush or open_plan is not None:
        if open_plan is not None:
            runs.append((open_plan.flush_id, open_plan.reason, list(open_plan.turns)))
            open_plan = None
        else:
            upto = decision.upto_seq
            chunk = [b.turn for b in pending if upto is None or b.seq <= upto]
            if not chunk:
                break
            flush_id = flush_id_for(ns, session_key, chunk[0].index, chunk[-1].index, chunk)
            runs.append((flush_id, decision.reason or "resume", chunk))
            pending = pending[len(chunk) :]  # sequence order: the flushed turns are the oldest
        decision = decide_flush(pending, settings, event=trigger, embed=embed)
    # Loaded here and at the first flush (flush_runs), not with this module: an agent hook that only
    # buffers turns, or finds no idle session, never loads the extraction rules.
    from remnic.observe.pipeline import plan_observations

    from .flushing import FlushResult

    facts = mem.embedder_for_observe(facts=True)
    flushes = tuple(
        FlushResult(
            flush_id=flush_id,
            reason=reason,
            turns=(chunk[0].index, chunk[-1].index),
            commit=None,
            predicted=True,
            observations=tuple(
                plan_observations(chunk, session_key=session_key, settings=settings, embed=facts, progress=progress)
            ),
        )
        for flush_id, reason, chunk in runs
    )
    return ObserveResult(
        session_key,
        ns,
        len(turns),
        len(taken.turns),
        taken.duplicates,
        len(pending),
        dry_run=True,
        planned=tuple(o for f in flushes for o in f.observations),
        would_flush=flushes,
        reworded=taken.reworded,
        reread=taken.reread,
    )


def flush_idle_sessions(
    mem: Memory,
    *,
    idle_minutes: float | None = None,
    source: str = "api",
    skip: str | None = None,
    deadline: float | None = None,
) -> list[ObserveResult]:
    """Flush every session whose buffer nobody wrote to for ``idle_minutes`` (default
    ``observe.bufferMaxMinutes``): a host that never says a session ended (Codex has no such hook, a
    killed terminal sends none) leaves its last turns waiting. ``skip`` names a session to leave.
    ``deadline`` (an agent hook's, :func:`hook_deadline`): flushes in chunks, none begun past it."""
    minutes = mem.settings.observe.buffer_max_minutes if idle_minutes is None else idle_minutes
    if minutes <= 0:
        return []
    out = []
    for namespace, session_key in idle_sessions(mem.durable_dir, minutes * 60):
        if session_key == skip:
            continue
        if deadline is not None and time.monotonic() >= deadline:
            break
        result = observe_turns(
            mem,
            session_key,
            [],
            namespace=namespace,
            source=source,
            flush=False,
            event="session-end",
            dry_run=False,
            deadline=deadline,
        )
        if result.flushes:
            out.append(result)
    return out


def _archived(turn: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {"role": turn.role, "content": turn.text}
    for key, value in (("turnId", turn.turn_id), ("speaker", turn.speaker), ("timestamp", turn.timestamp)):
        if value:
            out[key] = value
    if turn.interim:
        out["interim"] = True
    if turn.kept:
        out.update(json.loads(turn.kept))  # name, sourceFormat, parts: archived as the caller sent them
    return out
