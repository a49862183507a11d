"""Reading the memory files an index update re-reads: from disk, or as a commit holds them.

A catch-up records a commit as the one the index reflects, so it must index what that commit
holds, not what the work tree holds now: a hand edit or deletion nobody committed would otherwise
become that commit's text in the index, and with ``recall.followEdits`` off nothing would ever
look at the path again (the freshness probe sees the index at HEAD). With followEdits on, the
recall's work-tree pass then indexes the edit on top, as an uncommitted edit it heals later.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from remnic.errors import MemoryFormatError, NotFoundError
from remnic.memfile.model import MemoryRecord
from remnic.memfile.validate import check_text

if TYPE_CHECKING:  # pragma: no cover
    from remnic.repo.files import MemoryStore
    from remnic.repo.ledger import Ledger


@dataclass
class Reads:
    """What re-reading some paths found: records to index, and paths to drop (gone or malformed)."""

    upserts: list[MemoryRecord] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    """Every path to drop: the gone ones and the malformed ones."""
    malformed: list[str] = field(default_factory=list)
    """The removed paths that exist but cannot be read as a memory (each has a line in ``problems``)."""
    problems: list[str] = field(default_factory=list)


def read_paths(files: MemoryStore, paths: Sequence[str], at: tuple[Ledger, str] | None = None) -> Reads:
    """Re-read the memory ``paths`` (other paths are skipped): from disk, or with ``at`` = (ledger,
    commit) as that commit holds them, all read by one git process (``Ledger.blob_texts``)."""
    out = Reads()
    wanted = [p for p in dict.fromkeys(paths) if files.paths.is_memory(p)]
    texts: Sequence[str | None] = at[0].blob_texts([(at[1], p) for p in wanted]) if at and wanted else ()
    for i, path in enumerate(wanted):
        if at is None or os.path.islink(files.abspath(path)):  # a link is no memory file, committed or not
            _from_disk(files, path, out)
        elif texts[i] is None:  # not in that commit (or not UTF-8 there: no memory either)
            out.removed.append(path)
        else:
            checked = check_text(texts[i] or "", path, files.settings.store)
            if checked.problems or checked.record is None:
                _malformed(out, path, MemoryFormatError(path, checked.problems).describe())
            else:
                out.upserts.append(checked.record)
    return out


def _from_disk(files: MemoryStore, path: str, out: Reads) -> None:
    try:
        out.upserts.append(files.read(path))
    except NotFoundError:
        out.removed.append(path)
    except MemoryFormatError as exc:
        _malformed(out, path, exc.describe())
    except (OSError, UnicodeDecodeError) as exc:
        _malformed(out, path, f"{path}: {exc}")


def _malformed(out: Reads, path: str, problem: str) -> None:
    out.removed.append(path)
    out.malformed.append(path)
    out.problems.append(problem)
