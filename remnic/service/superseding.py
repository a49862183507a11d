"""Supersession links, and what a status change does to a memory's lifecycle keys.

Every write that names ``supersedes`` (store, import, update) marks the memory it names
superseded here; observed facts do it themselves: a newer value for an entity's attribute
("staging DB port" 5432 → 5433) marks the older active memories stating another value
``superseded`` by it. A status set by hand (``update --status``) brings the keys of its
state (``forgottenAt``, ``archivedAt``) and ends those of the state it leaves, so a file
never says two states at once (see docs/cli.md, ``remnic update``).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from remnic.errors import NotFoundError, RemnicError, ValidationError
from remnic.memfile.keys import change_key_problems
from remnic.memfile.model import MemoryRecord, now_iso, parse_time
from remnic.memfile.normalize import render, serialize_like
from remnic.memfile.validate import UPDATE_ARGUMENTS, Checked, check_bytes
from remnic.observe.records import MemoryObservation, key_part
from remnic.repo.scan_memo import stat_key
from remnic.repo.transaction import Transaction

from .chains import Links
from .chains import ids_of as _ids

if TYPE_CHECKING:
    from .memory import Memory

__all__ = [
    "LINK_KEYS",
    "WAITING",
    "current_same_value",
    "patch_staged",
    "review_links",
    "said_at",
    "set_claims",
    "states_other_value",
    "status_changes",
    "stranded_by",
    "supersede",
    "supersede_older",
    "superseded_target",
    "unlink_successor",
]


def states_other_value(obs: MemoryObservation, record: MemoryRecord) -> bool:
    """Whether ``record`` states another value for one of the observation's entity/attribute keys."""
    return bool(_conflicting_keys(obs, record.frontmatter))


def _conflicting_keys(obs: MemoryObservation, frontmatter: Mapping[str, Any]) -> list[str]:
    fact = obs.fact
    if not fact.entity_ref or frontmatter.get("entityRef") is None:
        return []
    if key_part(str(frontmatter["entityRef"])) != key_part(fact.entity_ref):
        return []
    theirs = frontmatter.get("structuredAttributes")
    if not isinstance(theirs, Mapping):
        return []
    theirs_norm = {key_part(str(k)): str(v).strip().lower() for k, v in theirs.items()}
    out = []
    for attr, value in fact.structured_attributes.items():
        other = theirs_norm.get(key_part(attr))
        if other is not None and other != str(value).strip().lower():
            out.append(key_part(attr))
    return out


def supersede_older(
    mem: Memory,
    tx: Transaction,
    record: MemoryRecord,
    obs: MemoryObservation,
    unindexed: Sequence[MemoryRecord] = (),
    earlier_in_flush: Collection[str] = (),
    restated: Sequence[MemoryRecord] = (),
) -> list[str]:
    """Mark older active memories that state another value for this fact's keys as superseded by it,
    or this one superseded when another value was said after it (ids returned either way).
    ``unindexed``: memories other processes committed that the index has not taken yet;
    ``earlier_in_flush``: ids this flush wrote before this one (said before it); ``restated``: memories
    this fact says again with another number or denies (they conflict whatever their keys)."""
    entity_ref = obs.fact.entity_ref if obs.fact.structured_attributes else None
    if not entity_ref and not restated:
        return []
    new_when = _said_when(obs.valid_at, record.created)
    replaced: list[str] = []
    later: list[tuple[tuple[float, float], MemoryRecord]] = []
    same = _same_entity(mem, tx, entity_ref, record.namespace, unindexed) if entity_ref else ()
    conflicting = [o for o in same if _conflicting_keys(obs, o.frontmatter)]
    for other in {o.id: o for o in [*conflicting, *restated]}.values():
        if other.id == record.id or other.status != "active":
            continue
        old_when = _said_when(other.frontmatter.get("validAt"), other.created)
        if old_when > new_when:
            later.append((old_when, other))
            continue
        # One flush's facts share a `created` (and a transcript's turns often one timestamp): among
        # those, the order they were said in decides.
        if old_when == new_when and other.id not in earlier_in_flush:
            continue
        if supersede(mem, tx, other, record, when=obs.valid_at or record.created):
            replaced.append(other.id)
    if replaced:  # both sides of each link (doctor's supersession-links check reads them)
        _claim(mem, tx, record, replaced)
    if later:
        # Another value was said after this one (an older transcript observed late, or observed
        # again): this fact is history from the start, ended by the first statement after it.
        _, ended_by = min(later, key=lambda pair: pair[0])
        if supersede(mem, tx, record, ended_by):
            _claim(mem, tx, ended_by, [record.id])
            replaced.append(record.id)
    return replaced


