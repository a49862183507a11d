"""Writing the index: incremental batches after writes, catch-up from git and full rebuilds.

A mixin of :class:`remnic.index.search.SearchIndex` (which owns opening, probing and
look-ups); kept apart because this is where the ordering rules live that make a
crash always detectable:

- an incremental batch marks the catalog ``pending``, commits tantivy, then writes
  rows, tombstones, the new generation and the commit in one catalog transaction;
- a rebuild writes a complete new build directory and only then swaps ``CURRENT``;
- ``ensure_fresh`` probes cheaply first and takes the repository write lock only
  when the index must change.

Full rebuilds live in :mod:`.rebuild`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import LedgerError, MemoryFormatError, NotFoundError
from remnic.memfile.model import MemoryRecord, now_iso

from . import text as T
from .catalog import Catalog, Row
from .manifest import Manifest, write_manifest_json
from .reads import read_paths
from .rebuild import WORKTREE_KEY, IndexRebuilds, capped_problems, changed_memory_paths, deferred_note
from .rows import build_rows, cached_only, ctx_sig, embed_texts, turn_of
from .state import UNUSABLE, FreshReport, IndexDirError, NeedsRebuild, WorktreeReport

if TYPE_CHECKING:  # pragma: no cover
    from remnic.config import Settings
    from remnic.repo.files import MemoryStore
    from remnic.repo.ledger import Ledger

    from .bm25 import Bm25Index
    from .embed import Embedder
    from .embed_cache import EmbeddingCache
    from .vectors import Snapshot

log = logging.getLogger("remnic.index.search")
_told_capped: set[str] = set()
__all__ = ["WORKTREE_KEY", "IndexWrites", "changed_memory_paths"]  # both imported from here by the service


def _path_list(raw: str | None) -> set[str]:
    try:
        value = json.loads(raw or "[]")
    except ValueError:
        return set()
    return {p for p in value if isinstance(p, str)} if isinstance(value, list) else set()


def _differs(files: MemoryStore, path: str, stored: tuple[dict[str, Any], str] | None) -> bool:
    """Whether the file on disk says something else than the index holds for ``path`` (a file that is
    gone, malformed or no memory any more differs from an indexed one, and not from an absent one)."""
    if not files.paths.is_memory(path):
        return stored is not None
    try:
        record = files.read(path)
    except (NotFoundError, MemoryFormatError, OSError, UnicodeDecodeError):
        return stored is not None
    if stored is None:
        return bool(record.content)
    frontmatter = json.loads(json.dumps(record.frontmatter, default=str))
    return stored != (frontmatter, record.content)


Progress = Callable[[int, int], None]


class IndexWrites(IndexRebuilds):
    """apply / refresh_paths / ensure_fresh / rebuild for :class:`~remnic.index.search.SearchIndex`."""

    # Provided by SearchIndex.
    root: Path
    rules: T.TextRules
    settings: Settings
    _lock: threading.RLock
    _catalog: Catalog | None
    _bm25: Bm25Index | None
    _snap: Snapshot | None
    _build: str | None
    _manifest: Manifest | None
    _writing: bool
    language: str

    if TYPE_CHECKING:  # pragma: no cover

        @property
        def embedder(self) -> Embedder: ...
        @property
        def cache(self) -> EmbeddingCache: ...
        @property
        def model_id(self) -> str: ...
        @property
        def fingerprint(self) -> str: ...
        def _write_lock(self, files: MemoryStore | None = None) -> AbstractContextManager[None]: ...
        def _check(self) -> Manifest: ...
        def _sync(self) -> Snapshot: ...
        def _close_build(self) -> None: ...
        def _open(self, name: str) -> None: ...
        def _follows(self, old: str | None, new: str) -> bool: ...
        def _head(self) -> str | None: ...
        def _ledger(self) -> Ledger | None: ...

    # ------------------------------------------------------------------ contract: writes

    def apply(
        self,
        upserts: Sequence[MemoryRecord],
        removed_paths: Sequence[str],
        commit: str | None,
        *,
        parent: str | None = None,
        progress: Progress | None = None,
        defer_above: int | None = None,
        strict: bool = False,
        stamp: bool = False,
        complete: bool = False,
    ) -> None:
        """Index written records and drop removed paths; ``commit`` None leaves the recorded commit as is.

        With ``defer_above``, a batch whose texts need more than that many model runs is written
        without their vectors (searchable by BM25 at once); :meth:`embed_pending` adds them.

        With ``parent`` (the commit these changes were made on) the batch is applied only when the
        index reflects exactly ``parent``, and then records ``commit``: an index that is behind or
        ahead (another process's write landed first) is left to catch up from git, so a late batch
        can never overwrite newer text.

        ``stamp`` (sync) records ``commit`` as reflected whatever the index recorded before: only over an index
        that records a commit, or with ``complete`` (the batch is every memory file) over any; else it raises
        :class:`~.state.NotContinued` and writes nothing (:mod:`.continuity`).

        A failure is logged and left to the next recall's catch-up; ``strict`` (sync) raises it, as sync would
        otherwise record its commit as reflected over a batch that never landed.
        """
        if not upserts and not removed_paths and commit is None:
            return
        with self._write_lock():
            try:
                self._ensure_writable(fresh=complete or not stamp)
                if parent is not None and commit is not None:
                    assert self._catalog is not None
                    recorded = self._catalog.manifest().commit
                    if recorded != parent:
                        log.debug("index at %s, batch %s..%s left to catch-up", recorded, parent, commit)
                        return
                self._write(
                    upserts,
                    removed_paths,
                    commit,
                    set_commit=parent is not None or stamp,
                    progress=progress,
                    defer_above=defer_above,
                )
            except (ImportError, KeyboardInterrupt):
                raise
            except Exception as exc:  # the write is committed; the index must not undo it
                if strict:  # the caller would record its commit as reflected, this batch lost under it
                    raise
                if isinstance(exc, IndexDirError):  # no recall can build the index either
                    log.warning("index not updated: %s", exc.message)
                else:  # the recorded commit did not advance (or ``pending`` marks a torn write): the next
                    # recall catches up from git or rebuilds, a lagging index, never a failed write
                    log.warning("index update failed (%s); the next recall will catch up", exc)

    def refresh_paths(
        self, files: MemoryStore, paths: Sequence[str], commit: str | None = None, progress: Progress | None = None
    ) -> FreshReport:
        """Re-read ``paths`` and update the index (gone or malformed files are dropped): from disk, or
        with ``commit`` as that commit holds them, and the index is then recorded as reflecting it
        (the caller has reconciled everything since the previous one: an index that records none raises
        :class:`~.state.NotContinued`, as stamped it would claim files it lacks)."""
        t0 = time.perf_counter()
        with self._write_lock(files):
            self._ensure_writable(fresh=commit is None)
            report = self._refresh(files, paths, commit, progress)
        report.seconds = time.perf_counter() - t0
        return report

    def _refresh(
        self,
        files: MemoryStore,
        paths: Sequence[str],
        commit: str | None,
        progress: Progress | None = None,
        ledger: Ledger | None = None,
        *,
        defer_above: int | None = None,
    ) -> FreshReport:
        # Read as ``commit`` holds them, never from the work tree: an uncommitted edit recorded as
        # ``commit``'s text would outlive the edit (:mod:`.reads`). Without git, from disk.
        repo = (ledger or self._ledger()) if commit is not None and paths else None
        read = read_paths(files, paths, (repo, commit) if repo is not None and commit is not None else None)
        embedded = self._write(
            read.upserts, read.removed, commit, set_commit=True, progress=progress, defer_above=defer_above
        )
        changed = len(read.upserts) + len(read.removed)
        return FreshReport("catch-up", changed=changed, embedded=embedded, problems=read.problems)

    def follow_worktree(self, files: MemoryStore, dirty: Sequence[str], limit: int) -> WorktreeReport:
        """Index memory files whose text differs from HEAD's (hand edits no sync has committed), recording
        no commit. ``dirty`` is git's list of changed memory paths; paths indexed from the work tree
        before are read again too, so a file put back to HEAD's text is indexed as HEAD has it. Only
        files whose text or frontmatter differ from what the index holds are written; more than
        ``limit`` of them are left to ``remnic sync run`` and reported, so a recall is never held up
        by a large re-embed."""
        t0 = time.perf_counter()
        with self._lock:
            self._check()
            assert self._catalog is not None
            before = _path_list(self._catalog.meta_value(WORKTREE_KEY))
            candidates = sorted(set(dirty) | before)
            stored = self._catalog.hit_fields(candidates) if candidates else {}
        changed = [p for p in candidates if _differs(files, p, stored.get(p))]
        report = WorktreeReport(dirty=len(dirty), changed=len(changed), paths=changed[:10])
        if len(changed) > limit:
            report.deferred = True
        elif changed or before != set(dirty):
            with self._write_lock(files):
                self._ensure_writable()
                assert self._catalog is not None
                if changed:  # as on disk, no commit recorded: the recall searches the edits
                    read = read_paths(files, changed)
                    self._write(read.upserts, read.removed, None, set_commit=True)
                    report.record(read, dirty)
                self._catalog.begin()
                self._catalog.set_meta({WORKTREE_KEY: json.dumps(sorted(dirty))})
                self._catalog.commit()
        report.seconds = time.perf_counter() - t0
        return report

    # ------------------------------------------------------------------ building rows

    def _rows(
        self,
        records: Sequence[MemoryRecord],
        contexts: dict[str, T.Context],
        positions: dict[str, int],
        progress: Progress | None = None,
        defer_above: int | None = None,
    ) -> tuple[list[Row], dict[str, dict[str, str]], int]:
        def cached(texts: list[str]) -> tuple[Any, Any] | None:  # None: few enough to embed now
            matrix, have = cached_only(self.embedder, self.cache, texts)
            return (matrix, have) if len(texts) - int(have.sum()) > (defer_above or 0) else None

        rules = self._embed_rules()
        for rec in records:  # said once per process, not on every watcher pass or recall
            if rules.may_cap(rec.content) and (said := T.capped_note(rec, rules)) and said not in _told_capped:
                _told_capped.add(said)
                log.warning(said)
        return build_rows(
            records,
            contexts,
            positions,
            rules,
            lambda texts: embed_texts(self.embedder, self.cache, texts, progress),
            cached if defer_above is not None else None,
        )

    def _embed_rules(self) -> T.TextRules:
        """The text rules with ``recall.maxVectors`` (read here until SearchIndex builds its rules with it)."""
        cap = max(0, self.settings.recall.max_vectors)
        return self.rules if cap == self.rules.max_vectors else replace(self.rules, max_vectors=cap)

    def _new_words(self, cat: Catalog | None, texts: Sequence[str]) -> tuple[list[str], Any, int]:
        """The words of ``texts`` the vocabulary lacks, their vectors (through the embedding cache) and how
        many the model ran for. Only texts whose memories have their vectors are given: a deferred
        memory's words are added with its vectors (:mod:`.pending`)."""
        words = self._missing_words(cat, texts)
        vectors, embedded = embed_texts(self.embedder, self.cache, words)
        return words, vectors, embedded

    def _missing_words(self, cat: Catalog | None, texts: Sequence[str]) -> list[str]:
        from .bm25 import STOPWORDS
        from .vocab import words_of

        words = list(dict.fromkeys(w for t in texts for w in words_of(t, STOPWORDS)))
        if cat is not None and words:
            known = cat.known_words(words)
            words = [w for w in words if w not in known]
        return words

    def _contexts_for(self, members: Sequence[T.Member]) -> dict[str, T.Context]:
        return T.episode_contexts(members, self.rules.neighbor_window, self.rules.context_max_chars)

    # ------------------------------------------------------------------ incremental write

    def _write(
        self,
        upserts: Sequence[MemoryRecord],
        removed: Sequence[str],
        commit: str | None,
        *,
        set_commit: bool,
        progress: Progress | None = None,
        defer_above: int | None = None,
    ) -> int:
        """Apply one batch under the write lock: tantivy first (marked pending), then the catalog."""
        assert self._catalog is not None and self._bm25 is not None
        cat = self._catalog
        manifest = cat.manifest()
        by_path = {r.path: r for r in upserts}
        removed_set = set(removed) - set(by_path)
        old = cat.sigs(list(by_path) + list(removed_set))

        # Episodes whose member list or texts change: their members' contexts must be recomputed,
        # and a neighbour is re-indexed only when its context (or position) actually changed.
        episodes = {T.episode_key(r.frontmatter, r.namespace) for r in upserts}
        episodes |= {ep for _, ep in old.values()}
        episodes.discard(None)
        contexts: dict[str, T.Context] = {}
        positions: dict[str, int] = {}
        neighbour_paths: list[str] = []
        if episodes:
            members = cat.episode_members(episodes)  # type: ignore[arg-type]
            for ep in episodes:
                if ep is None:
                    continue
                stored_sig: dict[str, str] = {}
                group: dict[str, T.Member] = {}
                for p, content, created, turn, sig in members.get(ep, []):
                    if p not in removed_set and p not in by_path:
                        group[p] = T.Member(p, content, created, turn)
                        stored_sig[p] = sig
                for r in upserts:
                    if T.episode_key(r.frontmatter, r.namespace) == ep:
                        group[r.path] = T.Member(r.path, r.content, T.created_ts(r), turn_of(r))
                ctxs = self._contexts_for(list(group.values()))
                pos = T.positions(list(group.values()))
                contexts.update(ctxs)
                positions.update(pos)
                neighbour_paths += [p for p in stored_sig if ctx_sig(ctxs.get(p), pos[p]) != stored_sig[p]]

        neighbours: list[MemoryRecord] = []
        if neighbour_paths:
            stored = cat.rows_for_paths(neighbour_paths, self.embedder.dim)
            for p in neighbour_paths:
                row = stored.get(p)
                if row is not None:
                    neighbours.append(MemoryRecord(row.path, row.frontmatter, row.content, row.namespace))

        rows, docs, embedded = self._rows(
            list(by_path.values()) + neighbours, contexts, positions, progress, defer_above=defer_above
        )
        gone = [p for p in removed_set if p in old]
        if not rows and not gone and (commit is None or commit == manifest.commit):
            return 0

        words, vectors, _ = self._new_words(cat, [r.content for r in rows if not r.pending])
        gen = manifest.generation + 1
        # While this batch is applied the catalog still holds the rows of ``manifest.commit`` (they
        # change in one transaction below), so a duplicate check may read it: see lookup_hash.
        self._writing = True
        try:
            return self._apply_rows(
                cat, manifest, gen, rows, docs, gone, commit, set_commit, embedded, (words, vectors)
            )
        finally:
            self._writing = False

    def _apply_rows(
        self,
        cat: Catalog,
        manifest: Manifest,
        gen: int,
        rows: list[Row],
        docs: dict[str, dict[str, str]],
        gone: list[str],
        commit: str | None,
        set_commit: bool,
        embedded: int,
        vocab: tuple[list[str], Any] = ([], None),
    ) -> int:
        assert self._bm25 is not None
        self._mark_pending(cat)
        w = None
        try:
            with self._bm25.writer() as w:
                for p in gone:
                    w.delete(p)
                for row in rows:
                    w.delete(row.path)
                    w.add(docs[row.path])
        except BaseException:
            if w is None or not w.committed:
                self._clear_pending(cat)  # tantivy rolled back: the two sides still agree
            raise
        # From here a failure leaves ``pending`` set: the next probe rebuilds.
        new_commit = manifest.commit
        if commit is not None and (set_commit or self._follows(manifest.commit, commit)):
            new_commit = commit
        cat.begin()
        try:
            cat.upsert(rows, gen)
            if vocab[0]:
                cat.add_vocab(vocab[0], vocab[1], gen)
            cat.remove(gone, gen)
            count = cat.count()
            manifest.generation, manifest.count, manifest.commit = gen, count, new_commit
            manifest.vectors_pending = cat.pending_counts()[0]
            manifest.pending, manifest.updated_at = "", now_iso()
            cat.set_meta(manifest.to_meta())
            cat.commit()
        except BaseException:
            cat.rollback()
            raise
        write_manifest_json(self.root / (self._build or ""), manifest)
        self._sync()
        return embedded

    def _mark_pending(self, cat: Catalog) -> None:
        cat.begin()
        cat.set_meta({"pending": f"{os.getpid()}:{time.time():.0f}"})
        cat.commit()

    def _clear_pending(self, cat: Catalog) -> None:
        try:
            cat.begin()
            cat.set_meta({"pending": ""})
            cat.commit()
        except Exception:  # noqa: BLE001 - leave it for the probe to find
            cat.rollback()

    # ------------------------------------------------------------------ freshness & rebuild

    def ensure_fresh(self, files: MemoryStore, ledger: Ledger, progress: Progress | None = None) -> FreshReport:
        """Make the index reflect HEAD (and pick up other processes' writes); cheap when it already does."""
        t0 = time.perf_counter()
        head = ledger.head()
        with self._lock:
            try:
                m = self._check()
                if m.commit == head and (head is not None or m.built_at):
                    before = self._snap.gen if self._snap is not None else None
                    snap = self._sync()
                    action = "none" if before == snap.gen else "reloaded"
                    return FreshReport(action, seconds=time.perf_counter() - t0)
            except NeedsRebuild as exc:
                if exc.state == UNUSABLE:  # no rebuild can cure it: say so now, never scan and embed for nothing
                    raise IndexDirError(exc.detail) from None
        with self._write_lock(files):
            report = self._catch_up(files, ledger, progress)
        report.problems = capped_problems(report.problems)
        report.seconds = time.perf_counter() - t0
        return report

    def _catch_up(self, files: MemoryStore, ledger: Ledger, progress: Progress | None) -> FreshReport:
        """``ensure_fresh`` under the write lock. A recall must not wait minutes for a model: above
        ``sync.deferEmbeddingsAbove`` texts to embed, the rows are written for BM25 and their vectors left
        to ``remnic sync run`` (as a first adoption's sync does)."""
        defer = max(0, self.settings.sync.defer_embeddings_above)
        head = ledger.head()
        try:
            m = self._check()
        except NeedsRebuild as exc:
            return self._rebuild(files, head, progress, f"{exc.state}: {exc.detail}", ledger, defer_above=defer)
        if m.commit == head:
            self._sync()
            return FreshReport("reloaded")
        if m.commit is None or head is None or not ledger.commit_exists(m.commit):
            reason = (
                "partial index" if m.commit is None else f"indexed commit {m.commit[:8]} is gone (history rewritten?)"
            )
            return self._rebuild(files, head, progress, reason, ledger, defer_above=defer)
        try:  # git's diff, then HEAD's texts, are read before anything is written: a failure rebuilds
            changes = ledger.diff_names(m.commit, head)
            paths = [p for _status, path, old_path in changes for p in (path, old_path) if p]
            # Files indexed from the work tree are in no diff (an untracked one deleted since): re-read them too.
            assert self._catalog is not None
            paths += sorted(_path_list(self._catalog.meta_value(WORKTREE_KEY)))
            self._sync()
            report = self._refresh(files, paths, head, progress, ledger, defer_above=defer)
            report.reason = f"{m.commit[:8]}..{head[:8]}: {len(changes)} changed path(s)"
            waiting = self._catalog.manifest().vectors_pending
            if waiting > m.vectors_pending:
                report.reason += f"; {deferred_note(waiting)}"
        except LedgerError as exc:
            report = self._rebuild(files, head, progress, f"git failed: {exc.message}", ledger, defer_above=defer)
        return report
