"""Filesystem primitives every layer shares: atomic writes, durable flushes, safe reads, pid checks.

Nothing here knows what a memory is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

try:
    import fcntl
except ImportError:  # not a POSIX system: no leases
    fcntl = None  # type: ignore[assignment]


def crash_point(name: str) -> None:
    """Kill this process on the spot when ``REMNIC_CRASH_AT`` names this point: how the fault tests
    crash a writer at an exact step (a kill -9 there), which timing alone cannot do reliably."""
    if os.environ.get("REMNIC_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def pid_alive(pid: int) -> bool:
    """Whether a process that wrote a pid file or lock marker still runs (a zombie does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not running
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


class NotRegularFile(OSError):
    """A memory path that is a symlink, a folder or a device: never read through, never indexed."""


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file, refusing symlinks (O_NOFOLLOW) and anything that is not a plain file.

    Following a link would let a committed ``facts/x.md -> ~/.ssh/id_rsa`` leak the target
    into commits and recall results.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFile(
                errno.ELOOP, "is a symbolic link; memory files must be regular files", str(path)
            ) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "is not a regular file", str(path))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_atomic(
    path: Path, data: str | bytes, *, mode: int | None = None, durable: bool = True, tmp_dir: Path | None = None
) -> None:
    """Write via a temp file, fsync, then rename over the target.

    The temp file sits in ``tmp_dir`` (same filesystem; memory files use the git-ignored
    ``.remnic/tmp`` so a crash never leaves a file that ``git add -A`` would pick up), else
    next to the target. ``durable=False`` skips the fsyncs: bulk writers call
    :func:`flush_to_disk` once instead (one ``sync`` beats thousands of fsyncs) before they commit.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if tmp_dir is not None:
        tmp_dir.mkdir(parents=True, exist_ok=True)
        tmp = tmp_dir / f"{os.getpid()}-{secrets.token_hex(4)}.tmp"
    else:
        tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(3)}"
    raw = data.encode("utf-8") if isinstance(data, str) else data
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    fd = os.open(tmp, flags, mode if mode is not None else 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if mode is None and path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    if not durable:
        return
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


_FSYNC_THREADS = 16


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_all(paths: Sequence[Path]) -> None:
    """fsync every path (files or folders) at once, from threads: the filesystem's journal commits
    the concurrent fsyncs together, where one after another each waits for a commit of its own
    (16 small files: ~5 ms instead of ~60 ms). The first failure is raised after all have run."""
    errors: list[OSError] = []
    lock = threading.Lock()
    todo = iter(paths)

    def work() -> None:
        while True:
            with lock:
                path = next(todo, None)
            if path is None:
                return
            try:
                _fsync_path(path)
            except OSError as exc:
                with lock:
                    errors.append(exc)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(len(paths), _FSYNC_THREADS) - 1)]
    for t in threads:
        t.start()
    work()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def stage_files(items: Sequence[tuple[Path, bytes]], *, tmp_dir: Path, durable: bool = True) -> list[Path]:
    """Write each ``(path, data)``'s new bytes to a temp file of its own in ``tmp_dir`` (same filesystem,
    the target's mode when it exists), fsync'd all at once (:func:`fsync_all`) when ``durable``; returns
    the temp files in order, for the caller to rename over their targets. A failure leaves none behind."""
    tmp_dir.mkdir(parents=True, exist_ok=True)
    staged: list[Path] = []
    try:
        for path, raw in items:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = tmp_dir / f"{os.getpid()}-{secrets.token_hex(4)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            staged.append(tmp)
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
        if durable:
            fsync_all(staged)
    except BaseException:
        for tmp in staged:
            tmp.unlink(missing_ok=True)
        raise
    return staged


def fsync_folders(paths: Sequence[Path]) -> None:
    """fsync the folders holding ``paths`` (once each), so renames into them survive a power loss; best effort."""
    try:
        fsync_all(list(dict.fromkeys(path.parent for path in paths)))
    except OSError:
        pass


def write_atomic_many(items: Sequence[tuple[Path, bytes]], *, tmp_dir: Path) -> None:
    """:func:`write_atomic` of several files, durable as each of them would be, with the fsyncs of all
    at once: every temp file is written and fsync'd (:func:`stage_files`) before any is renamed over
    its target, in order, and then each folder is fsync'd once. A failure before the renames
    changes no target; during them, the targets renamed so far keep their new bytes."""
    staged = list(zip((path for path, _ in items), stage_files(items, tmp_dir=tmp_dir), strict=True))
    try:
        while staged:
            path, tmp = staged[0]
            os.replace(tmp, path)
            staged.pop(0)
    finally:
        for _, tmp in staged:
            tmp.unlink(missing_ok=True)
    fsync_folders([path for path, _ in items])


def flush_to_disk() -> None:
    """Make every write so far durable (after a batch of ``durable=False`` writes)."""
    os.sync()


def sweep_litter(tmp_dir: Path) -> int:
    """Remove temp files left in ``tmp_dir`` by processes that are gone (named ``<pid>-…``)."""
    removed = 0
    try:
        entries = list(os.scandir(tmp_dir))
    except FileNotFoundError:
        return 0
    for entry in entries:
        pid = entry.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            try:
                os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


# --- replacing a file only if it still holds what was read ---
#
# A writer that keeps a file open and pauses (a script writing in two halves, an ``r+`` handle
# appending) writes through its handle; renaming a new copy over the path would leave that handle
# on the orphaned old inode, and all it writes afterwards would be lost. On Linux a *read lease*
# tells, without reading anything into the file: it cannot be taken while any open file description
# (of another process, or another one of ours) has the file open for writing, and an open for
# writing while it is held breaks it, which ``F_GETLEASE`` shows. Holding one across the
# compare-and-rename therefore also catches a writer opening the file in between. Readers do not
# count: a stale inode only costs them a stale read. Where leases are unavailable (another system,
# a filesystem that refuses them, a file owned by another user) it is compare, then rename.
# Sync replaces the files it normalises so (remnic.sync.held), and so does every write transaction.

REPLACED, CHANGED, HELD = "replaced", "changed", "held"

_SUPPORTED = fcntl is not None and hasattr(fcntl, "F_SETLEASE") and hasattr(fcntl, "F_SETSIG")
_HELD_ERRNOS = {errno.EAGAIN, errno.EBUSY, errno.EWOULDBLOCK}
# The kernel tells a lease holder that someone is opening the file with a signal, SIGIO by
# default, whose default action kills the process; SIGURG's default action is to ignore it.
_BREAK_SIGNAL = signal.SIGURG if hasattr(signal, "SIGURG") else 0


def _lease(fd: int) -> bool | None:
    """Take a read lease on ``fd``: True taken, False (someone has the file open for writing), None when
    leases are unavailable here."""
    if not _SUPPORTED:
        return None
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, _BREAK_SIGNAL)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return False if exc.errno in _HELD_ERRNOS else None  # EINVAL, ENOLCK, EPERM, EACCES: unavailable
    return True


def _breaking(fd: int) -> bool:
    """Whether an open for writing is waiting on our lease (it then reports the type it is broken to)."""
    try:
        return bool(fcntl.fcntl(fd, fcntl.F_GETLEASE) != fcntl.F_RDLCK)
    except OSError:
        return True


def _release(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)


def _open_plain(path: Path) -> int | None:
    """A read-only descriptor; O_NONBLOCK so a lease of another program fails the open instead of
    waiting on it. None: gone, not a plain file, or not readable."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags)
    except OSError:
        return None


