"""The one write transaction: lock → validate → atomic write → commit, with rollback and group commit.

Every mutation (store, update, forget, revert, import, observe, sync) stages its
file changes in a :class:`Transaction` while it holds the repository write lock;
nothing touches disk until :meth:`Transaction.commit`, which journals the change
(:mod:`.journal`), writes the files atomically, commits them as one git commit
and moves HEAD by compare-and-swap. A failure before HEAD moves puts every file
back; once HEAD has moved the write is done.

Writers in one process that arrive while a commit is running are group-committed
by :class:`GroupCommitter`: the next leader runs every waiting plan of the same
kind inside one transaction — one git commit, one index batch — and each writer
is answered only after that commit is durable. Plans read what earlier plans of
the batch staged (:meth:`Transaction.read_bytes`, :meth:`Transaction.committed_bytes`,
:meth:`Transaction.staged_record`), so a group commit holds what running them one
after another would.

A file is replaced only if it still holds the bytes the transaction read (compared
under a read lease just before its rename, :func:`remnic.fsio.replace_unless_held`),
every file of a write checked so before any is renamed: a person's save landing
meanwhile makes the write undo what it renamed so far and commit nothing, and the
group committer runs the plans that staged that file again on the new text, after
committing the rest of the batch without them.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from remnic.config import STATE_DIR
from remnic.errors import WriteConflictError
from remnic.fsio import (
    HELD,
    REPLACED,
    UNCHANGED,
    crash_point,
    flush_to_disk,
    fsync_folders,
    replace_unless_held,
    stage_files,
    sweep_litter,
    unchanged_unless_held,
)
from remnic.memfile.model import MemoryRecord, content_hash

from .files import MemoryStore
from .journal import Journal, JournalFile, StateDirError, digest, recover, unusable_folder
from .ledger import Ledger

BULK_FILES = 64  # past this many files one flush beats a fsync per file
WRITE_CONFLICT_RETRIES = 8
"""How many times a batch whose file changed on disk between its read and its rename runs again, on the new
text. A save lands in a window of some milliseconds, so one retry nearly always wins; an agent appending in a
loop every 50 ms still hits a third of the attempts, and eight retries make its refusal about one in 10^4
writes; past them the writer is told (WriteConflictError) rather than kept waiting under the lock."""
CONFLICT_PAUSE_S = 0.005
"""The pause before the second retry (the first runs at once: a save has just landed, the next is furthest
away), doubled for each next one up to ``CONFLICT_PAUSE_MAX_S``: a program holding the file open for
writing gets time to close it. About a quarter of a second in all, under the write lock."""
CONFLICT_PAUSE_MAX_S = 0.05
WRITE_HELD_RETRIES = 2
"""How many times a plan runs again while a file it writes is held open for writing by another program: a
save in progress closes it within milliseconds, a logger or an editor keeping it open does not within any
pause worth holding the write lock for; past them the writer is told the file is held."""
_UPDATE_INDEX_FAILED = "`git update-index` failed"  # in a lag warning: git refused, no lock was held (ledger.py)


@dataclass
class Staged:
    """One path a transaction will change."""

    path: str
    data: bytes | None  # what goes on disk; None removes the file
    before: bytes | None  # what the disk held when it was staged
    commit_data: bytes | None = None  # what git records when it differs from the disk (a carried-aside edit)
    record: MemoryRecord | None = None  # the memory it holds, for the search index
    on_disk: bool = False  # the disk already holds the change: commit it, never write or undo it


@dataclass
class CommitOutcome:
    sha: str | None
    base: str | None = None  # HEAD before the commit: the index follows from there
    paths: list[str] = field(default_factory=list)
    upserts: list[MemoryRecord] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Done, with a caveat: git's own index could not follow the commit yet (repaired later)."""


@dataclass(frozen=True)
class _Mark:
    staged: dict[str, Staged]
    index_upserts: dict[str, MemoryRecord]
    index_removed: set[str]
    by_hash: dict[tuple[str, str], list[str]]


