"""The catalog: one SQLite file per build holding every indexed row, its vectors and the manifest.

SQLite gives us what a hand-rolled file would not: atomic multi-row updates,
readers in other processes that never see half a write (WAL), and a cheap
``generation`` read per recall. Rows are keyed by path (two files may claim
one id; a path is unique). ``gen`` on each row and the ``tombstones`` table
let a reader fetch only what changed since the generation it holds.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from remnic.fsio import make_private

from .manifest import Manifest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    path        TEXT PRIMARY KEY,
    id          TEXT NOT NULL,
    namespace   TEXT NOT NULL,
    category    TEXT NOT NULL,
    status      TEXT NOT NULL,
    content_hash TEXT,
    created     REAL,
    updated     REAL,
    importance  REAL NOT NULL,
    confidence  REAL NOT NULL,
    episode     TEXT,
    turn        TEXT,
    position    INTEGER,
    title       TEXT NOT NULL,
    tags        TEXT NOT NULL,
    frontmatter TEXT NOT NULL,
    content     TEXT NOT NULL,
    sig         TEXT NOT NULL,
    chunks      BLOB NOT NULL,
    ctx         BLOB,
    dates       TEXT NOT NULL DEFAULT '[]',
    passages    TEXT NOT NULL DEFAULT '{}',
    gen         INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS docs_id ON docs(id);
CREATE INDEX IF NOT EXISTS docs_hash ON docs(namespace, content_hash);
CREATE INDEX IF NOT EXISTS docs_episode ON docs(episode);
CREATE INDEX IF NOT EXISTS docs_gen ON docs(gen);
CREATE INDEX IF NOT EXISTS docs_category ON docs(category);
CREATE TABLE IF NOT EXISTS pending_vectors (
    path  TEXT PRIMARY KEY,
    texts TEXT NOT NULL,
    ctx   INTEGER NOT NULL,
    n     INTEGER NOT NULL,
    chars INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pending_chars ON pending_vectors(chars);
CREATE TABLE IF NOT EXISTS vocab (word TEXT PRIMARY KEY, vec BLOB NOT NULL, gen INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vocab_gen ON vocab(gen);
CREATE TABLE IF NOT EXISTS tombstones (path TEXT PRIMARY KEY, gen INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""

_F32 = np.dtype("<f4")
_SNAPSHOT_COLS = (
    "path, id, namespace, category, status, updated, importance, confidence, episode, position, chunks, ctx, gen, "
    "created, dates"
)


@dataclass
class Row:
    """One indexed memory as the catalog stores it."""

    path: str
    id: str
    namespace: str
    category: str
    status: str
    content_hash: str | None
    created: float | None
    updated: float | None
    importance: float
    confidence: float
    episode: str | None
    turn: str | None
    position: int | None
    title: str
    tags: list[str]
    frontmatter: dict[str, Any]
    content: str
    sig: str
    chunks: np.ndarray
    ctx: np.ndarray | None
    dates: list[tuple[int, int]] = field(default_factory=list)
    """Spans (first day, last day; days since 1970-01-01) of the dates its text names."""
    passages: dict[str, Any] = field(default_factory=dict)
    """A long memory's passages: {"p": [[start, end, heading], …], "c": [passage of each chunk]} (else {})."""
    pending: list[str] | None = None
    """Texts still to embed (its chunks, then its context passage when ``pending_ctx``); ``chunks`` is then empty."""
    pending_ctx: bool = False

    def values(self, gen: int) -> tuple:
        return (
            self.path,
            self.id,
            self.namespace,
            self.category,
            self.status,
            self.content_hash,
            self.created,
            self.updated,
            self.importance,
            self.confidence,
            self.episode,
            self.turn,
            self.position,
            self.title,
            json.dumps(self.tags),
            json.dumps(self.frontmatter, default=str),
            self.content,
            self.sig,
            np.ascontiguousarray(self.chunks, dtype=_F32).tobytes(),
            None if self.ctx is None else np.ascontiguousarray(self.ctx, dtype=_F32).tobytes(),
            json.dumps([list(d) for d in self.dates]),
            json.dumps(self.passages),
            gen,
        )


