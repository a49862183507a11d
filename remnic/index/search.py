"""The search index: tantivy BM25 + exact-cosine vectors + a SQLite catalog, all rebuildable.

``SearchIndex`` is what the service layer talks to. The contract:

- ``apply(upserts, removed_paths, commit)`` — after every write, under the
  repository write lock; incremental. ``commit`` None means "unchanged" (used
  for working-tree content that is not committed yet).
- ``refresh_paths(files, paths, commit=None)`` — re-read paths from disk
  (edited, deleted, renamed files) and update the index.
- ``ensure_fresh(files, ledger, progress=None)`` — called by each recall: a
  cheap probe (CURRENT name, catalog generation, ``ledger.head()``), then, only
  when needed, a catch-up from ``git diff`` or a full rebuild under the lock.
- ``find_by_hash``, ``path_of`` — catalog look-ups that never load the model
  and never rebuild.
- ``health()`` — ok | behind | missing | stale | model-mismatch | schema-mismatch | corrupt, or
  model-error: the configured embedding model cannot be read or loaded (the index is left alone), or
  unusable: no index can be built where it belongs (``.remnic/index`` a file or a link to nothing).

Several processes may share one repository: writers serialise on the repo's
write lock (tantivy's own writer is held only inside it, briefly); readers
notice other processes' updates through the build name and the generation
counter and reload just what changed.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from remnic.config import Settings
from remnic.fsio import pid_alive
from remnic.repo.lock import process_lock

from . import text as T
from .bm25 import analyzer_version
from .build import IndexWrites
from .catalog import Catalog, CatalogError
from .embed_spec import INT8_MARK, MODEL_ID_KEY, EmbeddingError
from .lookups import IndexLookups
from .manifest import (
    CATALOG_FILE,
    EMBEDDINGS_FILE,
    SCHEMA_VERSION,
    TANTIVY_DIR,
    Manifest,
    current_problem,
    fingerprint,
    index_root,
    index_root_problem,
    read_current,
)
from .pending import PendingVectors
from .rows import embed_texts as cached_vectors
from .state import UNUSABLE, FreshReport, IndexDirError, IndexHealth, NeedsRebuild

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from remnic.repo.files import MemoryStore
    from remnic.repo.ledger import Ledger

    from .bm25 import Bm25Index
    from .embed import Embedder
    from .embed_cache import EmbeddingCache
    from .vectors import Snapshot
    from .vocab import Vocab

__all__ = ["SCHEMA_VERSION", "FreshReport", "IndexHealth", "Manifest", "SearchIndex"]

# Texts whose memory vector is kept: a flush compares each fact twice (within the flush, then against
# what is stored) and each later flush compares against the facts written but not indexed yet.
_MEMORY_VECTOR_MEMO = 8192
_BUSY = "another remnic process is updating or rebuilding the search index"  # a lock timeout says so

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
DATES_VERSION = "4"
"""Bump when :mod:`.dates` resolves or tokenises dates differently, or a memory is dated differently (the index is rebuilt)."""


class SearchIndex(IndexWrites, PendingVectors, IndexLookups):
    """The rebuildable index under ``<memory>/.remnic/index`` (writes and rebuilds: :mod:`.build`)."""

    def __init__(self, settings: Settings, *, cache: EmbeddingCache | None = None) -> None:
        self.settings = settings
        self.root = index_root(settings.state_dir)
        self._lock = threading.RLock()
        self._readers = threading.local()  # lock-free catalog readers (duplicate checks)
        self._writing = False  # this process is applying a batch: its own ``pending`` mark is no torn write
        self._index_lock = process_lock(
            (settings.state_dir / "index.lock").resolve(), "the index lock", _BUSY, wrong_type=IndexDirError
        )
        self._cache = cache
        self._embedder: Embedder | None = None
        self._memory_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_vectors_lock = threading.Lock()
        self._build: str | None = None
        self._catalog: Catalog | None = None
        self._bm25: Bm25Index | None = None
        self._snap: Snapshot | None = None
        self._vocab: Vocab | None = None
        self._word_memo: dict[str, np.ndarray] = {}
        """Loaded by the first recall that expands its query, then kept current like the snapshot."""
        self._manifest: Manifest | None = None
        self._manifest_gen = -2
        self._files: MemoryStore | None = None
        self._repo: Ledger | None = None
        self.language = settings.index.language
        r = settings.recall
        self.rules = T.TextRules(
            neighbor_window=max(0, r.neighbor_window),
            context_max_chars=r.context_max_chars,
            max_chunks=max(1, r.max_chunks),
            passage_chars=max(80, r.passage_chars),
            context_vectors=r.context_vectors,
        )

    # ------------------------------------------------------------------ identity

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from .embed import EmbedderSpec, get_embedder

            e = self.settings.embed
            self._embedder = get_embedder(
                EmbedderSpec(
                    # absolute: a message names the file read, and a server changing directory reads the same
                    model_path=Path(e.model_path).expanduser().absolute() if e.model_path else None,
                    tokenizer_path=Path(e.tokenizer_path).expanduser().absolute() if e.tokenizer_path else None,
                    model_id=e.model_id or None,
                    max_length=e.max_length,
                    batch_size=e.batch_size,
                    threads=e.threads,
                    bulk_workers=e.bulk_workers,
                    pooling=e.pooling,
                    normalize=e.normalize,
                    int8=e.int8,
                    output_name=e.output_name or None,
                    query_prefix=e.query_prefix,
                    document_prefix=e.document_prefix,
                )
            )
        return self._embedder

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def fingerprint(self) -> str:
        r = self.rules
        return fingerprint(
            {
                "neighborWindow": r.neighbor_window,
                "contextMaxChars": r.context_max_chars,
                "maxChunks": r.max_chunks,
                "chunkMinChars": r.chunk_min_chars,
                "passageChars": r.passage_chars,
                "analyzer": analyzer_version(self.language),
                "dates": DATES_VERSION,
                # only when not the default, so existing indexes keep their fingerprint
                **({"contextVectors": r.context_vectors} if r.context_vectors != "passage" else {}),
            }
        )

    @property
    def cache(self) -> EmbeddingCache:
        if self._cache is None:
            from .embed_cache import EmbeddingCache

            self._cache = EmbeddingCache(self.settings.state_dir / EMBEDDINGS_FILE)
        return self._cache

    def _store(self) -> MemoryStore:
        if self._files is None:
            from remnic.repo.files import MemoryStore

            self._files = MemoryStore(self.settings)
        return self._files

    @contextmanager
    def _write_lock(self, files: MemoryStore | None = None) -> Iterator[None]:
        # The index has its own lock, apart from the repository's write lock: writers commit while
        # the index catches up. Anyone holding both takes the repository's first.
        with self._index_lock.hold(self.settings.store.lock_timeout_s), self._lock:
            yield

    # ------------------------------------------------------------------ opening

    def _close_build(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
        self._catalog = None
        self._bm25 = None
        self._snap = None
        self._vocab = None
        self._build = None
        self._manifest = None
        self._manifest_gen = -2

    def _open(self, name: str) -> None:
        from .bm25 import Bm25Index

        self._close_build()
        build_dir = self.root / name
        try:
            catalog = Catalog(build_dir / CATALOG_FILE)
        except CatalogError as exc:
            raise NeedsRebuild("corrupt", str(exc)) from None
        try:
            bm25 = Bm25Index(build_dir / TANTIVY_DIR, language=self.language)
        except (OSError, ValueError) as exc:
            catalog.close()
            raise NeedsRebuild("corrupt", f"tantivy index unreadable: {exc}") from None
        self._catalog, self._bm25, self._build = catalog, bm25, name

    def _check(self, *, model: bool = True) -> Manifest:
        """Open the live build if it changed and validate its manifest; raises NeedsRebuild.

        ``model`` False (catalog look-ups) checks the build alone, not that the configured model and settings
        are the index's. A configured model that cannot be read raises its EmbeddingError: the model is at
        fault, not the index, and no rebuild cures that."""
        name = read_current(self.root)
        if name is None:
            self._close_build()
            unusable = index_root_problem(self.root)
            if unusable is not None:  # no rebuild can cure it: said, never attempted (see ensure_fresh)
                raise NeedsRebuild(UNUSABLE, unusable)
            damaged = current_problem(self.root)
            if damaged is not None:
                raise NeedsRebuild("corrupt", damaged)
            raise NeedsRebuild("missing", "no index yet" if not self.root.exists() else "index has no live build")
        if name != self._build:
            self._open(name)
        assert self._catalog is not None
        try:
            gen, pending = self._catalog.generation()
        except CatalogError as exc:
            self._close_build()
            raise NeedsRebuild("corrupt", str(exc)) from None
        if pending:
            pid = int(pending.split(":", 1)[0]) if pending.split(":", 1)[0].isdigit() else -1
            if pid == os.getpid() or not pid_alive(pid):
                said = f"interrupted write ({pending}); the next recall (or `remnic reindex`) repairs it"
                raise NeedsRebuild("corrupt", said)
        if gen != self._manifest_gen or self._manifest is None:
            try:
                self._manifest = self._catalog.manifest()
            except CatalogError as exc:
                raise NeedsRebuild("corrupt", str(exc)) from None
            self._manifest_gen = gen
        m = self._manifest
        if m.schema_version != SCHEMA_VERSION:
            raise NeedsRebuild(
                "schema-mismatch", f"index schema v{m.schema_version}, this remnic writes v{SCHEMA_VERSION}"
            )
        if self._bm25 is not None and self._bm25.passages is None:
            raise NeedsRebuild("corrupt", "the BM25 passage index is missing")
        if not model:
            return m
        if m.model_id != self.model_id:
            why = (
                " (embed.int8 changed: int8 or float matrix products)" if _int8_only(m.model_id, self.model_id) else ""
            )
            raise NeedsRebuild(
                "model-mismatch", f"index built with {m.model_id!r}, configured model is {self.model_id!r}{why}"
            )
        width = self._configured_dim()
        if m.dim > 0 and width is not None and width != m.dim:
            raise NeedsRebuild(
                "model-mismatch",
                f"index vectors are {m.dim} wide, the configured model's {width}, under the same "
                f"{MODEL_ID_KEY} {m.model_id!r}: another model needs its own {MODEL_ID_KEY} (or leave it unset)",
            )
        if m.fingerprint != self.fingerprint:
            raise NeedsRebuild(
                "stale", "index settings changed (index.language, recall.neighborWindow, contextMaxChars or maxChunks)"
            )
        return m

    def _configured_dim(self) -> int | None:
        """The configured model's width, to compare with the index's. Loads the model only when
        ``embed.modelId`` is pinned: otherwise the id follows the model file, so another width is
        another id already, and look-ups and ``status`` stay free of the model."""
        emb = self.embedder
        return emb.dim if emb.spec.model_id is not None else emb.known_dim

    def _sync(self) -> Snapshot:
        """Bring the in-memory snapshot (and the tantivy reader) up to the catalog's generation."""
        from .vectors import Snapshot

        assert self._catalog is not None and self._bm25 is not None
        cat = self._catalog
        try:
            cat.conn.execute("BEGIN")
            try:
                gen, _ = cat.generation()
                # Each row generator is closed here, before any failure can close the connection
                # under it (a rebuild after a bad blob), or its cleanup later finds the database closed.
                if self._snap is None:
                    snap = Snapshot(self.embedder.dim)
                    with closing(cat.snapshot_rows(None)) as rows:
                        snap.apply(rows, [], gen)
                    self._snap = snap
                    self._bm25.reload()
                elif gen != self._snap.gen:
                    with closing(cat.snapshot_rows(self._snap.gen)) as rows:
                        self._snap.apply(rows, cat.tombstones_since(self._snap.gen), gen)
                    self._bm25.reload()
                if self._vocab is not None and gen != self._vocab.gen:
                    with closing(cat.vocab_rows(self._vocab.dim, self._vocab.gen)) as words:
                        self._vocab.add(words)
                    self._vocab.gen = gen
            finally:
                cat.conn.execute("COMMIT")
        except (CatalogError, EmbeddingError):
            raise  # a vector of the wrong width (repaired by a rebuild); the model (no rebuild cures it)
        except Exception as exc:  # noqa: BLE001 - sqlite or blob-shape trouble: a damaged catalog
            self._snap = None
            raise NeedsRebuild("corrupt", f"catalog unreadable: {exc}") from None
        return self._snap

    # ------------------------------------------------------------------ health

    def manifest(self) -> Manifest | None:
        """The live manifest (None when there is no usable index)."""
        with self._lock:
            try:
                return self._check()
            except (NeedsRebuild, EmbeddingError):
                return self._manifest

    def health(self, ledger: Ledger | None = None, *, deep: bool = False) -> IndexHealth:
        """ok | behind | missing | stale | model-mismatch | schema-mismatch | corrupt | model-error | unusable.

        ``behind``: the index reflects an ancestor of HEAD (writes that left the index to the next
        recall, commits made with plain git); it is healthy, and the next recall catches it up
        from git's diff. ``stale``: it reflects a commit that is not in HEAD's history, or settings
        changed; the next recall rebuilds or catches up.

        The cheap probe reads the manifest; ``deep`` (doctor) also checks every page of the catalog
        and opens a tantivy searcher, so damage inside the files is reported too.
        """
        with self._lock:
            head = ledger.head() if ledger is not None else self._head()
            try:
                m = self._check()
                if deep:
                    self._check_deep()
            except NeedsRebuild as exc:
                broken = self._unloadable() if exc.state == "model-mismatch" else None
                if broken is not None:  # the rebuild it calls for would fail: say why instead
                    return IndexHealth("model-error", broken, self._manifest, head)
                return IndexHealth(exc.state, exc.detail, self._manifest, head)
            except EmbeddingError as exc:
                return IndexHealth("model-error", exc.message, self._manifest, head)
            if m.commit is None:
                return IndexHealth("stale", "index does not know which commit it reflects (partial)", m, head)
            if head is not None and m.commit != head:
                repo = ledger if ledger is not None else self._ledger()
                if repo is not None and repo.is_ancestor(m.commit, head):
                    # Writes made without updating the index (one-shot CLI commands, plain git
                    # commits): the next recall catches up from git's diff, nothing to repair.
                    return IndexHealth(
                        "behind",
                        f"index reflects {m.commit[:8]}, HEAD is {head[:8]}: the next recall catches it up "
                        "from git (nothing to do)",
                        m,
                        head,
                    )
                return IndexHealth("stale", f"index reflects {m.commit[:8]}, HEAD is {head[:8]}", m, head)
            return IndexHealth("ok", f"{m.count} memories", m, head)

    def _unloadable(self) -> str | None:
        """Why the configured embedding model cannot be loaded (None when it loads)."""
        try:
            self.embedder.load()
        except EmbeddingError as exc:
            return exc.message
        return None

    def _check_deep(self) -> None:
        assert self._catalog is not None and self._bm25 is not None
        try:
            verdict = self._catalog.conn.execute("PRAGMA quick_check").fetchone()
        except Exception as exc:  # noqa: BLE001 - sqlite says the file is damaged
            raise NeedsRebuild("corrupt", f"catalog unreadable: {exc}") from None
        if not verdict or verdict[0] != "ok":
            raise NeedsRebuild("corrupt", f"catalog damaged: {verdict[0] if verdict else 'no answer'}")
        try:
            self._bm25.search(["remnic"], 1, boosts={})
        except Exception as exc:  # noqa: BLE001 - tantivy cannot read its segments
            raise NeedsRebuild("corrupt", f"tantivy index unreadable: {exc}") from None

    def _ledger(self) -> Ledger | None:
        """A ledger of our own for writes that arrive without one (``apply`` from the service)."""
        if self._repo is None:
            try:
                from remnic.repo.ledger import Ledger

                self._repo = Ledger(self.settings.memory_dir)
            except Exception:  # noqa: BLE001 - no repository: nothing to follow
                return None
        return self._repo

    def _head(self) -> str | None:
        ledger = self._ledger()
        return ledger.head() if ledger is not None else None

    def _follows(self, old: str | None, new: str) -> bool:
        """Whether ``new`` is ``old`` or its direct child (so nothing in between was missed)."""
        if old is None:
            return False
        if old == new:
            return True
        ledger = self._ledger()
        return ledger is not None and old in ledger.parents(new)

    # ------------------------------------------------------------------ for recall

    def view(self) -> tuple[Snapshot, Bm25Index, Catalog]:
        """The synced snapshot, BM25 index and catalog (call after ensure_fresh, under ``lock``)."""
        try:
            self._check()
        except NeedsRebuild:
            if self._catalog is None:
                raise
        snap = self._sync()
        assert self._bm25 is not None and self._catalog is not None
        return snap, self._bm25, self._catalog

    def vocab(self) -> Vocab:
        """The vocabulary's words and vectors (call after :meth:`view`, under ``lock``; loaded on first use)."""
        if self._vocab is None:
            from .vocab import Vocab

            assert self._catalog is not None and self._snap is not None
            vocab = Vocab(self.embedder.dim)
            with closing(self._catalog.vocab_rows(vocab.dim)) as words:
                vocab.add(words)
            vocab.gen = self._snap.gen
            self._vocab = vocab
        return self._vocab

    def embed_words(self, words: Sequence[str]) -> list[np.ndarray]:
        """Vectors of words as the vocabulary's are made (document side), for query words it lacks
        (memoised: an agent asks about the same things again)."""
        memo = self._word_memo
        missing = [w for w in dict.fromkeys(words) if w not in memo]
        if missing:
            self._memo_words(missing, self.embedder.embed_documents(missing))
        return [memo[w] for w in words]

    def embed_queries_and_words(self, texts: Sequence[str], words: Sequence[str]) -> list[np.ndarray]:
        """:meth:`embed_queries`, and the vectors of ``words`` (:meth:`embed_words`) in the same model
        call, into the word memo: a recall's query and its words the vocabulary lacks, one model run."""
        missing = [w for w in dict.fromkeys(words) if w not in self._word_memo]
        if not missing:
            return self.embed_queries(texts)
        vecs, word_vecs = self.embedder.embed_queries_and_documents(texts, missing)
        self._memo_words(missing, word_vecs)
        return vecs

    def _memo_words(self, words: Sequence[str], vectors: Iterable[np.ndarray]) -> None:
        if len(self._word_memo) > 1024:
            self._word_memo.clear()
        self._word_memo.update(zip(words, vectors))

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed_query(text)

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Several query vectors from one batched model call (memoised per text)."""
        return self.embedder.embed_queries(texts)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for ``texts``, through the content-hash embedding cache."""
        return cached_vectors(self.embedder, self.cache, list(texts), None)[0]

    def embed_as_memories(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text as the index will see it when stored as a memory: the mean of the
        vectors of its chunks (one per sentence), through the cache. A one-sentence text is its own
        chunk; a longer one costs no embedding beyond what indexing it needs anyway. Recent texts'
        vectors are memoised (read-only rows)."""
        import numpy as np

        with self._memory_vectors_lock:
            known = {t: self._memory_vectors[t] for t in texts if t in self._memory_vectors}
        todo = [t for t in dict.fromkeys(texts) if t not in known]
        plans = [T.chunks_for(text, T.lead_label(text) or "", self.rules) for text in todo]
        flat = [chunk for chunks in plans for chunk in chunks]
        matrix = self.embed_texts(flat) if flat else np.zeros((0, self.embedder.dim), dtype=np.float32)
        start = 0
        for text, chunks in zip(todo, plans, strict=True):
            mean = matrix[start : start + len(chunks)].mean(axis=0)
            vector = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
            vector.setflags(write=False)
            known[text] = vector
            start += len(chunks)
        with self._memory_vectors_lock:
            for text in todo:
                self._memory_vectors[text] = known[text]
            while len(self._memory_vectors) > _MEMORY_VECTOR_MEMO:
                self._memory_vectors.popitem(last=False)
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = known[text]
        return out

    def nearest(
        self, vector: np.ndarray, k: int, *, namespace: str | None = None, statuses: Sequence[str] = ("active",)
    ) -> list[tuple[str, str, float]]:
        """(id, path, cosine of its best chunk) of the ``k`` indexed memories nearest ``vector``, best first."""
        import numpy as np

        with self._lock:
            snap, _bm25, _cat = self.view()
            scores = snap.scores(vector, 0.0).chunk
            mask = snap.mask(namespaces=[namespace] if namespace else None, statuses=list(statuses))
            live = np.flatnonzero(mask)
            if not len(live) or k <= 0:
                return []
            best = live[np.argsort(-scores[live], kind="stable")[:k]]
            return [(snap.ids[r], snap.paths[r], float(scores[r])) for r in best]

    def nearest_many(
        self,
        vectors: Sequence[np.ndarray],
        k: int,
        *,
        namespace: str | None = None,
        statuses: Sequence[str] = ("active",),
    ) -> list[list[tuple[str, str, float]]]:
        """:meth:`nearest` for each vector, under one hold of the index lock (a flush's facts at once)."""
        import numpy as np

        with self._lock:
            snap, _bm25, _cat = self.view()
            mask = snap.mask(namespaces=[namespace] if namespace else None, statuses=list(statuses))
            live = np.flatnonzero(mask)
            out: list[list[tuple[str, str, float]]] = []
            for vector in vectors:
                if not len(live) or k <= 0:
                    out.append([])
                    continue
                scores = snap.scores(vector, 0.0).chunk
                best = live[np.argsort(-scores[live], kind="stable")[:k]]
                out.append([(snap.ids[r], snap.paths[r], float(scores[r])) for r in best])
            return out

    def with_entity(self, entity_ref: str, *, namespace: str | None = None) -> list[str]:
        """Paths of indexed memories whose ``entityRef`` is ``entity_ref`` (any status)."""
        with self._lock:
            _snap, _bm25, cat = self.view()
            return cat.paths_with_entity(entity_ref, namespace)

    def close(self) -> None:
        with self._lock:
            self._close_build()
            if self._cache is not None:
                self._cache.close()
                self._cache = None
            self._repo = None


def _int8_only(built: str, configured: str) -> bool:
    """Whether two model ids differ only by the int8 products' mark (``embed.int8`` switched)."""
    return built.replace(INT8_MARK, "") == configured.replace(INT8_MARK, "") and built != configured
