"""Exact and near duplicates of a write: where an active memory with the same content may be (or one
waiting for review, for a fact that would wait too, or one a review dismissed or flagged), without
trusting the index alone (this process's queued writes, other processes' commits the index has not
taken yet, and every file when there is no usable index)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from remnic.errors import MemoryFormatError, NotFoundError
from remnic.memfile.model import MemoryRecord, content_hash
from remnic.repo.transaction import Transaction

if TYPE_CHECKING:
    from .memory import Memory

__all__ = ["DuplicateLookup", "duplicate_in", "find_duplicate"]


class DuplicateLookup:
    """Active memories by (namespace, content hash) for a batch of duplicate checks inside one write
    transaction, each source read once on first use: this process's writes still on their way into
    the index, and (with no usable index) every file. Neither changes until the transaction commits
    (what it stages is looked at apart; a queued write that lands in the index meanwhile is still a
    committed, active memory), so one pass answers every check instead of one pass per check.
    """

    def __init__(self, mem: Memory) -> None:
        self._mem = mem
        self._pending: dict[HashKey, MemoryRecord] | None = None
        self._files: dict[HashKey, MemoryRecord] | None = None
        self._head: tuple[str | None] | None = None
        self._commits: dict[str, bool] = {}
        self._changed: dict[tuple[str, str], list[MemoryRecord]] = {}  # memory files changed old..new, read once
        self._by_hash: dict[tuple[str, str], dict[HashKey, MemoryRecord]] = {}
        self._unindexed: list[MemoryRecord] | None = None  # every status: each caller picks its own
        self._inactive: dict[tuple[str, str, str, str], MemoryRecord] | None = None

    def head(self) -> str | None:
        if self._head is None:
            self._head = (self._mem.ledger.head(),)
        return self._head[0]

    def commit_exists(self, sha: str) -> bool:
        if sha not in self._commits:
            self._commits[sha] = self._mem.ledger.commit_exists(sha)
        return self._commits[sha]

    def changed(self, old: str, new: str, namespace: str, digest: str, status: str = "active") -> MemoryRecord | None:
        """Among the memory files changed from ``old`` to ``new`` (one ``git diff`` per batch)."""
        if (old, new) not in self._by_hash:
            self._by_hash[(old, new)] = _by_hash(self._records_between(old, new) or [])
        return self._by_hash[(old, new)].get((namespace, digest, status))

    def _records_between(self, old: str, new: str, most: int | None = None) -> list[MemoryRecord] | None:
        """The memory files changed from ``old`` to ``new``, read once a batch for every check that asks;
        None (nothing read) when more than ``most`` changed."""
        if (old, new) not in self._changed:
            paths = _changed_paths(self._mem, old, new)
            if most is not None and len(paths) > most:  # counted before any is read
                return None
            self._changed[(old, new)] = _read_all(self._mem, paths)
        records = self._changed[(old, new)]
        return None if most is not None and len(records) > most else records

    def unindexed(self, most: int, statuses: tuple[str, ...] = ("active",)) -> list[MemoryRecord]:
        """Memories with one of ``statuses`` (active by default) committed since the commit the index
        reflects that this process's queue does not hold (another process's writes, a hand commit, a
        review's decision the index has not taken yet): a near-duplicate check compares them
        directly, as :func:`find_duplicate` reads them. Nothing when there are more than ``most`` (an
        index far behind is the next recall's to catch up) or no usable index."""
        if self._unindexed is None:
            self._unindexed = []
            index = self._mem._index_if_built()
            manifest = index.manifest() if index is not None else None
            recorded, head = (manifest.commit if manifest is not None else None), self.head()
            if recorded is None or head is None or recorded == head or not self.commit_exists(recorded):
                return self._unindexed
            if self._mem.indexer.covers(recorded, head):
                return self._unindexed
            self._unindexed = list(self._records_between(recorded, head, most) or [])
        return [r for r in self._unindexed if r.status in statuses]

    def pending(self, namespace: str, digest: str, status: str = "active") -> MemoryRecord | None:
        if self._pending is None:
            self._pending = _by_hash(self._mem.indexer.pending_records())
        return self._pending.get((namespace, digest, status))

    def inactive(self, namespace: str, digest: str, status: str, category: str) -> MemoryRecord | None:
        """A memory that is not active with this text, status and category in ``namespace``: an import line
        carrying a status is a duplicate of it. The index holds active memories only, so the files are read
        (once a batch, through the scan memo); files are what an import's own commit changes, never stale."""
        if self._inactive is None:
            self._inactive = {}
            for record in self._mem.files.scan().records:
                if record.status != "active":
                    key = (record.namespace, content_hash(record.content), record.status, record.category)
                    self._inactive.setdefault(key, record)
        return self._inactive.get((namespace, digest, status, category))

    def files(self, namespace: str, digest: str, status: str = "active") -> MemoryRecord | None:
        if self._files is None:
            self._files = _by_hash(self._mem.files.scan().records)
        return self._files.get((namespace, digest, status))


HashKey = tuple[str, str, str]
"""(namespace, content hash, status)."""

MATCHED_STATUSES = ("active", "pending_review", "rejected", "quarantined")
"""The statuses a write can be a duplicate of: a memory in use, one already waiting for review, or one a
review dismissed or flagged (a fact observed again is that decision, see :mod:`.dismissed`)."""


def _by_hash(records: Iterable[MemoryRecord]) -> dict[HashKey, MemoryRecord]:
    out: dict[HashKey, MemoryRecord] = {}
    for record in records:
        if record.status in MATCHED_STATUSES:
            out.setdefault((record.namespace, content_hash(record.content), record.status), record)
    return out


def find_duplicate(
    mem: Memory,
    namespace: str,
    digest: str,
    tx: Transaction | None = None,
    lookup: DuplicateLookup | None = None,
    status: str = "active",
) -> MemoryRecord | None:
    """A memory in ``namespace`` with this ``status`` (active; pending_review: a fact that would wait
    for review is the one already waiting; rejected or quarantined: a fact a review dismissed or flagged)
    whose content has this hash, without trusting the index alone.

    Looks in the transaction's staged files, this process's writes still being indexed,
    the index catalog plus every file changed since the commit it reflects — or, with no
    usable index, every file (the scan memo keeps that cheap; ``lookup`` reads each once for a batch).
    """
    candidate = tx.staged_with_hash(namespace, digest) if tx is not None else None
    staged = candidate if candidate is not None and candidate.status == status else None
    if staged is not None:
        return staged
    found = (
        lookup.pending(namespace, digest, status)
        if lookup is not None
        else duplicate_in(mem.indexer.pending_records(), namespace, digest, status)
    )
    if found is not None:
        return found
    index = mem._index_if_built()
    looked = index.lookup_hash(namespace, digest, status) if index is not None else None
    exists = lookup.commit_exists if lookup is not None else mem.ledger.commit_exists
    if looked is None or looked[0] is None or not exists(looked[0]):
        if lookup is not None:
            return lookup.files(namespace, digest, status)
        return duplicate_in(mem.files.scan().records, namespace, digest, status)
    recorded, hit, hit_path = looked
    if hit is not None:
        try:
            record = mem.files.find(hit, hit_path)
        except (NotFoundError, MemoryFormatError):
            record = None
        if record is not None and record.status == status and content_hash(record.content) == digest:
            return record
    head = lookup.head() if lookup is not None else mem.ledger.head()
    if head is None or recorded == head or mem.indexer.covers(recorded, head):
        return None  # every change since the index's commit is in pending_records, looked at above
    if lookup is not None:
        return lookup.changed(recorded, head, namespace, digest, status)
    return duplicate_in(_changed_records(mem, recorded, head), namespace, digest, status)


def _changed_records(mem: Memory, old: str, new: str) -> list[MemoryRecord]:
    return _read_all(mem, _changed_paths(mem, old, new))


def _changed_paths(mem: Memory, old: str, new: str) -> list[str]:
    return [path for _, path, _ in mem.ledger.diff_names(old, new) if mem.files.paths.is_memory(path)]


def _read_all(mem: Memory, paths: Iterable[str]) -> list[MemoryRecord]:
    records = []
    for path in paths:
        try:
            records.append(mem.files.read(path))
        except (NotFoundError, MemoryFormatError):
            continue
    return records


def duplicate_in(
    records: Iterable[MemoryRecord], namespace: str, digest: str, status: str = "active"
) -> MemoryRecord | None:
    """A record among ``records`` with this content hash and ``status``."""
    for record in records:
        if record.namespace == namespace and record.status == status and content_hash(record.content) == digest:
            return record
    return None
