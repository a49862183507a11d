"""Step 2 of a sync: read each candidate until it is stable, and check it.

A file still being written is left for a later run: one that kept changing while it was
read, and one another program holds open for writing (a writer that paused mid-save,
see :mod:`.held`), whatever the bytes read so far say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remnic.config import StoreSettings
from remnic.errors import FieldProblem
from remnic.fsio import NotRegularFile
from remnic.memfile.normalize import Checked, check_bytes
from remnic.repo.files import SYMLINK_REASON

from .held import HELD_REASON, held_open
from .report import SyncReport
from .state import Unstable, digest, read_stable_many


@dataclass
class Reads:
    """What reading the candidates found, by what sync does with each path next."""

    valid: list[tuple[str, bytes, Checked]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """Paths to keep out of the index (malformed, or no text yet)."""
    quiet: set[str] = field(default_factory=set)
    """Uncommitted paths unchanged since the last run that could not commit either."""
    unstable: set[str] = field(default_factory=set)
    malformed: dict[str, str] = field(default_factory=dict)
    unsynced_data: dict[str, bytes] = field(default_factory=dict)
    """The bytes of malformed and empty files git does not have as they are: sync commits neither, but a
    note moved there may be one git has at its old path (:mod:`.moves`)."""
    empty: dict[str, str] = field(default_factory=dict)


def read_all(
    root: Path,
    paths: list[str],
    pending: dict[str, dict[str, Any]],
    status: dict[str, str],
    store: StoreSettings,
    report: SyncReport,
    *,
    skip_unchanged: bool,
    progress: Callable[[int, int], None] | None = None,
) -> Reads:
    """Read and check ``paths`` (sorted), adding problems and skipped files to ``report``; ``progress``
    hears (checked, total) as the files are checked, the long part of a full pass."""
    out = Reads()
    contents = read_stable_many([root / p for p in paths])
    for done, path in enumerate(paths, 1):
        if progress is not None:
            progress(done, len(paths))
        prior = pending.get(path) or {}
        data = contents[root / path]
        if isinstance(data, Unstable):
            report.skipped.append({"path": path, "reason": "still being written; will retry"})
            out.unstable.add(path)
            continue
        if data is None:
            out.deleted.append(path)
            continue
        if isinstance(data, bytes) and held_open(root / path):
            report.skipped.append({"path": path, "reason": HELD_REASON})
            report.held.append(path)
            out.unstable.add(path)
            continue
        if isinstance(data, NotRegularFile) and (root / path).is_symlink():
            # Not a memory (as the scan says): left alone, out of the index, never a problem to fix.
            report.skipped.append({"path": path, "reason": SYMLINK_REASON})
            out.dropped.append(path)
            continue
        if isinstance(data, NotRegularFile):
            checked = Checked(
                path, problems=[FieldProblem("path", data.strerror or "is not a regular file", path=path)]
            )
            sha = "not-a-file"
        else:
            sha = digest(data)
            checked = check_bytes(data, path, store)
        if checked.problems:
            report.problems += checked.problems
            if prior.get("sha") != sha or prior.get("kind") != "malformed":
                report.new_problem_paths.append(path)
            if path not in status:
                report.in_git_problem_paths.append(path)
            out.malformed[path] = sha
            if path in status and isinstance(data, bytes):
                out.unsynced_data[path] = data
            out.dropped.append(path)
            continue
        if checked.empty:
            # One git has (committed empty by hand) is said when it is read (a full pass, a commit that
            # emptied it), but is not left pending: sync has nothing of it to commit.
            report.skipped.append(
                {"path": path, "reason": "no text yet (an empty body and no title or description); left as it is"}
            )
            if path in status and isinstance(data, bytes):
                out.empty[path] = sha
                out.unsynced_data[path] = data
            if prior.get("kind") == "empty" and prior.get("sha") == sha:
                report.repeated_skips.append(path)
            out.dropped.append(path)
            continue
        if skip_unchanged and prior.get("kind") == "uncommitted" and prior.get("sha") == sha and path in status:
            out.quiet.add(path)
        assert isinstance(data, bytes)  # not a regular file: reported as a problem above
        out.valid.append((path, data, checked))
    return out
