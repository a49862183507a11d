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
import shlex
from pathlib import Path

from remnic.config import STATE_DIR
from remnic.errors import RemnicError, RepoBusyError
from remnic.service.health import unwritable

from .errors import MemoryDirGoneError, ReadOnlyError, StateUnusable

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


WRONG_TYPE_ERRNOS = frozenset({errno.EISDIR, errno.ENOTDIR, errno.EEXIST})
"""A folder where remnic keeps a file, or a file where it keeps a folder (opened, created or renamed onto)."""
_HOLDS = {
    "lcm.lock": "the transcript archive's lock file",
    "lcm": "the transcript archive's search index",
    "entities.json": "the entity list it derives from the memories",
    "write.lock": "its write lock file",
    "index.lock": "the search index's lock file",
    "tmp": "the temporary files of its writes",
    "txn": "its write journal",
    "index": "the search index",
}

_FOLDERS = frozenset({"lcm", "tmp", "txn", "index"})


def state_error(root: Path, exc: BaseException) -> StateUnusable | None:
    """``exc`` as one line naming the part of remnic's state folder (``.remnic``) of the wrong type and the
    cure (the wording `remnic doctor` and the CLI use), when that is what it is; else None."""
    if not isinstance(exc, OSError) or exc.errno not in WRONG_TYPE_ERRNOS:
        return None
    state = root / STATE_DIR
    for name in (exc.filename2, exc.filename):
        if not name:
            continue
        path = Path(os.fsdecode(name))
        try:
            parts = path.relative_to(state).parts
        except ValueError:
            continue
        part = state
        for piece in parts:  # a file in place of a folder on the way: that file is the culprit
            part = part / piece
            if part != path and os.path.lexists(part) and not part.is_dir():
                return StateUnusable(_wrong_type(part, parts, is_folder=False))
        if path.is_dir() and not path.is_symlink():
            return StateUnusable(_wrong_type(path, parts, is_folder=True))
        if path.name in _FOLDERS and exc.errno != errno.EISDIR and os.path.lexists(path):  # makedirs onto a file
            return StateUnusable(_wrong_type(path, parts, is_folder=False))
    return None


def _wrong_type(path: Path, parts: tuple[str, ...], *, is_folder: bool) -> str:
    holds = _HOLDS.get(path.name) or _HOLDS.get(parts[0]) or "part of its state"
    aside = f"mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.bak')}"
    if is_folder:
        return f"{path} is a folder where remnic keeps {holds}: move it aside ({aside}) and run the command again"
    return f"{path} is not a folder: remnic keeps {holds} in it; move it aside ({aside}) and run the command again"


def unusable_state(root: Path, exc: BaseException) -> RemnicError | None:
    """What a failed operation says instead of ``exc`` (a read-only directory, a part of the state folder of
    the wrong type), else None (``exc`` stands as it is)."""
    return state_error(root, exc) or read_only_error(root, exc)
