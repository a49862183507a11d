"""What git leaves unmerged after a pull's merge, resolved so no conflict markers and no second file of one
memory remain, then committed (:func:`resolve_and_commit`).

- a memory moved to a different folder on each side (git's rename/rename conflict) is one memory at one path;
- a memory deleted on one side and edited on the other keeps the edit, unless the deleting side gave its id a
  file at another path (a rewrite and a category change git's rename detection did not pair): that is a move,
  so the edit is merged into the moved file;
- a memory both sides changed is merged key by key (as the merge driver does);
- a non-memory file keeps this side's version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from remnic.errors import LedgerError, MemoryFormatError
from remnic.fsio import write_atomic
from remnic.memfile.merge import merge_memory
from remnic.memfile.model import MemoryRecord, now_iso, parse_file
from remnic.memfile.paths import MemoryPaths, folder_category
from remnic.memfile.values import own_id
from remnic.repo import remote as _remote

from .merge_driver import keep_copy

if TYPE_CHECKING:
    from .memory import Memory


class Resolved(Protocol):
    resolved: list[dict[str, str]]


def resolve_and_commit(mem: Memory, report: Resolved) -> None:
    """Resolve every unmerged path (each appended to ``report.resolved`` with how) and commit the merge;
    LedgerError when a path cannot be resolved or git refuses the commit."""
    ledger = mem.ledger
    paths = MemoryPaths.from_store(mem.settings.store)
    unmerged = _remote.unmerged(ledger)
    done = _resolve_renames(mem, unmerged, paths, report)
    done |= _resolve_moves(mem, unmerged, paths, report, done)
    for path, stages in sorted(unmerged.items()):
        if path not in done:
            report.resolved.append({"path": path, "how": _resolve(mem, path, stages, paths)})
    leftover = _remote.unmerged(ledger)
    if leftover:
        raise LedgerError(f"could not resolve {', '.join(sorted(leftover))}")
    committed = _remote.commit_merge(ledger)
    if not committed.ok and _remote.merge_head(ledger) is not None:
        raise LedgerError(f"git commit of the merge failed: {(committed.err or committed.out).strip()}")


def _record(text: str, path: str) -> MemoryRecord | None:
    try:
        return parse_file(text, path)
    except MemoryFormatError:
        return None


def _text_id(text: str | None, path: str) -> str | None:
    record = _record(text, path) if text is not None else None
    return own_id(record.frontmatter) if record is not None else None


def _keep_one(mem: Memory, target: str, text: str, gone: list[str | None]) -> None:
    """``target`` written with ``text`` and staged; each path of ``gone`` removed from the index and the disk."""
    write_atomic(mem.root / target, text.encode("utf-8", "surrogateescape"))
    _remote.add(mem.ledger, [target])
    for path in gone:
        if path is not None and path != target:
            _remote.run_git(mem.root, ["rm", "--cached", "--quiet", "--force", "--", path])
            (mem.root / path).unlink(missing_ok=True)


def _target(category: object, one: str, other: str) -> str:
    """``other`` when the merged category names its folder and not ``one``'s; else ``one``."""
    return other if category == folder_category(other) != folder_category(one) else one


def _resolve_renames(
    mem: Memory, unmerged: dict[str, dict[int, str]], paths: MemoryPaths, report: Resolved
) -> set[str]:
    """One memory moved to a different folder on each side (git's rename/rename conflict: the old path
    only in the base, a new path on each side, all with one id) becomes one memory at one path, merged as
    an edit on both sides is. Without this both files would stay, under one id. Returns the paths done."""
    lone: dict[int, dict[str, tuple[str, str]]] = {1: {}, 2: {}, 3: {}}
    for path, stages in unmerged.items():
        if len(stages) != 1 or not paths.is_memory(path):
            continue
        ((stage, sha),) = stages.items()
        text = _remote.blob_text(mem.ledger, sha)
        memory_id = _text_id(text, path)
        if memory_id is not None and stage in lone:
            lone[stage].setdefault(memory_id, (path, text))
    done: set[str] = set()
    for memory_id, (ours_path, ours_text) in sorted(lone[2].items()):
        if memory_id not in lone[3]:
            continue
        theirs_path, theirs_text = lone[3][memory_id]
        base_path, base_text = lone[1].get(memory_id, (None, None))
        now = now_iso()
        outcome = merge_memory(base_text, ours_text, theirs_text, ours_path, _remote.line_merge, now=now)
        merged = _record(outcome.text, ours_path)
        category = merged.frontmatter.get("category") if merged is not None else None
        # The merged category decides the folder; when it names neither, this side's path stays.
        target = _target(category, ours_path, theirs_path)
        if target != ours_path:
            outcome = merge_memory(base_text, ours_text, theirs_text, target, _remote.line_merge, now=now)
        other = theirs_path if target == ours_path else ours_path
        _keep_one(mem, target, outcome.text, [other, base_path])
        if outcome.copy_path is not None:
            keep_copy(mem.root, mem.git_dir, target, outcome)
        why = (
            f"its merged category {category} belongs there"
            if category is not None and folder_category(target) == category
            else f"this side's path (its merged category {category} names neither folder)"
        )
        merge = "kept both versions as two memories for review" if outcome.conflict else "merged key by key"
        how = f"moved here to {ours_path} and on the other side to {theirs_path}: kept one memory at {target}"
        report.resolved.append({"path": target, "how": f"{how} ({why}); {merge}"})
        report.resolved.append({"path": other, "how": f"the same memory, moved on both sides: kept at {target}"})
        if base_path is not None:
            report.resolved.append({"path": base_path, "how": f"moved on both sides (kept at {target})"})
        done.update(p for p in (ours_path, theirs_path, base_path) if p is not None)
    return done


