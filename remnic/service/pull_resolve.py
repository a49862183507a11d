"""What git leaves unmerged after a pull's merge, resolved so no conflict markers and no second file of one
memory remain, then committed (:func:`resolve_and_commit`).

- a memory moved to a different folder on each side (git's rename/rename conflict) is one memory at one path;
- a memory deleted on one side and edited on the other keeps the edit, unless the deleting side gave its id a
  file at another path (a rewrite and a category change git's rename detection did not pair): that is a move,
  so the edit is merged into the moved file;
- a memory rewritten and moved on both sides (a delete and an add on each: git merges it cleanly, into two
  files with one id) is one memory at one path too, also after a merge git committed
  (:func:`resolve_clean_merge`);
- a memory both sides changed is merged key by key (as the merge driver does);
- a non-memory file keeps this side's version.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from remnic.errors import FieldProblem, LedgerError, MemoryFormatError, RepoBusyError, UncommittedChangesError
from remnic.fsio import write_atomic
from remnic.memfile.merge import copy_path_for, merge_memory
from remnic.memfile.model import MemoryRecord, now_iso, parse_file
from remnic.memfile.paths import MemoryPaths, folder_category
from remnic.memfile.values import own_id
from remnic.repo import gitindex, pullmark
from remnic.repo import remote as _remote
from remnic.repo.gitlog import literal

from .merge_driver import ROOT_ENV, keep_copy
from .pull_guard import Saved, apply_merged, drop_scratch_tree, scratch_tree

if TYPE_CHECKING:
    from .memory import Memory


class Resolved(Protocol):
    resolved: list[dict[str, str]]
    pending_saves: dict[str, Saved]
    """Paths saved while the merge ran, left as saved (:func:`.pull_guard.apply_merged`)."""


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
    _resolve_added_twice(mem, paths, report, "HEAD", "MERGE_HEAD")
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
            _remote.run_git(mem.root, ["rm", "--cached", "--quiet", "--force", "--", *literal(path)])
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
    for memory_id, ours in sorted(lone[2].items()):
        if memory_id not in lone[3]:
            continue
        theirs, base = lone[3][memory_id], lone[1].get(memory_id)
        _one_memory(mem, report, ours, theirs, base, "")
        done.update(p for p in (ours[0], theirs[0], base[0] if base else None) if p is not None)
    return done


def _one_memory(
    mem: Memory,
    report: Resolved,
    ours: tuple[str, str],
    theirs: tuple[str, str],
    base: tuple[str, str] | None,
    seen: str,
) -> None:
    """One memory, given a different path on each side (``(path, text)`` each; ``base`` its file in the merge
    base), written at one path and merged as an edit on both sides is; the other path and the base's removed.
    ``seen`` says how git saw it, for the report."""
    (ours_path, ours_text), (theirs_path, theirs_text) = ours, theirs
    base_path, base_text = base if base is not None else (None, None)
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
    _repoint_copies(mem, {ours_path, theirs_path, base_path} - {None, target}, target)
    if outcome.copy_path is not None:
        keep_copy(mem.root, mem.git_dir, target, outcome)
    why = (
        f"its merged category {category} belongs there"
        if category is not None and folder_category(target) == category
        else f"this side's path (its merged category {category} names neither folder)"
    )
    merge = "kept both versions as two memories for review" if outcome.conflict else "merged key by key"
    how = f"moved here to {ours_path} and on the other side to {theirs_path}{seen}: kept one memory at {target}"
    report.resolved.append({"path": target, "how": f"{how} ({why}); {merge}"})
    report.resolved.append({"path": other, "how": f"the same memory, moved on both sides: kept at {target}"})
    if base_path is not None:
        report.resolved.append({"path": base_path, "how": f"moved on both sides (kept at {target})"})


def _repoint_copies(mem: Memory, gone: set[str | None], target: str) -> None:
    """Conflict copies git's merge driver logged under a path the memory no longer has (it merged a file moved
    on both sides under its old path): the copy renamed after ``target`` and logged under it, so the report
    names paths that exist."""
    log = mem.git_dir / _remote.CONFLICT_LOG
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return
    out, changed = [], False
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(entry, dict) and entry.get("path") in gone and isinstance(entry.get("copyId"), str):
            old_copy, new_copy = entry.get("copyPath"), copy_path_for(target, entry["copyId"])
            if isinstance(old_copy, str) and (mem.root / old_copy).is_file() and not (mem.root / new_copy).exists():
                (mem.root / new_copy).parent.mkdir(parents=True, exist_ok=True)
                os.replace(mem.root / old_copy, mem.root / new_copy)
                entry["copyPath"] = new_copy
            entry["path"], changed = target, True
        out.append(json.dumps(entry) if isinstance(entry, dict) else line)
    if changed:
        write_atomic(log, ("\n".join(out) + "\n").encode("utf-8"))


class _Moves:
    """Where each side of a merge put a memory's id: memory files it added since the merge base (one
    ``git diff`` per side) that hold the id (one ``git grep``, then a parse of each hit)."""

    def __init__(self, mem: Memory, paths: MemoryPaths, ours: str = "HEAD", theirs: str = "MERGE_HEAD") -> None:
        self.mem, self.paths, self.ours, self.theirs = mem, paths, ours, theirs
        self.base: str | None = None
        self.added: dict[str, set[str]] = {}

    def _base(self) -> str:
        if self.base is None:
            head, theirs = _remote.rev(self.mem.ledger, self.ours), _remote.rev(self.mem.ledger, self.theirs)
            self.base = (_remote.merge_base(self.mem.ledger, head, theirs) if head and theirs else None) or ""
        return self.base

    def _added(self, side: str) -> set[str]:
        if side not in self.added:
            diff = ["diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", self._base(), side]
            self.added[side] = {p for p in _remote.run_git(self.mem.root, diff).out.split("\0") if p}
        return self.added[side]

    def holding(self, side: str, memory_id: str) -> list[tuple[str, str]]:
        """(path, text) of each memory file at ``side`` whose own id is ``memory_id``."""
        grep = _remote.run_git(self.mem.root, ["grep", "-l", "-z", "-F", "-e", memory_id, side])
        prefix, found = f"{side}:", []
        for hit in sorted(h.removeprefix(prefix) for h in grep.out.split("\0") if h):
            if self.paths.is_memory(hit):
                text = _remote.blob_text(self.mem.ledger, f"{side}:{hit}")
                if _text_id(text, hit) == memory_id:
                    found.append((hit, text))
        return found

    def find(self, side: str, memory_id: str, old: str) -> tuple[str, str] | None:
        """(path, text) of the file ``side`` gave ``memory_id`` instead of ``old``; None: it deleted it."""
        if not self._base():
            return None  # unrelated histories: no common base, so nothing was moved from it
        added = self._added(side)
        return next((h for h in self.holding(side, memory_id) if h[0] != old and h[0] in added), None)

    def origin(self, memory_id: str) -> tuple[str, str] | None:
        """(path, text) of the memory's file in the merge base."""
        return next(iter(self.holding(self._base(), memory_id)), None) if self._base() else None

    def added_ids(self, side: str) -> dict[str, str]:
        """id → path of the memory files ``side`` added since the merge base (the first, by path)."""
        if not self._base():
            return {}
        added = self._added(side)
        grep = _remote.run_git(self.mem.root, ["grep", "-z", "-E", "-e", "^id:", side])
        ids: dict[str, str] = {}
        for line in sorted(grep.out.splitlines()):
            hit, _, found = line.removeprefix(f"{side}:").partition("\0")
            if hit in added and self.paths.is_memory(hit):
                ids.setdefault(found.removeprefix("id:").strip().strip("'\""), hit)
        return ids


