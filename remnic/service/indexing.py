"""Index updates after a write is acknowledged: applied in commit order by one background thread.

A write is done once its commit is in git; the search index is a cache rebuilt
from the files, so keeping it in step need not hold the write lock nor the
writer. Each committed batch is handed to :class:`IndexQueue`, which applies it
to the index on a worker thread (consecutive commits coalesced into one index
batch). A recall first waits for this process's queue (read-your-writes), and the
index itself catches up from git for commits made by other processes.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord
from remnic.repo.transaction import CommitOutcome

if TYPE_CHECKING:
    from .memory import Memory

log = logging.getLogger("remnic.indexing")


@dataclass
class _Batch:
    upserts: dict[str, MemoryRecord] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    base: str | None = None
    commit: str | None = None

    def add(self, outcome: CommitOutcome) -> None:
        for path in outcome.removed:
            self.upserts.pop(path, None)
            self.removed.add(path)
        for record in outcome.upserts:
            self.removed.discard(record.path)
            self.upserts[record.path] = record
        self.commit = outcome.sha


class IndexQueue:
    """One worker per repository handle; ``apply(upserts, removed, commit, parent)`` does the work."""

    def __init__(self, apply: Callable[[list[MemoryRecord], list[str], str | None, str | None], Any]) -> None:
        self._apply = apply
        self._cond = threading.Condition()
        self._queue: list[CommitOutcome] = []
        self._busy = False
        self._thread: threading.Thread | None = None
        self._closed = False
        self._holds = 0  # while > 0, committed batches wait (see hold)
        self._submitted = 0  # outcomes ever submitted …
        self._done = 0  # … and ever finished (applied, or failed and left to the next catch-up)

    def submit(self, outcome: CommitOutcome) -> None:
        with self._cond:
            self._queue.append(outcome)
            self._submitted += 1
            if self._thread is None or not self._thread.is_alive():
                self._closed = False
                self._thread = threading.Thread(target=self._work, name="remnic-index", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def pending_records(self) -> list[MemoryRecord]:
        """Records committed by this process whose index update has not landed yet: each file as its
        last queued commit left it (a memory written, then superseded by a later flush of the same held
        call, is the superseded one — never its first, stale version), none a later commit removed."""
        with self._cond:
            latest = _Batch()
            for outcome in self._queue:
                latest.add(outcome)
            return list(latest.upserts.values())

    def covers(self, indexed: str | None, head: str | None) -> bool:
        """Whether the commits from ``indexed`` to ``head`` are all this process's writes still queued here
        (so what they changed is in :meth:`pending_records`, and git need not be asked)."""
        with self._cond:
            at = indexed
            for outcome in self._queue:
                if outcome.base == at and outcome.sha is not None:
                    at = outcome.sha
            return at == head

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted before this call is applied; False on timeout. Writes that
        arrive meanwhile are not waited for, so a reader under a steady stream of writes (a server)
        waits at most for the batch in flight and the ones queued at its start. A reader needs the
        index now, so this lifts any hold."""
        with self._cond:
            self._holds = 0
            self._cond.notify_all()
            target = self._submitted
            return self._cond.wait_for(lambda: self._done >= target, timeout)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Let committed batches wait until the block ends (or a reader drains the queue): a burst of
        writes is acknowledged without sharing the cores with index updates, which then run as one
        coalesced batch. What is held stays in :meth:`pending_records`, so duplicate checks still see it."""
        with self._cond:
            self._holds += 1
        try:
            yield
        finally:
            with self._cond:
                self._holds = max(0, self._holds - 1)
                self._cond.notify_all()

    def close(self) -> None:
        self.drain()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: (self._queue and not self._holds) or self._closed)
                if not self._queue:
                    return
                taken = list(self._queue)
                self._busy = True
            try:
                for batch in _coalesce(taken):
                    self._apply(list(batch.upserts.values()), sorted(batch.removed), batch.commit, batch.base)
            except Exception as exc:  # noqa: BLE001 - the write stands; the next recall catches the index up
                log.warning("index update after a write failed (%s); the next recall will catch up", exc)
            finally:
                with self._cond:
                    del self._queue[: len(taken)]
                    self._done += len(taken)
                    self._busy = False
                    self._cond.notify_all()


def _coalesce(outcomes: list[CommitOutcome]) -> list[_Batch]:
    """Consecutive commits (each one's base is the previous one's commit) become one index batch."""
    batches: list[_Batch] = []
    for outcome in outcomes:
        if not batches or batches[-1].commit is None or outcome.base != batches[-1].commit:
            batches.append(_Batch(base=outcome.base))
        batches[-1].add(outcome)
    return batches


def apply_batch(
    mem: Memory, upserts: list[MemoryRecord], removed: list[str], commit: str | None, parent: str | None
) -> None:
    """One committed batch into the index (on the index worker). A repository without a usable index
    gets a whole one when it is small (so the first write leaves it healthy); a large one is left
    for the next recall to rebuild, with progress."""
    index = mem.index
    if index.health(mem.ledger).state in ("missing", "corrupt", "schema-mismatch", "model-mismatch"):
        limit = mem.settings.store.inline_rebuild_max
        if sum(1 for _ in zip(mem.files.iter_paths(), range(limit + 1), strict=False)) <= limit:
            index.rebuild(mem.files, mem.ledger, reason="first write")
        return
    index.apply(upserts, removed, commit, parent=parent)
    if commit is not None:
        manifest = index.manifest()
        if manifest is not None and manifest.commit != commit and mem.ledger.commit_exists(commit):
            # Another process's commit landed between this batch's parent and its commit, so the shared
            # index did not take it: catch up from git now, or under concurrent writers it falls ever
            # further behind and every duplicate check re-reads what changed since.
            index.ensure_fresh(mem.files, mem.ledger)
