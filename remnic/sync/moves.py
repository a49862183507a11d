"""Deletions sync commits, and the ones it must not: a note that moved to a path where sync cannot take it.

Renames are paired on valid files only (an id, or a content hash: :mod:`.renames`), and a malformed
file (or an empty one) is never committed. A folder moved by hand that holds a note git has (one you
committed with its YAML broken, say) would then be committed as the deletion of the old path while
the new path stays untracked: the note would leave ``HEAD``, and a clone or a pull would lose it. So
a deleted path whose note reappears at a new malformed (or empty) path is:

- a **pure rename** when the new path holds exactly the bytes git has at the old one and those bytes
  were malformed (empty) there too: the move is committed as such (``git mv``: both sides in one
  commit, content as it was committed), the file still untouched and out of the index; an empty
  file must keep its name (any two empty files have the same bytes);
- **held** otherwise (moved and edited, or a note valid at its old path and malformed only at the
  new one): its deletion waits, pending, until the new file is fixed (then the two are committed
  together, as one rename) or gone. A new malformed file "is" the note when it has the same file name
  or, as git's rename detection has it, at least half of its lines (only a file that appeared or
  changed since the last run: an untracked malformed note that sat there all along is no evidence of
  a move). Pairs are made best first over all deleted paths: identical bytes, then the same name,
  then the most similar text.

A malformed note deleted by hand with nothing malformed arriving is a plain deletion.
"""

from __future__ import annotations

import difflib
import posixpath
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from remnic.config import StoreSettings
from remnic.memfile.validate import check_bytes
from remnic.repo.ledger import Ledger

from .report import DELETED, RENAMED, Change
from .state import digest

SIMILAR = 0.5
"""The share of lines a moved-and-edited note keeps (git's own rename threshold)."""
SIMILAR_MAX_CHARS = 200_000
"""Past this size texts are matched by file name only (a line diff of two large notes costs too much)."""
MOVED_NOTE = "malformed: moved as you committed it, content unchanged; not indexed until it is fixed"
MOVED_EMPTY_NOTE = "no text yet: moved as you committed it, content unchanged"


def held_reason(new: str, empty: bool) -> str:
    what, until = ("has no text yet", "has text") if empty else ("is malformed", "is fixed")
    return (
        f"deletion held: the note looks moved to {new}, which {what}; the deletion is committed "
        f"with {new} once it {until} (or is gone), so the note does not leave git meanwhile"
    )


@dataclass
class MalformedMoves:
    """Deleted paths whose note reappears at a new malformed path."""

    renamed: dict[str, str] = field(default_factory=dict)
    """New path → old path: the same bytes, malformed at both; committed as a pure rename."""
    held: dict[str, str] = field(default_factory=dict)
    """Old path → new path: its deletion waits, uncommitted, until the new file is fixed or gone."""
    data: dict[str, bytes] = field(default_factory=dict)
    """New path → the bytes a pure rename commits (those read and compared)."""
    empty: set[str] = field(default_factory=set)
    """New paths of pure renames that hold no text yet (not malformed)."""


def find_moves(
    ledger: Ledger,
    head: str | None,
    gone: list[str],
    arrived: Mapping[str, bytes],
    store: StoreSettings,
    *,
    empty: set[str],
    fresh: set[str],
    waiting: Mapping[str, str] | None = None,
) -> MalformedMoves:
    """``gone``: deleted paths sync would commit as deletions (HEAD has them); ``arrived``: new malformed
    or ``empty`` paths (HEAD has none of them) and the bytes read there, ``fresh`` those that appeared or
    changed since the last run; ``waiting``: deleted path → the new path it was held for, still being
    written this run (it stays held: committing the deletion alone would drop the note from git).

    Pairs are made best first over all deleted paths, never in path order: identical bytes, then the
    same file name, then the most similar text. A deleted note that merely shares lines with a moved one
    (notes of one vault often share their front matter) must not take the moved note's new path first."""
    moves = MalformedMoves()
    moves.held.update({old: new for old, new in (waiting or {}).items() if old in gone})
    if not gone or not arrived or head is None:
        return moves
    before = _committed_bytes(ledger, head, [p for p in gone if p not in moves.held])
    olds, free = set(before), set(arrived) - set(moves.held.values())
    by_digest: dict[str, list[str]] = {}
    for path, data in arrived.items():
        by_digest.setdefault(digest(data), []).append(path)
    # 1. The same bytes: one with the same file name first (any two empty files are alike: only by name).
    exact = [
        (_name(new) != _name(old), old, new)
        for old in olds
        for new in by_digest.get(digest(before[old]), [])
        if new not in empty or _name(new) == _name(old)
    ]
    for old, new in _assign(exact, olds, free):
        committed = before[old]
        was = check_bytes(committed, old, store)
        # Bytes valid at the old path (malformed only where they went: a bad namespace folder) are not
        # committed there; nor when git's own hooks run on sync's commits (remnic's pre-commit refuses them).
        if new in empty and was.empty and not was.problems:
            moves.renamed[new], moves.data[new] = old, committed
            moves.empty.add(new)
        elif new not in empty and was.problems and not ledger.run_hooks:
            moves.renamed[new], moves.data[new] = old, committed
        else:
            moves.held[old] = new
    similar = _Similarity(before, arrived)
    # 2. The same file name (moved and edited); of several, the most similar text.
    by_name: dict[str, list[str]] = {}
    for path in free:
        by_name.setdefault(_name(path), []).append(path)
    named = [(old, new) for old in olds for new in by_name.get(_name(old), [])]
    contested = Counter(_name(old) for old, _new in named)
    ranked = [(-similar(old, new) if contested[_name(old)] > 1 else 0.0, old, new) for old, new in named]
    moves.held.update(_assign(ranked, olds, free))
    # 3. At least half of the lines, most similar first: only a new file that appeared or changed since the
    # last run (an untracked malformed note that sat there all along is no evidence of a move).
    candidates = (free - empty) & fresh
    ranked = [(-r, old, new) for old in olds for new in candidates if (r := similar(old, new)) >= SIMILAR]
    moves.held.update(_assign(ranked, olds, free))
    return moves


