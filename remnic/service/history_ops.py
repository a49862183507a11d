"""History and git-hook operations of the ``Memory`` facade: versions, diffs, revert and a
memory's timeline read from git (see :mod:`remnic.repo.history`), and remnic's git hooks."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from remnic.errors import LedgerError, MemoryFormatError, NotFoundError, RemnicError, UsageError
from remnic.lazy import LazyModule
from remnic.memfile.model import check_relpath, parse_file
from remnic.memfile.schema import nfc_id
from remnic.memfile.values import own_id
from remnic.repo import githooks as _githooks
from remnic.repo import gitlog as _gitlog
from remnic.repo import history as _history
from remnic.repo import lineage as _lineage
from remnic.repo.history import MemoryHistory

if TYPE_CHECKING:
    from remnic.repo.history import VersionText
    from remnic.repo.messages import Version

    from . import reverting as _reverting
    from .memory import Memory
else:
    _reverting = LazyModule("remnic.service.reverting")  # the write machinery loads with the first revert


class HistoryOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    def is_tracked(self: Memory, rel: str) -> bool:
        """Whether git tracks the repository path ``rel`` (its config, .gitattributes, a README, a memory):
        a file an output must not be written over."""
        return bool(self.ledger.git("ls-files", "-z", "--", *_gitlog.literal(rel), strip=False))

    def versions(self: Memory, id_or_path: str) -> list[Version]:
        """The committed versions of a memory, oldest first: asked by id, only those whose file has
        that id; asked by path, those of the memory at that path (a path another memory held before
        does not mix the two)."""
        return self.memory_history(id_or_path).versions

    def memory_history(self: Memory, id_or_path: str) -> MemoryHistory:
        """A memory's versions and where its file is on disk now (see :class:`MemoryHistory`)."""
        if self.names_path(id_or_path):
            rel = self.resolve(id_or_path)
            found = _lineage.lineage(self.ledger, rel)
            if not found.versions:
                raise NotFoundError(f"{rel} has no committed versions yet (commit it, or run `remnic sync run`)")
            return MemoryHistory.of(self.ledger, found.versions, found.memory_id, found.versions[-1].path)
        return _by_id(self, nfc_id(id_or_path))

    def version_text(self: Memory, id_or_path: str, spec: str) -> tuple[str, str]:
        """(label, file text) of a version; ``working`` is the file as it is on disk now."""
        found = self.memory_history(id_or_path)
        return _history.version_text(self.files, self.ledger, found, resolve_spec(self, found, spec))

    def read_version(self: Memory, id_or_path: str, spec: str) -> VersionText:
        """A version's text, or for the commit that deleted the file its ``deleted`` flag and the
        version before it (a deletion has no text)."""
        found = self.memory_history(id_or_path)
        return _history.read_version(self.files, self.ledger, found, resolve_spec(self, found, spec))

    def version_diff(self: Memory, id_or_path: str, old: str | None = None, new: str | None = None) -> str:
        """A unified diff between two versions (default: the last two, or latest vs uncommitted edits)."""
        found = self.memory_history(id_or_path)
        if old is not None or new is not None:
            old, new = (resolve_spec(self, found, spec) for spec in _diff_specs(found, old, new))
        return _history.version_diff(self.files, self.ledger, found, old, new)

    def version_detail(self: Memory, id_or_path: str, spec: str) -> tuple[VersionText, dict[str, Any]]:
        """A version's text and its fields as ``versions()`` lists them (``version``, ``label``, ``sha``,
        ``path``, ``previousPath``, ``date``; ``working`` has version None and no sha or date)."""
        found = self.memory_history(id_or_path)
        spec = resolve_spec(self, found, spec)
        return _history.read_version(self.files, self.ledger, found, spec), _fields(found, spec)

    def version_diff_detail(
        self: Memory, id_or_path: str, old: str | None = None, new: str | None = None
    ) -> dict[str, Any]:
        """:meth:`version_diff` with which versions it compared: ``diff``, ``changed``, ``from``, ``to``."""
        found = self.memory_history(id_or_path)
        old, new = (resolve_spec(self, found, spec) for spec in _diff_specs(found, old, new))
        diff = _history.version_diff(self.files, self.ledger, found, old, new)
        return {"diff": diff, "changed": bool(diff), "from": _fields(found, old), "to": _fields(found, new)}

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

    def revert(
        self: Memory, id_or_path: str, spec: str, *, source: str = "api", force: bool = False
    ) -> _reverting.RevertResult:
        """Restore a version's text as a new commit (history is never rewritten); uncommitted edits to
        the file are refused unless ``force``, and then committed first as a version of their own."""
        spec = resolve_spec(self, self.memory_history(id_or_path), spec)  # HEAD~1, a sha: the version it names
        return _reverting.revert(self, id_or_path, spec, source=source, force=force)

    def timeline(self: Memory, memory_id: str, *, working: bool = False) -> list[dict[str, Any]]:
        """A memory's lifecycle from git: one event per commit, with the status at that version; with
        ``working``, then one ``uncommitted`` event (version None) when the file on disk differs."""
        return self.located_timeline(memory_id, working=working)[1]

    def located_timeline(
        self: Memory, memory_id: str, *, working: bool = False
    ) -> tuple[MemoryHistory, list[dict[str, Any]]]:
        """:meth:`timeline` with the history it read, whose ``working_path`` is where the memory's file
        is, or was when it is deleted: what a server's namespace check goes by."""
        found = self.memory_history(memory_id)
        events = _history.timeline(self.ledger, found.versions)
        now = _history.working_event(self.files, self.ledger, found) if working else None
        return found, [*events, _uncommitted(now)] if now is not None else events


