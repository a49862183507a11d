"""``space pull``: a memory repository in step with its git remote.

A pull, under the repository write lock:

1. waits for a killed pull's ``git merge`` still running (:func:`.pull_resolve.wait_for_git`), and only then
   finishes what an interrupted pull left (a merge git stopped in, conflict copies not
   committed yet), or aborts that merge cleanly when it cannot be finished; the files of a merge git was
   killed in before it committed or wrote MERGE_HEAD are put back, to merge again (:func:`.pull_resolve.undo_cut_merge`),
   and a merge git committed for a pull killed before its last step gets that step;
2. commits uncommitted hand edits first, as ``sync run`` does (their vectors once the lock is released:
   :func:`embed_deferred`);
3. fetches the remote and merges it with git; memory files go through remnic's merge
   driver (:mod:`.merge_driver`); whatever git still leaves unmerged (a file deleted
   on one side and edited or moved on the other, a repository without the driver
   configured) is resolved by :mod:`.pull_resolve`, so no conflict markers remain;
4. commits the other side's version of each true body conflict as a second memory;
5. updates the index for exactly the files the merge changed (sync's incremental path).

Push is :mod:`.pushing`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import (
    FieldProblem,
    LedgerError,
    RemnicError,
    RemoteUnreachableError,
    RepoBusyError,
    UsageError,
)
from remnic.fsio import crash_point
from remnic.memfile.merge import REVIEW_STATUS
from remnic.memfile.paths import MemoryPaths
from remnic.repo import pullmark
from remnic.repo import remote as _remote
from remnic.repo.messages import format_message, trailers_for
from remnic.repo.transaction import Transaction

from .pull_guard import (
    Saved,
    adopt,
    apply_merged,
    drop_scratch_tree,
    is_memory_repo,
    keep_saved,
    only_init,
    refuse_blocked,
)
from .pull_resolve import (
    finish_committed_merge,
    finish_merged,
    resolve_and_commit,
    run_merge,
    undo_cut_merge,
    wait_for_git,
)
from .pull_review import history_rewritten, review_disputes, supersession_forks

if TYPE_CHECKING:
    from .memory import Memory


@dataclass
class PullReport:
    """What a pull did, for every surface (``to_dict`` is the ``--json`` output)."""

    remote: str
    branch: str
    root: str = ""
    """The repository pulled into (the nearest one above the working directory wins over the active space)."""
    space: str | None = None
    """The registered space that repository is, if any."""
    tracking: str | None = None
    """The remote branch merged (``origin/main``)."""
    adopted: str | None = None
    """This branch held only its ``remnic init`` commit (this sha) and took the remote's history instead."""
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
    malformed_conflicts: list[dict[str, Any]] = field(default_factory=list)
    """Both sides changed a memory file and one side's frontmatter does not parse: both files kept exactly as
    they are, side by side (one id in both, nothing linked); ``malformed`` says which (ours/theirs)."""
    review_disputes: list[dict[str, Any]] = field(default_factory=list)
    """Memories in review approved on one side and dismissed on the other: back in review (pending_review)."""
    supersession_forks: list[dict[str, Any]] = field(default_factory=list)
    """A memory superseded on each side by a different new memory: both current (:class:`.pull_review.Fork`)."""
    history_rewritten: dict[str, Any] | None = None
    """The remote's branch was rewritten since the last fetch (:func:`.pull_review.history_rewritten`)."""
    vectors_behind: str | None = None
    """Why the vectors of the hand edits committed first (computed after the write lock is released) are not
    computed yet; they are searchable by BM25 meanwhile and `remnic sync run` computes them. Else None."""
    problems: list[dict[str, Any]] = field(default_factory=list)
    """Malformed memory files the pull brought in or left (path, line, field, message): not in recall."""
    resolved: list[dict[str, str]] = field(default_factory=list)
    """Paths git left unmerged that remnic resolved, and how."""
    saved: list[dict[str, Any]] = field(default_factory=list)
    """Files saved while the pull merged them: never overwritten; the edit merged onto the pull's result."""
    pending_saves: dict[str, Saved] = field(default_factory=dict)
    edits_commit: str | None = None
    finished_previous: str | None = None
    indexed: int = 0
    removed_from_index: int = 0
    index_behind: str | None = None
    """Why the index could not follow the merge (the merge stands; the next recall catches up), else None."""
    elapsed_ms: float = 0.0
    phases_ms: dict[str, float] = field(default_factory=dict)
    """Where the time went: edits (committing hand edits), fetch, merge, copies, index; then vectors (the hand
    edits' vectors, computed with the write lock released: :meth:`.spaces.SpaceOps.space_pull`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "root": self.root,
            "space": self.space,
            "tracking": self.tracking,
            "adopted": self.adopted,
            "before": self.before,
            "after": self.after,
            "outcome": self.outcome,
            "remoteBranches": self.remote_branches,
            "changed": self.changed,
            "conflicts": self.conflicts,
            "duplicates": self.duplicates,
            "malformedConflicts": self.malformed_conflicts,
            "reviewDisputes": self.review_disputes,
            "supersessionForks": self.supersession_forks,
            "historyRewritten": self.history_rewritten,
            "vectorsBehind": self.vectors_behind,
            "problems": self.problems,
            "resolved": self.resolved,
            "savedDuringPull": self.saved,
            "editsCommit": self.edits_commit,
            "finishedPrevious": self.finished_previous,
            "indexed": self.indexed,
            "removedFromIndex": self.removed_from_index,
            "indexBehind": self.index_behind,
            "elapsedMs": round(self.elapsed_ms, 1),
            "phasesMs": {k: round(v, 1) for k, v in self.phases_ms.items()},
        }


# --- pull ---


def pull(mem: Memory, remote: str | None = None, *, allow_unrelated: bool = False) -> PullReport:
    """Fetch and merge the remote, then index what changed (see the module docstring). A remote branch
    sharing no history with this one is refused unless ``allow_unrelated``."""
    started = time.perf_counter()
    mem.settle_index()
    ledger = mem.ledger
    with mem.committer.exclusive():
        current = _remote.branch(ledger)
        try:
            name = _pick_remote(mem, current, remote)
        except UsageError as exc:
            raise _with_marker(mem, exc) from None
        if current is None:
            raise UsageError("HEAD is detached (not on a branch); check out a branch, then pull")
        report = PullReport(name, current, root=str(mem.root), space=mem.space_name())
        clock = _Phases(report)
        # A killed pull's git may still be merging: only once it ended is there anything to look at (a merge it
        # stopped in, committed or left cut short), never its files taken for hand edits meanwhile.
        recovering = (mem.git_dir / pullmark.PULL_MARKER).exists()  # an earlier pull did not finish
        wait_for_git(mem, mem.settings.store.lock_timeout_s)
        arrived = _finish_previous(mem, report)
        if undo_cut_merge(mem, mem.settings.store.lock_timeout_s) is not None:
            report.finished_previous = "undone, to merge again"  # git was killed mid-merge: not hand edits
        elif (pre_merge := finish_committed_merge(mem, report)) is not None and arrived is None:
            # A pull killed after git committed its merge: what that merge brought is news of this pull.
            report.finished_previous, report.before = "finished", pre_merge
            arrived = _remote.changed_paths(ledger, pre_merge, ledger.head())
        drop_scratch_tree(mem)  # what an earlier pull's git wrote there is in place now
        if recovering:  # its own phase: waiting for that pull's git is not this pull's edits
            clock.mark("recover")
        _keep_saves(mem, report)  # before hand edits are committed: a save must not undo the merge
        # Copies an interrupted pull left: still news, and committed as what they are, not as hand edits.
        waiting = pending_copies(mem)
        if waiting:
            _commit_copies(mem, report, [])
        report.edits_commit = _commit_hand_edits(mem, report if arrived is not None else None)
        before_fetch = ledger.head()
        report.before = before_fetch if report.before is None else report.before
        clock.mark("edits")
        tracking = _tracking(mem, name, current)
        known = _remote.rev(ledger, tracking)  # as the last fetch saw it
        fetched = _remote.fetch(ledger, name, mem.settings.spaces.network_timeout_s)
        clock.mark("fetch")
        if not fetched.ok:
            raise _unreachable(mem, f"git fetch {name} failed: {fetched.err.strip()}", name, report)
        crash_point("pull-fetched")
        report.history_rewritten = history_rewritten(mem, tracking, known)
        _merge_upstream(mem, report, before_fetch, current, allow_unrelated=allow_unrelated)
        clock.mark("merge")
        crash_point("pull-merged")
        _commit_copies(mem, report, waiting)
        if report.saved and all(entry["merged"] for entry in report.saved):
            edits = _commit_hand_edits(mem, report)
            for entry in report.saved:
                entry.setdefault("commit", edits)
        report.after = ledger.head()
        paths = MemoryPaths.from_store(mem.settings.store)
        changed = set(_remote.changed_paths(ledger, before_fetch, report.after)) | set(arrived or [])
        report.changed = sorted(p for p in changed if paths.is_memory(p))
        if report.outcome == "merge" and report.tracking:
            theirs = _remote.rev(ledger, report.tracking)
            report.review_disputes = review_disputes(mem, before_fetch, theirs, report.changed)
            report.supersession_forks = supersession_forks(mem, report.changed)
        clock.mark("copies")
        _index(mem, report)
        clock.mark("index")
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


def _finish_previous(mem: Memory, report: PullReport) -> list[str] | None:
    """Finish a merge an interrupted pull (or a plain ``git pull``) left: what it brought in is news of this
    pull, so ``before`` becomes the commit before that merge and the paths it changed are returned (None when
    no merge was finished)."""
    pre_merge = mem.ledger.head() if _remote.merge_head(mem.ledger) is not None else None
    report.finished_previous = finish_merge(mem, report)
    if report.finished_previous != "finished":
        return None
    report.before = pre_merge
    return _remote.changed_paths(mem.ledger, pre_merge, mem.ledger.head())


def _tracking(mem: Memory, name: str, current: str) -> str:
    """The branch's upstream when it is on the remote pulled from; another remote (--remote) gives its own branch."""
    upstream = _remote.upstream(mem.ledger)
    return upstream if upstream is not None and upstream.startswith(f"{name}/") else f"{name}/{current}"


