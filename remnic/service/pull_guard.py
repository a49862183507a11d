"""A pull's merge reaches the working tree only where no save landed meanwhile.

git's own checkout trusts what it saw when the merge began: a file saved while the merge driver runs (about
0.2 s per memory file both sides changed, so seconds for a few dozen) would be overwritten, and the save lost.
So ``git merge`` writes its files into a scratch work tree in the git directory (:func:`scratch_tree`; the
index and the commits are the repository's own), and :func:`apply_merged` then brings each path the merge
changed into the working tree as a write transaction does: replaced only if it still holds the bytes the
pull started from, compared under a read lease just before the rename (:func:`remnic.fsio.replace_unless_held`).
A path saved meanwhile is left as saved, and :func:`keep_saved` merges that edit onto what the pull committed
(memory files key by key, a conflict kept as two linked memories), so the save is neither lost nor undoes
what the other side sent.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import MARKER_FILE, STATE_DIR
from remnic.errors import FieldProblem, LedgerError, UncommittedChangesError
from remnic.fsio import REPLACED, crash_point, read_regular, replace_unless_held, stage_files, write_atomic
from remnic.memfile.merge import merge_memory
from remnic.memfile.paths import MemoryPaths
from remnic.repo import remote as _remote
from remnic.repo.pullmark import PULL_MARKER

from .merge_driver import keep_copy

if TYPE_CHECKING:
    from .memory import Memory

PULL_TREE = "remnic-pull-tree"
"""In the git directory: the scratch work tree ``git merge`` writes its files into."""
_PLAIN_MODES = ("100644", "100755")


@dataclass
class Saved:
    """A path saved while the pull merged it: ``base`` the bytes the pull started from (None: no file)."""

    path: str
    base: bytes | None


def refuse_blocked(mem: Memory, tracking: str, base: str, target: str) -> None:
    """Uncommitted files the merge would overwrite (a malformed hand edit sync left as it is, a file that is
    not a memory, an untracked file where the remote adds one): named with what to do, before merging (git
    merges in a scratch work tree, so it never sees them)."""
    ledger = mem.ledger
    incoming = set(_remote.changed_paths(ledger, base, target))
    status = {q: xy for xy, p, orig in ledger.status_porcelain() for q in (p, orig) if q}
    blocking = sorted(incoming & set(status))
    if not blocking:
        return
    paths = MemoryPaths.from_store(mem.settings.store)
    problems, lines, advice = [], [], []
    for path in blocking:
        found = mem.files.check(path).problems if paths.is_memory(path) and (mem.root / path).is_file() else []
        what = "a memory file" if paths.is_memory(path) else "not a memory file"
        if found:
            problems += [p if p.path else FieldProblem(p.field, p.message, path, p.line) for p in found]
            lines.append(f"  {path}: an uncommitted edit that is malformed, so not committed ({found[0].describe()})")
            advice.append(
                "fix the malformed frontmatter (`remnic doctor` lists each problem) so the edit can be committed"
            )
        elif status[path] == "??":
            problems.append(FieldProblem("path", "untracked file where the merge adds one", path))
            lines.append(f"  {path}: untracked ({what}), and the remote adds a file at this path; move or delete it")
            advice.append("move or delete the untracked files")
        else:
            problems.append(FieldProblem("path", "uncommitted change the merge would overwrite", path))
            lines.append(f"  {path}: uncommitted ({what}); commit it with git, or discard it")
            advice.append("commit or discard the uncommitted changes")
    steps = ", ".join(dict.fromkeys(advice))
    raise UncommittedChangesError(
        f"pull stopped before merging {tracking}: it would overwrite {len(blocking)} file(s) this clone has not "
        "committed, and nothing was merged:\n" + "\n".join(lines) + f"\n{steps[0].upper()}{steps[1:]}, then run "
        "`remnic space pull` again",
        problems=problems,
    )


def scratch_tree(mem: Memory) -> Path:
    """An empty scratch work tree for ``git merge``, holding only the ``.gitattributes`` files (git reads a
    path's merge driver from the work tree); a missing file is one git may write, so it checks nothing else."""
    tree = mem.git_dir / PULL_TREE
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    listed = _remote.run_git(mem.root, ["ls-files", "-z", "--", ".gitattributes", "*/.gitattributes"]).out
    for rel in (p for p in listed.split("\0") if p):
        source = mem.root / rel
        if source.is_file() and not source.is_symlink():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, tree / rel)
    return tree


