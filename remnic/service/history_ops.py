"""History and git-hook operations of the ``Memory`` facade: versions, diffs, revert and a
memory's timeline read from git (see :mod:`remnic.repo.history`), and remnic's git hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.errors import NotFoundError
from remnic.memfile.model import check_relpath
from remnic.repo import githooks as _githooks
from remnic.repo import history as _history

from . import reverting as _reverting

if TYPE_CHECKING:
    from remnic.repo.history import VersionText
    from remnic.repo.messages import Version

    from .memory import Memory
    from .writes import WriteResult


class HistoryOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    def versions(self: Memory, id_or_path: str) -> list[Version]:
        rel = self.resolve(id_or_path)
        versions = self.ledger.history(rel)
        if not versions:
            raise NotFoundError(f"{rel} has no committed versions yet (commit it, or run `remnic sync run`)")
        return versions

    def version_text(self: Memory, id_or_path: str, spec: str) -> tuple[str, str]:
        """(label, file text) of a version; ``working`` is the file as it is on disk now."""
        return _history.version_text(self.files, self.ledger, self.versions(id_or_path), spec)

    def read_version(self: Memory, id_or_path: str, spec: str) -> VersionText:
        """A version's text, or for the commit that deleted the file its ``deleted`` flag and the
        version before it (a deletion has no text)."""
        return _history.read_version(self.files, self.ledger, self.versions(id_or_path), spec)

    def version_diff(self: Memory, id_or_path: str, old: str | None = None, new: str | None = None) -> str:
        """A unified diff between two versions (default: the last two, or latest vs uncommitted edits)."""
        return _history.version_diff(self.files, self.ledger, self.versions(id_or_path), old, new)

    def install_git_hooks(self: Memory, *, force: bool = False) -> list[dict[str, str]]:
        """Install remnic's git hooks; a foreign hook is kept, and chained when ``force``."""
        return _githooks.install_git_hooks(self.ledger, force=force)

    def git_hooks_status(self: Memory) -> list[dict[str, str]]:
        return _githooks.git_hooks_status(self.ledger)

    def uninstall_git_hooks(self: Memory) -> list[dict[str, str]]:
        """Remove remnic's hooks, restoring hooks that install kept aside."""
        return _githooks.uninstall_git_hooks(self.ledger)

    def has_uncommitted_edits(self: Memory, path: str) -> bool:
        """Whether the file differs from what HEAD records (an edit not committed yet)."""
        return self.ledger.is_dirty(check_relpath(path, field="path", root=self.root))

    def revert(self: Memory, id_or_path: str, spec: str, *, source: str = "api", force: bool = False) -> WriteResult:
        """Restore a version's text as a new commit (history is never rewritten); uncommitted edits to
        the file would be lost, so they are refused unless ``force``."""
        return _reverting.revert(self, id_or_path, spec, source=source, force=force)

    def timeline(self: Memory, memory_id: str) -> list[dict[str, Any]]:
        """A memory's lifecycle from git: one event per commit, with the status at that version."""
        return _history.timeline(self.ledger, self.versions(memory_id))