def _name(path: str) -> str:
    return posixpath.basename(path)


def _assign(ranked: list[tuple[Any, str, str]], olds: set[str], free: set[str]) -> list[tuple[str, str]]:
    """(old, new) pairs taken best first (lowest rank) while both are still unpaired; both leave the sets."""
    pairs = []
    for _rank, old, new in sorted(ranked):
        if old in olds and new in free:
            olds.discard(old)
            free.discard(new)
            pairs.append((old, new))
    return pairs


def _committed_bytes(ledger: Ledger, head: str, paths: list[str]) -> dict[str, bytes]:
    """HEAD's bytes at each path, read by one git process (a file that is not UTF-8 by one each)."""
    texts = ledger.blob_texts([(head, p) for p in paths])
    out = {p: t.encode("utf-8") for p, t in zip(paths, texts, strict=True) if t is not None}
    if ledger.head() == head:
        for path in paths:
            if path not in out and (data := ledger.committed_bytes(path)) is not None:
                out[path] = data
    return out


class _Similarity:
    """The share of lines two texts have in common (difflib's ratio, git's rename threshold is 0.5); 0 past
    ``SIMILAR_MAX_CHARS``. What a matcher learns of a new text is kept for every deleted path."""

    def __init__(self, before: Mapping[str, bytes], arrived: Mapping[str, bytes]) -> None:
        self.before, self.arrived = before, arrived
        self.lines: dict[str, list[str]] = {}
        self.matchers: dict[str, difflib.SequenceMatcher[str]] = {}

    def __call__(self, old: str, new: str) -> float:
        data, text = self.before[old], self.arrived[new]
        if len(data) > SIMILAR_MAX_CHARS or len(text) > SIMILAR_MAX_CHARS:
            return 0.0
        if new not in self.matchers:
            self.matchers[new] = difflib.SequenceMatcher(None, autojunk=False)
            self.matchers[new].set_seq2(text.decode("utf-8", "replace").splitlines())
        if old not in self.lines:
            self.lines[old] = data.decode("utf-8", "replace").splitlines()
        matcher = self.matchers[new]
        matcher.set_seq1(self.lines[old])
        if matcher.real_quick_ratio() < SIMILAR or matcher.quick_ratio() < SIMILAR:
            return 0.0  # below the threshold: how far below does not matter
        return matcher.ratio()


def deletion_changes(
    deleted: list[str],
    moves: MalformedMoves,
    *,
    renamed_from: set[str],
    old_id: Callable[[str], str | None],
    status: Mapping[str, str],
    diff_letter: Mapping[str, str],
    pending: Mapping[str, dict[str, Any]],
) -> list[Change]:
    """The deleted memory paths as changes: a pure rename of a malformed note, or a deletion (none for a
    path renamed to a valid file, nor for one whose deletion is held)."""
    changes = [
        Change(RENAMED, new, previous_path=old, note=MOVED_EMPTY_NOTE if new in moves.empty else MOVED_NOTE)
        for new, old in sorted(moves.renamed.items())
    ]
    for path in deleted:
        prior = pending.get(path) or {}
        if path in renamed_from or path in moves.held or path in moves.renamed.values():
            continue
        if path in status or diff_letter.get(path) == "D" or prior.get("kind") in ("uncommitted", "deleted"):
            in_git = diff_letter.get(path) == "D" and path not in status
            changes.append(Change(DELETED, path, old_id(path), origin="git" if in_git else "working-tree"))
    return changes
