"""Full rebuilds of the index: every memory file read into a new build, swapped in when complete.

A mixin of :class:`~.build.IndexWrites` (so of :class:`remnic.index.search.SearchIndex`). A rebuild a
recall asks for defers the vectors of a large set of notes as sync's first adoption does (``defer_above``:
BM25 at once, the vectors computed by ``remnic sync run``), and a recall's report names its first
malformed files only (:func:`capped_problems`), never hundreds of lines.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord, now_iso

from . import text as T
from .catalog import Catalog, Row
from .continuity import Continuity
from .manifest import CATALOG_FILE, TANTIVY_DIR, Manifest, new_build_name, write_current, write_manifest_json
from .rows import episode_members
from .state import FreshReport, require_index_root

if TYPE_CHECKING:  # pragma: no cover
    from remnic.repo.files import MemoryStore
    from remnic.repo.ledger import Ledger

    from .embed import Embedder

log = logging.getLogger("remnic.index.search")
Progress = Callable[[int, int], None]
WORKTREE_KEY = "worktree"
"""Catalog meta: the paths last indexed from the work tree rather than from a commit (a JSON list)."""
SHOWN_PROBLEMS = 10
"""Malformed files a recall's index report names; the rest are counted (``remnic doctor`` lists them all)."""


def changed_memory_paths(ledger: Ledger, files: MemoryStore) -> list[str]:
    """Memory files git reports changed since HEAD: modified, new, deleted or renamed (both names)."""
    rows = ledger.status_porcelain()
    return sorted({p for _status, path, original in rows for p in (path, original) if p and files.paths.is_memory(p)})


def deferred_note(waiting: int) -> str:
    """What a recall's index step says when it left the vectors of ``waiting`` memories for later."""
    return (
        f"the vectors of {waiting} memor{'y' if waiting == 1 else 'ies'} wait (found by BM25 meanwhile): "
        "`remnic sync run` computes them"
    )


def capped_problems(problems: Sequence[str], limit: int = SHOWN_PROBLEMS) -> list[str]:
    """The first ``limit`` problems, then one line counting the rest and naming where they are all listed."""
    if len(problems) <= limit:
        return list(problems)
    rest = len(problems) - limit
    return [*problems[:limit], f"... and {rest} more malformed memory file(s): `remnic doctor` lists them all"]


