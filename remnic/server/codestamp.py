"""Which remnic a process runs: its version, and a stamp of the package's files as they were at start.

A server runs for weeks; an upgrade (``pip install -U``, ``git pull`` of a checkout) replaces the
files under it. Modules it imports on first use then come from the new release while the ones
loaded at start are the old one's: an ``ImportError``, or a CLI whose new flag the old server's
parser does not know. The CLI compares its version and stamp with the server's (the pid file and the
socket request carry them) and runs a command itself when they differ; the server names the cause
of such an ``ImportError`` and the fix (a restart). Standard library only: the CLI's fast path
imports it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from remnic.version import __version__

PACKAGE_DIR = Path(__file__).resolve().parent.parent
_started: str | None = None


def code_stamp(package_dir: Path = PACKAGE_DIR) -> str:
    """A hash of every ``.py`` file's path, size and mtime under the package (a few ms, no file read),
    with the version: it changes when an upgrade or an edit replaces any of them."""
    digest = hashlib.sha1(__version__.encode(), usedforsecurity=False)
    entries: list[str] = []
    stack = [str(package_dir)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as found:
                for entry in found:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            stack.append(entry.path)
                    elif entry.name.endswith(".py"):
                        st = entry.stat()
                        entries.append(f"{os.path.relpath(entry.path, package_dir)}\0{st.st_size}\0{st.st_mtime_ns}")
        except OSError:
            continue
    for line in sorted(entries):
        digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()[:16]


def mark_started() -> str:
    """Record the stamp of the code this (server) process starts with; returns it."""
    global _started
    if _started is None:
        _started = code_stamp()
    return _started


def started_stamp() -> str | None:
    return _started


def code_changed() -> bool:
    """Whether the package's files changed since :func:`mark_started` (False when it was never called)."""
    return _started is not None and code_stamp() != _started


def restart_note(exc: BaseException) -> str:
    """What a server says for an error that comes from loading code: the cause and the fix."""
    changed = code_changed()
    cause = (
        "remnic's files changed since this server started (an upgrade?)"
        if changed
        else "remnic's code could not be loaded in this server (its files may have changed since it started)"
    )
    return f"{cause}: {type(exc).__name__}: {exc}; restart the server: `remnic daemon restart`"