# A git revision: HEAD~2, HEAD^, @~1, or a commit sha (prefix).
_REVISION = re.compile(r"(?:head|@)(?:[~^]\d*)+|[0-9a-f]{4,64}", re.IGNORECASE)


def _names_version(versions: list[Version], spec: str) -> bool:
    if spec.strip().lower() == "working":
        return True
    try:
        _history.pick(versions, spec)
    except UsageError:
        return False
    return True


def resolve_spec(mem: Memory, found: MemoryHistory, spec: str) -> str:
    """The version ``spec`` names, as :func:`remnic.repo.history.pick` reads it. A version spec is kept;
    a git revision (``HEAD~1``, ``HEAD^``) names the version in effect at that commit, as ``HEAD`` names
    the latest; a commit sha that made no version is refused saying so, and which version was in
    effect then (a sha prefix of digits only, read as a version number by pick, is found here too)."""
    if _names_version(found.versions, spec):
        return spec
    text = re.sub(r"^head", "HEAD", spec.strip(), flags=re.IGNORECASE)  # git's name is upper case; _REVISION's is not
    if not _REVISION.fullmatch(text):
        raise UsageError(f"no version {spec!r}; {_valid(found)}")
    try:
        sha = mem.ledger.git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{text}^{{commit}}")
    except LedgerError:
        gone = "is before the first commit" if re.match(r"(?i)head|@", text) else "names no commit"
        raise UsageError(f"no version {spec!r}: {text} {gone} of this repository; {_valid(found)}") from None
    versions = found.versions
    made = next((v for v in versions if v.sha == sha), None)
    if made is not None:
        return made.label
    then = next((v for v in reversed(versions) if mem.ledger.is_ancestor(v.sha, sha)), None)
    revision = not re.fullmatch(r"[0-9a-f]+", text, re.IGNORECASE)
    if revision and then is not None:
        return then.label
    if then is None:
        state = "the memory has no version in that commit's history"
    elif then.deleted:
        state = f"the file was deleted then ({then.label}, {then.short})"
    else:
        state = f"the version in effect then is {then.label} ({then.short})"
    held = _held_another_id(mem, found, sha)
    if held is not None:  # it changed the file, but as another memory: say so, not "did not change"
        raise UsageError(f"commit {sha[:8]} {held}; {state}; {_valid(found)}")
    raise UsageError(f"commit {sha[:8]} did not change this memory: {state}; {_valid(found)}")