class IndexRebuilds(Continuity):
    """rebuild / _create_build for :class:`~remnic.index.search.SearchIndex`."""

    root: Path
    language: str
    _manifest: Manifest | None

    if TYPE_CHECKING:  # pragma: no cover

        @property
        def embedder(self) -> Embedder: ...
        @property
        def model_id(self) -> str: ...
        @property
        def fingerprint(self) -> str: ...
        def _write_lock(self, files: MemoryStore | None = None) -> AbstractContextManager[None]: ...
        def _close_build(self) -> None: ...
        def _open(self, name: str) -> None: ...
        def _head(self) -> str | None: ...
        def _rows(
            self,
            records: Sequence[MemoryRecord],
            contexts: dict[str, T.Context],
            positions: dict[str, int],
            progress: Progress | None = None,
            defer_above: int | None = None,
        ) -> tuple[list[Row], dict[str, dict[str, str]], int]: ...
        def _new_words(self, cat: Catalog | None, texts: Sequence[str]) -> tuple[list[str], Any, int]: ...
        def _contexts_for(self, members: Sequence[T.Member]) -> dict[str, T.Context]: ...

    def _worktree_paths(self, files: MemoryStore, ledger: Ledger | None) -> set[str]:
        """Memory paths that differ from HEAD, for a rebuild to record (none known without git)."""
        repo = ledger if ledger is not None else self._ledger()
        if repo is None:
            return set()
        try:
            return set(changed_memory_paths(repo, files))
        except Exception as exc:  # noqa: BLE001 - a rebuild reads the files; git only says which are uncommitted
            log.warning("git status failed (%s): the rebuild records no work-tree paths", exc)
            return set()

    def rebuild(
        self,
        files: MemoryStore,
        ledger: Ledger | None = None,
        progress: Progress | None = None,
        reason: str = "requested",
    ) -> FreshReport:
        """Re-read every memory file and build a new index beside the old one, then swap it in."""
        t0 = time.perf_counter()
        with self._write_lock(files):
            head = ledger.head() if ledger is not None else self._head()
            report = self._rebuild(files, head, progress, reason, ledger)
        report.seconds = time.perf_counter() - t0
        return report

    def _rebuild(
        self,
        files: MemoryStore,
        head: str | None,
        progress: Progress | None,
        reason: str,
        ledger: Ledger | None,
        *,
        defer_above: int | None = None,
    ) -> FreshReport:
        # The scan reads the work tree, so the build is HEAD plus uncommitted files: those are recorded as
        # indexed from the work tree (git asked before and after the scan, so one made meanwhile is too),
        # or one deleted later, untracked, would stay in the index with no diff or status to say so.
        require_index_root(self.root)  # before any file is read or embedded
        worktree = self._worktree_paths(files, ledger)
        scan = files.scan()
        records = scan.records
        groups = episode_members(records)
        contexts: dict[str, T.Context] = {}
        positions: dict[str, int] = {}
        for members in groups.values():
            contexts.update(self._contexts_for(members))
            positions.update(T.positions(members))
        rows, docs, embedded = self._rows(records, contexts, positions, progress, defer_above=defer_above)
        words, vectors, _ = self._new_words(None, [r.content for r in rows if not r.pending])
        worktree |= self._worktree_paths(files, ledger)
        self._create_build(commit=head, rows=rows, docs=docs, vocab=(words, vectors), worktree=worktree)
        waiting = sum(1 for r in rows if r.pending)
        if waiting:
            reason += f"; {deferred_note(waiting)}"
        # A symbolic link is no malformed note: sync, init and doctor list it among the files left alone.
        problems = [p.describe() for p in scan.problems if not (p.path and os.path.islink(files.root / p.path))]
        return FreshReport("rebuild", reason=reason, changed=len(rows), embedded=embedded, problems=problems)

    def _create_build(
        self,
        *,
        commit: str | None,
        rows: Sequence[Row],
        docs: dict[str, dict[str, str]] | None = None,
        progress: Progress | None = None,
        vocab: tuple[list[str], Any] = ([], None),
        worktree: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """Write a complete new build directory, swap CURRENT to it, remove the old ones. ``worktree``: the
        paths its rows took from the work tree rather than from ``commit``."""
        from .bm25 import Bm25Index

        old_gen = self._manifest.generation if self._manifest is not None else 0
        require_index_root(self.root)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = new_build_name(old_gen + 1)
        build_dir = self.root / name
        build_dir.mkdir(mode=0o700)  # owner-only: the text search's store holds every memory's text
        try:
            bm25 = Bm25Index(build_dir / TANTIVY_DIR, create=True, language=self.language)
            with bm25.writer() as w:
                for row in rows:
                    w.add((docs or {})[row.path])
            cat = Catalog(build_dir / CATALOG_FILE, create=True)
            now = now_iso()
            manifest = Manifest(
                model_id=self.model_id,
                dim=self.embedder.dim,
                fingerprint=self.fingerprint,
                commit=commit,
                generation=old_gen + 1,
                count=len(rows),
                vectors_pending=sum(1 for r in rows if r.pending),
                built_at=now,
                updated_at=now,
            )
            cat.begin()
            cat.upsert(rows, manifest.generation)
            if vocab[0]:
                cat.add_vocab(vocab[0], vocab[1], manifest.generation)
            cat.set_meta({**manifest.to_meta(), WORKTREE_KEY: json.dumps(sorted(worktree))})
            cat.commit()
            cat.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cat.close()
            write_manifest_json(build_dir, manifest)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        write_current(self.root, name)
        self._close_build()
        self._open(name)
        self._check()
        self._sync()
        for entry in self.root.iterdir():  # only remnic's own old builds: anything else here is a person's
            if entry.name.startswith("build-") and entry.is_dir() and not entry.is_symlink() and entry.name != name:
                shutil.rmtree(entry, ignore_errors=True)
