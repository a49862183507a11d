"""``remnic versions revert``: a version's text restored as a new commit (history is never rewritten).

The restored text keeps two things from the memory as it is now: its id (a version from before
sync gave the file one has none) and the category its folder gives after a move between category
folders (what sync would have set, see docs/sync.md). A revert is a change made now, so ``updated``
is now (``created`` stays the version's).

A revert may change other memories in its commit, to keep a supersession set on both sides (a
successor's ``supersedes`` dropped with ``--force``, one given back or marked superseded again) or a
merge undone (``--force`` on a memory dedup or consolidation merged: the survivor no longer lists it
in ``derived_from`` nor counts it): :class:`RevertResult` names each, and the commit's body lists them.

Uncommitted edits to the file (``--force``) are never discarded: they are committed first, as they are on
disk (a malformed file too), as a version of their own, which :attr:`RevertResult.kept_edits` names.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import MemoryFormatError, RemnicError, UsageError
from remnic.memfile.model import MemoryRecord, now_iso, parse_file
from remnic.memfile.normalize import render
from remnic.memfile.validate import Checked, check_bytes, check_text
from remnic.memfile.values import moved_category, own_id
from remnic.repo import history as _history
from remnic.repo.messages import Version, trailers_for

from .chain_links import pair_links
from .chains import CURRENT, Links
from .superseding import patch_staged, unlink_successor
from .writes import WriteResult, check_writable

if TYPE_CHECKING:
    from remnic.repo.history import MemoryHistory
    from remnic.repo.transaction import CommitOutcome, Transaction

    from .memory import Memory

UNLINKED = "supersedes-dropped"
"""A successor's ``supersedes`` no longer names the reverted memory (``--force``: it is current again)."""
DEMOTED = "superseded-again"
"""A current memory the restored version supersedes, marked superseded by it again (``--force``)."""
RELINKED = "supersedes-restored"
"""The successor the restored version names in ``supersededBy``, whose ``supersedes`` names it again."""
SUPERSEDED = "superseded"
"""A current memory the changed one now supersedes (a review approving it)."""
REVIVED = "current-again"
"""A memory the changed one had replaced, current again (a review dismissing its successor, a revert to a
version that no longer replaces it)."""
CLAIMED = "supersedes-it"
"""The memory that replaces the changed one, whose ``supersedes`` now names it (a review approving a value
said before it: approved as superseded)."""
UNMERGED = "merge-undone"
"""The memory the reverted one was merged into, which no longer lists it in ``derived_from`` nor counts it
in ``reinforcement_count`` (``--force``: it is a memory of its own again)."""


@dataclass(frozen=True)
class AlsoChanged:
    """Another memory a revert (or a review decision) changed in its commit, and how."""

    id: str
    path: str
    change: str
    """:data:`UNLINKED`, :data:`UNMERGED`, :data:`DEMOTED`, :data:`RELINKED`, :data:`SUPERSEDED`, :data:`REVIVED`
    or :data:`CLAIMED`."""

    def describe(self, reverted: str) -> str:
        what = {
            UNLINKED: f"no longer supersedes {reverted} (its `supersedes` dropped)",
            DEMOTED: f"superseded by {reverted} again",
            RELINKED: f"supersedes {reverted} again",
            SUPERSEDED: f"superseded by {reverted}",
            REVIVED: f"current again (no longer superseded by {reverted})",
            CLAIMED: f"supersedes {reverted} (its `supersedes` names it)",
            UNMERGED: f"no longer lists {reverted} as merged into it (`derived_from`, `reinforcement_count`)",
        }[self.change]
        return f"{self.id} ({self.path}) {what}"

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "path": self.path, "change": self.change}


