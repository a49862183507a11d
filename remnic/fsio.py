"""Filesystem primitives every layer shares: atomic writes, durable flushes, safe reads, pid checks.

Nothing here knows what a memory is.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import stat
import threading
from collections.abc import Sequence
from pathlib import Path


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


def write_atomic_many(items: Sequence[tuple[Path, bytes]], *, tmp_dir: Path) -> None:
    """:func:`write_atomic` of several files, durable as each of them would be, with the fsyncs of all
    at once: every temp file is written and fsync'd (:func:`fsync_all`) before any is renamed over
    its target, in order, and then each folder is fsync'd once. A failure before the renames
    changes no target; during them, the targets renamed so far keep their new bytes."""
    tmp_dir.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for path, raw in items:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = tmp_dir / f"{os.getpid()}-{secrets.token_hex(4)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            staged.append((path, tmp))
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
        fsync_all([tmp for _, tmp in staged])
        while staged:
            path, tmp = staged[0]
            os.replace(tmp, path)
            staged.pop(0)
    finally:
        for _, tmp in staged:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
    try:
        fsync_all(list(dict.fromkeys(path.parent for path, _ in items)))
    except OSError:
        pass


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
