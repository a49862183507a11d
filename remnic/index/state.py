"""Small records describing the index's state (health, what a freshness check did)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .manifest import Manifest


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


@dataclass
class WorktreeReport:
    """What a recall did about memory files edited since the last commit (see ``follow_worktree``)."""

    dirty: int = 0
    """Memory files git reports changed (modified, new, deleted) since HEAD."""
    changed: int = 0
    """Of those (and of files indexed from the work tree before), how many differ from the index."""
    indexed: int = 0
    deferred: bool = False
    """True when there were too many to index before this recall: they wait for ``remnic sync run``."""
    paths: list[str] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

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
        """One line for a person (the query footer, the X-ray); None when no memory file is edited."""
        if self.deferred:
            shown = ", ".join(self.paths[:3]) + (", …" if self.changed > 3 else "")
            return (
                f"{self.changed} memory file(s) changed since the index and were not searched "
                f"({shown}); run `remnic sync run`"
            )
        if self.indexed:
            shown = ", ".join(self.paths[:3]) + (", …" if self.indexed > 3 else "")
            return (
                f"indexed {self.indexed} file(s) changed on disk since the last commit first ({shown}); "
                "not committed: `remnic sync run` commits them"
            )
        if self.dirty:
            return f"searched {self.dirty} uncommitted edit(s) as they are on disk (`remnic sync run` commits them)"
        return None


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
