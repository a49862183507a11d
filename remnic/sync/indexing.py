"""The index step of a sync: apply what the run read, and what happens when that fails after a commit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError
from remnic.index.state import NotContinued
from remnic.memfile.model import MemoryRecord

if TYPE_CHECKING:  # pragma: no cover
    from .engine import SyncTarget


STARTS_FRESH = "startsFresh"
"""The probe's key (sync's own): the index's next write replaces it with an empty build (see below)."""


def index_health_of(index: Any) -> dict[str, Any] | None:
    """The index's cheap health probe (its manifest and interrupted-write mark), None without an index."""
    if index is None:
        return None
    health: dict[str, Any] = index.health().to_dict()
    health[STARTS_FRESH] = health.get("state") not in ("ok", "behind") and index.starts_fresh()
    return health


def index_commit_of(health: dict[str, Any] | None) -> tuple[bool, str | None]:
    """(index usable, the commit it records), from :func:`index_health_of`. An index whose next write starts
    a fresh build (missing, a write interrupted by a crash, another schema, model or settings) records none,
    though its manifest names one: only a full pass fills that build."""
    if health is None:
        return False, None
    fresh = health.get(STARTS_FRESH) or health.get("state") in ("corrupt", "missing")
    return True, None if fresh else health.get("commit")


def caught_up_note(health: dict[str, Any] | None, head: str | None) -> str:
    """What a run says when it caught up an index an earlier sync (or ``import``) left behind: it was
    killed, or failed, between its commit and the end of its index step."""
    was, detail = (health or {}).get("state"), str((health or {}).get("detail") or "").split(";")[0]
    why = f" (the index was {was}: {detail})" if was in ("corrupt", "missing") and detail else ""
    at = f" to {head[:8]}" if head else ""
    return f"caught the index up{at}: an earlier sync (or import) committed but did not finish its index step{why}"


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
    full: bool = False,
) -> tuple[str, str | None]:
    """Apply the batch (upserts, removals, the new HEAD) and record that HEAD as reflected, since the
    run reconciled everything up to it (after a pull, a checkout or a full pass too, so the next recall
    does not re-read what sync just indexed, nor re-admit files sync keeps out). Returns (``updated`` or
    ``behind``, why it is behind).

    The batch holds what changed since the commit the index recorded when the run began, or every
    memory file (``full``). An index that records none when the batch is applied (deleted, broken, or
    replaced by an older or newer remnic meanwhile) would be started empty and stamped current with
    only the batch in it, the other memories missing from every recall for good: it is rebuilt from
    every file instead (``progress`` hears it), as a recall would.

    When the run committed, a failure here (the index lock held by a rebuild past
    ``store.lockTimeoutS``, a broken index) must not hide that commit: its sync base has moved, so
    the next run would never report it. The failure is returned instead; the caller reports the
    commit and marks the index behind for the next run to catch up. Without a commit it is raised:
    the next run reads the same edits again.
    """
    upserts, removed, head = batch
    try:
        defer = max(0, target.settings.sync.defer_embeddings_above)
        stamp = head is not None
        try:
            index.apply(
                upserts, removed, head, progress=progress, defer_above=defer, strict=True, stamp=stamp, complete=full
            )
        except NotContinued as exc:
            index.rebuild(
                target.files, target.ledger, progress, reason=f"sync found the index {exc.state}: {exc.detail}"
            )
    except Exception as exc:
        if not committed:
            raise
        return "behind", exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
    return "updated", None
