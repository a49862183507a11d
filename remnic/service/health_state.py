"""``remnic doctor``'s checks of remnic's own state: the lock files and temp folder under ``.remnic/``, the
embedding cache, and the observe buffers under ``state/``. Each part of the wrong type is named with the
one line every command refuses with; damage that costs time or turns is named with where to recover."""

from __future__ import annotations

import json
import shlex
import sqlite3
from pathlib import Path
from typing import Any

from remnic.config import STATE_DIR
from remnic.observe.buffer import BUFFER_DIR
from remnic.repo.journal import unusable_folder
from remnic.repo.lock import not_a_file

SHOWN = 10
"""Paths a check lists in its text before "… and N more" (``--json`` has them all, under ``paths``)."""

_SQLITE_HEADER = b"SQLite format 3\x00"


def capped(paths: list[str]) -> dict[str, Any]:
    """A check's ``problems`` for a long list of paths: the first :data:`SHOWN`, then how many more, with
    every path under ``paths`` for ``--json``."""
    if len(paths) <= SHOWN:
        return {"problems": paths}
    more = f"… and {len(paths) - SHOWN} more (`remnic doctor --json` lists every one under paths)"
    return {"problems": [*paths[:SHOWN], more], "paths": paths}


def state_parts_check(root: Path, durable_dir: Path) -> dict[str, Any]:
    """The lock files, the temp folder and the observe buffers, each of the type remnic needs: a folder where
    a lock file or a buffer belongs (or a file where the temp folder does) refuses every write that needs it."""
    state = root / STATE_DIR
    said = [
        not_a_file(state / "write.lock", "its write lock file"),
        not_a_file(state / "index.lock", "the search index's lock file"),
        unusable_folder(state / "tmp", "the temporary files of its writes"),
    ]
    buffers = durable_dir / BUFFER_DIR
    for path in sorted(buffers.glob("*/*.lock")):
        said.append(not_a_file(path, "an observed session's lock file"))
    for path in sorted(buffers.glob("*/*.jsonl")):
        said.append(not_a_file(path, "an observed session's buffered turns"))
    problems = [s for s in said if s is not None]
    if not problems:
        return {"name": "state-files", "status": "ok", "detail": "lock files, temp folder and session buffers usable"}
    detail = (
        f"{len(problems)} part(s) of remnic's state are of the wrong type: the writes (or the observed sessions) "
        "that need them are refused until each is moved aside"
    )
    return {"name": "state-files", "status": "fail", "detail": detail, "problems": problems}


def embedding_cache_check(path: Path) -> dict[str, Any] | None:
    """A cache in the wrong place (a folder, a link to nothing) or a file that is not a SQLite database; None when
    it is fine or not there. Never wrong recall, only slow: a damaged cache is moved aside by the next writer, and
    every text it held is embedded again."""
    from remnic.index.embed_cache import cache_file_problem

    said = cache_file_problem(path)
    if said is None:
        said = _damaged_cache(path)
    return None if said is None else {"name": "embedding-cache", "status": "warn", "detail": said}


def _damaged_cache(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            head = f.read(len(_SQLITE_HEADER))
    except (FileNotFoundError, IsADirectoryError):
        return None
    except OSError as exc:
        return f"embedding cache {path} cannot be read ({exc.strerror or exc})"
    why = None
    if head and head != _SQLITE_HEADER:
        why = "not a SQLite database"
    elif head:
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2.0)
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                why = f"unreadable: {exc}"
    if why is None:
        return None
    aside = f"rm {shlex.quote(str(path))}"
    return (
        f"embedding cache {path} is damaged ({why}): the next write moves it aside and starts an empty one, so "
        f"every text is embedded again once (the index's own vectors are kept when it is valid); to drop it now: {aside}"
    )


def torn_buffers_check(durable_dir: Path) -> dict[str, Any] | None:
    """Session buffers with lines that cannot be read (a torn line, a disk's damage): turns in them are no
    longer buffered, so no flush persists them. Every turn received is also archived whole under
    ``state/transcripts/``, and observing that archive again buffers them anew. None when every line reads."""
    found: list[str] = []
    for path in sorted((durable_dir / BUFFER_DIR).glob("*/*.jsonl")):
        try:
            data = path.read_bytes()
        except OSError:
            continue  # a folder in its place: the state-files check names it
        records = [_record(line) for line in data.splitlines() if line.strip()]
        bad = records.count(None)
        if bad:
            named = [r for r in records if r is not None and isinstance(r.get("sessionKey"), str)]
            key, namespace = (
                (named[-1]["sessionKey"], str(named[-1].get("namespace") or "default"))
                if named
                else (
                    path.stem,
                    path.parent.name,
                )
            )
            found.append(_torn_line(durable_dir, path, key, namespace, bad))
    if not found:
        return None
    detail = (
        f"{len(found)} session buffer(s) hold lines that cannot be read (torn or damaged): the turns in those lines "
        "are no longer waiting for a flush (the next observe of the session starts from what is left); each "
        "turn received is kept in the session's archive under state/transcripts/, named below with how to observe "
        "it again"
    )
    return {"name": "buffer-lines", "status": "warn", "detail": detail, "problems": found}


def _record(line: bytes) -> dict[str, Any] | None:
    """The buffer's record on ``line``, or None when it cannot be read as one (as the buffer itself skips it)."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and isinstance(record.get("op"), str) else None


def _torn_line(durable_dir: Path, path: Path, session: str, namespace: str, bad: int) -> str:
    archive = durable_dir / "transcripts" / path.parent.name / path.name  # named as the buffer is
    where = shlex.quote(str(archive))
    again = (
        f"its turns are in {archive}: `remnic observe {where} --session-key {shlex.quote(session)}"
        f"{'' if namespace == 'default' else ' --namespace ' + shlex.quote(namespace)} --flush` observes them again"
        if archive.is_file()
        else f"no archive at {archive} to recover its turns from"
    )
    return f"{path}: {bad} unreadable line(s); {again}"
