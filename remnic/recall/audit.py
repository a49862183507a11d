"""The recall audit ledger: one JSONL line per recall under ``state/audit/``, rotated by day.

``state/`` is the memory repository's durable folder (reindex never touches it), so
the X-ray's ``auditEntryId`` links keep working after the cache ``.remnic/`` is
deleted. Entry ids carry their day (``audit-20261121-5f6b1a2c9d8e``), so finding an
entry reads one day's file. Appends take an ``flock`` so concurrent recalls from
several processes never interleave lines.

Reading is tolerant: a line that is not a whole entry (torn by a crash mid-append, a bad byte, a
stray edit) is skipped and counted (:meth:`AuditLog.unreadable`), never fatal to the others.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remnic.errors import NotFoundError, RemnicError, UsageError
from remnic.memfile.values import tag_key

AUDIT_ID_RE = re.compile(r"^audit-(\d{8})-[0-9a-f]{12}$")
AUDIT_DIR = "audit"


@dataclass
class AuditEntry:
    id: str
    ts: str
    query: str
    namespace: str | None
    sessionKey: str | None
    traceId: str | None
    candidateIds: list[str]
    returnedIds: list[str]
    budget: dict[str, int]
    latencyMs: float
    """The recall's own time, as the CLI's footer prints it (the pipeline, or the file scan)."""
    indexMs: float = 0.0
    """The index catch-up or rebuild the recall waited for first (0 when there was none)."""
    totalMs: float = 0.0
    """The whole call, from the arguments checked to the entry written: the recall, the index work before it,
    the uncommitted edits looked at and the read-only spaces searched. Each of the three is 0 under a
    pinned clock. An entry without ``totalMs`` (an older remnic's) has only ``latencyMs``, which then
    measured the whole call."""
    servedBy: dict[str, int] = field(default_factory=dict)
    source: str = "api"

    def to_dict(self) -> dict[str, Any]:
        # Field by field (not dataclasses.asdict, which deep-copies): one append per recall.
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def new_audit_id(now: float | None = None, key: str | None = None) -> str:
    """``audit-YYYYMMDD-<12 hex>``: random, or derived from ``key`` for reproducible X-rays."""
    day = time.strftime("%Y%m%d", time.gmtime(now if now is not None else time.time()))
    tail = secrets.token_hex(6) if key is None else hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return f"audit-{day}-{tail}"


def _wall_day() -> str:
    return time.strftime("%Y%m%d", time.gmtime())


def options_key(
    *,
    top_k: int,
    budget_chars: int,
    category: str | None = None,
    tags: Sequence[str] | None = None,
    tag_match: str = "any",
    as_of: float | None = None,
    statuses: Sequence[str] | None = None,
    include_inactive: bool = False,
    project: str | None = None,
    spaces: bool = True,
) -> str:
    """Every option of a recall that changes what it returns, as one string: with a pinned clock the
    audit entry and snapshot ids are derived from it too, so two recalls that differ only in an
    option (``--top-k 1`` and ``--top-k 3``) get two entries. Values as the recall resolved them, so
    every surface derives the same key for the same recall."""
    folded = sorted({tag_key(t) for t in tags or ()})
    values = {
        "topK": top_k,
        "budgetChars": budget_chars,
        "category": category,
        "tags": folded,
        "tagMatch": tag_match if folded else None,
        "asOf": as_of,
        "statuses": None if include_inactive else sorted(statuses or ["active"]),
        "project": project,
        "spaces": spaces,
    }
    return json.dumps(values, sort_keys=True, separators=(",", ":"))


class AuditLog:
    def __init__(self, base_dir: Path, retention_days: int = 0) -> None:
        """The ledger in ``base_dir/audit/`` (the service passes the durable ``state/``)."""
        self.dir = base_dir / AUDIT_DIR
        self.retention_days = retention_days

    def _file(self, day: str) -> Path:
        return self.dir / f"recall-{day}.jsonl"

    def append(self, entry: AuditEntry, *, prune: bool = True) -> str:
        """Append one entry to the file of its id's day. ``prune=False`` (a recall with a pinned clock)
        never deletes: only a recall that runs on the wall clock may start the day's pruning."""
        match = AUDIT_ID_RE.match(entry.id)
        day = match.group(1) if match else time.strftime("%Y%m%d", time.gmtime())
        self.dir.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(entry.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        path = self._file(day)
        # Once a day, when the wall clock's day file starts. The entry's day is not trusted for this:
        # a pinned or skewed recall clock must never date the ledger (it once deleted every file).
        if prune and self.retention_days > 0 and day == _wall_day() and not path.exists():
            self.prune()
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)  # queries are private: owner-only
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a torn last line (a crash mid-append) must not swallow this entry
            os.write(fd, line)
        finally:
            os.close(fd)
        return entry.id

    def prune(self) -> list[str]:
        """Delete the day files older than the retention window, judged by the wall clock only; the names
        removed. A file goes only when both its day and its last write are before ``now - retention``:
        a file written lately under a pinned past clock (an X-ray's entries) is kept, and a wall clock
        that jumped backwards moves the cutoff back, so it deletes less, never more."""
        if self.retention_days <= 0 or not self.dir.is_dir():
            return []
        cutoff_s = time.time() - self.retention_days * 86_400
        cutoff = time.strftime("%Y%m%d", time.gmtime(cutoff_s))
        removed = []
        for path in self.dir.glob("recall-*.jsonl"):
            day = path.stem.removeprefix("recall-")
            if not (len(day) == 8 and day.isdigit() and day < cutoff):
                continue
            try:
                if path.stat().st_mtime >= cutoff_s:
                    continue
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path.name)
        return removed

    def show(self, audit_id: str) -> dict[str, Any]:
        """The entry with ``audit_id``. Under a pinned clock a recall run twice appends two entries with one
        id: the newest is returned (the recall that just ran), carrying ``sharedId``: ``{"count": N,
        "earlier": [the others, oldest first]}``, so no entry with that id goes unseen."""
        match = AUDIT_ID_RE.match(audit_id)
        if not match:
            raise UsageError(f"{audit_id!r} is not an audit entry id (expected audit-YYYYMMDD-<12 hex>)")
        path = self._file(match.group(1))
        entries, damaged = _scan(path)
        found = [entry for entry in entries if entry["id"] == audit_id]
        if len(found) > 1:
            return {**found[-1], "sharedId": {"count": len(found), "earlier": found[:-1]}}
        if found:
            return found[0]
        for number, raw in damaged:
            if audit_id.encode("ascii") in raw:
                raise RemnicError(f"audit entry {audit_id} is on a damaged line ({path}:{number}) and cannot be read")
        raise NotFoundError(f"no audit entry {audit_id} in {path}")

    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        files = sorted(self.dir.glob("recall-*.jsonl"), reverse=True) if self.dir.is_dir() else []
        out: list[dict[str, Any]] = []
        for path in files:  # newest day first, newest entry first within a day
            out.extend(reversed(list(self._read(path))))
            if len(out) >= limit:
                break
        return out[:limit]

    def unreadable(self) -> dict[str, int]:
        """Day file path → how many of its lines are not whole entries (files without any left out)."""
        files = sorted(self.dir.glob("recall-*.jsonl")) if self.dir.is_dir() else []
        counts = {str(path): len(_scan(path)[1]) for path in files}
        return {path: n for path, n in counts.items() if n}

    @staticmethod
    def _read(path: Path) -> Iterator[dict[str, Any]]:
        yield from _scan(path)[0]


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "ts": str,
    "candidateIds": list,
    "returnedIds": list,
    "budget": dict,
    "latencyMs": (int, float),
    "indexMs": (int, float),
    "totalMs": (int, float),
}
"""The types of what :meth:`AuditLog.append` writes; an entry needs an id and its query, and any of
these it has must be of its type (entries of older versions lack some)."""