def _claim(mem: Memory, tx: Transaction, record: MemoryRecord, ids: Sequence[str]) -> None:
    """``record``'s ``supersedes`` names ``ids`` too (one id, or a list when it replaces several)."""
    now = tx.staged_record(record.id) or record
    said = _ids(now.frontmatter.get("supersedes"))
    set_claims(mem, tx, now, [*said, *(i for i in ids if i not in said)])


def current_same_value(
    mem: Memory, tx: Transaction, obs: MemoryObservation, ns: str, unindexed: Sequence[MemoryRecord] = ()
) -> MemoryRecord | None:
    """The active memory stating this fact's value for every one of its entity/attribute keys (the current
    value said again, by another speaker or in other words): reinforced rather than made a second current
    memory of the same value. The one said last when several do."""
    fact = obs.fact
    if not fact.entity_ref or not fact.structured_attributes:
        return None
    want = {key_part(str(k)): str(v).strip().lower() for k, v in fact.structured_attributes.items()}
    found: list[tuple[tuple[float, float], MemoryRecord]] = []
    for other in _same_entity(mem, tx, fact.entity_ref, ns, unindexed):
        now = tx.staged_record(other.id) or other
        theirs = now.frontmatter.get("structuredAttributes")
        if now.status != "active" or not isinstance(theirs, Mapping):
            continue
        have = {key_part(str(k)): str(v).strip().lower() for k, v in theirs.items()}
        if all(have.get(k) == v for k, v in want.items()):
            found.append((_said_when(now.frontmatter.get("validAt"), now.created), now))
    return max(found, key=lambda pair: pair[0])[1] if found else None


def said_at(record: MemoryRecord) -> tuple[float, float]:
    """When a memory's value was said, then when it was written (the order of a value's memories)."""
    return _said_when(record.frontmatter.get("validAt"), record.created)


def _said_when(valid_at: Any, created: Any) -> tuple[float, float]:
    """When a fact was said (its turn's time, else its memory's), then when it was written."""
    written = parse_time(created) or 0.0
    return (parse_time(valid_at) or written, written)


def _same_entity(
    mem: Memory, tx: Transaction, entity_ref: str, ns: str, unindexed: Sequence[MemoryRecord]
) -> Iterable[MemoryRecord]:
    """Memories about ``entity_ref``: staged in this flush, committed but not indexed yet, and indexed."""
    key = key_part(entity_ref)
    seen: set[str] = set()
    staged = [*tx.staged_records(), *mem.indexer.pending_records(), *unindexed]
    for record in staged:
        ref = record.frontmatter.get("entityRef")
        if record.namespace == ns and ref is not None and key_part(str(ref)) == key and record.path not in seen:
            seen.add(record.path)
            yield record
    paths = mem.index.with_entity(entity_ref, namespace=ns) if mem.has_index() else []
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        found = _read_once(mem, tx, path)
        if found is not None:
            yield found


# Per transaction (one flush), the memory files read from disk by path, keyed by their stat: a flush
# of many facts about one entity would otherwise parse and validate each of its memories once per fact.
_READS: weakref.WeakKeyDictionary[Transaction, dict[str, tuple[Any, MemoryRecord | None]]] = weakref.WeakKeyDictionary()


def _read_once(mem: Memory, tx: Transaction, path: str) -> MemoryRecord | None:
    """``mem.files.read(path)``, read again only when the file changed; None when it is gone or malformed."""
    try:
        key = stat_key(os.stat(os.path.join(mem.files.root, path)))
    except OSError:
        key = None
    cache = _READS.setdefault(tx, {})
    hit = cache.get(path)
    if key is not None and hit is not None and hit[0] == key:
        return hit[1]
    try:
        record: MemoryRecord | None = mem.files.read(path)
    except Exception:  # noqa: BLE001 - gone or malformed since it was indexed
        record = None
    if key is not None:
        cache[path] = (key, record)
    return record


