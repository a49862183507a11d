"""``space push``: hand edits committed, then the branch pushed (its upstream set the first time); when the
remote has moved it refuses with :class:`~remnic.errors.RemoteMovedError`, naming another repository's
history for what it is."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from remnic.errors import PushRejectedError, RemoteMovedError, RepoBusyError, UsageError
from remnic.fsio import crash_point
from remnic.memfile.paths import MemoryPaths
from remnic.repo import remote as _remote

from .pull import (
    _commit_hand_edits,
    _pick_remote,
    _tracking,
    _two_inits,
    _unreachable,
    embed_deferred,
    pull_command,
)
from .pull_guard import is_memory_repo, only_init
from .pull_review import history_rewritten

if TYPE_CHECKING:
    from .memory import Memory


def push(mem: Memory, remote: str | None = None) -> dict[str, Any]:
    """Commit hand edits, then push the branch; the first push sets its upstream."""
    started = time.perf_counter()
    mem.settle_index()
    ledger = mem.ledger
    waiting = mem.vectors_pending()[0]
    with mem.committer.exclusive():
        underway = ledger.in_progress()
        if underway is not None:
            raise RepoBusyError(f"cannot push: {underway} (`remnic space pull` finishes a pull's merge)")
        current = _remote.branch(ledger)
        if current is None:
            raise UsageError("HEAD is detached (not on a branch); check out a branch, then push")
        name = _pick_remote(mem, current, remote)
        edits = _commit_hand_edits(mem)
        left = _left_behind(mem)
        first = _remote.upstream(ledger) is None
        result = _remote.push(ledger, name, current, set_upstream=first, timeout=mem.settings.spaces.network_timeout_s)
        crash_point("pushed")
    behind = embed_deferred(mem, waiting)  # the hand edits' vectors, with the write lock released
    if not result.ok:
        said = (result.err or result.out).strip()
        if _remote.rejected(result):
            raise RemoteMovedError(_moved_message(mem, name, current))
        if _remote.refused_by_remote(result):
            raise PushRejectedError(
                f"push to {name} refused by the remote itself (a hook or a protected branch), nothing pushed: "
                f"{said}\nIts owner decides what it accepts; its message above says why"
            )
        raise _unreachable(mem, f"git push {name} failed: {said}", name)
    up_to_date = "[up to date]" in result.out
    uncommitted = sorted(left["malformed"] + left["changed"])
    return {
        "remote": name,
        "branch": current,
        "head": ledger.head(),
        "upstreamSet": first,
        "pushed": not up_to_date,
        "editsCommit": edits,
        "uncommitted": uncommitted,
        "untracked": left["untracked"],
        "warnings": _left_warnings(left) + ([{"field": "vectors", "message": behind}] if behind else []),
        "elapsedMs": round((time.perf_counter() - started) * 1000, 1),
    }


def _left_behind(mem: Memory) -> dict[str, list[str]]:
    """What committing hand edits left behind, which a push does not carry (saying nothing would read as
    "everything is pushed"): memory files sync would not commit (malformed), changed tracked files that are
    not memories, and untracked files that are not memories."""
    paths = MemoryPaths.from_store(mem.settings.store)
    left: dict[str, list[str]] = {"malformed": [], "changed": [], "untracked": []}
    for xy, path, _ in mem.ledger.status_porcelain():
        kind = "malformed" if paths.is_memory(path) else "untracked" if xy == "??" else "changed"
        left[kind].append(path)
    return {kind: sorted(set(found)) for kind, found in left.items()}


def _shown(found: list[str]) -> str:
    return ", ".join(found[:10]) + (", …" if len(found) > 10 else "")


def _left_warnings(left: dict[str, list[str]]) -> list[dict[str, str]]:
    parts = []
    if left["malformed"]:
        parts.append(
            f"{_shown(left['malformed'])} (a malformed memory file is left uncommitted until fixed: "
            "`remnic doctor` names the problem)"
        )
    if left["changed"]:
        parts.append(f"{_shown(left['changed'])} (a changed file that is not a memory: commit it with git)")
    warnings = []
    if parts:
        count = len(left["malformed"]) + len(left["changed"])
        warnings.append(
            {"field": "uncommitted", "message": f"{count} uncommitted change(s) were not pushed: " + "; ".join(parts)}
        )
    if left["untracked"]:
        warnings.append(
            {
                "field": "untracked",
                "message": f"{len(left['untracked'])} untracked file(s) that are not memories were not pushed: "
                f"{_shown(left['untracked'])} (`git add` and commit them to share them, or list them in .gitignore)",
            }
        )
    return warnings


def _moved_message(mem: Memory, remote: str, current: str) -> str:
    """Why the remote refused the push and what to do; a branch sharing no history with this one (another
    project's repository) must not be answered with "pull", which would merge the two."""
    moved = (
        f"push to {remote} refused: the remote has commits this repository does not have yet; "
        f"run `{pull_command(mem, remote, current)}`, then push again"
    )
    tracking = _tracking(mem, remote, current)
    known = _remote.rev(mem.ledger, tracking)  # as the last fetch saw it: the fetch below moves it
    if not _remote.fetch(mem.ledger, remote, mem.settings.spaces.network_timeout_s).ok:
        return moved
    rewritten = history_rewritten(mem, tracking, known)
    if rewritten is not None:
        # Said here: after this fetch the pull it asks for can no longer see the rewrite.
        return (
            f"push to {remote} refused: the remote's history was rewritten (force-pushed): "
            f"{rewritten['dropped']} commit(s) it had are gone from {tracking}, {rewritten['kept']} of them in "
            f"this clone's history; `{pull_command(mem, remote, current)}` merges the two and the next push puts those commits "
            "back on the remote — if they were dropped on purpose, ask whoever rewrote it first"
        )
    theirs, head = _remote.rev(mem.ledger, f"{remote}/{current}"), mem.ledger.head()
    if theirs is None or head is None or _remote.merge_base(mem.ledger, head, theirs) is not None:
        return moved
    url = _remote.remote_url(mem.ledger, remote) or remote
    if is_memory_repo(mem, theirs):
        if only_init(mem, head):
            pull = f"run `{pull_command(mem, remote, current)}`"
            return moved.replace(
                pull, f"{pull} (this clone holds only its `remnic init` commit: it takes the remote's history)"
            )
        said = _two_inits(mem, remote, url, ", then push", current=current)
        return f"push to {remote} refused: its branch {current} is {said}"
    return (
        f"push to {remote} refused: its branch {current} ({url}) shares no history with {mem.root}, so it is "
        f"probably another repository (a project, another space). Check the URL (`git -C {mem.root} remote -v`, "
        f"`git -C {mem.root} remote set-url {remote} URL`); `remnic space pull` refuses to merge unrelated "
        f"histories unless you mean it: `{pull_command(mem, remote, current, '--allow-unrelated')}`, then push"
    )
