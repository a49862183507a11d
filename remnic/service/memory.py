"""The one service layer every surface (CLI, HTTP, MCP, hooks, Python) calls: the ``Memory`` facade.

Every write goes through one transaction (:mod:`remnic.repo.transaction`): lock →
validate → atomic write → commit, rolled back on failure, group-committed with
concurrent writes of the same kind; the search index follows after the commit
(:mod:`.indexing`). Reads, history, health, sync and recall are thin here and live
in their own modules.
"""

from __future__ import annotations

import atexit
import builtins
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import MARKER_FILE, REPO_CONFIG_FILE, Settings, ensure_state_dir, find_memory_repo, load_settings
from remnic.errors import FieldProblem, NotFoundError, RemnicError, UsageError, ValidationError
from remnic.lazy import LazyModule
from remnic.memfile.model import DEFAULT_NAMESPACE, ID_RE, MemoryRecord, check_relpath
from remnic.memfile.paths import case_twin
from remnic.memfile.schema import CATEGORIES, nfc_id
from remnic.repo import journal as _journal
from remnic.repo.files import MemoryStore
from remnic.repo.ledger import Ledger
from remnic.repo.messages import trailers_for
from remnic.repo.transaction import GroupCommitter

from . import arguments as _check
from . import browse as _browse
from .agents import AgentOps
from .conversations import ConversationOps
from .history_ops import HistoryOps
from .housekeeping import HousekeepingOps
from .indexing import IndexQueue, apply_batch
from .recall_ops import RecallOps
from .spaces import SpaceOps
from .state import open_state
from .vectors import VectorOps

if TYPE_CHECKING:
    from remnic.index.search import SearchIndex
    from remnic.sync import base as _sync_base

    from . import adopt as _adopt
    from . import review as _review
    from . import writes as _writes
    from .importing import ImportResult
    from .writes import WriteResult
else:  # each loads with the first call that needs it: a command that opens the memory to recall needs none
    _adopt, _review, _writes = (LazyModule(f"remnic.service.{m}") for m in ("adopt", "review", "writes"))
    _sync_base = LazyModule("remnic.sync.base")

TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "memory-template"
Progress = Callable[[int, int], None]
_OPEN: weakref.WeakSet[Memory] = weakref.WeakSet()


def template_dir() -> Path:
    packaged = Path(__file__).resolve().parents[1] / "_memory_template"
    return packaged if packaged.is_dir() else TEMPLATE_DIR


@atexit.register
def _settle_open_handles() -> None:
    """Index updates still queued when the interpreter exits are finished, so the index is never left behind."""
    for memory in list(_OPEN):
        memory.settle_index()


def missing_dir_note(root: Path, origin: str) -> str:
    """Why the memory directory is missing, and — when only the built-in default named it (the command
    ran outside any memory repository) — the ways to name the right one, so nobody creates a second,
    empty repository by following `remnic init`."""
    if origin != "default":
        return f"memory directory {root} does not exist (create it with `remnic init {root}`; found via {origin})"
    return (
        f"memory directory {root} does not exist (the default: this directory is in no memory repository, "
        "and no --memory-dir, REMNIC_MEMORY_DIR, active space or memoryDir names one). To use yours: run the "
        "command from it, pass --memory-dir DIR, set REMNIC_MEMORY_DIR=DIR, register it once with `remnic space "
        'create NAME --path DIR --switch`, or set "memoryDir" in ~/.config/remnic/config.json; '
        f"to start a new, empty one at the default: `remnic init {root}`"
    )