def drop_scratch_tree(mem: Memory) -> None:
    shutil.rmtree(mem.git_dir / PULL_TREE, ignore_errors=True)


def _entries(mem: Memory, args: list[str], paths: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """path → (mode, blob sha) from ``git ls-tree -r -z`` or ``git ls-files -s -z`` (stage 0 only), of
    ``paths`` only when given (in chunks: a pull may change more paths than a command line holds)."""
    if paths is not None:
        found: dict[str, tuple[str, str]] = {}
        for start in range(0, len(paths), 500):
            found.update(_entries(mem, [*args, "--", *paths[start : start + 500]]))
        return found
    out: dict[str, tuple[str, str]] = {}
    listed = _remote.run_git(mem.root, args, env={"GIT_LITERAL_PATHSPECS": "1"}).out
    for entry in listed.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if not path or len(parts) != 3:
            continue
        mode, second, third = parts
        if args[0] == "ls-files":
            if third == "0":
                out[path] = (mode, second)
        else:
            out[path] = (mode, third)
    return out


def tree_entries(mem: Memory, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """path → (mode, blob sha) of ``paths`` in ``commit``."""
    return _entries(mem, ["ls-tree", "-r", "-z", commit], paths) if paths else {}


def blob_bytes(mem: Memory, shas: set[str]) -> dict[str, bytes]:
    """The bytes of each blob, with one ``git cat-file --batch``."""
    if not shas:
        return {}
    order = sorted(shas)
    data = _remote.run_git_bytes(mem.root, ["cat-file", "--batch"], "\n".join(order).encode() + b"\n")[1]
    pos, out = 0, {}
    for sha in order:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        if len(header) != 3:  # "<sha> missing"
            pos = end + 1
            continue
        size = int(header[2])
        out[sha] = data[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return out


def _read(full: Path) -> bytes | None:
    try:
        return read_regular(full)
    except OSError:
        return None


def checked_out(mem: Memory, commit: str | None, paths: list[str]) -> dict[str, bytes]:
    """The bytes ``git checkout`` writes for each of ``paths`` as ``commit`` (None: the index) has them: the
    blob through the path's eol conversion and filters (``.gitattributes`` of that tree, ``core.autocrlf``),
    written by ``git checkout-index`` into a scratch folder in the git directory, never the working tree."""
    if not paths:
        return {}
    scratch = Path(tempfile.mkdtemp(prefix="remnic-checkout-", dir=mem.git_dir))
    try:
        env = {"GIT_INDEX_FILE": str(scratch / "index"), "GIT_LITERAL_PATHSPECS": "1"}
        if commit is None:
            listed = _remote.run_git(mem.root, ["rev-parse", "--path-format=absolute", "--git-path", "index"])
            shutil.copyfile(listed.out.strip(), scratch / "index")
        elif not _remote.run_git(mem.root, ["read-tree", commit], env=env).ok:
            raise LedgerError(f"git read-tree {commit} failed in {mem.root}")
        out = scratch / "tree"
        args = ["checkout-index", "-f", "-q", "-z", "--stdin", f"--prefix={out}{os.sep}"]
        _remote.run_git_bytes(mem.root, args, b"\0".join(p.encode() for p in paths), env=env)
        found = {path: _read(out / path) for path in paths}
        return {path: data for path, data in found.items() if data is not None}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def apply_merged(mem: Memory, old: str | None, saved: dict[str, Saved]) -> None:
    """Bring every path git's index (stage 0) changed since commit ``old`` into the working tree, each only if
    it still holds what checkout of ``old`` wrote there (already holding the new bytes: nothing to do, but a
    mode change); a path saved meanwhile is left as saved and added to ``saved``. Files are compared and written
    as git's checkout writes them (:func:`checked_out`). Deletions go first, so a folder a file replaces is gone
    before the file comes. Unmerged paths are :mod:`.pull_resolve`'s."""
    root = mem.root
    diff = ["diff", "--cached", "--name-only", "-z", "--no-renames", *([old] if old else ["--root"])]
    if old is None:
        changed = set(_entries(mem, ["ls-files", "-s", "-z"]))
    else:
        changed = {p for p in _remote.run_git(root, diff).out.split("\0") if p}
    changed -= set(_remote.unmerged(mem.ledger))
    if not changed:
        return
    paths = sorted(changed)
    before = tree_entries(mem, old, paths) if old else {}
    after = _entries(mem, ["ls-files", "-s", "-z"], paths)
    special = [
        p for p in paths if any(e is not None and e[0] not in _PLAIN_MODES for e in (before.get(p), after.get(p)))
    ]  # a symlink or submodule: git's own checkout (no memory is one)
    plain = [p for p in paths if p not in special]
    expected = checked_out(mem, old, [p for p in plain if p in before]) if old else {}
    new = checked_out(mem, None, [p for p in plain if p in after])
    tmp_dir = root / STATE_DIR / "tmp"
    for path in sorted(plain, key=lambda p: p in after):  # deletions first
        old_entry, new_entry = before.get(path), after.get(path)
        full, data = root / path, new.get(path)
        if _read(full) == data and (data is not None or not full.is_symlink()):
            if data is not None and new_entry is not None and old_entry is not None and old_entry[0] != new_entry[0]:
                _set_mode(full, new_entry[0])
            continue
        staging = stage_files([(full, data)], tmp_dir=tmp_dir, durable=False)[0] if data is not None else None
        if staging is not None and new_entry is not None:
            _set_mode(staging, new_entry[0])
        aside = tmp_dir / f"{os.getpid()}-{len(saved)}-{path.replace('/', '_')}.aside"
        try:
            done = replace_unless_held(full, expected.get(path) if old_entry else None, staging, aside=aside)
        finally:
            if staging is not None:
                staging.unlink(missing_ok=True)
            aside.unlink(missing_ok=True)
        if done != REPLACED:
            saved[path] = Saved(path, expected.get(path) if old_entry else None)
        elif data is None:
            _prune(root, full.parent)
    if special:
        _remote.run_git(root, ["checkout-index", "--force", "--", *special], env={"GIT_LITERAL_PATHSPECS": "1"})
    _remote.run_git(root, ["update-index", "-q", "--refresh"])  # stat data of the files just written


def _set_mode(full: Path, mode: str) -> None:
    """The executable bit git's tree gives the file (100755: executable where readable, as checkout sets it)."""
    try:
        now = full.stat().st_mode & 0o7777
        full.chmod(now | ((now & 0o444) >> 2) if mode == "100755" else now & ~0o111)
    except OSError:
        pass


def _prune(root: Path, folder: Path) -> None:
    """Remove folders a deletion left empty, as git's checkout does."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def keep_saved(mem: Memory, saved: dict[str, Saved]) -> list[dict[str, Any]]:
    """Each save that landed while the pull merged its path, merged onto what the pull committed (HEAD): a
    memory key by key (a body conflict becomes two linked memories, logged for the pull to commit), any other
    file line by line when that is clean. Where that cannot be done the file stays exactly as saved. What was
    done with each, for the report (``merged`` False: the file stays as saved, lacking the merge, and is left
    uncommitted); the merged files are left for the pull to commit as hand edits."""
    paths = MemoryPaths.from_store(mem.settings.store)
    done = []
    for path, entry in sorted(saved.items()):
        full = mem.root / path
        mine, head = _read(full), mem.ledger.committed_bytes(path)
        if mine is None:
            how = "deleted while the pull merged it: left deleted (the merged version is in HEAD)"
        elif head is None:
            how = "saved while the pull merged it, and the merge removed it: kept as you saved it"
        elif mine == head:
            continue
        else:
            how = _merge_saved(mem, path, entry.base, mine, head, paths.is_memory(path))
        # Committing a save the merge could not go into would undo, in the file, what the other side sent.
        done.append({"path": path, "how": how, "merged": how != _kept(mem, path)})
    return done


def _kept(mem: Memory, path: str) -> str:
    return (
        "saved while the pull merged it: kept as you saved it, uncommitted, which lacks what the merge brought "
        f"(`git -C {mem.root} diff HEAD -- {path}` shows it)"
    )


def _merge_saved(mem: Memory, path: str, base: bytes | None, mine: bytes, head: bytes, memory: bool) -> str:
    texts = [(b or b"").decode("utf-8", "surrogateescape") for b in (base, mine, head)]
    copy = None
    if memory:
        outcome = merge_memory(texts[0] or None, texts[1], texts[2], path, _remote.line_merge)
        merged: str | None = outcome.text
        copy = outcome if outcome.copy_path is not None else None
    else:
        text, clean = _remote.line_merge(*texts)
        merged = text if clean else None
    kept = _kept(mem, path)
    if merged is None:
        return kept
    full = mem.root / path
    staging = stage_files([(full, merged.encode("utf-8", "surrogateescape"))], tmp_dir=mem.root / STATE_DIR / "tmp")[0]
    try:
        if replace_unless_held(full, mine, staging) != REPLACED:
            return kept  # saved again meanwhile: that save stays
    finally:
        staging.unlink(missing_ok=True)
    if copy is not None:
        keep_copy(mem.root, mem.git_dir, path, copy)
        return "saved while the pull merged it: your edit and the merged version kept as two linked memories"
    return "saved while the pull merged it: your edit kept, merged with what the pull brought"


# --- a clone of an empty remote that stored nothing yet joins the remote's history ---


def only_init(mem: Memory, head: str) -> bool:
    """Whether this branch's history is only remnic's own ``init`` commit (a clone of an empty remote that
    stored nothing yet): nothing of it is lost by taking the remote's history instead."""
    listed = _remote.run_git(mem.root, ["rev-list", "--max-count=2", head]).out.split()
    if len(listed) != 1:
        return False
    trailer = ["log", "-1", "--format=%(trailers:key=Remnic-Operation,valueonly)", head]
    return _remote.run_git(mem.root, trailer).out.strip() == "init"


def is_memory_repo(mem: Memory, commit: str) -> bool:
    return _remote.run_git(mem.root, ["cat-file", "-e", f"{commit}:{MARKER_FILE}"]).ok


def adopt(mem: Memory, head: str, target: str, branch: str) -> list[dict[str, Any]]:
    """The branch (holding only its ``init`` commit ``head``) takes the history of ``target``, another memory
    repository's (two clones of one empty remote, the other one first); its files come over as a merge's do,
    a file saved meanwhile kept (what :func:`keep_saved` did with each is returned)."""
    # The pull's marker, as around a merge: killed before the branch moves, the next pull puts the index and
    # files back (a cut merge); after, it finishes copying as for a fast-forward. Neither is taken for hand edits.
    marker = mem.git_dir / PULL_MARKER
    record = {"head": head, "target": target, "tracking": branch, "pid": None, "started": time.time()}
    write_atomic(marker, json.dumps(record).encode("utf-8"))
    read = _remote.run_git(mem.root, ["read-tree", target])
    if not read.ok:
        marker.unlink(missing_ok=True)
        raise LedgerError(f"git read-tree {target} failed: {read.err.strip()}")
    crash_point("pull-adopt-read")
    message = "remnic pull: take the remote's history (this clone held only its init commit)"
    moved = _remote.run_git(mem.root, ["update-ref", "-m", message, f"refs/heads/{branch}", target, head])
    if not moved.ok:
        _remote.run_git(mem.root, ["read-tree", head])
        marker.unlink(missing_ok=True)
        raise LedgerError(f"git update-ref of {branch} failed: {moved.err.strip()}")
    crash_point("pull-adopt-moved")
    saved: dict[str, Saved] = {}
    apply_merged(mem, head, saved)
    marker.unlink(missing_ok=True)
    return keep_saved(mem, saved)
