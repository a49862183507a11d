"""The merge driver git runs for each memory file both sides of a merge changed (``remnic merge-file
%O %A %B %P``), and the conflict copy it leaves for the pull to commit.

Git starts one process per file, so this module imports only what merging one file needs (the
frontmatter model and merge, the settings for the store layout, git's line merge): no ``Memory``,
index, sync or recall code; what only a conflict copy needs (the atomic write) loads when one is kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from remnic.memfile.merge import MergeOutcome, merge_memory
from remnic.memfile.paths import MemoryPaths
from remnic.repo import remote as _remote


def merge_file(base: Path, ours: Path, theirs: Path, rel: str, root: Path, paths: MemoryPaths) -> int:
    """git's ``%O %A %B %P``: write the merge into ``ours``; 0 when resolved (always, for a memory file)."""
    texts = [p.read_bytes().decode("utf-8", "surrogateescape") for p in (base, ours, theirs)]
    if not paths.is_memory(rel):
        merged, clean = _remote.line_merge(*texts)
        ours.write_bytes(merged.encode("utf-8", "surrogateescape"))
        return 0 if clean else 1
    outcome = merge_memory(texts[0] if texts[0] else None, texts[1], texts[2], rel, _remote.line_merge)
    ours.write_bytes(outcome.text.encode("utf-8", "surrogateescape"))
    if outcome.copy_path is not None:
        keep_copy(root, git_dir(root), rel, outcome)
    return 0


ROOT_ENV = "REMNIC_MERGE_ROOT"
"""Set by a pull for its ``git merge``: the repository's working tree (git runs the driver in a scratch work
tree, :mod:`.pull_guard`), where the settings are read and conflict copies written."""


def merge_file_at(root: Path, base: Path, ours: Path, theirs: Path, rel: str) -> int:
    """The merge driver for the repository at ``root``; opens no Memory, since the pull that runs git
    holds the write lock."""
    from remnic.config import load_settings

    root = Path(os.environ.get(ROOT_ENV) or root)
    settings = load_settings(root)
    return merge_file(base, ours, theirs, rel, root, MemoryPaths.from_store(settings.store))


def git_dir(root: Path) -> Path | None:
    """The repository's git directory; None outside a repository (the driver run by hand on three files).
    A pull runs its ``git merge`` with ``GIT_DIR`` set (:mod:`.pull_resolve`): that one, without a git process."""
    named = os.environ.get("GIT_DIR")
    if named and (root / named).is_dir():
        return (root / named).absolute()
    result = _remote.run_git(root, ["rev-parse", "--absolute-git-dir"])
    out = result.out.strip() if result.ok else ""
    return Path(out) if out and Path(out).is_dir() else None


def keep_copy(root: Path, git_dir: Path | None, rel: str, outcome: MergeOutcome) -> None:
    """Write the other side's version beside the file (committed by the pull) and log the conflict;
    outside a repository there is no pull to commit it, so nothing is logged."""
    from remnic.fsio import write_atomic

    assert outcome.copy_path is not None and outcome.copy_text is not None
    target = root / outcome.copy_path
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, outcome.copy_text.encode("utf-8", "surrogateescape"))
    entry: dict[str, object] = {
        "path": rel,
        "id": outcome.memory_id,
        "copyPath": outcome.copy_path,
        "copyId": outcome.copy_id,
        "kind": "malformed" if outcome.malformed else "conflict" if outcome.conflict else "duplicate",
    }
    if outcome.malformed:
        entry["malformed"] = list(outcome.malformed)  # ours/theirs: which file does not parse
    if git_dir is None:
        return
    with open(git_dir / _remote.CONFLICT_LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
