"""Filesystem primitives every layer shares: atomic writes, durable flushes, safe reads, pid checks.

Nothing here knows what a memory is.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import secrets
import signal
import stat
import sys
import threading
from collections.abc import Callable, Sequence
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


def make_private(path: Path, *, create: bool = True) -> None:
    """Make ``path`` readable by its owner only (group and other bits cleared: 0644 becomes 0600),
    creating it empty when missing and ``create``: for remnic's own state that holds memory text or
    paths (caches, logs), never for memory files, whose mode is the user's and git's. Best effort: a
    file of another user or on a read-only filesystem stays as it is (readers never need to change it).

    An existing file is changed by path, never opened: closing any descriptor of a file drops every
    POSIX lock this process holds on it, and SQLite's locks on a database (or its ``-shm``, which
    another process would then truncate under this one's mapping) must survive."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if create:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
            except OSError:
                pass  # made meanwhile, or not writable: as it is
        return
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) and st.st_mode & 0o077:
        try:
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
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


# --- putting the new copy in place without losing a save that lands meanwhile ---
#
# An editor that saves by renaming a new file over the path (VS Code, JetBrains, sed -i, vim with
# backupcopy=no) opens nothing and so breaks no lease: a compare, then a rename, overwrote a save
# landing in between (under load a thread sits there for milliseconds). So the new copy is *swapped*
# with whatever the path holds at that instant (renameat2 RENAME_EXCHANGE, one step), and what came out
# is checked after the fact: the very file that was read (same inode; leased, so nobody opened it to
# write since; without a lease its bytes are read again) means replaced. Anything else is a save that
# got there first, and it is swapped back. Every interleaving:
# - a rename-save before the swap comes out of it and is swapped back: `changed`, the next sync reads it;
# - a rename-save after the swap replaces our copy, as it would any file: nothing of the person's is lost;
# - a rename-save between the swap and the swap back: our copy does not come out of the swap back but
#   that newer save, so it is swapped in again, until what comes out is what was put there last;
# - the path moved away (vim renames it to x.md~, then writes anew): nothing is swapped (ENOENT),
#   `changed`; moved away after the swap, it is our copy that moves, and the save is linked back;
# - a writer opening the old file meanwhile (the lease breaks): swapped back as above, `held`;
# - hard links: identity is the inode, so the file read under another name still counts as it (the
#   lease covers its bytes); the staging copy has no other name.
# Where the swap is unavailable (not Linux, a libc without renameat2, a filesystem refusing it: NFS,
# some FUSE), the file at the path is moved aside (one rename), checked, and the new copy hard-linked in:
# a link never replaces anything, so a save landing in the gap stays (the path is absent for those
# microseconds) and the same checks put back a file that was not the one read. Without hard links
# either, it is check, then rename, with a window of microseconds.
# Left open: a kill -9 between a swap and its swap back leaves the save in the temp folder; and a
# program opening the path to write in place in those microseconds, just after a rename-save, writes
# into our copy, which then leaves.

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_NO_SWAP = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}
_SWAPS = 64  # each further swap needs yet another save landing within the microseconds of the last


def _libc_renameat2() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2  # glibc 2.28+, musl 1.1.24+
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _libc_renameat2()


