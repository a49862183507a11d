"""Consolidation: near-duplicates among recently observed memories merged into the oldest, one commit.

Persisting a flush already reinforces an existing memory instead of adding its
near-duplicate; consolidation catches what that could not see (two flushes
committed at once, an index that lagged, a threshold met only later). For each
memory the pipeline wrote in the last ``observe.consolidateWindowDays``, its
nearest active neighbours are compared; one that says the same thing (cosine ≥
``observe.duplicateSimilarityFloor``, enough shared words, no other value for an
entity attribute) pairs with it. Oldest first, each paired memory is merged into
the oldest survivor it pairs with itself and differs concretely from nothing
merged there, else it survives (:func:`assign`, the rule ``dedup`` shares): a
survivor is never merged, so no chain of ``mergedInto`` forms, a drifting series
never collapses into its first member, and the result does not depend on the
order files are scanned in. A supersession chain's current memory, or one others
were merged into, is never merged and survives first. The survivor
is reinforced and lists the merged ids in ``derived_from``, the merged memories
keep their files with ``status: archived`` and ``mergedInto``. Observations that
resulted in a merged memory get a ledger line pointing ``resultingPrimitiveId``
at the survivor.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError
from remnic.fsio import write_atomic
from remnic.memfile.model import MemoryRecord, now_iso, parse_time
from remnic.memfile.validate import check_bytes
from remnic.memfile.values import frontmatter_tags, importance_of, tag_key
from remnic.observe.alike import differs_concretely, group_fact, word_overlap
from remnic.observe.ledger import append_remaps
from remnic.observe.records import MAX_SOURCE_TURNS
from remnic.recall.citations import sessions_of
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from .chains import Links
from .writes import UNGROUPED, check_writable, patch_staged

if TYPE_CHECKING:
    from .memory import Memory

NEIGHBOURS = 16
"""Nearest memories compared with each recent one (best first, up to the similarity floor): enough
that every member of a group pairs with its oldest, not only with the member next to it."""
LAST_RUN_FILE = "consolidation.json"
"""In the state folder: when consolidation last ran and what it did (``remnic doctor`` reads it)."""


@dataclass
class ConsolidationResult:
    considered: int = 0
    merged: list[tuple[str, str]] = field(default_factory=list)  # (merged id, survivor id)
    commit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "considered": self.considered,
            "merged": [{"id": a, "into": b} for a, b in self.merged],
            "commit": self.commit,
        }

    def summary(self) -> str:
        """One line for logs and the watcher: what the pass did, nothing merged included."""
        merged = f"merged {len(self.merged)} near-duplicate(s)" if self.merged else "merged nothing"
        commit = f" (commit {self.commit[:8]})" if self.commit and self.merged else ""
        return f"consolidation: {merged} among {self.considered} recent observation(s){commit}"


def record_run(state_dir: Path, result: ConsolidationResult) -> None:
    """Note when consolidation ran and what it did; best effort (a read-only or deleted directory
    keeps no note, and never gets its state folder made again for one)."""
    if not state_dir.is_dir():
        return
    note = {"at": now_iso(), "considered": result.considered, "merged": len(result.merged), "commit": result.commit}
    try:
        write_atomic(state_dir / LAST_RUN_FILE, json.dumps(note) + "\n", durable=False)
    except OSError:
        pass


def last_run(state_dir: Path) -> dict[str, Any] | None:
    """The note :func:`record_run` left (``at``, ``considered``, ``merged``, ``commit``), or None."""
    try:
        note = json.loads((state_dir / LAST_RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return note if isinstance(note, dict) and isinstance(note.get("at"), str) else None


def _same(a: MemoryRecord, b: MemoryRecord, overlap_floor: float) -> bool:
    if a.category != b.category or a.namespace != b.namespace or not _compatible(a, b):
        return False
    return word_overlap(a.content, b.content) >= overlap_floor


def _compatible(a: MemoryRecord, b: MemoryRecord) -> bool:
    """Neither differs concretely from the other nor states another value for an entity attribute."""
    if differs_concretely(a.content, b.content):
        return False
    attrs_a, attrs_b = a.frontmatter.get("structuredAttributes"), b.frontmatter.get("structuredAttributes")
    if (
        isinstance(attrs_a, dict)
        and isinstance(attrs_b, dict)
        and a.frontmatter.get("entityRef") == b.frontmatter.get("entityRef")
    ):
        shared = set(attrs_a) & set(attrs_b)
        if any(str(attrs_a[k]).strip().lower() != str(attrs_b[k]).strip().lower() for k in shared):
            return False
    return True


def _age(record: MemoryRecord) -> float:
    return parse_time(record.created) or 0.0


def _staged(mem: Memory, tx: Transaction, path: str) -> MemoryRecord | None:
    """The memory at ``path`` as the transaction sees it now (earlier merges of this pass included)."""
    checked = check_bytes(tx.read_bytes(path) or b"", path, mem.settings.store)
    return checked.record if checked.ok else None


def merge_into(mem: Memory, tx: Transaction, newer: MemoryRecord, survivor_id: str, via: str = "consolidation") -> bool:
    """Fold ``newer`` into the memory ``survivor_id`` inside ``tx``: ``newer`` keeps its file as
    ``status: archived`` with ``mergedInto``; the survivor is reinforced (its count plus the merged
    one's), lists ``newer`` (and what was merged into it before) in ``derived_from`` (``derived_via``
    says which operation merged it), and takes the tags, ``sourceTurnIds`` and sessions it lacks and the
    merged one's importance when higher.
    Both are read as the transaction holds them, so merging several into one survivor adds up. False
    when either file is gone, unreadable or no longer active (nothing staged for the pair)."""
    survivor = mem.get(survivor_id)
    current, merged = _staged(mem, tx, survivor.path), _staged(mem, tx, newer.path)
    if current is None or merged is None or current.status != "active" or merged.status != "active":
        return False
    if not patch_staged(mem, tx, newer, {"status": "archived", "mergedInto": survivor_id, "archivedAt": now_iso()}):
        return False
    fm, other = current.frontmatter, merged.frontmatter
    changes: dict[str, Any] = {
        "reinforcement_count": _count(fm) + 1 + _count(other),
        "last_reinforced_at": now_iso(),
        "derived_from": sorted(
            set(_strings(fm.get("derived_from"))) | set(_strings(other.get("derived_from"))) | {newer.id}
        ),
        "derived_via": via,
    }
    tags = frontmatter_tags(fm)
    held = {tag_key(t) for t in tags}
    more = [t for t in frontmatter_tags(other) if tag_key(t) not in held]
    if more:  # the merged memory's tags stay findable on the one left active
        changes["tags"] = tags + more
    if importance_of(other) > importance_of(fm):  # what someone said mattered more is not lost in the merge
        changes["importanceScore"] = importance_of(other)
        if isinstance(other.get("importanceLevel"), str):
            changes["importanceLevel"] = other["importanceLevel"]
    # Its provenance too: the turns that said it, and the sessions they were in (``sessionKey`` holds one).
    turns = _joined(_strings(fm.get("sourceTurnIds")), _strings(other.get("sourceTurnIds")))
    if turns is not None:
        changes["sourceTurnIds"] = turns
    sessions = _joined(sessions_of(fm), sessions_of(other))
    if sessions is not None:
        changes["sessionKeys"] = sessions
    patch_staged(mem, tx, survivor, changes)
    return True


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [str(x) for x in value if isinstance(x, str | int) and not isinstance(x, bool) and str(x).strip()]


def _joined(held: list[str], more: list[str]) -> list[str] | None:
    """``held`` then what ``more`` adds, in order, the first kept first and at most ``MAX_SOURCE_TURNS``
    (as a reinforcement keeps turns); None when ``more`` adds nothing."""
    ids = list(dict.fromkeys([*held, *more]))
    if len(ids) == len(dict.fromkeys(held)):
        return None
    return ids[:1] + ids[1:][-(MAX_SOURCE_TURNS - 1) :]


def _count(frontmatter: dict[str, Any]) -> int:
    count = frontmatter.get("reinforcement_count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def consolidate(mem: Memory, *, days: float | None = None) -> ConsolidationResult:
    result = _consolidate(mem, days)
    record_run(mem.settings.state_dir, result)
    return result


def _consolidate(mem: Memory, days: float | None) -> ConsolidationResult:
    settings = mem.settings.observe
    window = settings.consolidate_window_days if days is None else days
    if isinstance(window, bool) or not isinstance(window, int | float) or not (window > 0 and math.isfinite(window)):
        raise ValidationError.single("days", f"must be a positive number of days, got {window!r}")
    cutoff = time.time() - window * 86400
    mem.settle_index()
    result = ConsolidationResult()
    if not mem.has_index():
        return result
    scanned = mem.files.scan().records
    recent = [
        r for r in scanned if r.status == "active" and r.frontmatter.get("source") == "extraction" and _age(r) >= cutoff
    ]
    result.considered = len(recent)
    if not recent:
        return result
    mem.index.ensure_fresh(mem.files, mem.ledger)
    vectors = mem.index.embed_as_memories([r.content for r in recent])
    groups = _groups(mem, recent, vectors, _merged_before(scanned), chain_held(scanned))
    if not groups:
        return result

    def run(tx: Transaction) -> PlanOutcome:
        check_writable(mem)
        merged = [
            (member.id, survivor.id)
            for survivor, members in groups
            for member in members
            if merge_into(mem, tx, member, survivor.id)
        ]
        subject = f"remnic consolidate: {len(merged)} near-duplicate(s) merged"
        ids = list(dict.fromkeys(i for pair in merged for i in pair))
        return PlanOutcome(merged, subject if merged else None, ids, "default")

    outcome, commit = mem.committer.submit(Plan(("consolidate", "consolidate", UNGROUPED + str(time.time())), run))
    result.merged = list(outcome.value)
    result.commit = commit.sha
    if result.merged:
        append_remaps(mem.root, dict(result.merged))
    return result


@dataclass(frozen=True)
class Assignment:
    groups: list[tuple[MemoryRecord, list[MemoryRecord]]]
    """Each survivor with the members merged into it, in the order the survivors were met."""
    held: list[tuple[MemoryRecord, MemoryRecord]]
    """(held memory, survivor): a held memory left active though it pairs with a survivor it could join."""


def assign(
    records: dict[str, MemoryRecord],
    paired: dict[str, set[str]],
    merged_before: dict[str, list[MemoryRecord]],
    held: set[str] | frozenset[str] = frozenset(),
) -> Assignment:
    """Which near-duplicate merges into which: the one rule of consolidation and ``dedup --merge``.

    ``paired``: each memory's near-duplicates, by id, both ways. In order (held memories first, then
    oldest first, the id breaking a tie) each paired memory joins the first survivor it is itself
    paired with and that neither the survivor nor anything merged into it (in this pass or before:
    ``merged_before``) differs concretely from; else it becomes a survivor. Only a direct pair
    merges, so a drifting series ("… the editor" → "… editor and terminal" → "… terminal on
    weekends") is never folded into its first, least detailed member, and two members naming other
    things (VSCode, Vim) never share one. A survivor is never merged, nor is a held memory: one
    others were merged into before, or a supersession chain's current memory (``held``), as their
    ``mergedInto`` or ``supersededBy`` must keep naming an active memory. Held memories come first so
    that each survives and takes in its own near-duplicates. What merges where depends only on the
    memories, not on the order they were found in.
    """
    keep = set(merged_before) | set(held)

    def ordered(ids: set[str]) -> list[MemoryRecord]:
        return sorted((records[i] for i in ids), key=lambda r: (r.id not in keep, _age(r), r.id))

    joined: dict[str, list[MemoryRecord]] = {}  # survivor id → the members merged into it, oldest first
    kept: list[tuple[MemoryRecord, MemoryRecord]] = []
    for record in ordered(set(paired)):
        into = next(
            (
                survivor
                for survivor in ordered(paired[record.id] & joined.keys())
                if all(_compatible(o, record) for o in [*merged_before.get(survivor.id, []), *joined[survivor.id]])
            ),
            None,
        )
        if into is not None and record.id not in keep:
            joined[into.id].append(record)
            continue
        if into is not None:
            kept.append((record, into))
        joined[record.id] = []
    return Assignment([(records[sid], members) for sid, members in joined.items() if members], kept)


def chain_held(records: list[MemoryRecord]) -> set[str]:
    """The active memories others pass their value on to (superseded by them, merged into them): the
    ones :func:`assign` never merges."""
    links = Links(records)
    return {r.id for r in links.by_id.values() if r.status == "active" and links.predecessors(r)}


def _merged_before(records: list[MemoryRecord]) -> dict[str, list[MemoryRecord]]:
    """The memories earlier passes (or dedup) merged, by the id their ``mergedInto`` names."""
    merged: dict[str, list[MemoryRecord]] = {}
    for record in records:
        into = record.frontmatter.get("mergedInto")
        if record.status == "archived" and isinstance(into, str) and into:
            merged.setdefault(into, []).append(record)
    return merged


def _groups(
    mem: Memory,
    recent: list[MemoryRecord],
    vectors: Any,
    merged_before: dict[str, list[MemoryRecord]],
    held: set[str],
) -> list[tuple[MemoryRecord, list[MemoryRecord]]]:
    """Each survivor with the members merged into it: every pair a recent memory makes with its
    nearest active neighbours (the similarity floor, the shared words, no concrete difference:
    :func:`_same`), grouped by :func:`assign`."""
    settings = mem.settings.observe
    records = {r.id: r for r in recent}
    paired: dict[str, set[str]] = {}
    for record, vector in zip(recent, vectors, strict=True):
        # A team's fact said by another of the team is one whatever the cosine (the names set it apart).
        group = group_fact(record.content)
        for other_id, path, similarity in mem.index.nearest(vector, NEIGHBOURS, namespace=record.namespace):
            below = similarity < settings.duplicate_similarity_floor
            if below and group is None:
                break  # best first: none further is a near-duplicate
            if other_id == record.id:
                continue
            other = records.get(other_id)
            if other is None:
                try:
                    other = mem.files.read(path)
                except Exception:  # noqa: BLE001 - gone or malformed since it was indexed
                    continue
            if below and group_fact(other.content) != group:
                continue
            if other.status != "active" or not _same(record, other, settings.near_duplicate_word_overlap):
                continue
            records[other.id] = other
            paired.setdefault(record.id, set()).add(other.id)
            paired.setdefault(other.id, set()).add(record.id)

    return assign(records, paired, merged_before, held).groups
