"""``run_sync``: bring the index and git in step with the memory files on disk.

One run, all under the repository write lock:

1. find candidates: what changed between the commit sync last reconciled (which
   remnic's own commits move along) and HEAD, what ``git status`` reports
   (uncommitted, untracked; git-ignored files never appear), and the paths the
   last run left pending; what changed since the commit the index records only
   to re-index; a full listing when no usable base commit is known;
2. read each file until it is stable, validate it; a malformed one is reported
   (path, line, field), left byte-for-byte untouched, uncommitted and out of the
   index;
3. pair deletions with additions (same id, or same content) as renames;
4. normalise frontmatter where needed (id and defaults for a file without an
   id, ``updated``/``contentHash`` after a body edit, ``category`` after a folder
   move), never the body, nor a file first seen with an id (:mod:`remnic.memfile.normalize`);
5. commit the edits it processed as one sync commit (only those paths), unless
   told not to or git is mid-merge/rebase or on a detached HEAD; the state says
   "index step due" first, so a run killed before its index step is done (its own
   commit already moved the sync base, see :mod:`.base`) has the next one catch up;
6. update the index incrementally and record the new state: the commit the run
   reconciled, which is HEAD as it found it or its own commit, even on top of a commit
   another program made meanwhile; that commit's other paths stay pending (:mod:`.base`).

Files that are not memories (outside the memory folders, README-like, attachments) are reported as
skipped with their reason and never touched. A dry run does steps 1-4 and writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remnic.config import STATE_DIR, Settings
from remnic.errors import MemoryFormatError, RemnicError
from remnic.memfile.model import MemoryRecord, new_id, now_iso
from remnic.memfile.normalize import BOM, Checked, planned_changes, render
from remnic.memfile.paths import MemoryPaths
from remnic.repo.files import MemoryStore
from remnic.repo.ledger import Ledger
from remnic.repo.messages import trailers_for
from remnic.repo.transaction import Transaction

from .base import reconciled_commit, since_changes
from .bodies import BodyCheck
from .held import HELD_REASON
from .indexing import caught_up_note, index_commit_of, index_health_of, indexed_paths, update_index
from .lag import lagging_in_step
from .moves import MalformedMoves, deletion_changes, find_moves, held_reason
from .pending import next_pending
from .reading import read_all
from .renames import (
    OldFile,
    committed_record,
    holder_of,
    kept_keys,
    kept_note,
    moved_category,
    old_info,
    pair_renames,
    with_kept,
)
from .report import ADDED, DELETED, MODIFIED, RENAMED, Change, SyncReport, commit_subject, event_line
from .state import SyncState, digest, replace_if_unchanged
from .times import file_times

PAUSED = "paused"
READ_BAR_FROM = 500
"""A read of this many candidates shows progress (a full pass always does): a few edits stay silent."""
REINDEX = "reindex"  # a candidate only because the index lags: indexed, never reported
__all__ = ["PAUSED", "Change", "SyncReport", "SyncTarget", "event_line", "indexed_paths", "run_sync"]


@dataclass
class SyncTarget:
    """What a sync works on: one memory directory's parts, handed over by the service."""

    root: Path
    files: MemoryStore
    ledger: Ledger
    settings: Settings
    index: Callable[[], Any]
    """Returns the search index (built lazily), or None when it can't be used."""


def run_sync(
    target: SyncTarget,
    tx: Transaction,
    *,
    commit: bool | None = None,
    normalize: bool = True,
    full: bool = False,
    source: str = "sync",
    normalize_all: bool = False,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    read_progress: Callable[[int, int], None] | None = None,
) -> SyncReport:
    """Bring index and git in step with the files; see the module docstring.

    ``normalize=False`` writes nothing into files; ``normalize_all`` gives every memory file the
    defaults it lacks and brings tiers and hashes in step (a full pass); ``dry_run`` changes
    nothing and reports what would change. The caller holds the write lock and hands over the
    transaction the commit goes through. ``progress`` hears (done, total) as the index is written;
    ``read_progress`` as files are read and checked, on a full pass or a large batch only.
    """
    started = time.perf_counter()
    want_commit = target.settings.sync.commit if commit is None else commit
    run = _Run(target, tx, want_commit=want_commit, normalize=normalize, source=source)
    run.normalize_all, run.dry_run, run.progress = normalize_all, dry_run, progress
    run.read_progress = read_progress
    report = run.run(full or normalize_all)
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


