"""Vectors computed after the fact: memories indexed for BM25 first get their embeddings here.

A sync that adopts many notes at once (``apply(..., defer_above=…)``) writes their rows
without vectors and their texts into the catalog's ``pending_vectors`` table, so every
note is searchable by BM25 as soon as the sync commits. :meth:`PendingVectors.embed_pending`
then embeds them batch by batch, shortest texts first:

- every round runs on one bulk model session (:meth:`~remnic.index.embed.Embedder.bulk_session`),
  and blocks of ``embed.bulkMmapThreshold`` bytes or more get memory mappings of their own, so
  what a round frees goes back to the system (peak RSS, see docs/benchmarks.md);
- the model runs without any lock held; only the short catalog update that stores a
  batch's vectors takes the index lock, so writes, syncs and recalls go on meanwhile;
- each batch's vectors go into the embedding cache (keyed by content hash) as soon as
  they are computed, and the pending rows are only deleted together with the vectors
  being stored: a killed run loses at most the batch in flight, and the next run picks
  up where it stopped;
- a memory written again meanwhile (its pending texts changed) is left to the newer write.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import now_iso

from .manifest import read_current, write_manifest_json
from .rows import embed_texts
from .state import NeedsRebuild, PendingReport

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from remnic.config import Settings

    from .catalog import Catalog
    from .embed import Embedder
    from .embed_cache import EmbeddingCache
    from .manifest import Manifest
    from .vectors import Snapshot

Progress = Callable[[int, int], None]
BATCH_TEXTS = 1024
"""Texts per round: enough for the embedder's parallel path, few enough to lose little when killed."""
SLICE_CHARS_PER_TEXT = 256
"""A round also stops at this many characters per text of ``batch_texts``: a long note's passage-sized
texts take ~5× a sentence's model time, so a round of them would keep a waiting save waiting as long."""


