"""Git hooks through the service: what the ``remnic hooks`` commands and the hook runner call."""

from __future__ import annotations

from remnic.config import Settings
from remnic.errors import FieldProblem
from remnic.repo.githooks import GIT_HOOKS, hooks_source_dir
from remnic.repo.githooks import pre_commit_problems as _pre_commit_problems

__all__ = ["GIT_HOOKS", "hooks_source_dir", "pre_commit_problems"]


def pre_commit_problems(settings: Settings) -> list[FieldProblem]:
    """Every problem with the memory files staged for the commit git is about to make (no index needed)."""
    return _pre_commit_problems(settings.memory_dir, settings.store)