def _resolve_added_twice(mem: Memory, paths: MemoryPaths, report: Resolved, ours: str, theirs: str) -> bool:
    """A memory rewritten and moved on both sides (git saw a delete and an add on each, so no conflict at
    all): two files the merge added, holding one id, become one memory at one path, as a rename/rename
    does. Only files still on disk with that id count (one already resolved is gone). True: something done."""
    moves = _Moves(mem, paths, ours, theirs)
    ours_ids, theirs_ids = moves.added_ids(ours), moves.added_ids(theirs)
    done = False
    for memory_id in sorted(ours_ids.keys() & theirs_ids.keys()):
        if ours_ids[memory_id] == theirs_ids[memory_id]:
            continue  # added at one path on both sides: the merge driver merged it
        ours_hit = next((h for h in moves.holding(ours, memory_id) if h[0] == ours_ids[memory_id]), None)
        theirs_hit = next((h for h in moves.holding(theirs, memory_id) if h[0] == theirs_ids[memory_id]), None)
        if (
            ours_hit is None
            or theirs_hit is None
            or not all(_on_disk(mem, h[0], memory_id) for h in (ours_hit, theirs_hit))
        ):
            continue
        seen = " (git saw a delete and an add on each side)"
        _one_memory(mem, report, ours_hit, theirs_hit, moves.origin(memory_id), seen)
        done = True
    return done


