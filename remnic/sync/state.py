"""What sync remembers between runs, and careful file I/O for files people are editing.

``.remnic/sync-state.json`` (git-ignored, rebuildable) records the commit sync
last reconciled and the memory paths it left differing from that commit
(uncommitted edits, malformed files, files still being written), so the next run
re-reads exactly those plus what git reports changed. Deleting it only makes
the next run a full one.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remnic.config import STATE_DIR
from remnic.fsio import HELD, REPLACED, NotRegularFile, flush_to_disk, read_regular, replace_unless_held, write_atomic

STATE_FILE = "sync-state.json"
STATE_VERSION = 1


@dataclass
class SyncState:
    commit: str | None = None
    """The commit sync has reconciled (what the next run diffs from): its own last run's HEAD, moved on
    by each of remnic's own commits made directly on top of it (see :mod:`.base`)."""
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Path → {sha, id, hash, kind} for memory paths left differing from ``commit``."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Path → reason for files sync reported as not memories (reported again only when that changes)."""
    rules: str | None = None
    """The rule for which files are memories at the last run: when it changes the next run is a full one."""
    index_behind: bool = False
    """The last run committed but could not update the index (its lock was held, or it failed): the
    next run catches the index up even when nothing else changed."""

    @classmethod
    def load(cls, root: Path) -> SyncState:
        path = root / STATE_DIR / STATE_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            return cls()
        raw_pending, raw_skipped = data.get("pending"), data.get("skipped")
        pending = raw_pending if isinstance(raw_pending, dict) else {}
        commit = data.get("commit") if isinstance(data.get("commit"), str) else None
        skipped = raw_skipped if isinstance(raw_skipped, dict) else {}
        return cls(
            commit,
            {str(k): v for k, v in pending.items() if isinstance(v, dict)},
            {str(k): str(v) for k, v in skipped.items()},
            data.get("rules") if isinstance(data.get("rules"), str) else None,
            data.get("indexBehind") is True,
        )

    def save(self, root: Path) -> None:
        data = {
            "version": STATE_VERSION,
            "commit": self.commit,
            "pending": self.pending,
            "skipped": self.skipped,
            "rules": self.rules,
            "indexBehind": self.index_behind,
        }
        write_atomic(root / STATE_DIR / STATE_FILE, json.dumps(data, indent=1, sort_keys=True) + "\n")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Unstable(Exception):
    """The file kept changing while it was read."""


def _read_once(path: Path) -> tuple[tuple[int, int, int], bytes] | None:
    """(size, mtime_ns, inode) and bytes, or None when missing; raises Unstable when it changed mid-read."""
    try:
        before = os.lstat(path)
        data = read_regular(path)
        after = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    sig = (after.st_size, after.st_mtime_ns, after.st_ino)
    if (before.st_size, before.st_mtime_ns, before.st_ino) != sig or len(data) != after.st_size:
        raise Unstable(str(path))
    return sig, data


def read_stable_many(
    paths: list[Path], *, attempts: int = 25, settle_s: float = 0.01, quiet_s: float = 1.0
) -> dict[Path, bytes | Unstable | NotRegularFile | None]:
    """Each file's bytes once they stop changing (None: it does not exist; Unstable: it kept changing;
    NotRegularFile: a symlink or other non-file, never read through).

    A file whose mtime is older than ``quiet_s`` is trusted after one read with
    identical stat before and after; a fresher one must also read identically
    twice ``settle_s`` apart, so a save in progress is never taken for the file.
    The settle pauses are shared by all files of a batch.
    """
    out: dict[Path, bytes | Unstable | NotRegularFile | None] = {}
    previous: dict[Path, tuple[tuple[int, int, int], bytes] | None] = {p: None for p in paths}
    todo = list(paths)
    delay = settle_s
    for attempt in range(attempts):
        again = []
        for path in todo:
            try:
                got = _read_once(path)
            except NotRegularFile as exc:
                out[path] = exc
                continue
            except Unstable:
                previous[path] = None
                again.append(path)
                continue
            if got is None:
                out[path] = None
            elif time.time() - got[0][1] / 1e9 > quiet_s or previous[path] == got:
                out[path] = got[1]
            else:
                previous[path] = got
                again.append(path)
        todo = again
        if not todo:
            break
        if attempt < attempts - 1:
            time.sleep(delay)
            delay = min(delay * 1.5, 0.1)
    for path in todo:
        out[path] = Unstable(str(path))
    return out


BULK_FILES = 64
"""Past this many files, one flush of the page cache beats a fsync per file."""


def replace_if_unchanged(
    items: Sequence[tuple[Path, bytes, str]], tmp_dir: Path, held: set[Path] | None = None
) -> set[Path]:
    """Atomically replace each ``(path, expected, text)``'s file with ``text`` unless it no longer holds
    ``expected`` or another program has it open for writing (added to ``held``: a save in progress, see
    :mod:`.held`); returns the paths replaced.

    Every new content is fully written to a staging file in ``tmp_dir`` (the git-ignored
    ``.remnic/tmp``, same filesystem) and made durable first — a fsync each, or for many files
    one flush for all of them — and then each file is compared again and swapped in, and swapped back
    when what came out was not the file read, so an editor's save that lands while sync works, renamed
    over the file up to the very instant of the swap, is not overwritten (the next sync picks it up;
    :func:`remnic.fsio.replace_unless_held`), and a crash leaves nothing ``git add -A`` would commit.
    """
    tmp_dir.mkdir(parents=True, exist_ok=True)
    bulk = len(items) > BULK_FILES
    staged: list[tuple[Path, bytes, Path]] = []
    done: set[Path] = set()
    try:
        for path, expected, text in items:
            try:
                mode = path.stat().st_mode & 0o777
            except FileNotFoundError:
                continue
            staging = tmp_dir / f"{os.getpid()}-{secrets.token_hex(4)}.sync"
            staged.append((path, expected, staging))
            write_atomic(staging, text, mode=mode, durable=not bulk)
        if bulk and staged:
            flush_to_disk()
        for path, expected, staging in staged:
            outcome = replace_unless_held(path, expected, staging)
            if outcome == REPLACED:
                done.add(path)
            elif outcome == HELD and held is not None:
                held.add(path)
    finally:
        for _path, _expected, staging in staged:
            staging.unlink(missing_ok=True)
    return done