# --- supersession links written by store, import and update ---


def patch_staged(mem: Memory, tx: Transaction, record: MemoryRecord, changes: Mapping[str, Any]) -> MemoryRecord | None:
    """Set frontmatter ``changes`` on the file as the transaction sees it now (earlier staged changes
    included); only those lines change (a None removes the key). None when the file is gone or unreadable."""
    disk = tx.read_bytes(record.path) or b""
    checked = check_bytes(disk, record.path, mem.settings.store)
    if not checked.ok or checked.record is None:
        return None
    text, meta = _patched(checked, changes, record.path)
    # A person's uncommitted edit stays theirs: the commit gets the change on git's copy (as update does).
    committed = tx.committed_bytes(record.path)
    commit_data = None
    if committed is not None and committed != disk:
        base = check_bytes(committed, record.path, mem.settings.store)
        if base.ok and base.record is not None:
            commit_data = _patched(base, changes, record.path)[0].encode("utf-8")
    updated = MemoryRecord(record.path, meta, checked.record.body, record.namespace)
    tx.put(record.path, text, updated, commit_data=commit_data)
    return updated


def _patched(checked: Checked, changes: Mapping[str, Any], path: str) -> tuple[str, dict[str, Any]]:
    assert checked.record is not None
    if any(v is None for v in changes.values()):  # removing a key: patched line by line, comments kept
        gone = {k for k, v in changes.items() if v is None}  # only these: a user's own `owner:` (null) stays
        meta = {k: v for k, v in {**checked.record.frontmatter, **changes}.items() if k not in gone}
        return serialize_like(checked.text, meta, checked.record.body, path=path), meta
    return render(checked, changes)


def supersede(mem: Memory, tx: Transaction, old: MemoryRecord, new: MemoryRecord, *, when: str | None = None) -> bool:
    """Mark ``old`` superseded by ``new``: status, ``supersededBy``, ``supersededAt`` and, unless the file
    already says when it stopped holding, ``invalidAt`` (when the new one became valid). The file stays.
    A memory another one already supersedes is left as it is (False): a memory has one successor, and
    overwriting the link would fork its chain into two current values (writes refuse it by name first,
    see :func:`superseded_target`) — unless its value is stranded (no current memory follows it: the
    successor was forgotten, rejected or deleted), when ``new`` takes the link over. A ``new`` waiting for
    review replaces nothing yet (False): its ``supersedes`` is a claim that approval applies."""
    if new.status in WAITING:
        return False
    staged = tx.staged_record(old.id) or old
    taken = staged.status == "superseded" and staged.frontmatter.get("supersededBy") not in (None, "", new.id)
    if taken and _current_heads(mem, staged, new.id, tx):
        return False
    changes: dict[str, Any] = {"status": "superseded", "supersededBy": new.id, "supersededAt": now_iso()}
    if not old.frontmatter.get("invalidAt"):
        changes["invalidAt"] = when or str(new.frontmatter.get("validAt") or new.created or now_iso())
    return patch_staged(mem, tx, old, changes) is not None


