"""Memory spaces: named memory repositories (personal, project, team) shared through git remotes.

The registry of spaces is the user's own file (:mod:`remnic.config.spaces`); the
functions here create, clone, list, switch and delete spaces, and :class:`SpaceOps`
gives every ``Memory`` its space operations: pull and push (:mod:`.pull`), the merge
driver's installation, the merge state for doctor and sync, share and promote
(:mod:`.sharing`), and recall across the read-only spaces.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import MARKER_FILE, load_settings
from remnic.config.spaces import (
    Registry,
    Space,
    check_kind,
    check_name,
    load_registry,
    save_registry,
)
from remnic.errors import LedgerError, NotFoundError, UsageError, ValidationError
from remnic.memfile.model import DEFAULT_NAMESPACE
from remnic.repo import remote as _remote
from remnic.repo.messages import trailers_for
from remnic.repo.pullmark import PULL_MARKER, STUCK_S, cut_merge

if TYPE_CHECKING:  # pull, push and sharing load when one runs: every Memory has these methods
    from . import pull as _pull
    from .memory import Memory
    from .writes import WriteResult

ATTRIBUTES = ".gitattributes"


def default_space_path(name: str) -> Path:
    """Where a space lives when no path is given: ``~/.remnic/spaces/<name>``."""
    return Path(os.environ.get("HOME") or Path.home()) / ".remnic" / "spaces" / name


def _open(path: Path) -> Memory:
    from .memory import Memory

    return Memory.open(settings=load_settings(path))


# --- the registry ---


def list_spaces() -> dict[str, Any]:
    """Every registered space, which one is active, and whether its repository is there."""
    registry = load_registry()
    rows = []
    for name, space in sorted(registry.spaces.items()):
        row = space.to_dict()
        row["active"] = name == registry.active
        row["exists"] = (space.path / ".git").exists()
        rows.append(row)
    return {"registry": str(registry.path), "active": registry.active, "spaces": rows}


def create_space(
    name: str,
    path: str | os.PathLike[str] | None = None,
    *,
    kind: str = "personal",
    remote: str | None = None,
    read_only: bool = False,
    activate: bool = False,
) -> dict[str, Any]:
    """Register a space: an existing memory repository at ``path``, or a new one made there; the merge
    driver is installed and ``remote`` becomes its ``origin``."""
    check_name(name)
    check_kind(kind)
    registry = load_registry()
    if name in registry.spaces:
        raise UsageError(f"a space named {name!r} already exists ({registry.spaces[name].path}); choose another name")
    root = Path(os.path.abspath(Path(path).expanduser())) if path else default_space_path(name)
    _not_taken(registry, root)
    from . import space_safety as _safety
    from .memory import Memory

    existed = (root / MARKER_FILE).is_file() and (root / ".git").exists()
    # Listed before init lays the template in, so only what the user had there is reported.
    before, capped = ([], False) if existed else _safety.files_in(root)
    memory = Memory.open(settings=load_settings(root)) if existed else Memory.init(settings=load_settings(root))
    with memory:
        driver = memory.install_merge_driver()
        if remote:
            _set_origin(memory, remote)
        foreign = [p for p in before if not memory.files.paths.is_memory(p)]
    space = Space(name, root, kind, remote, read_only)
    registry = registry.with_space(space)
    save_registry(registry.activate(name) if activate else registry)
    out = {**space.to_dict(), "created": not existed, "active": activate, "mergeDriver": driver}
    out["existingFiles"] = {"count": len(foreign), "more": capped, "paths": foreign[: _safety.LISTED]}
    if foreign:
        out["warnings"] = [{"field": "path", "message": _adopted_warning(name, root, len(foreign), capped)}]
    return out


def _adopted_warning(name: str, root: Path, count: int, capped: bool) -> str:
    what = (
        "1 file that is not a memory"
        if count == 1 and not capped
        else f"{count}{'+' if capped else ''} files that are not memories"
    )
    return (
        f"{root} already held {what}; the memory repository was made around what was there (remnic leaves those files "
        f"as they are). If you meant another folder, `remnic space delete {name}` forgets this one"
    )


def _not_taken(registry: Registry, root: Path) -> None:
    other = registry.named_for(root)
    if other is not None:
        raise UsageError(f"{root} is already the space {other.name!r}")


def _set_origin(memory: Memory, url: str) -> None:
    args = (
        ["remote", "set-url", "origin", url]
        if "origin" in _remote.remotes(memory.ledger)
        else ["remote", "add", "origin", url]
    )
    result = _remote.run_git(memory.root, args)
    if not result.ok:
        raise LedgerError(f"git remote {args[1]} origin failed: {result.err.strip()}")


def _name_from_url(url: str) -> str:
    tail = re.split(r"[/:]", url.rstrip("/"))[-1]
    tail = tail[:-4] if tail.endswith(".git") else tail
    name = re.sub(r"[^a-z0-9_-]+", "-", tail.lower()).strip("-_")[:64]
    return name or "space"


def clone_space(
    url: str,
    directory: str | os.PathLike[str] | None = None,
    *,
    name: str | None = None,
    kind: str = "team",
    read_only: bool = False,
    timeout_s: float = 300.0,
) -> dict[str, Any]:
    """``git clone`` a space, make it a memory repository if it is not one yet, install the merge
    driver, build its index and register it."""
    name = check_name(name or _name_from_url(url))
    check_kind(kind)
    registry = load_registry()
    if name in registry.spaces:
        raise UsageError(f"a space named {name!r} already exists ({registry.spaces[name].path}); pass --name")
    root = Path(os.path.abspath(Path(directory).expanduser())) if directory else default_space_path(name)
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"{root} already exists and is not empty; choose another DIR")
    _not_taken(registry, root)
    cloned = _remote.clone(url, root, timeout_s)
    if not cloned.ok:
        raise LedgerError(f"git clone {url} failed: {cloned.err.strip()}")
    from .memory import Memory

    settings = load_settings(root)
    memory = Memory.open(settings=settings) if (root / MARKER_FILE).is_file() else Memory.init(settings=settings)
    with memory:
        driver = memory.install_merge_driver()
        report = memory.sync(commit=False, normalize=False, source="space")
        head = memory.head()
    space = Space(name, root, kind, url, read_only)
    save_registry(registry.with_space(space))
    return {**space.to_dict(), "head": head, "indexed": report.indexed, "mergeDriver": driver}


def switch_space(name: str | None) -> dict[str, Any]:
    """Make ``name`` the active space (None: no active space)."""
    registry = load_registry().activate(name)
    save_registry(registry)
    space = registry.spaces.get(name) if name else None
    return {"active": name, "path": str(space.path) if space else None}


def delete_space(name: str, *, purge: bool = False, force: bool = False) -> dict[str, Any]:
    """Forget a space; its files stay unless ``purge`` (which removes its whole directory), and
    ``purge`` refuses while the folder holds work git has nowhere else, unless ``force``."""
    registry = load_registry()
    space = registry.get(name)
    files = _count_files(space.path)
    out = {**space.to_dict(), "files": files, "purged": False, "forced": False}
    if purge and space.path.exists():
        if not ((space.path / MARKER_FILE).is_file() and (space.path / ".git").exists()):
            raise UsageError(
                f"{space.path} is not a memory repository (no {MARKER_FILE} and .git); "
                "not removing it: delete it yourself if you mean to"
            )
        if not force:
            from . import space_safety as _safety

            risk = _safety.purge_risk(space.path)
            if risk:
                raise _safety.refuse_purge(name, space.path, risk)
        out["forced"] = force
        shutil.rmtree(space.path)
        out["purged"] = True
    save_registry(registry.without(name))
    return out


def _count_files(root: Path) -> int:
    if not root.is_dir():
        return 0
    return sum(len(files) for _dir, _subdirs, files in os.walk(root))


# --- recall across spaces ---


def span_recall(mem: Memory, result: Any, query: str, options: dict[str, Any]) -> Any:
    """``result`` with the read-only spaces' hits merged in, each hit naming its space."""
    from remnic.recall.spaces import merge_space_results

    if not mem.settings.spaces.recall_read_only:
        return result
    try:
        registry = load_registry()
    except ValidationError:
        return result
    own = registry.named_for(mem.root)
    others = [
        s
        for s in registry.spaces.values()
        if s.read_only and (own is None or s.name != own.name) and (s.path / ".git").exists()
    ]
    if own is None and not others:
        return result
    found = []
    for space in sorted(others, key=lambda s: s.name):
        handle = mem.space_handle(space)
        found.append((space.name, handle.recall(query, spaces=False, audit=False, source="space", **options)))
    return merge_space_results(result, own.name if own else None, found)


class SpaceOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    _space_handles: dict[str, Memory]

    def space_name(self: Memory) -> str | None:
        """This repository's name in the user's spaces registry (None when it is not registered)."""
        try:
            space = load_registry().named_for(self.root)
        except ValidationError:
            return None
        return space.name if space else None

    def read_only_space(self: Memory) -> str | None:
        """This repository's space name when the registry marks it read-only (looked up once per handle)."""
        if "_read_only_space" not in self.__dict__:
            try:
                space = load_registry().named_for(self.root)
            except ValidationError:
                space = None
            self.__dict__["_read_only_space"] = space.name if space is not None and space.read_only else None
        return self.__dict__["_read_only_space"]

    def space_handle(self: Memory, space: Space) -> Memory:
        """An open handle on another space, kept for this handle's life (recall reuses its index)."""
        handles = self.__dict__.setdefault("_space_handles", {})
        if space.name not in handles:
            handles[space.name] = _open(space.path)
        return handles[space.name]

    def close_spaces(self: Memory) -> None:
        for handle in self.__dict__.pop("_space_handles", {}).values():
            handle.close()

    def space_pull(self: Memory, remote: str | None = None, *, allow_unrelated: bool = False) -> _pull.PullReport:
        """Fetch and merge the remote, commit conflict copies, index what changed (:func:`.pull.pull`);
        a remote branch sharing no history with this one is refused unless ``allow_unrelated``."""
        from . import pull as _pull

        waiting = self.vectors_pending()[0]
        try:
            report = _pull.pull(self, remote, allow_unrelated=allow_unrelated)
        finally:  # also after a refusal: the hand edits it committed first keep their vectors
            started = time.perf_counter()
            behind = _pull.embed_deferred(self, waiting)  # the write lock is released: writers go on meanwhile
        report.vectors_behind = behind
        report.phases_ms["vectors"] = (time.perf_counter() - started) * 1000
        report.elapsed_ms += report.phases_ms["vectors"]
        return report

    def space_push(self: Memory, remote: str | None = None) -> dict[str, Any]:
        """Commit hand edits and push; :class:`~remnic.errors.RemoteMovedError` when the remote moved,
        :class:`~remnic.errors.RepoBusyError` during a merge, and the errors of :mod:`remnic.repo.remote`
        when the remote cannot be reached or refuses the push itself."""
        own = self.read_only_space()
        if own is not None:
            raise UsageError(f"space {own!r} is read-only; it is pulled, never pushed")
        from . import pushing as _pushing

        return _pushing.push(self, remote)

    def install_merge_driver(self: Memory, python: str | None = None) -> dict[str, Any]:
        """Name remnic's merge driver for markdown files in ``.gitattributes`` (committed) and point
        ``merge.remnic.driver`` in the repository's git config at this Python's remnic."""
        changed = _remote.install_driver(self.ledger, python or sys.executable)
        commit = None
        with self.committer.exclusive() as tx:
            current = tx.read_bytes(ATTRIBUTES)
            text = _remote.with_attributes(current.decode("utf-8", "replace") if current else "")
            if text is not None and self.ledger.in_progress() is None:
                tx.put(ATTRIBUTES, text.encode("utf-8"))
                commit = tx.commit(
                    "remnic: merge memory files key by key",
                    trailers_for("merge-driver", [], DEFAULT_NAMESPACE, "cli"),
                ).sha
        driver = _remote.configured_driver(self.ledger)
        # configured: the state after this call (already set up counts); changed: whether this call set it.
        return {"configured": driver is not None, "changed": changed, "driver": driver, "attributesCommit": commit}

    def merge_state(self: Memory) -> dict[str, Any]:
        """A merge in progress (and what is unmerged), conflict copies not committed yet, the driver."""
        from . import pull as _pull

        attributes = self.root / ATTRIBUTES
        has_attributes = (
            attributes.is_file() and _remote.with_attributes(attributes.read_text("utf-8", "replace")) is None
        )
        return {
            "inProgress": self.ledger.in_progress(),
            "unmerged": sorted(_remote.unmerged(self.ledger)),
            "pendingCopies": bool(_pull.pending_copies(self)),
            "driver": _remote.configured_driver(self.ledger),
            "attributes": has_attributes,
        }

    def merge_check(self: Memory) -> dict[str, Any]:
        """doctor's line on merging: a merge in progress (fail), conflict copies not committed (warn),
        the merge driver missing from the git config or .gitattributes (warn)."""
        from .health import stuck_marker

        state = self.merge_state()
        marker = self.git_dir / PULL_MARKER
        stuck = stuck_marker(self.ledger)
        if stuck is not None:  # a marker `remnic space pull` cannot clear: the advice that does
            return {"name": "merge", "status": "fail", "detail": f"sync and writes are paused: {stuck}", **state}
        if state["inProgress"] == "a pull's git merge is still running":
            cut = cut_merge(self.git_dir, self.ledger.head, self.root) or {}
            started = cut.get("started")
            age = time.time() - started if isinstance(started, (int, float)) else 0.0
            detail = (
                f"the git merge of a pull that was killed (pid {cut.get('pid')}, recorded in {marker}) has run "
                f"{age:.0f} s; it commits or stops on its own, and sync and writes wait for it"
            )
            if age < STUCK_S:
                return {"name": "merge", "status": "warn", "detail": detail, **state}
            detail += f"; if it hangs, stop it (`kill {cut.get('pid')}`), then `remnic space pull` clears the marker"
            return {"name": "merge", "status": "fail", "detail": detail, **state}
        if state["inProgress"] == "a pull's merge was cut short":
            detail = (
                f"git was killed in a pull's merge ({marker}), before it committed or wrote MERGE_HEAD: what it "
                "changed in the working tree is part of that merge, not hand edits; sync and writes are paused. "
                "`remnic space pull` puts back what git wrote as HEAD has it and merges again; a file edited since "
                "is kept as it is (the pull refuses and names it). Do not commit these files (`git add`, a commit)"
            )
            return {"name": "merge", "status": "fail", "detail": detail, **state}
        if state["inProgress"] == "a pull was killed before it finished its merge":
            detail = (
                f"git committed a pull's merge, but the pull was killed before its last step ({marker}): a memory "
                "rewritten and moved on both sides may still be two files under one id; sync and writes are "
                "paused until `remnic space pull` finishes it"
            )
            return {"name": "merge", "status": "fail", "detail": detail, **state}
        if state["inProgress"]:
            unmerged = state["unmerged"]
            detail = (
                f"{state['inProgress']}"
                + (f" with {len(unmerged)} unmerged file(s): {', '.join(unmerged[:5])}" if unmerged else "")
                + "; sync is paused: `remnic space pull` finishes it (or `git merge --abort`)"
            )
            return {"name": "merge", "status": "fail", "detail": detail, **state}
        if state["pendingCopies"]:
            detail = "a pull stopped before committing the copies of conflicting memories; `remnic space pull` does it"
            return {"name": "merge", "status": "warn", "detail": detail, **state}
        if not state["driver"] or not state["attributes"]:
            missing = "git config merge.remnic.driver" if not state["driver"] else ".gitattributes"
            detail = f"the memory-file merge driver is not set up ({missing}); run `remnic hooks install`"
            return {"name": "merge", "status": "warn", "detail": detail, **state}
        return {"name": "merge", "status": "ok", "detail": f"no merge in progress; driver: {state['driver']}", **state}

    def finish_merge(self: Memory) -> str | None:
        """Finish (or cleanly abort) a merge an interrupted pull left; None when there was none."""
        from . import pull as _pull

        with self.committer.exclusive():
            return _pull.finish_merge(self)

    def share(
        self: Memory, memory_id: str, to_space: str, *, namespace: str | None = None, source: str = "api"
    ) -> WriteResult:
        """Copy a memory into another space: a new id, provenance naming this space and the memory's
        id, one commit there; refused for secrets and read-only spaces like any write."""
        from . import sharing as _sharing

        return _sharing.copy_to_space(self, memory_id, to_space, namespace=namespace, operation="share", source=source)

    def promote(
        self: Memory,
        memory_id: str,
        *,
        to_space: str | None = None,
        namespace: str | None = None,
        source: str = "api",
    ) -> WriteResult:
        """Promote a memory to a shared place: another space (``to_space``), or this repository's
        ``namespace`` (default ``shared``), as a new memory pointing back at it."""
        from . import sharing as _sharing

        if to_space is None:
            return _sharing.promote_here(self, memory_id, namespace or _sharing.SHARED, source=source)
        return _sharing.copy_to_space(
            self, memory_id, to_space, namespace=namespace, operation="promote", source=source
        )

    def space_audit(self: Memory, since: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Commits since ``since`` (a revision), newest first: who (git author), what (remnic trailers)."""
        from . import sharing as _sharing

        return _sharing.audit(self, since, limit)


def require_space(name: str) -> Space:
    try:
        return load_registry().get(name)
    except NotFoundError as exc:
        raise UsageError(str(exc)) from None
