"""What a long-running server checks before touching its memory directory: that it is still there
(not deleted or moved away) and, when a write fails, whether the directory is read-only.

A server must never recreate a directory the user deleted (its ``.remnic`` or ``state`` folders in a
path that is no longer a memory repository), nor say "accepted" for work that can never be
committed; and a read-only directory is its own refusal (``read_only``), not ``repo_busy``, which a
client retries.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from remnic.errors import RepoBusyError
from remnic.service.health import unwritable

from .errors import MemoryDirGoneError, ReadOnlyError

READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
"""A write refused by the file system or permissions (as ``remnic.repo.lock`` tells them)."""


def missing(root: Path) -> str | None:
    """Why ``root`` is no longer a memory repository (the directory or its ``.git`` is gone), else None."""
    if not os.path.isdir(root):
        return f"memory directory {root} is gone (deleted or moved)"
    if not os.path.lexists(root / ".git"):
        return f"memory directory {root} has no .git any more (deleted or moved)"
    return None


def check_present(root: Path) -> None:
    """MemoryDirGoneError naming ``root`` when it is gone: nothing is written, nothing recreated."""
    why = missing(root)
    if why is not None:
        raise MemoryDirGoneError(
            f"{why}; nothing was written there. Restore it, then start the server again (a running "
            "server stops by itself once it notices)"
        )


def read_only_error(root: Path, exc: BaseException) -> ReadOnlyError | None:
    """``exc`` (a failed write) as a one-line ReadOnlyError when the directory is read-only, else None."""
    if isinstance(exc, ReadOnlyError):
        return exc
    read_only_os = isinstance(exc, OSError) and exc.errno in READ_ONLY_ERRNOS
    if not (read_only_os or isinstance(exc, RepoBusyError)):
        return None
    why = unwritable(root)
    if why is None:
        return None
    if isinstance(exc, RepoBusyError) and "read-only" in exc.message:
        return ReadOnlyError(exc.message)  # the lock's own line already names the file
    return ReadOnlyError(
        f"{why}; remnic cannot write memories there; nothing was written (make it writable, then retry)"
    )