class Memory(RecallOps, AgentOps, ConversationOps, HistoryOps, HousekeepingOps, SpaceOps, VectorOps):
    """A memory repository: ``Memory.open(path)`` or ``Memory.init(path)``."""

    def __init__(self, settings: Settings) -> None:
        if not isinstance(settings, Settings):  # Memory("~/notes"): say how to open a directory
            raise TypeError(f"Memory() takes Settings, not {type(settings).__name__}: use Memory.open(path)")
        self.settings = settings
        self.root = settings.memory_dir
        self.ledger = Ledger(
            self.root,
            settings.store.git_retry_s,
            run_hooks=settings.git.run_hooks,
            split_index=settings.git.split_index,
        )
        self.files = MemoryStore(settings, list_files=self.ledger.worktree_files)
        ensure_state_dir(self.root)
        open_state(self.root, settings.state.commit)  # state/: ready, and anything durable moved out of .remnic/
        self._index: Any = None
        self._index_deferred = False
        self._build_missing_index = True
        # A deferred handle still builds the index its write finds missing, so a new repository is
        # healthy (status, doctor) from its first write; later writes leave it to the next recall.
        self.indexer = IndexQueue(
            lambda *batch: (
                None
                if self._index_deferred and (self.has_index() or not self._build_missing_index)
                else apply_batch(self, *batch)
            )
        )
        # remnic's own commits move the sync base along, so a sync sees only what was edited by hand.
        root, parents = self.root, self.ledger.parents
        self.committer = GroupCommitter(
            self.files,
            self.ledger,
            lambda key, outcomes: _writes.describe(key, outcomes),
            self.indexer.submit,
            on_commit=lambda outcome, staged: _sync_base.follow_own_commit(root, parents, outcome, staged),
        )
        self.background_work = False  # set by long-running processes (server, watcher)
        self._consolidation: threading.Thread | None = None  # the background pass after flushes …
        self._consolidate_again = False  # … and whether flushes landed while it ran
        self._consolidation_lock = threading.Lock()
        self._tended_head: str | None = None  # HEAD at the last tend_observations
        self._closed = False  # closing: no new background pass starts
        self._released = False  # closed: every public method refuses (see arguments.guard)
        self._edit_feed: Any = None
        self._recalls = 0
        _OPEN.add(self)
        if any(_journal.pending(settings.state_dir)) or self.ledger.index_repair_pending():  # says a bad .remnic
            with self.committer.exclusive():  # a crashed writer's work is finished or undone first
                pass

    # --- opening ---

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> Memory:
        """The memory repository at ``path`` (None: found as git finds a repository; see the README)."""
        given = _check.where(path) is not None and settings is None
        settings = settings or load_settings(path)
        root = settings.memory_dir
        # Say where the directory came from in the caller's terms: a Python caller never used a CLI flag.
        origin = "the path given to Memory.open" if given else settings.origins.get("memoryDir", "default")
        if root.exists() and not root.is_dir():
            raise NotFoundError(f"{root} is a file, not a memory directory (from {origin})")
        if not root.is_dir():
            raise NotFoundError(missing_dir_note(root, origin))
        if not (root / ".git").exists():
            outer = find_memory_repo(Path(os.path.realpath(root)).parent)
            if outer is not None:
                raise NotFoundError(_check.subdirectory_note(root, outer))
            raise NotFoundError(f"{root} is not a git repository (create one with `remnic init {root}`)")
        return cls(settings)

    @classmethod
    def init(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        settings: Settings | None = None,
        adopt: Sequence[str] = (),
    ) -> Memory:
        """Create (or complete) a memory repository from memory-template/; never overwrites a file.

        In a folder that already holds notes only the memory folders are memories; ``adopt`` adds
        glob patterns of further notes (``notes/**``, ``**``) to ``store.include`` in the
        repository's remnic.config.json. Nothing is adopted until ``sync run``."""
        settings = settings or load_settings(_check.where(path))
        root = settings.memory_dir
        if root.exists() and not root.is_dir():
            raise UsageError(f"{root} is a file, not a directory; choose another path for the memory repository")
        outer = None if (root / MARKER_FILE).is_file() else find_memory_repo(Path(os.path.realpath(root)).parent)
        if outer is not None:  # its files would be the outer repository's notes, its .git a nested repo
            raise UsageError(
                f"{root} is inside the memory repository {outer}; "
                "a memory repository cannot be created inside another: choose a directory outside it"
            )
        _check.not_a_string(adopt, "adopt")
        patterns = [p.strip() for p in adopt if p.strip()]
        if patterns:
            include = list(dict.fromkeys([*settings.store.include, *patterns]))
            settings.store = replace(settings.store, include=include)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValidationError.single("path", f"cannot create {root}: {exc.strerror or exc}") from None
        Ledger.init_repo(root)
        memory = cls(settings)
        template = template_dir()
        with memory.committer.exclusive() as tx:
            present = os.listdir(root)
            for src in sorted(template.rglob("*")):
                if src.is_dir() or "__pycache__" in src.parts:
                    continue
                rel = src.relative_to(template).as_posix()
                if not (root / rel).exists() and case_twin(rel, present) is None:  # a vault's Decisions/ is decisions/
                    tx.put(rel, src.read_bytes())
            if patterns:
                tx.put(REPO_CONFIG_FILE, _adopt.with_include(tx.read_bytes(REPO_CONFIG_FILE), patterns, root))
            if tx.staged:
                tx.commit("remnic init: memory repository", trailers_for("init", [], DEFAULT_NAMESPACE, "cli"))
        memory.install_merge_driver()  # the template's .gitattributes names it; git config says how to run it
        if not memory.has_index() and next(iter(memory.files.iter_paths()), None) is None:
            # Nothing to embed yet, so the empty index costs no model: a new repository is healthy at
            # once, and its first write updates the index instead of re-reading every file it wrote.
            try:
                memory.index.rebuild(memory.files, memory.ledger, reason="init")
            except Exception as exc:  # noqa: BLE001 - e.g. a model setting that cannot load: recall says so
                logging.getLogger("remnic").warning("no index built at init: %s", exc)
        return memory

    def adoption(self) -> dict[str, Any]:
        """What ``sync run`` would adopt here: how many memory files, and every other file left alone."""
        return _adopt.summary(self.files, self.settings.store.include)

    # --- the index (built lazily: commands that never recall never load it) ---

    @property
    def index(self) -> SearchIndex:
        if self._released:  # a closed handle must not reopen the index (and its files) lazily
            raise RemnicError(_check.CLOSED_MESSAGE)
        if self._index is None:
            from remnic.index.search import SearchIndex

            self._index = SearchIndex(self.settings)
        return self._index

    def defer_index(self, *, build_missing: bool = True) -> None:
        """Leave the index updates of this handle's writes to the next recall, which catches the index
        up from git: a one-shot command's write then never loads the embedding model. A write that
        finds no index at all still builds it (``build_missing``), so a new repository is healthy
        from its first write; a caller that indexes itself (:meth:`refresh_index`) turns that off."""
        self._index_deferred = True
        self._build_missing_index = build_missing

    def has_index(self) -> bool:
        """Whether a search index has been built (checking never builds one)."""
        return self._index_if_built() is not None

    def index_health(self) -> dict[str, Any]:
        """The index's state (ok, missing, stale, …) and what it reflects, as a dict."""
        return self._index_health()

    def head(self) -> str | None:
        """The commit HEAD points at (None before the first)."""
        return self.ledger.head()

    @property
    def git_dir(self) -> Path:
        return Path(self.ledger.repo.git_dir)

    def settle_index(self) -> None:
        """Wait for this handle's queued index updates (a recall reads its own writes)."""
        self.indexer.drain()

    @property
    def edit_feed(self) -> Any:
        """The file-event feed a recall uses to skip asking git when nothing was edited, if open."""
        return self._edit_feed or None

    def edit_feed_for_recall(self) -> Any:
        """The feed for this recall (:mod:`.freshness`): opened by a handle's second recall (or at once in a
        long-running process), so one-shot commands never pay for it; None when there is none."""
        self._recalls += 1
        if self._edit_feed is None and (self._recalls > 1 or self.background_work):
            from .freshness import EditFeed

            self._edit_feed = EditFeed.open(self.root) or False
        return self._edit_feed or None

    def close(self) -> None:
        if self._released:
            return
        with self._consolidation_lock:
            self._closed = True
            running = self._consolidation
        if running is not None:
            running.join()  # a pass under way finishes its commit before the handle goes
        self.close_spaces()
        if self._edit_feed:
            self._edit_feed.close()
        self._edit_feed = None
        self.indexer.close()
        if self._index is not None:
            self._index.close()
            self._index = None
        _OPEN.discard(self)
        self._released = True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run: a closed Memory refuses every call."""
        return self._released

    def __enter__(self) -> Memory:
        if self._released:
            raise RemnicError(_check.CLOSED_MESSAGE)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading ---

    def get(self, memory_id: str) -> MemoryRecord:
        """The memory with this id (in NFC, as ids compare) or at this memory file path; the index's catalog
        says where to look (the file is still read and checked), else every file's header is scanned."""
        if self.files.paths.is_markdown(_check.reference(memory_id, "memory_id")):
            return self.files.read(self.resolve(memory_id))
        memory_id = nfc_id(memory_id)
        hint = next((r.path for r in self.indexer.pending_records() if r.id == memory_id), None)
        if hint is None:
            index = self._index_if_built()
            try:
                hint = index.path_of(memory_id) if index is not None else None
            except Exception:  # noqa: BLE001 - a broken catalog only costs the fast path
                hint = None
        return self.files.find(memory_id, hint)

    def find(self, id_or_path: str) -> MemoryRecord:
        """The memory named by an id or by its file path (``facts/x.md``): the same as :meth:`get`."""
        return self.get(id_or_path)

    def memory_id(self, id_or_path: str) -> str:
        """The id of the memory named by an id or a memory file path: how every write that names a
        memory (update, forget, review, feedback) accepts either, as reads do."""
        if self.files.paths.is_markdown(_check.reference(id_or_path, "id_or_path")):
            return self.get(id_or_path).id
        return nfc_id(id_or_path)

    def file_text(self, path: str) -> str:
        """A memory file's text exactly as on disk."""
        rel = check_relpath(path, field="path", root=self.root)
        try:
            return self.files.read_text(rel)
        except FileNotFoundError:
            raise NotFoundError(f"no file at {rel}") from None

    def resolve(self, id_or_path: str) -> str:
        """The repo-relative path for a memory id or a file path (gone from disk; typed NFC for an NFD name)."""
        if not id_or_path.strip():
            raise UsageError("an id or a memory file path is required")
        if self.names_path(id_or_path):
            rel = _browse.as_on_disk(self.root, check_relpath(id_or_path, field="id-or-path", root=self.root))
            reason = self.files.paths.skip_reason(rel)
            if reason is not None:
                raise UsageError(f"{rel} is not a memory file: {reason}")
            if os.path.lexists(self.root / rel) or self.ledger.history(rel):
                return rel
            raise NotFoundError(f"no memory file at {rel} (not on disk, not in git history)")
        try:
            return self.get(id_or_path).path
        except NotFoundError:
            gone = self.ledger.paths_of_id(id_or_path)
            if not gone:
                raise
            return gone[0]

    def names_path(self, id_or_path: str) -> bool:
        """Whether ``id_or_path`` is taken as a file path rather than a memory id."""
        return (
            self.files.paths.is_markdown(id_or_path)
            or "/" in id_or_path
            or (not ID_RE.match(id_or_path) or os.path.lexists(self.root / id_or_path))
        )

    def list(
        self,
        *,
        category: str | None = None,
        status: str | None = None,
        tag: str | None = None,
        namespace: str | None = None,
    ) -> builtins.list[MemoryRecord]:
        filters = _browse.Filters.check(category=category, status=status, tag=tag, namespace=namespace)
        return [record for record in self.files.scan().records if filters.admit(record)]

    # --- writing: each one plan for the write transaction (see :mod:`.writes`) ---

    def store(
        self,
        content: str,
        *,
        category: str | None = None,
        tags: Sequence[str] | str | None = None,
        confidence: float | None = None,
        importance: float | None = None,
        namespace: str | None = None,
        source: str = "api",
        extra: Mapping[str, Any] | None = None,
        dry_run: bool = False,
        dedupe: bool = True,
    ) -> WriteResult:
        """Validate, write and commit one memory; an exact duplicate of an active one comes back unchanged.
        ``category`` defaults to fact; with ``extra={"supersedes": id}``, category, tags and importance
        left None are the superseded memory's."""
        if isinstance(category, str) and category not in CATEGORIES:  # "" too: the CLI refuses it alike
            raise ValidationError.single("category", f"unknown category {category!r}", options=CATEGORIES)
        return _writes.store(
            self,
            content,
            category=category,
            tags=tags,
            confidence=confidence,
            importance=importance,
            namespace=namespace,
            source=source,
            extra=self._with_supersedes_id(_check.optional_mapping(extra, "extra")),
            dry_run=dry_run,
            dedupe=dedupe,
        )

    def check_import(
        self,
        items: Iterable[Any],
        *,
        line_numbers: Sequence[int] | None = None,
        namespace: str | None = None,
        source: str = "import",
    ) -> builtins.list[FieldProblem]:
        """Every problem with an import batch, each naming its line and field; writes nothing."""
        from .portable import prepare_import

        batch, numbers = _check.import_items(items, line_numbers)
        return prepare_import(self, batch, numbers, namespace, source).problems

    def import_records(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        source: str = "import",
        namespace: str | None = None,
        line_numbers: Sequence[int] | None = None,
        progress: Progress | None = None,
    ) -> ImportResult:
        """Validate every item first; write nothing unless all are valid; then one commit. Exact duplicates
        are skipped, as ``remnic import`` skips them (``result.skipped`` names each line and why): a line
        restoring a file that is here byte for byte, a line whose text a memory here has, a line
        repeating an earlier one's text; so an export imports again and restores only what is gone."""
        from .importing import import_batch

        batch, numbers = _check.import_items(items, line_numbers)
        return import_batch(self, batch, line_numbers=numbers, namespace=namespace, source=source, progress=progress)

    def update(
        self,
        memory_id: str,
        changes: Mapping[str, Any],
        *,
        operation: str = "update",
        source: str = "api",
        extra_trailers: Mapping[str, str] | None = None,
        content: str | None = None,
    ) -> WriteResult:
        """Change frontmatter keys (None removes a key) and, with ``content``, the text. Only the changed
        frontmatter lines are rewritten: comments, key order, BOM and line endings stay as they are; a
        new category moves the file to that category's folder; ``supersedes`` marks the memory it
        names superseded by this one. ``operation`` is one of update, forget, review, feedback, citation;
        ``extra_trailers`` keys are git trailer tokens (letters, digits, hyphens), written ``Remnic-<key>``;
        ``tags`` are held to store's rule (strings, numbers made strings)."""
        changes = _check.changes_tags(_check.mapping(changes, "changes"))
        return _writes.update(
            self,
            self.memory_id(memory_id),
            self._with_supersedes_id(changes) or {},
            operation=_check.operation(operation),
            source=source,
            extra_trailers=_check.trailers(extra_trailers),
            content=content,
        )

    def _with_supersedes_id(self, fields: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """``supersedes`` may name the memory by its file path; the file records its id."""
        named = fields.get("supersedes") if fields else None
        if fields is None or not isinstance(named, str) or not self.files.paths.is_markdown(named):
            return fields
        return {**fields, "supersedes": self.memory_id(named)}

    def forget(self, memory_id: str, reason: str | None = None, *, source: str = "api") -> WriteResult:
        """Mark a memory forgotten (status + forgottenAt); its text stays in the file and in history."""
        return _writes.forget(self, self.memory_id(memory_id), reason, source=source)

    def find_duplicate(
        self, namespace: str, digest: str, tx: Any = None, lookup: Any = None, status: str = "active"
    ) -> MemoryRecord | None:
        """A memory in ``namespace`` with this content hash and status (see :func:`.duplicates.find_duplicate`)."""
        from .duplicates import find_duplicate

        return find_duplicate(self, namespace, digest, tx, lookup, status)

    def _index_if_built(self) -> Any:
        """The index when one exists on disk (a duplicate check never builds one)."""
        from remnic.index.manifest import index_root, read_current

        return self.index if read_current(index_root(self.settings.state_dir)) is not None else None

    # --- browsing, review queue, observation archive (used by the server; thin enough for the CLI) ---

    def search(
        self,
        query: str | None = None,
        *,
        category: str | None = None,
        status: str | None = None,
        tag: str | None = None,
        namespace: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[builtins.list[MemoryRecord], int]:
        """A filtered, paged browse, newest first: (page, total matches); see
        :func:`remnic.service.browse.search`."""
        return _browse.search(
            self.files,
            query,
            category=category,
            status=status,
            tag=tag,
            namespace=namespace,
            limit=limit,
            offset=offset,
        )

    def review_disposition(
        self, memory_id: str, status: str, *, reason_code: str | None = None, source: str = "api"
    ) -> _review.ReviewResult:
        """A person's word on a memory in the review queue: its new status (approve = active, dismiss =
        rejected, flag = quarantined), when and why, as one commit; see :mod:`.review`."""
        return _review.dispose(self, self.memory_id(memory_id), status, reason_code, source=source)

    def review_queue(self, *, namespace: str | None = None, limit: int = 50) -> builtins.list[MemoryRecord]:
        """Memories waiting for a person: status pending_review or quarantined, newest first."""
        return self.review_page(namespace=namespace, limit=limit)[0]

    def review_page(
        self,
        *,
        namespace: str | None = None,
        limit: int = 50,
        offset: int = 0,
        readable: Callable[[str], bool] | None = None,
    ) -> tuple[builtins.list[MemoryRecord], int]:
        """A page of :meth:`review_queue` from ``offset`` and how many wait in all (``readable(namespace)``:
        only those count)."""
        return _review.queue_page(self, namespace=namespace, limit=limit, offset=offset, readable=readable)

    # --- the durable state folder ---

    @property
    def durable_dir(self) -> Path:
        """``state/``: what no rebuild can recreate (set up when the repository is opened, see :mod:`.state`)."""
        return self.settings.durable_dir


# A closed handle refuses every call, and text arguments are text (see arguments.guard).
_check.guard(Memory, exempt={"close", "settle_index"})
