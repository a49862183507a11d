"""Vectors computed after a sync: the second phase of a first adoption (see :mod:`remnic.index.pending`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory import Memory

Progress = Callable[[int, int], None]


class VectorOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    def vectors_pending(self: Memory) -> tuple[int, int]:
        """(memories searchable by BM25 whose vectors are still to be computed, texts they need embedded)."""
        self.settle_index()
        return self.index.vectors_pending()

    def embed_pending(
        self: Memory,
        *,
        progress: Progress | None = None,
        stop: Callable[[], bool] | None = None,
        batch_texts: int | None = None,
    ) -> Any:
        """Compute the pending vectors, shortest texts first, batch by batch (resumable: a stopped or killed
        run continues where it stopped). Returns a :class:`remnic.index.state.PendingReport`."""
        self.settle_index()
        if batch_texts is None:
            return self.index.embed_pending(progress, stop=stop)
        return self.index.embed_pending(progress, stop=stop, batch_texts=batch_texts)