class PendingVectors:
    """``vectors_pending`` / ``embed_pending`` for :class:`~remnic.index.search.SearchIndex`."""

    root: Path
    settings: Settings
    _lock: threading.RLock
    _catalog: Catalog | None
    _build: str | None
    language: str

    if TYPE_CHECKING:  # pragma: no cover

        @property
        def embedder(self) -> Embedder: ...
        @property
        def cache(self) -> EmbeddingCache: ...
        def _write_lock(self) -> AbstractContextManager[None]: ...
        def _check(self) -> Manifest: ...
        def _sync(self) -> Snapshot: ...
        def _reader(self, build: str) -> Any: ...
        def _missing_words(self, cat: Catalog | None, texts: Sequence[str]) -> list[str]: ...

    def vectors_pending(self) -> tuple[int, int]:
        """(memories whose vectors are pending, texts they need embedded); (0, 0) without an index.

        A cheap probe (a read-only look at the live catalog, no model, no tantivy), so a sync
        with nothing to do stays cheap.
        """
        import sqlite3

        name = read_current(self.root)
        conn = self._reader(name) if name is not None else None
        if conn is None:
            return 0, 0
        try:
            with conn:
                notes, texts = conn.execute("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM pending_vectors").fetchone()
        except sqlite3.Error:
            return 0, 0  # an older build without the table, or one being replaced
        return int(notes), int(texts)

    def embed_pending(
        self,
        progress: Progress | None = None,
        *,
        stop: Callable[[], bool] | None = None,
        batch_texts: int = BATCH_TEXTS,
    ) -> PendingReport:
        """Embed every pending memory's texts and store the vectors; ``stop()`` is asked between batches
        of at most ``batch_texts`` texts (a memory with more is embedded in slices of that size).

        ``progress(done, total)`` counts texts. Returns what was done and what is left.
        """
        t0 = time.perf_counter()
        report = PendingReport()
        release_freed_memory()  # what the sync before it freed, before the model's session is loaded
        set_mmap_threshold(self.settings.embed.bulk_mmap_threshold)
        with self.embedder.bulk_session():
            self._embed_rounds(report, progress, stop, batch_texts)
        with self._lock:
            try:
                self._check()
                assert self._catalog is not None
                report.remaining = self._catalog.pending_counts()[0]
            except NeedsRebuild:
                report.remaining = 0
        report.seconds = time.perf_counter() - t0
        return report

    def _embed_rounds(
        self, report: PendingReport, progress: Progress | None, stop: Callable[[], bool] | None, batch_texts: int
    ) -> None:
        done = 0
        while True:
            if stop is not None and stop():
                report.interrupted = True
                break
            with self._write_lock():
                try:
                    self._check()
                except NeedsRebuild:
                    break  # no usable index: a rebuild embeds everything anyway
                assert self._catalog is not None
                batch = self._catalog.pending_batch(batch_texts)
                remaining = self._catalog.pending_counts()[1]
            if not batch:
                break
            texts: list[str] = []
            spans: list[tuple[str, str, bool, int, int]] = []
            for path, raw, has_ctx in batch:
                own = json.loads(raw)
                spans.append((path, raw, has_ctx, len(texts), len(own)))
                texts.extend(own)
            total = done + remaining
            step = (
                None if progress is None else (lambda n, base=done, total=total: progress(min(base + n, total), total))
            )
            got = self._embed_sliced(texts, batch_texts, stop, step)
            if got is None:  # stopped inside one large memory: its slices so far wait in the embedding cache
                report.interrupted = True
                break
            matrix, embedded = got
            with self._lock:
                words = self._missing_words(self._catalog, texts)
            vocab = self._embed_sliced(words, batch_texts * 4, stop, None)  # words are short: 4x as many per slice
            if vocab is None:
                report.interrupted = True
                break
            report.embedded += embedded
            report.texts += len(texts)
            report.filled += self._fill(matrix, spans, (words, vocab[0]))
            done += len(texts)

    def _embed_sliced(
        self, texts: list[str], size: int, stop: Callable[[], bool] | None, step: Callable[[int], None] | None
    ) -> tuple[np.ndarray, int] | None:
        """Embed ``texts`` in slices of at most ``size`` texts and ``size`` × 256 characters, asking
        ``stop()`` between slices (None: stopped).

        A batch is at least one whole memory, and one long note alone is thousands of texts of a
        passage each: sliced, a waiting save or a stop request is noticed within one slice, and each
        slice's vectors go into the embedding cache, so a stopped memory resumes from there.
        """
        import numpy as np

        parts: list[np.ndarray] = []
        embedded = 0
        for start, end in _slices(texts, max(1, size), max(1, size) * SLICE_CHARS_PER_TEXT):
            if start and stop is not None and stop():
                return None
            sub = None if step is None else (lambda n, _all, base=start: step(base + n))
            matrix, ran = embed_texts(self.embedder, self.cache, texts[start:end], sub, bulk=True)
            parts.append(matrix)
            embedded += ran
        return (parts[0] if len(parts) == 1 else np.concatenate(parts)), embedded

    def _fill(
        self,
        matrix: np.ndarray,
        spans: list[tuple[str, str, bool, int, int]],
        vocab: tuple[list[str], Any] = ([], None),
    ) -> int:
        """Write one batch's vectors into the catalog (one transaction, a new generation)."""
        items = []
        for path, raw, has_ctx, start, n in spans:
            k = n - 1 if has_ctx else n
            items.append((path, raw, matrix[start : start + k], matrix[start + k] if has_ctx else None))
        with self._write_lock():
            try:
                self._check()
            except NeedsRebuild:
                return 0
            cat = self._catalog
            assert cat is not None
            manifest = cat.manifest()
            gen = manifest.generation + 1
            cat.begin()
            try:
                filled = cat.fill_vectors(items, gen)
                if vocab[0]:
                    cat.add_vocab(vocab[0], vocab[1], gen)
                manifest.generation = gen
                manifest.vectors_pending = cat.pending_counts()[0]
                manifest.updated_at = now_iso()
                cat.set_meta(manifest.to_meta())
                cat.commit()
            except BaseException:
                cat.rollback()
                raise
            write_manifest_json(self.root / (self._build or ""), manifest)
        return filled  # this process's snapshot catches up when it next reads (``view``)


def _slices(texts: Sequence[str], size: int, chars: int) -> list[tuple[int, int]]:
    """[start, end) ranges of at most ``size`` texts and about ``chars`` characters (at least one text each)."""
    out: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, text in enumerate(texts):
        if i > start and (i - start >= size or used + len(text) > chars):
            out.append((start, i))
            start, used = i, 0
        used += len(text)
    out.append((start, len(texts)))
    return out


def release_freed_memory() -> None:
    """Hand memory the process freed back to the system (glibc keeps it otherwise): a first
    adoption's sync phase frees ~100 MB of parsed notes and rows just before the model loads."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


M_MMAP_THRESHOLD = -3
"""glibc's mallopt parameter: allocations of at least this many bytes are memory-mapped."""


def set_mmap_threshold(nbytes: int) -> bool:
    """glibc: allocations of ``nbytes`` or more get a mapping of their own, unmapped when freed (0: leave
    glibc's default, which rises to the largest block freed so far, so a model session's ~2.4 MB weights
    and buffers end up in a heap that never shrinks). Fixed for the rest of the process; whether it was set."""
    if nbytes <= 0:
        return False
    import ctypes

    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, nbytes))
    except (OSError, AttributeError):
        return False  # not glibc: nothing to do
