"""``remnic doctor``'s checks of the repository around the memories: the branch writes commit on, the git
identity they are made as, and memory files too large to handle well. Each returns one check."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from remnic.errors import LedgerError
from remnic.repo.ledger import Ledger
from remnic.repo.remote import identity

LARGE_FILE_BYTES = 1 << 20
"""A memory file above this size is named by doctor. remnic's own writes stop at ``store.maxContentChars``, but a
note made by hand or adopted has no limit, and every file is read, chunked and embedded whole (a 31 MB note
took sync two minutes and 1 GB of memory)."""


def head_check(ledger: Ledger) -> dict[str, Any]:
    """Whether HEAD is on a branch: on a detached HEAD every write is refused (a commit there would belong to
    no branch), so a checkout of an old commit to look around leaves remnic read-only until it is undone."""
    git_dir = Path(ledger.repo.git_dir)
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError as exc:
        return {"name": "branch", "status": "fail", "detail": f"cannot read {git_dir / 'HEAD'}: {exc.strerror}"}
    if head.startswith("ref:"):
        return {
            "name": "branch",
            "status": "ok",
            "detail": f"on branch {head.removeprefix('ref:').strip().removeprefix('refs/heads/')}",
        }
    try:
        branches = ledger.git("for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    except LedgerError:
        branches = []
    target = branches[0] if len(branches) == 1 else "main" if "main" in branches else "BRANCH"
    detail = (
        f"HEAD is detached at {head[:12]} (not on a branch): reads and recall work, but every write (store, "
        f"update, forget, observe, sync's commit) is refused until it is back on a branch: "
        f"`git -C {ledger.root} switch {target}`"
        + (f" (branches: {', '.join(branches[:5])})" if len(branches) > 1 else "")
        + f", or `git -C {ledger.root} switch -c NAME` to keep this commit on a new branch"
    )
    return {"name": "branch", "status": "warn", "detail": detail}


def identity_check(ledger: Ledger) -> dict[str, Any]:
    """The author remnic's commits carry: the repository's git identity, else remnic's own fallback (said,
    since a first run without ``user.name`` set would otherwise sign every memory ``remnic``)."""
    try:
        ident = ledger.git("var", "GIT_AUTHOR_IDENT").rsplit(" ", 2)[0]  # without its time and zone
    except LedgerError as exc:  # git's advice runs over lines: its last one says what is wrong
        said = exc.message.strip().strip("'").splitlines()[-1]
        return {"name": "git-identity", "status": "warn", "detail": f"git cannot name an author: {said}"}
    fallback = identity(ledger)
    if not fallback:
        return {"name": "git-identity", "status": "ok", "detail": f"commits are made as {ident} (git config)"}
    missing = " and ".join(k for k in ("name", "email") if f"GIT_AUTHOR_{k.upper()}" in fallback)
    detail = (
        f"commits are made as {ident}: no git user.{missing.replace(' and ', ' or user.')} is set, so remnic's "
        f'fallback is used (`git config --global user.name "Your Name"` and `user.email` sign them as you)'
    )
    return {"name": "git-identity", "status": "ok", "detail": detail}


def large_files_check(root: Path, paths: Iterable[str], max_content_chars: int) -> dict[str, Any]:
    """Memory files larger than :data:`LARGE_FILE_BYTES`, each named with its size."""
    large = []
    for rel in paths:
        try:
            size = os.stat(root / rel).st_size
        except OSError:
            continue
        if size > LARGE_FILE_BYTES:
            large.append((rel, size))
    if not large:
        return {"name": "large-files", "status": "ok", "detail": "no memory file is larger than 1 MiB"}
    detail = (
        f"{len(large)} memory file(s) larger than 1 MiB: sync, reindex and recall read, chunk and embed each "
        f"whole, slowly and with much memory (remnic's own writes stop at store.maxContentChars, "
        f"{max_content_chars} characters): split each into smaller notes, or leave it out of the memories "
        "(store.exclude)"
    )
    problems = [f"{rel}: {size / (1 << 20):.1f} MiB" for rel, size in sorted(large)]
    return {"name": "large-files", "status": "warn", "detail": detail, "problems": problems}