def held_open(path: Path) -> bool:
    """Whether another open file description has ``path`` open for writing (False when it cannot be told)."""
    fd = _open_plain(path)
    if fd is None:
        return False
    try:
        taken = _lease(fd)
        if taken:
            _release(fd)
        return taken is False
    finally:
        os.close(fd)


def _read_fd(fd: int) -> bytes:
    # Read through the leased descriptor: opening the path again would break our own lease.
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _put(path: Path, staging: Path | None) -> None:
    """Rename ``staging`` over ``path``, or remove ``path`` when there is no staging file."""
    if staging is None:
        os.unlink(path)
    else:
        os.replace(staging, path)


def _create_unless_taken(path: Path, staging: Path | None) -> str:
    """Put ``staging`` at ``path`` only if nothing is there: a hard link fails on any entry that exists,
    so a file made there meanwhile is never overwritten (check-then-rename where links are refused)."""
    if staging is None:
        return CHANGED if os.path.lexists(path) else REPLACED
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(staging, path)
    except FileExistsError:
        return CHANGED
    except OSError:  # no hard links on this filesystem: the window stays (microseconds wide)
        if os.path.lexists(path):
            return CHANGED
        os.replace(staging, path)
        return REPLACED
    staging.unlink(missing_ok=True)
    return REPLACED


