"""A persistent cache of embeddings keyed by (model id, content hash): re-indexing unchanged text never re-embeds."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from remnic.memfile.model import content_hash

if TYPE_CHECKING:  # pragma: no cover
    from .embed import Embedder

__all__ = ["EmbeddingCache", "embed_cached"]

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    hash     TEXT NOT NULL,
    dim      INTEGER NOT NULL,
    vec      BLOB NOT NULL,
    PRIMARY KEY (model_id, hash)
) WITHOUT ROWID
"""
_F32 = np.dtype("<f4")  # fixed byte order so cache files are portable
_CHUNK = 500  # stay under SQLite's bound-parameter limit on old builds


def _is_corrupt(exc: BaseException) -> bool:
    """True only for a damaged/non-database file, never for busy or misuse errors."""
    name = getattr(exc, "sqlite_errorname", "")
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    return type(exc) is sqlite3.DatabaseError


def cache_file_problem(path: Path) -> str | None:
    """Why the cache cannot be kept at ``path`` (one line naming it and the cure), else None: a folder in
    its place, or a link to nothing (SQLite would make its file wherever the link points). Vectors are
    then kept in memory only, so every rebuild embeds every text again: slower, never wrong."""
    import shlex

    lost = "vectors are cached in memory only, so every rebuild embeds every text again"
    if path.is_symlink() and not path.exists():
        target = os.path.normpath(os.path.join(path.parent, os.readlink(path)))
        return (
            f"embedding cache {path} is a symlink to {target}, which does not exist: {lost}; "
            f"remove the link (rm {shlex.quote(str(path))}) and remnic keeps its cache there itself"
        )
    if path.is_dir():
        aside = f"mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.bak')}"
        return f"embedding cache {path} is a folder, not a file: {lost}; move it aside ({aside})"
    return None


class EmbeddingCache:
    """Persistent cache of embeddings keyed by (model_id, content hash), in a SQLite file (stdlib sqlite3), e.g. <memory>/.remnic/embeddings.sqlite.

    Re-indexing unchanged text must never re-embed. A corrupt file is moved
    aside (``.corrupt-<ts>``) and replaced; if even that fails the cache falls
    back to memory. Cache trouble is logged, never raised.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = self._open()

    def _connect(self, target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=10.0, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout = 10000")
            # WAL lets several remnic processes read while one writes.
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(_SCHEMA)
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> sqlite3.Connection:
        unusable = cache_file_problem(self.path)
        if unusable is not None:  # a file SQLite cannot open, or one it would make outside the repository
            log.warning("%s", unusable)
            return self._connect(":memory:")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return self._connect(str(self.path))
        except sqlite3.Error as exc:
            if not _is_corrupt(exc):
                # Locked/busy/permission trouble: the file may be fine, so keep it.
                log.warning("embedding cache %s unavailable (%s); using memory", self.path, exc)
                return self._connect(":memory:")
            log.warning("embedding cache %s is corrupt (%s); moving it aside", self.path, exc)
            if self._move_aside():
                try:
                    return self._connect(str(self.path))
                except sqlite3.Error as exc2:
                    log.warning("embedding cache %s still unusable (%s)", self.path, exc2)
        except OSError as exc:
            log.warning("embedding cache %s unavailable (%s); using memory", self.path, exc)
        return self._connect(":memory:")

    def _move_aside(self) -> bool:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
            n += 1
        try:
            os.replace(self.path, target)
        except OSError as exc:
            log.warning("could not move corrupt cache %s aside: %s", self.path, exc)
            return False
        # Stale WAL/SHM files belong to the old database; never replay them.
        for suffix in ("-wal", "-shm"):
            side = Path(str(self.path) + suffix)
            try:
                side.unlink(missing_ok=True)
            except OSError:
                pass
        log.warning("moved corrupt embedding cache to %s", target)
        return True

    def _recover(self, exc: sqlite3.Error) -> None:
        """Called with the lock held after a failed query."""
        if not _is_corrupt(exc):
            log.warning("embedding cache %s: %s", self.path, exc)
            return  # transient (locked, disk full): leave the file alone
        log.warning("embedding cache %s failed (%s); resetting it", self.path, exc)
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        if self._move_aside():
            try:
                self._conn = self._connect(str(self.path))
                return
            except sqlite3.Error as exc2:
                log.warning("embedding cache %s still unusable (%s)", self.path, exc2)
        self._conn = self._connect(":memory:")

    def get_many(self, model_id: str, hashes: Sequence[str], dim: int | None = None) -> dict[str, np.ndarray]:
        """Cached vectors by hash; rows with a wrong ``dim`` count as misses."""
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        with self._lock:
            if self._conn is None or not unique:
                return found
            try:
                for start in range(0, len(unique), _CHUNK):
                    chunk = unique[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = self._conn.execute(
                        f"SELECT hash, dim, vec FROM embeddings WHERE model_id = ? AND hash IN ({marks})",
                        (model_id, *chunk),
                    ).fetchall()
                    for h, row_dim, blob in rows:
                        if dim is not None and row_dim != dim:
                            continue
                        if not isinstance(blob, bytes) or len(blob) != row_dim * 4:
                            continue
                        found[h] = np.frombuffer(blob, dtype=_F32).astype(np.float32)
            except sqlite3.Error as exc:
                self._recover(exc)
                return {}
        return found

    def put_many(self, model_id: str, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors (1-D, any float dtype; saved as float32)."""
        rows = []
        for h, vec in items.items():
            arr = np.asarray(vec, dtype=_F32)
            if arr.ndim != 1:
                raise ValueError(f"expected a 1-D vector for {h}, got shape {arr.shape}")
            rows.append((model_id, h, int(arr.shape[0]), arr.tobytes()))
        if not rows:
            return
        with self._lock:
            if self._conn is None:
                return
            try:
                with self._conn:  # one transaction for the whole batch
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO embeddings (model_id, hash, dim, vec) VALUES (?, ?, ?, ?)",
                        rows,
                    )
            except sqlite3.Error as exc:
                self._recover(exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def embed_cached(
    embedder: Embedder,
    cache: EmbeddingCache | None,
    texts: Sequence[str],
    progress: Callable[[int, int], None] | None = None,
    *,
    bulk: bool = False,
) -> tuple[np.ndarray, int]:
    """Embed texts, using the cache by content hash; returns (matrix in input order, number of texts actually embedded by the model). Duplicated texts inside one call are embedded once.

    ``progress(done, total)`` counts texts (cache hits first, then as the model finishes batches);
    ``bulk`` as in :meth:`Embedder.embed`.
    """
    texts = list(texts)
    hashes = [content_hash(t) for t in texts]
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32), 0
    first_text: dict[str, str] = {}
    for h, t in zip(hashes, texts):
        first_text.setdefault(h, t)
    model_id = embedder.model_id
    vectors: dict[str, np.ndarray] = {}
    if cache is not None:
        vectors = cache.get_many(model_id, list(first_text), dim=embedder.dim)
    missing = [h for h in first_text if h not in vectors]
    total = len(first_text)
    if progress:
        progress(total - len(missing), total)
    if missing:
        step = None if progress is None else (lambda done, _n: progress(total - len(missing) + done, total))
        fresh = embedder.embed_documents([first_text[h] for h in missing], progress=step, bulk=bulk)
        new = dict(zip(missing, fresh))
        if cache is not None:
            cache.put_many(model_id, new)
        vectors.update(new)
    return np.stack([vectors[h] for h in hashes]).astype(np.float32, copy=False), len(missing)
