"""What an import line written as a new memory (no ``file``) takes that the line does not say.

- A line naming a memory of this repository in ``supersedes`` takes that memory's category, tags and
  importance when it gives none of its own, as ``remnic store --supersedes`` does (a decision's
  replacement is a decision of its weight; :func:`.inheriting.inherited` is the one rule). A memory
  only the same import brings gives nothing: its line may itself be incomplete.
- A line with ``status: archived`` (``forgotten``) and no ``archivedAt`` (``forgottenAt``) gets it,
  set to the import's time, as ``remnic update --status archived`` (``forget``) sets it.

A line that restores a file (``file`` kept) is never completed: it is restored byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError
from remnic.memfile.times import now_iso

from .inheriting import inherited

if TYPE_CHECKING:
    from .memory import Memory

_STATUS_TIMES = {"archived": "archivedAt", "forgotten": "forgottenAt"}


def complete_lines(mem: Memory, items: Sequence[Any], namespace: str | None) -> list[Any]:
    """``items`` with each new-memory line completed as the module says (the others as they are)."""
    now: str | None = None
    out: list[Any] = []
    for item in items:
        if not isinstance(item, Mapping) or "file" in item:
            out.append(item)
            continue
        added = _inherited(mem, item, namespace)
        status = item.get("status")
        stamp = _STATUS_TIMES.get(status) if isinstance(status, str) else None
        if stamp is not None and stamp not in item:
            now = now or now_iso()  # one time for the whole import
            added[stamp] = now
        out.append({**item, **added} if added else item)
    return out


def _inherited(mem: Memory, item: Mapping[str, Any], namespace: str | None) -> dict[str, Any]:
    """The keys a line with ``supersedes`` takes from the memory it names (none when it names none here)."""
    target = item.get("supersedes")
    if not isinstance(target, str) or not target.strip():
        return {}
    # Only keys the line leaves out: one it gives (null too) is its own, refused by name if wrong.
    takes_category = "category" not in item
    takes_tags = "tags" not in item and "tag" not in item  # a `tag:` is its tags, as a store's extra's is
    takes_importance = "importance" not in item and "importanceScore" not in item
    if not (takes_category or takes_tags or takes_importance):
        return {}
    ns = item.get("namespace") or namespace or mem.settings.namespaces.default
    if not isinstance(ns, str):
        return {}  # refused, naming the field, by the line's own checks
    try:
        old = mem.get(target)
    except (RemnicError, OSError):  # a missing or unreadable target is refused by name when planned
        return {}
    if old.namespace != ns:
        return {}
    took = inherited(mem, item, ns, None, None, None)
    added: dict[str, Any] = {}
    if takes_category and took[0]:
        added["category"] = took[0]
    if takes_tags and took[1]:
        added["tags"] = list(took[1])
    # A number only: the old file's own spelling (`importance: high`) is read there, not written anew.
    if takes_importance and isinstance(took[2], (int, float)) and not isinstance(took[2], bool):
        added["importance"] = took[2]
    return added
