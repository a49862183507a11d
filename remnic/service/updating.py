"""An update's other memories: what ``remnic update`` changed besides the memory it names.

An update can rewrite a second memory in its commit: ``--status active`` on a superseded memory drops
its successor's ``supersedes``, ``--supersedes OTHER`` marks OTHER superseded, a status decision
revives or supersedes what the memory replaced. :class:`UpdateResult` names each, as ``versions
revert`` and the review decisions do (``alsoChanged``), so no file is rewritten unannounced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from remnic.memfile.model import MemoryRecord

from .chains import ids_of
from .reverting import CLAIMED, REVIVED, SUPERSEDED, UNLINKED, AlsoChanged
from .writes import WriteResult

if TYPE_CHECKING:
    from .memory import Memory


@dataclass(frozen=True)
class UpdateResult(WriteResult):
    """An update's :class:`WriteResult` and each other memory its commit changed."""

    also_changed: tuple[AlsoChanged, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "alsoChanged": [a.to_dict() for a in self.also_changed]}


def update(
    mem: Memory, memory_id: str, changes: Mapping[str, Any], *, source: str, content: str | None = None
) -> UpdateResult:
    """:meth:`Memory.update`, and the other memories its commit changed (:func:`also_changed`)."""
    result = mem.update(memory_id, changes, source=source, content=content)
    base = {f.name: getattr(result, f.name) for f in fields(WriteResult)}
    return UpdateResult(**base, also_changed=also_changed(result))


def also_changed(result: WriteResult) -> tuple[AlsoChanged, ...]:
    """The memories ``result``'s write changed in how they link to its memory, from the files its
    transaction staged (:attr:`WriteResult.written`): a file counts only when its ``supersedes`` or
    ``supersededBy`` names the updated memory before or after the write."""
    if result.commit is None or not result.changed:
        return ()
    me = result.record.id
    out = []
    for written in sorted(result.written, key=lambda w: w.path):  # git's order, as the commit lists them
        after = written.after
        if written.path == result.record.path or after is None or after.id == me:
            continue
        change = _change(me, written.before, after)
        if change is not None:
            out.append(AlsoChanged(after.id, written.path, change))
    return tuple(out)


def _change(me: str, before: MemoryRecord | None, after: MemoryRecord) -> str | None:
    claimed_before = before is not None and me in ids_of(before.frontmatter.get("supersedes"))
    claimed_after = me in ids_of(after.frontmatter.get("supersedes"))
    replaced_before = before is not None and before.status == "superseded" and _by(before) == me
    replaced_after = after.status == "superseded" and _by(after) == me
    if replaced_after and not replaced_before:
        return SUPERSEDED
    if replaced_before and not replaced_after:
        return REVIVED
    if claimed_before and not claimed_after:
        return UNLINKED
    if claimed_after and not claimed_before:
        return CLAIMED
    return None


def _by(record: MemoryRecord) -> str | None:
    said = record.frontmatter.get("supersededBy")
    return str(said) if said else None
