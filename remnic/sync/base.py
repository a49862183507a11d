"""The sync base follows remnic's own commits, so the next sync sees only what was edited by hand.

A sync diffs from the commit it last reconciled (``SyncState.commit``). Left behind
by a ``store``, an ``update``, an entity page or an observation, it would take each
file those commits wrote for one added by hand: a hand edit of it an "add", never
stamped, and every such file reported again as a change "already in git". So each
commit remnic makes (under the write lock) moves the base along — only when:

- it was made directly on top of the base: a plain ``git commit`` that landed first
  still has to be synced, and keeps the base where it is;
- none of the memory files it committed may carry a hand edit: remnic's writes carry
  an uncommitted edit aside, but a frontmatter patch of a file edited by hand (a
  reinforcement, a supersession) commits the edit with the ``contentHash`` of the
  text before it. The next sync must still see that edit to stamp it.

A sync's own commit moves the base along too, even when a plain ``git commit`` landed under it
mid-run (:func:`reconciled_commit`): the next run must not report the run's own edits again. The
memory paths that foreign commit changed and the run did not commit itself stay pending with
``since`` (HEAD as the run found it): the next run reports them as committed in git and compares
their text with that commit (:func:`since_changes`).

Paths the last sync left pending stay pending, and so does the mark a sync sets before its own
commit ("index step due", ``SyncState.index_behind``): the base moves here, at commit time, so a
sync killed before its index step is done must leave the next one something to catch up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from remnic.memfile.values import hash_matches
from remnic.repo.ledger import Ledger
from remnic.repo.transaction import CommitOutcome, Staged

from .state import SyncState


def may_carry_hand_edit(staged: Staged) -> bool:
    """Whether a committed memory file came from a file on disk whose ``contentHash`` does not vouch
    for its text (new files and edits carried aside commit only remnic's own bytes)."""
    if staged.record is None or staged.data is None or staged.before is None or staged.commit_data is not None:
        return False
    record = staged.record
    return hash_matches(record.frontmatter.get("contentHash"), record.content) is not True


def follow_own_commit(
    root: Path, parents_of: Callable[[str], list[str]], outcome: CommitOutcome, staged: Sequence[Staged]
) -> None:
    """Move the sync base to ``outcome``'s commit when it holds nothing for a sync to reconcile (see the
    module docstring); the caller holds the write lock."""
    parent, commit = outcome.base, outcome.sha
    if parent is None or commit is None:
        return
    state = SyncState.load(root)
    if state.commit != parent or any(may_carry_hand_edit(s) for s in staged):
        return
    if parents_of(commit) != [parent]:  # HEAD moved under the write: the commit went on top of another
        return
    state.commit = commit
    state.save(root)


def mark_index_behind(root: Path) -> None:
    """Have the next sync catch the index up even when nothing else changed: a commit of remnic's own
    moved the base along, but its index update failed (the caller holds the write lock). A repository
    no sync has looked at needs no mark: its first sync is a full pass."""
    state = SyncState.load(root)
    if state.commit is None or state.index_behind:
        return
    state.index_behind = True
    state.save(root)


def reconciled_commit(
    ledger: Ledger,
    head: str | None,
    now: str | None,
    own: str | None,
    committed: set[str],
    is_memory: Callable[[str], bool],
) -> tuple[str | None, set[str]]:
    """(the commit a sync run reconciled, the memory paths it leaves to the next run with ``since``).

    ``head``: HEAD as the run found it; ``now``: HEAD after its commit; ``own``: that commit (or None);
    ``committed``: the paths it committed. A foreign commit with no commit of the run's on top keeps the
    base at ``head`` (the next run diffs it); under the run's own commit, the base is that commit and the
    foreign commit's paths the run did not commit itself are left (the run never read what they hold)."""
    if now == head:
        return now, set()
    if own is None or now != own or head is None:
        return head, set()
    parents = ledger.parents(own)
    if parents == [head]:
        return own, set()
    if len(parents) != 1 or not ledger.is_ancestor(head, parents[0]):
        return head, set()  # not a plain line of commits on top of what the run found: diff it all again
    left = {p for _l, path, old in ledger.diff_names(head, parents[0]) for p in (path, old) if p}
    return own, {p for p in left if is_memory(p) and p not in committed}


def since_changes(
    ledger: Ledger, pending: dict[str, dict[str, Any]], head: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """(path → its ``since`` commit, path → git's letter for it from ``since`` to ``head``) for the
    pending paths an earlier run left with ``since`` (a ``since`` history no longer has is dropped);
    a path with no letter is as it was then."""
    since: dict[str, str] = {}
    for path, entry in pending.items():
        sha = entry.get("since")
        if isinstance(sha, str) and ledger.commit_exists(sha):
            since[path] = sha
    letters: dict[str, str] = {}
    for sha in set(since.values()):
        if not head or sha == head:
            continue
        for letter, path, old in ledger.diff_names(sha, head):
            for p, at in ((path, "A" if letter in ("R", "C") else letter), (old, "D" if letter == "R" else None)):
                if p and at and since.get(p) == sha:
                    letters[p] = at
    return since, letters
