"""The two sides of a supersession kept in step: what a revert restores on the other memory of a link its
version states (or no longer states), a revival's stale claims, and the checks doctor and a review's
answer make of links set on one side only or of a value a flagged successor hides."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError, UsageError
from remnic.memfile.model import MemoryRecord, now_iso
from remnic.observe.records import key_part

from .chains import CURRENT as _CURRENT
from .chains import Links
from .chains import ids_of as _ids
from .superseding import (
    LINK_KEYS,
    REVIVED_NOTE,
    WAITING,
    patch_staged,
    said_at,
    set_claims,
    supersede,
)

if TYPE_CHECKING:
    from remnic.repo.transaction import Transaction

    from .memory import Memory

__all__ = [
    "PairLinks",
    "drop_stale_claims",
    "hidden_by_flag",
    "one_sided_links",
    "pair_links",
    "revive_values",
    "same_key",
    "stranded_by_changes",
    "value_groups",
]


def value_groups(olds: Sequence[MemoryRecord]) -> list[list[MemoryRecord]]:
    """``olds`` (the memories one successor replaced) grouped by the value they state: two are of one value
    when they state a value for one entity/attribute key, or one claims (``supersedes``) the other — a
    replacement approved as overtaken keeps its claim on what it was to replace. In the order given."""
    groups: list[list[MemoryRecord]] = []
    for old in olds:
        into = [g for g in groups if any(_one_value(old, o) for o in g)]
        merged = [old] + [o for g in into for o in g]
        groups = [g for g in groups if g not in into] + [merged]
    return groups


def _one_value(a: MemoryRecord, b: MemoryRecord) -> bool:
    return (
        same_key(a, b) or a.id in _ids(b.frontmatter.get("supersedes")) or b.id in _ids(a.frontmatter.get("supersedes"))
    )


def same_key(a: MemoryRecord, b: MemoryRecord) -> bool:
    """Whether both memories state a value for one entity/attribute key."""
    return bool(_value_keys(a) & _value_keys(b))


def _value_keys(record: MemoryRecord) -> set[tuple[str, str]]:
    entity, attributes = record.frontmatter.get("entityRef"), record.frontmatter.get("structuredAttributes")
    if not entity or not isinstance(attributes, Mapping):
        return set()
    return {(key_part(str(entity)), key_part(str(k))) for k in attributes}


def revive_values(mem: Memory, tx: Transaction, olds: Sequence[MemoryRecord]) -> list[tuple[str, str]]:
    """Make current again what a leaving successor (dismissed, or reverted to a version that replaces
    nothing) had replaced: for each value (:func:`value_groups`) the memory said last is current, and the
    others of that value are superseded by it (both sides), so the value has one current memory — a
    replacement approved as overtaken by the leaving one is current, not the memory it was to replace.
    (id, how it changed) for each memory changed."""
    out: list[tuple[str, str]] = []
    for group in value_groups(olds):
        head = max(group, key=said_at)
        gone = dict.fromkeys(k for k in LINK_KEYS if k in head.frontmatter)
        revived = patch_staged(mem, tx, head, {"status": "active", **gone})
        if revived is None:
            continue
        out.append((head.id, REVIVED_NOTE))
        others = [o for o in group if o.id != head.id]
        when = str(head.frontmatter.get("validAt") or head.created or now_iso())
        for other in others:
            link = {"status": "superseded", "supersededBy": head.id, "supersededAt": now_iso(), "invalidAt": when}
            if patch_staged(mem, tx, other, link) is not None:
                out.append((other.id, f"superseded by {head.id}"))
        claims = _ids(revived.frontmatter.get("supersedes"))
        set_claims(mem, tx, revived, [*claims, *(o.id for o in others if o.id not in claims)])
    return out


def drop_stale_claims(mem: Memory, tx: Transaction, revived_id: str) -> list[str]:
    """Remove ``revived_id`` from the ``supersedes`` of each superseded memory still naming it: it is current
    again, so those (history now) no longer replaced it, and a claim left would make a loop. The ids changed."""
    out = []
    for found in mem.files.scan().records:
        record = tx.staged_record(found.id) or found
        said = _ids(record.frontmatter.get("supersedes"))
        if (
            record.status == "superseded"
            and revived_id in said
            and set_claims(mem, tx, record, [i for i in said if i != revived_id])
        ):
            out.append(record.id)
    return out


def stranded_by_changes(mem: Memory, changes: Iterable[Any]) -> list[str]:
    """What a sync's ``changes`` (memory files edited or deleted by hand) left with no current memory: each
    superseded memory whose successor is one of them and is now deleted, forgotten or rejected — one line
    naming it and the command that makes it current again (forget's warning, for a hand edit)."""
    ids = {c.id for c in changes if getattr(c, "id", None)}
    if not ids:
        return []
    links = Links(mem.files.scan().records)
    return [s.describe() for s in links.stranded() if s.successor_id in ids]


def hidden_by_flag(records: Iterable[MemoryRecord], successor_id: str | None = None) -> list[str]:
    """Why each superseded memory whose successor is quarantined (only ``successor_id``'s, when given) has no
    current memory: a flagged successor leaves recall while it waits, and takes the value it replaced with it."""
    records = list(records)
    flagged = {r.id: r for r in records if r.status == "quarantined" and successor_id in (None, r.id)}
    out = []
    for old in records:
        by = old.frontmatter.get("supersededBy")
        if old.status == "superseded" and isinstance(by, str) and by in flagged:
            out.append(
                f"hidden value: {old.id} ({old.path}) is superseded by {by} ({flagged[by].path}), which is "
                f"quarantined (flagged for review), so that value has no current memory in recall until {by} is "
                f"decided: `remnic review dismiss {by}` makes {old.id} current again, `remnic review approve "
                f"{by}` keeps {by} as its value"
            )
    return out


@dataclass
class PairLinks:
    """What a revert changes in the other memory of a supersession its version restores."""

    demote: list[MemoryRecord] = field(default_factory=list)
    """Current memories the restored version supersedes: superseded by it again (asked with --force)."""
    claim: list[MemoryRecord] = field(default_factory=list)
    """The successor the restored version is superseded by: its ``supersedes`` names it again."""
    keep: list[MemoryRecord] = field(default_factory=list)
    """Memories superseded by it stating a value of its key, which the restored version (current) does not
    name: still replaced by it (its value is theirs), so its ``supersedes`` names them again."""
    revive: list[MemoryRecord] = field(default_factory=list)
    """Memories superseded by it that the restored version no longer replaces: current again, one per value."""
    settle: list[tuple[MemoryRecord, str]] = field(default_factory=list)
    """The others of such a value, each with the revived memory that supersedes it now (one current memory)."""

    def apply(self, mem: Memory, tx: Transaction, record: MemoryRecord) -> list[str]:
        """Stage both sides' changes; the ids changed."""
        changed = [old.id for old in self.demote if supersede(mem, tx, old, record)]
        for successor in self.claim:
            named = [*_ids(successor.frontmatter.get("supersedes")), record.id]
            if patch_staged(mem, tx, successor, {"supersedes": named[0] if len(named) == 1 else named}) is not None:
                changed.append(successor.id)
        if self.keep:
            now = tx.staged_record(record.id) or record
            claims = _ids(now.frontmatter.get("supersedes"))
            set_claims(mem, tx, now, [*claims, *(k.id for k in self.keep if k.id not in claims)])
        revived = revive_values(mem, tx, [*self.revive, *(old for old, _ in self.settle)])
        changed += [i for i, _ in revived]
        for old in self.revive:
            if old.id in changed:
                drop_stale_claims(mem, tx, old.id)
        return changed

    def note(self, changed: Collection[str]) -> str:
        demoted = [r.id for r in self.demote if r.id in changed]
        claimed = [r.id for r in self.claim if r.id in changed]
        parts = [f"{i} superseded by it again" for i in demoted] + [f"{i} supersedes it again" for i in claimed]
        parts += [f"{r.id} {REVIVED_NOTE}" for r in self.revive if r.id in changed]
        parts += [f"{r.id} superseded by {by}" for r, by in self.settle if r.id in changed]
        return f" ({'; '.join(parts)})" if parts else ""


def pair_links(mem: Memory, record: MemoryRecord, label: str, *, force: bool) -> PairLinks:
    """The other side of the supersession ``record`` (a version being restored) states, so that a revert
    never leaves a link set on one side only.

    Superseded by B: B's ``supersedes`` names it again (the version says so, and B stays as it is).
    Active and superseding P, while P is current too (made current again by a dismiss): both would be
    recalled as current, so it is refused unless ``force``, which marks P superseded again.
    Each memory superseded by it now that the version (current, waiting for review or rejected) does not
    replace — active, it does not name it in ``supersedes``; waiting or rejected, a claim replaces nothing —
    is current again: else its value would have no current memory.
    """
    links = PairLinks()
    by = record.frontmatter.get("supersededBy")
    if record.status == "superseded" and isinstance(by, str) and by:
        successor = _get(mem, by)
        if (
            successor is not None
            and successor.namespace == record.namespace
            and record.id not in _ids(successor.frontmatter.get("supersedes"))
        ):
            links.claim.append(successor)
    if record.status == "active":
        olds = [_get(mem, i) for i in _ids(record.frontmatter.get("supersedes"))]
        links.demote = [o for o in olds if o is not None and o.status in _CURRENT and o.namespace == record.namespace]
        if links.demote and not force:
            names = ", ".join(f"{o.id} ({o.path}, {o.status})" for o in links.demote)
            ids = ", ".join(o.id for o in links.demote)
            now = _get(mem, record.id)
            said = (  # a revert undoing an earlier one's release of the claim revives nothing: not said so
                f"{label} says {record.id} (current) supersedes {names}, which is current too"
                if now is not None and now.status in _CURRENT
                else f"{label} makes {record.id} current again and says it supersedes {names}, which is current too"
            )
            raise UsageError(
                f"{said}: both would be recalled as current. Pass --force to revert anyway and mark {ids} "
                f"superseded by {record.id} in the same commit, or forget {ids} first"
            )
    if record.status not in ("active", *WAITING, "rejected"):
        return links  # history (its value passes on), or forgotten: what it replaced stays as forget leaves it
    replaces = set(_ids(record.frontmatter.get("supersedes"))) if record.status == "active" else set()
    replaced = [
        r
        for r in mem.files.scan().records
        if r.status == "superseded"
        and r.frontmatter.get("supersededBy") == record.id
        and r.namespace == record.namespace
        and r.id not in replaces
    ]
    if record.status == "active":  # a current version keeps what states its own key: that value is its
        links.keep = [o for o in replaced if same_key(o, record)]
        replaced = [o for o in replaced if o not in links.keep]
    for group in value_groups(replaced):  # as revive_values settles them: the one said last is current
        head = max(group, key=said_at)
        links.revive.append(head)
        links.settle += [(r, head.id) for r in group if r.id != head.id]
    return links


def _get(mem: Memory, memory_id: str) -> MemoryRecord | None:
    try:
        return mem.get(memory_id)
    except RemnicError:  # gone or unreadable: no other side to restore
        return None


def one_sided_links(records: Iterable[MemoryRecord]) -> list[tuple[MemoryRecord, MemoryRecord, str, str]]:
    """(claimant, other, the claimant's key, what is missing) for each supersession set on one side only: a
    current memory's ``supersedes`` naming one not ``supersededBy`` it (both recalled as current, or the old
    one left without its link), a superseded memory's ``supersededBy`` naming one whose ``supersedes`` does
    not name it (dismissing that one would not make the old one current again), or a superseded memory's
    ``supersedes`` naming a current one (a loop: a revival made that one current again after it). A memory
    waiting for review that claims another is no one-sided link: its claim waits for approval (which drops a
    claim on a memory another one replaced since)."""
    by_id = {r.id: r for r in records}
    out: list[tuple[MemoryRecord, MemoryRecord, str, str]] = []
    for r in by_id.values():
        if r.status in _CURRENT:
            for old_id in _ids(r.frontmatter.get("supersedes")):
                old = by_id.get(old_id)
                waits = r.status in WAITING
                if old is not None and old.frontmatter.get("supersededBy") != r.id and not waits:
                    out.append((r, old, "supersedes", f"{old_id} has no `supersededBy: {r.id}`"))
        by = r.frontmatter.get("supersededBy")
        successor = by_id.get(by) if r.status == "superseded" and isinstance(by, str) else None
        if successor is not None and r.id not in _ids(successor.frontmatter.get("supersedes")):
            out.append((r, successor, "supersededBy", f"{successor.id} has no `supersedes: {r.id}`"))
        if r.status == "superseded":
            for old_id in _ids(r.frontmatter.get("supersedes")):
                old = by_id.get(old_id)
                if old is not None and old.status in _CURRENT and old.frontmatter.get("supersededBy") != r.id:
                    why = (
                        f"{old_id} is {old.status}, current again after it (a loop: the superseded memory still "
                        f"claims to replace the current one); drop {old_id} from {r.id}'s `supersedes`"
                    )
                    out.append((r, old, "supersedes", why))
    return out
