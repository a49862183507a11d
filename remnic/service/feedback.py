"""Feedback and citations: what agents tell remnic about the memories they used.

``memory_feedback`` (a vote on one memory) and ``POST /v1/citations/observed`` (the
memories an answer cited) raise usage counters in the frontmatter of active memories (a
forgotten, superseded, archived or unvetted memory, or an entity page, is refused):

- ``accessCount`` +1 and ``lastRecalledAt`` = now, for every vote and every citation;
- ``reinforcement_count`` +1 for an up vote and for a citation (the memory was confirmed
  useful; recall's ``reinforcement`` score term reads it);
- ``feedbackUp`` / ``feedbackDown`` +1 for a vote.

The counters are read and raised inside the write transaction (so concurrent votes never
lose one), with only those frontmatter lines rewritten: the body, ``updated`` (so recency is
not disturbed) and every other line stay as they are. Votes with their notes also go to
the durable ledger ``state/feedback.jsonl``.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, MemoryFormatError, NotFoundError, ValidationError, json_kind
from remnic.memfile.model import MemoryRecord, now_iso
from remnic.memfile.normalize import render
from remnic.memfile.validate import check_bytes
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from .writes import UNGROUPED, check_writable, result_of

if TYPE_CHECKING:
    from .memory import Memory
    from .writes import WriteResult

VOTES = ("up", "down")
SIGNALS = {"thumbs_up": "up", "thumbs_down": "down"}
LEDGER = "feedback.jsonl"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def raised(fm: Mapping[str, Any], *, vote: str | None, reinforce: bool, now: str) -> dict[str, Any]:
    """The counter changes for one use of a memory (pure)."""
    changes: dict[str, Any] = {"accessCount": _count(fm.get("accessCount")) + 1, "lastRecalledAt": now}
    if reinforce:
        changes["reinforcement_count"] = _count(fm.get("reinforcement_count")) + 1
    if vote == "up":
        changes["feedbackUp"] = _count(fm.get("feedbackUp")) + 1
    elif vote == "down":
        changes["feedbackDown"] = _count(fm.get("feedbackDown")) + 1
    return changes


def _check_usable(record: MemoryRecord, status: str, field: str) -> None:
    """Only an active memory a recall can return may be reinforced: a retired or unvetted one must not
    climb back up the ranking, and an entity page is compiled from the memories, not one of them."""
    from .entities import is_page  # not at import: the entity rules compile on import, every command paid

    if is_page(record):
        raise ValidationError.single(field, f"{record.id} is an entity page, not a recall result")
    if status != "active":
        raise ValidationError.single(field, f"{record.id} is {status}; only an active memory takes feedback")


def _raise_counters(
    mem: Memory,
    memory_ids: Sequence[str],
    *,
    vote: str | None,
    reinforce: bool,
    operation: str,
    source: str,
    field: str = "memoryId",
) -> WriteResult:
    """One commit raising the counters of every memory named (each read and checked under the lock;
    one that is not an active memory refuses the whole write)."""

    def run(tx: Transaction) -> PlanOutcome:
        check_writable(mem)
        now = now_iso()
        records: list[MemoryRecord] = []
        for memory_id in dict.fromkeys(memory_ids):
            record = tx.staged_record(memory_id) or mem.get(memory_id)  # a batch's earlier write may have moved it
            path = record.path
            disk = tx.read_bytes(path) or b""
            checked = check_bytes(disk, path, mem.settings.store)
            if checked.problems or checked.record is None:
                raise MemoryFormatError(path, checked.problems)
            _check_usable(record, checked.record.status, field)
            changes = raised(checked.record.frontmatter, vote=vote, reinforce=reinforce, now=now)
            text, meta = render(checked, changes)
            committed = tx.committed_bytes(path)
            commit_data = None
            if committed is not None and committed != disk:  # a person's uncommitted edit stays uncommitted
                base = check_bytes(committed, path, mem.settings.store)
                if base.record is not None and not base.problems:
                    commit_data = render(base, changes)[0].encode("utf-8")
            updated = MemoryRecord(path, meta, checked.record.body, record.namespace)
            tx.put(path, text, updated, commit_data=commit_data)
            records.append(updated)
        subject = f"remnic {operation}: {len(records)} memor{'y' if len(records) == 1 else 'ies'}"
        namespaces = ",".join(sorted({r.namespace for r in records})) or "default"
        return PlanOutcome(records, subject, [r.id for r in records], namespaces)

    outcome, commit = mem.committer.submit(Plan((operation, source, UNGROUPED), run))
    return result_of(operation, outcome, commit)


def _ledger(mem: Memory, event: Mapping[str, Any]) -> None:
    path = mem.settings.durable_dir / LEDGER
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, (json.dumps(dict(event), ensure_ascii=False) + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def vote_of(vote: str | None, signal: str | None) -> str:
    """The vote from the original's MCP spelling (``vote: up|down``) or the seed's agent tool
    (``signal: thumbs_up|thumbs_down``)."""
    if vote is not None and signal is not None and SIGNALS.get(signal) != vote:
        raise ValidationError.single("signal", f"says {signal!r} but vote says {vote!r}; give one of them")
    if vote is None and signal is None:
        raise ValidationError.single("vote", "is required: up or down (or signal: thumbs_up or thumbs_down)")
    if vote is not None and vote not in VOTES:
        raise ValidationError.single("vote", f"unknown vote {vote!r}", options=VOTES)
    if signal is not None and signal not in SIGNALS:
        raise ValidationError.single("signal", f"unknown signal {signal!r}", options=tuple(SIGNALS))
    return vote if vote is not None else SIGNALS[str(signal)]


def feedback(
    mem: Memory,
    memory_id: str,
    vote: str,
    *,
    note: str | None = None,
    session_key: str | None = None,
    source: str = "api",
) -> dict[str, Any]:
    """Record a vote on one memory: its counters raised in one commit, the vote and note in the ledger."""
    vote = vote_of(vote, None)
    result = _raise_counters(mem, [memory_id], vote=vote, reinforce=vote == "up", operation="feedback", source=source)
    record = result.record
    event: dict[str, Any] = {"ts": now_iso(), "memoryId": record.id, "vote": vote, "source": source}
    if note:
        event["note"] = note
    if session_key:
        event["sessionKey"] = session_key
    _ledger(mem, event)
    fm = record.frontmatter
    return {
        "recorded": True,
        "memoryId": record.id,
        "vote": vote,
        "status": record.status,
        "reinforcement_count": _count(fm.get("reinforcement_count")),
        "accessCount": _count(fm.get("accessCount")),
        "feedbackUp": _count(fm.get("feedbackUp")),
        "feedbackDown": _count(fm.get("feedbackDown")),
        "lastRecalledAt": fm.get("lastRecalledAt"),
        "commit": result.commit,
    }


ENTRY_KEYS = ("path", "lineStart", "lineEnd", "note")
CITATION_KEYS = ("entries", "rolloutIds", "threadIds")
"""The original's ``citations`` object (``threadIds``: the legacy name of ``rolloutIds``)."""
_ENTRY = "{path, lineStart, lineEnd, note?}"