def superseded_target(mem: Memory, memory_id: Any, namespace: str, *, by: MemoryRecord | None = None) -> MemoryRecord:
    """The memory a write names in ``supersedes``, or a ValidationError naming the field. ``by``: the
    existing memory that would supersede it, refused when that would make a loop (itself, or a memory
    that already supersedes it, directly or down the chain): neither would be current. A memory another
    one already supersedes is refused too, naming its chain's current memory to supersede instead, unless
    no current memory follows it (a stranded value): the new memory then takes its link over."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise ValidationError.single("supersedes", f"must be a memory id, got {memory_id!r}")
    # Another namespace's memory reads exactly like a missing one: the answer must not tell them apart.
    missing = ValidationError.single(
        "supersedes", f"no memory with id {memory_id!r} to supersede in namespace {namespace!r}"
    )
    try:
        old = mem.get(memory_id)
    except NotFoundError:
        raise missing from None
    if old.namespace != namespace:
        raise missing
    refusal = target_refusal(old.id, old.status)
    if refusal:
        raise ValidationError.single("supersedes", refusal)
    if by is not None:
        _check_no_loop(mem, old, by)
    successor = old.frontmatter.get("supersededBy")
    if old.status == "superseded" and successor and (by is None or successor != by.id):
        heads = _current_heads(mem, old, None)  # ``by`` among them: it already replaces the value
        if heads:
            raise _already_superseded(old, str(successor), by, heads)
    return old


def _current_heads(
    mem: Memory, old: MemoryRecord, new_id: str | None, tx: Transaction | None = None
) -> list[MemoryRecord]:
    """The current memories ``old``'s value passes on to, not counting ``new_id`` (the memory about to
    take it); none: the value is stranded. ``tx``: as staged so far (an earlier line of the batch)."""
    records = [*(tx.staged_records() if tx is not None else ()), *mem.files.scan().records]
    return Links(records).heads(old, seen=(new_id,) if new_id else ())


def _check_no_loop(mem: Memory, old: MemoryRecord, by: MemoryRecord) -> None:
    if old.id == by.id:
        raise ValidationError.single("supersedes", f"{by.id} cannot supersede itself")
    # Walk what replaced ``by`` (supersededBy), then what ``old`` replaced (supersedes): hand edits may
    # have written only one side of a link. ``seen`` stops a loop already in the files.
    for start, key in ((by, "supersededBy"), (old, "supersedes")):
        goal = old.id if key == "supersededBy" else by.id
        seen = {start.id}
        link = start.frontmatter.get(key)
        while isinstance(link, str) and link not in seen:
            if link == goal:
                raise ValidationError.single(
                    "supersedes",
                    f"{old.id} already supersedes {by.id} (directly or through newer memories); {by.id} "
                    f"superseding it back would leave neither current",
                )
            seen.add(link)
            try:
                link = mem.get(link).frontmatter.get(key)
            except RemnicError:  # a link to a missing or unreadable file ends the chain
                break


def _already_superseded(
    old: MemoryRecord, successor: str, by: MemoryRecord | None, heads: list[MemoryRecord]
) -> ValidationError:
    """Why ``old``, superseded by ``successor`` already, cannot be superseded again while its chain has the
    current memories ``heads``, and what to name instead (taking it over silently would hide which value is
    replaced, and fork it)."""
    said = f"{old.id} ({old.path}) is already superseded by {successor}, and a memory has one successor"
    if by is not None and any(h.id == by.id for h in heads):
        return ValidationError.single(
            "supersedes", f"{said}: {by.id} already replaces its value through it, so there is nothing to supersede"
        )
    names = ", ".join(f"{h.id} ({h.path})" for h in heads)
    why = f"{said}: its value's current memory is {names}. To replace that value, supersede it instead"
    # Each surface names the field its own way (a flag, a request key): the problem carries the value.
    return ValidationError.single("supersedes", why, instead=heads[0].id)


WAITING = ("pending_review", "quarantined")
"""States of a memory waiting for a person's review. Its ``supersedes`` is a claim that waits with it:
the memory it names stays current until ``review approve`` applies the claim (a dismiss leaves it so),
so no unreviewed write — a suggestion, an agent's store — takes a value out of recall."""

UNSUPERSEDABLE = ("forgotten", "quarantined")
"""States a supersession must not overwrite: forgotten outranks superseded, and a quarantined memory
waits for a person's review (superseding either would quietly bring its text back into recall)."""


def target_refusal(memory_id: str, status: str) -> str | None:
    """Why a memory in ``status`` cannot be superseded (None: it can)."""
    if status not in UNSUPERSEDABLE:
        return None
    return (
        f"{memory_id} is {status}, and a {status} memory cannot be superseded (that would make it "
        f"superseded instead); name no memory to supersede, or first `remnic update {memory_id} --status active`"
    )


# --- status changes by hand ---

LINK_KEYS = ("supersededBy", "supersededAt", "invalidAt")
"""What :func:`supersede` writes on the memory it replaces."""


