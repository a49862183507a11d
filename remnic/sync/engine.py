"""``run_sync``: bring the index and git in step with the memory files on disk.

One run, all under the repository write lock:

1. find candidates: what changed between the commit sync last reconciled (and
   the commit the index records) and HEAD, what ``git status`` reports
   (uncommitted, untracked; git-ignored files never appear), and the paths the
   last run left pending; a full listing when no usable base commit is known;
2. read each file until it is stable, validate it; a malformed one is reported
   (path, line, field), left byte-for-byte untouched, uncommitted and out of the
   index;
3. pair deletions with additions (same id, or same content) as renames;
4. normalise frontmatter where needed (id and defaults for a body-only file,
   ``updated``/``contentHash`` after a body edit), never touching the body;
5. commit the edits it processed as one sync commit (only those paths), unless
   told not to or git is mid-merge/rebase or on a detached HEAD;
6. update the index incrementally and record the new state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remnic.config import STATE_DIR, Settings
from remnic.errors import FieldProblem, MemoryFormatError, RemnicError
from remnic.fsio import NotRegularFile
from remnic.memfile.model import MemoryRecord, content_hash, is_memory_path, new_id, now_iso, parse_file
from remnic.memfile.normalize import Checked, check_bytes, planned_changes, render
from remnic.repo.files import MemoryStore
from remnic.repo.ledger import Ledger
from remnic.repo.messages import trailers_for
from remnic.repo.transaction import Transaction

from .state import SyncState, Unstable, digest, read_stable_many, replace_if_unchanged

ADDED, MODIFIED, DELETED, RENAMED = "added", "modified", "deleted", "renamed"
_LETTER = {ADDED: "A", MODIFIED: "M", DELETED: "D", RENAMED: "R"}
_VERB = {ADDED: "add", MODIFIED: "edit", DELETED: "delete", RENAMED: "rename"}


@dataclass
class Change:
    """One memory file that changed, as sync saw and handled it."""

    kind: str
    path: str
    id: str | None = None
    previous_path: str | None = None
    normalized: list[str] = field(default_factory=list)
    origin: str = "working-tree"
    """``working-tree`` (an uncommitted edit) or ``git`` (already committed: plain git, a pull, a checkout)."""
    committed: bool = False
    note: str | None = None

    @property
    def letter(self) -> str:
        return _LETTER[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return {
            "change": self.kind,
            "path": self.path,
            "previousPath": self.previous_path,
            "id": self.id,
            "normalized": self.normalized,
            "origin": self.origin,
            "committed": self.committed,
            "note": self.note,
        }

    def describe(self, commit: str | None = None) -> str:
        """One line: ``M facts/a.md  mem_x  (normalised updated, contentHash)  -> 1a2b3c4d``."""
        where = f"{self.previous_path} -> {self.path}" if self.previous_path else self.path
        parts = [f"{self.letter} {where}"]
        if self.id:
            parts.append(self.id)
        extra = []
        if self.normalized:
            extra.append(
                "added frontmatter" if len(self.normalized) > 4 else "normalised " + ", ".join(self.normalized)
            )
        if self.origin == "git":
            extra.append("already in git")
        if self.note:
            extra.append(self.note)
        if extra:
            parts.append("(" + "; ".join(extra) + ")")
        if commit and self.committed:
            parts.append(f"-> {commit[:8]}")
        return "  ".join(parts)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Change:
        return cls(
            data["change"],
            data["path"],
            data.get("id"),
            data.get("previousPath"),
            list(data.get("normalized") or []),
            data.get("origin", "working-tree"),
            bool(data.get("committed")),
            data.get("note"),
        )


@dataclass
class SyncReport:
    mode: str
    """``incremental`` (diffed from a known commit), ``full`` (every file listed) or ``noop``."""
    base: str | None
    head: str | None
    changes: list[Change] = field(default_factory=list)
    problems: list[FieldProblem] = field(default_factory=list)
    new_problem_paths: list[str] = field(default_factory=list)
    """Malformed paths whose bytes changed since the last run (what a watcher prints)."""
    skipped: list[dict[str, str]] = field(default_factory=list)
    commit: str | None = None
    not_committed: str | None = None
    """Why processed edits were left uncommitted (``--no-commit``, a rebase in progress, ...)."""
    pending: list[str] = field(default_factory=list)
    indexed: int = 0
    removed: int = 0
    index: str = "unchanged"
    elapsed_ms: float = 0.0

    @property
    def malformed_paths(self) -> list[str]:
        return sorted({p.path for p in self.problems if p.path})

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "base": self.base,
            "head": self.head,
            "commit": self.commit,
            "changes": [c.to_dict() for c in self.changes],
            "problems": [p.to_dict() for p in self.problems],
            "malformed": self.malformed_paths,
            "skipped": self.skipped,
            "notCommitted": self.not_committed,
            "pending": self.pending,
            "indexed": self.indexed,
            "removedFromIndex": self.removed,
            "index": self.index,
            "elapsedMs": round(self.elapsed_ms, 1),
        }

    def events(self, *, only_new_problems: bool = False) -> list[dict[str, Any]]:
        """The report as JSON-able events: one per change, problem, skipped file, plus a note."""
        events: list[dict[str, Any]] = []
        for change in self.changes:
            events.append({"event": "change", **change.to_dict(), "commit": self.commit if change.committed else None})
        for problem in self.problems:
            if not only_new_problems or problem.path in self.new_problem_paths:
                events.append({"event": "problem", **problem.to_dict()})
        for skipped in self.skipped:
            events.append({"event": "skipped", **skipped})
        if self.not_committed and self.changes:
            events.append({"event": "note", "message": self.not_committed})
        return events

    def lines(self) -> list[str]:
        """One line per change, problem and skipped file (what `sync run` and the watcher print)."""
        return [line for line in map(event_line, self.events()) if line]


def event_line(event: dict[str, Any]) -> str | None:
    """The line of text for one report event (None: nothing to print)."""
    kind = event.get("event")
    if kind == "change":
        return Change.from_dict(event).describe(event.get("commit"))
    if kind == "problem":
        where = event.get("path", "") + (f":{event['line']}" if event.get("line") else "")
        field_ = f"{event['field']}: " if event.get("field") else ""
        options = f" (valid options: {', '.join(event['options'])})" if event.get("options") else ""
        return f"! {where}: {field_}{event['message']}{options} (left untouched, not indexed, not committed)"
    if kind == "skipped":
        return f"~ {event['path']}: {event['reason']}"
    if kind == "note":
        return f"note: {event['message']}"
    return None


@dataclass
class SyncTarget:
    """What a sync works on: one memory directory's parts, handed over by the service."""

    root: Path
    files: MemoryStore
    ledger: Ledger
    settings: Settings
    index: Callable[[], Any]
    """Returns the search index (built lazily), or None when it can't be used."""


