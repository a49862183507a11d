"""The repository write lock: one ``flock`` on ``.remnic/write.lock`` per process, re-entrant per thread.

Writers hold it for the whole read-modify-write-commit, so CLI processes, the
watcher and the server never lose each other's changes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from remnic.errors import LockTimeoutError


class _ProcessLock:
    """A re-entrant lock per thread around one flock per process; flock itself is per open file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def hold(self, timeout_s: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout_s
        if not self._thread_lock.acquire(timeout=max(timeout_s, 0.001)):
            raise LockTimeoutError(f"timed out after {timeout_s:.0f}s waiting for the write lock (another thread)")
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
            if time.monotonic() >= deadline:
                os.close(fd)
                raise LockTimeoutError(
                    f"timed out after {timeout_s:.0f}s waiting for the write lock {self.path} "
                    "(another remnic process is writing)"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


_LOCKS: dict[Path, _ProcessLock] = {}
_LOCKS_GUARD = threading.Lock()


def _process_lock(path: Path) -> _ProcessLock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(path, _ProcessLock(path))