def status_changes(record: MemoryRecord, changes: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``changes`` plus what a new status brings and ends: ``forgottenAt`` for forgotten (as forget
    sets it), ``archivedAt`` for archived, and each removed when the memory leaves that state; back to
    active, a superseded memory drops its link (``supersededBy``, ``supersededAt``, ``invalidAt``).
    Returns the changes and the successor whose ``supersedes`` then names this memory no longer.
    Superseded needs a successor: refused without one. A key one slip from remnic's (``Status`` on a
    memory without one) is refused here, where the file is known: a key the file holds is its own."""
    slips = change_key_problems(changes, record.frontmatter, UPDATE_ARGUMENTS)
    if slips:
        more = f" (and {len(slips) - 1} more problem(s))" if len(slips) > 1 else ""  # writes.summary's form
        raise ValidationError(slips[0].describe() + more, problems=slips)
    out = dict(changes)
    named, said = changes.get("supersedes"), _ids(record.frontmatter.get("supersedes"))
    if isinstance(named, str) and said and said != [named]:
        # Another value replaced: those it replaced before still name it (supersededBy), so it keeps them.
        out["supersedes"] = said if named in said else [*said, named]
    status = changes.get("status")
    if status is None or status == record.status:
        return out, None
    fm, now = record.frontmatter, now_iso()

    def drop(*keys: str) -> None:
        for key in keys:
            if key in fm:
                out.setdefault(key, None)

    if status == "forgotten":
        out.setdefault("forgottenAt", now)
    else:
        drop("forgottenAt", "forgottenReason")
    if status == "archived":
        out.setdefault("archivedAt", now)
    else:
        drop("archivedAt")  # it would still read as archived (the original's rule)
    if status == "superseded" and not (out.get("supersededBy") or fm.get("supersededBy")):
        raise ValidationError.single(
            "status",
            f"superseded needs the memory that replaces {record.id}: store it with "
            f"`remnic store TEXT --supersedes {record.id}`, or `remnic update NEWER --supersedes {record.id}`",
        )
    successor = fm.get("supersededBy")
    if status != "active" or not successor:
        return out, None
    drop(*LINK_KEYS)
    return out, str(successor)


def unlink_successor(mem: Memory, tx: Transaction, successor_id: str, old_id: str) -> str | None:
    """Remove ``old_id`` from the successor's ``supersedes`` (the memory is current again, so nothing
    replaces it); the successor's id, or None when it is gone or names another memory."""
    try:
        successor = mem.get(successor_id)
    except RemnicError:  # a dangling supersededBy: nothing to unlink
        return None
    said = successor.frontmatter.get("supersedes")
    if said == old_id:
        left: Any = None
    elif isinstance(said, list) and old_id in said:
        left = [x for x in said if x != old_id] or None
    else:
        return None
    return successor.id if patch_staged(mem, tx, successor, {"supersedes": left}) is not None else None


REVIVED_NOTE = "current again"
SUPERSEDED_NOTE = "superseded by it"
CLAIMED_NOTE = "supersedes it"
"""How the commit's ``Remnic-Also-Changed`` trailer says what a decision did to a memory it replaced
(or, approved as superseded, to the memory that replaces it)."""

DECIDING = ("rejected", *WAITING)
"""Statuses from which ``active`` applies the memory's ``supersedes`` claim (a review approving it)."""


def review_links(
    mem: Memory,
    tx: Transaction,
    before: MemoryRecord,
    after: MemoryRecord,
    *,
    was: str | None = None,
    trailers: dict[str, str] | None = None,
) -> list[str]:
    """What a person's decision on ``before`` (now ``after``) changes in the memories it replaced; the ids
    changed. ``was``: the status HEAD has (``before``'s own may be a person's uncommitted edit of it).
    Rejected: each memory still superseded by it is current again (a dismissed correction must not leave
    its value with none, whoever set the status first), and its ``supersedes`` names them all, so that
    approving it later replaces them again. Approved (from the queue, or again after a rejection): those
    it claims that are still active are superseded now, and a claim on a memory another one replaced
    since is dropped. Approved as superseded: its successor's ``supersedes`` names it (a chain is set on
    both sides), and it keeps only the claims on what it or its successor replaced. ``trailers``: the commit's, given
    an ``Also-Changed`` line naming each memory changed and how."""
    changed = _review_links(mem, tx, before, after, was or before.status)
    if trailers is not None and changed:
        said = [trailers["Also-Changed"]] if trailers.get("Also-Changed") else []
        trailers["Also-Changed"] = "; ".join([*said, *(f"{i} {note}" for i, note in changed)])
    return [i for i, _ in changed]


