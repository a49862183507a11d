"""The transcript archive on disk: one JSONL file per session under ``state/transcripts/``.

``state/`` is the memory repository's durable folder: nothing in it can be rebuilt,
and reindex never touches it. One line per archived turn::

    {"ts", "sessionKey", "namespace", "turnIndex", "role", "content", "source",
     "speaker"?, "turnId"?, "timestamp"?, ...}

``turnIndex`` is the turn's position in its session (0, 1, 2, … across every batch
observed for it). A batch is appended with one ``write`` under an exclusive ``flock``
and fsync'd, so concurrent observers never interleave and an acknowledged turn is on
disk. A file that ends in a torn line (a crash mid-append, a full disk, an editor) gets a
newline before the batch: only the fragment is lost, counted by :func:`unreadable_tail`
and the index's count of unreadable lines. Compaction events (``lcm/compaction/record``) go to ``state/lcm-compactions.jsonl``.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remnic.config import DURABLE_DIR, STATE_DIR

TRANSCRIPTS = "transcripts"
COMPACTIONS = "lcm-compactions.jsonl"
LEGACY = "observe"
"""Where the archive lived before (``.remnic/observe/<ns>/<date>/<session>.jsonl``): migrated on open."""
KEPT_KEYS = ("speaker", "turnId", "timestamp", "interim", "sourceFormat", "parts", "name")
"""Message keys archived beside role and content when a caller sends them: the archive is lossless,
so every field a parsed turn carries is kept (lines written before ``speaker`` was kept lack it)."""
_TAIL = 65_536


def archive_name(key: str) -> str:
    """A readable file name that cannot escape its directory; a hash keeps distinct keys distinct."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", key)[:80].strip("_") or "session"
    if safe != key:
        safe += "-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return safe


@dataclass(frozen=True)
class Appended:
    path: str
    """Repo-relative path of the session's archive file."""
    first_turn: int
    count: int


def transcripts_dir(root: Path) -> Path:
    return root / DURABLE_DIR / TRANSCRIPTS


def session_file(root: Path, namespace: str, session_key: str) -> Path:
    return transcripts_dir(root) / archive_name(namespace) / f"{archive_name(session_key)}.jsonl"


@contextmanager
def _locked_append(path: Path) -> Iterator[int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)  # transcripts are private
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)


def _append(fd: int, data: bytes) -> None:
    """One fsync'd write of whole lines, started on a line of its own: glued to a torn last line,
    the new lines would become part of one unreadable line and be lost with it."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        data = b"\n" + data
    os.write(fd, data)
    os.fsync(fd)


def _next_turn(fd: int) -> int:
    """One past the last archived turn's index: read from the file's tail, not the whole file."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0
    start = max(0, size - _TAIL)
    tail = os.pread(fd, size - start, start)
    lines = tail.split(b"\n")
    for raw in reversed(lines[1:] if start else lines):
        if not raw.strip():
            continue
        try:
            last = json.loads(raw)
        except ValueError:
            continue  # a torn line after a crash: the one before it counts
        if isinstance(last, dict) and isinstance(last.get("turnIndex"), int):
            return last["turnIndex"] + 1
    count = 0  # no readable index near the end: count the lines instead
    with open(fd, "rb", closefd=False) as fh:
        fh.seek(0)
        for raw in fh:
            count += bool(raw.strip())
    return count


def append_turns(
    root: Path,
    session_key: str,
    namespace: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    source: str,
    now: str,
    stamps: Sequence[str] | None = None,
) -> Appended:
    """Append validated messages to their session's file, numbered after the turns already there;
    each turn is stamped ``now`` unless ``stamps`` gives its own time (a migrated turn keeps its)."""
    path = session_file(root, namespace, session_key)
    with _locked_append(path) as fd:
        first = _next_turn(fd)
        lines = []
        for i, msg in enumerate(messages):
            entry: dict[str, Any] = {
                "ts": stamps[i] if stamps is not None and stamps[i] else now,
                "sessionKey": session_key,
                "namespace": namespace,
                "turnIndex": first + i,
                "role": msg["role"],
                "content": msg["content"],
                "source": source,
            }
            for key in KEPT_KEYS:
                if key in msg:
                    entry[key] = msg[key]
            lines.append(json.dumps(entry, ensure_ascii=False, default=str))
        _append(fd, ("\n".join(lines) + "\n").encode("utf-8"))
    return Appended(path.relative_to(root).as_posix(), first, len(lines))


