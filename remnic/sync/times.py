"""When a file was created and last changed, for a note that does not say so itself.

``created``/``updated`` come from the user's own keys when there are any (see
:mod:`remnic.memfile.values`); a note adopted without them gets git's history
of its path (first and last commit), else the file's modification time, never the
moment it happened to be adopted. A file with uncommitted edits was updated when
it was last saved (its mtime).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from remnic.errors import RemnicError
from remnic.memfile.normalize import FileTimes
from remnic.repo.gitlog import literal
from remnic.repo.ledger import Ledger

PER_PATH_LIMIT = 20
"""Up to this many paths get one ``git log`` each; more are answered from one pass over history."""


def _history(ledger: Ledger, paths: list[str]) -> dict[str, tuple[float, float]]:
    """path → (first commit time, last commit time) for the paths git has history for."""
    # -z: names as they are (git would C-quote a tab, a quote or non-ASCII); \x01 starts a commit.
    args = ["log", "-z", "--format=%x01%ct", "--name-only", "--no-renames"]
    if len(paths) <= PER_PATH_LIMIT:
        args += ["--", *literal(*paths)]
    try:
        out = ledger.git(*args, strip=False)
    except RemnicError:
        return {}
    wanted = set(paths)
    seen: dict[str, tuple[float, float]] = {}
    when = 0.0
    for token in out.split("\0"):
        if token.startswith("\x01"):
            when = float(token[1:] or 0)
            continue
        name = token[1:] if token.startswith("\n") else token  # the first name follows the header's newline
        if name in wanted:
            first, last = seen.get(name, (when, when))
            seen[name] = (min(first, when), max(last, when))
    return seen


def file_times(root: Path, ledger: Ledger, paths: Iterable[str], dirty: set[str]) -> dict[str, FileTimes]:
    """Times for each path: git history where there is any, the file's mtime otherwise; ``dirty`` paths
    (uncommitted edits) were last updated at their mtime."""
    paths = list(paths)
    if not paths:
        return {}
    history = _history(ledger, paths) if ledger.head() is not None else {}
    out: dict[str, FileTimes] = {}
    for path in paths:
        try:
            mtime: float | None = os.lstat(root / path).st_mtime
        except OSError:
            mtime = None
        first, last = history.get(path, (None, None))
        created = first if first is not None else mtime
        updated = mtime if path in dirty or last is None else last
        out[path] = FileTimes(created, updated)
    return out