class Transaction:
    """File changes staged under the write lock; committed as one commit or not at all.

    ``on_commit`` hears each commit that stands, with what it committed, while the lock is still held
    (the sync base follows remnic's own commits there, so no other writer can slip in between)."""

    def __init__(self, files: MemoryStore, ledger: Ledger, on_commit: OnCommit | None = None) -> None:
        self.files = files
        self.ledger = ledger
        self.on_commit = on_commit
        self.root = files.root
        self.staged: dict[str, Staged] = {}
        self._by_hash: dict[tuple[str, str], list[str]] = {}  # (namespace, content hash) → staged paths
        self.index_upserts: dict[str, MemoryRecord] = {}
        self.index_removed: set[str] = set()
        self._read: dict[str, bytes | None] = {}  # path → what the transaction first read from disk

    # --- reading through the staged changes ---

    def committed_bytes(self, path: str) -> bytes | None:
        """What git will hold for ``path`` once this transaction commits as staged so far (HEAD's copy
        when nothing staged it): a later plan of a batch must not take an earlier one's change for a
        person's uncommitted edit."""
        staged = self.staged.get(path)
        if staged is None:
            return self.ledger.committed_bytes(path)
        return staged.commit_data if staged.commit_data is not None else staged.data

    def staged_record(self, memory_id: str) -> MemoryRecord | None:
        """The memory ``memory_id`` as an earlier plan of this transaction staged it (moved, perhaps), or None."""
        return next((r for r in reversed(self.staged_records()) if r.id == memory_id), None)

    def read_bytes(self, path: str) -> bytes | None:
        """What ``path`` holds as staged so far, else on disk; the disk's answer is remembered as the bytes
        a later change of ``path`` starts from (``Staged.before``), which the write finds unchanged or refuses."""
        if path in self.staged:
            return self.staged[path].data
        try:
            data: bytes | None = self.files.read_bytes(path)
        except FileNotFoundError:
            data = None
        self._read.setdefault(path, data)
        return data

    def exists(self, path: str) -> bool:
        """Whether ``path`` is taken: staged, or any entry on disk (a dangling symlink too)."""
        if path in self.staged:
            return self.staged[path].data is not None
        return os.path.lexists(self.root / path)

    def staged_with_hash(self, namespace: str, digest: str) -> MemoryRecord | None:
        """A record staged in this transaction, in ``namespace``, whose content hash is ``digest``."""
        for path in self._by_hash.get((namespace, digest), ()):
            staged = self.staged.get(path)
            if staged is not None and staged.record is not None and staged.data is not None:
                return staged.record
        return None

    def staged_records(self) -> list[MemoryRecord]:
        return [s.record for s in self.staged.values() if s.record is not None and s.data is not None]

    # --- staging ---

    def put(
        self,
        path: str,
        data: str | bytes,
        record: MemoryRecord | None = None,
        *,
        commit_data: bytes | None = None,
        on_disk: bool = False,
    ) -> None:
        """Stage ``data`` for ``path``; ``commit_data`` commits other bytes than the disk keeps (a carried-aside
        edit); ``on_disk`` commits bytes the caller already left on disk (sync), which are never undone."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if not on_disk:
            self.files.check_writable_path(path)
        before = self.staged[path].before if path in self.staged else (None if on_disk else self._before(path))
        self.staged[path] = Staged(path, raw, before, commit_data, record, on_disk)
        if record is not None:
            self._by_hash.setdefault((record.namespace, content_hash(record.content)), []).append(path)

    def remove(self, path: str, *, on_disk: bool = False) -> None:
        if not on_disk:
            self.files.check_writable_path(path)
        before = self.staged[path].before if path in self.staged else (None if on_disk else self._before(path))
        self.staged[path] = Staged(path, None, before, on_disk=on_disk)

    def index(self, upserts: Sequence[MemoryRecord] = (), removed: Sequence[str] = ()) -> None:
        """Index changes with no file change (sync: edits already committed by plain git)."""
        for record in upserts:
            self.index_upserts[record.path] = record
        self.index_removed.update(removed)

    def _before(self, path: str) -> bytes | None:
        """The bytes a change of ``path`` replaces: those a plan read through :meth:`read_bytes` (its new text
        was made from them), else the disk's now."""
        if path in self._read:
            return self._read[path]
        try:
            return (self.root / path).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def mark(self) -> _Mark:
        """A point to roll back to (a plan of a group failing)."""
        by_hash = {k: list(v) for k, v in self._by_hash.items()}
        return _Mark(dict(self.staged), dict(self.index_upserts), set(self.index_removed), by_hash)

    def rollback(self, mark: _Mark) -> None:
        self.staged, self.index_upserts = dict(mark.staged), dict(mark.index_upserts)
        self.index_removed, self._by_hash = set(mark.index_removed), {k: list(v) for k, v in mark.by_hash.items()}

    # --- committing ---

    def commit(
        self, subject: str, trailers: Mapping[str, str | Sequence[str]], body: str | None = None
    ) -> CommitOutcome:
        """Journal, write, commit. Before HEAD moves a failure restores every file written; after, the write
        stands. :class:`WriteConflictError` when a file no longer holds the bytes staged as its ``before``
        (nothing is left written, nothing committed)."""
        changes = [s for s in self.staged.values() if s.on_disk or s.data != s.before or s.commit_data is not None]
        upserts = {**self.index_upserts, **{s.path: s.record for s in self.staged.values() if s.record}}
        removed = set(self.index_removed) | {s.path for s in self.staged.values() if s.data is None}
        self.staged, self.index_upserts, self.index_removed = {}, {}, set()
        base = self.ledger.head()
        outcome = CommitOutcome(
            None, base, [s.path for s in changes], [own_copy(r) for r in upserts.values() if r], sorted(removed)
        )
        if not changes:
            return outcome
        journal = Journal.begin(
            self.root / STATE_DIR,
            base,
            [JournalFile(s.path, s.before, digest(s.data), written=not s.on_disk) for s in changes],
        )
        crash_point("journal-written")
        written: list[Staged] = []
        try:
            self._write_files(changes, written)
            crash_point("files-written")
            outcome.sha = self.ledger.commit(
                [s.path for s in changes],
                subject,
                trailers,
                body,
                contents={s.path: s.commit_data if s.commit_data is not None else s.data for s in changes},
                on_object=journal.committed_as,
            )
        except BaseException as exc:
            kept: list[str] = []
            if journal.commit is None or not self._head_has(journal.commit):
                try:
                    kept = self._restore(written)
                except OSError as error:  # the journal stays: the next writer's recovery puts the files back
                    logging.getLogger("remnic").warning("could not undo a failed write yet: %s", error)
                else:
                    journal.close()
            if kept and isinstance(exc, WriteConflictError):  # say so: not all of it could be undone
                raise WriteConflictError(exc.path, held=exc.held, kept=kept) from None
            raise
        crash_point("committed")
        journal.close()
        lag = self.ledger.index_lag.pop(outcome.sha, None) if outcome.sha else None
        if lag is not None and _UPDATE_INDEX_FAILED in lag and self.ledger.repair_index():
            lag = None  # git refused the index update (a path it would not take so): reset to HEAD now instead
        if lag is not None:
            outcome.warnings.append(lag)
        if self.on_commit is not None and outcome.sha is not None:
            try:
                self.on_commit(outcome, changes)
            except Exception as exc:  # noqa: BLE001 - the write stands; a listener only misses one update
                logging.getLogger("remnic").warning("after commit %s: %s", outcome.sha[:8], exc)
        return outcome

    def _write_files(self, changes: Sequence[Staged], written: list[Staged]) -> None:
        """Put each change on disk, each file only if it still holds its ``before`` (a person's save since
        the read is never overwritten): :class:`WriteConflictError` at the first that does not; ``written``
        collects what was put, for :meth:`_restore`."""
        tmp_dir = self.root / STATE_DIR / "tmp"
        changes = [s for s in changes if not s.on_disk]
        for s in changes:  # checked when staged; again here, just before the renames, for a link made since
            self.files.check_writable_path(s.path)
        for s in changes:  # every file before any rename: a save since the read stops the write with nothing undone
            state = unchanged_unless_held(self.root / s.path, s.before)
            if state != UNCHANGED:
                raise WriteConflictError(s.path, held=state == HELD)
        bulk = len(changes) > BULK_FILES
        new = [s for s in changes if s.data is not None]
        items = [(self.root / s.path, s.data) for s in new if s.data is not None]
        staging = dict(zip((s.path for s in new), stage_files(items, tmp_dir=tmp_dir, durable=not bulk), strict=True))
        try:
            for s in changes:
                state = self._swap(s.path, s.before, staging.get(s.path), tmp_dir)
                if state != REPLACED:
                    raise WriteConflictError(s.path, held=state == HELD)
                written.append(s)
        finally:
            for tmp in staging.values():  # gone once renamed; left only where the write stopped
                tmp.unlink(missing_ok=True)
        if bulk:
            flush_to_disk()
        else:
            fsync_folders([self.root / s.path for s in written])

    def _swap(self, path: str, expected: bytes | None, staging: Path | None, tmp_dir: Path) -> str:
        aside = tmp_dir / f"{os.getpid()}-{secrets.token_hex(4)}.old"  # the old file's second name, briefly
        return replace_unless_held(self.root / path, expected, staging, aside=aside)

    def _restore(self, written: Sequence[Staged]) -> list[str]:
        """Put back the old bytes of each file this transaction wrote, where it still holds what was written:
        a save that landed on it since is the person's, left as it is (as crash recovery does); returns
        those paths, which may hold this write's change under the save."""
        kept: list[str] = []
        tmp_dir = self.root / STATE_DIR / "tmp"
        todo = [s for s in written if not s.on_disk]
        old = [s for s in todo if s.before is not None]
        items = [(self.root / s.path, s.before) for s in old if s.before is not None]
        staging = dict(zip((s.path for s in old), stage_files(items, tmp_dir=tmp_dir), strict=True))
        try:
            for s in reversed(todo):
                full = self.root / s.path
                if full.is_symlink() or self.files.folder_problem(s.path) is not None:
                    continue  # never written by us (only regular files in real folders are): the user's, left alone
                if self._swap(s.path, s.data, staging.get(s.path), tmp_dir) != REPLACED:
                    logging.getLogger("remnic").warning(
                        "%s changed on disk after a failed write put it there; left as it is", s.path
                    )
                    kept.append(s.path)
        finally:
            for tmp in staging.values():
                tmp.unlink(missing_ok=True)
        fsync_folders([self.root / s.path for s in todo])
        return sorted(kept)

    def _head_has(self, sha: str) -> bool:
        head = self.ledger.head()
        return head is not None and self.ledger.is_ancestor(sha, head)


