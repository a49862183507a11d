"""The judge's verdict ledger: one JSON line per verdict, for ``remnic doctor``'s observations check.

Telemetry, not memory: it lives under the git-ignored state directory at
``state/observation-ledger/extraction-judge-verdicts.jsonl`` (the reference system's relative
path), is appended to and never rewritten, and a failure to write it never fails an observation.
Line format (the reference system's ``JudgeVerdictEvent``, plus where the verdict came from)::

    {"version": 1, "category": "EXTRACTION_JUDGE_VERDICT", "ts": "…", "verdictKind": "accept",
     "reason": "…", "deferrals": 0, "elapsedMs": 3, "candidateCategory": "decision",
     "confidence": 0.95, "contentHash": "<sha256 of content + NUL + category>", "fromCache": false,
     "verdictSource": "rules", "sessionKey": "…", "observationId": "obs_…", "observedAt": "…"}

The service adds ``resultingPrimitiveId``, ``flushId`` and ``flushTurns`` (the turns of the flush the
verdict came from, whose time ``elapsedMs`` is), so ``doctor`` can give the flushes' throughput.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from remnic.memfile.model import now_iso, parse_time

from .records import VERDICT_KINDS, MemoryObservation

VERDICT_LEDGER = Path("state") / "observation-ledger" / "extraction-judge-verdicts.jsonl"
EVENT_CATEGORY = "EXTRACTION_JUDGE_VERDICT"
MAX_REASON_CHARS = 120

log = logging.getLogger(__name__)


def judge_cache_key(content: str, category: str) -> str:
    """The reference system's verdict key: sha256 of the content, a NUL, and the category."""
    return hashlib.sha256(f"{content}\0{category}".encode()).hexdigest()


def verdict_event(
    observation: MemoryObservation, session_key: str, *, ts: str | None = None, elapsed_ms: int = 0
) -> dict[str, Any]:
    """The ledger line for one observation's verdict."""
    fact = observation.fact
    return {
        "version": 1,
        "category": EVENT_CATEGORY,
        "ts": ts or now_iso(),
        "verdictKind": observation.verdict.kind,
        "reason": observation.verdict.reason[:MAX_REASON_CHARS],
        "deferrals": 0,
        "elapsedMs": elapsed_ms,
        "candidateCategory": fact.category,
        "confidence": fact.confidence,
        "contentHash": judge_cache_key(fact.content, fact.category),
        "fromCache": False,
        "verdictSource": observation.verdict.source,
        "sessionKey": session_key,
        "observationId": observation.id,
        "observedAt": observation.observed_at,
    }


def append_verdicts(state_dir: Path, events: Sequence[dict[str, Any]]) -> bool:
    """Append the events as one fsync'd write; False (logged, never raised) when it cannot be written."""
    return _append_lines(state_dir / VERDICT_LEDGER, events)


def ledger_has_flush(state_dir: Path, flush_id: str) -> bool:
    """Whether the verdict ledger holds a line of ``flush_id``: read only on the rare path of a flush
    found already committed (its process died after the commit, maybe before writing its verdicts)."""
    needle = f'"flushId":{json.dumps(flush_id)}'
    try:
        with open(state_dir / VERDICT_LEDGER, encoding="utf-8", errors="replace") as fh:
            return any(needle in line for line in fh)
    except FileNotFoundError:
        return False


REMAP_LEDGER = Path("state") / "observation-ledger" / "primitive-remaps.jsonl"


def append_remaps(root: Path, merged_into: dict[str, str], *, reason: str = "consolidation") -> bool:
    """Record that observations which resulted in a merged memory now result in its survivor.

    One line per merged id (``{"ts", "from", "to", "reason"}``); a reader follows ``from`` → ``to``
    to get an observation's current ``resultingPrimitiveId``.
    """
    ts = now_iso()
    lines = [{"ts": ts, "from": old, "to": new, "reason": reason} for old, new in merged_into.items()]
    return _append_lines(root / REMAP_LEDGER, lines)


def _append_lines(path: Path, events: Sequence[dict[str, Any]]) -> bool:
    if not events:
        return True
    data = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events).encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        log.warning("cannot append to %s: %s", path, exc)
        return False
    return True


