"""A memo of parsed memory files, keyed by each file's stat, in ``.remnic/scan-memo.sqlite``.

Listing a repository (``list``, ``status``, ``doctor``, GET memories) must read the
files themselves, since hand edits count before any sync. Parsing YAML is what makes
that slow (~0.25 ms a file), so a valid file's parse is kept here and reused while
its stat (inode, size, mtime, ctime) is unchanged. It is rebuildable state: a
missing, unreadable or locked memo only means parsing again.

Two rules keep it truthful:
- like git's racy-index rule, a file changed less than ``RACY_NS`` before it was
  read is not memoised (a same-size rewrite within the clock's granularity could
  keep its stat);
- only frontmatter that survives a JSON round trip unchanged is memoised, so a
  memoised record equals a freshly parsed one. Malformed files are never memoised;
- a file's check depends on the ``store`` settings (``scanSecrets`` makes a file with
  a secret malformed) and on remnic's own rules, so the memo records the fingerprint
  of both (:func:`fingerprint`) it was parsed under: under any other, its rows are
  ignored and then dropped.

Each hit decodes a fresh record, so callers may mutate what they get.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

from remnic.config.settings import StoreSettings
from remnic.fsio import make_private
from remnic.memfile.model import MemoryRecord
from remnic.version import RULES_REVISION, __version__

log = logging.getLogger("remnic.store")

FILE = "scan-memo.sqlite"
RACY_NS = 2_000_000_000
"""A file changed this recently (ns) may change again within the same stat; it is not memoised."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memo (
    path TEXT PRIMARY KEY, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
    ctime INTEGER NOT NULL, namespace TEXT NOT NULL, frontmatter TEXT NOT NULL, body TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
_FINGERPRINT = "fingerprint"
Key = tuple[int, int, int, int]


def stat_key(st: Any) -> Key:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def fingerprint(store: StoreSettings) -> str:
    """What a file's check depends on besides its bytes: remnic's version (its parser and rules) and every
    ``store`` setting. All of them, not only those the check reads today (``scanSecrets``): a setting
    that never changes a check only costs one parse of each file when it changes."""
    settings = json.dumps(dataclasses.asdict(store), sort_keys=True, default=str)
    return f"{__version__}+r{RULES_REVISION} {settings}"


def decode(rel: str, namespace: str, frontmatter: str, body: str) -> MemoryRecord | None:
    """A memoised row as a fresh record (None: not a JSON object)."""
    try:
        decoded = json.loads(frontmatter)
    except ValueError:
        return None
    return MemoryRecord(rel, decoded, body, namespace) if isinstance(decoded, dict) else None


class ScanMemo:
    """One scan's view of the memo: :meth:`get` and :meth:`put` per file, then :meth:`close`."""

    def __init__(self, state_dir: Path, fingerprint: str) -> None:
        """``fingerprint``: the :func:`fingerprint` of the caller's settings; rows parsed under another are not used."""
        self._fingerprint = fingerprint
        self._conn: sqlite3.Connection | None = None
        self._rows: dict[str, tuple[Key, str, str, str]] = {}
        self._put: list[tuple[Any, ...]] = []
        path = state_dir / FILE
        for _ in range(2):
            try:
                self._open(path)
                return
            except sqlite3.OperationalError as exc:  # locked, read-only checkout: parse this time
                log.debug("scan memo unavailable: %s", exc)
                break
            except sqlite3.DatabaseError as exc:  # not a database (any more): it is rebuildable, start over
                log.debug("scan memo unreadable (%s); starting a new one", exc)
                self._drop_connection()
                try:
                    path.unlink()
                except OSError:
                    break
        self._drop_connection()
        self._rows = {}

    def _open(self, path: Path) -> None:
        # Memory text: owner-only, made so before SQLite creates it (its journal takes the file's mode).
        make_private(path)
        make_private(path.with_name(path.name + "-journal"), create=False)
        self._conn = sqlite3.connect(str(path), timeout=0.5, isolation_level=None)
        self._conn.executescript(_SCHEMA)
        if self._stored_fingerprint() != self._fingerprint:
            return  # parsed under other settings or another remnic: none of its rows is used
        for rel, ino, size, mtime, ctime, ns, fm, body in self._conn.execute("SELECT * FROM memo"):
            self._rows[rel] = ((ino, size, mtime, ctime), ns, fm, body)

    def get(self, rel: str, key: Key) -> MemoryRecord | None:
        row = self._rows.get(rel)
        if row is None or row[0] != key:
            return None
        return decode(rel, row[1], row[2], row[3])

    def put(self, rel: str, key: Key, record: MemoryRecord) -> None:
        if time.time_ns() - max(key[2], key[3]) <= RACY_NS:
            return
        try:
            encoded = json.dumps(record.frontmatter, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return
        if json.loads(encoded) != record.frontmatter:  # e.g. non-string keys: not memoised
            return
        self._put.append((rel, *key, record.namespace, encoded, record.body))

    def added(self) -> dict[str, tuple[Key, str, str, str]]:
        """What :meth:`put` took so far: path → (key, namespace, frontmatter JSON, body)."""
        return {row[0]: (tuple(row[1:5]), row[5], row[6], row[7]) for row in self._put}

    def close(self, live: set[str] | None) -> None:
        """Write what this scan parsed and forget files that are gone (best effort); ``live`` None
        forgets nothing (a caller that looked at some files only)."""
        if self._conn is None:
            return
        gone = [(rel,) for rel in self._rows if live is not None and rel not in live]
        try:
            if self._put or gone or self._stored_fingerprint() != self._fingerprint:
                with self._conn:
                    self._conn.execute("BEGIN IMMEDIATE")
                    # Checked again under the write lock: a process with other settings may have written since.
                    if self._stored_fingerprint() != self._fingerprint:
                        self._conn.execute("DELETE FROM memo")
                        self._conn.execute(
                            "INSERT OR REPLACE INTO meta VALUES (?, ?)", (_FINGERPRINT, self._fingerprint)
                        )
                    self._conn.executemany("INSERT OR REPLACE INTO memo VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self._put)
                    self._conn.executemany("DELETE FROM memo WHERE path = ?", gone)
        except sqlite3.Error as exc:  # another process holds it: the next scan writes instead
            log.debug("scan memo not written: %s", exc)
        finally:
            self._drop_connection()

    def _stored_fingerprint(self) -> str | None:
        assert self._conn is not None
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (_FINGERPRINT,)).fetchone()
        return row[0] if row else None

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
