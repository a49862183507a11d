"""The marker ``space pull`` keeps in the git directory around its ``git merge``, and what it says now.

``.git/remnic-pull-merge.json`` holds HEAD before the merge (``head``), the commit merged (``target``,
``tracking``), git's ``pid`` and when the pull began (``started``, epoch seconds). It stays until the pull
has finished with the merge, so a pull killed at any point leaves one of:

- ``running``: git still merges (its pid is a live ``git`` process of this repository started after
  ``started``); it commits or stops on its own;
- ``cut``: git was killed before it committed or wrote MERGE_HEAD, so the working tree holds part of the
  merge (not hand edits);
- ``committed``: git committed the merge (HEAD's parents are ``head`` and ``target``) or fast-forwarded to
  ``target`` (HEAD is ``target``; a first pull adopting the remote's history too), but the pull died before it
  finished with it: the working tree may still hold files from before the merge (git writes into a scratch
  work tree, :mod:`remnic.service.pull_guard`), which the next pull brings over; until then sync pauses.

A pid the system gave to another process since (after a reboot, in a container) is not git's: on Linux
``/proc`` says what the process runs, where and since when; elsewhere a merge older than
:data:`RUNNING_LIMIT_S` is taken as dead.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from remnic.fsio import pid_alive

PULL_MARKER = "remnic-pull-merge.json"

RUNNING_LIMIT_S = 3600.0
"""Without ``/proc``: a merge's git older than this is taken as dead (its pid may be another process now)."""

STUCK_S = 120.0
"""doctor fails, not warns, on a merge still running after this long."""

_SLACK_S = 2.0  # the boot time /proc gives is whole seconds


def _proc_start(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds), from /proc; None when /proc cannot say."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace").rsplit(")", 1)[-1].split()
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text(encoding="ascii").splitlines()
            if line.startswith("btime ")
        )
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def merging_git(pid: object, started: object, root: Path | None) -> bool:
    """Whether ``pid`` is still the pull's ``git merge``: a live git process, working in ``root``, started
    after ``started``. Without /proc, a live pid counts for :data:`RUNNING_LIMIT_S` after ``started``."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or not pid_alive(pid):
        return False
    since = float(started) if isinstance(started, (int, float)) and not isinstance(started, bool) else None
    proc = Path(f"/proc/{pid}")
    if not proc.is_dir():
        return since is not None and time.time() - since < RUNNING_LIMIT_S
    try:
        argv = (proc / "cmdline").read_bytes().split(b"\0")
        cwd = Path(os.readlink(proc / "cwd"))
    except OSError:
        return False  # not ours to read: git runs as this user
    if os.path.basename(argv[0]) != b"git" or b"merge" not in argv[1:]:
        return False
    if root is not None and cwd.resolve() != root.resolve():
        return False
    began = _proc_start(pid)
    return since is not None and began is not None and began >= since - _SLACK_S


def cut_merge(
    git_dir: Path,
    head: Callable[[], str | None],
    root: Path | None = None,
    parents: Callable[[str], list[str]] | None = None,
) -> dict[str, Any] | None:
    """The marker of a pull that did not finish its merge, with ``state`` (``running``, ``cut`` or
    ``committed``, see the module docstring) and ``running`` (bool); None when there is no marker, git
    stopped in the merge (MERGE_HEAD: finishing that merge is the next pull's first step) or HEAD moved
    elsewhere since (the marker is stale)."""
    try:
        data = json.loads((git_dir / PULL_MARKER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # written whole (renamed into place), so unreadable means no pull wrote it
    if not isinstance(data, dict) or (git_dir / "MERGE_HEAD").exists():
        return None
    now = head()
    if data.get("head") == now:
        tree = data.get("tree")  # the scratch work tree git ran in (:mod:`remnic.service.pull_guard`)
        data["running"] = merging_git(
            data.get("pid"), data.get("started"), Path(tree) if isinstance(tree, str) else root
        )
        data["state"] = "running" if data["running"] else "cut"
        return data
    if (
        now is not None
        and data.get("head")
        and (
            # git fast-forwarded (or the pull adopted the remote's history): HEAD is the commit merged, and the
            # working tree may still hold the files from before, which are not hand edits
            now == data.get("target") or (parents is not None and parents(now) == [data["head"], data.get("target")])
        )
    ):
        data["running"], data["state"] = False, "committed"
        return data
    return None


def describe(state: str) -> str:
    """``Ledger.in_progress``'s words for a marker's state."""
    return {
        "running": "a pull's git merge is still running",
        "cut": "a pull's merge was cut short",
        "committed": "a pull was killed before it finished its merge",
    }[state]


def busy_hint(git_dir: Path, underway: str) -> str:
    """What a refused write adds to ``underway``: who finishes it and, for a pull's marker, its file."""
    if "merge" not in underway:
        return ""
    if underway == describe("cut"):
        marker = git_dir / PULL_MARKER
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and not names_commits(data):
            return f" ({stuck_advice({**data, 'running': False}, marker, git_dir.parent, has_remote=True)})"
    if underway != describe("running"):
        return " (`remnic space pull` finishes it)"
    try:
        pid = json.loads((git_dir / PULL_MARKER).read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        pid = None
    return (
        f" (git, pid {pid}, as {git_dir / PULL_MARKER} records; `remnic space pull` finishes the merge once git "
        f"ends, or stop git first: `kill {pid}`)"
    )


def names_commits(cut: dict[str, Any]) -> bool:
    """Whether a marker names the commits a pull needs to undo or finish its merge (``head`` and ``target``)."""
    return isinstance(cut.get("head"), str) and isinstance(cut.get("target"), str)


def stuck_advice(cut: dict[str, Any] | None, marker: Path, root: Path, *, has_remote: bool) -> str | None:
    """What to do about a marker ``remnic space pull`` cannot clear (it names no commits, or the repository has
    no remote to merge again from); None when the pull clears it, or git still runs (it ends on its own)."""
    if cut is None or cut["running"]:
        return None
    if not names_commits(cut):
        missing = " and ".join(f"`{key}`" for key in ("head", "target") if not isinstance(cut.get(key), str))
        return (
            f"{marker} names no commits (no {missing}), so `remnic space pull` cannot finish that merge: "
            f"delete that file, then check `git -C {root} status`; sync commits what is uncommitted there as hand "
            f"edits, so first put back any file you do not want (`git -C {root} restore PATH`)"
        )
    if has_remote:
        return None
    then = (
        "what git wrote stays as uncommitted changes, which sync commits as hand edits"
        if cut["state"] == "cut"
        else "a memory rewritten and moved on both sides may stay two files under one id"
    )
    return (
        f"{marker} is left by a pull whose merge did not finish, and `remnic space pull` needs a remote to finish it "
        f"but {root} has none: add it back (`git -C {root} remote add origin URL`) and pull, or delete that file "
        f"({then})"
    )