@dataclass(frozen=True)
class RevertResult(WriteResult):
    """A revert's :class:`WriteResult` (``record``: the memory reverted) and every other memory it changed."""

    also_changed: tuple[AlsoChanged, ...] = ()
    moved_from: str | None = None
    """The committed path the file was moved from by hand (not committed yet): the revert's commit
    records the move (or the commit of :attr:`kept_edits`, with the edits), so the memory keeps one file
    and its whole history."""
    kept_edits: KeptEdits | None = None
    """The version the uncommitted edits were committed as, before the revert replaced them (None: none)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "alsoChanged": [a.to_dict() for a in self.also_changed],
            "movedFrom": self.moved_from,
            "keptEdits": self.kept_edits.to_dict() if self.kept_edits is not None else None,
        }


@dataclass(frozen=True)
class KeptEdits:
    """Uncommitted edits a revert committed as a version of their own before replacing them."""

    version: int
    commit: str
    path: str
    malformed: bool = False
    """The file did not parse: committed byte for byte (``versions show`` reads it back; a revert to it is
    refused until it is fixed)."""

    @property
    def label(self) -> str:
        return f"v{self.version}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "label": self.label,
            "commit": self.commit,
            "path": self.path,
            "malformed": self.malformed,
        }


def revert(mem: Memory, id_or_path: str, spec: str, *, source: str, force: bool) -> RevertResult:
    """Restore a version's text as a new commit.

    Uncommitted edits to the file are refused unless ``force``; with it they are committed first, as a
    version of their own (:func:`_keep_edits`), so the revert never discards them. So is a
    revert that makes current again a memory an active one still claims to supersede (both would be
    recalled as current); with ``force`` that claim is dropped from the successor in the same commit, or,
    for a memory merged into another, the merge is taken out of the survivor's ``derived_from`` and count.
    The other side of a supersession the version restores is restored with it (see :func:`pair_links`).
    """
    with mem.committer.exclusive() as tx:
        check_writable(mem)
        found = mem.memory_history(id_or_path)
        versions = found.versions
        if spec.strip().lower() == "working":
            raise UsageError(
                "'working' is the file on disk now, not a committed version: there is nothing to revert it to. "
                "To keep the file as it is, commit it with `remnic sync run`; valid versions: "
                f"v1..v{len(versions)}, a commit sha or 'latest'"
            )
        target = _history.pick(versions, spec, allow_working=False)
        if target.deleted:  # reverting to a deletion would be `remnic forget` or rm; refuse, and say what restores
            before = _history.last_with_text(versions[: target.number - 1])
            hint = f" (the text it deleted is {before}: `remnic versions revert {shlex.quote(id_or_path)} {before}`)"
            raise UsageError(
                f"{target.label} ({target.short}) is the deletion of {target.path}: it has no content to "
                "restore" + (hint if before else "")
            )
        current, moved_from = _where(mem, found)
        if not force and found.uncommitted:
            raise UsageError(
                f"{current} has uncommitted changes that a revert would replace; commit them "
                "first (`remnic sync run`), or pass --force to have the revert commit them as a version of "
                "their own first (nothing is discarded)"
            )
        _refuse_other_memory(mem, found.memory_id, current)
        checked = _checked(mem.ledger.show(target.sha, target.path), current, mem)
        assert checked.record is not None
        kept = kept_fields(checked.record, target, found.memory_id)
        if kept:
            checked = _checked(render(checked, kept)[0], current, mem)
        record = checked.record
        assert record is not None
        disk = tx.read_bytes(current)
        if "updated" in record.frontmatter and disk != checked.text.encode("utf-8"):
            # The file already holds this version but for the time an earlier revert to it wrote: that
            # is the same text, so nothing is committed (a repeated revert makes no new version).
            now = _updated_of(disk, current, mem)
            same = _checked(render(checked, {"updated": now})[0], current, mem) if now else None
            if same is not None and disk == same.text.encode("utf-8") and moved_from is None:
                checked = same
            else:
                checked = _checked(render(checked, {"updated": now_iso()})[0], current, mem)
            record = checked.record
            assert record is not None
        chains = _successors(mem, record)
        if chains and not force:
            raise UsageError(_refusal(target.label, record.id, chains))
        links = pair_links(mem, record, target.label, force=force)
        saved, saved_outcome = _keep_edits(mem, tx, found, current, moved_from, record, target.label, source)
        reported_move = moved_from
        if saved is not None:  # the move, if any, went into that commit with the edits
            moved_from = None
        # Committed even when the disk already holds these bytes: git has no file at the new path yet.
        moved_data = checked.text.encode("utf-8") if moved_from is not None else None
        tx.put(current, checked.text, record, commit_data=moved_data)
        if moved_from is not None:  # gone from disk already: the commit records the move, not a second copy
            tx.remove(moved_from, on_disk=True)
        firsts = list({link.first.id: link for link in chains}.values())
        also = [
            AlsoChanged(link.first.id, link.first.path, UNMERGED)
            if link.merged is not None
            else AlsoChanged(link.first.id, link.first.path, UNLINKED)
            for link in firsts
            if (
                _unmerge(mem, tx, link.first, link.merged)
                if link.merged is not None
                else unlink_successor(mem, tx, link.first.id, record.id)
            )
        ]
        paired = links.apply(mem, tx, record)
        also += [AlsoChanged(o.id, o.path, DEMOTED) for o in links.demote if o.id in paired]
        also += [AlsoChanged(c.id, c.path, RELINKED) for c in links.claim if c.id in paired]
        also += [AlsoChanged(r.id, r.path, REVIVED) for r in links.revive if r.id in paired]
        ids = [record.id, *(a.id for a in also)]
        subject = f"remnic revert: {current} to {target.label} ({target.short})"
        if also:  # named in the subject by count, each in the body (a subject has no room for them)
            subject += f" and {len(also)} linked {'memory' if len(also) == 1 else 'memories'}"
        notes = [f"Moved from: {moved_from} (a move made by hand, committed with the revert)"] if moved_from else []
        if saved is not None:
            notes.append(f"Kept edits: the uncommitted edits to {saved.path} are {saved.label} ({saved.commit[:8]})")
        body = "\n".join([*notes, *(f"Also changed: {a.describe(record.id)}" for a in also)]) or None
        outcome = tx.commit(
            subject, trailers_for("revert", ids, record.namespace, source, **{"Reverted-To": target.sha}), body
        )
    if saved_outcome is not None:
        mem.indexer.submit(saved_outcome)
    if outcome.sha is not None:
        mem.indexer.submit(outcome)
    return RevertResult(
        "revert",
        (record,),
        outcome.sha,
        changed=outcome.sha is not None,
        warnings=tuple([*(saved_outcome.warnings if saved_outcome is not None else ()), *outcome.warnings]),
        also_changed=tuple(also) if outcome.sha is not None else (),
        moved_from=reported_move if outcome.sha is not None or saved is not None else None,
        kept_edits=saved,
    )


def _keep_edits(
    mem: Memory,
    tx: Transaction,
    found: MemoryHistory,
    path: str,
    moved_from: str | None,
    restored: MemoryRecord,
    label: str,
    source: str,
) -> tuple[KeptEdits | None, CommitOutcome | None]:
    """Commit the file's uncommitted edits at ``path`` as they are on disk, before the revert replaces
    them: one commit of their own (with the move from ``moved_from`` when the file was moved by hand
    too), so they stay a version the user can revert to. A malformed file is committed byte for byte
    (the next commit, the revert's, replaces it). (None, None) when the disk holds nothing to keep: no
    edits, only a move (the revert's commit records it), or the file gone from disk."""
    if not found.uncommitted:
        return None, None
    disk = tx.read_bytes(path)
    if disk is None or disk == tx.committed_bytes(path):
        return None, None
    if moved_from is not None and disk == tx.committed_bytes(moved_from):
        return None, None
    mem.files.check_writable_path(path)  # a symlink or folder there: refused before anything is committed
    checked = check_bytes(disk, path, mem.settings.store)
    record = checked.record if not checked.problems else None
    tx.put(path, disk, record, on_disk=True)
    if moved_from is not None:
        tx.remove(moved_from, on_disk=True)
    said = record if record is not None else restored  # a malformed file's own id and namespace are unreadable
    notes = [f"Moved from: {moved_from} (a move made by hand, committed with the edits)"] if moved_from else []
    if record is None:
        notes.append(f"The file did not parse; committed as it was on disk ({len(checked.problems)} problem(s))")
    outcome = tx.commit(
        f"remnic revert: keep the uncommitted edits to {path} before reverting it to {label}",
        trailers_for("sync", [said.id], said.namespace, source),
        "\n".join(notes) or None,
    )
    if outcome.sha is None:  # nothing differed from git after all
        return None, None
    versions = mem.ledger.history(path, memory_id=found.memory_id)
    number = next((v.number for v in versions if v.sha == outcome.sha), len(found.versions) + 1)
    return KeptEdits(number, outcome.sha, path, malformed=record is None), outcome


def _where(mem: Memory, found: MemoryHistory) -> tuple[str, str | None]:
    """(the path the revert writes, the committed path to delete in its commit). The file is written
    where it is now: after a move by hand not committed yet (gone from the path HEAD holds it at, on
    disk elsewhere with its id), that is the new path, asked for by id or by the old path, and the
    commit deletes the old one. Else HEAD would hold two files with the id, and the move would cut
    the memory's history at the revert. A file gone from disk altogether is revived where it was."""
    latest = found.versions[-1]
    old = latest.path
    if latest.deleted or found.memory_id is None or os.path.lexists(mem.root / old):
        return found.working_path, None
    try:
        now = found.working if found.working not in (None, old) else mem.get(found.memory_id).path
    except RemnicError:  # not on disk: revived at its old path
        return old, None
    data = mem.ledger.committed_bytes(old)
    try:
        there = own_id(parse_file(data.decode("utf-8"), old).frontmatter) if data is not None else None
    except (UnicodeDecodeError, MemoryFormatError, RemnicError):
        there = None
    if now is None or now == old or there != found.memory_id:
        return found.working_path, None
    return now, old


@dataclass(frozen=True)
class _Later:
    """A current memory later in the chain of a memory a revert makes current again."""

    first: MemoryRecord
    """The memory that replaced it directly."""
    head: MemoryRecord
    """The current memory at the end of that chain (``first`` itself when it is current)."""
    merged: MemoryRecord | None
    """The memory as it is now (archived) when ``first`` replaced it only by a merge, else None."""


def _successors(mem: Memory, record: MemoryRecord) -> list[_Later]:
    """Each current memory later in the chains of the memory ``record`` restores, when the revert leaves
    it current (not superseded, forgotten, archived …): each would be a second current answer beside it.
    A successor that was itself superseded (A → B → C, C current) counts through it: C holds the value now."""
    if record.status not in CURRENT:
        return []
    links = Links(mem.files.scan().records)
    now = links.by_id.get(record.id, record)
    return [
        _Later(first, head, now if links.merged_only(now, first) else None) for first, head in links.live_chains(now)
    ]


def _refusal(label: str, memory_id: str, chains: list[_Later]) -> str:
    """Why a revert would fork the value, naming each current memory that holds it and how it replaced
    ``memory_id`` (superseded it, or took it in by a merge); what --force changes on the direct successors."""
    said = []
    for link in chains:
        first, head = link.first, link.head
        how = (
            f"it was merged into {first.id} ({first.path}) by {_merged_by(first)}"
            if link.merged is not None
            else f"{first.id} ({first.path}) superseded it"
        )
        if first.id == head.id:
            said.append(how if link.merged is not None else f"{head.id} ({head.path}) supersedes it")
        else:
            said.append(
                f"{how}, and {first.id} was superseded in turn: {head.id} ({head.path}) is the current memory at "
                "the end of that chain"
            )
    claims = ", ".join(dict.fromkeys(link.first.id for link in chains if link.merged is None))
    merges = ", ".join(dict.fromkeys(link.first.id for link in chains if link.merged is not None))
    then = [f"{claims} then no longer claims to supersede it"] if claims else []
    then += [f"{merges} then no longer lists it as merged into it nor counts it"] if merges else []
    heads = ", ".join(dict.fromkeys(link.head.id for link in chains))
    return (
        f"{label} makes {memory_id} current again, but {'; '.join(said)}: both would be recalled as current. "
        f"Pass --force to revert anyway ({'; '.join(then)}), or forget or update {heads} first"
    )


def _merged_by(survivor: MemoryRecord) -> str:
    via = survivor.frontmatter.get("derived_via")
    return {"dedup": "`remnic dedup --merge`", "consolidation": "consolidation"}.get(str(via), "a merge")


def _unmerge(mem: Memory, tx: Transaction, survivor: MemoryRecord, merged: MemoryRecord) -> bool:
    """Take ``merged`` back out of the memory it was merged into: no longer in its ``derived_from`` (nor
    what had been merged into it), and its
    share of the ``reinforcement_count`` (one, plus its own count, as the merge added) taken off. The tags,
    turns and sessions the merge gave the survivor stay (they may be its own too). False when the survivor
    does not list it (nothing to undo)."""
    from .consolidate import _count, _strings  # consolidation's rules load on a revert, not every start-up

    fm = survivor.frontmatter
    listed = _strings(fm.get("derived_from"))
    if merged.id not in listed:
        return False
    # What had been merged into ``merged`` came along with it (their ``mergedInto`` names ``merged``).
    gone = {merged.id, *_strings(merged.frontmatter.get("derived_from"))}
    left = [d for d in listed if d not in gone]
    changes: dict[str, Any] = {"derived_from": left or None}
    if not left:
        changes["derived_via"] = None
    if "reinforcement_count" in fm:
        count = max(_count(fm) - 1 - _count(merged.frontmatter), 0)
        changes["reinforcement_count"] = count or None
        if not count:  # no reinforcement left to date
            changes["last_reinforced_at"] = None
    return patch_staged(mem, tx, survivor, changes) is not None


def _updated_of(data: bytes | None, path: str, mem: Memory) -> str | None:
    """The ``updated`` the file's bytes say (None: no file, unreadable, or no such key)."""
    checked = check_bytes(data, path, mem.settings.store) if data is not None else None
    said = checked.record.frontmatter.get("updated") if checked is not None and checked.record else None
    return str(said) if said else None


def _checked(text: str, path: str, mem: Memory) -> Checked:
    checked = check_text(text, path, mem.settings.store)
    if checked.problems or checked.record is None:
        raise MemoryFormatError(path, checked.problems)
    return checked


def _refuse_other_memory(mem: Memory, memory_id: str | None, path: str) -> None:
    """A revert writes the memory's file at ``path``; another memory's file there is never overwritten
    (its path was reused after this memory's file was deleted), --force or not."""
    try:
        there = own_id(parse_file(mem.files.read_text(path), path).frontmatter)
    except (OSError, ValueError, MemoryFormatError, RemnicError):
        return
    if memory_id is not None and there is not None and there != memory_id:
        raise UsageError(
            f"{path} now holds another memory ({there}); a revert of {memory_id} would overwrite it. "
            f"Move that file elsewhere first (and run `remnic sync run`), then revert again"
        )


def kept_fields(restored: MemoryRecord, target: Version, memory_id: str | None) -> dict[str, Any]:
    """The frontmatter a revert takes from the memory as it is now instead of from ``target``."""
    kept: dict[str, Any] = {}
    # The file keeps the memory's id: a version from before sync gave the file its id has none.
    if memory_id is not None and own_id(restored.frontmatter) != memory_id:
        kept["id"] = memory_id
    # Sync's rule for a move between category folders: a category that named the old folder follows
    # the file to the new one (sync never revisits it, so the revert must not bring the old one back).
    new = moved_category(restored.frontmatter.get("category"), target.path, restored.path)
    if new is not None:
        kept["category"] = new
    return kept