def _index_commit(index: Any) -> tuple[bool, str | None]:
    """(index usable, the commit it records)."""
    if index is None:
        return False, None
    try:
        health = index.health().to_dict()
    except ImportError:
        return False, None
    return True, health.get("commit")


def indexed_paths(index: Any) -> set[str]:
    try:
        with index.lock:
            return set(index.view()[2].all_paths())
    except Exception:  # noqa: BLE001 - no usable index yet: nothing in it to remove
        return set()


@dataclass
class _Old:
    id: str | None
    hash: str | None
    explicit_id: bool = False


def _old_info(ledger: Ledger, path: str, pending: dict[str, Any] | None, refs: Iterable[str | None]) -> _Old:
    if pending and pending.get("id"):
        return _Old(pending.get("id"), pending.get("hash"), bool(pending.get("explicitId")))
    for ref in refs:
        if not ref:
            continue
        try:
            record = parse_file(ledger.show(ref, path), path)
        except (RemnicError, MemoryFormatError):
            continue
        return _Old(record.id, content_hash(record.content), record.has_id)
    return _Old(None, None)


def _subject(changes: list[Change]) -> str:
    if len(changes) == 1:
        c = changes[0]
        where = f"{c.previous_path} -> {c.path}" if c.previous_path else c.path
        return f"remnic sync: {_VERB[c.kind]} {where}"
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    parts = [f"{counts[k]} {k}" for k in (MODIFIED, ADDED, RENAMED, DELETED) if k in counts]
    return f"remnic sync: {len(changes)} hand edits ({', '.join(parts)})"


