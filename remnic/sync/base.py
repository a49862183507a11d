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

Paths the last sync left pending stay pending, and so does the mark a sync sets before its own
commit ("index step due", ``SyncState.index_behind``): the base moves here, at commit time, so a
sync killed before its index step is done must leave the next one something to catch up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from remnic.memfile.values import hash_matches
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
