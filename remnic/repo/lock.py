"""The repository write lock: one ``flock`` on ``.remnic/write.lock`` per process, re-entrant per thread.

Writers hold it for the whole read-modify-write-commit, so CLI processes, the
watcher and the server never lose each other's changes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shlex
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from remnic.errors import LockTimeoutError, RemnicError, RepoBusyError

from .journal import StateDirError

READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
"""Why a lock file cannot be created when the directory is read-only, to everyone or to this user."""


def read_only_message(path: Path, exc: OSError) -> str:
    """One line for a lock file that cannot be created (``path``: a lock in the memory directory's state folder)."""
    root = path.parent.parent
    return (
        f"memory directory {root} is read-only (cannot create {path.parent.name}/{path.name}: "
        f"{exc.strerror or exc}); remnic cannot write memories there"
    )


WRONG_TYPE_ERRNOS = frozenset({errno.EISDIR, errno.ENOTDIR})
"""Why a lock file cannot be opened when a folder sits where it belongs (or a file where its folder does)."""


def not_a_file(path: Path, holds: str = "a lock file") -> str | None:
    """Why ``path`` cannot be one of remnic's files (``holds``: what it keeps there), else None (a file, or
    nothing yet): a folder in its place, one line naming it and the cure (the file-side twin of
    :func:`remnic.repo.journal.unusable_folder`; a pure check: one stat)."""
    if not path.is_dir():
        return None
    aside = f"mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.bak')}"
    return f"{path} is a folder where remnic keeps {holds}: move it aside ({aside}) and run the command again"


class ProcessLock:
    """A re-entrant lock per thread around one flock per process; flock itself is per open file."""

    def __init__(
        self,
        path: Path,
        label: str = "the write lock",
        busy: str = "another remnic process is writing",
        *,
        refuse_read_only: bool = False,
        wrong_type: type[RemnicError] = StateDirError,
    ) -> None:
        self.path = path
        self.wrong_type = wrong_type
        """What a folder in the lock file's place raises (with :func:`not_a_file`'s line)."""
        self.refuse_read_only = refuse_read_only
        """A lock file that cannot be created in a read-only directory is a RepoBusyError saying so (a writer's
        refusal); without this it stays an OSError, which readers take as an index they cannot use."""
        self.label = label
        """What the lock is called in a timeout's message."""
        self.busy = busy
        """What its holder is doing, when its process cannot be named."""
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def hold(self, timeout_s: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout_s
        if not self._thread_lock.acquire(timeout=max(timeout_s, 0.001)):
            raise LockTimeoutError(f"timed out after {timeout_s:.0f}s waiting for {self.label} (another thread)")
        try:
            if self._depth == 0:
                self._acquire_file(deadline, timeout_s)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    os.close(self._fd)
                    self._fd = None
        finally:
            self._thread_lock.release()

    def _acquire_file(self, deadline: float, timeout_s: float) -> None:
        """Take the flock; waiters queue in the kernel (a blocking flock), never by polling, so none starves."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if self.refuse_read_only and exc.errno in READ_ONLY_ERRNOS:
                raise RepoBusyError(read_only_message(self.path, exc)) from None
            said = not_a_file(self.path) if exc.errno in WRONG_TYPE_ERRNOS else None
            if said is not None:
                raise self.wrong_type(said) from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._took(fd)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
        waiter = _BlockingFlock(fd)
        if waiter.wait(max(0.0, deadline - time.monotonic())):
            self._took(fd)
            return
        raise LockTimeoutError(
            f"timed out after {timeout_s:.0f}s waiting for {self.label} {self.path} "
            f"({self.holder() or self.busy}; store.lockTimeoutS sets the wait)"
        )

    def _took(self, fd: int) -> None:
        """Hold it, and write this process's id into the file so a waiter can say who holds it."""
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # only a hint for messages

    def holder(self) -> str | None:
        """``held by process N (its command line)``, from the pid its holder wrote, while that process lives."""
        try:
            pid = int(self.path.read_text(encoding="utf-8").split()[0])
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            return None
        return f"held by process {pid}" + (f": {cmd[:120]}" if cmd else "")


class _BlockingFlock:
    """A blocking ``flock`` on a helper thread, given up after a timeout: the kernel keeps waiters in
    line, and a waiter that gave up releases the lock as soon as it gets it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._guard = threading.Lock()
        self._got = threading.Event()
        self._abandoned = False
        self._error: OSError | None = None
        threading.Thread(target=self._take, name="remnic-lock-wait", daemon=True).start()

    def _take(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as exc:
            self._error = exc
        with self._guard:
            if self._abandoned:
                if self._error is None:
                    fcntl.flock(self.fd, fcntl.LOCK_UN)
                os.close(self.fd)
                return
        self._got.set()

    def wait(self, timeout: float) -> bool:
        got = self._got.wait(timeout)
        with self._guard:
            if not got and not self._got.is_set():
                self._abandoned = True
                return False
        if self._error is not None:
            os.close(self.fd)
            raise self._error
        return True


_LOCKS: dict[Path, ProcessLock] = {}
_LOCKS_GUARD = threading.Lock()


def process_lock(
    path: Path,
    label: str = "the write lock",
    busy: str = "another remnic process is writing",
    *,
    refuse_read_only: bool = False,
    wrong_type: type[RemnicError] = StateDirError,
) -> ProcessLock:
    """The one lock object per lock file in this process (``label``, ``busy``, ``refuse_read_only``,
    ``wrong_type``: see :class:`ProcessLock`)."""
    with _LOCKS_GUARD:
        made = ProcessLock(path, label, busy, refuse_read_only=refuse_read_only, wrong_type=wrong_type)
        return _LOCKS.setdefault(path, made)
