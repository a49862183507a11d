"""Duplicates among active memories: exact (same text) and near (same meaning, same words), merged on request.

Exact duplicates share a namespace and the content hash writes already dedupe by (text
stripped of surrounding whitespace). Near-duplicates are the pairs consolidation merges:
memory vectors (the mean of a memory's chunk vectors, read from the index where it holds the
memory's current text, else embedded through the cache) at least
``observe.duplicateSimilarityFloor`` alike *and* the same category,
namespace, enough shared words (``observe.nearDuplicateWordOverlap``) and no other value
for an entity attribute. Groups follow consolidation's rule (:func:`.consolidate.assign`):
each memory joins the oldest survivor it is *itself* such a pair with, never one it is only
linked to through a third, so every merged memory is a near-duplicate of its survivor. A
supersession chain's current memory (or one others were merged into before) is never merged:
it survives, taking in its own near-duplicates even when they are older, and one paired with
another survivor is left active and reported (``kept``, with the command that keeps one of the
two: ``remnic update LATER --supersedes EARLIER``). Merging folds every other member into
its survivor with :func:`.consolidate.merge_into` (the merged files stay, ``archived`` with
``mergedInto``; the survivor lists them in ``derived_from``), all groups in one commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord, content_hash
from remnic.observe.alike import group_fact
from remnic.observe.ledger import append_remaps
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from .chains import Links
from .consolidate import _age, _merged_before, _same, assign, merge_into
from .writes import UNGROUPED, check_writable

if TYPE_CHECKING:
    import numpy as np

    from .memory import Memory

Progress = Callable[[int, int], None]

_BLOCK = 512


@dataclass(frozen=True)
class DuplicateGroup:
    """Memories that say the same thing: the survivor stays, the others would be merged into it."""

    kind: str
    """``exact`` (the same text) or ``near`` (embedding and word overlap)."""
    survivor: MemoryRecord
    others: tuple[MemoryRecord, ...]
    similarity: tuple[float, ...]
    """Each other member's cosine similarity to the survivor (1.0 for exact duplicates)."""
    note: str | None = None
    """Why the survivor is not the group's oldest memory (it holds a chain's value), else None."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "namespace": self.survivor.namespace,
            "survivor": _one(self.survivor),
            "duplicates": [{**_one(r), "similarity": round(s, 4)} for r, s in zip(self.others, self.similarity)],
            "note": self.note,
        }


@dataclass(frozen=True)
class KeptActive:
    """A duplicate of a survivor left active: merging it would leave a link naming an archived memory."""

    record: MemoryRecord
    survivor: MemoryRecord
    similarity: float
    reason: str

    @property
    def hint(self) -> str:
        """The command that keeps one of the two: the later one replaces the earlier, and the values each
        replaced before stay replaced (a memory's ``supersedes`` may name several)."""
        later, earlier = sorted((self.record, self.survivor), key=lambda r: (_age(r), r.id), reverse=True)
        return f"remnic update {later.id} --supersedes {earlier.id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            **_one(self.record),
            "duplicateOf": self.survivor.id,
            "similarity": round(self.similarity, 4),
            "reason": self.reason,
            "hint": self.hint,
        }


def _one(record: MemoryRecord) -> dict[str, Any]:
    return {"id": record.id, "path": record.path, "created": record.created, "content": record.content}


