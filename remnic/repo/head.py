"""The error of a write refused on a detached HEAD (``git checkout <commit>``)."""

from __future__ import annotations

from remnic.errors import RepoBusyError


class DetachedHeadError(RepoBusyError):
    """A write refused because HEAD is detached: a commit there would belong to no branch. A kind of
    ``repo_busy`` (exit 1, HTTP 409, caught as :class:`~remnic.errors.RepoBusyError`) with a code of its own,
    since no waiting ends it, unlike a merge a pull finishes: a person checks out a branch."""

    code = "detached_head"
