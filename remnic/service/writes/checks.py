"""The checks a write makes before it stages anything: may this repository take a commit now, and are the
ids a new memory names free (its own) and there (the one it supersedes)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import NotFoundError, RepoBusyError, UsageError, ValidationError
from remnic.memfile.model import MemoryRecord
from remnic.repo.gitindex import index_path
from remnic.repo.head import DetachedHeadError
from remnic.repo.transaction import Transaction

from ..superseding import superseded_target

if TYPE_CHECKING:
    from ..memory import Memory

GIT_AT_WORK_WAIT_S = 3.0
"""How long a write waits for a git command to finish the merge (rebase, cherry-pick, revert) it is
making before refusing: a plain ``git pull`` holds git's index.lock while it merges, then MERGE_HEAD
while it commits, a moment each."""

_POLL_S = 0.02
# The files git keeps while it is in the middle of one of these steps (Ledger.in_progress's names).
_STEP_FILES = {
    "a merge": ("MERGE_HEAD",),
    "a rebase": ("rebase-merge", "rebase-apply"),
    "a cherry-pick": ("CHERRY_PICK_HEAD",),
    "a revert": ("REVERT_HEAD",),
}


def check_writable(mem: Memory) -> None:
    """Refuse to commit where the commit would be lost or tangled (detached HEAD, a merge underway).

    A merge that git is still making (its index.lock held, or its MERGE_HEAD just written) is waited
    for, up to :data:`GIT_AT_WORK_WAIT_S`: a ``git pull`` run beside an agent's writes is no refusal."""
    reason = _settled_reason(mem)
    if reason is not None:
        if "detached" in reason:  # a code of its own: no wait ends it, a checkout of a branch does
            raise DetachedHeadError(f"cannot write memories now: {reason}; check out a branch, then retry")
        if "conflicts" in reason:
            hint = "resolve them, then retry"
        else:  # a merge names `remnic space pull` itself
            hint = "then retry" if "remnic space pull" in reason else "finish it, then retry"
        lock = _git_index_lock(mem)
        if _git_step(reason) is not None and lock.exists():
            reason += (
                f"; git has held {lock} for over {GIT_AT_WORK_WAIT_S:g} s (a git command still at work there, "
                "or one that died: remove that file if no git runs)"
            )
        raise RepoBusyError(f"cannot write memories now: {reason}; {hint}")
    read_only = mem.read_only_space()
    if read_only is not None:
        raise UsageError(
            f"space {read_only!r} is read-only in your spaces registry: remnic does not write to it "
            "(pull it to refresh it; register it without --read-only to write)"
        )


def _settled_reason(mem: Memory) -> str | None:
    """Why committing now would be wrong, once a git command finishing its step has had time to end."""
    reason = mem.ledger.busy_reason()
    if reason is None or not _git_at_work(mem, reason):
        return reason
    deadline = time.monotonic() + GIT_AT_WORK_WAIT_S
    while reason is not None and _git_step(reason) is not None and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        reason = mem.ledger.busy_reason()
    return reason


def _git_step(reason: str) -> str | None:
    """The git step (``a merge``, …) ``reason`` says git is in the middle of, or None (another reason)."""
    return next((step for step in _STEP_FILES if reason.startswith(f"{step} is in progress")), None)


def _git_at_work(mem: Memory, reason: str) -> bool:
    """Whether a git command is likely still making the step ``reason`` names: it holds git's index.lock,
    or wrote the step's file just now. A merge stopped on conflicts long ago is refused without a wait."""
    step = _git_step(reason)
    if step is None:
        return False
    if _git_index_lock(mem).exists():
        return True
    git_dir = Path(mem.ledger.repo.git_dir)
    for name in _STEP_FILES[step]:
        try:
            if time.time() - (git_dir / name).stat().st_mtime < GIT_AT_WORK_WAIT_S:
                return True
        except OSError:
            continue
    return False


def _git_index_lock(mem: Memory) -> Path:
    index = index_path(Path(mem.ledger.repo.git_dir), mem.ledger.root)
    return index.with_name(index.name + ".lock")


def check_named_ids(
    mem: Memory, tx: Transaction | None, meta: Mapping[str, Any], extra: Mapping[str, Any] | None, ns: str
) -> MemoryRecord | None:
    """The ids a new memory names, checked (``tx`` None: a dry run): a caller-chosen id must be free, and
    the memory it supersedes must exist in ``ns`` and be supersedable; returns that memory."""
    if extra and "id" in extra:
        _check_id_free(mem, tx, meta["id"])
    return superseded_target(mem, meta["supersedes"], ns) if meta.get("supersedes") else None


def _check_id_free(mem: Memory, tx: Transaction | None, memory_id: str) -> None:
    """A caller-chosen id must be no other memory's, on disk or staged by a write batched before this one."""
    staged = next((r for r in tx.staged_records() if r.id == memory_id), None) if tx is not None else None
    try:
        taken = staged or mem.get(memory_id)
    except NotFoundError:
        return
    raise ValidationError.single(
        "extra.id", f"{memory_id!r} already exists ({taken.path}); leave id out for a new one, or update that memory"
    )
