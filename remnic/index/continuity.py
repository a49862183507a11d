"""Which build an index write goes into: the live one when it continues a recorded commit, else a fresh one.

A live build that cannot be used (missing, a write interrupted, another schema, model or settings) is
replaced by an empty one on the next write. That is harmless for a write that records no commit (the
fresh index records none, so the next recall rebuilds it), and right for a batch that holds every memory
file (a full sync pass). It is wrong for a batch of a few files that then records a commit as reflected
(sync's index step, ``refresh_paths`` with a commit): the index would claim to be current while holding
only those files, and no recall or sync would ever catch it up. Such writes ask for ``fresh=False`` and
get :class:`~.state.NotContinued` instead, before anything is written.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .state import NeedsRebuild, NotContinued

if TYPE_CHECKING:  # pragma: no cover
    from remnic.repo.ledger import Ledger

    from .catalog import Row
    from .manifest import Manifest
    from .vectors import Snapshot

log = logging.getLogger("remnic.index.search")


class Continuity:
    """``_ensure_writable`` and ``starts_fresh`` for :class:`~remnic.index.search.SearchIndex`."""

    _lock: threading.RLock

    if TYPE_CHECKING:  # pragma: no cover

        def _check(self) -> Manifest: ...
        def _sync(self) -> Snapshot: ...
        def _ledger(self) -> Ledger | None: ...
        def _create_build(
            self,
            *,
            commit: str | None,
            rows: Sequence[Row],
            docs: dict[str, dict[str, str]] | None = None,
            progress: Callable[[int, int], None] | None = None,
            vocab: tuple[list[str], Any] = ([], None),
            worktree: set[str] | frozenset[str] = frozenset(),
        ) -> None: ...

    def _ensure_writable(self, *, fresh: bool = True) -> None:
        """Open the live build for writing; if there is none usable, start an empty partial one. With
        ``fresh`` False (the write records a commit and holds only some files) raise :class:`NotContinued`
        instead, and also for a build that continues no commit: a partial one (it records none), or one whose
        commit history rewriting took away (what changed since cannot be known)."""
        try:
            manifest = self._check()
            self._sync()
        except NeedsRebuild as exc:
            if not fresh:
                raise NotContinued(exc.state, exc.detail) from None
            log.info("index %s (%s): starting a fresh partial index", exc.state, exc.detail)
            self._create_build(commit=None, rows=[], progress=None)
            return
        if fresh:
            return
        if manifest.commit is None:
            raise NotContinued("partial", "the index records no commit (a partial index)")
        ledger = self._ledger()
        if ledger is not None and not ledger.commit_exists(manifest.commit):
            raise NotContinued("stale", f"indexed commit {manifest.commit[:8]} is gone (history rewritten?)")

    def starts_fresh(self) -> bool:
        """Whether the next write replaces the live build with an empty one (see the module docstring): only
        a batch of every memory file, or a rebuild, fills it. False for a model that cannot be loaded (no
        write succeeds then, and no rebuild cures it)."""
        with self._lock:
            try:
                self._check()
            except NeedsRebuild:
                return True
            except Exception:  # noqa: BLE001 - the model, not the index: a write fails before anything changes
                return False
            return False
