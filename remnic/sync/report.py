"""What a sync run reports: one :class:`Change` per memory file it handled, problems, skipped files.

The same report is printed by ``remnic sync run``, streamed by the watcher as JSON
events, and returned by the service.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from remnic.errors import FieldProblem

ADDED, MODIFIED, DELETED, RENAMED = "added", "modified", "deleted", "renamed"
_LETTER = {ADDED: "A", MODIFIED: "M", DELETED: "D", RENAMED: "R"}
VERB = {ADDED: "add", MODIFIED: "edit", DELETED: "delete", RENAMED: "rename"}


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
    kept: list[str] = field(default_factory=list)
    """Keys written back from the committed version: a file that lost its ``id`` keeps the memory's state."""

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
            "kept": self.kept,
        }

    def describe(self, commit: str | None = None) -> str:
        """One line: ``M facts/a.md  mem_x  (normalised updated, contentHash)  -> 1a2b3c4d``."""
        where = f"{self.previous_path} -> {self.path}" if self.previous_path else self.path
        parts = [f"{self.letter} {where}"]
        if self.id:
            parts.append(self.id)
        extra = []
        written = [k for k in self.normalized if k not in self.kept]
        if written:
            extra.append("added frontmatter" if len(written) > 4 else "normalised " + ", ".join(written))
        if self.origin == "git" and not self.committed:  # one this sync committed (normalised) is not
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
            list(data.get("kept") or []),
        )


@dataclass
class SyncReport:
    mode: str
    """``incremental`` (diffed from a known commit), ``full`` (every file listed), ``noop``, or ``paused``
    (a merge or rebase is in progress: nothing read, indexed or committed)."""
    base: str | None
    """The commit the previous run reconciled: where this run started (None on a first run)."""
    head: str | None
    """The commit the run reconciled and the next run starts from: its own ``commit`` when it made one,
    else HEAD as it found it (older than HEAD only when another program committed mid-run and the run
    made no commit on top; see docs/sync.md). Paths left for later are in ``pending``."""
    changes: list[Change] = field(default_factory=list)
    problems: list[FieldProblem] = field(default_factory=list)
    new_problem_paths: list[str] = field(default_factory=list)
    """Malformed paths whose bytes changed since the last run (what a watcher prints)."""
    in_git_problem_paths: list[str] = field(default_factory=list)
    """Malformed paths git has as they are on disk (committed by hand): sync has nothing to commit there."""
    moved_problems: dict[str, str] = field(default_factory=dict)
    """Malformed path → the path git had it at: this run committed the move, the content as it was."""
    skipped: list[dict[str, str]] = field(default_factory=list)
    repeated_skips: list[str] = field(default_factory=list)
    """Skipped paths reported by an earlier run for the same bytes (a watcher says each once)."""
    commit: str | None = None
    not_committed: str | None = None
    """Why processed edits were left uncommitted (``--no-commit``, a rebase in progress, ...)."""
    pending: list[str] = field(default_factory=list)
    indexed: int = 0
    removed: int = 0
    index: str = "unchanged"
    """``updated``, ``unchanged``, ``unavailable``, or ``behind``: the commit is made but the index step
    after it failed (``index_error`` says why); the next sync catches the index up."""
    index_error: str | None = None
    index_note: str | None = None
    """Set when this run caught up an index an earlier sync left behind (it committed, then was killed or
    failed before its index step was done): said as a note, so ``index at …`` is never the only word."""
    elapsed_ms: float = 0.0
    phases_ms: dict[str, float] = field(default_factory=dict)
    """How long each phase took: find (what changed), read (read, check, normalise), commit, index."""
    dry_run: bool = False
    """Nothing was written, committed or indexed: the changes are what a real run would make."""
    held: list[str] = field(default_factory=list)
    """Memory paths another program held open for writing: left for a later sync (also in ``skipped``)."""
    as_is: int = 0
    """Memory files a full pass read and takes as they are (valid, already in git, nothing to write or
    commit: a note with an id or TOML front matter): indexed, never listed as changes."""
    warnings: list[str] = field(default_factory=list)
    """Caveats of a commit that stands (git's own index could not follow it: ``.git/index.lock`` held)."""
    stranded: list[str] = field(default_factory=list)
    """Values this run's changes left with no current memory (their successor deleted, forgotten or rejected
    by hand): one line each, naming the command that makes the older memory current again. Set by the
    service, which knows the chains; printed always, as forget's warning is."""

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
            "indexError": self.index_error,
            "indexNote": self.index_note,
            "elapsedMs": round(self.elapsed_ms, 1),
            "phasesMs": {k: round(v, 1) for k, v in self.phases_ms.items()},
            "dryRun": self.dry_run,
            "heldOpen": self.held,
            "asIs": self.as_is,
            "warnings": self.warnings,
            "stranded": self.stranded,
        }

    def events(self, *, only_new_problems: bool = False, warnings: bool = True) -> list[dict[str, Any]]:
        """The report as JSON-able events: one per change, problem, skipped file, plus a note;
        ``only_new_problems`` (the watcher) leaves out problems and skips an earlier run reported for
        the same bytes; ``warnings`` False leaves out the commit's caveats (``sync run`` has them on
        stderr already, from the log)."""
        events: list[dict[str, Any]] = []
        for change in self.changes:
            events.append({"event": "change", **change.to_dict(), "commit": self.commit if change.committed else None})
        for problem in self.problems:
            if not only_new_problems or problem.path in self.new_problem_paths:
                moved = self.moved_problems.get(problem.path or "")
                in_git = problem.path in self.in_git_problem_paths or moved is not None
                events.append({"event": "problem", **problem.to_dict(), "inGit": in_git, "movedFrom": moved})
        for skipped in self.skipped:
            if not only_new_problems or skipped["path"] not in self.repeated_skips:
                events.append({"event": "skipped", **skipped})
        if self.not_committed and self.changes:
            events.append({"event": "note", "message": self.not_committed})
        if self.index_note:
            events.append({"event": "note", "message": self.index_note})
        if warnings:
            events += [{"event": "warning", "message": w} for w in self.warnings]
        events += [{"event": "warning", "message": m} for m in self.stranded]  # no log line says these
        if self.index_error:
            message = f"the index was not updated ({self.index_error}); the commit is made, the index catches up"
            events.append({"event": "warning", "message": message})
        return events

    def left_behind(self) -> dict[str, str]:
        """Memory files skipped and left pending (held open, still being written): path → why."""
        pending = set(self.pending)
        return {s["path"]: s["reason"] for s in self.skipped if s["path"] in pending}

    def lines(self) -> list[str]:
        """One line per change, problem and skipped file (what `sync run` and the watcher print)."""
        return [line for line in map(event_line, self.events(warnings=False)) if line]