@dataclass(frozen=True)
class DedupResult:
    considered: int
    groups: tuple[DuplicateGroup, ...]
    merged: tuple[tuple[str, str], ...] = ()
    """(merged id, survivor id) for every memory folded into another."""
    commit: str | None = None
    kept: tuple[KeptActive, ...] = ()
    """Duplicates left active because a supersession chain (or an earlier merge) names them."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "considered": self.considered,
            "groups": [g.to_dict() for g in self.groups],
            "duplicates": sum(len(g.others) for g in self.groups),
            "keptActive": [k.to_dict() for k in self.kept],
            "merged": [{"id": a, "into": b} for a, b in self.merged],
            "commit": self.commit,
        }


@dataclass(frozen=True)
class _Held:
    """What keeps memories from being merged: chains' current memories and earlier merges' survivors."""

    links: Links
    held: set[str]
    merged_before: dict[str, list[MemoryRecord]]

    def why(self, record: MemoryRecord) -> str:
        before = self.links.predecessors(record)
        superseded = [p.id for p in before if not self.links.merged_only(p, record)]
        merged = [p.id for p in before if self.links.merged_only(p, record)]
        said = []
        if superseded:
            said.append(f"it superseded {', '.join(superseded)}")
        if merged:
            said.append(f"{', '.join(merged)} {'was' if len(merged) == 1 else 'were'} merged into it before")
        if not said and self.merged_before.get(record.id):
            said.append("its exact duplicates are merged into it")
        return " and ".join(said) or "others are merged into it"

    def groups(
        self, kind: str, records: list[MemoryRecord], paired: dict[str, set[str]], alike: Callable[[str, str], float]
    ) -> tuple[list[DuplicateGroup], list[KeptActive]]:
        """The groups :func:`.consolidate.assign` makes of ``paired`` (``alike``: two ids' similarity)."""
        found = assign({r.id: r for r in records}, paired, self.merged_before, self.held)
        groups = []
        for survivor, members in found.groups:
            older = [m.id for m in members if (_age(m), m.id) < (_age(survivor), survivor.id)]
            note = None
            if older:
                note = (
                    f"kept over the older {', '.join(older)}: {self.why(survivor)}, "
                    "and merging it away would leave that link naming an archived memory"
                )
            similarity = tuple(alike(survivor.id, m.id) for m in members)
            groups.append(DuplicateGroup(kind, survivor, tuple(members), similarity, note))
        kept = [
            KeptActive(
                record,
                survivor,
                alike(survivor.id, record.id),
                f"{self.why(record)}: merging it away would leave that link naming an archived memory",
            )
            for record, survivor in found.held
        ]
        return groups, kept


def _exact_groups(records: list[MemoryRecord], held: _Held) -> tuple[list[DuplicateGroup], list[KeptActive]]:
    by_hash: dict[tuple[str, str], list[MemoryRecord]] = {}
    for record in records:
        by_hash.setdefault((record.namespace, content_hash(record.content.strip())), []).append(record)
    same = [members for members in by_hash.values() if len(members) > 1]
    paired = {r.id: {o.id for o in members if o.id != r.id} for members in same for r in members}
    return held.groups("exact", [r for members in same for r in members], paired, lambda a, b: 1.0)


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


def _near_groups(
    mem: Memory, records: list[MemoryRecord], held: _Held, progress: Progress | None = None
) -> tuple[list[DuplicateGroup], list[KeptActive]]:
    """The pairs over both floors, grouped by consolidation's rule."""
    import numpy as np

    if len(records) < 2:
        return [], []
    floor = mem.settings.observe.duplicate_similarity_floor
    overlap = mem.settings.observe.near_duplicate_word_overlap
    vectors = memory_vectors(mem, records, progress)
    paired: dict[str, set[str]] = {}
    shown = -1
    for start in range(0, len(records), _BLOCK):
        sims = vectors[start : start + _BLOCK] @ vectors.T
        rows, cols = np.nonzero(np.triu(sims >= floor, k=start + 1))  # each pair once, never a memory with itself
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            i, j = start + row, col
            if progress is not None and i != shown:
                progress(i, len(records))  # comparing the texts is the slow part on many similar memories
                shown = i
            if _same(records[i], records[j], overlap):
                paired.setdefault(records[i].id, set()).add(records[j].id)
                paired.setdefault(records[j].id, set()).add(records[i].id)
    # A team's fact said by several of the team is one whatever the cosine (the names set it apart).
    teams: dict[str, list[MemoryRecord]] = {}
    for record in records:
        group = group_fact(record.content)
        if group is not None:
            teams.setdefault(group, []).append(record)
    for team in teams.values():
        for i, a in enumerate(team):
            for b in team[i + 1 :]:
                if _same(a, b, overlap):
                    paired.setdefault(a.id, set()).add(b.id)
                    paired.setdefault(b.id, set()).add(a.id)
    if progress is not None:
        progress(len(records), len(records))
    at = {r.id: i for i, r in enumerate(records)}
    return held.groups("near", records, paired, lambda a, b: float(vectors[at[a]] @ vectors[at[b]]))


def find_duplicates(mem: Memory, *, namespace: str | None = None, progress: Progress | None = None) -> DedupResult:
    """Every group of duplicates among active memories (read-only); ``progress(done, total)`` counts
    the texts embedded for memories the index does not hold yet."""
    scanned = mem.files.scan().records
    active = [r for r in scanned if r.status == "active" and (namespace is None or r.namespace == namespace)]
    merged_before = _merged_before(scanned)
    links = Links(scanned)
    held = _Held(links, {r.id for r in active if links.predecessors(r)}, merged_before)
    exact, kept = _exact_groups(active, held)
    folded = {r.id for g in exact for r in g.others}
    # An exact group's survivor takes in its near-duplicates too, and is never merged itself.
    after_exact = {
        **merged_before,
        **{g.survivor.id: [*merged_before.get(g.survivor.id, []), *g.others] for g in exact},
    }
    near, near_kept = _near_groups(
        mem, [r for r in active if r.id not in folded], _Held(held.links, held.held, after_exact), progress
    )
    groups = exact + near
    groups.sort(key=lambda g: g.survivor.path)
    return DedupResult(len(active), tuple(groups), kept=tuple(kept + near_kept))


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
    return DedupResult(found.considered, found.groups, merged, commit.sha, found.kept)
