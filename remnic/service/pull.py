"""``space pull`` and ``space push``: a memory repository in step with its git remote.

A pull, under the repository write lock:

1. finishes what an interrupted pull left (a merge git stopped in, conflict copies not
   committed yet), or aborts that merge cleanly when it cannot be finished;
2. commits uncommitted hand edits first, as ``sync run`` does;
3. fetches the remote and merges it with git; memory files go through remnic's merge
   driver (:mod:`remnic.memfile.merge`); whatever git still leaves unmerged
   (a file deleted on one side and edited on the other, a repository without the
   driver configured) is resolved the same way here, so no conflict markers remain;
4. commits the other side's version of each true body conflict as a second memory;
5. updates the index for exactly the files the merge changed (sync's incremental path).

Push commits hand edits, then pushes the branch (setting its upstream the first time);
when the remote has moved it refuses with :class:`~remnic.errors.RemoteMovedError`.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, LedgerError, MemoryFormatError, RemoteMovedError, UsageError
from remnic.fsio import crash_point, write_atomic
from remnic.memfile.merge import REVIEW_STATUS, MergeOutcome, merge_memory
from remnic.memfile.model import MemoryRecord, now_iso, parse_file
from remnic.memfile.paths import MemoryPaths, folder_category
from remnic.memfile.values import own_id
from remnic.repo import remote as _remote
from remnic.repo.messages import format_message, trailers_for
from remnic.repo.transaction import Transaction

if TYPE_CHECKING:
    from .memory import Memory


@dataclass
class PullReport:
    """What a pull did, for every surface (``to_dict`` is the ``--json`` output)."""

    remote: str
    branch: str
    before: str | None = None
    after: str | None = None
    outcome: str = "up-to-date"
    """up-to-date, fast-forward, merge, remote-empty (the remote has no branch at all yet), or no-branch
    (the remote has branches, but not this one: ``remote_branches`` names them)."""
    remote_branches: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    """True body conflicts kept as two linked memories; ``status``/``pathStatus`` say whether each is
    waiting for review (pending_review) or got a status ranked before it (forgotten …)."""
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    """The same text stored on both sides under two ids: the other id kept, superseded by this one."""
    resolved: list[dict[str, str]] = field(default_factory=list)
    """Paths git left unmerged that remnic resolved, and how."""
    edits_commit: str | None = None
    finished_previous: str | None = None
    indexed: int = 0
    removed_from_index: int = 0
    elapsed_ms: float = 0.0
    phases_ms: dict[str, float] = field(default_factory=dict)
    """Where the time went: edits (committing hand edits), fetch, merge, copies, index."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "before": self.before,
            "after": self.after,
            "outcome": self.outcome,
            "remoteBranches": self.remote_branches,
            "changed": self.changed,
            "conflicts": self.conflicts,
            "duplicates": self.duplicates,
            "resolved": self.resolved,
            "editsCommit": self.edits_commit,
            "finishedPrevious": self.finished_previous,
            "indexed": self.indexed,
            "removedFromIndex": self.removed_from_index,
            "elapsedMs": round(self.elapsed_ms, 1),
            "phasesMs": {k: round(v, 1) for k, v in self.phases_ms.items()},
        }


# --- the merge driver (what git runs for each memory file both sides changed) ---


def merge_file(base: Path, ours: Path, theirs: Path, rel: str, root: Path, paths: MemoryPaths) -> int:
    """git's ``%O %A %B %P``: write the merge into ``ours``; 0 when resolved (always, for a memory file)."""
    texts = [p.read_bytes().decode("utf-8", "surrogateescape") for p in (base, ours, theirs)]
    if not paths.is_memory(rel):
        merged, clean = _remote.line_merge(*texts)
        ours.write_bytes(merged.encode("utf-8", "surrogateescape"))
        return 0 if clean else 1
    outcome = merge_memory(texts[0] if texts[0] else None, texts[1], texts[2], rel, _remote.line_merge)
    ours.write_bytes(outcome.text.encode("utf-8", "surrogateescape"))
    if outcome.copy_path is not None:
        _keep_copy(root, _git_dir(root), rel, outcome)
    return 0