def event_line(event: dict[str, Any]) -> str | None:
    """The line of text for one report event (None: nothing to print)."""
    kind = event.get("event")
    if kind == "change":
        return Change.from_dict(event).describe(event.get("commit"))
    if kind == "problem":
        where = event.get("path", "") + (f":{event['line']}" if event.get("line") else "")
        field_ = f"{event['field']}: " if event.get("field") else ""
        options = f" (valid options: {', '.join(event['options'])})" if event.get("options") else ""
        # A file committed by hand is in git as it is: "not committed" would contradict `git log`.
        fate = "committed by hand as it is" if event.get("inGit") else "not committed"
        if event.get("movedFrom"):
            fate = f"its move from {event['movedFrom']} committed, as it was"
        return f"! {where}: {field_}{event['message']}{options} (left untouched, not indexed, {fate})"
    if kind == "skipped":
        return f"~ {event['path']}: {event['reason']}"
    if kind == "note":
        return f"note: {event['message']}"
    if kind == "warning":
        return f"warning: {event['message']}"
    return None


def commit_subject(changes: list[Change]) -> str:
    """The subject line of a sync commit: the one change, or counts by kind."""
    if len(changes) == 1:
        c = changes[0]
        where = f"{c.previous_path} -> {c.path}" if c.previous_path else c.path
        return f"remnic sync: {VERB[c.kind]} {where}"
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    parts = [f"{counts[k]} {k}" for k in (MODIFIED, ADDED, RENAMED, DELETED) if k in counts]
    return f"remnic sync: {len(changes)} hand edits ({', '.join(parts)})"