def _held_another_id(mem: Memory, found: MemoryHistory, sha: str) -> str | None:
    """How commit ``sha`` changed one of the memory's paths without making a version of it (the file
    then had another id: a hand edit of the id, later fixed, or another memory at that path), or None."""
    paths = {v.path for v in found.versions}
    touched = [p for c, p in _gitlog.changed_paths(mem.ledger.git, sha) if p in paths and c != "D"]
    if not touched or found.memory_id is None:
        return None
    path = touched[0]
    text = mem.ledger.blob_texts([(sha, path)])[0]
    try:
        held = own_id(parse_file(text or "", path).frontmatter)
    except (MemoryFormatError, RemnicError):
        held = None
    if held == found.memory_id:
        return None
    who = f"id {held}" if held else "no id remnic could read"
    return (
        f"changed {path}, but the file then had {who}, not {found.memory_id}: versions of a memory are those "
        f"whose file has its id, so that commit is not one of them (`git log -- {path}` lists every commit of "
        "the file)"
    )


def _valid(found: MemoryHistory) -> str:
    """The version specs one memory takes: the one list every "no such version" message gives."""
    n = len(found.versions)
    return f"valid versions: v1..v{n}, the sha of a commit that changed it, HEAD~N, 'working' or 'latest'"


_FIELDS = ("version", "label", "sha", "path", "previousPath", "date")


def _uncommitted(fields: dict[str, Any]) -> dict[str, Any]:
    """The file on disk has no commit: its ``sha`` and ``date`` are null (as its ``version``), not ""."""
    return {**fields, "sha": fields.get("sha") or None, "date": fields.get("date") or None}


def _fields(found: MemoryHistory, spec: str) -> dict[str, Any]:
    if spec.strip().lower() == "working":
        return _uncommitted(_history.working_fields(found))
    whole = _history.pick(found.versions, spec).to_dict()
    return {k: whole[k] for k in _FIELDS}


def _diff_specs(found: MemoryHistory, old: str | None, new: str | None) -> tuple[str, str]:
    """The two versions ``version_diff`` compares when one or both are not given."""
    if old is None and new is None:
        if found.uncommitted:
            return "latest", "working"
        n = len(found.versions)
        return (f"v{n - 1}", f"v{n}") if n >= 2 else ("v1", "v1")
    return (old or "latest", new or "latest")


def _by_id(mem: Memory, memory_id: str) -> MemoryHistory:
    """The versions whose file has ``memory_id``: at the path its file is at now, else at the paths
    the newest commit that added or removed its id line touched (a file gone, or moved, since)."""
    try:
        on_disk: str | None = mem.get(memory_id).path
    except NotFoundError:
        on_disk = None
    found = _lineage.lineage(mem.ledger, on_disk, memory_id) if on_disk else None
    if found is None or not found.versions:
        paths = mem.ledger.paths_of_id(memory_id)
        if not paths and on_disk is None:
            raise NotFoundError(f"no memory with id {memory_id} (not on disk, not in git history)")
        # A path whose file went on as another memory (a copy given a new id, a swap) is the last
        # place to look: the memory itself went on elsewhere.
        candidates = [c for c in (_lineage.lineage(mem.ledger, p, memory_id) for p in paths) if c.versions]
        for c in [c for c in candidates if c.whole] or candidates:
            if (
                found is None
                or not found.versions
                or mem.ledger.is_ancestor(found.versions[-1].sha, c.versions[-1].sha)
            ):
                found = c
    if found is None or not found.versions:
        raise NotFoundError(
            f"{memory_id} ({on_disk or 'not on disk'}) has no committed versions yet (commit it, or run `remnic sync run`)"
        )
    working = on_disk if on_disk is not None else _unreadable_at(mem, found.versions[-1])
    return MemoryHistory.of(mem.ledger, found.versions, found.memory_id, working)


def _unreadable_at(mem: Memory, latest: Version) -> str | None:
    """Its last path when the file there is still this memory's but its id cannot be read (a broken
    edit): that file is its working state. None when nothing is there or another memory is."""
    if latest.deleted:
        return None
    try:
        text = mem.files.read_text(latest.path)
    except (FileNotFoundError, OSError):
        return None
    try:
        return latest.path if own_id(parse_file(text, latest.path).frontmatter) is None else None
    except (MemoryFormatError, RemnicError):
        return latest.path