def _merge_upstream(mem: Memory, report: PullReport, head: str | None, current: str, *, allow_unrelated: bool) -> None:
    ledger, name = mem.ledger, report.remote
    tracking = report.tracking = _tracking(mem, name, current)
    target = _remote.rev(ledger, tracking)
    if target is None:
        report.remote_branches = _remote.remote_branches(ledger, name)
        report.outcome = "no-branch" if report.remote_branches else "remote-empty"
    elif head is not None and ledger.is_ancestor(target, head):
        report.outcome = "up-to-date"
    else:
        fast_forward = head is None or ledger.is_ancestor(head, target)
        if head is not None:
            base = _remote.merge_base(ledger, head, target)
            if base is None and not allow_unrelated and only_init(mem, head) and is_memory_repo(mem, target):
                report.saved += adopt(mem, head, target, current)
                report.outcome, report.adopted = "fast-forward", head
                return
            if base is None and not allow_unrelated:
                raise UsageError(_unrelated_message(mem, name, tracking, current, target))
            refuse_blocked(mem, tracking, head if base is None else base, target)
        _merge(mem, tracking, report, allow_unrelated=allow_unrelated)
        report.outcome = "fast-forward" if fast_forward else "merge"
    if report.finished_previous == "finished" and report.outcome in ("up-to-date", "fast-forward"):
        report.outcome = "merge"


