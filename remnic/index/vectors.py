"""The in-memory side of the index: per-memory columns and exact-cosine vector search.

Loaded once from the catalog, then kept current by applying only the rows
changed since the generation it holds. Each memory owns one contiguous block
of chunk vectors (one per sentence group) and optionally one context vector
(its passage within the episode). A memory's vector similarity is the best of
its chunks (for a long memory, the mean of its ``top_k`` best), plus
``context_weight`` × its context similarity (its own chunk score stands in when
it has no context, so memories with and without episodes compete on one scale).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .catalog import vectors_from_blob

_GROW = 1.5
_NO_DAY = np.iinfo(np.int32).min


class _Grow:
    """A float32 matrix with spare capacity: appends are amortised O(1)."""

    def __init__(self, dim: int, capacity: int = 64) -> None:
        self.data = np.zeros((max(capacity, 16), dim), dtype=np.float32)
        self.n = 0

    def append(self, block: np.ndarray) -> int:
        start = self.n
        need = start + len(block)
        if need > len(self.data):
            cap = max(need, int(len(self.data) * _GROW) + 16)
            grown = np.zeros((cap, self.data.shape[1]), dtype=np.float32)
            grown[:start] = self.data[:start]
            self.data = grown
        self.data[start:need] = block
        self.n = need
        return start

    @property
    def view(self) -> np.ndarray:
        return self.data[: self.n]


class _Codes:
    """Small vocabularies (namespace, status, …) as int codes for vectorised masks."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.names: list[str] = []

    def code(self, value: str) -> int:
        c = self.codes.get(value)
        if c is None:
            c = self.codes[value] = len(self.names)
            self.names.append(value)
        return c

    def mask(self, column: np.ndarray, values: Iterable[str]) -> np.ndarray:
        wanted = [self.codes[v] for v in values if v in self.codes]
        return np.isin(column, wanted) if wanted else np.zeros(len(column), dtype=bool)


@dataclass
class VectorScores:
    """Per-row similarities for one query (rows of :class:`Snapshot`)."""

    chunk: np.ndarray
    """Best chunk cosine per memory (a long memory: mean of its top-k chunks)."""
    context: np.ndarray
    """Context-passage cosine (the chunk cosine where a memory has no context vector)."""
    combined: np.ndarray
    """chunk + context_weight × context: what the vector retriever ranks by."""


