"""Duplicates among active memories: exact (same text) and near (same meaning, same words), merged on request.

Exact duplicates share a namespace and the content hash writes already dedupe by (text
stripped of surrounding whitespace). Near-duplicates are the pairs consolidation merges:
memory vectors (the mean of a memory's chunk vectors, read from the index where it holds the
memory's current text, else embedded through the cache) at least
``observe.duplicateSimilarityFloor`` alike *and* the same category,
namespace, enough shared words (``observe.nearDuplicateWordOverlap``) and no other value
for an entity attribute; pairs chain into groups. Each group's survivor is its oldest
memory. Merging folds every other member into it with :func:`.consolidate.merge_into`
(the merged files stay, ``archived`` with ``mergedInto``; the survivor lists them in
``derived_from``), all groups in one commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord, content_hash
from remnic.observe.ledger import append_remaps
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from .consolidate import _age, _same, merge_into
from .writes import UNGROUPED, check_writable

if TYPE_CHECKING:
    import numpy as np

    from .memory import Memory

Progress = Callable[[int, int], None]

_BLOCK = 512


@dataclass(frozen=True)
class DuplicateGroup:
    """Memories that say the same thing: the oldest survives, the others would be merged into it."""

    kind: str
    """``exact`` (the same text) or ``near`` (embedding and word overlap)."""
    survivor: MemoryRecord
    others: tuple[MemoryRecord, ...]
    similarity: tuple[float, ...]
    """Each other member's cosine similarity to the survivor (1.0 for exact duplicates)."""

    def to_dict(self) -> dict[str, Any]:
        def one(record: MemoryRecord) -> dict[str, Any]:
            return {"id": record.id, "path": record.path, "created": record.created, "content": record.content}

        return {
            "kind": self.kind,
            "namespace": self.survivor.namespace,
            "survivor": one(self.survivor),
            "duplicates": [{**one(r), "similarity": round(s, 4)} for r, s in zip(self.others, self.similarity)],
        }


@dataclass(frozen=True)
class DedupResult:
    considered: int
    groups: tuple[DuplicateGroup, ...]
    merged: tuple[tuple[str, str], ...] = ()
    """(merged id, survivor id) for every memory folded into another."""
    commit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "considered": self.considered,
            "groups": [g.to_dict() for g in self.groups],
            "duplicates": sum(len(g.others) for g in self.groups),
            "merged": [{"id": a, "into": b} for a, b in self.merged],
            "commit": self.commit,
        }


def _oldest_first(records: list[MemoryRecord]) -> list[MemoryRecord]:
    return sorted(records, key=lambda r: (_age(r), r.path))


def _exact_groups(records: list[MemoryRecord]) -> list[DuplicateGroup]:
    by_hash: dict[tuple[str, str], list[MemoryRecord]] = {}
    for record in records:
        by_hash.setdefault((record.namespace, content_hash(record.content.strip())), []).append(record)
    groups = []
    for members in by_hash.values():
        if len(members) > 1:
            first, *rest = _oldest_first(members)
            groups.append(DuplicateGroup("exact", first, tuple(rest), tuple(1.0 for _ in rest)))
    return groups


def _indexed_vectors(mem: Memory, records: list[MemoryRecord]) -> dict[str, np.ndarray]:
    """path → the chunk vectors the index holds for a record, where it indexed this very text
    (never builds or refreshes the index: a missing or stale one just answers fewer)."""
    if not mem.has_index():
        return {}
    try:
        with mem.index.lock:
            catalog = mem.index.view()[2]
            rows = catalog.rows_for_paths([r.path for r in records], mem.index.embedder.dim)
    except Exception:  # noqa: BLE001 - an unreadable index only means embedding more
        return {}
    by_path = {r.path: r for r in records}
    return {
        path: row.chunks
        for path, row in rows.items()
        if row.pending is None and len(row.chunks) and row.content == by_path[path].content
    }