def _unreachable(mem: Memory, what: str, name: str, report: PullReport | None = None) -> RemoteUnreachableError:
    """git could not talk to the remote: what to check, and what this pull did before it stopped."""
    url = _remote.remote_url(mem.ledger, name) or name
    message = (
        f"{what}\nCheck the remote's URL {url} (`git -C {mem.root} remote -v`); if the repository moved, "
        f"`git -C {mem.root} remote set-url {name} NEW-URL` points this clone at it"
    )
    problems = []
    if report is not None and report.finished_previous == "finished":
        message += (
            f"\nBefore fetching, the merge an interrupted pull left was finished and committed as "
            f"{(mem.ledger.head() or '')[:12]} (what it resolved is in details); nothing else was merged"
        )
        problems = [FieldProblem("resolved", r["how"], r["path"]) for r in report.resolved]
    elif report is not None and report.finished_previous == "aborted":
        message += "\nBefore fetching, a merge an interrupted pull left could not be finished and was aborted"
    return RemoteUnreachableError(message, problems=problems)


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


def _with_marker(mem: Memory, exc: UsageError) -> UsageError:
    """A pull that cannot pick a remote also says what to do about an earlier pull's marker it cannot clear
    (sync and writes wait for it)."""
    cut = pullmark.cut_merge(mem.git_dir, mem.ledger.head, mem.root, mem.ledger.parents)
    advice = pullmark.stuck_advice(cut, mem.git_dir / pullmark.PULL_MARKER, mem.root, has_remote=False)
    return exc if advice is None else UsageError(f"{exc}\nSync and writes are paused: {advice}")