def _plain_replace(path: Path, expected: bytes, staging: Path | None) -> str:
    """Compare, then rename: all there is without leases."""
    try:
        if read_regular(path) != expected:
            return CHANGED
    except (FileNotFoundError, NotRegularFile):
        return CHANGED
    _put(path, staging)
    return REPLACED


UNCHANGED = "unchanged"


def unchanged_unless_held(path: Path, expected: bytes | None) -> str:
    """Whether ``path`` still holds ``expected`` (None: nothing is there) with nobody holding it open for
    writing, changing nothing: ``unchanged``, ``changed`` or ``held``. A write of several files checks every
    one so before it renames any (:func:`replace_unless_held` then checks each again at its rename), so a
    save that landed since the read stops it while nothing is yet undone."""
    if expected is None:
        return CHANGED if os.path.lexists(path) else UNCHANGED
    fd = _open_plain(path)
    if fd is None:
        return CHANGED
    try:
        taken = _lease(fd)
        if taken is False:
            return HELD
        try:
            st, now = os.fstat(fd), os.lstat(path)
            same = (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino) and _read_fd(fd) == expected
        finally:
            if taken:
                _release(fd)
        return UNCHANGED if same else CHANGED
    except OSError:
        return CHANGED
    finally:
        os.close(fd)


def replace_unless_held(path: Path, expected: bytes | None, staging: Path | None, *, aside: Path | None = None) -> str:
    """Rename ``staging`` over ``path`` (None: remove ``path``) if it still holds ``expected`` (None: if
    nothing is there) and nobody has it open for writing: ``replaced``, ``changed`` (left as it is), or
    ``held`` (open for writing: left as it is). ``aside`` is a free name on the same filesystem for the
    old file's second link (default: next to ``staging``)."""
    if expected is None:
        return _create_unless_taken(path, staging)
    fd = _open_plain(path)
    if fd is None:
        return CHANGED
    try:
        taken = _lease(fd)
        if taken is None:
            return _plain_replace(path, expected, staging)
        if not taken:
            return HELD
        try:
            st, now = os.fstat(fd), os.lstat(path)
            if (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino) or _read_fd(fd) != expected:
                return CHANGED
            if _breaking(fd):
                return HELD
            # A writer may open the path between this check and the rename: its open waits on the lease but
            # lands on the old inode. A second name for that inode lets it be put back if that happened.
            if aside is None:
                assert staging is not None, "removing a file needs an aside name"
                aside = staging.with_name(f"{staging.name}.old")
            try:
                os.link(path, aside)
                keep: Path | None = aside
            except OSError:
                keep = None  # no hard links here: the window stays (microseconds wide)
            _put(path, staging)
            if keep is not None:
                if _breaking(fd):
                    os.replace(keep, path)
                    return HELD
                keep.unlink(missing_ok=True)
            return REPLACED
        finally:
            _release(fd)
    finally:
        os.close(fd)
