"""Decisions that crossed on two clones, which a pull's merge cannot settle alone, named so the people on both
sides hear of them:

- a memory in review approved (active) on one side and dismissed (rejected) on the other merges to
  ``pending_review`` (:data:`remnic.memfile.merge.DISPUTED`);
- a memory superseded on each side by a different new memory: the merge keeps one ``supersededBy`` (a memory
  has one successor) and both new memories stay current, two answers for one value (:class:`Fork`; doctor's
  ``supersession-links`` names the same command);
- the remote's branch rewritten since the last fetch (a force push): the pull brings the commits it dropped
  back into this clone's history, and the next push back to the remote (:func:`history_rewritten`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import MemoryFormatError, RemnicError
from remnic.memfile.merge import DISPUTED, REVIEW_STATUS
from remnic.memfile.model import MemoryRecord, parse_file
from remnic.memfile.paths import MemoryPaths
from remnic.repo import remote as _remote

from .chains import CURRENT, ids_of
from .pull_guard import blob_bytes, tree_entries

if TYPE_CHECKING:
    from .memory import Memory


def _status(data: bytes | None, path: str) -> tuple[str | None, str | None]:
    """(status, id) of a memory file's bytes; (None, None) when absent or malformed."""
    if data is None:
        return None, None
    try:
        record = parse_file(data.decode("utf-8", "surrogateescape"), path)
    except MemoryFormatError:
        return None, None
    return record.status, record.id


def review_disputes(mem: Memory, ours: str | None, theirs: str | None, paths: list[str]) -> list[dict[str, Any]]:
    """The memories among ``paths`` now waiting for review whose status was active on one side of the merge
    and rejected on the other (``ours``/``theirs``: the two commits merged)."""
    if not ours or not theirs or not paths:
        return []
    entries = {side: tree_entries(mem, side, paths) for side in (ours, theirs, "HEAD")}
    blobs = blob_bytes(mem, {sha for found in entries.values() for _, sha in found.values()})
    out = []
    for path in paths:
        now, memory_id = _status(_bytes(blobs, entries["HEAD"].get(path)), path)
        if now != REVIEW_STATUS:
            continue
        sides = [_status(_bytes(blobs, entries[side].get(path)), path)[0] for side in (ours, theirs)]
        if set(sides) == set(DISPUTED):
            out.append({"path": path, "id": memory_id, "thisSide": sides[0], "otherSide": sides[1]})
    return out


def _bytes(blobs: dict[str, bytes], entry: tuple[str, str] | None) -> bytes | None:
    return blobs.get(entry[1]) if entry is not None else None


# --- one memory superseded on both sides ---


@dataclass(frozen=True)
class Fork:
    """``old`` superseded on two clones: ``kept`` is the successor its ``supersededBy`` names after the merge,
    ``other`` the second one, which names ``old`` in ``supersedes`` too. Both are current."""

    old: MemoryRecord
    kept: MemoryRecord
    other: MemoryRecord

    @property
    def command(self) -> str:
        """One chain again, ``kept`` current: ``other`` superseded by it (``kept``'s ``supersedes`` then lists
        both, and every link is set on both sides)."""
        return f"remnic update {self.kept.id} --supersedes {self.other.id}"

    def describe(self) -> str:
        return (
            f"{self.old.id} ({self.old.path}) was superseded on two clones, by {self.kept.id} ({self.kept.path}) "
            f"and by {self.other.id} ({self.other.path}); a memory has one successor, so the merge kept "
            f"`supersededBy: {self.kept.id}` and both new memories are current, two answers for one value. "
            f"`{self.command}` leaves {self.kept.id} the one current memory; if {self.other.id}'s text is the right "
            f"one, put it in {self.kept.id} too (`remnic update {self.kept.id} --content TEXT`)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.old.id,
            "path": self.old.path,
            "supersededBy": {"id": self.kept.id, "path": self.kept.path},
            "alsoSupersededBy": {"id": self.other.id, "path": self.other.path},
            "command": self.command,
            "message": self.describe(),
        }


def fork_of(claimant: MemoryRecord, old_id: str, lookup: Callable[[str], MemoryRecord | None]) -> Fork | None:
    """The fork ``claimant`` (naming ``old_id`` in ``supersedes``) makes, if any: ``old`` is superseded by
    another memory that is current too and names it as well."""
    if claimant.status not in CURRENT:
        return None
    old = lookup(old_id)
    by = old.frontmatter.get("supersededBy") if old is not None else None
    if old is None or old.status != "superseded" or not isinstance(by, str) or by == claimant.id:
        return None
    kept = lookup(by)
    if kept is None or kept.status not in CURRENT or old.id not in ids_of(kept.frontmatter.get("supersedes")):
        return None
    return Fork(old, kept, claimant)


def forks_among(records: Iterable[MemoryRecord]) -> list[Fork]:
    """Every fork among ``records`` (doctor: the whole repository)."""
    by_id: dict[str, MemoryRecord] = {}
    for record in records:
        by_id.setdefault(record.id, record)
    found = (
        fork_of(r, old_id, by_id.get) for r in by_id.values() for old_id in ids_of(r.frontmatter.get("supersedes"))
    )
    return [f for f in found if f is not None]


def supersession_forks(mem: Memory, paths: list[str]) -> list[dict[str, Any]]:
    """The forks the merge made: one successor is always new to this side, so only the memory files the pull
    changed (``paths``, as now in the working tree) are read, and the memories they name."""
    memory_paths = MemoryPaths.from_store(mem.settings.store)
    seen: dict[str, MemoryRecord | None] = {}

    def lookup(memory_id: str) -> MemoryRecord | None:
        if memory_id not in seen:
            try:
                seen[memory_id] = mem.files.find(memory_id)
            except RemnicError:  # gone or malformed: doctor names it
                seen[memory_id] = None
        return seen[memory_id]

    out: dict[tuple[str, str], Fork] = {}
    for path in paths:
        checked = mem.files.check(path) if memory_paths.is_memory(path) and (mem.root / path).is_file() else None
        record = checked.record if checked is not None else None
        for old_id in ids_of(record.frontmatter.get("supersedes")) if record is not None else []:
            fork = fork_of(record, old_id, lookup) if record is not None else None
            if fork is not None:
                out.setdefault((fork.old.id, fork.other.id), fork)
    return [f.to_dict() for f in out.values()]


# --- the remote's history rewritten ---


def history_rewritten(mem: Memory, tracking: str, was: str | None) -> dict[str, Any] | None:
    """``tracking`` (``origin/main``) as the last fetch saw it (``was``) is no longer in its history now: the
    remote's branch was rewritten (a force push, a reset). ``dropped``: its commits the remote no longer has;
    ``kept``: how many of them this clone's history holds, which the merge keeps and the next push restores."""
    ledger = mem.ledger
    now = _remote.rev(ledger, tracking)
    if was is None or now is None or ledger.is_ancestor(was, now):
        return None
    dropped = _count(mem, was, now)
    head = ledger.head()
    shared = _remote.merge_base(ledger, was, head) if head is not None else None
    kept = _count(mem, shared, now) if shared is not None else 0
    return {"tracking": tracking, "was": was, "now": now, "dropped": dropped, "kept": kept}


def _count(mem: Memory, tip: str, without: str) -> int:
    listed = _remote.run_git(mem.root, ["rev-list", "--count", tip, f"^{without}"])
    return int(listed.out.strip() or 0) if listed.ok else 0