def _exchange(a: Path, b: Path) -> bool:
    """Swap the entries at ``a`` and ``b`` in one step; False when this system or filesystem cannot (nothing
    moved). FileNotFoundError when either is gone."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in _NO_SWAP:
        return False
    raise OSError(err, os.strerror(err), str(b))


def _ident(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_dev, st.st_ino


def _still(fd: int, expected: bytes, leased: bool) -> bool:
    """Whether the file read through ``fd`` still holds ``expected``: leased, no open for writing since;
    else its bytes, read again."""
    if leased:
        return not _breaking(fd)
    os.lseek(fd, 0, os.SEEK_SET)
    return _read_fd(fd) == expected


def _link_back(src: Path, path: Path) -> None:
    """Put ``src`` (a save) at ``path`` unless a file is there now: that one was saved later, and stays."""
    try:
        os.link(src, path)
    except FileExistsError:
        pass
    except OSError:  # no hard links here
        if not os.path.lexists(path):
            os.rename(src, path)


def _keep_beside(staging: Path, path: Path) -> None:
    kept = path.with_name(f"{path.name}.kept-{secrets.token_hex(3)}")
    os.rename(staging, kept)
    logging.getLogger("remnic").warning("%s was saved again and again while replaced: one save kept as %s", path, kept)


def _swap_back(path: Path, staging: Path, at_path: tuple[int, int]) -> None:
    """``staging`` holds a save that belongs at ``path``, where ``at_path`` (what was put there last) stands
    unless a later save replaced it: swap, and again while what comes out is such a later save."""
    for _ in range(_SWAPS):
        going = _ident(staging)
        try:
            if not _exchange(staging, path):
                break
        except FileNotFoundError:  # what we put there was moved away meanwhile (vim): the save goes back
            _link_back(staging, path)
            return
        if _ident(staging) == at_path:
            return
        at_path = going
    _keep_beside(staging, path)


def _swap_in(path: Path, staging: Path, fd: int, read: tuple[int, int], expected: bytes, leased: bool) -> str | None:
    """Swap ``staging`` in at ``path`` if the path still holds the file read (``fd``, ``read``); None when
    swapping is unavailable here (nothing moved)."""
    ours = _ident(staging)
    try:
        if not _exchange(staging, path):
            return None
    except FileNotFoundError:  # moved away (vim's x.md~): a new save follows
        return CHANGED
    out = _ident(staging)
    if out == read and _still(fd, expected, leased):
        staging.unlink(missing_ok=True)  # the old file read, now out of the way
        return REPLACED
    _swap_back(path, staging, ours)
    return HELD if out == read and leased else CHANGED


def _move_in(
    path: Path, staging: Path | None, fd: int, read: tuple[int, int], expected: bytes, leased: bool, aside: Path
) -> str:
    """Without swaps: move the file at ``path`` aside, check it is the one read, then link ``staging`` in
    (None: leave the path empty); a link replaces nothing, so a save made in the gap stays."""
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return CHANGED
    try:
        out = _ident(aside)
        if out != read or not _still(fd, expected, leased):
            _link_back(aside, path)
            return HELD if out == read and leased else CHANGED
        if staging is None:
            return REPLACED
        try:
            os.link(staging, path)
        except FileExistsError:
            return CHANGED  # saved in the gap: that save stays, and the old file read is gone with `aside`
        except OSError:  # no hard links either: rename if still free (a window of microseconds)
            if os.path.lexists(path):
                return CHANGED
            os.rename(staging, path)
            return REPLACED
        staging.unlink(missing_ok=True)
        return REPLACED
    finally:
        aside.unlink(missing_ok=True)


def replace_unless_held(path: Path, expected: bytes | None, staging: Path | None, *, aside: Path | None = None) -> str:
    """Put ``staging`` at ``path`` (None: remove ``path``) if it still holds ``expected`` (None: if nothing is
    there) and nobody has it open for writing: ``replaced``, ``changed`` (left as it is, a save that landed
    at any moment before the file was swapped included), or ``held`` (open for writing: left as it is).
    ``aside`` is a free name on the same filesystem for the old file where it cannot be swapped out
    (default: next to ``staging``); ``staging`` is gone once replaced; otherwise it is for the caller to remove."""
    if expected is None:
        return _create_unless_taken(path, staging)
    fd = _open_plain(path)
    if fd is None:
        return CHANGED
    try:
        taken = _lease(fd)
        if taken is False:
            return HELD
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or _ident(path) != (st.st_dev, st.st_ino) or _read_fd(fd) != expected:
                return CHANGED
            if taken and _breaking(fd):
                return HELD
            read, leased = (st.st_dev, st.st_ino), bool(taken)
            if staging is not None:
                done = _swap_in(path, staging, fd, read, expected, leased)
                if done is not None:
                    return done
            if aside is None:
                assert staging is not None, "removing a file needs an aside name"
                aside = staging.with_name(f"{staging.name}.old")
            return _move_in(path, staging, fd, read, expected, leased, aside)
        except FileNotFoundError:
            return CHANGED
        finally:
            if taken:
                _release(fd)
    finally:
        os.close(fd)