class _Moves:
    """Where the deleting side of a merge put a memory's id instead: memory files it added since the merge
    base (one ``git diff`` per side) that hold the id (one ``git grep``, then a parse of each hit)."""

    def __init__(self, mem: Memory, paths: MemoryPaths) -> None:
        self.mem, self.paths = mem, paths
        self.base: str | None = None
        self.added: dict[str, set[str]] = {}

    def find(self, side: str, memory_id: str, old: str) -> tuple[str, str] | None:
        """(path, text) of the file ``side`` gave ``memory_id`` instead of ``old``; None: it deleted it."""
        if self.base is None:
            head, theirs = _remote.rev(self.mem.ledger, "HEAD"), _remote.merge_head(self.mem.ledger)
            self.base = (_remote.merge_base(self.mem.ledger, head, theirs) if head and theirs else None) or ""
        if not self.base:
            return None  # unrelated histories: no common base, so nothing was moved from it
        if side not in self.added:
            diff = ["diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", self.base, side]
            self.added[side] = {p for p in _remote.run_git(self.mem.root, diff).out.split("\0") if p}
        grep = _remote.run_git(self.mem.root, ["grep", "-l", "-z", "-F", "-e", memory_id, side])
        prefix = f"{side}:"
        for hit in sorted(h.removeprefix(prefix) for h in grep.out.split("\0") if h):
            if hit == old or hit not in self.added[side] or not self.paths.is_memory(hit):
                continue
            text = _remote.blob_text(self.mem.ledger, f"{side}:{hit}")
            if _text_id(text, hit) == memory_id:
                return hit, text
        return None


def _resolve_moves(
    mem: Memory, unmerged: dict[str, dict[int, str]], paths: MemoryPaths, report: Resolved, done: set[str]
) -> set[str]:
    """A memory file deleted on one side and edited on the other, whose id the deleting side holds in a file
    it added elsewhere: a move git saw as a delete and an add (the text changed too much to pair them). The
    edit is merged into the moved file, as for a rename, so one memory stays at one path. Returns the paths
    done."""
    moves = _Moves(mem, paths)
    resolved: set[str] = set()
    for path, stages in sorted(unmerged.items()):
        if path in done or not paths.is_memory(path) or 1 not in stages or (2 in stages) == (3 in stages):
            continue
        edited = 2 if 2 in stages else 3
        mover, where, editor = (
            ("MERGE_HEAD", "the other side", "this side") if edited == 2 else ("HEAD", "this side", "the other side")
        )
        base_text = _remote.blob_text(mem.ledger, stages[1])
        edited_text = _remote.blob_text(mem.ledger, stages[edited])
        memory_id = _text_id(edited_text, path) or _text_id(base_text, path)
        found = moves.find(mover, memory_id, path) if memory_id is not None else None
        if found is None or found[0] in unmerged:
            continue
        moved_path, moved_text = found
        ours, theirs = (edited_text, moved_text) if edited == 2 else (moved_text, edited_text)
        now = now_iso()
        outcome = merge_memory(base_text, ours, theirs, moved_path, _remote.line_merge, now=now)
        merged = _record(outcome.text, moved_path)
        target = _target(merged.frontmatter.get("category") if merged is not None else None, moved_path, path)
        if target != moved_path:
            outcome = merge_memory(base_text, ours, theirs, target, _remote.line_merge, now=now)
        _keep_one(mem, target, outcome.text, [path, moved_path])
        if outcome.copy_path is not None:
            keep_copy(mem.root, mem.git_dir, target, outcome)
        merge = "kept both versions as two memories for review" if outcome.conflict else "merged key by key"
        other = moved_path if target == path else path
        source = f"moved from {path} on {where}" if target == moved_path else f"moved on {where} to {moved_path}"
        how = f"{source} (git saw a delete and an add) and edited on {editor}: kept as one memory here; {merge}"
        report.resolved.append({"path": target, "how": how})
        report.resolved.append({"path": other, "how": f"the same memory, moved on {where}: kept at {target}"})
        resolved.update({path, moved_path})
    return resolved


def _resolve(mem: Memory, path: str, stages: dict[int, str], paths: MemoryPaths) -> str:
    ledger, full = mem.ledger, mem.root / path
    texts = {n: _remote.blob_text(ledger, sha) for n, sha in stages.items()}
    ours, theirs = texts.get(2), texts.get(3)
    if ours is None and theirs is None:
        _remote.run_git(mem.root, ["rm", "--cached", "--quiet", "--", path])
        return "deleted on both sides"
    if ours is None or theirs is None:
        kept = ours if ours is not None else theirs
        assert kept is not None
        write_atomic(full, kept.encode("utf-8", "surrogateescape"))
        _remote.add(ledger, [path])
        return f"kept the edited version ({'this' if ours is None else 'the other'} side deleted it)"
    if not paths.is_memory(path):
        write_atomic(full, ours.encode("utf-8", "surrogateescape"))
        _remote.add(ledger, [path])
        return "kept this side's version (not a memory file; the other is in the merged commit's history)"
    outcome = merge_memory(texts.get(1), ours, theirs, path, _remote.line_merge)
    write_atomic(full, outcome.text.encode("utf-8", "surrogateescape"))
    _remote.add(ledger, [path])
    if outcome.copy_path is not None:
        keep_copy(mem.root, mem.git_dir, path, outcome)
    if outcome.conflict:
        return "kept both versions as two memories for review"
    return "the same text on both sides: the other id kept as superseded" if outcome.copy_path else "merged key by key"