class Snapshot:
    """Columns of every indexed memory, aligned by row, plus their vectors."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.gen = -1
        self.n = 0
        cap = 64
        self.paths: list[str] = []
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.alive = np.zeros(cap, dtype=bool)
        self.namespace = np.zeros(cap, dtype=np.int32)
        self.category = np.zeros(cap, dtype=np.int32)
        self.status = np.zeros(cap, dtype=np.int32)
        self.episode = np.full(cap, -1, dtype=np.int32)
        self.position = np.zeros(cap, dtype=np.int32)
        self.importance = np.zeros(cap, dtype=np.float64)  # float64: `>= 0.9` thresholds must hold for 0.9
        self.confidence = np.zeros(cap, dtype=np.float64)
        self.updated = np.full(cap, np.nan, dtype=np.float64)
        self.created_day = np.full(cap, _NO_DAY, dtype=np.int32)
        self.date_spans: dict[int, list[tuple[int, int]]] = {}
        """row → spans (first day, last day) of the dates its text names (rows without any are absent)."""
        self.has_vec = np.zeros(cap, dtype=bool)
        """False for a memory whose vectors are still being computed (BM25 finds it meanwhile)."""
        self.has_ctx = np.zeros(cap, dtype=bool)
        self.ctx_row = np.zeros(cap, dtype=np.int32)
        self.seg_start = np.zeros(cap, dtype=np.int64)
        self.seg_len = np.zeros(cap, dtype=np.int32)
        self.row_block = np.zeros(cap, dtype=np.int64)
        self.block_start: list[int] = []
        self.block_row: list[int] = []
        self.namespaces = _Codes()
        self.categories = _Codes()
        self.statuses = _Codes()
        self.episodes = _Codes()
        self.chunks = _Grow(dim)
        self.ctx = _Grow(dim)
        self.dead_chunks = 0
        # Chunk-level layout for reduceat, rebuilt lazily after changes.
        self._layout: tuple[np.ndarray, np.ndarray] | None = None
        self._blocks: tuple[np.ndarray, np.ndarray] | None = None
        self._episode_rows: dict[int, list[int]] | None = None

    # --- loading ---

    def _ensure_capacity(self, n: int) -> None:
        if n <= len(self.alive):
            return
        cap = max(n, int(len(self.alive) * _GROW) + 16)
        for name in (
            "alive",
            "namespace",
            "category",
            "status",
            "episode",
            "position",
            "importance",
            "confidence",
            "updated",
            "created_day",
            "has_vec",
            "has_ctx",
            "ctx_row",
            "seg_start",
            "seg_len",
            "row_block",
        ):
            old = getattr(self, name)
            fill = {"episode": -1, "updated": np.nan, "created_day": _NO_DAY}.get(name, 0)
            new = np.full(cap, fill, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def apply(self, rows: Iterable[tuple], removed: Sequence[str], gen: int) -> int:
        """Apply catalog rows (see ``Catalog.snapshot_rows``) and removals; returns rows changed."""
        changed = 0
        for path in removed:
            r = self.row_of.pop(path, None)
            if r is not None:
                self._kill(r)
                changed += 1
        for row in rows:
            path, mid, ns, cat, status, updated, importance, confidence, episode, position, chunks, ctx = row[:12]
            created, dates = (row[13], row[14]) if len(row) > 14 else (None, None)
            r = self.row_of.get(path)
            if r is None:
                r = self.n
                self._ensure_capacity(r + 1)
                self.n += 1
                self.paths.append(path)
                self.ids.append(mid)
                self.row_of[path] = r
            else:
                self._kill(r)
                self.ids[r] = mid
            vecs = vectors_from_blob(chunks, self.dim)
            self.alive[r] = True
            self.namespace[r] = self.namespaces.code(ns)
            self.category[r] = self.categories.code(cat)
            self.status[r] = self.statuses.code(status)
            self.episode[r] = self.episodes.code(episode) if episode else -1
            self.position[r] = position if position is not None else 0
            self.importance[r] = importance
            self.confidence[r] = confidence
            self.updated[r] = updated if updated is not None else np.nan
            self.created_day[r] = int(created // 86400) if created is not None else _NO_DAY
            spans = [(int(lo), int(hi)) for lo, hi in json.loads(dates or "[]")]
            if spans:
                self.date_spans[r] = spans
            else:
                self.date_spans.pop(r, None)
            self.has_vec[r] = len(vecs) > 0
            if len(vecs) == 0:
                vecs = np.zeros((1, self.dim), dtype=np.float32)
            self.seg_start[r] = self.chunks.append(vecs)
            self.seg_len[r] = len(vecs)
            self.row_block[r] = len(self.block_start)
            self.block_start.append(int(self.seg_start[r]))
            self.block_row.append(r)
            if ctx is not None:
                self.ctx_row[r] = self.ctx.append(vectors_from_blob(ctx, self.dim))
                self.has_ctx[r] = True
            changed += 1
        self.gen = gen
        if changed:
            self._layout = None
            self._blocks = None
            self._episode_rows = None
            if self.needs_compaction():
                self.compact()
        return changed

    def compact(self) -> None:
        """Rewrite the chunk matrix without dead blocks (after many updates)."""
        fresh = _Grow(self.dim, self.chunks.n - self.dead_chunks + 16)
        old = self.chunks.view
        self.block_start, self.block_row = [], []
        for r in np.flatnonzero(self.alive[: self.n]):
            k = int(self.seg_len[r])
            start = fresh.append(old[self.seg_start[r] : self.seg_start[r] + k])
            self.seg_start[r] = start
            self.row_block[r] = len(self.block_start)
            self.block_start.append(start)
            self.block_row.append(int(r))
        self.chunks = fresh
        self.dead_chunks = 0
        self._layout = None
        self._blocks = None
        ctx_rows = np.flatnonzero(self.has_ctx[: self.n])
        fresh_ctx = _Grow(self.dim, len(ctx_rows) + 16)
        if len(ctx_rows):
            start = fresh_ctx.append(self.ctx.view[self.ctx_row[ctx_rows]])
            self.ctx_row[ctx_rows] = np.arange(start, start + len(ctx_rows))
        self.ctx = fresh_ctx

    def _kill(self, r: int) -> None:
        if self.alive[r]:
            self.dead_chunks += int(self.seg_len[r])
            self.block_row[int(self.row_block[r])] = -1
        self.alive[r] = False
        self.has_vec[r] = False
        self.has_ctx[r] = False
        self.date_spans.pop(r, None)
        self.seg_len[r] = 0

    @property
    def count(self) -> int:
        return int(self.alive[: self.n].sum())

    @property
    def vectorless(self) -> int:
        """Live memories whose vectors are still pending."""
        return int((self.alive[: self.n] & ~self.has_vec[: self.n]).sum())

    def needs_compaction(self) -> bool:
        return self.dead_chunks > 1024 and self.dead_chunks > self.chunks.n // 3

    # --- masks ---

    def mask(
        self,
        *,
        namespaces: Sequence[str] | None = None,
        categories: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
    ) -> np.ndarray:
        m = self.alive[: self.n].copy()
        if namespaces is not None:
            m &= self.namespaces.mask(self.namespace[: self.n], namespaces)
        if categories is not None:
            m &= self.categories.mask(self.category[: self.n], categories)
        if statuses is not None:
            m &= self.statuses.mask(self.status[: self.n], statuses)
        return m

    def date_mask(self, first_day: int, last_day: int) -> np.ndarray:
        """Rows dated inside [first_day, last_day]: created that day, or naming a date that overlaps it.

        Rows with no date at all are kept (nothing says they fall outside).
        """
        n = self.n
        created = self.created_day[:n]
        inside = (created >= first_day) & (created <= last_day)
        undated = created == _NO_DAY
        for r, spans in self.date_spans.items():
            if r < n and not inside[r] and any(lo <= last_day and hi >= first_day for lo, hi in spans):
                inside[r] = True
        return inside | (undated & ~np.isin(np.arange(n), list(self.date_spans)))

    def states_time(self, r: int) -> bool:
        """Whether row r's text names a date (see :mod:`remnic.index.dates`)."""
        return r in self.date_spans

    def status_of(self, r: int) -> str:
        return self.statuses.names[self.status[r]]

    def namespace_of(self, r: int) -> str:
        return self.namespaces.names[self.namespace[r]]

    def category_of(self, r: int) -> str:
        return self.categories.names[self.category[r]]

    # --- vectors ---

    def _chunk_layout(self) -> tuple[np.ndarray, np.ndarray]:
        """(start of every block in chunk order, owning row or -1 for a dead block)."""
        if self._layout is None:
            starts = np.asarray(self.block_start, dtype=np.int64)
            rows = np.asarray(self.block_row, dtype=np.int64)
            self._layout = (starts, rows)
        return self._layout

    def _block_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """(block index of every chunk row, chunks per block), for the top-k aggregation."""
        if self._blocks is None:
            starts, _ = self._chunk_layout()
            lengths = np.diff(np.append(starts, self.chunks.n)).astype(np.int64)
            self._blocks = (np.repeat(np.arange(len(starts)), lengths), lengths)
        return self._blocks

    def scores(
        self, query: np.ndarray, context_weight: float, top_k: int = 1, top_k_min_chunks: int = 2
    ) -> VectorScores:
        """Per-memory similarities; a memory with at least ``top_k_min_chunks`` chunks scores the
        mean of its ``top_k`` best chunks (``top_k`` 1: its best chunk)."""
        n = self.n
        chunk = np.full(n, -1.0, dtype=np.float32)
        starts, rows = self._chunk_layout()
        if len(starts):
            sims = self.chunks.view @ query.astype(np.float32, copy=False)
            # Blocks are contiguous and cover the matrix, so one reduceat gives each
            # block's best chunk; dead blocks (owner -1) are simply dropped.
            best = np.maximum.reduceat(sims, starts)
            if top_k > 1:
                best = self._top_k_mean(sims, starts, best, top_k, max(2, top_k_min_chunks))
            live = rows >= 0
            chunk[rows[live]] = best[live]
        chunk[~self.has_vec[:n]] = -1.0  # no vectors yet: never close to anything
        context = chunk.copy()
        has = self.has_ctx[:n]
        if has.any():
            rows = np.flatnonzero(has)
            context[rows] = self.ctx.view[self.ctx_row[rows]] @ query.astype(np.float32, copy=False)
        combined = chunk + np.float32(context_weight) * context
        return VectorScores(chunk, context, combined)

    def _top_k_mean(
        self, sims: np.ndarray, starts: np.ndarray, best: np.ndarray, k: int, min_chunks: int
    ) -> np.ndarray:
        """Mean of each long block's k best chunk similarities (k − 1 more reduceat passes)."""
        block_of, lengths = self._block_ids()
        long = lengths >= min_chunks
        if not long.any():
            return best
        total = best.astype(np.float64)
        work = sims.copy()
        current = best
        taken = np.minimum(lengths, k)
        for _ in range(k - 1):
            # Knock out each block's current best (one position per block), then take the next best.
            hit = np.flatnonzero(work == current[block_of])
            first = hit[np.unique(block_of[hit], return_index=True)[1]]
            work[first] = -np.inf
            current = np.maximum.reduceat(work, starts)
            total += np.where(np.isfinite(current), current, 0.0)
        mean = (total / np.maximum(taken, 1)).astype(np.float32)
        return np.where(long, mean, best)

    def chunk_sims(self, r: int, query: np.ndarray) -> np.ndarray:
        """Cosine of each of row r's chunks to the query, in chunk order."""
        if not self.has_vec[r]:
            return np.zeros(0, dtype=np.float32)
        start, k = int(self.seg_start[r]), int(self.seg_len[r])
        return self.chunks.view[start : start + k] @ query.astype(np.float32, copy=False)

    def doc_vectors(self, rows: Sequence[int]) -> np.ndarray:
        """Unit mean of each row's chunk vectors: the memory's single vector for MMR."""
        out = np.zeros((len(rows), self.dim), dtype=np.float32)
        data = self.chunks.view
        for i, r in enumerate(rows):
            k = int(self.seg_len[r])
            if k:
                v = data[self.seg_start[r] : self.seg_start[r] + k].mean(axis=0)
                norm = float(np.linalg.norm(v))
                out[i] = v / norm if norm > 0 else v
        return out

    def episode_rows(self, r: int) -> list[int]:
        """Live rows sharing row r's episode (r included), in episode order."""
        ep = int(self.episode[r])
        if ep < 0:
            return [r]
        if self._episode_rows is None:
            groups: dict[int, list[int]] = {}
            live = np.flatnonzero(self.alive[: self.n] & (self.episode[: self.n] >= 0))
            for row in live[np.argsort(self.position[live], kind="stable")]:
                groups.setdefault(int(self.episode[row]), []).append(int(row))
            self._episode_rows = groups
        return self._episode_rows.get(ep, [r])

    def describe(self) -> dict[str, Any]:
        return {
            "rows": self.count,
            "chunks": int(self.chunks.n - self.dead_chunks),
            "contexts": int(self.has_ctx[: self.n].sum()),
        }