def _commit_hand_edits(mem: Memory, report: PullReport | None = None) -> str | None:
    """Commit hand edits as ``sync run`` does, their vectors deferred; the files it indexes count towards
    ``report`` (given after finishing an interrupted merge, whose files this sync is the first to index)."""
    from remnic.sync.engine import SyncTarget, run_sync

    # Their vectors wait (BM25 at once): the model's seconds per hundred files are spent once the write lock is
    # released (:func:`embed_deferred`), not while writers wait for it.
    settings = replace(mem.settings, sync=replace(mem.settings.sync, defer_embeddings_above=0))
    target = SyncTarget(mem.root, mem.files, mem.ledger, settings, lambda: mem.index)
    synced = run_sync(target, Transaction(mem.files, mem.ledger), source="space")
    if report is not None:
        report.indexed += synced.indexed
        report.removed_from_index += synced.removed
        _add_problems(report, synced.problems)
    return synced.commit


def embed_deferred(mem: Memory, before: int) -> str | None:
    """With the write lock released: the vectors :func:`_commit_hand_edits` deferred, when more memories wait for
    theirs than ``before`` (the count when the command began; so a large adoption's backlog stays `sync run`'s).
    Why they could not be computed (they stay searchable by BM25; `remnic sync run` computes them), else None."""
    try:
        if mem.vectors_pending()[0] > before:
            mem.embed_pending()
    except Exception as exc:  # noqa: BLE001 - what was committed stands; the vectors wait for the next sync
        said = exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
        return f"{said}; `remnic sync run` computes them"
    return None


def _unrelated_message(mem: Memory, remote: str, tracking: str, current: str, target: str) -> str:
    url = _remote.remote_url(mem.ledger, remote) or remote
    space = mem.space_name()
    where = f"space {space!r} ({mem.root})" if space else str(mem.root)
    if is_memory_repo(mem, target):
        return f"not pulling {tracking} into {where}: it is {_two_inits(mem, remote, url, current=current)}"
    return (
        f"not pulling {tracking} into {where}: branch "
        f"{tracking.removeprefix(remote + '/')} of {remote} ({url}) shares no history with it, so it is probably "
        f"another repository (a project, another space). Check the URL (`git -C {mem.root} remote -v`); to merge "
        f"the two histories deliberately, run `{pull_command(mem, remote, current, '--allow-unrelated')}`"
    )


def pull_command(mem: Memory, remote: str, current: str | None, *flags: str) -> str:
    """``remnic space pull`` as advice: with ``--remote`` when ``remote`` is not the one it pulls by default."""
    default = _remote.remote_for(mem.ledger, current, mem.settings.spaces.remote)
    return " ".join(["remnic space pull", *(["--remote", remote] if remote != default else []), *flags])


def _two_inits(mem: Memory, remote: str, url: str, then: str = "", *, current: str | None = None) -> str:
    """Two clones of one empty remote each began with their own `remnic init` commit, then stored memories
    (said after "it is" / "its branch X is")."""
    return (
        "a memory repository whose history shares no commit with this one, which holds memories of its "
        "own. Two clones of one empty remote each start with their own `remnic init` commit: if "
        f"{url} is this space's remote, `{pull_command(mem, remote, current, '--allow-unrelated')}` joins the two "
        f"histories and keeps every memory of both{then}; if it is another space's, fix the URL "
        f"(`git -C {mem.root} remote set-url {remote} URL`)"
    )


def _merge(mem: Memory, tracking: str, report: PullReport, *, allow_unrelated: bool = False) -> None:
    message = format_message(
        f"remnic pull: merge {tracking}",
        trailers_for("pull", [], mem.settings.namespaces.default, "space", Remote=report.remote),
    )
    before = mem.ledger.head()
    result = run_merge(mem, tracking, message, allow_unrelated=allow_unrelated)
    crash_point("pull-merging")
    if result.ok:
        apply_merged(mem, before, report.pending_saves)
        # Only a merge commit made just now is amended: a fast-forward to the remote's own merge is shared.
        head = mem.ledger.head()
        made = before is not None and _remote.rev(mem.ledger, "HEAD^1") == before
        finish_merged(mem, report, resolve=made and head != _remote.rev(mem.ledger, tracking))
    elif _remote.merge_head(mem.ledger) is None:
        raise LedgerError(f"git merge failed and changed nothing: {(result.err or result.out).strip()}")
    else:
        apply_merged(mem, before, report.pending_saves)
        resolve_and_commit(mem, report)
    _keep_saves(mem, report)