def _on_disk(mem: Memory, path: str, memory_id: str) -> bool:
    try:
        text = (mem.root / path).read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return False
    return _text_id(text, path) == memory_id


def resolve_clean_merge(mem: Memory, report: Resolved) -> None:
    """After a merge git committed without a conflict: two files it added under one id (see
    :func:`_resolve_added_twice`) made one, and the merge commit amended to hold that (it is not pushed yet)."""
    paths = MemoryPaths.from_store(mem.settings.store)
    if not _resolve_added_twice(mem, paths, report, "HEAD^1", "HEAD^2"):
        return
    amended = _remote.run_git(
        mem.root, ["commit", "--amend", "--no-edit", "--no-verify"], env=_remote.identity(mem.ledger)
    )
    if not amended.ok:
        raise LedgerError(f"git commit --amend of the merge failed: {(amended.err or amended.out).strip()}")


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
        if memory_id is None:
            continue
        found = moves.find(mover, memory_id, path)
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
        # The editing side may have moved it too (a rename git paired): its folder is not the mover's origin.
        found_origin = moves.origin(memory_id)
        origin = found_origin[0] if found_origin is not None else path
        moved = f"moved from {origin} to {moved_path} on {where} (git saw a delete and an add)"
        editing = f"moved from {origin} to {path} and edited on {editor}" if origin != path else f"edited on {editor}"
        how = f"{moved} and {editing}: kept as one memory at {target}; {merge}"
        both = "both sides" if origin != path else where
        report.resolved.append({"path": target, "how": how})
        report.resolved.append({"path": other, "how": f"the same memory, moved on {both}: kept at {target}"})
        resolved.update({path, moved_path})
    return resolved


def _resolve(mem: Memory, path: str, stages: dict[int, str], paths: MemoryPaths) -> str:
    ledger, full = mem.ledger, mem.root / path
    texts = {n: _remote.blob_text(ledger, sha) for n, sha in stages.items()}
    ours, theirs = texts.get(2), texts.get(3)
    if ours is None and theirs is None:
        _remote.run_git(mem.root, ["rm", "--cached", "--quiet", "--", *literal(path)])
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


# --- git merge, and what a killed one left ---


def run_merge(mem: Memory, tracking: str, message: str, *, allow_unrelated: bool) -> _remote.GitRun:
    """``git merge`` that finishes on its own when this process is killed: in its own session (a signal to
    this process group does not reach it) and writing to files, not pipes (a pipe whose reader died kills
    it with SIGPIPE, after it wrote the tree and before MERGE_HEAD or the commit). The marker around it lets
    the next pull tell a merge git never finished from hand edits (:func:`undo_cut_merge`). git writes its
    files into a scratch work tree, never over a file saved meanwhile: the caller brings them into the
    working tree with :func:`.pull_guard.apply_merged`."""
    ledger = mem.ledger
    marker = mem.git_dir / gitindex.PULL_MARKER
    tree = scratch_tree(mem)  # git writes its files there; :func:`.pull_guard.apply_merged` brings them over
    record: dict[str, Any] = {"head": ledger.head(), "target": _remote.rev(ledger, tracking), "tracking": tracking}
    record.update(pid=None, started=time.time(), tree=str(tree))
    write_atomic(marker, json.dumps(record).encode("utf-8"))
    unrelated = ["--allow-unrelated-histories"] if allow_unrelated else []
    env = {**_remote.identity(ledger), "GIT_DIR": str(mem.git_dir), "GIT_WORK_TREE": str(tree), ROOT_ENV: str(mem.root)}
    args = ["merge", "--no-edit", "--no-stat", *unrelated, "-m", message, tracking]

    def started(pid: int) -> None:
        write_atomic(marker, json.dumps({**record, "pid": pid}).encode("utf-8"))

    result = _remote.run_git_detached(tree, args, env=env, started=started)
    code = result.code
    drop_scratch_tree(mem)
    if code < 0:  # git itself was killed: the marker stays for the next pull
        raise LedgerError(
            f"git merge {tracking} was killed (signal {-code}) before it finished; `remnic space pull` puts back "
            "the files it changed and merges again"
        )
    if code != 0:
        marker.unlink(missing_ok=True)  # git stopped in the merge (MERGE_HEAD) or refused it
    # A merge git committed keeps the marker until the caller has finished with it (:func:`finish_merged`).
    return result


