"""A memory's versions: the history of its file, cut to the versions whose file has its id.

``git log --follow`` follows a path, not a memory. A path can hold several memories over time (one
deleted, another later stored under the same name; two files swapped by hand), and a memory's
identity is its ``id``, so the versions of one memory are the run of versions whose frontmatter
carries that id. A version without an id (a file without one, which remnic calls by an id made from
its path, or one that does not parse) goes with the versions around it; a deletion goes with the
version it deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from remnic.errors import MemoryFormatError, RemnicError
from remnic.memfile.model import parse_file
from remnic.memfile.values import own_id, record_id

from . import gitlog
from .messages import Version

if TYPE_CHECKING:
    from .ledger import Ledger

_MAX_HOPS = 16
"""Renames followed forward from a path the file left (a loop of renames cannot go on forever)."""


@dataclass(frozen=True)
class Lineage:
    """One memory's committed versions, oldest first, numbered from v1."""

    versions: list[Version]
    memory_id: str | None
    """The id its files carry (None when none of them has one)."""
    whole: bool = True
    """False when its file went on as another memory's (its id changed by hand, or the file swapped
    with another): the memory itself then went on in another file."""


def lineage(
    ledger: Ledger, path: str, memory_id: str | None = None, *, _hops: int = 0, _rev: str | None = None
) -> Lineage:
    """The versions of the memory at ``path``: of ``memory_id`` when given (none when no version there
    has that id), else of the memory the newest version there holds.

    A path the file was renamed away from has the history of where it went (git's ``--follow`` only
    looks back, so the move reads as a deletion of the old path). Every run of the id at the path
    counts (an id typo fixed, a memory revived at its path), and so does the run at another path the
    id came from (a move git did not pair as a rename, a swap). A merge that changed the file is a
    version too, at the merge commit (``git log --follow`` does not list merges).
    """
    if ledger.head() is None:
        return Lineage([], memory_id)
    versions = gitlog.history_at(ledger.git, path, _rev)
    ids, stand_ins = _ids(ledger, versions)
    runs = _runs(versions, ids)
    mine = [
        r
        for r in runs
        if memory_id is None or r[0] == memory_id or (r[0] is None and _stands_in(r[1], memory_id, stand_ins))
    ]
    if not mine:
        return Lineage([], memory_id)
    owner, run = mine[-1]
    if owner is not None:
        run = [v for o, r in runs if o == owner for v in r]
    whole = run[-1].deleted or run[-1] is runs[-1][1][-1]
    if _rev is None and run[-1].deleted and _hops < _MAX_HOPS:
        moved = gitlog.renamed_to(ledger.git, run[-1].sha, run[-1].path)
        if moved is not None:
            followed = lineage(ledger, moved, owner, _hops=_hops + 1)
            if followed.versions:
                return followed
    if owner is not None and _hops < _MAX_HOPS:
        run = _earlier(ledger, run[0], owner, _hops) + run
    run = [_as_move(ledger, v) if v.deleted and v is not run[-1] else v for v in _unique(run)]
    if _rev is None:
        run = _merges(ledger, run, owner)
    for i, v in enumerate(run, 1):
        v.number = i
    return Lineage(run, owner, whole)


def _earlier(ledger: Ledger, first: Version, owner: str, hops: int) -> list[Version]:
    """The versions of ``owner`` before ``first`` that ``git log --follow`` left out: at a path the
    same commit deleted or gave another id (a move git did not pair, a swap), or at this path before
    the file was added again (a revival git took for a copy of a similar file)."""
    if first.change == "R":
        return []
    parent = f"{first.sha}^"
    others = [p for c, p in gitlog.changed_paths(ledger.git, first.sha) if c in ("D", "M") and p != first.path]
    texts = gitlog.blob_texts(ledger._run_bytes, [(parent, p) for p in others]) if others else []
    sources = [p for p, text in zip(others, texts) if text is not None and _id_of(text, p) == owner]
    if first.change == "A" and len(ledger.parents(first.sha)) == 1:
        sources.append(first.path)
    for source in sources:
        found = lineage(ledger, source, owner, _hops=hops + 1, _rev=parent)
        if found.versions:
            return found.versions
    return []