def own_copy(record: MemoryRecord) -> MemoryRecord:
    """The index's own copy of a record: the writer hands the same object back to its caller, who may
    change it (``result.record.frontmatter["tags"].append(...)``) without that reaching the index."""
    return replace(record, frontmatter=_copied(record.frontmatter))


def _copied(value: Any) -> Any:
    # Frontmatter is plain YAML data: only dicts and lists are mutable (cheaper than copy.deepcopy).
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


# --- group commit ---


def _conflict_pause(attempt: int) -> float:
    """Seconds to wait before running a batch again after its ``attempt``-th (0-based) write conflict."""
    return 0.0 if attempt == 0 else min(CONFLICT_PAUSE_S * 2 ** (attempt - 1), CONFLICT_PAUSE_MAX_S)


@dataclass
class PlanOutcome:
    """What one plan did inside a transaction, and how its commit is described."""

    value: Any
    subject: str | None = None  # None: nothing staged (a duplicate, a no-op)
    ids: list[str] = field(default_factory=list)
    namespace: str = "default"
    trailers: dict[str, str] = field(default_factory=dict)


@dataclass
class Plan:
    """A write to run under the lock: ``run`` validates and stages; plans with one ``key`` share commits."""

    key: tuple[str, ...]
    run: Callable[[Transaction], PlanOutcome]


