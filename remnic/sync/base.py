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

Paths the last sync left pending stay pending.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from remnic.config import STATE_DIR
from remnic.memfile.model import MemoryRecord
from remnic.memfile.paths import MemoryPaths
from remnic.memfile.values import hash_matches
from remnic.repo.ledger import Ledger
from remnic.repo.transaction import CommitOutcome, Staged

from .state import STATE_FILE, SyncState


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


def never_synced(root: Path) -> bool:
    """Whether no sync state is recorded (a new repository, or ``.remnic/`` lost)."""
    return not (root / STATE_DIR / STATE_FILE).exists()


def start_from_own_commit(
    root: Path, ledger: Ledger, paths: MemoryPaths, commit: str, records: Sequence[MemoryRecord]
) -> bool:
    """Record ``commit`` (remnic's own, holding ``records``) as the base of a repository no sync has
    looked at yet, when the commit before it holds nothing a sync would look at: no memory file and no
    note it would report (a new repository's template). Then a full pass would only read back what
    remnic just wrote, so the first sync after `init` + `import` starts from here instead (work-tree
    changes are still found by ``git status``). Only when each record has its id and a ``contentHash``
    that fits its text, so nothing is left for a sync to normalise. Returns whether it recorded it;
    the caller holds the write lock."""
    if not never_synced(root) or ledger.head() != commit:
        return False
    if not records or any(
        not r.has_id or hash_matches(r.frontmatter.get("contentHash"), r.content) is not True for r in records
    ):
        return False
    parents = ledger.parents(commit)
    if len(parents) != 1:
        return False
    listed = ledger.git("ls-tree", "-r", "-z", "--name-only", parents[0], strip=False).split("\0")
    if any(p and (paths.is_memory(p) or paths.reportable_reason(p)) for p in listed):
        return False
    SyncState(commit=commit, rules=repr(paths)).save(root)
    return True