def _entry(line: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not AUDIT_ID_RE.match(entry["id"]):
        return None
    if not isinstance(entry.get("query"), str):
        return None
    if any(key in entry and not isinstance(entry[key], kind) for key, kind in _FIELDS.items()):
        return None
    return entry


def _scan(path: Path) -> tuple[list[dict[str, Any]], list[tuple[int, bytes]]]:
    """(the well-formed entries, (line number, bytes) of every other non-blank line) of one day file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], []
    entries: list[dict[str, Any]] = []
    damaged: list[tuple[int, bytes]] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        entry = _entry(line)
        if entry is None:
            damaged.append((number, line))
        else:
            entries.append(entry)
    return entries, damaged


def migrate_legacy(old_base: Path, new_base: Path) -> int:
    """Move day files left in ``old_base/audit/`` (the disposable cache, where the ledger lived
    before) into ``new_base/audit/``, appending to a day file that exists there already. A file is
    deleted only after its lines are appended and fsync'd. Returns the entries moved."""
    old = old_base / AUDIT_DIR
    if not old.is_dir():
        return 0
    new = new_base / AUDIT_DIR
    new.mkdir(parents=True, exist_ok=True)
    moved = 0
    for path in sorted(old.glob("recall-*.jsonl")):
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]  # a torn last line was never a whole entry
        moved += data.count(b"\n")
        fd = os.open(new / path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        path.unlink()
    try:
        old.rmdir()
    except OSError:
        pass
    return moved