def memory_vectors(mem: Memory, records: list[MemoryRecord], progress: Progress | None = None) -> np.ndarray:
    """One unit vector per record: the mean of its chunk vectors, as the index and consolidation see it.

    Read from the index where it holds the record's current text; the rest are chunked as the
    index chunks them and embedded through the embedding cache, so only text neither has seen
    runs through the model (``progress`` counts those chunks).
    """
    import numpy as np

    from remnic.index import text as T
    from remnic.index.rows import embed_texts

    held = _indexed_vectors(mem, records)
    todo = [r for r in records if r.path not in held]
    plans = [T.chunks_for(r.content, T.title_of(r), mem.index.rules) for r in todo]
    flat = [chunk for chunks in plans for chunk in chunks]
    if flat:
        matrix = embed_texts(mem.index.embedder, mem.index.cache, flat, progress, bulk=len(flat) > _BLOCK)[0]
        start = 0
        for record, chunks in zip(todo, plans, strict=True):
            held[record.path] = matrix[start : start + len(chunks)]
            start += len(chunks)
    out = np.zeros((len(records), mem.index.embedder.dim), dtype=np.float32)
    for i, record in enumerate(records):
        mean = np.asarray(held[record.path], dtype=np.float32).mean(axis=0)
        out[i] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return out


def _near_groups(mem: Memory, records: list[MemoryRecord], progress: Progress | None = None) -> list[DuplicateGroup]:
    """Pairs over both floors, chained (union-find) into groups."""
    import numpy as np

    if len(records) < 2:
        return []
    floor = mem.settings.observe.duplicate_similarity_floor
    overlap = mem.settings.observe.near_duplicate_word_overlap
    vectors = memory_vectors(mem, records, progress)
    parent = list(range(len(records)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for start in range(0, len(records), _BLOCK):
        sims = vectors[start : start + _BLOCK] @ vectors.T
        for row, col in zip(*np.nonzero(sims >= floor), strict=True):
            i, j = start + int(row), int(col)
            if j > i and _same(records[i], records[j], overlap):
                parent[root(j)] = root(i)
    members: dict[int, list[int]] = {}
    for i in range(len(records)):
        members.setdefault(root(i), []).append(i)
    groups = []
    for idx in members.values():
        if len(idx) < 2:
            continue
        ordered = sorted(idx, key=lambda i: (_age(records[i]), records[i].path))
        first, rest = ordered[0], ordered[1:]
        alike = tuple(float(vectors[first] @ vectors[i]) for i in rest)
        groups.append(DuplicateGroup("near", records[first], tuple(records[i] for i in rest), alike))
    return groups


def find_duplicates(mem: Memory, *, namespace: str | None = None, progress: Progress | None = None) -> DedupResult:
    """Every group of duplicates among active memories (read-only); ``progress(done, total)`` counts
    the texts embedded for memories the index does not hold yet."""
    active = [
        r for r in mem.files.scan().records if r.status == "active" and (namespace is None or r.namespace == namespace)
    ]
    exact = _exact_groups(active)
    folded = {r.id for g in exact for r in g.others}
    groups = exact + _near_groups(mem, [r for r in active if r.id not in folded], progress)
    groups.sort(key=lambda g: g.survivor.path)
    return DedupResult(len(active), tuple(groups))


def dedup(
    mem: Memory,
    *,
    merge: bool = False,
    namespace: str | None = None,
    source: str = "api",
    progress: Progress | None = None,
) -> DedupResult:
    """Find duplicates; with ``merge`` fold each group into its survivor, every group in one commit."""
    found = find_duplicates(mem, namespace=namespace, progress=progress)
    if not merge or not found.groups:
        return found
    pairs = [(other, g.survivor.id) for g in found.groups for other in g.others]

    def run(tx: Transaction) -> PlanOutcome:
        check_writable(mem)
        merged = [(other.id, survivor) for other, survivor in pairs if merge_into(mem, tx, other, survivor, "dedup")]
        ids = list(dict.fromkeys(i for pair in merged for i in pair))
        namespaces = ",".join(sorted({g.survivor.namespace for g in found.groups}))
        groups = len({survivor for _, survivor in merged})  # an exact and a near group may share a survivor
        subject = (
            f"remnic dedup: {len(merged)} duplicate(s) merged into {groups} {'memory' if groups == 1 else 'memories'}"
        )
        return PlanOutcome(merged, subject if merged else None, ids, namespaces)

    outcome, commit = mem.committer.submit(Plan(("dedup", source, UNGROUPED + str(time.time())), run))
    merged = tuple(outcome.value)
    if merged:
        append_remaps(mem.root, dict(merged))
    return DedupResult(found.considered, found.groups, merged, commit.sha)