def verdict_stats(state_dir: Path, *, since: float | None = None, until: float | None = None) -> dict[str, Any]:
    """Counts over the ledger for ``remnic doctor``: totals per verdict, defer rate, first/last time.

    Blank lines are skipped; lines that are not verdict events are counted as ``malformed``. The
    optional window is ``since <= ts < until`` (epoch seconds). A missing ledger gives zeros.
    """
    stats: dict[str, Any] = {"total": 0, "accept": 0, "reject": 0, "defer": 0, "deferCapTriggered": 0}
    stats.update({"malformed": 0, "meanElapsedMs": 0.0, "deferRate": 0.0, "firstTs": None, "lastTs": None})
    stats["lastObservedAt"] = None
    stats.update({"flushes": 0, "flushTurns": 0, "flushSeconds": 0.0, "turnsPerSecond": None})
    elapsed: list[float] = []
    flushes: dict[str, tuple[int, float]] = {}
    # A verdict is counted once however often it was written: a flush found committed after a crash
    # writes its verdicts again when the ledger may lack them ("recovered": no time of its own).
    counted: dict[tuple[str, str], bool] = {}  # (flushId, observationId) -> counted from a recovered line
    for event in _events(state_dir / VERDICT_LEDGER, stats):
        ts = parse_time(event.get("ts"))
        if ts is None or event.get("verdictKind") not in VERDICT_KINDS:
            stats["malformed"] += 1
            continue
        if (since is not None and ts < since) or (until is not None and ts >= until):
            continue
        recovered = bool(event.get("recovered"))
        flush_id, observation_id = event.get("flushId"), event.get("observationId")
        if isinstance(flush_id, str) and isinstance(observation_id, str):
            key = (flush_id, observation_id)
            if key in counted and (recovered or not counted[key]):
                continue
            again = key in counted
            counted[key] = recovered
            if again:  # the original line after a recovered one: its time, not a second verdict
                _flush_time(event, flushes, elapsed)
                continue
        stats["total"] += 1
        stats[event["verdictKind"]] += 1
        stats["deferCapTriggered"] += bool(event.get("deferCapTriggered"))
        if not recovered:
            _flush_time(event, flushes, elapsed)
        first, last = parse_time(stats["firstTs"]), parse_time(stats["lastTs"])
        stats["firstTs"] = stats["firstTs"] if first is not None and first <= ts else event["ts"]
        stats["lastTs"] = event["ts"] if last is None or last <= ts else stats["lastTs"]
        observed, seen = parse_time(event.get("observedAt")), parse_time(stats["lastObservedAt"])
        if observed is not None and (seen is None or observed >= seen):
            stats["lastObservedAt"] = event["observedAt"]
    if stats["total"]:
        stats["deferRate"] = round(stats["defer"] / stats["total"], 4)
    if elapsed:
        stats["meanElapsedMs"] = round(sum(elapsed) / len(elapsed), 3)
    if flushes:  # a flush's lines share its turn count and time: each flush counted once
        stats["flushes"] = len(flushes)
        stats["flushTurns"] = sum(t for t, _ in flushes.values())
        stats["flushSeconds"] = round(sum(s for _, s in flushes.values()), 3)
        if stats["flushSeconds"] > 0:
            stats["turnsPerSecond"] = round(stats["flushTurns"] / stats["flushSeconds"], 1)
    return stats


def _flush_time(event: dict[str, Any], flushes: dict[str, tuple[int, float]], elapsed: list[float]) -> None:
    if isinstance(event.get("elapsedMs"), (int, float)):
        elapsed.append(float(event["elapsedMs"]))
        turns = event.get("flushTurns")
        if isinstance(event.get("flushId"), str) and isinstance(turns, int) and not isinstance(turns, bool):
            flushes[event["flushId"]] = (turns, float(event["elapsedMs"]) / 1000)


def _events(path: Path, stats: dict[str, Any]) -> Iterable[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return
    for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            stats["malformed"] += 1
            continue
        if not isinstance(event, dict) or event.get("category") != EVENT_CATEGORY:
            stats["malformed"] += 1
            continue
        yield event
