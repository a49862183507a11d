"""Small records describing the index's state (health, what a freshness check did)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.repo.journal import StateDirError

from .manifest import Manifest, index_root_problem

if TYPE_CHECKING:  # pragma: no cover
    from .reads import Reads


@dataclass
class IndexHealth:
    state: str
    detail: str = ""
    manifest: Manifest | None = None
    head: str | None = None

    def to_dict(self) -> dict[str, Any]:
        m = self.manifest
        return {
            "state": self.state,
            "detail": self.detail,
            "commit": m.commit if m else None,
            "head": self.head,
            "count": m.count if m else 0,
            "modelId": m.model_id if m else None,
            "schemaVersion": m.schema_version if m else None,
            "generation": m.generation if m else None,
            "builtAt": m.built_at if m else None,
            "updatedAt": m.updated_at if m else None,
            "vectorsPending": m.vectors_pending if m else 0,
        }


@dataclass
class FreshReport:
    """What ``ensure_fresh``/``rebuild`` did: none | reloaded | catch-up | rebuild."""

    action: str
    reason: str = ""
    changed: int = 0
    embedded: int = 0
    """Memory texts run through the model (the vocabulary's new words are embedded beside them, uncounted)."""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "reason": self.reason,
            "changed": self.changed,
            "embedded": self.embedded,
            "seconds": round(self.seconds, 3),
            "problems": self.problems,
        }


class NeedsRebuild(Exception):
    """The live index cannot be used as it is; ``state`` says why (missing, corrupt, …)."""

    def __init__(self, state: str, detail: str) -> None:
        super().__init__(detail)
        self.state = state
        self.detail = detail


class NotContinued(NeedsRebuild):
    """A write that records a commit as reflected met an index that continues no recorded commit (missing,
    broken, built for another schema, model or settings, or partial). Nothing was written: its next write
    would start an empty index, and the batch stamped there would claim every memory it lacks."""


UNUSABLE = "unusable"
"""The index's state when no index can be built where it belongs (a file, or a link to nothing, in the
place of ``.remnic/index``): no rebuild cures it, so none is tried until the path is moved aside."""


class IndexDirError(StateDirError):
    """No index can be built where it belongs: one line naming the path and the cure (``index_root_problem``).
    Raised before any file is read or embedded, so a recall that scans the files instead pays nothing for it."""


def require_index_root(root: Path) -> None:
    """Raise :class:`IndexDirError` when no index can be built at ``root``, not a traceback from deep in a
    rebuild (``mkdir`` on a file)."""
    said = index_root_problem(root)
    if said is not None:
        raise IndexDirError(said)


@dataclass
class WorktreeReport:
    """What a recall did about memory files edited since the last commit (see ``follow_worktree``)."""

    dirty: int = 0
    """Memory files git reports changed (modified, new, deleted) since HEAD."""
    changed: int = 0
    """Of those (and of files indexed from the work tree before), how many differ from the index."""
    indexed: int = 0
    """Of those, how many this recall indexed as they are on disk (``edited`` and ``restored``)."""
    deferred: bool = False
    """True when there were too many to index before this recall: they wait for ``remnic sync run``."""
    paths: list[str] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    """Uncommitted edits (new or changed files) this recall indexed as they are on disk."""
    deleted: list[str] = field(default_factory=list)
    """Files gone from disk this recall dropped from the index."""
    malformed: list[str] = field(default_factory=list)
    """Edited files that cannot be read as a memory: dropped from the index, not searched."""
    restored: list[str] = field(default_factory=list)
    """Files indexed from the work tree before that no longer differ from HEAD (put back by
    ``git checkout``, say): indexed again as committed."""
    others: int = 0
    """Uncommitted edits this recall did not read again (an earlier recall indexed them)."""

    def record(self, read: Reads, dirty: Sequence[str]) -> None:
        """Sort what re-reading the changed paths found (``read``) by what it means for the note."""
        uncommitted, malformed = set(dirty), set(read.malformed)
        gone = [p for p in read.removed if p not in malformed]
        self.edited = [r.path for r in read.upserts if r.path in uncommitted]
        self.restored = [r.path for r in read.upserts if r.path not in uncommitted]
        self.deleted, self.malformed = gone, list(read.malformed)
        self.indexed = len(read.upserts)
        self.problems = list(read.problems)
        self.others = len(uncommitted - set(self.edited) - set(read.removed))

    def to_dict(self) -> dict[str, Any]:
        return {
            "dirty": self.dirty,
            "changed": self.changed,
            "indexed": self.indexed,
            "deferred": self.deferred,
            "paths": self.paths,
            "seconds": round(self.seconds, 4),
            "problems": self.problems,
        }

    def note(self) -> str | None:
        """One line for a person (the query footer, the X-ray); None when no memory file is edited.

        Each part says what this recall did to which files, then how many edits are uncommitted in
        all (other edits may have been indexed by an earlier recall). Malformed files are named only
        when nothing else is: the recall adds every malformed uncommitted file to a note with other
        parts (``remnic.service.recall``), which finds those earlier recalls left out too."""
        if self.deferred:
            shown = ", ".join(self.paths[:3]) + (", …" if self.changed > 3 else "")
            return (
                f"{self.changed} memory file(s) changed since the index and were not searched "
                f"({shown}); run `remnic sync run`"
            )
        done = []
        if self.edited:
            done.append(
                f"indexed {len(self.edited)} file(s) changed on disk since the last commit first ({_shown(self.edited)})"
            )
        if self.deleted:
            done.append(f"dropped {len(self.deleted)} deleted file(s) from the index first ({_shown(self.deleted)})")
        if self.restored:
            done.append(
                f"indexed {len(self.restored)} file(s) as committed again: their uncommitted edits were undone "
                f"({_shown(self.restored)})"
            )
        if done and self.dirty:
            done.append(
                f"{self.dirty} uncommitted edit(s) in all: `remnic sync run` commits them"
                if self.others
                else "not committed: `remnic sync run` commits them"
            )
        if done:
            return "; ".join(done)
        if self.malformed:
            searched = max(0, self.dirty - len(self.malformed))
            return (
                f"searched {searched} of {self.dirty} uncommitted edit(s) as they are on disk; could not search "
                f"{len(self.malformed)} malformed file(s) ({_shown(self.malformed)}): fix them, then `remnic sync run`"
            )
        if self.dirty:
            return f"searched {self.dirty} uncommitted edit(s) as they are on disk (`remnic sync run` commits them)"
        return None


def _shown(paths: Sequence[str]) -> str:
    return ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")


@dataclass
class PendingReport:
    """What ``embed_pending`` did: memories given their vectors, texts embedded, what is left."""

    filled: int = 0
    texts: int = 0
    embedded: int = 0
    """Texts actually run through the model (the rest came from the embedding cache; new vocabulary words
    are embedded beside them, uncounted)."""
    remaining: int = 0
    interrupted: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "filled": self.filled,
            "texts": self.texts,
            "embedded": self.embedded,
            "remaining": self.remaining,
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
        }
