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
class PendingReport:
    """What ``embed_pending`` did: memories given their vectors, texts embedded, what is left."""

    filled: int = 0
    texts: int = 0
    embedded: int = 0
    """Texts actually run through the model (the rest came from the embedding cache)."""
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