class CatalogError(RuntimeError):
    """The catalog file is unreadable or inconsistent: the index must be rebuilt."""


class Catalog:
    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        if not create and not path.is_file():
            raise CatalogError(f"no catalog at {path}")
        # It holds every memory's text: owner-only, made so before SQLite creates it (its WAL and
        # shared-memory files take the file's mode) and again for one written with a looser mode.
        for suffix in ("", "-wal", "-shm"):
            make_private(path.with_name(path.name + suffix), create=create and not suffix)
        try:
            self.conn = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False, isolation_level=None)
            self.conn.execute("PRAGMA busy_timeout = 30000")
            if create:
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.executescript(_SCHEMA)
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("SELECT 1 FROM meta LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            raise CatalogError(f"catalog {path} is unreadable: {exc}") from None

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    # --- manifest ---

    def manifest(self) -> Manifest:
        try:
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise CatalogError(f"catalog {self.path} is unreadable: {exc}") from None
        return Manifest.from_meta(meta)

    def generation(self) -> tuple[int, str]:
        """(generation, pending) in one cheap read: the per-recall freshness probe."""
        try:
            rows = dict(
                self.conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'pending')").fetchall()
            )
        except sqlite3.DatabaseError as exc:
            raise CatalogError(f"catalog {self.path} is unreadable: {exc}") from None
        try:
            return int(rows.get("generation", "-1")), rows.get("pending", "")
        except ValueError:
            return -1, ""

    def meta_value(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, values: dict[str, str]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(values.items()))

    # --- writing (callers wrap these in a transaction) ---

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def upsert(self, rows: Sequence[Row], gen: int) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO docs (path, id, namespace, category, status, content_hash, created, updated, "
            "importance, confidence, episode, turn, position, title, tags, frontmatter, content, sig, chunks, ctx, "
            "dates, passages, gen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [r.values(gen) for r in rows],
        )
        self.conn.executemany("DELETE FROM tombstones WHERE path = ?", [(r.path,) for r in rows])
        self.conn.executemany("DELETE FROM pending_vectors WHERE path = ?", [(r.path,) for r in rows if not r.pending])
        self.conn.executemany(
            "INSERT OR REPLACE INTO pending_vectors (path, texts, ctx, n, chars) VALUES (?, ?, ?, ?, ?)",
            [
                (r.path, json.dumps(r.pending), int(r.pending_ctx), len(r.pending), max(map(len, r.pending)))
                for r in rows
                if r.pending
            ],
        )

    def remove(self, paths: Iterable[str], gen: int) -> list[str]:
        """Delete rows by path; returns the paths that were indexed."""
        gone = []
        for path in paths:
            cur = self.conn.execute("DELETE FROM docs WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM pending_vectors WHERE path = ?", (path,))
            if cur.rowcount:
                gone.append(path)
                self.conn.execute("INSERT OR REPLACE INTO tombstones (path, gen) VALUES (?, ?)", (path, gen))
        return gone

    def add_vocab(self, words: Sequence[str], vectors: np.ndarray, gen: int) -> None:
        """Add embedded vocabulary words (a word already there keeps its vector)."""
        self.conn.executemany(
            "INSERT OR IGNORE INTO vocab (word, vec, gen) VALUES (?, ?, ?)",
            [(w, np.ascontiguousarray(v, dtype=_F32).tobytes(), gen) for w, v in zip(words, vectors)],
        )

    # --- reading ---

    def known_words(self, words: Sequence[str]) -> set[str]:
        """Those of ``words`` the vocabulary already holds."""
        out: set[str] = set()
        for i in range(0, len(words), 500):
            part = list(words[i : i + 500])
            marks = ",".join("?" * len(part))
            out.update(r[0] for r in self.conn.execute(f"SELECT word FROM vocab WHERE word IN ({marks})", part))
        return out

    def vocab_rows(self, dim: int, since_gen: int | None = None) -> Generator[tuple[str, np.ndarray], None, None]:
        """(word, vector) of the vocabulary (all, or the words added after ``since_gen``)."""
        sql, args = "SELECT word, vec FROM vocab", []
        if since_gen is not None:
            sql, args = sql + " WHERE gen > ?", [since_gen]
        for word, blob in self.conn.execute(sql + " ORDER BY gen, word", args):
            yield word, vectors_from_blob(blob, dim)[0]

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    def pending_counts(self) -> tuple[int, int]:
        """(memories waiting for their vectors, texts they need embedded)."""
        notes, texts = self.conn.execute("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM pending_vectors").fetchone()
        return int(notes), int(texts)

    def pending_batch(self, max_texts: int) -> list[tuple[str, str, bool]]:
        """The next memories to embed, shortest texts first: [(path, texts as JSON, has a context passage)],
        about ``max_texts`` texts in all (at least one memory)."""
        out: list[tuple[str, str, bool]] = []
        total = 0
        for path, texts, ctx, n in self.conn.execute("SELECT path, texts, ctx, n FROM pending_vectors ORDER BY chars"):
            if out and total + n > max_texts:
                break
            out.append((path, texts, bool(ctx)))
            total += n
        return out

    def fill_vectors(self, items: Sequence[tuple[str, str, np.ndarray, np.ndarray | None]], gen: int) -> int:
        """Store embedded vectors of pending memories: [(path, texts as JSON, chunk vectors, context vector)].

        A memory whose pending texts changed meanwhile (it was written again) is left alone; returns
        how many were filled. Callers wrap this in a transaction.
        """
        filled = 0
        for path, texts, chunks, ctx in items:
            cur = self.conn.execute("DELETE FROM pending_vectors WHERE path = ? AND texts = ?", (path, texts))
            if not cur.rowcount:
                continue
            self.conn.execute(
                "UPDATE docs SET chunks = ?, ctx = ?, gen = ? WHERE path = ?",
                (
                    np.ascontiguousarray(chunks, dtype=_F32).tobytes(),
                    None if ctx is None else np.ascontiguousarray(ctx, dtype=_F32).tobytes(),
                    gen,
                    path,
                ),
            )
            filled += 1
        return filled

    def id_by_hash(self, namespace: str, content_hash: str) -> str | None:
        row = self.conn.execute(
            "SELECT id FROM docs WHERE namespace = ? AND content_hash = ? AND status = 'active' LIMIT 1",
            (namespace, content_hash),
        ).fetchone()
        return row[0] if row else None

    def path_of(self, memory_id: str) -> str | None:
        row = self.conn.execute("SELECT path FROM docs WHERE id = ? ORDER BY path LIMIT 1", (memory_id,)).fetchone()
        return row[0] if row else None

    def sigs(self, paths: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """path → (sig, episode) for the paths that are indexed."""
        out: dict[str, tuple[str, str | None]] = {}
        for start in range(0, len(paths), 500):
            chunk = list(paths[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for path, sig, ep in self.conn.execute(
                f"SELECT path, sig, episode FROM docs WHERE path IN ({marks})", chunk
            ):
                out[path] = (sig, ep)
        return out

    def episode_members(
        self, episodes: Iterable[str]
    ) -> dict[str, list[tuple[str, str, float | None, str | None, str]]]:
        """episode → [(path, content, created, turn, context sig)] for every indexed member."""
        out: dict[str, list[tuple[str, str, float | None, str | None, str]]] = {}
        for ep in set(episodes):
            out[ep] = [
                tuple(r)
                for r in self.conn.execute(
                    "SELECT path, content, created, turn, sig FROM docs WHERE episode = ?", (ep,)
                )
            ]
        return out

    def rows_for_paths(self, paths: Sequence[str], dim: int) -> dict[str, Row]:
        out: dict[str, Row] = {}
        for start in range(0, len(paths), 500):
            chunk = list(paths[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(
                "SELECT path, id, namespace, category, status, content_hash, created, updated, importance, "
                f"confidence, episode, turn, position, title, tags, frontmatter, content, sig, chunks, ctx, dates, "
                f"passages "
                f"FROM docs WHERE path IN ({marks})",
                chunk,
            ):
                out[r[0]] = Row(
                    r[0],
                    r[1],
                    r[2],
                    r[3],
                    r[4],
                    r[5],
                    r[6],
                    r[7],
                    r[8],
                    r[9],
                    r[10],
                    r[11],
                    r[12],
                    r[13],
                    json.loads(r[14]),
                    json.loads(r[15]),
                    r[16],
                    r[17],
                    vectors_from_blob(r[18], dim),
                    None if r[19] is None else np.frombuffer(r[19], dtype=_F32),
                    [tuple(d) for d in json.loads(r[20] or "[]")],
                    json.loads(r[21] or "{}"),
                )
        return out

    def hit_fields(self, paths: Sequence[str]) -> dict[str, tuple[dict[str, Any], str]]:
        """path → (frontmatter, content) for the final hits of a recall."""
        out: dict[str, tuple[dict[str, Any], str]] = {}
        marks = ",".join("?" * len(paths))
        if not paths:
            return out
        for path, fm, content in self.conn.execute(
            f"SELECT path, frontmatter, content FROM docs WHERE path IN ({marks})", list(paths)
        ):
            out[path] = (json.loads(fm), content)
        return out

    def passages(self, paths: Sequence[str]) -> dict[str, dict[str, Any]]:
        """path → its passage map (see ``Row.passages``), for the long memories among ``paths``."""
        if not paths:
            return {}
        marks = ",".join("?" * len(paths))
        return {
            path: json.loads(raw)
            for path, raw in self.conn.execute(
                f"SELECT path, passages FROM docs WHERE path IN ({marks}) AND passages != '{{}}'", list(paths)
            )
        }

    def snapshot_rows(self, since_gen: int | None = None) -> Generator[tuple, None, None]:
        """Rows for the in-memory snapshot (all, or those written after ``since_gen``).

        Close the generator before the connection (``contextlib.closing``). A plain loop, not ``yield
        from``: closing the generator late then does not close the cursor of a connection closed since."""
        if since_gen is None:
            rows = self.conn.execute(f"SELECT {_SNAPSHOT_COLS} FROM docs ORDER BY path")
        else:
            rows = self.conn.execute(f"SELECT {_SNAPSHOT_COLS} FROM docs WHERE gen > ? ORDER BY path", (since_gen,))
        for row in rows:  # noqa: UP028 - see above
            yield row

    def tombstones_since(self, gen: int) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT path FROM tombstones WHERE gen > ?", (gen,))]

    def paths_with_entity(self, entity_ref: str, namespace: str | None = None) -> list[str]:
        sql = "SELECT path FROM docs WHERE json_extract(frontmatter, '$.entityRef') = ?"
        args: list[str] = [entity_ref]
        if namespace is not None:
            sql += " AND namespace = ?"
            args.append(namespace)
        return [row[0] for row in self.conn.execute(sql, args)]

    def all_paths(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT path FROM docs")]

    def frontmatter_keys(
        self, keys: Sequence[str], since_gen: int | None = None
    ) -> Iterator[tuple[str, dict[str, Any], list[str]]]:
        """(path, {key: value}, tags) for every memory (or those written after ``since_gen``): only ``keys`` of
        the frontmatter, so reading a few keys of every memory does not parse every frontmatter whole, and
        the memory's tags as indexed (every spelling of the frontmatter's, and the body's ``#tags``)."""
        if not all(re.fullmatch(r"[A-Za-z_]\w*", k) for k in keys):
            raise ValueError(f"not a frontmatter key: {keys!r}")
        pairs = ", ".join(f"'{k}', json_extract(frontmatter, '$.{k}')" for k in keys)  # json_object keeps arrays
        where, args = ("", ()) if since_gen is None else (" WHERE gen > ?", (since_gen,))
        for path, fields, tags in self.conn.execute(f"SELECT path, json_object({pairs}), tags FROM docs{where}", args):
            yield path, {k: v for k, v in json.loads(fields).items() if v is not None}, json.loads(tags)


def vectors_from_blob(blob: bytes, dim: int) -> np.ndarray:
    arr = np.frombuffer(blob, dtype=_F32)
    if dim <= 0 or arr.size % dim:
        raise CatalogError("vector blob has the wrong size for the model's dimension")
    return arr.reshape(-1, dim)
