"""Files another program holds open for writing: a save in progress, never replaced or committed.

A writer that keeps a file open and pauses (a script writing in two halves, an
``r+`` handle appending) writes through its handle. Renaming sync's normalised
copy over the path would leave that handle on the orphaned old inode, and all it
writes afterwards would be lost. On Linux a *read lease* tells, without reading
anything into the file: it cannot be taken while any open file description (of
another process, or another one of ours) has the file open for writing, and an
open for writing while it is held breaks it, which ``F_GETLEASE`` shows. Holding
one across the compare-and-rename therefore also catches a writer opening the file
in between. Readers (``less``, a recall) do not count: a stale inode only costs
them a stale read.

Where leases are unavailable (another system, a filesystem that refuses them, a
file owned by another user) the answer is "unknown" and sync works as before:
compare, then rename.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from pathlib import Path

from remnic.fsio import read_regular

try:
    import fcntl
except ImportError:  # not a POSIX system: no leases
    fcntl = None  # type: ignore[assignment]

HELD_REASON = "held open by another program; synced when it is closed"
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


def _open(path: Path) -> int | None:
    """A read-only descriptor; O_NONBLOCK so a lease of another program fails the open instead of
    waiting on it. None: gone, not a plain file, or not readable."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags)
    except OSError:
        return None


def held_open(path: Path) -> bool:
    """Whether another open file description has ``path`` open for writing (False when it cannot be told)."""
    fd = _open(path)
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


def _plain_replace(path: Path, expected: bytes, staging: Path) -> str:
    """Compare, then rename: all there is without leases."""
    try:
        if read_regular(path) != expected:
            return CHANGED
    except FileNotFoundError:
        return CHANGED
    os.replace(staging, path)
    return REPLACED


def replace_unless_held(path: Path, expected: bytes, staging: Path) -> str:
    """Rename ``staging`` over ``path`` if it still holds ``expected`` and nobody has it open for writing:
    ``replaced``, ``changed`` (left as it is), or ``held`` (open for writing: left for a later sync)."""
    fd = _open(path)
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
            old = staging.with_name(f"{staging.name}.old")
            try:
                os.link(path, old)
                keep: Path | None = old
            except OSError:
                keep = None  # no hard links here: the window stays (microseconds wide)
            os.replace(staging, path)
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
