"""Making the git repository of a memory directory: all of it, or nothing.

GitPython expands ``$NAME`` in the paths it is given (``Repo.init`` and the working directory of its
git commands always, whatever it is told): git itself makes the repository and :class:`LiteralRepo`
runs git in the folder as named, so a folder named ``x$HOME`` is that folder, never another path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import git

from remnic.errors import LedgerError, NotFoundError

T = TypeVar("T")


class _LiteralGit(git.Git):
    def __init__(self, working_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__(working_dir)
        if working_dir is not None:
            self._working_dir = os.path.normpath(os.path.abspath(os.fspath(working_dir)))


class LiteralRepo(git.Repo):
    """A ``git.Repo`` whose git commands run in its folder as named (open it with ``expand_vars=False``)."""

    GitCommandWrapperType = _LiteralGit


def init_git(root: Path, open_repo: Callable[[Path], T]) -> T:
    """``open_repo(root)`` after ``git init`` in ``root`` (which has no ``.git`` yet). A failure removes
    the ``.git`` begun: half made, it would pass for a repository and the next init would skip it."""
    try:
        made = _git_init(root, "--initial-branch=main")
        if made.returncode != 0 and "initial-branch" in made.stderr:  # git older than 2.28 has no such option
            made = _git_init(root)
        if made.returncode != 0:
            raise LedgerError(f"cannot create a git repository in {root}: {made.stderr.strip() or 'git init failed'}")
        return open_repo(root)
    except BaseException as exc:
        shutil.rmtree(root / ".git", ignore_errors=True)
        if isinstance(exc, git.GitError | NotFoundError | OSError):
            raise LedgerError(f"cannot create a git repository in {root}: {exc}") from None
        raise


def _git_init(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "init", "--quiet", *options, "--", str(root)], capture_output=True, text=True, check=False
    )
