"""The write journal: what a transaction is about to change, so a crash mid-write is undone or finished.

Before a transaction touches a memory file it writes (and fsyncs) one journal
file under ``.remnic/txn/`` naming every path, the bytes each held before, and a
digest of the bytes it will hold. Once git has the commit object, its id is added.
Whoever next takes the write lock (any remnic process) recovers what is left:

- the commit is in HEAD's history → the write happened: only git's index is
  brought in step for those paths;
- otherwise it never happened: each file that still holds exactly the bytes the
  transaction wrote gets its old bytes back (or is removed if it was new). A file
  edited since is left alone.

A journal left behind can only belong to a dead writer: recovery runs under
the write lock, which a live writer holds for its whole transaction.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import secrets
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import STATE_DIR
from remnic.errors import LedgerError, RemnicError
from remnic.fsio import crash_point, write_atomic

if TYPE_CHECKING:
    from .ledger import Ledger

log = logging.getLogger("remnic.journal")
JOURNAL_DIR = "txn"


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class JournalFile:
    path: str
    before: bytes | None  # None: the file did not exist
    after: str | None  # sha256 of the bytes written; None: removed
    written: bool = True  # False: the disk already held the change (sync commits what it found)


@dataclass
class Journal:
    """One transaction's journal file."""

    location: Path
    base: str | None
    files: list[JournalFile] = field(default_factory=list)
    commit: str | None = None

    @classmethod
    def begin(cls, state_dir: Path, base: str | None, files: Sequence[JournalFile]) -> Journal:
        directory = state_dir / JOURNAL_DIR
        directory.mkdir(parents=True, exist_ok=True)
        journal = cls(directory / f"{os.getpid()}-{secrets.token_hex(6)}.json", base, list(files))
        journal._save()
        return journal

    def _save(self) -> None:
        data: dict[str, Any] = {
            "base": self.base,
            "commit": self.commit,
            "files": [
                {
                    "path": f.path,
                    "before": None if f.before is None else base64.b64encode(f.before).decode("ascii"),
                    "after": f.after,
                    "written": f.written,
                }
                for f in self.files
            ],
        }
        # Renamed into place, not fsync'd: it guards against a killed process (the page cache
        # survives it); against power loss remnic is as durable as git's own objects.
        write_atomic(self.location, json.dumps(data), durable=False)

    def committed_as(self, sha: str) -> None:
        """Record the commit object before HEAD is moved to it (called between commit-tree and update-ref)."""
        self.commit = sha
        self._save()
        crash_point("commit-object")

    def close(self) -> None:
        self.location.unlink(missing_ok=True)

    @classmethod
    def load(cls, location: Path) -> Journal:
        data = json.loads(location.read_text(encoding="utf-8"))
        files = [
            JournalFile(
                f["path"],
                None if f.get("before") is None else base64.b64decode(f["before"]),
                f.get("after"),
                bool(f.get("written", True)),
            )
            for f in data.get("files", [])
        ]
        return cls(location, data.get("base"), files, data.get("commit"))


class StateDirError(RemnicError):
    """remnic's state directory (``.remnic``), or its journal folder, is something else than a folder."""

    code = "state_dir_unusable"


def unusable_folder(path: Path, holds: str) -> str | None:
    """Why ``path`` cannot be one of remnic's folders (``holds``: what it keeps there), else None (a folder,
    a link to one, or nothing yet). A file in its place, or a link to nothing: remnic never makes a folder
    at a link's target, which may be anywhere outside the memory repository (a pure check: two stats)."""
    if path.is_dir():
        return None
    if path.is_symlink() and not path.exists():  # a link to nothing (or a loop of links)
        target = os.path.normpath(os.path.join(path.parent, os.readlink(path)))
        return (
            f"{path} is a symlink to {target}, which does not exist: remnic does not create folders outside "
            f"the memory repository through a link; remove the link (rm {shlex.quote(str(path))}) and remnic "
            f"keeps {holds} there itself, or create the folder it names, then run the command again"
        )
    if not os.path.lexists(path):
        return None
    return (
        f"{path} is not a folder: remnic keeps {holds} in it; move it aside "
        f"(mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.bak')}) and run the command again"
    )


def pending(state_dir: Path) -> Iterator[Path]:
    """The journal files a dead writer left (read when a repository is opened: the first use of
    ``.remnic``, so a file in its place, or a link to nothing, is said here, as one line naming it and
    the cure, before anything is made through it)."""
    directory = state_dir / JOURNAL_DIR
    try:
        names = sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        holds = "its index, locks and write journal"
        said = unusable_folder(state_dir, holds) or unusable_folder(directory, "its write journal")
        if said is not None:
            raise StateDirError(said) from None
        return
    for name in names:
        if name.endswith(".json"):
            yield directory / name


def recover(state_dir: Path, root: Path, ledger: Ledger) -> list[str]:
    """Finish or undo every journal left by a dead writer; call under the write lock. Returns lines to log."""
    done: list[str] = []
    for location in pending(state_dir):
        try:
            journal = Journal.load(location)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("unreadable write journal %s (%s); removed", location.name, exc)
            location.unlink(missing_ok=True)
            continue
        head = ledger.head()
        committed = journal.commit is not None and head is not None and ledger.is_ancestor(journal.commit, head)
        paths = [f.path for f in journal.files]
        if committed:
            try:
                ledger.reset_index_paths(paths)
            except LedgerError as exc:  # git's index.lock held: repaired by a later write
                ledger.record_index_repair(paths, str(exc))
            done.append(f"finished an interrupted write ({len(paths)} file(s), commit {(journal.commit or '')[:8]})")
        else:
            restored = _undo(root, journal.files)
            done.append(f"undid an interrupted write: {restored} of {len(paths)} file(s) restored")
        journal.close()
    for line in done:
        log.warning("%s", line)
    return done


def _undo(root: Path, files: Sequence[JournalFile]) -> int:
    restored = 0
    tmp_dir = root / STATE_DIR / "tmp"
    for f in files:
        if not f.written:
            continue
        full = root / f.path
        try:
            current: bytes | None = full.read_bytes()
        except FileNotFoundError:
            current = None
        except OSError:
            continue
        if digest(current) != f.after:
            continue  # never written, or edited since: not ours to touch
        if f.before is None:
            full.unlink(missing_ok=True)
        else:
            write_atomic(full, f.before, tmp_dir=tmp_dir)
        restored += 1
    return restored
