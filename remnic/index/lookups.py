"""Catalog look-ups of :class:`~remnic.index.search.SearchIndex` that never load the model and never rebuild.

A write's duplicate check, an id hint, ``status``'s comparison of the index with the files: they read
ids and paths only, so neither the configured embedding model (missing, unloadable, another one than
the index's) nor changed settings stop them; only a missing or damaged catalog does (None).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .manifest import CATALOG_FILE, read_current
from .state import NeedsRebuild

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import Catalog
    from .manifest import Manifest


class IndexLookups:
    """``find_by_hash`` / ``lookup_hash`` / ``indexed_paths`` / ``path_of`` for the search index."""

    root: Path
    _lock: threading.RLock
    _readers: threading.local
    _catalog: Catalog | None
    _writing: bool

    if TYPE_CHECKING:  # pragma: no cover

        def _check(self, *, model: bool = True) -> Manifest: ...

    def _catalog_for_lookup(self) -> Catalog | None:
        try:
            self._check(model=False)
        except NeedsRebuild as exc:
            if exc.state in ("missing", "corrupt"):
                return None
        return self._catalog

    def find_by_hash(self, namespace: str, content_hash: str) -> str | None:
        """The id of an active indexed memory with this content hash, or None; never rebuilds."""
        with self._lock:
            cat = self._catalog_for_lookup()
            if cat is None:
                return None
            try:
                return cat.id_by_hash(namespace, content_hash)
            except Exception:  # noqa: BLE001 - a duplicate check must never break a write
                return None

    def lookup_hash(
        self, namespace: str, content_hash: str, status: str = "active"
    ) -> tuple[str | None, str | None, str | None] | None:
        """(commit the index reflects, id, path) of an indexed memory with this content hash and ``status``
        (id and path None when there is none); None when there is no index.

        Reads through a private read-only connection per thread, so a write's duplicate check
        never waits for the index worker that is applying the previous write.
        """
        import sqlite3

        name = read_current(self.root)
        if name is None:
            return None
        conn = self._reader(name)
        if conn is None:
            return None
        try:
            with conn:
                commit = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
                pending = conn.execute("SELECT value FROM meta WHERE key = 'pending'").fetchone()
                row = conn.execute(
                    "SELECT id, path FROM docs WHERE namespace = ? AND content_hash = ? AND status = ? LIMIT 1",
                    (namespace, content_hash, status),
                ).fetchone()
        except sqlite3.Error:
            self._readers.conn = None
            return None  # damaged or mid-rebuild: the caller looks in the files instead
        if pending and pending[0] and not (self._writing and pending[0].startswith(f"{os.getpid()}:")):
            return None  # a torn index write (or another process's, half done): not to be trusted
        recorded = commit[0] if commit and commit[0] else None
        return (recorded, row[0], row[1]) if row else (recorded, None, None)

    def _reader(self, build: str) -> Any:
        """This thread's read-only connection to ``build``'s catalog (reopened when the build changes)."""
        import sqlite3

        held = getattr(self._readers, "conn", None)
        if held is not None and held[0] == build:
            return held[1]
        if held is not None:
            held[1].close()
        try:
            conn = sqlite3.connect(f"file:{self.root / build / CATALOG_FILE}?mode=ro", uri=True, timeout=2)
        except sqlite3.Error:
            return None
        self._readers.conn = (build, conn)
        return conn

    def indexed_paths(self) -> set[str] | None:
        """Every memory path the live index holds (None without a readable index); never rebuilds."""
        with self._lock:
            cat = self._catalog_for_lookup()
            try:
                return set(cat.all_paths()) if cat is not None else None
            except Exception:  # noqa: BLE001 - a damaged catalog: health reports it
                return None

    def path_of(self, memory_id: str) -> str | None:
        with self._lock:
            cat = self._catalog_for_lookup()
            if cat is None:
                return None
            try:
                return cat.path_of(memory_id)
            except Exception:  # noqa: BLE001 - a hint only
                return None