def run_sync(
    target: SyncTarget,
    tx: Transaction,
    *,
    commit: bool | None = None,
    normalize: bool = True,
    full: bool = False,
    source: str = "sync",
) -> SyncReport:
    """Bring index and git in step with the files; see the module docstring.

    The caller holds the write lock and hands over the transaction the commit goes through.
    """
    started = time.perf_counter()
    want_commit = target.settings.sync.commit if commit is None else commit
    report = _Run(target, tx, want_commit=want_commit, normalize=normalize, source=source).run(full)
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


class _Run:
    """One sync run's working state (so each step reads as a short method)."""

    def __init__(self, target: SyncTarget, tx: Transaction, *, want_commit: bool, normalize: bool, source: str) -> None:
        self.target, self.root, self.ledger, self.settings = target, target.root, target.ledger, target.settings
        self.tx = tx
        self.files = target.files
        self.want_commit, self.normalize, self.source = want_commit, normalize, source
        self.state = SyncState.load(self.root)
        self.status: dict[str, str] = {}
        self.diff_letter: dict[str, str] = {}
        self.candidates: dict[str, str] = {}
        self.unstable: set[str] = set()
        self.malformed: dict[str, str] = {}
        self.checked_bytes: dict[str, bytes] = {}  # path → the exact bytes checked (or written), what gets committed
        self.empty: dict[str, str] = {}
        self.unnormalised: set[str] = set()

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
        head = ledger.head()
        status_rows = ledger.status_porcelain()
        for xy, path, orig in status_rows:
            self.status[path] = xy
            if orig:
                self.status[orig] = "D "
        if (
            not full
            and head is not None
            and head == state.commit
            and not state.pending
            and not any(is_memory_path(p) for p in self.status)
        ):
            return SyncReport("noop", state.commit, head)  # the common case: one `git status`, no index opened

        index = self.target.index()
        index_ok, index_commit = _index_commit(index)
        bases = [c for c in dict.fromkeys([state.commit, index_commit]) if c and ledger.commit_exists(c)]
        full = full or not bases or (index_ok and index_commit is None)
        report = SyncReport("full" if full else "incremental", state.commit, head)
        self.collect(full, bases, head)
        if not full and not self.candidates and head == state.commit == index_commit:
            report.mode = "noop"
            return report
        busy = self.ledger.busy_reason(status_rows) if self.want_commit else "--no-commit"
        if busy is not None:
            busy += "; edits are indexed but not committed"
        can_commit = busy is None

        valid, deleted, dropped, quiet = self.read_all(report, skip_unchanged=not can_commit)
        old = {p: _old_info(self.ledger, p, state.pending.get(p), (head, *bases)) for p in deleted}
        partner_of, forced_id = self.pair_renames(valid, old)
        notes = self.dedupe_ids(valid, old, forced_id, index if index_ok else None)
        records, written, record_sha = self.normalise(valid, forced_id, report)

        changes = self.describe_changes(records, written, quiet, partner_of, notes)
        renamed_from = {c.previous_path for c in changes if c.previous_path}
        for path in deleted:
            prior = state.pending.get(path) or {}
            if path in renamed_from:
                continue
            if (
                path in self.status
                or self.diff_letter.get(path) == "D"
                or prior.get("kind") in ("uncommitted", "deleted")
            ):
                changes.append(
                    Change(
                        DELETED,
                        path,
                        old[path].id,
                        origin="git"
                        if self.diff_letter.get(path) == "D" and path not in self.status
                        else "working-tree",
                    )
                )

        commit_paths = self.commit_paths(changes)
        if commit_paths and not can_commit:
            report.not_committed = busy
        if commit_paths and can_commit:
            report.commit = self.commit(commit_paths, changes, records)
        new_head = ledger.head()

        removed = set(deleted) | set(dropped)
        upserts = [r for r in records if r.path not in quiet]
        if index_ok:
            if full:  # whatever the index holds that is no longer a live, valid file goes too
                removed |= indexed_paths(index) - {r.path for r in records} - set(self.unstable)
            if upserts or removed or new_head != index_commit:
                self.update_index(index, upserts, sorted(removed), new_head)
                report.index = "updated"
        else:
            report.index = "unavailable"
        report.indexed, report.removed = len(upserts), len(removed)

        committed = set(commit_paths) if report.commit else set()
        for c in changes:
            c.committed = bool(report.commit) and (c.path in committed or (c.previous_path or "") in committed)
        pending = self.next_pending(records, written, record_sha, deleted, old, committed, report)
        state.commit, state.pending = new_head, pending
        state.save(self.root)
        report.head, report.changes, report.pending = new_head, changes, sorted(pending)
        return report

    def update_index(self, index: Any, upserts: list[MemoryRecord], removed: list[str], head: str | None) -> None:
        """Apply the batch; then record ``head`` as reflected, since this run reconciled everything up to it.

        ``apply`` only advances the recorded commit to a direct child of the one it
        has (a remnic write); after a pull, a checkout or a full pass sync says so
        explicitly (``refresh_paths`` with no paths), so the next recall does not
        re-read what sync just indexed, nor re-admit files sync keeps out.
        """
        index.apply(upserts, removed, head)
        if head is not None:
            manifest = index.manifest()
            if manifest is None or manifest.commit != head:
                index.refresh_paths(self.files, [], head)

    def collect(self, full: bool, bases: list[str], head: str | None) -> None:
        candidates = self.candidates
        if full:
            for path in sorted({p for p in self.ledger.worktree_files() if is_memory_path(p)}):
                candidates[path] = "scan"
        else:
            for base in bases:
                if head and base != head:
                    for letter, path, old in self.ledger.diff_names(base, head):
                        candidates[path] = "git"
                        self.diff_letter[path] = "A" if letter in ("R", "C") else letter
                        if old and letter == "R":
                            candidates[old] = "git"
                            self.diff_letter[old] = "D"
        for path in self.status:
            candidates[path] = "working-tree"
        for path in self.state.pending:
            candidates.setdefault(path, "pending")
        self.candidates = {p: o for p, o in candidates.items() if is_memory_path(p)}

    def read_all(
        self, report: SyncReport, *, skip_unchanged: bool
    ) -> tuple[list[tuple[str, bytes, Checked]], list[str], list[str], set[str]]:
        """(valid files, deleted paths, paths to keep out of the index, unchanged uncommitted paths)."""
        store = self.settings.store
        valid: list[tuple[str, bytes, Checked]] = []
        deleted: list[str] = []
        dropped: list[str] = []
        quiet: set[str] = set()
        ordered = sorted(self.candidates)
        contents = read_stable_many([self.root / p for p in ordered])
        for path in ordered:
            prior = self.state.pending.get(path) or {}
            data = contents[self.root / path]
            if isinstance(data, Unstable):
                report.skipped.append({"path": path, "reason": "still being written; will retry"})
                self.unstable.add(path)
                continue
            if data is None:
                deleted.append(path)
                continue
            if isinstance(data, NotRegularFile):
                checked = Checked(
                    path, problems=[FieldProblem("path", data.strerror or "is not a regular file", path=path)]
                )
                sha = "not-a-file"
            else:
                sha = digest(data)
                checked = check_bytes(data, path, store)
            if checked.problems:
                report.problems += checked.problems
                if prior.get("sha") != sha or prior.get("kind") != "malformed":
                    report.new_problem_paths.append(path)
                self.malformed[path] = sha
                dropped.append(path)
                continue
            if checked.empty:
                if path in self.status:
                    report.skipped.append({"path": path, "reason": "no memory text yet; left as it is"})
                    self.empty[path] = sha
                dropped.append(path)
                continue
            if (
                skip_unchanged
                and prior.get("kind") == "uncommitted"
                and prior.get("sha") == sha
                and path in self.status
            ):
                quiet.add(path)
            valid.append((path, data, checked))
        return valid, deleted, dropped, quiet

    def pair_renames(
        self, valid: list[tuple[str, bytes, Checked]], old: dict[str, _Old]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """New path → the deleted path it was renamed from; new path → the id it inherits."""
        by_id = {o.id: p for p, o in old.items() if o.id}
        by_hash = {o.hash: p for p, o in old.items() if o.hash}
        partner_of: dict[str, str] = {}
        forced_id: dict[str, str] = {}
        for path, _data, checked in valid:
            if not self.is_new(path):
                continue
            record = checked.record
            assert record is not None
            explicit = str(record.frontmatter["id"]) if record.has_id else None
            partner = by_id.get(explicit) if explicit else by_hash.get(content_hash(record.content))
            if partner and partner not in partner_of.values():
                partner_of[path] = partner
                if not explicit and old[partner].id:
                    forced_id[path] = str(old[partner].id)
        return partner_of, forced_id

    def dedupe_ids(
        self, valid: list[tuple[str, bytes, Checked]], old: dict[str, _Old], forced_id: dict[str, str], index: Any
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
                other = self.holder_of(rid, path, index)
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

    def holder_of(self, memory_id: str, path: str, index: Any) -> str | None:
        """Another path that holds ``memory_id``: the index's answer, or git's committed files without one."""
        if index is not None:
            try:
                return index.path_of(memory_id)
            except Exception:  # noqa: BLE001 - a failed lookup must not stop sync
                return None
        if self.ledger.head() is None:
            return None
        try:
            out = self.ledger.git("grep", "-l", "-F", "-e", f"id: {memory_id}", "HEAD", "--", "*.md")
        except RemnicError:  # git grep exits 1 when nothing matches
            return None
        hits = [line.split(":", 1)[1] for line in out.splitlines() if ":" in line]
        return next((h for h in hits if h != path and is_memory_path(h)), None)

    def normalise(
        self, valid: list[tuple[str, bytes, Checked]], forced_id: dict[str, str], report: SyncReport
    ) -> tuple[list[MemoryRecord], dict[str, list[str]], dict[str, str]]:
        """Write the frontmatter each file needs; (records, path → keys written, path → sha of the bytes)."""
        now = now_iso()
        records: list[MemoryRecord] = []
        written: dict[str, list[str]] = {}
        record_sha: dict[str, str] = {}
        for path, data, checked in valid:
            record = checked.record
            assert record is not None
            plan = planned_changes(
                checked,
                now=now,
                store=self.settings.store,
                stamp_edits=self.settings.sync.stamp_edits,
                memory_id=forced_id.get(path),
            )
            if plan and not self.normalize:
                self.unnormalised.add(path)  # the next normalising sync must come back to it
            elif plan:
                text, meta = render(checked, plan)
                if not replace_if_unchanged(self.root / path, data, text, self.root / STATE_DIR / "tmp"):
                    report.skipped.append({"path": path, "reason": "changed while syncing; will retry"})
                    self.unstable.add(path)
                    continue
                record = MemoryRecord(path, meta, record.body, record.namespace)
                data = text.encode("utf-8")
                written[path] = list(plan)
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
            if path in quiet or (self.candidates[path] == "scan" and path not in self.status and path not in written):
                continue
            change = Change(
                ADDED if self.is_new(path) else MODIFIED,
                path,
                record.id,
                normalized=written.get(path, []),
                note=notes.get(path),
                origin="working-tree" if path in self.status else "git",
            )
            if path in partner_of:
                change.kind, change.previous_path = RENAMED, partner_of[path]
            changes.append(change)
        return changes

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
            _subject(committing or changes),
            trailers_for("sync", ids, ",".join(namespaces), self.source),
            body="\n".join(c.describe() for c in committing),
        )
        return outcome.sha

    def next_pending(
        self,
        records: list[MemoryRecord],
        written: dict[str, list[str]],
        record_sha: dict[str, str],
        deleted: list[str],
        old: dict[str, _Old],
        committed: set[str],
        report: SyncReport,
    ) -> dict[str, dict[str, Any]]:
        """Memory paths left differing from the new HEAD, with what the next run needs to know about them."""
        pending: dict[str, dict[str, Any]] = {p: {"kind": "unstable"} for p in self.unstable}
        pending.update({p: {"kind": "malformed", "sha": sha} for p, sha in self.malformed.items()})
        pending.update({p: {"kind": "empty", "sha": sha} for p, sha in self.empty.items()})
        for record in records:
            path = record.path
            if path in self.unnormalised and path not in self.status:
                pending[path] = {"kind": "unnormalised", "sha": record_sha[path]}
                continue
            if path in committed or not (path in self.status or path in written):
                continue
            pending[path] = {
                "kind": "uncommitted",
                "sha": record_sha[path],
                "id": record.id,
                "hash": content_hash(record.content),
                "explicitId": record.has_id,
            }
        for path in deleted:
            if path not in committed and path in self.status and self.in_head(path):
                info = old[path]
                pending[path] = {"kind": "deleted", "id": info.id, "hash": info.hash, "explicitId": info.explicit_id}
        return pending