class _Run:
    """One sync run's working state (so each step reads as a short method)."""

    def __init__(self, target: SyncTarget, tx: Transaction, *, want_commit: bool, normalize: bool, source: str) -> None:
        self.target, self.root, self.ledger, self.settings = target, target.root, target.ledger, target.settings
        self.tx = tx
        self.files = target.files
        self.want_commit, self.normalize, self.source = want_commit, normalize, source
        self.progress: Callable[[int, int], None] | None = None
        self.read_progress: Callable[[int, int], None] | None = None
        self._mark = time.perf_counter()
        self.state = SyncState.load(self.root)
        self.status: dict[str, str] = {}
        self.diff_letter: dict[str, str] = {}
        self.candidates: dict[str, str] = {}
        self.unstable: set[str] = set()
        self.malformed: dict[str, str] = {}
        self.checked_bytes: dict[str, bytes] = {}  # path → the exact bytes checked (or written), what gets committed
        self.empty: dict[str, str] = {}
        self.unnormalised: set[str] = set()
        self.paths = MemoryPaths.from_store(self.settings.store)
        self.not_memories: dict[str, str] = {}  # candidate path → why it is not a memory
        self.kept: dict[str, dict[str, Any]] = {}  # path → committed keys it lost with its id
        self.bases: list[str] = []
        self.head: str | None = None  # HEAD when the run began: every comparison is with this sha
        self.since: dict[str, str] = {}  # path → the commit it is compared with: one a foreign commit changed
        self.foreign: set[str] = set()  # memory paths a commit landing mid-run changed that this run did not commit
        self.normalize_all = False
        self.dry_run = False
        self.warnings: list[str] = []
        self.moves = MalformedMoves()
        self.as_is = 0  # memory files a full pass takes as they are (valid, nothing to write or commit)

    # --- where a path stands ---

    def in_head(self, path: str) -> bool:
        xy = self.status.get(path)
        if xy is None:
            return (self.root / path).exists()
        return xy != "??" and xy[0] not in ("A", "R", "C")

    def is_new(self, path: str) -> bool:
        return not self.in_head(path) or self.diff_letter.get(path) == "A"

    # --- the run ---

    def run(self, full: bool) -> SyncReport:
        ledger, state = self.ledger, self.state
        head = self.head = ledger.head()
        underway = ledger.in_progress()
        if underway is not None and underway != "a bisect is in progress":
            # Files mid-merge hold either side or conflict markers: nothing is read, indexed or
            # committed until the merge is finished (`remnic space pull`) or aborted.
            report = SyncReport(PAUSED, state.commit, head, dry_run=self.dry_run)
            report.not_committed = f"{underway}; sync is paused until it is finished or aborted"
            return report
        status_rows = ledger.status_porcelain()
        for xy, path, orig in status_rows:
            self.status[path] = xy
            if orig:
                self.status[orig] = "D "
        for path in lagging_in_step(self.root, ledger, set(self.status)):
            del self.status[path]  # git's index lags (index.lock was held); the file is what HEAD has
        rules = repr(self.paths)
        full = full or state.rules != rules  # the rule for memories changed (or is new): look at every file
        if (
            not full
            and head is not None
            and head == state.commit
            and not state.pending
            and not state.index_behind
            and not any(self.paths.is_memory(p) for p in self.status)
        ):
            return SyncReport("noop", state.commit, head)  # the common case: one `git status`, no index opened

        index = self.target.index()
        health = index_health_of(index)
        index_ok, index_commit = index_commit_of(health)
        # The previous run committed but never finished its index step (killed, or it failed): say so
        # once this run has caught the index up (not when a recall did meanwhile).
        left_behind = state.index_behind and (index_commit != state.commit or (health or {}).get("state") != "ok")
        bases = [c for c in dict.fromkeys([state.commit, index_commit]) if c and ledger.commit_exists(c)]
        full = full or not bases or (index_ok and index_commit is None)
        report = SyncReport("full" if full else "incremental", state.commit, head, dry_run=self.dry_run)
        self.bases = bases
        self.collect(full, bases, head)
        self.report_skipped(report, full)
        self.phase(report, "find")
        if not full and not self.candidates and head == state.commit == index_commit:
            if state.index_behind:  # caught up meanwhile (a recall, a rebuild)
                state.index_behind = False
                state.save(self.root)
            report.mode = "noop"
            return report
        busy = self.ledger.busy_reason(status_rows) if self.want_commit else "--no-commit"
        if busy is not None:
            busy += "; edits are indexed but not committed"
        can_commit = busy is None

        reads = read_all(
            self.root,
            sorted(self.candidates),
            state.pending,
            self.status,
            self.settings.store,
            report,
            skip_unchanged=not can_commit,
            progress=self.read_progress if full or len(self.candidates) >= READ_BAR_FROM else None,
        )
        valid, deleted, dropped, quiet = reads.valid, reads.deleted, reads.dropped, reads.quiet
        self.unstable, self.malformed, self.empty = reads.unstable, reads.malformed, reads.empty
        old = {p: old_info(self.ledger, p, state.pending.get(p), (head, *bases, self.since.get(p))) for p in deleted}
        partner_of, forced_id = pair_renames(valid, old, self.is_new)
        self.keep_committed_ids(valid, partner_of, forced_id, (head, *bases))
        notes = self.dedupe_ids(valid, old, forced_id, index if index_ok else None)
        records, written, record_sha = self.normalize_files(valid, forced_id, partner_of, quiet, report)

        changes = self.describe_changes(records, written, quiet, partner_of, notes)
        report.as_is = self.as_is
        self.phase(report, "read")
        renamed_from = {c.previous_path for c in changes if c.previous_path}
        # A moved file saved again while sync wrote it waits for the next run, and so does its old path's
        # deletion: committed alone, HEAD would lose the note and git its rename.
        renamed_from |= {partner_of[p] for p in self.unstable if p in partner_of}
        changes += self.deletions(deleted, old, renamed_from, reads.unsynced_data, report)

        if self.dry_run:  # what a real run would do; nothing written, committed, indexed or remembered
            report.changes, report.index = changes, "unchanged"
            return report
        commit_paths = self.commit_paths(changes)
        if commit_paths and not can_commit:
            report.not_committed = busy
        if commit_paths and can_commit:
            if not state.index_behind:  # "index step due" until it is done (kept by follow_own_commit)
                state.index_behind = True
                state.save(self.root)
            report.commit = self.commit(commit_paths, changes, records)
            report.warnings = self.warnings
        new_head, self.foreign = reconciled_commit(
            ledger, head, ledger.head(), report.commit, set(commit_paths), self.paths.is_memory
        )
        # Paths a foreign commit changed that this run never read: a recall's catch-up must still diff them.
        index_head = head if self.foreign else new_head
        self.phase(report, "commit")

        removed = set(deleted) | set(dropped)
        # A quiet file was indexed by the run that left it uncommitted; a full pass may be over a fresh index.
        upserts = [r for r in records if full or r.path not in quiet]
        if index_ok:
            held = indexed_paths(index) if dropped or full else set()
            if full:  # whatever the index holds that is no longer a live, valid file goes too
                removed |= held - {r.path for r in records} - set(self.unstable)
            removed -= set(dropped) - held  # a malformed file never indexed is not "removed" by every run
            if upserts or removed or index_head != index_commit:
                batch = (upserts, sorted(removed), index_head)
                report.index, report.index_error = update_index(
                    self.target, index, batch, self.progress, committed=report.commit, full=full
                )
            if left_behind and report.index == "updated":
                report.index_note = caught_up_note(health, index_head)
        else:
            report.index = "unavailable"
        report.indexed, report.removed = len(upserts), len(removed)
        self.phase(report, "index")

        committed = set(commit_paths) if report.commit else set()
        for c in changes:
            c.committed = bool(report.commit) and (c.path in committed or (c.previous_path or "") in committed)
            if c.committed and c.path in self.moves.renamed:
                report.moved_problems[c.path] = self.moves.renamed[c.path]
        pending = next_pending(self, records, written, record_sha, deleted, old, committed)
        state.commit, state.pending = new_head, pending
        state.skipped = {**(state.skipped if not full else {}), **self.not_memories}
        state.rules = rules
        state.index_behind = report.index == "behind"
        state.save(self.root)
        report.head, report.changes, report.pending = new_head, changes, sorted(pending)
        return report

    def phase(self, report: SyncReport, name: str) -> None:
        now = time.perf_counter()
        report.phases_ms[name] = (now - self._mark) * 1000
        self._mark = now

    def collect(self, full: bool, bases: list[str], head: str | None) -> None:
        candidates = self.candidates
        reindex: set[str] = set()
        if full:
            for path in sorted(set(self.ledger.worktree_files())):
                candidates[path] = "scan"
        else:
            # The first base is what sync reconciled: changes since are edits to report. The index's
            # commit may lag behind it (one-shot writes leave the index to a recall): what changed since
            # then is re-indexed only, and says nothing about which files are new.
            for n, base in enumerate(bases):
                if not head or base == head:
                    continue
                for letter, path, old in self.ledger.diff_names(base, head):
                    if n:
                        reindex.update(p for p in (path, old) if p)
                        continue
                    candidates[path] = "git"
                    self.diff_letter[path] = "A" if letter in ("R", "C") else letter
                    if old and letter == "R":
                        candidates[old] = "git"
                        self.diff_letter[old] = "D"
        for path in self.status:
            candidates[path] = "working-tree"
        self.collect_since(candidates, head)
        for path in self.state.pending:
            candidates.setdefault(path, "pending")
        for path in reindex:
            candidates.setdefault(path, REINDEX)
        self.candidates = {}
        for path, origin in candidates.items():
            if self.paths.is_memory(path):
                self.candidates[path] = origin
            elif (reason := self.files.not_memory_reason(path)) and (self.root / path).exists():
                self.not_memories[path] = reason

    def collect_since(self, candidates: dict[str, str], head: str | None) -> None:
        """Paths an earlier run left pending with ``since``: see :func:`.base.since_changes`."""
        self.since, letters = since_changes(self.ledger, self.state.pending, head)
        for path, letter in letters.items():
            candidates.setdefault(path, "git")  # an edit since in the working tree stays one
            self.diff_letter[path] = letter  # from `since`: an add there is an add, whatever came after
        for path in self.since:
            candidates.setdefault(path, REINDEX)  # changed back since: read again, nothing to report

    def report_skipped(self, report: SyncReport, full: bool) -> None:
        """Files that are not memories, each with its reason: all of them on a full pass, else the ones
        not reported before (so a watcher does not repeat them on every save)."""
        self.not_memories.update(self.files.blocked_folders())
        for path, reason in sorted(self.not_memories.items()):
            if full or self.dry_run or self.state.skipped.get(path) != reason:
                report.skipped.append({"path": path, "reason": reason})

    def keep_committed_ids(
        self,
        valid: list[tuple[str, bytes, Checked]],
        partner_of: dict[str, str],
        forced_id: dict[str, str],
        refs: tuple[str | None, ...],
    ) -> None:
        """An edited file that lost its ``id`` line gets back the id its committed version had (HEAD's, else the
        sync base's; a moved one its old path's) and the other keys it lost (:func:`kept_keys`): one ``git show`` each."""
        for path, _data, checked in valid:
            record = checked.record
            if record is None or "id" in record.frontmatter:
                continue
            edited = path in self.status or self.diff_letter.get(path) == "M"
            if path in partner_of or (path not in forced_id and not self.is_new(path) and edited):
                # Its committed version (a moved file's at its old path) holds its id and the rest of its state.
                kept = committed_record(self.ledger, partner_of.get(path, path), refs)
                if kept:
                    forced_id.setdefault(path, kept.id)
                    self.kept[path] = kept_keys(record.frontmatter, kept.frontmatter)

    def dedupe_ids(
        self, valid: list[tuple[str, bytes, Checked]], old: dict[str, OldFile], forced_id: dict[str, str], index: Any
    ) -> dict[str, str]:
        """A copied file keeps its id only if no other live file has it; returns notes per path."""
        notes: dict[str, str] = {}
        claimed: dict[str, str] = {}
        for path, _data, checked in sorted(valid, key=lambda v: (self.is_new(v[0]), v[0])):
            record = checked.record
            assert record is not None
            rid = forced_id.get(path, record.id)
            holder = claimed.get(rid)
            if holder is None and (index is not None or (record.has_id and self.is_new(path))):
                other = holder_of(self.ledger, self.paths, rid, path, index)
                if other and other != path and other not in old and other not in self.candidates:
                    try:
                        holder = other if self.files.read(other).id == rid else None
                    except (RemnicError, MemoryFormatError):
                        holder = None
            if holder is not None and holder != path and self.normalize:
                fresh = new_id()
                forced_id[path] = fresh
                notes[path] = f"id {rid} is also used by {holder}; this copy got a new id"
                rid = fresh
            claimed[rid] = path
        return notes

    def normalize_files(
        self,
        valid: list[tuple[str, bytes, Checked]],
        forced_id: dict[str, str],
        partner_of: dict[str, str],
        quiet: set[str],
        report: SyncReport,
    ) -> tuple[list[MemoryRecord], dict[str, list[str]], dict[str, str]]:
        """Write the frontmatter each file needs; (records, path → keys written, path → sha of the bytes)."""
        now = now_iso()
        records: list[MemoryRecord] = []
        written: dict[str, list[str]] = {}
        record_sha: dict[str, str] = {}
        # Files that get default times: new ones (no id) and, under --normalize, any missing a time
        # key — from git's history or the mtime as for a new one, never the moment of this sync.
        adopting = [
            path
            for path, _data, checked in valid
            if checked.record
            and (
                "id" not in checked.record.frontmatter
                or (self.normalize_all and not {"created", "updated"} <= set(checked.record.frontmatter))
            )
        ]
        times = file_times(self.root, self.ledger, adopting, set(self.status)) if self.normalize else {}
        rendered: dict[str, tuple[list[str], str, dict[str, Any]]] = {}
        bodies = BodyCheck(self.ledger, self.head, self.status, self.bases, self.is_new, self.since)
        bodies.load((p, c.record, partner_of.get(p)) for p, _d, c in valid if p not in quiet and c.record)
        for path, _data, checked in valid:
            kept = self.kept.get(path, {})
            checked = with_kept(checked, kept) if kept else checked  # planned as if the keys were still there
            record = checked.record
            assert record is not None
            plan = kept | planned_changes(
                checked,
                now=now,
                store=self.settings.store,
                stamp_edits=self.settings.sync.stamp_edits,
                memory_id=forced_id.get(path),
                body_changed=False if path in quiet else bodies.changed(path, record, partner_of.get(path)),
                times=times.get(path),
                category=moved_category(record, partner_of.get(path)),
                normalize_all=self.normalize_all,
            )
            if plan and not self.normalize:
                self.unnormalised.add(path)  # the next normalising sync must come back to it
            elif plan and self.dry_run:
                written[path] = list(plan)
            elif plan:
                rendered[path] = (list(plan), *render(checked, plan))
        held: set[Path] = set()
        replaced = replace_if_unchanged(
            [(self.root / p, d, rendered[p][1]) for p, d, _c in valid if p in rendered],
            self.root / STATE_DIR / "tmp",
            held,
        )
        for path, data, checked in valid:
            record = checked.record
            assert record is not None
            if path in rendered:
                keys, text, meta = rendered[path]
                if self.root / path not in replaced:
                    reason = HELD_REASON if self.root / path in held else "changed while syncing; will retry"
                    report.skipped.append({"path": path, "reason": reason})
                    report.held += [path] if self.root / path in held else []
                    self.unstable.add(path)
                    continue
                # The BOM of a body-only file goes before the new frontmatter: the body read back (get,
                # reindex) no longer starts with it, so neither does what is indexed.
                record = MemoryRecord(path, meta, record.body.removeprefix(BOM), record.namespace)
                data = text.encode("utf-8")
                written[path] = keys
            elif self.dry_run and path in forced_id:  # as the real run names it: the id git had
                record = MemoryRecord(
                    path,
                    {**self.kept.get(path, {}), **record.frontmatter, "id": forced_id[path]},
                    record.body,
                    record.namespace,
                )
            records.append(record)
            record_sha[path] = digest(data)
            self.checked_bytes[path] = data
        return records, written, record_sha

    def describe_changes(
        self,
        records: list[MemoryRecord],
        written: dict[str, list[str]],
        quiet: set[str],
        partner_of: dict[str, str],
        notes: dict[str, str],
    ) -> list[Change]:
        changes: list[Change] = []
        for record in records:
            path = record.path
            if path in quiet or (
                self.candidates[path] in ("scan", REINDEX) and path not in self.status and path not in written
            ):
                self.as_is += self.candidates[path] == "scan" and path not in quiet | self.unnormalised
                continue
            change = Change(
                ADDED if self.is_new(path) else MODIFIED,
                path,
                record.id,
                normalized=written.get(path, []),
                note="; ".join(filter(None, (kept_note(self.kept.get(path, {})), notes.get(path)))) or None,
                kept=[k for k, v in self.kept.get(path, {}).items() if record.frontmatter.get(k) == v],
                origin="working-tree" if path in self.status else "git",
            )
            if path in partner_of:
                change.kind, change.previous_path = RENAMED, partner_of[path]
            changes.append(change)
        return changes

    def deletions(
        self,
        deleted: list[str],
        old: dict[str, OldFile],
        renamed_from: set[str],
        unsynced: dict[str, bytes],
        report: SyncReport,
    ) -> list[Change]:
        """The deleted paths as changes; one whose note reappears at a new path where sync cannot take it
        (malformed, empty) is a pure rename or held (:mod:`.moves`), so a note you committed never leaves
        git because it could not be read."""
        gone = [p for p in deleted if p not in renamed_from and p in self.status and self.in_head(p)]
        arrived = {p: d for p, d in unsynced.items() if not self.in_head(p)}
        sha, pending = {**self.malformed, **self.empty}, self.state.pending
        # New or changed since the last run, or already taken for a moved note then (it stays that).
        fresh = {p for p in arrived if (pending.get(p) or {}).get("sha") != sha.get(p)}
        fresh |= {str(e["heldFor"]) for e in pending.values() if e.get("heldFor") in arrived}
        # Held for a file being written (or fixed, and saved again while sync wrote it): still held.
        waiting = {p: str(e["heldFor"]) for p, e in pending.items() if e.get("heldFor") in self.unstable}
        empty = set(self.empty)
        self.moves = find_moves(
            self.ledger, self.head, gone, arrived, self.settings.store, empty=empty, fresh=fresh, waiting=waiting
        )
        self.checked_bytes.update(self.moves.data)
        for path, new in sorted(self.moves.held.items()):
            report.skipped.append({"path": path, "reason": held_reason(new, new in empty)})
            if (pending.get(path) or {}).get("heldFor") == new:
                report.repeated_skips.append(path)
        return deletion_changes(
            deleted,
            self.moves,
            renamed_from=renamed_from,
            old_id=lambda p: old[p].id,
            status=self.status,
            diff_letter=self.diff_letter,
            pending=pending,
        )

    def commit_paths(self, changes: list[Change]) -> list[str]:
        paths: list[str] = []
        for c in changes:
            if c.origin != "working-tree" and not c.normalized:
                continue
            if c.kind != DELETED:
                paths.append(c.path)
            gone = c.previous_path or (c.path if c.kind == DELETED else None)
            if gone and gone in self.status:
                paths.append(gone)
        return paths

    def commit(self, paths: list[str], changes: list[Change], records: list[MemoryRecord]) -> str | None:
        committing = [c for c in changes if c.path in paths or c.previous_path in paths]
        ids = [c.id for c in committing if c.id]
        namespaces = sorted({r.namespace for r in records if r.path in paths}) or [self.settings.namespaces.default]
        # Commit the bytes that were checked (or written by normalisation), never whatever is on disk
        # by the time git runs: a save landing meanwhile is left for the next sync.
        gone = {c.previous_path or c.path for c in committing if c.kind in (DELETED, RENAMED)} - {
            c.path for c in committing if c.kind != DELETED
        }
        for path in paths:
            data = None if path in gone else self.checked_bytes.get(path)
            if data is None and path not in gone:
                full = self.root / path
                data = full.read_bytes() if full.is_file() and not full.is_symlink() else None
            if data is None:
                self.tx.remove(path, on_disk=True)
            else:
                self.tx.put(path, data, on_disk=True)
        outcome = self.tx.commit(
            commit_subject(committing or changes),
            trailers_for("sync", ids, ",".join(namespaces), self.source),
            body="\n".join(c.describe() for c in committing),
        )
        self.warnings += outcome.warnings  # git's index could not follow: the watcher must say so too
        return outcome.sha