Describe = Callable[[tuple[str, ...], Sequence[PlanOutcome]], tuple[str, dict[str, Any], str | None]]
AfterCommit = Callable[[CommitOutcome], None]
OnCommit = Callable[[CommitOutcome, Sequence[Staged]], None]


class _Waiter:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.wake = threading.Event()  # set when answered, or when this writer is made the next leader
        self.finished = False
        self.lead = False
        self.value: PlanOutcome | None = None
        self.commit: CommitOutcome | None = None
        self.error: BaseException | None = None
        self.answered = False  # its commit or its error is final
        self.conflicts = 0  # write conflicts on files its plan staged
        self.touched: set[str] = set()  # the paths its plan staged, in the latest run


class GroupCommitter:
    """Runs plans under the repository write lock, several of one kind in one commit."""

    def __init__(
        self,
        files: MemoryStore,
        ledger: Ledger,
        describe: Describe,
        after_commit: AfterCommit,
        max_batch: int = 64,
        on_commit: OnCommit | None = None,
    ) -> None:
        self.files = files
        self.ledger = ledger
        self._describe = describe
        self._after_commit = after_commit
        self._on_commit = on_commit  # under the lock, for every transaction handed out (see Transaction)
        self._max_batch = max_batch
        self._mutex = threading.Lock()
        self._queue: list[_Waiter] = []
        self._leading = False
        self._exclusive = threading.RLock()  # held by the leader's batch and by exclusive() users
        self._local = threading.local()

    def submit(self, plan: Plan) -> tuple[PlanOutcome, CommitOutcome]:
        """Run ``plan`` (maybe beside others of its kind); returns after its commit is durable."""
        if getattr(self._local, "in_plan", False):
            raise RuntimeError("a write plan cannot submit another write; stage it in the same transaction")
        me = _Waiter(plan)
        with self._mutex:
            self._queue.append(me)
            if not self._leading:
                self._leading = True
                me.lead = True
        if not me.lead:
            me.wake.wait()
        if not me.finished:
            self._lead(me)
        if me.error is not None:
            raise me.error
        assert me.value is not None and me.commit is not None
        return me.value, me.commit

    def _lead(self, me: _Waiter) -> None:
        """Process batches until my own plan is answered, then hand leadership to the next waiter."""
        while not me.finished:
            with self._mutex:
                first = self._queue[0]
                batch = [w for w in self._queue if w.plan.key == first.plan.key][: self._max_batch]
                for w in batch:
                    self._queue.remove(w)
            self._run_batch(batch)
        with self._mutex:
            if self._queue:
                nxt = self._queue[0]
                nxt.lead = True
                nxt.wake.set()
            else:
                self._leading = False

    def _run_batch(self, batch: list[_Waiter]) -> None:
        outcomes: list[CommitOutcome] = []
        try:
            with self._exclusive, self.files.lock():
                self.prepare()
                groups = [batch]
                while groups:
                    outcome = self._commit_group(groups.pop(0), groups)
                    if outcome is not None:
                        outcomes.append(outcome)
        except BaseException as exc:  # noqa: BLE001 - every writer of the batch not yet answered hears it
            for w in batch:
                if not w.answered and w.error is None:
                    w.value, w.commit, w.error = None, None, exc
        for outcome in outcomes:
            if outcome.upserts or outcome.removed:
                self._after_commit(outcome)
        for w in batch:
            w.finished = True
            w.wake.set()

    def _commit_group(self, group: list[_Waiter], later: list[list[_Waiter]]) -> CommitOutcome | None:
        """Commit ``group``'s plans in one transaction. On a write conflict only the plans that staged the
        file run again (a file that keeps changing, or held open, must not refuse the batch's other
        writers): the others commit at once without them, and they follow in ``later``, retried on the new
        text until their retries run out and they hear the conflict."""
        while True:
            try:
                outcome = self._attempt(group)
            except WriteConflictError as exc:
                paths = {exc.path, *exc.kept}
                culprits = [w for w in group if w.touched & paths] or list(group)
                rest = [w for w in group if w not in culprits]
                for w in culprits:
                    w.conflicts += 1
                tries = max(w.conflicts for w in culprits)
                # a file left holding part of the write under a person's save is never written over again
                if exc.kept or tries > (WRITE_HELD_RETRIES if exc.held else WRITE_CONFLICT_RETRIES):
                    for w in culprits:
                        w.value, w.commit, w.error, w.answered = None, None, exc, True
                elif rest:
                    later.insert(0, culprits)  # after the others, which commit first
                else:
                    time.sleep(_conflict_pause(tries - 1))
                    continue
                if not rest:
                    return None
                group = rest
                continue
            for w in group:
                w.answered = True
            return outcome

    def _attempt(self, batch: list[_Waiter]) -> CommitOutcome:
        """Run the batch's plans in a new transaction and commit what they staged."""
        for w in batch:  # a run again answers afresh
            w.value, w.error, w.commit = None, None, None
        tx = Transaction(self.files, self.ledger, self._on_commit)
        ran = self._run_plans(tx, batch)
        described = [w.value for w in ran if w.value is not None and w.value.subject]
        if described:
            subject, trailers, body = self._describe(batch[0].plan.key, described)
            outcome = tx.commit(subject, trailers, body)
        else:
            outcome = CommitOutcome(None)
        for w in ran:
            w.commit = outcome
        return outcome

    def _run_plans(self, tx: Transaction, batch: list[_Waiter]) -> list[_Waiter]:
        """Run each plan in ``tx``, in order; a plan that raises is undone (its staged files and index
        entries) and answered with its error. Plans see what earlier ones staged through the transaction's
        reads, so the batch commits what running them one after another would."""
        ran: list[_Waiter] = []
        for w in batch:
            mark = tx.mark()
            self._local.in_plan = True
            w.touched = set()
            try:
                w.value = w.plan.run(tx)
                ran.append(w)
                w.touched = {p for p, staged in tx.staged.items() if mark.staged.get(p) is not staged}
            except BaseException as exc:  # noqa: BLE001 - answered to its own writer
                tx.rollback(mark)
                w.error = exc
            finally:
                self._local.in_plan = False
        return ran

    @contextmanager
    def exclusive(self) -> Iterator[Transaction]:
        """The write lock and a transaction for a caller that commits itself (sync, revert, init)."""
        with self._exclusive, self.files.lock():
            self.prepare()
            yield Transaction(self.files, self.ledger, self._on_commit)

    def prepare(self) -> None:
        """Under the lock, before any write: finish or undo a crashed writer's work, sweep its litter."""
        root: Path = self.files.root
        state = root / STATE_DIR
        said = unusable_folder(state / "tmp", "the temporary files of its writes")
        if said is not None:  # every write stages its files there: refused with one line, not a traceback
            raise StateDirError(said)
        recover(state, root, self.ledger)
        self.ledger.repair_index()
        sweep_litter(state / "tmp")