def _line(entry: Mapping[str, Any], key: str, where: str, problems: list[FieldProblem]) -> int | None:
    if key not in entry:
        return None
    value = entry[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 5.0 is JSON Schema's integer 5 (clients holding every number as a float send it)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        got = f"{value!r}" if isinstance(value, (int, float)) and not isinstance(value, bool) else json_kind(value)
        problems.append(FieldProblem(f"{where}.{key}", f"must be a line number (an integer ≥ 1), got {got}"))
        return None
    return value


def check_entries(entries: Any, field: str = "entries") -> list[dict[str, Any]]:
    """The original's citation entries ``[{path, lineStart?, lineEnd?, note?}]``, checked: an unknown key
    (a typo), a wrong type or a range ending before it starts is a ValidationError naming ``field[i].key``,
    never skipped (a caller whose citations all vanished would not learn why nothing matched)."""
    if not isinstance(entries, (list, tuple)):
        raise ValidationError.single(field, f"must be an array of {_ENTRY}, got {json_kind(entries)}")
    problems: list[FieldProblem] = []
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(entries):
        where = f"{field}[{i}]"
        if not isinstance(entry, Mapping):
            problems.append(FieldProblem(where, f"must be an object {_ENTRY}, got {json_kind(entry)}"))
            continue
        problems += [
            FieldProblem(f"{where}.{k}", "unknown field", options=ENTRY_KEYS) for k in entry if k not in ENTRY_KEYS
        ]
        path = entry.get("path")
        if not isinstance(path, str) or not path.strip():
            got = "missing" if "path" not in entry else f"got {json_kind(path)}"
            problems.append(FieldProblem(f"{where}.path", f"is required: the cited memory file's path ({got})"))
        start, end = _line(entry, "lineStart", where, problems), _line(entry, "lineEnd", where, problems)
        if start is not None and end is not None and end < start:
            problems.append(FieldProblem(f"{where}.lineEnd", f"is {end}, before lineStart {start}"))
        if entry.get("note") is not None and not isinstance(entry["note"], str):
            problems.append(FieldProblem(f"{where}.note", f"must be a string, got {json_kind(entry['note'])}"))
        out.append({k: entry[k] for k in ENTRY_KEYS if k in entry})
    if problems:
        _refuse(problems)
    return out


def check_citations(cited: Any, field: str = "citations") -> tuple[list[dict[str, Any]], list[str]]:
    """The original's ``citations`` object ``{entries, rolloutIds}`` (or the legacy ``threadIds``) as
    (entries, rollout ids), checked like :func:`check_entries`; either key may be left out."""
    if not isinstance(cited, Mapping):
        raise ValidationError.single(field, f"must be an object {{entries, rolloutIds}}, got {json_kind(cited)}")
    problems = [
        FieldProblem(f"{field}.{k}", "unknown field", options=CITATION_KEYS) for k in cited if k not in CITATION_KEYS
    ]
    if "rolloutIds" in cited and "threadIds" in cited:
        problems.append(FieldProblem(f"{field}.threadIds", "is the legacy name of rolloutIds; give one of them"))
    key = "threadIds" if "threadIds" in cited and "rolloutIds" not in cited else "rolloutIds"
    rollouts = [] if cited.get(key) is None else cited[key]  # null: not given, as for any optional field
    if not isinstance(rollouts, list):
        problems.append(FieldProblem(f"{field}.{key}", f"must be an array of strings, got {json_kind(rollouts)}"))
        rollouts = []
    problems += [
        FieldProblem(f"{field}.{key}[{i}]", f"must be a string, got {json_kind(r)}")
        for i, r in enumerate(rollouts)
        if not isinstance(r, str)
    ]
    entries: list[dict[str, Any]] = []
    try:
        entries = check_entries([] if cited.get("entries") is None else cited["entries"], f"{field}.entries")
    except ValidationError as exc:
        problems += exc.problems
    if problems:
        _refuse(problems)
    return entries, list(rollouts)


def _refuse(problems: list[FieldProblem]) -> None:
    """One ValidationError naming every problem (all of a request's mistakes in one answer)."""
    summary = problems[0].describe() if len(problems) == 1 else f"request validation failed ({len(problems)} problems)"
    raise ValidationError(summary, problems=problems)


def _match(mem: Memory, path: str, by_path: Mapping[str, str], by_name: Mapping[str, list[str]]) -> str | None:
    """The id of the memory a cited path names: repo-relative, absolute inside the repository, or
    (when one file has the name) just its file name."""
    text = path.strip()
    if not text:
        return None
    root = str(mem.root).rstrip("/") + "/"
    rel = text[len(root) :] if text.startswith(root) else text.lstrip("./")
    if rel in by_path:
        return by_path[rel]
    name = PurePosixPath(rel).name
    found = by_name.get(name, [])
    return found[0] if len(found) == 1 else None


def citations(
    mem: Memory,
    entries: Sequence[Mapping[str, Any]],
    *,
    rollout_ids: Sequence[str] = (),
    namespace: str | None = None,
    readable: Any = None,
    source: str = "api",
) -> dict[str, Any]:
    """Raise the usage counters of the memories an answer cited, in one commit. ``entries`` are the
    original's ``{path, lineStart, lineEnd, note?}``; here (the Python API) an entry without a path is
    skipped, while HTTP and MCP check the whole request first with :func:`check_citations`.
    ``readable`` (namespace → bool) keeps memories the caller may not read out."""
    paths = [str(e.get("path")) for e in entries if isinstance(e, Mapping) and isinstance(e.get("path"), str)]
    by_path: dict[str, str] = {}
    by_name: dict[str, list[str]] = {}
    for record in mem.files.scan().records:
        if namespace is not None and record.namespace != namespace:
            continue
        if readable is not None and not readable(record.namespace):
            continue
        by_path[record.path] = record.id
        by_name.setdefault(record.path.rsplit("/", 1)[-1], []).append(record.id)
    matched = [m for m in (_match(mem, p, by_path, by_name) for p in paths) if m]
    ids = list(dict.fromkeys(matched))
    commit = None
    if ids:
        try:
            result = _raise_counters(
                mem, ids, vote=None, reinforce=True, operation="citation", source=source, field="citations"
            )
            commit = result.commit
        except NotFoundError:
            ids = []
    return {
        "ok": True,
        "submitted": len(paths),
        "matched": len(ids),
        "entriesReceived": len(entries),
        "rolloutIdsReceived": len(rollout_ids),
        "memoryIds": ids,
        "commit": commit,
    }