def read_lines(
    path: Path, start: int = 0, unreadable: list[int] | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """Complete JSONL records from byte ``start`` as (offset, record), and the offset after the last
    complete line (a line still being written is left for the next read). The offsets of complete
    lines that are no record (invalid JSON, not an object) go to ``unreadable`` when given."""
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    out: list[tuple[int, dict[str, Any]]] = []
    offset = start
    for raw in data[:end].split(b"\n")[:-1] if end else ():
        here = offset
        offset += len(raw) + 1
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            record = None  # a torn line after a crash must not hide the others
        if isinstance(record, dict):
            out.append((here, record))
        elif unreadable is not None:
            unreadable.append(here)
    return out, start + end


def unreadable_tail(path: Path) -> bool:
    """Whether the file ends in a line with no newline: a torn append (a writer holding the lock is
    waited for, so a batch being written is not taken for one)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        size = os.fstat(fd).st_size
        return bool(size) and os.pread(fd, 1, size - 1) != b"\n"
    finally:
        os.close(fd)


def archive_files(root: Path) -> list[Path]:
    base = transcripts_dir(root)
    return sorted(base.rglob("*.jsonl")) if base.is_dir() else []


def archived_sessions(root: Path) -> list[tuple[str, str]]:
    """(namespace, session key) of every archived session, the most recently appended first: read
    from each file's first turn (a file is one session), its folder and name when no line reads."""
    out: list[tuple[float, str, str]] = []
    for path in archive_files(root):
        namespace, key = path.parent.name, path.stem
        try:
            with open(path, "rb") as fh:
                for raw in itertools.islice(fh, 16):  # a torn or hand-edited first line: the next one
                    try:
                        first = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(first, dict):
                        namespace = str(first.get("namespace") or namespace)
                        key = str(first.get("sessionKey") or key)
                        break
            when = path.stat().st_mtime
        except OSError:
            continue
        out.append((when, namespace, key))
    out.sort(key=lambda t: -t[0])
    return [(namespace, key) for _, namespace, key in out]


def iter_turns(root: Path) -> Iterator[dict[str, Any]]:
    for path in archive_files(root):
        for _offset, record in read_lines(path)[0]:
            yield record


def record_compaction(root: Path, event: Mapping[str, Any]) -> None:
    path = root / DURABLE_DIR / COMPACTIONS
    with _locked_append(path) as fd:
        _append(fd, (json.dumps(dict(event), ensure_ascii=False) + "\n").encode("utf-8"))


def session_turns(root: Path, namespace: str, session_key: str) -> int:
    """How many turns the session has archived (0 when none)."""
    path = session_file(root, namespace, session_key)
    if not path.exists():
        return 0
    with _locked_append(path) as fd:
        return _next_turn(fd)


# --- migration from the disposable cache ---


def migrate_legacy(root: Path) -> int:
    """Move an archive left in ``.remnic/observe/<ns>/<date>/<session>.jsonl`` (the old, disposable
    place) into ``state/transcripts/``, oldest day first, renumbering turns per session. Returns the
    turns moved. A file is deleted only after its turns are appended and fsync'd, so a crash may
    repeat turns but never loses one."""
    legacy = root / STATE_DIR / LEGACY
    if not legacy.is_dir():
        return 0
    moved = 0
    for path in sorted(legacy.glob("*/*/*.jsonl"), key=lambda p: (p.parent.name, p.parent.parent.name, p.name)):
        records = [r for _, r in read_lines(path)[0] if r.get("role") in ("user", "assistant")]
        by_session: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in records:
            key = (str(r.get("namespace") or path.parent.parent.name), str(r.get("sessionKey") or path.stem))
            by_session.setdefault(key, []).append(r)
        for (namespace, session_key), turns in by_session.items():
            append_turns(
                root,
                session_key,
                namespace,
                [{**t, "content": str(t.get("content", ""))} for t in turns],
                source=str(turns[0].get("source") or "migrated"),
                now=str(turns[0].get("ts") or ""),
                stamps=[str(t.get("ts") or "") for t in turns],
            )
            moved += len(turns)
        path.unlink()
    for directory in sorted(legacy.glob("**/*"), reverse=True):
        if directory.is_dir():
            try:
                directory.rmdir()
            except OSError:
                pass
    try:
        legacy.rmdir()
    except OSError:
        pass
    return moved
