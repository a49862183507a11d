"""The daemon's log file stays a file someone can read: reopened when it was deleted or replaced.

A daemon's standard output and error are ``.remnic/server.log`` (see :mod:`.daemon`). After
``rm -rf .remnic`` or a ``mv server.log server.log.1``, every line would go on into the old file,
deleted or renamed: the access lines and the tracebacks an ``internal_error`` points to would be lost
(and a deleted file's space never freed). :class:`LogReopener` opens the path again and puts it
under file descriptors 1 and 2, from the server's one-second watch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from pathlib import Path

log = logging.getLogger("remnic.server")


def open_log(path: Path) -> int:
    """``path`` opened for appending, owner-only (0600) even when an earlier file there was not: it holds
    request paths, principals and tracebacks."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with contextlib.suppress(OSError):  # another user's file: written as it is
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o077:
            os.fchmod(fd, mode & 0o700)
    return fd


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class LogReopener:
    """Follows ``path`` when this process's stdout is that file at start (a daemon); else does nothing."""

    def __init__(self, path: Path, fd: int = 1) -> None:
        self.path = path
        self.fd = fd
        try:
            self.active = _same(os.fstat(fd), os.stat(path))
        except OSError:
            self.active = False

    def check(self) -> bool:
        """Reopen the log when the path is gone or names another file; True when it did."""
        if not self.active:
            return False
        try:
            if _same(os.stat(self.path), os.fstat(self.fd)):
                return False
        except FileNotFoundError:
            pass
        if not self.path.parent.is_dir():
            return False  # the state folder is made again by the pid file's watch, never here
        fd = open_log(self.path)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        try:
            os.dup2(fd, self.fd)
            os.dup2(fd, 2)
        finally:
            os.close(fd)
        log.warning("%s had gone or been replaced; logging there again", self.path)
        return True
