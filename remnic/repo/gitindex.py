"""Git's own index moved with HEAD under git's ``index.lock``, so no ``git commit`` sees one without the other.

remnic builds its commits without the index, so the index must follow HEAD. If HEAD moved first and
the index followed in a second step, a user's ``git commit`` landing between the two would build its
tree from the old index on top of the new HEAD and record remnic's new files as deleted.

So a commit takes ``index.lock`` (``O_CREAT|O_EXCL``, as git does), writes the new index into a temp
file, renames it over the index, moves HEAD by compare-and-swap and only then releases the lock. The
index goes in place *before* HEAD moves because ``git commit`` reads HEAD, then the index, and takes
the lock only after both: in this order it can read the old HEAD with the new index (its own
compare-and-swap on HEAD then refuses the commit), never the new HEAD with the old index. A git
command that wants the lock meanwhile fails with git's own "index.lock': File exists".

The old index is kept as a hard link until HEAD has moved: a compare-and-swap that fails puts it back.
A process killed while it holds the lock would leave git locked for good, so a marker in ``.remnic/``
names the lock (device, inode, mtime), the backup, the commit and the paths. The next writer, under
remnic's write lock, finds the holder dead, puts the old index back if the commit never reached HEAD
(else records the paths for repair), and removes the lock if it is still that very file.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from remnic.errors import LedgerError
from remnic.fsio import crash_point, pid_alive, write_atomic

from .pullmark import PULL_MARKER as PULL_MARKER  # where callers have always found it
from .pullmark import cut_merge as cut_merge

MARKER = "git-index-lock.json"

# Locks this process holds right now: a marker naming this pid is live while its lock is here.
_HELD: set[Path] = set()
_HELD_GUARD = threading.Lock()


def index_path(git_dir: Path, root: Path) -> Path:
    """The index git uses here: ``GIT_INDEX_FILE`` (as git reads it, relative to the work tree) or the default."""
    given = os.environ.get("GIT_INDEX_FILE")
    return root / given if given else git_dir / "index"


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_mtime_ns]


def _link_or_copy(src: Path, dst: Path) -> bool:
    """``dst`` names what ``src`` holds now (a hard link: free; a copy where links are refused). False: no ``src``."""
    try:
        os.link(src, dst)
    except FileNotFoundError:
        return False
    except OSError:
        shutil.copyfile(src, dst)
    return True


@dataclass
class Stale:
    """What a dead holder left (see the module's docstring)."""

    commit: str | None
    paths: list[str]
    lock: str | None = None
    identity: list[int] | None = None
    index: str | None = None
    backup: str | None = None  # None: there was no index before
    temps: list[str] | None = None


class IndexLock:
    """One hold of git's ``index.lock``, from before the new index goes in place until HEAD has moved."""

    def __init__(self, index: Path, marker: Path) -> None:
        self.index = index
        self.lock = index.with_name(index.name + ".lock")
        self.marker = marker
        tag = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.temp = index.with_name(f"{index.name}.remnic-new-{tag}")
        self.backup = index.with_name(f"{index.name}.remnic-old-{tag}")
        self.held = False
        self.installed = False
        self._had_index = False
        self._identity: list[int] = []

    def acquire(self, timeout_s: float) -> bool:
        """Take the lock, retrying while git holds it (``git add``, a ``git commit -a`` with its editor open); False on timeout."""
        deadline = time.monotonic() + timeout_s
        delay = 0.01
        while True:
            try:
                fd = os.open(self.lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
                continue
            try:
                self._identity = _identity(os.fstat(fd))
            finally:
                os.close(fd)
            with _HELD_GUARD:
                _HELD.add(self.lock)
            self.held = True
            return True

    def mark(self, commit: str, paths: Sequence[str]) -> None:
        """Say who holds the lock, before anything else happens under it, so a crash from here on is found."""
        self._had_index = self.index.exists()
        data = {
            "pid": os.getpid(),
            "lock": str(self.lock),
            "identity": self._identity,
            "index": str(self.index),
            "backup": str(self.backup) if self._had_index else None,
            "temps": [str(self.temp), str(self.backup)],
            "commit": commit,
            "paths": list(paths),
        }
        # Not fsync'd, like the write journal: it guards against a killed process, whose page cache survives.
        write_atomic(self.marker, json.dumps(data), durable=False)

    def stage(self, update: Callable[[Path], None]) -> None:
        """``update`` edits a copy of the index (given its path; git replaces that file, never the index's inode)."""
        if self._had_index:
            _link_or_copy(self.index, self.temp)
        update(self.temp)

    def install(self) -> None:
        """Keep the old index (until HEAD has moved) and put the new one in place."""
        if self._had_index:
            _link_or_copy(self.index, self.backup)
        os.replace(self.temp, self.index)
        self.installed = True

    def roll_back(self) -> None:
        """HEAD did not move: the index goes back to what it was (nobody else could write it meanwhile)."""
        if self.installed:
            if self._had_index:
                os.replace(self.backup, self.index)
            else:
                _unlink(self.index)
            self.installed = False

    def release(self) -> None:
        """Drop the lock and what this hold left; the index stays as it is now."""
        if not self.held:
            return
        _unlink(self.temp)
        _unlink(self.backup)
        _unlink(self.lock)
        with _HELD_GUARD:
            _HELD.discard(self.lock)
        self.held = False
        _unlink(self.marker)


def move_head(
    hold: IndexLock,
    timeout_s: float,
    commit: str,
    paths: Sequence[str],
    stage: Callable[[Path], None],
    move: Callable[[], bool],
    still: Callable[[], bool],
) -> tuple[bool, str | None]:
    """Take git's index.lock, ``stage`` the new index in a copy, put it in place, ``move`` HEAD, release.

    Returns (False, None) when HEAD moved on (``still`` says so once the lock is held, or ``move``
    found it; the index is put back), else (True, why git's index could not follow, or None).
    Without the lock after ``timeout_s``, or if staging fails, HEAD still moves: the write stands
    and the caller records the lag for repair.
    """
    lag: str | None = None
    moved = False
    try:
        if hold.acquire(timeout_s):
            if not still():  # a `git commit` finished before we got the lock: rebuild on its HEAD
                return False, None
            hold.mark(commit, paths)
            try:
                hold.stage(stage)
            except LedgerError as exc:
                lag = str(exc)  # HEAD still moves under the lock; the index is repaired later
            else:
                hold.install()
                crash_point("index-installed")
        else:
            lag = f"Unable to create '{hold.lock}': File exists (git's index.lock)"
        moved = move()
        if not moved:
            return False, None
        crash_point("head-moved")
    finally:
        if not moved:
            hold.roll_back()  # HEAD stayed: so does git's index
        hold.release()
    return True, lag


def stale(marker: Path) -> Stale | None:
    """What a holder that died holding git's index.lock left (None when there is no marker, or it lives)."""
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        pid, lock = int(data["pid"]), str(data["lock"])
        left = Stale(
            data.get("commit"),
            [str(p) for p in data.get("paths", [])],
            lock,
            data.get("identity"),
            data.get("index"),
            data.get("backup"),
            [str(t) for t in data.get("temps", [])],
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return Stale(None, [])  # unreadable, so no live holder wrote it (it is renamed into place whole)
    if pid == os.getpid():
        with _HELD_GUARD:
            if Path(lock) in _HELD:
                return None
    elif pid_alive(pid):
        return None
    return left


def clear_stale(marker: Path, committed: Callable[[str], bool], record: Callable[[list[str]], object]) -> Stale | None:
    """Undo what a dead remnic writer left holding git's index.lock (call under remnic's write lock).

    ``record`` hears the paths git's index may lag on; every step is done before the marker goes, so a
    crash in here leaves the marker and the next call does it all again."""
    left = stale(marker)
    if left is None:
        return None
    try:
        ours = left.lock is not None and _identity(os.stat(left.lock)) == left.identity
    except OSError:
        ours = False
    in_head = bool(left.commit) and committed(str(left.commit))
    if ours and not in_head and left.index is not None:
        # Still locked since it died, so nobody wrote the index meanwhile: put back the one it replaced.
        if left.backup is None:
            _unlink(Path(left.index))
        elif Path(left.backup).exists():
            os.replace(left.backup, left.index)
    elif left.paths:
        record(left.paths)  # someone may have written the index since, or HEAD has the commit: reset them
    for temp in left.temps or []:
        _unlink(Path(temp))
    if ours and left.lock is not None:
        _unlink(Path(left.lock))  # a lock git took since is another file and stays
    _unlink(marker)
    return left


def stale_paths(marker: Path) -> list[str]:
    """Paths a dead holder may have left git's index behind on (doctor, and opening a repository)."""
    if not marker.exists():  # the usual case: one stat
        return []
    left = stale(marker)
    return left.paths if left is not None else []


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)