def _cut(mem: Memory) -> dict[str, Any] | None:
    return pullmark.cut_merge(mem.git_dir, mem.ledger.head, mem.root, mem.ledger.parents)


def finish_merged(mem: Memory, report: Resolved, *, resolve: bool) -> None:
    """The pull is done with the merge git committed: what git merged into two files under one id made one
    (``resolve``: HEAD is a merge commit the pull just made), then the marker goes."""
    if resolve:
        resolve_clean_merge(mem, report)
    (mem.git_dir / gitindex.PULL_MARKER).unlink(missing_ok=True)


def finish_committed_merge(mem: Memory, report: Resolved) -> str | None:
    """A pull killed after git committed its merge (or fast-forwarded) and before it finished with it: that step
    is done now, on the commit still at HEAD (writes wait for it). HEAD before the merge, or None (nothing left)."""
    cut = _cut(mem)
    if cut is None or cut["state"] != "committed":
        return None
    # git committed it (or fast-forwarded) in its scratch work tree: the files still missing are copied now
    apply_merged(mem, str(cut["head"]), report.pending_saves)
    finish_merged(mem, report, resolve=mem.ledger.head() != cut.get("target"))  # a fast-forward made no commit
    drop_scratch_tree(mem)
    return str(cut["head"])


def wait_for_git(mem: Memory, wait_s: float = 30.0) -> None:
    """A killed pull's ``git merge`` still running (in its own session, it finishes on its own): wait for it to
    end, so the caller looks at what it left only then (a merge it committed, stopped in with MERGE_HEAD, or cut
    short); RepoBusyError, changing nothing, when it still runs after ``wait_s``. Caller holds the lock."""
    marker = mem.git_dir / gitindex.PULL_MARKER
    if not marker.exists():
        return
    deadline = time.monotonic() + wait_s
    cut = _cut(mem)
    while cut is not None and cut["running"] and time.monotonic() < deadline:
        time.sleep(0.05)
        cut = _cut(mem)
    if cut is not None and cut["running"]:
        raise RepoBusyError(
            f"a pull's git merge (pid {cut['pid']}) is still running in {mem.root} after {wait_s:g} s, as {marker} "
            f"records; retry when it ends, or stop it (`kill {cut['pid']}`) and run `remnic space pull`: it puts "
            "back what git left and removes the marker"
        )


def undo_cut_merge(mem: Memory, wait_s: float = 30.0) -> list[str] | None:
    """Put back, as HEAD has them, the files a killed pull's ``git merge`` changed before it could commit or
    write MERGE_HEAD (and delete the conflict copies it wrote), so the pull merges again instead of committing
    the other side's changes as hand edits; the paths put back (None: no merge was cut short). Only git's bytes
    go: a file edited since (sync and writes pause, but a person may still edit by hand) makes it refuse,
    naming the file and changing nothing (:func:`_refuse_edited`). A git still running is waited for first
    (:func:`wait_for_git`). Caller holds the lock, and has finished a merge git stopped in (MERGE_HEAD)."""
    marker = mem.git_dir / gitindex.PULL_MARKER
    if not marker.exists():
        return None
    wait_for_git(mem, wait_s)
    cut = _cut(mem)
    if cut is None:
        if _remote.merge_head(mem.ledger) is None:
            marker.unlink(missing_ok=True)  # HEAD moved on since: the marker is stale
        # else git stopped in the merge: finishing it (:func:`.pull.finish_merge`) is not undoing it
        return None
    if cut["state"] == "committed":
        return None  # git committed it: :func:`finish_committed_merge` finishes it
    head, target = cut.get("head"), cut.get("target")
    if not isinstance(head, str) or not isinstance(target, str):
        raise LedgerError(f"{marker} names no commits; delete it, then check `git -C {mem.root} status`")
    _clear_killed_lock(mem.git_dir, cut)
    ledger = mem.ledger
    base = _remote.merge_base(ledger, head, target) or head
    scope = set(_remote.changed_paths(ledger, base, target)) | set(_logged_copy_paths(mem.git_dir))
    dirty = {q for _, p, orig in ledger.status_porcelain() for q in (p, orig) if q}
    undo = sorted(scope & dirty)
    _refuse_edited(mem, marker, undo)
    listed = (
        _remote.run_git(mem.root, ["ls-tree", "-r", "-z", "--name-only", head, "--", *literal(*undo)]) if undo else None
    )
    tracked = set(listed.out.split("\0")) - {""} if listed is not None else set()
    steps = [["checkout", head, "--", *sorted(tracked)]] if tracked else []
    added = [p for p in undo if p not in tracked]
    steps += [["rm", "-q", "--cached", "--ignore-unmatch", "--", *added]] if added else []
    for step in steps:
        done = _remote.run_git(mem.root, step, env={"GIT_LITERAL_PATHSPECS": "1"})
        if not done.ok:
            raise LedgerError(f"undoing the merge a killed pull left failed: git {step[0]}: {done.err.strip()}")
    for path in added:
        (mem.root / path).unlink(missing_ok=True)
    _remove_driver_temps(mem.root, cut)
    (mem.git_dir / _remote.CONFLICT_LOG).unlink(missing_ok=True)
    marker.unlink(missing_ok=True)
    drop_scratch_tree(mem)
    return undo