def _merges(ledger: Ledger, run: list[Version], owner: str | None) -> list[Version]:
    """``run`` with the merges that changed the memory's file put in place: a merge whose file
    differs from every parent's (both sides edited it) is a version of its own, at the merge commit.
    ``git log --follow`` lists no merges, and a merge whose file matches one parent's is that
    parent's version, which it did list."""
    paths = list(dict.fromkeys(v.path for v in run))
    out = ledger.git("log", "--merges", "--format=%H %P", f"^{run[0].sha}", "HEAD", "--", *gitlog.literal(*paths))
    commits = [line.split() for line in out.splitlines() if line.strip()]
    listed = {(v.sha, v.path) for v in run}
    found: list[tuple[str, str, str]] = []
    for sha, *parents in reversed(commits):  # oldest first
        for path in paths:
            blobs = gitlog.blob_ids(ledger._run_bytes, [f"{sha}:{path}"] + [f"{p}:{path}" for p in parents])
            if blobs[0] is None or blobs[0] in blobs[1:] or (sha, path) in listed:
                continue
            text = gitlog.blob_texts(ledger._run_bytes, [(sha, path)])[0]
            if text is None or (owner is not None and _id_of(text, path) != owner):
                continue
            found.append((sha, path, "A" if blobs[1] is None else "M"))
            break
    for sha, path, change in found:
        at = len(run)
        # Before the versions made after it (on its descendants), wherever git's date order put them.
        while at > 0 and run[at - 1].sha != sha and ledger.is_ancestor(sha, run[at - 1].sha):
            at -= 1
        run = [*run[:at], gitlog.commit_version(ledger.git, sha, path, change), *run[at:]]
    return run


def _as_move(ledger: Ledger, deletion: Version) -> Version:
    """A deletion inside a run that was a move on another branch (moved on both clones, then merged):
    the version is that move, with content, not a deletion."""
    moved = gitlog.renamed_to(ledger.git, deletion.sha, deletion.path)
    if moved is None:
        return deletion
    v = deletion
    return Version(v.number, v.sha, moved, v.date, v.author, v.subject, "R", v.trailers, v.path)


def _unique(run: list[Version]) -> list[Version]:
    seen: set[tuple[str, str]] = set()
    out = []
    for v in run:
        if (v.sha, v.path) not in seen:
            seen.add((v.sha, v.path))
            out.append(v)
    return out


def _id_of(text: str, path: str) -> str | None:
    try:
        return own_id(parse_file(text, path).frontmatter)
    except (MemoryFormatError, RemnicError):
        return None


def _ids(ledger: Ledger, versions: list[Version]) -> tuple[list[str | None], dict[str, str]]:
    """The frontmatter id of each version's file (None for a deletion, or a file without a usable
    id), and for the files without one the id remnic gives them (from the path), by commit."""
    specs = [(v.sha, v.path) for v in versions if not v.deleted]
    texts = iter(gitlog.blob_texts(ledger._run_bytes, specs))
    ids: list[str | None] = []
    stand_ins: dict[str, str] = {}
    for v in versions:
        text = None if v.deleted else next(texts)
        try:
            meta = None if text is None else parse_file(text, v.path).frontmatter
        except (MemoryFormatError, RemnicError):
            meta = None
        ids.append(None if meta is None else own_id(meta))
        if meta is not None and ids[-1] is None:
            stand_ins[v.sha] = record_id(meta, v.path)
    return ids, stand_ins


def _stands_in(run: list[Version], memory_id: str, stand_ins: dict[str, str]) -> bool:
    """Whether a run of files without an id is the memory remnic calls ``memory_id`` (its id from the path)."""
    return any(stand_ins.get(v.sha) == memory_id for v in run)


def _runs(versions: list[Version], ids: list[str | None]) -> list[tuple[str | None, list[Version]]]:
    """The versions split where the memory changes: (its id, its versions), oldest first.

    A new run starts at a version whose id differs from the run's, and at a file added again after a
    deletion without an id (a new file, unless it later turns out to carry the deleted one's id).
    """
    runs: list[tuple[str | None, list[Version]]] = []
    for i, (v, vid) in enumerate(zip(versions, ids)):
        if not runs:
            runs.append((vid, [v]))
            continue
        owner, run = runs[-1]
        after_deletion = versions[i - 1].deleted
        if v.deleted or (vid is None and not after_deletion) or (vid is not None and vid == owner):
            run.append(v)
        elif vid is not None and owner is None and not after_deletion:
            runs[-1] = (vid, [*run, v])  # sync gave the file its id
        else:
            runs.append((vid, [v]))
    return runs