def merge_file_at(root: Path, base: Path, ours: Path, theirs: Path, rel: str) -> int:
    """The merge driver for the repository at ``root`` (``remnic merge-file %O %A %B %P``); opens no
    Memory, since the pull that runs git holds the write lock."""
    from remnic.config import load_settings

    settings = load_settings(root)
    return merge_file(base, ours, theirs, rel, root, MemoryPaths.from_store(settings.store))


def _git_dir(root: Path) -> Path | None:
    """The repository's git directory; None outside a repository (the driver run by hand on three files)."""
    result = _remote.run_git(root, ["rev-parse", "--absolute-git-dir"])
    out = result.out.strip() if result.ok else ""
    return Path(out) if out and Path(out).is_dir() else None


def _keep_copy(root: Path, git_dir: Path | None, rel: str, outcome: MergeOutcome) -> None:
    """Write the other side's version beside the file (committed by the pull) and log the conflict;
    outside a repository there is no pull to commit it, so nothing is logged."""
    assert outcome.copy_path is not None and outcome.copy_text is not None
    target = root / outcome.copy_path
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, outcome.copy_text.encode("utf-8", "surrogateescape"))
    entry = {
        "path": rel,
        "id": outcome.memory_id,
        "copyPath": outcome.copy_path,
        "copyId": outcome.copy_id,
        "kind": "conflict" if outcome.conflict else "duplicate",
    }
    if git_dir is None:
        return
    with open(git_dir / _remote.CONFLICT_LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


# --- pull ---


def pull(mem: Memory, remote: str | None = None, *, allow_unrelated: bool = False) -> PullReport:
    """Fetch and merge the remote, then index what changed (see the module docstring). A remote branch
    sharing no history with this one is refused unless ``allow_unrelated``."""
    started = time.perf_counter()
    mem.settle_index()
    ledger = mem.ledger
    with mem.committer.exclusive():
        current = _remote.branch(ledger)
        name = _pick_remote(mem, current, remote)
        if current is None:
            raise UsageError("HEAD is detached (not on a branch); check out a branch, then pull")
        report = PullReport(name, current)
        clock = _Phases(report)
        report.finished_previous = finish_merge(mem, report)
        # Copies an interrupted pull left: committing hand edits would commit them, and they are still news.
        waiting = pending_copies(mem)
        report.edits_commit = _commit_hand_edits(mem)
        report.before = ledger.head()
        clock.mark("edits")
        fetched = _remote.fetch(ledger, name, mem.settings.spaces.network_timeout_s)
        clock.mark("fetch")
        if not fetched.ok:
            raise LedgerError(f"git fetch {name} failed: {fetched.err.strip()}")
        crash_point("pull-fetched")
        tracking = _remote.upstream(ledger) or f"{name}/{current}"
        target = _remote.rev(ledger, tracking)
        if target is None:
            report.remote_branches = _remote.remote_branches(ledger, name)
            report.outcome = "no-branch" if report.remote_branches else "remote-empty"
        elif report.before is not None and ledger.is_ancestor(target, report.before):
            report.outcome = "up-to-date"
        else:
            fast_forward = report.before is None or ledger.is_ancestor(report.before, target)
            if report.before is not None:
                base = _remote.merge_base(ledger, report.before, target)
                if base is None and not allow_unrelated:
                    raise UsageError(_unrelated_message(mem, name, tracking, current))
                _refuse_blocked(mem, tracking, report.before if base is None else base, target)
            _merge(mem, tracking, report, allow_unrelated=allow_unrelated)
            report.outcome = "fast-forward" if fast_forward else "merge"
        clock.mark("merge")
        crash_point("pull-merged")
        _commit_copies(mem, report, waiting)
        report.after = ledger.head()
        paths = MemoryPaths.from_store(mem.settings.store)
        report.changed = [p for p in _remote.changed_paths(ledger, report.before, report.after) if paths.is_memory(p)]
        clock.mark("copies")
        _index(mem, report)
        clock.mark("index")
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


class _Phases:
    def __init__(self, report: PullReport) -> None:
        self.report, self.last = report, time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.report.phases_ms[name] = (now - self.last) * 1000
        self.last = now


def _pick_remote(mem: Memory, current: str | None, remote: str | None) -> str:
    names = _remote.remotes(mem.ledger)
    if remote is not None:
        if remote not in names:
            raise UsageError(f"no git remote named {remote!r} in {mem.root}; remotes: {', '.join(names) or 'none'}")
        return remote
    chosen = _remote.remote_for(mem.ledger, current, mem.settings.spaces.remote)
    if chosen is None:
        hint = f"remotes: {', '.join(names)}" if names else "it has no remote"
        raise UsageError(
            f"{mem.root} has no remote to use ({hint}); add one with `git -C {mem.root} remote add origin URL`"
        )
    return chosen


def _commit_hand_edits(mem: Memory) -> str | None:
    from remnic.sync.engine import SyncTarget, run_sync

    target = SyncTarget(mem.root, mem.files, mem.ledger, mem.settings, lambda: mem.index)
    report = run_sync(target, Transaction(mem.files, mem.ledger), source="space")
    return report.commit


def _unrelated_message(mem: Memory, remote: str, tracking: str, current: str) -> str:
    url = _remote.remote_url(mem.ledger, remote) or remote
    space = mem.space_name()
    return (
        f"not pulling {tracking} into {f'space {space!r} ({mem.root})' if space else mem.root}: branch "
        f"{current} of {remote} ({url}) shares no history with it, so it is probably another repository "
        f"(a project, another space). Check the URL (`git -C {mem.root} remote -v`); to merge the two "
        "histories deliberately, run `remnic space pull --allow-unrelated`"
    )


def _refuse_blocked(mem: Memory, tracking: str, base: str, target: str) -> None:
    """Uncommitted files the merge would overwrite (a malformed hand edit sync left as it is, a file that is
    not a memory): named with what to do, before git refuses with its own words."""
    ledger = mem.ledger
    incoming = set(_remote.changed_paths(ledger, base, target))
    dirty = {q for _, p, orig in ledger.status_porcelain() for q in (p, orig) if q}
    blocking = sorted(incoming & dirty)
    if not blocking:
        return
    paths = MemoryPaths.from_store(mem.settings.store)
    problems, lines = [], []
    for path in blocking:
        found = mem.files.check(path).problems if paths.is_memory(path) and (mem.root / path).is_file() else []
        if found:
            problems += [p if p.path else FieldProblem(p.field, p.message, path, p.line) for p in found]
            first = found[0]
            lines.append(f"  {path}: an uncommitted edit that is malformed, so not committed ({first.describe()})")
        else:
            problems.append(FieldProblem("path", "uncommitted change the merge would overwrite", path))
            what = "a memory file" if paths.is_memory(path) else "not a memory file"
            lines.append(f"  {path}: uncommitted ({what}); commit, move or discard it")
    raise LedgerError(
        f"pull stopped before merging {tracking}: it changes {len(blocking)} file(s) this clone has uncommitted "
        "changes to, and nothing was merged:\n" + "\n".join(lines) + "\nFix the malformed frontmatter "
        "(`remnic doctor` lists each problem) so the edit can be committed, deal with the other files, then run "
        "`remnic space pull` again",
        problems=problems,
    )


def _merge(mem: Memory, tracking: str, report: PullReport, *, allow_unrelated: bool = False) -> None:
    message = format_message(
        f"remnic pull: merge {tracking}",
        trailers_for("pull", [], mem.settings.namespaces.default, "space", Remote=report.remote),
    )
    result = _remote.merge(mem.ledger, tracking, message, allow_unrelated=allow_unrelated)
    crash_point("pull-merging")
    if result.ok:
        return
    if _remote.merge_head(mem.ledger) is None:
        raise LedgerError(f"git merge failed and changed nothing: {(result.err or result.out).strip()}")
    _resolve_and_commit(mem, report)


def finish_merge(mem: Memory, report: PullReport | None = None) -> str | None:
    """A merge an interrupted pull (or a plain ``git pull``) left: resolve what is unmerged and commit
    it; if that cannot be done, abort it so the repository is as it was before. Caller holds the lock."""
    if _remote.merge_head(mem.ledger) is None:
        return None
    report = report or PullReport("", "")
    try:
        _resolve_and_commit(mem, report)
    except LedgerError:
        _remote.abort_merge(mem.ledger)
        return "aborted"
    return "finished"


def _resolve_and_commit(mem: Memory, report: PullReport) -> None:
    ledger = mem.ledger
    paths = MemoryPaths.from_store(mem.settings.store)
    unmerged = _remote.unmerged(ledger)
    done = _resolve_renames(mem, unmerged, paths, report)
    for path, stages in sorted(unmerged.items()):
        if path not in done:
            report.resolved.append({"path": path, "how": _resolve(mem, path, stages, paths)})
    leftover = _remote.unmerged(ledger)
    if leftover:
        raise LedgerError(f"could not resolve {', '.join(sorted(leftover))}")
    committed = _remote.commit_merge(ledger)
    if not committed.ok and _remote.merge_head(ledger) is not None:
        raise LedgerError(f"git commit of the merge failed: {(committed.err or committed.out).strip()}")


def _record(text: str, path: str) -> MemoryRecord | None:
    try:
        return parse_file(text, path)
    except MemoryFormatError:
        return None


def _resolve_renames(
    mem: Memory, unmerged: dict[str, dict[int, str]], paths: MemoryPaths, report: PullReport
) -> set[str]:
    """One memory moved to a different folder on each side (git's rename/rename conflict: the old path
    only in the base, a new path on each side, all with one id) becomes one memory at one path, merged as
    an edit on both sides is. Without this both files would stay, under one id. Returns the paths done."""
    lone: dict[int, dict[str, tuple[str, str]]] = {1: {}, 2: {}, 3: {}}
    for path, stages in unmerged.items():
        if len(stages) != 1 or not paths.is_memory(path):
            continue
        ((stage, sha),) = stages.items()
        text = _remote.blob_text(mem.ledger, sha)
        record = _record(text, path)
        memory_id = own_id(record.frontmatter) if record is not None else None
        if memory_id is not None and stage in lone:
            lone[stage].setdefault(memory_id, (path, text))
    done: set[str] = set()
    for memory_id, (ours_path, ours_text) in sorted(lone[2].items()):
        if memory_id not in lone[3]:
            continue
        theirs_path, theirs_text = lone[3][memory_id]
        base_path, base_text = lone[1].get(memory_id, (None, None))
        now = now_iso()
        outcome = merge_memory(base_text, ours_text, theirs_text, ours_path, _remote.line_merge, now=now)
        merged = _record(outcome.text, ours_path)
        category = merged.frontmatter.get("category") if merged is not None else None
        # The merged category decides the folder; when it names neither, this side's path stays.
        target = theirs_path if category == folder_category(theirs_path) != folder_category(ours_path) else ours_path
        if target != ours_path:
            outcome = merge_memory(base_text, ours_text, theirs_text, target, _remote.line_merge, now=now)
        other = theirs_path if target == ours_path else ours_path
        write_atomic(mem.root / target, outcome.text.encode("utf-8", "surrogateescape"))
        _remote.add(mem.ledger, [target])
        for gone in (other, base_path):
            if gone is not None:
                _remote.run_git(mem.root, ["rm", "--cached", "--quiet", "--force", "--", gone])
                (mem.root / gone).unlink(missing_ok=True)
        if outcome.copy_path is not None:
            _keep_copy(mem.root, mem.git_dir, target, outcome)
        why = (
            f"its merged category {category} belongs there"
            if category is not None and folder_category(target) == category
            else f"this side's path (its merged category {category} names neither folder)"
        )
        merge = "kept both versions as two memories for review" if outcome.conflict else "merged key by key"
        how = f"moved here to {ours_path} and on the other side to {theirs_path}: kept one memory at {target}"
        report.resolved.append({"path": target, "how": f"{how} ({why}); {merge}"})
        report.resolved.append({"path": other, "how": f"the same memory, moved on both sides: kept at {target}"})
        if base_path is not None:
            report.resolved.append({"path": base_path, "how": f"moved on both sides (kept at {target})"})
        done.update(p for p in (ours_path, theirs_path, base_path) if p is not None)
    return done


def _resolve(mem: Memory, path: str, stages: dict[int, str], paths: MemoryPaths) -> str:
    ledger, full = mem.ledger, mem.root / path
    texts = {n: _remote.blob_text(ledger, sha) for n, sha in stages.items()}
    ours, theirs = texts.get(2), texts.get(3)
    if ours is None and theirs is None:
        _remote.run_git(mem.root, ["rm", "--cached", "--quiet", "--", path])
        return "deleted on both sides"
    if ours is None or theirs is None:
        kept = ours if ours is not None else theirs
        assert kept is not None
        write_atomic(full, kept.encode("utf-8", "surrogateescape"))
        _remote.add(ledger, [path])
        return "kept the edited version (the other side deleted it)"
    if not paths.is_memory(path):
        write_atomic(full, ours.encode("utf-8", "surrogateescape"))
        _remote.add(ledger, [path])
        return "kept this side's version (not a memory file; the other is in the merged commit's history)"
    outcome = merge_memory(texts.get(1), ours, theirs, path, _remote.line_merge)
    write_atomic(full, outcome.text.encode("utf-8", "surrogateescape"))
    _remote.add(ledger, [path])
    if outcome.copy_path is not None:
        _keep_copy(mem.root, mem.git_dir, path, outcome)
    if outcome.conflict:
        return "kept both versions as two memories for review"
    return "the same text on both sides: the other id kept as superseded" if outcome.copy_path else "merged key by key"


def _logged_copies(mem: Memory) -> list[dict[str, Any]] | None:
    """The conflict log's entries (None: there is no log)."""
    try:
        lines = (mem.git_dir / _remote.CONFLICT_LOG).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash: its copy is picked up by the file check below
        if isinstance(entry, dict) and isinstance(entry.get("copyPath"), str):
            entries.append(entry)
    return entries


def pending_copies(mem: Memory) -> list[dict[str, Any]]:
    """Logged conflict copies still to commit. A copy already committed (by `remnic sync run` after a plain
    `git pull`, say) or gone is done: its entry is stale, neither pending nor news to a later pull."""
    out = []
    for entry in _logged_copies(mem) or []:
        full = mem.root / entry["copyPath"]
        if full.is_file() and mem.ledger.committed_bytes(entry["copyPath"]) != full.read_bytes():
            out.append(entry)
    return out


def _status_at(mem: Memory, path: str) -> str | None:
    checked = mem.files.check(path) if (mem.root / path).is_file() else None
    return checked.record.status if checked is not None and checked.record is not None else None


def _commit_copies(mem: Memory, report: PullReport, waiting: list[dict[str, Any]]) -> None:
    """One commit adding the other side's version of every true conflict the merge driver met; ``waiting``:
    the copies pending when the pull began (reported though committing hand edits committed them)."""
    log = mem.git_dir / _remote.CONFLICT_LOG
    if _logged_copies(mem) is None:
        return
    pending = pending_copies(mem)
    tx = Transaction(mem.files, mem.ledger)
    for entry in pending:
        tx.put(entry["copyPath"], (mem.root / entry["copyPath"]).read_bytes(), on_disk=True)
    entries = list({e["copyPath"]: e for e in [*waiting, *pending]}.values())
    for entry in entries:
        entry["status"], entry["pathStatus"] = _status_at(mem, entry["copyPath"]), _status_at(mem, entry["path"])
        entry["inReview"] = REVIEW_STATUS in (entry["status"], entry["pathStatus"])
    if tx.staged:
        ids = [i for e in entries for i in (e.get("id"), e.get("copyId")) if isinstance(i, str)]
        count = f"{len(entries)} memor{'y' if len(entries) == 1 else 'ies'}"
        subject = f"remnic merge: kept the other side's version of {count} beside this side's"
        body = "\n".join(f"{e['path']} <-> {e['copyPath']}" for e in entries)
        tx.commit(subject, trailers_for("merge", ids, mem.settings.namespaces.default, "space"), body=body)
    report.conflicts = [e for e in entries if e.get("kind", "conflict") == "conflict"]
    report.duplicates = [e for e in entries if e.get("kind") == "duplicate"]
    log.unlink(missing_ok=True)


def _index(mem: Memory, report: PullReport) -> None:
    """The index follows the merge: sync's incremental path over what changed since it last looked."""
    from remnic.sync.engine import SyncTarget, run_sync

    target = SyncTarget(mem.root, mem.files, mem.ledger, mem.settings, lambda: mem.index)
    synced = run_sync(target, Transaction(mem.files, mem.ledger), commit=False, normalize=False, source="space")
    report.indexed, report.removed_from_index = synced.indexed, synced.removed


# --- push ---


def push(mem: Memory, remote: str | None = None) -> dict[str, Any]:
    """Commit hand edits, then push the branch; the first push sets its upstream."""
    started = time.perf_counter()
    mem.settle_index()
    ledger = mem.ledger
    with mem.committer.exclusive():
        underway = ledger.in_progress()
        if underway is not None:
            raise UsageError(f"cannot push: {underway} (`remnic space pull` finishes a pull's merge)")
        current = _remote.branch(ledger)
        if current is None:
            raise UsageError("HEAD is detached (not on a branch); check out a branch, then push")
        name = _pick_remote(mem, current, remote)
        edits = _commit_hand_edits(mem)
        left = _left_uncommitted(mem)
        first = _remote.upstream(ledger) is None
        result = _remote.push(ledger, name, current, set_upstream=first, timeout=mem.settings.spaces.network_timeout_s)
        crash_point("pushed")
    if not result.ok:
        if _remote.rejected(result):
            raise RemoteMovedError(_moved_message(mem, name, current))
        raise LedgerError(f"git push {name} failed: {(result.err or result.out).strip()}")
    up_to_date = "[up to date]" in result.out
    warnings = []
    if left:
        shown = ", ".join(left[:10]) + (", …" if len(left) > 10 else "")
        warnings.append(
            {
                "field": "uncommitted",
                "message": f"{len(left)} uncommitted change(s) were not pushed: {shown} (a malformed memory file is "
                "left uncommitted until fixed: `remnic doctor` names the problem)",
            }
        )
    return {
        "remote": name,
        "branch": current,
        "head": ledger.head(),
        "upstreamSet": first,
        "pushed": not up_to_date,
        "editsCommit": edits,
        "uncommitted": left,
        "warnings": warnings,
        "elapsedMs": round((time.perf_counter() - started) * 1000, 1),
    }


def _left_uncommitted(mem: Memory) -> list[str]:
    """What committing hand edits left behind (malformed memory files, changed files that are not memories):
    a push does not carry it, and saying nothing would read as "everything is pushed"."""
    paths = MemoryPaths.from_store(mem.settings.store)
    return sorted({p for xy, p, _ in mem.ledger.status_porcelain() if xy != "??" or paths.is_memory(p)})


def _moved_message(mem: Memory, remote: str, current: str) -> str:
    """Why the remote refused the push and what to do; a branch sharing no history with this one (another
    project's repository) must not be answered with "pull", which would merge the two."""
    moved = (
        f"push to {remote} refused: the remote has commits this repository does not have yet; "
        "run `remnic space pull`, then push again"
    )
    if not _remote.fetch(mem.ledger, remote, mem.settings.spaces.network_timeout_s).ok:
        return moved
    theirs, head = _remote.rev(mem.ledger, f"{remote}/{current}"), mem.ledger.head()
    if theirs is None or head is None or _remote.merge_base(mem.ledger, head, theirs) is not None:
        return moved
    url = _remote.remote_url(mem.ledger, remote) or remote
    return (
        f"push to {remote} refused: its branch {current} ({url}) shares no history with {mem.root}, so it is "
        f"probably another repository (a project, another space). Check the URL (`git -C {mem.root} remote -v`, "
        f"`git -C {mem.root} remote set-url {remote} URL`); `remnic space pull` refuses to merge unrelated "
        "histories unless you mean it: `remnic space pull --allow-unrelated`, then push"
    )
