"""What a sync run leaves for the next one: the memory paths left differing from the commit it reconciled."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord, content_hash

from .renames import OldFile

if TYPE_CHECKING:  # pragma: no cover
    from .engine import _Run


def next_pending(
    run: _Run,
    records: list[MemoryRecord],
    written: dict[str, list[str]],
    record_sha: dict[str, str],
    deleted: list[str],
    old: dict[str, OldFile],
    committed: set[str],
) -> dict[str, dict[str, Any]]:
    """Memory paths left differing from the new HEAD, with what the next run needs to know about them."""
    pending: dict[str, dict[str, Any]] = {p: {"kind": "unstable"} for p in run.unstable}
    pending.update({p: {"kind": "malformed", "sha": sha} for p, sha in run.malformed.items()})
    pending.update({p: {"kind": "empty", "sha": sha} for p, sha in run.empty.items()})
    for record in records:
        path = record.path
        if path in run.unnormalised and path not in run.status:
            pending[path] = {"kind": "unnormalised", "sha": record_sha[path]}
            continue
        if path in committed or not (path in run.status or path in written):
            continue
        pending[path] = {
            "kind": "uncommitted",
            "sha": record_sha[path],
            "id": record.id,
            "hash": content_hash(record.content),
            "explicitId": record.has_id,
        }
    for path in deleted:
        if path not in committed and path in run.status and run.in_head(path):
            info = old[path]
            pending[path] = {"kind": "deleted", "id": info.id, "hash": info.hash, "explicitId": info.explicit_id}
            if path in run.moves.held:  # so a watcher says it once, not on every pass
                pending[path]["heldFor"] = run.moves.held[path]
    # What a commit landing mid-run changed and this run never committed: the next run compares it with
    # HEAD as this run found it; so does one left unread (still being written, malformed, empty).
    for path in run.foreign:
        pending[path] = {**pending.get(path, {"kind": "committed"}), "since": run.head}
    for path, since in run.since.items():
        if pending.get(path, {}).get("kind") in ("unstable", "malformed", "empty") and path not in run.foreign:
            pending[path]["since"] = since
    return pending
