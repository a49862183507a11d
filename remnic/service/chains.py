"""Supersession chains walked whole: A → B → C, where B replaced A and C replaced B.

One link at a time says too little. A revert that makes A current again forks the value when C is
current, though B (A's own successor) is only history; a write that supersedes B would fork it
the same way; and forgetting C leaves B superseded by nothing current (a "stranded" value). These
functions follow ``supersededBy`` and ``supersedes`` (both, as hand edits may set one side only) and
an archived memory's ``mergedInto`` (consolidation keeps the value in the memory it merged into).
Pure functions over records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from remnic.memfile.model import MemoryRecord
from remnic.memfile.schema import nfc_id

CURRENT = ("active", "pending_review")
"""States in which a memory is a value's current memory (recalled, or shown for review)."""
PASSED_ON = ("superseded", "archived")
"""States that hand the value on to another memory: ``supersededBy``, an archived one's ``mergedInto``."""


def ids_of(said: Any) -> list[str]:
    """The ids a ``supersedes`` value names (one id or a list), in NFC as ids compare."""
    return [nfc_id(said)] if isinstance(said, str) else [nfc_id(str(x)) for x in said] if isinstance(said, list) else []


@dataclass(frozen=True)
class Stranded:
    """A superseded memory whose successor is not current and passes the value on to none."""

    old: MemoryRecord
    successor_id: str
    successor: MemoryRecord | None
    """None: no memory has that id (deleted, or never there)."""

    @property
    def state(self) -> str:
        return self.successor.status if self.successor is not None else "missing"

    def describe(self) -> str:
        """The problem and the command that revives the old value."""
        old = f"{self.old.id} ({self.old.path})"
        if self.successor is not None and self.successor.status == "rejected":
            # The queue's own undo: dismissing the rejected successor again revives what it replaced.
            return (
                f"{self.old.id} is superseded by {self.successor_id}, which is rejected: "
                f"`remnic review dismiss {self.successor_id}` makes {self.old.id} current again"
            )
        if self.successor is None:
            said = f"{self.successor_id}, which no memory file holds (deleted)"
        else:
            said = f"{self.successor_id} ({self.successor.path}), which is {self.successor.status}"
        return (
            f"stranded value: {old} is superseded by {said}, so that value has no current memory; "
            f"`remnic update {self.old.id} --status active` makes {self.old.id} current again, or "
            f"`remnic store TEXT --supersedes {self.old.id}` replaces it with a new value"
        )


class Links:
    """The supersession links among a set of memories (one namespace's or all), walkable both ways."""

    def __init__(self, records: Iterable[MemoryRecord]) -> None:
        self.by_id: dict[str, MemoryRecord] = {}
        for record in records:
            self.by_id.setdefault(record.id, record)
        self._named_by: dict[str, list[MemoryRecord]] = {}
        for record in self.by_id.values():
            for old in ids_of(record.frontmatter.get("supersedes")):
                self._named_by.setdefault(old, []).append(record)
        self._passed_to: dict[str, list[MemoryRecord]] | None = None

    def successors(self, record: MemoryRecord) -> list[MemoryRecord]:
        """The memories that replaced ``record`` in its namespace: the one its ``supersededBy`` names, each
        whose ``supersedes`` names it, and for an archived one the memory it was merged into."""
        found: dict[str, MemoryRecord] = {}
        keys = ["supersededBy"] + (["mergedInto"] if record.status == "archived" else [])
        for key in keys:
            said = record.frontmatter.get(key)
            if isinstance(said, str) and said in self.by_id:
                found[said] = self.by_id[said]
        for other in self._named_by.get(record.id, ()):
            found.setdefault(other.id, other)
        return [r for r in found.values() if r.id != record.id and r.namespace == record.namespace]

    def predecessors(self, record: MemoryRecord) -> list[MemoryRecord]:
        """The superseded or archived memories that pass their value on to ``record`` (it is a chain's
        current memory, or one later merges must keep active: archiving it would leave them naming an
        archived memory)."""
        if self._passed_to is None:
            self._passed_to = {}
            for old in self.by_id.values():
                if old.status in PASSED_ON:
                    for successor in self.successors(old):
                        self._passed_to.setdefault(successor.id, []).append(old)
        return list(self._passed_to.get(record.id, ()))

    def merged_only(self, record: MemoryRecord, successor: MemoryRecord) -> bool:
        """Whether ``successor`` replaced ``record`` only by a merge (``record`` archived with ``mergedInto``
        naming it), not by a supersession either side states."""
        fm = record.frontmatter
        return (
            record.status == "archived"
            and fm.get("mergedInto") == successor.id
            and fm.get("supersededBy") != successor.id
            and record.id not in ids_of(successor.frontmatter.get("supersedes"))
        )

    def heads(self, start: MemoryRecord, *, seen: Iterable[str] = ()) -> list[MemoryRecord]:
        """The current memories at the ends of the chains from ``start`` (itself, when it is current):
        through superseded (and merged) memories only; a forgotten or rejected one ends its chain."""
        out: dict[str, MemoryRecord] = {}
        visited, stack = set(seen), [start]
        while stack:
            record = stack.pop()
            if record.id in visited:  # a loop written by hand ends here
                continue
            visited.add(record.id)
            if record.status in CURRENT:
                out.setdefault(record.id, record)
            elif record.status in PASSED_ON:
                stack.extend(self.successors(record))
        return list(out.values())

    def live_chains(self, record: MemoryRecord) -> list[tuple[MemoryRecord, MemoryRecord]]:
        """(direct successor, current head) for each current memory later in ``record``'s chains: were
        ``record`` current too, the value would have two current memories."""
        out = []
        for first in self.successors(record):
            out += [(first, head) for head in self.heads(first, seen=(record.id,))]
        return out

    def stranded(self, successor_id: str | None = None) -> list[Stranded]:
        """Each superseded memory whose ``supersededBy`` names a memory that is missing, or forgotten,
        rejected or archived with nothing to pass the value on to (only those naming ``successor_id``
        when given). A quarantined successor waits in the review queue: the decision settles it."""
        out = []
        for old in self.by_id.values():
            by = old.frontmatter.get("supersededBy")
            if old.status != "superseded" or not isinstance(by, str) or not by:
                continue
            if successor_id is not None and by != successor_id:
                continue
            successor = self.by_id.get(by)
            if successor is None:
                out.append(Stranded(old, by, None))
            elif successor.status not in (*CURRENT, "superseded", "quarantined") and not self.heads(
                successor, seen=(old.id,)
            ):
                out.append(Stranded(old, by, successor))
        return out