def _keep_saves(mem: Memory, report: PullReport) -> None:
    """Saves that landed while a merge ran (left as saved): merged onto what the pull committed."""
    if report.pending_saves:
        report.saved += keep_saved(mem, report.pending_saves)
        report.pending_saves.clear()


def finish_merge(mem: Memory, report: PullReport | None = None) -> str | None:
    """A merge an interrupted pull (or a plain ``git pull``) left: resolve what is unmerged and commit
    it; if that cannot be done, abort it so the repository is as it was before. Caller holds the lock."""
    if _remote.merge_head(mem.ledger) is None:
        return None
    report = report or PullReport("", "")
    try:
        apply_merged(mem, mem.ledger.head(), report.pending_saves)  # what git merged in its scratch work tree
        resolve_and_commit(mem, report)
    except LedgerError:
        _remote.abort_merge(mem.ledger)
        return "aborted"
    _keep_saves(mem, report)
    return "finished"


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


def held_id(full: Path) -> str | None:
    """The ``id:`` line of a file's frontmatter, read line by line (the YAML may not parse); None without one."""
    try:
        lines = full.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff").splitlines()
    except OSError:
        return None
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        if line.startswith("id:"):
            value = line[3:].split(" #", 1)[0].strip().strip("'\"")
            return value or None
    return None


def _status_at(mem: Memory, path: str) -> str | None:
    checked = mem.files.check(path) if (mem.root / path).is_file() else None
    return checked.record.status if checked is not None and checked.record is not None else None


def _commit_copies(mem: Memory, report: PullReport, waiting: list[dict[str, Any]]) -> None:
    """One commit adding the other side's version of every true conflict the merge driver met; ``waiting``:
    the copies pending when the pull began (reported though committing hand edits committed them)."""
    log = mem.git_dir / _remote.CONFLICT_LOG
    if _logged_copies(mem) is None:
        return
    if _remote.merge_head(mem.ledger) is not None:  # a one-parent commit now would drop the merge's other side
        raise RepoBusyError(
            f"a merge is in progress in {mem.root}: `remnic space pull` finishes it, then commits copies"
        )
    pending = pending_copies(mem)
    tx = Transaction(mem.files, mem.ledger)
    for entry in pending:
        tx.put(entry["copyPath"], (mem.root / entry["copyPath"]).read_bytes(), on_disk=True)
    entries = list({e["copyPath"]: e for e in [*waiting, *pending]}.values())
    for entry in entries:
        if entry.get("kind") == "malformed":  # kept byte for byte: the id is the one its text holds, if any
            entry["copyId"] = held_id(mem.root / entry["copyPath"])
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
    report.malformed_conflicts = [e for e in entries if e.get("kind") == "malformed"]
    for entry in report.malformed_conflicts:
        for path in (entry["path"], entry["copyPath"]):
            _add_problems(report, mem.files.check(path).problems if (mem.root / path).is_file() else [], path)
    log.unlink(missing_ok=True)


def _add_problems(report: PullReport, found: list[FieldProblem], path: str | None = None) -> None:
    """Malformed memory files the pull brought in or left, each problem once (file, line, field)."""
    for problem in found:
        entry = problem.to_dict()
        entry.setdefault("path", path)
        if entry not in report.problems:
            report.problems.append(entry)


def _index(mem: Memory, report: PullReport) -> None:
    """The index follows the merge: sync's incremental path over what changed since it last looked."""
    from remnic.sync.engine import SyncTarget, run_sync

    target = SyncTarget(mem.root, mem.files, mem.ledger, mem.settings, lambda: mem.index)
    try:
        synced = run_sync(target, Transaction(mem.files, mem.ledger), commit=False, normalize=False, source="space")
    except Exception as exc:  # noqa: BLE001 - the merge landed: an index that could not follow catches up later
        report.index_behind = exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
        return
    report.indexed += synced.indexed
    report.removed_from_index += synced.removed
    _add_problems(report, synced.problems)