def _review_links(
    mem: Memory, tx: Transaction, before: MemoryRecord, after: MemoryRecord, was: str
) -> list[tuple[str, str]]:
    if after.status == "rejected":
        olds = [
            r
            for r in mem.files.scan().records
            if r.status == "superseded" and r.frontmatter.get("supersededBy") == before.id
        ]
        from .chain_links import revive_values  # it builds on this module's links

        settled = revive_values(mem, tx, olds)
        changed = [i for i, _ in settled]
        said = _ids(before.frontmatter.get("supersedes"))
        named = said + [i for i in changed if i not in said]
        if named != said:
            patch_staged(mem, tx, after, {"supersedes": named[0] if len(named) == 1 else named})
        return settled
    if after.status == "active" and {was, before.status} & set(DECIDING):
        applied, kept = [], []
        for old_id in _ids(after.frontmatter.get("supersedes")):
            claimed = _staged_or_get(mem, tx, old_id)
            if claimed is None or claimed.namespace != after.namespace:  # gone or unreadable: nothing to replace
                kept.append(old_id)
            elif claimed.status == "active" and supersede(mem, tx, claimed, after):
                applied.append((claimed.id, SUPERSEDED_NOTE))
                kept.append(old_id)
            elif claimed.status == "rejected":
                pass  # a dismissed memory replaced nothing: nothing to claim (an approval claims what it replaced)
            elif claimed.status != "superseded" or claimed.frontmatter.get("supersededBy") == after.id:
                kept.append(old_id)
            elif not _current_heads(mem, claimed, after.id) and supersede(mem, tx, claimed, after):
                # Its successor left it stranded: this one takes it over. Judged as committed, not as staged:
                # the value this approval supersedes by its key (the claimed one's successor) is no stranding.
                applied.append((claimed.id, SUPERSEDED_NOTE))
                kept.append(old_id)
            # else another current memory replaced it since: the claim is stale, and dropped
        set_claims(mem, tx, after, kept)
        return applied
    if after.status == "superseded" and before.status != "superseded":
        by = after.frontmatter.get("supersededBy")
        successor = _staged_or_get(mem, tx, by) if isinstance(by, str) and by else None
        out = []
        if (
            successor is not None
            and successor.namespace == after.namespace
            and after.id not in _ids(successor.frontmatter.get("supersedes"))
            and set_claims(mem, tx, successor, [*_ids(successor.frontmatter.get("supersedes")), after.id])
        ):
            out.append((successor.id, CLAIMED_NOTE))
        # A claim on what its successor replaced too stays: were the successor dismissed, this one replaces it.
        kept = [
            i
            for i in _ids(after.frontmatter.get("supersedes"))
            if (prior := _staged_or_get(mem, tx, i)) is None or prior.frontmatter.get("supersededBy") in (after.id, by)
        ]
        set_claims(mem, tx, after, kept)
        return out
    return []


def _staged_or_get(mem: Memory, tx: Transaction, memory_id: str) -> MemoryRecord | None:
    try:
        return tx.staged_record(memory_id) or mem.get(memory_id)
    except RemnicError:
        return None


def set_claims(mem: Memory, tx: Transaction, record: MemoryRecord, ids: list[str]) -> bool:
    """``record``'s ``supersedes`` set to ``ids`` (one id, a list, or removed), when it says otherwise."""
    now = tx.staged_record(record.id) or record
    if _ids(now.frontmatter.get("supersedes")) == ids:
        return False
    value: Any = None if not ids else ids[0] if len(ids) == 1 else ids
    return patch_staged(mem, tx, now, {"supersedes": value}) is not None


def stranded_by(records: Iterable[MemoryRecord], memory_id: str | None = None) -> list[tuple[str, str]]:
    """(superseded id, rejected successor id) for each memory still ``superseded`` by a rejected one (only
    by ``memory_id`` when given): a rejection set by hand and committed by sync revives nothing, so the
    value has no current memory until ``remnic review dismiss SUCCESSOR`` revives it."""
    records = list(records)
    rejected = {r.id for r in records if r.status == "rejected" and (memory_id is None or r.id == memory_id)}
    return [
        (r.id, str(by))
        for r in records
        if r.status == "superseded" and (by := r.frontmatter.get("supersededBy")) in rejected
    ]
