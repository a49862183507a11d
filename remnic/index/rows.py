"""Turning memory records into catalog rows and tantivy fields (embedding what is new)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord, content_hash, jsonable

from . import dates as D
from . import text as T
from .catalog import Row

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .embed import Embedder
    from .embed_cache import EmbeddingCache

Progress = Callable[[int, int], None]


def embed_texts(
    embedder: Embedder,
    cache: EmbeddingCache,
    texts: list[str],
    progress: Progress | None = None,
    *,
    bulk: bool = False,
) -> tuple[np.ndarray, int]:
    """Vectors for texts through the content-hash cache; (matrix, number actually run through the model).

    One call for the whole set, so a bulk job (a rebuild) reaches the embedder's parallel
    path (``bulk``: whatever the number of texts); ``progress`` is reported as its batches finish.
    """
    import numpy as np

    from .embed_cache import embed_cached

    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32), 0
    return embed_cached(embedder, cache, texts, progress, bulk=bulk)


def cached_only(embedder: Embedder, cache: EmbeddingCache, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, which texts had one) from the cache alone; the model is never run (missing rows are zero)."""
    import numpy as np

    matrix = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    have = np.zeros(len(texts), dtype=bool)
    if not texts:
        return matrix, have
    hashes = [content_hash(t) for t in texts]
    found = cache.get_many(embedder.model_id, hashes, dim=embedder.dim)
    for i, h in enumerate(hashes):
        vec = found.get(h)
        if vec is not None:
            matrix[i], have[i] = vec, True
    return matrix, have


def build_rows(
    records: Sequence[MemoryRecord],
    contexts: dict[str, T.Context],
    positions: dict[str, int],
    rules: T.TextRules,
    embed: Callable[[list[str]], tuple[np.ndarray, int]],
    cached: Callable[[list[str]], tuple[np.ndarray, np.ndarray] | None] | None = None,
) -> tuple[list[Row], dict[str, dict[str, Any]], int]:
    """Catalog rows and tantivy fields for records: chunks and context passages are embedded in one batch.

    When ``cached`` answers (vectors deferred: it returns the cache's vectors and which texts it
    had, or None to embed as usual) the model is not run: a memory with a text the cache lacks gets
    a row without vectors and its texts in ``Row.pending``, to be embedded later.
    """
    plans = []
    texts: list[str] = []
    for rec in records:
        # An observed fact's context is always the mean: its window's sentence vectors are the ones its
        # flush already embedded, so indexing it runs the model for nothing more (a one-shot observe
        # would otherwise embed every fact's passage at exit).
        mean = (rules.context_vectors == "mean" or rec.frontmatter.get("source") == "extraction") and cached is None
        title = T.title_of(rec)
        plan = T.chunk_plan(rec.content, title, rules)
        ctx = contexts.get(rec.path)
        # "mean": the context is made of the members' sentence vectors (the texts they are indexed
        # by, so the cache and this batch already hold them); else one passage text to embed. Rows
        # whose vectors are deferred keep the passage: their pending texts are chunks and one passage.
        sizes = [len(t) for t in _member_chunks(ctx, rules)] if ctx is not None and mean else []
        plans.append((rec, title, len(texts), plan, ctx, sizes))
        texts.extend(plan.texts)
        if ctx is not None and sizes:
            texts.extend(chunk for chunks in _member_chunks(ctx, rules) for chunk in chunks)
        elif ctx is not None:
            texts.append(ctx.passage)
    looked = cached(texts) if cached is not None else None
    if looked is not None:
        matrix, have = looked
        embedded = 0
    else:
        matrix, embedded = embed(texts)
        have = None
    rows: list[Row] = []
    docs: dict[str, dict[str, Any]] = {}
    for rec, title, start, plan, ctx, sizes in plans:
        k = len(plan.texts)
        own = k + (1 if ctx is not None else 0)  # with sizes (never deferred) have is None
        pending = None if have is None or have[start : start + own].all() else texts[start : start + own]
        ctx_vector = None
        if ctx is not None and pending is None:
            ctx_vector = (
                _mean_of_members(matrix[start + k : start + k + sum(sizes)], sizes) if sizes else matrix[start + k]
            )
        created = T.observed_ts(rec)  # when it was said, for a memory observed in a conversation
        said = T.observed_time(rec)  # the same, in the writer's UTC offset: the day it names is theirs
        spans = T.event_dates(rec)
        months = [key for sp in spans for key in D.month_keys(sp.start, sp.end)]
        # the writer's day, and the UTC one the date filter compares (Snapshot.created_day)
        for created_day in dict.fromkeys(d for d in (D.base_date(said), D.base_date(created)) if d is not None):
            months += D.month_keys(created_day, created_day)
        tags = rec.tags
        entity = rec.frontmatter.get("entityRef")
        rows.append(
            Row(
                path=rec.path,
                id=rec.id,
                namespace=rec.namespace,
                category=rec.category,
                status=rec.status,
                content_hash=content_hash(rec.content),
                created=created,  # computed: a stored hash may be stale
                updated=T.updated_ts(rec),
                importance=rec.importance,
                confidence=rec.confidence,
                episode=T.episode_key(rec.frontmatter, rec.namespace),
                turn=turn_of(rec),
                position=positions.get(rec.path, 0),
                title=title,
                tags=tags,
                frontmatter=jsonable(rec.frontmatter),
                content=rec.content,
                sig=ctx_sig(ctx, positions.get(rec.path, 0)),
                chunks=matrix[start : start + k] if pending is None else matrix[:0],
                ctx=ctx_vector,
                dates=[(D.day_number(sp.start), D.day_number(sp.end)) for sp in spans],
                passages=passage_map(plan),
                pending=pending,
                pending_ctx=ctx is not None,
            )
        )
        docs[rec.path] = {
            "path": rec.path,
            "id": rec.id,
            "namespace": rec.namespace,
            "category": rec.category,
            "status": rec.status,
            # A note's other names are titles too: its aliases, and its file name when that is no slug of its text.
            "title": " ".join([title, *rec.aliases, T.name_title(rec)]),
            "body": rec.content,
            "tags": " ".join([*tags, str(entity)] if entity else tags),
            "near": ctx.near if ctx else "",
            "far": ctx.far if ctx else "",
            "when": T.date_words(said),
            "dated": D.dated_field(spans),
            "months": list(dict.fromkeys(months)),
            "passages": passage_texts(rec.content, plan),
        }
    return rows, docs, embedded


