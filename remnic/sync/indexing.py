"""The index step of a sync: apply what the run read, and what happens when that fails after a commit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError
from remnic.memfile.model import MemoryRecord

if TYPE_CHECKING:  # pragma: no cover
    from .engine import SyncTarget


def index_commit_of(index: Any) -> tuple[bool, str | None]:
    """(index usable, the commit it records)."""
    if index is None:
        return False, None
    return True, index.health().to_dict().get("commit")


def indexed_paths(index: Any) -> set[str]:
    try:
        with index.lock:
            return set(index.view()[2].all_paths())
    except Exception:  # noqa: BLE001 - no usable index yet: nothing in it to remove
        return set()


def update_index(
    target: SyncTarget,
    index: Any,
    batch: tuple[list[MemoryRecord], list[str], str | None],
    progress: Callable[[int, int], None] | None,
    *,
    committed: str | None,
) -> tuple[str, str | None]:
    """Apply the batch (upserts, removals, the new HEAD); then record that HEAD as reflected, since the
    run reconciled everything up to it. Returns (``updated`` or ``behind``, why it is behind).

    ``apply`` only advances the recorded commit to a direct child of the one it has (a remnic
    write); after a pull, a checkout or a full pass sync says so explicitly (``refresh_paths`` with
    no paths), so the next recall does not re-read what sync just indexed, nor re-admit files sync
    keeps out.

    When the run committed, a failure here (the index lock held by a rebuild past
    ``store.lockTimeoutS``, a broken index) must not hide that commit: its sync base has moved, so
    the next run would never report it. The failure is returned instead; the caller reports the
    commit and marks the index behind for the next run to catch up. Without a commit it is raised:
    the next run reads the same edits again.
    """
    upserts, removed, head = batch
    try:
        index.apply(
            upserts, removed, head, progress=progress, defer_above=max(0, target.settings.sync.defer_embeddings_above)
        )
        if head is not None:
            manifest = index.manifest()
            if manifest is None or manifest.commit != head:
                index.refresh_paths(target.files, [], head)
    except Exception as exc:
        if not committed:
            raise
        return "behind", exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
    return "updated", None