def _edited_since(mem: Memory, paths: list[str]) -> list[str]:
    """Of the files a killed merge touched, those holding bytes git did not write: git writes only blobs it has
    in its object store (the remote's, or a merge result it stored first), and the merge driver writes each
    conflict copy before it logs it. A file whose content git has nowhere (or a copy changed after the log)
    was edited since, and putting it back would lose that edit."""
    log = mem.git_dir / _remote.CONFLICT_LOG
    logged_at = log.stat().st_mtime_ns if log.is_file() else None
    copies = set(_logged_copy_paths(mem.git_dir))
    edited, hashed = [], []
    for path in paths:
        full = mem.root / path
        if not full.is_file() or full.is_symlink():
            continue  # deleted: putting HEAD's file back loses nothing
        if path in copies:
            if logged_at is None or full.stat().st_mtime_ns > logged_at:
                edited.append(path)
        else:
            hashed.append(path)
    for start in range(0, len(hashed), 200):
        chunk = hashed[start : start + 200]
        shas = _remote.run_git(mem.root, ["hash-object", "--", *chunk])  # with the path's filters, as git stores it
        found = _remote.run_git(mem.root, ["cat-file", "--batch-check"], stdin=shas.out)
        answers = found.out.splitlines()
        if not shas.ok or not found.ok or len(answers) != len(chunk):
            said = (shas.err or found.err).strip()
            raise LedgerError(f"could not tell git's files from edits in {mem.root}: git hash-object: {said}")
        edited += [path for path, line in zip(chunk, answers, strict=True) if line.endswith(" missing")]
    return sorted(edited)


def _refuse_edited(mem: Memory, marker: Path, undo: list[str]) -> None:
    """Refuse to put back a file edited since the merge was cut short: the edit is the user's, kept as it is."""
    edited = _edited_since(mem, undo)
    if not edited:
        return
    listed = "\n".join(f"  {path}" for path in edited)
    raise UncommittedChangesError(
        f"pull stopped: git was killed in an earlier pull's merge ({marker} records it), and {len(edited)} file(s) "
        f"that merge touched were edited since. The pull puts back only what git wrote, so nothing was changed:\n"
        f"{listed}\nEach file may hold part of git's merge too. Keep what you need of it elsewhere, put the file "
        f"back as HEAD has it (`git -C {mem.root} checkout HEAD -- PATH`; delete a file HEAD does not have), then "
        "run `remnic space pull` again and redo the edit",
        problems=[FieldProblem("path", "edited after a pull's merge was cut short; kept as it is", p) for p in edited],
    )


def _logged_copy_paths(git_dir: Path) -> list[str]:
    try:
        lines = (git_dir / _remote.CONFLICT_LOG).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("copyPath"), str):
            found.append(entry["copyPath"])
    return found


def _clear_killed_lock(git_dir: Path, cut: dict[str, Any]) -> None:
    """git's index.lock the killed merge left (SIGKILL skips git's own clean-up): taken after the merge
    started, and still there a second later (a live git holds it for moments). Any other lock stays."""
    lock = git_dir / "index.lock"
    started = cut.get("started")
    try:
        made = lock.stat().st_mtime
    except FileNotFoundError:
        return
    if isinstance(started, (int, float)) and made >= started - 0.1 and time.time() - made > 1.0:
        lock.unlink(missing_ok=True)


def _remove_driver_temps(root: Path, cut: dict[str, Any]) -> None:
    """The ``.merge_file_*`` files (``%O %A %B``) a killed git left for its merge driver, made during that merge."""
    started = cut.get("started")
    for temp in root.glob(".merge_file_*"):
        try:
            if isinstance(started, (int, float)) and temp.is_file() and temp.stat().st_mtime >= started - 0.1:
                temp.unlink()
        except FileNotFoundError:
            pass