def passage_texts(content: str, plan: T.ChunkPlan) -> list[str]:
    """A long memory's passages as BM25 documents (heading, then text), numbered as in :func:`passage_map`."""
    if len(plan.passages) < 2:
        return []
    return [
        f"{p.heading}\n{content[p.start : p.end]}" if p.heading else content[p.start : p.end] for p in plan.passages
    ]


def _member_chunks(ctx: T.Context, rules: T.TextRules) -> list[list[str]]:
    return [T.chunks_for(text, T.lead_label(text) or "", rules) for text in ctx.members]


def _mean_of_members(rows: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Each member's sentence vectors averaged, then the members averaged (each weighs the same), unit length."""
    import numpy as np

    parts, pos = [], 0
    for n in sizes:
        parts.append(rows[pos : pos + n].mean(axis=0))
        pos += n
    mean = np.mean(parts, axis=0)
    return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


def passage_map(plan: T.ChunkPlan) -> dict[str, Any]:
    """What the catalog keeps of a long memory's passages: spans, headings, and each chunk's passage."""
    if len(plan.passages) < 2:
        return {}
    return {"p": [[p.start, p.end, p.heading] for p in plan.passages], "c": plan.passage_of}


def episode_members(records: Sequence[MemoryRecord]) -> dict[str, list[T.Member]]:
    """episode key → its members, for a full set of records (a rebuild)."""
    groups: dict[str, list[T.Member]] = {}
    for r in records:
        ep = T.episode_key(r.frontmatter, r.namespace)
        if ep is not None:
            groups.setdefault(ep, []).append(T.Member(r.path, r.content, T.created_ts(r), turn_of(r)))
    return groups


def ctx_sig(ctx: T.Context | None, position: int) -> str:
    """Fingerprint of what a memory borrows from its episode (to skip unchanged neighbours)."""
    blob = json.dumps([ctx.near, ctx.far, ctx.passage, position] if ctx else [position])
    return hashlib.sha1(blob.encode("utf-8")).hexdigest()[:16]


def turn_of(record: MemoryRecord) -> str | None:
    """A memory's place among its episode's turns (sorted by :func:`~.text.natural_key`): an observed
    fact's by when it was said, then its turn id — an agent host's turn ids (uuids) say nothing of order."""
    value = record.frontmatter.get("sourceTurnId")
    said = record.frontmatter.get("observedAt")
    if value is None:
        return None
    return f"{said} {value}" if isinstance(said, str) and said else str(value)
