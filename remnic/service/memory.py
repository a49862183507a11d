"""The one service layer every surface (CLI, HTTP, MCP, Python) calls: the ``Memory`` facade.

Writes follow one path: validate → lock → write the file atomically → commit →
update the index. A failure before the commit removes what was written, so a
caller never leaves a half-written memory behind.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remnic.config import Settings, ensure_state_dir, load_settings
from remnic.errors import (
    FieldProblem,
    MemoryFormatError,
    NotFoundError,
    RemnicError,
    UsageError,
    ValidationError,
)
from remnic.fsio import flush_to_disk
from remnic.memfile.model import (
    DEFAULT_NAMESPACE,
    ID_RE,
    MemoryRecord,
    body_for,
    check_relpath,
    content_hash,
    derived_fields,
    new_id,
    now_iso,
    serialize,
)
from remnic.memfile.validate import (
    PlannedMemory,
    check_content,
    check_namespace,
    check_recall_args,
    check_text,
    file_problems,
    new_frontmatter,
    plan_import,
)
from remnic.observe import archive as _observe
from remnic.repo import history as _history
from remnic.repo.files import MemoryStore, is_memory_path
from remnic.repo.ledger import Ledger, Version, trailers_for

from . import browse as _browse
from . import health as _doctor

TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "memory-template"


def _summary(problems: Sequence[FieldProblem]) -> str:
    """One line naming the first problem (and how many more), so str(error) alone is useful."""
    first = problems[0].describe()
    return first if len(problems) == 1 else f"{first} (and {len(problems) - 1} more problem(s))"


_MISSING = object()
Progress = Callable[[int, int], None]


@dataclass
class ImportResult:
    records: list[MemoryRecord]
    commit: str | None
    duplicates: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": len(self.records),
            "commit": self.commit,
            "duplicates": len(self.duplicates),
            "ids": [r.id for r in self.records],
        }


def template_dir() -> Path:
    packaged = Path(__file__).resolve().parents[1] / "_memory_template"
    return packaged if packaged.is_dir() else TEMPLATE_DIR


class Memory:
    """A memory repository: ``Memory.open(path)`` or ``Memory.init(path)``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = settings.memory_dir
        self.ledger = Ledger(self.root, settings.store.git_retry_s)
        self.files = MemoryStore(settings, list_files=self.ledger.worktree_files)
        ensure_state_dir(self.root)
        self._index: Any = None

    # --- opening ---

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> Memory:
        settings = settings or load_settings(path)
        root = settings.memory_dir
        if not root.is_dir():
            raise NotFoundError(
                f"memory directory {root} does not exist (run `remnic init {root}`; "
                f"found via {settings.origins.get('memoryDir', 'default')})"
            )
        if not (root / ".git").exists():
            raise NotFoundError(f"{root} is not a git repository (run `remnic init {root}`)")
        return cls(settings)

    @classmethod
    def init(cls, path: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> Memory:
        """Create (or complete) a memory repository from memory-template/; never overwrites a file."""
        settings = settings or load_settings(path)
        root = settings.memory_dir
        if root.exists() and not root.is_dir():
            raise UsageError(f"{root} is a file, not a directory; choose another path for the memory repository")
        root.mkdir(parents=True, exist_ok=True)
        Ledger.init_repo(root)
        created: list[str] = []
        template = template_dir()
        for src in sorted(template.rglob("*")):
            if src.is_dir() or "__pycache__" in src.parts:
                continue
            rel = src.relative_to(template).as_posix()
            dest = root / rel
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
                created.append(rel)
        memory = cls(settings)
        if created:
            with memory.files.lock():
                memory.ledger.commit(
                    created, "remnic init: memory repository", trailers_for("init", [], DEFAULT_NAMESPACE, "cli")
                )
        return memory

    # --- the index (built lazily: commands that never recall never load it) ---

    @property
    def index(self) -> Any:
        if self._index is None:
            from remnic.index.search import SearchIndex

            self._index = SearchIndex(self.settings)
        return self._index

    def _index_apply(self, upserts: Sequence[MemoryRecord], removed: Sequence[str], commit: str | None) -> None:
        try:
            self.index.apply(upserts, removed, commit)
        except ImportError:
            return

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading ---

    def _check_writable(self) -> None:
        """Refuse to commit where the commit would be lost or tangled (detached HEAD, a merge underway)."""
        reason = self.ledger.busy_reason()
        if reason is not None:
            raise RemnicError(f"cannot write memories now: {reason}; finish it or check out a branch, then retry")

    def get(self, memory_id: str) -> MemoryRecord:
        """The memory with this id; the index's catalog says where to look (the file is still read and
        checked), and only when it doesn't know is every file's header scanned."""
        index = self._usable_index()
        try:
            hint = index.path_of(memory_id) if index is not None else None
        except Exception:  # noqa: BLE001 - a broken catalog only costs the fast path
            hint = None
        return self.files.find(memory_id, hint)

    def resolve(self, id_or_path: str) -> str:
        """The repo-relative path for a memory id or a memory file path (which may no longer exist)."""
        if not id_or_path.strip():
            raise UsageError("an id or a memory file path is required")
        looks_like_path = (
            id_or_path.endswith(".md")
            or "/" in id_or_path
            or (not ID_RE.match(id_or_path) or os.path.lexists(self.root / id_or_path))
        )
        if looks_like_path:
            rel = check_relpath(id_or_path, field="id-or-path")
            if not is_memory_path(rel):
                raise UsageError(
                    f"{rel} is not a memory file (memory files are *.md outside hidden folders, not README.md)"
                )
            if os.path.lexists(self.root / rel) or self.ledger.history(rel):
                return rel
            raise NotFoundError(f"no memory file at {rel} (not on disk, not in git history)")
        try:
            return self.get(id_or_path).path
        except NotFoundError:
            gone = self.ledger.last_path_of_id(id_or_path)
            if gone is None:
                raise
            return gone

    def list(
        self,
        *,
        category: str | None = None,
        status: str | None = None,
        tag: str | None = None,
        namespace: str | None = None,
    ) -> list[MemoryRecord]:
        problems = check_namespace(namespace)
        if problems:
            raise ValidationError(_summary(problems), problems=problems)
        out = []
        for record in self.files.scan().records:
            if category and record.category != category:
                continue
            if status and record.status != status:
                continue
            if tag and tag not in record.tags:
                continue
            if namespace and record.namespace != namespace:
                continue
            out.append(record)
        return out

    # --- writing ---

    def store(
        self,
        content: str,
        *,
        category: str = "fact",
        tags: Sequence[str] | str | None = None,
        confidence: float | None = None,
        importance: float | None = None,
        namespace: str | None = None,
        source: str = "api",
        extra: Mapping[str, Any] | None = None,
        dry_run: bool = False,
        dedupe: bool = True,
    ) -> MemoryRecord:
        """Validate, write and commit one memory; an exact duplicate returns the existing record."""
        ns = namespace or self.settings.namespaces.default
        problems = check_content(content, self.settings.store) + check_namespace(ns)
        meta, more = new_frontmatter(
            memory_id=new_id(),
            now=now_iso(),
            content=content if isinstance(content, str) else "",
            category=category,
            settings=self.settings.store,
            tags=tags,
            confidence=confidence,
            importance=importance,
            source=source,
            extra=extra,
        )
        problems += more
        if not problems:
            problems += file_problems(meta, content, category, ns, self.settings.store)
        if problems:
            raise ValidationError(_summary(problems), problems=problems)
        with self.files.lock():
            if dedupe:
                existing = self._find_duplicate(ns, meta["contentHash"])
                if existing is not None:
                    existing.duplicate = True
                    return existing
            rel = self.files.allocate_path(category, content, ns)
            record = MemoryRecord(rel, meta, body_for(content), ns)
            if dry_run:
                return record
            self._check_writable()
            self.files.write(rel, serialize(meta, record.body))
            try:
                sha = self.ledger.commit(
                    [rel], f"remnic store: {content.strip()[:60]}", trailers_for("store", [record.id], ns, source)
                )
            except BaseException:
                self.files.delete(rel)
                raise
            self._index_apply([record], [], sha)
            return record

    def check_import(
        self,
        items: Iterable[Any],
        *,
        line_numbers: Sequence[int] | None = None,
        namespace: str | None = None,
        source: str = "import",
    ) -> list[FieldProblem]:
        """Every problem with an import batch, each naming its line and field; writes nothing."""
        return self._plan_import(items, line_numbers, namespace, source)[1]

    def _plan_import(
        self, items: Iterable[Any], line_numbers: Sequence[int] | None, namespace: str | None, source: str
    ) -> tuple[list[PlannedMemory], list[FieldProblem]]:
        return plan_import(
            items,
            line_numbers=line_numbers,
            namespace=namespace or self.settings.namespaces.default,
            source=source,
            store=self.settings.store,
            existing_ids=self.files.ids,
            now=now_iso(),
        )

    def import_records(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        source: str = "import",
        namespace: str | None = None,
        line_numbers: Sequence[int] | None = None,
        progress: Progress | None = None,
    ) -> ImportResult:
        """Validate every item first; write nothing unless all are valid; then one commit."""
        planned, problems = self._plan_import(list(items), line_numbers, namespace, source)
        if problems:
            raise ValidationError(f"{_summary(problems)}; nothing was imported", problems=problems)
        if not planned:
            return ImportResult([], None)

        created: list[str] = []
        records: list[MemoryRecord] = []
        duplicates: list[str] = []
        seen: set[tuple[str, str]] = set()
        with self.files.lock():
            self._check_writable()
            try:
                for i, (meta, content, ns, category) in enumerate(planned):
                    key = (ns, meta["contentHash"])
                    if key in seen or self._find_duplicate(ns, meta["contentHash"]) is not None:
                        duplicates.append(meta["id"])
                        continue
                    seen.add(key)
                    rel = self.files.allocate_path(category, content, ns)
                    record = MemoryRecord(rel, meta, body_for(content), ns)
                    self.files.write(rel, serialize(meta, record.body), durable=False)
                    created.append(rel)
                    records.append(record)
                    if progress:
                        progress(i + 1, len(planned))
                flush_to_disk()
                namespaces = sorted({r.namespace for r in records}) or [DEFAULT_NAMESPACE]
                sha = self.ledger.commit(
                    created,
                    f"remnic import: {len(records)} memories",
                    trailers_for("import", [r.id for r in records], ",".join(namespaces), source),
                )
            except BaseException:
                for rel in created:
                    self.files.delete(rel)
                raise
            self._index_apply(records, [], sha)
        return ImportResult(records, sha, duplicates)

    def update(
        self,
        memory_id: str,
        changes: Mapping[str, Any],
        *,
        operation: str = "update",
        source: str = "api",
        extra_trailers: Mapping[str, str] | None = None,
    ) -> MemoryRecord:
        """Change frontmatter keys (None removes a key). Only the changed frontmatter lines are
        rewritten: the body's bytes, comments, key order, BOM and line endings stay as they are."""
        from remnic.memfile.normalize import render

        with self.files.lock():
            self._check_writable()
            record = self.get(memory_id)
            original = self.files.read_bytes(record.path)
            checked = self.files.check(record.path)
            if checked.problems or checked.record is None:
                raise MemoryFormatError(record.path, checked.problems)
            for key in changes:
                if key in ("id", "contentHash"):
                    raise ValidationError.single(key, "cannot be changed by an update")
            meta = {k: v for k, v in {**record.frontmatter, **changes}.items() if v is not None}
            meta.setdefault("id", record.id)
            meta["updated"] = now_iso()
            meta.update(derived_fields(meta, record.body))
            if any(v is None for v in changes.values()):  # removing a key: the patcher only sets keys
                text = serialize(meta, record.body)
            else:
                text, meta = render(
                    checked, {k: meta[k] for k in meta if meta[k] != record.frontmatter.get(k, _MISSING)}
                )
            after = check_text(text, record.path, self.settings.store)
            if after.problems:
                raise ValidationError(
                    "the update would make the file invalid; nothing was written", problems=after.problems
                )
            self.files.write(record.path, text)
            updated = MemoryRecord(record.path, meta, record.body, record.namespace)
            try:
                sha = self.ledger.commit(
                    [record.path],
                    f"remnic {operation}: {record.content[:60]}",
                    trailers_for(operation, [record.id], record.namespace, source, **(extra_trailers or {})),
                    contents={record.path: text.encode("utf-8")},
                )
            except BaseException:
                self.files.write(record.path, original)
                raise
            self._index_apply([updated], [], sha)
            return updated

    def forget(self, memory_id: str, reason: str | None = None, *, source: str = "api") -> MemoryRecord:
        """Mark a memory forgotten (status + forgottenAt); its text stays in the file and in history."""
        record = self.get(memory_id)
        if record.status == "forgotten":
            record.duplicate = True  # already forgotten: nothing written, no commit
            return record
        changes: dict[str, Any] = {"status": "forgotten", "forgottenAt": now_iso()}
        if reason:
            changes["forgetReason"] = reason
        return self.update(memory_id, changes, operation="forget", source=source)

    # --- history ---

    def versions(self, id_or_path: str) -> list[Version]:
        rel = self.resolve(id_or_path)
        versions = self.ledger.history(rel)
        if not versions:
            raise NotFoundError(f"{rel} has no committed versions yet (commit it, or run `remnic sync run`)")
        return versions

    def version_text(self, id_or_path: str, spec: str) -> tuple[str, str]:
        """(label, file text) of a version; ``working`` is the file as it is on disk now."""
        return _history.version_text(self.files, self.ledger, self.versions(id_or_path), spec)

    def version_diff(self, id_or_path: str, old: str | None = None, new: str | None = None) -> str:
        """A unified diff between two versions (default: the last two, or latest vs uncommitted edits)."""
        return _history.version_diff(self.files, self.ledger, self.versions(id_or_path), old, new)

    def revert(self, id_or_path: str, spec: str, *, source: str = "api", force: bool = False) -> MemoryRecord:
        """Restore a version's text as a new commit (history is never rewritten).

        Uncommitted edits to the file would be lost, so they are refused unless ``force``.
        """
        with self.files.lock():
            self._check_writable()
            versions = self.versions(id_or_path)
            target = _history.pick(versions, spec, allow_working=False)
            current = versions[-1].path
            if not force and self.ledger.is_dirty(current):
                raise UsageError(
                    f"{current} has uncommitted changes that a revert would discard; commit them "
                    "first (`remnic sync run`) or pass --force to discard them"
                )
            text = self.ledger.show(target.sha, target.path)
            checked = check_text(text, current, self.settings.store)
            if checked.problems or checked.record is None:
                raise MemoryFormatError(current, checked.problems)
            record = checked.record
            previous = self.files.read_bytes(current) if os.path.lexists(self.root / current) else None
            self.files.write(current, text)
            try:
                sha = self.ledger.commit(
                    [current],
                    f"remnic revert: {current} to {target.label} ({target.short})",
                    trailers_for("revert", [record.id], record.namespace, source, **{"Reverted-To": target.sha}),
                    contents={current: text.encode("utf-8")},
                )
            except BaseException:
                if previous is None:
                    self.files.delete(current)
                else:
                    self.files.write(current, previous)
                raise
            self._index_apply([record], [], sha)
            return record

    def timeline(self, memory_id: str) -> list[dict[str, Any]]:
        """A memory's lifecycle from git: one event per commit, with the status at that version."""
        return _history.timeline(self.ledger, self.versions(memory_id))

    # --- health ---

    def status(self) -> dict[str, Any]:
        return _doctor.status(self.root, self.files, self.ledger, self.settings.store, self._index_health())

    def doctor(self) -> list[dict[str, Any]]:
        """Checks with status ok|warn|fail and a detail line each."""
        return _doctor.checks(
            self.root,
            self.settings.origins.get("memoryDir", "default"),
            self.files,
            self.ledger,
            self.settings.store,
            self._index_health(),
        )

    def check_files(self) -> tuple[list[MemoryRecord], list[FieldProblem]]:
        """Every memory file checked as sync checks it (schema, namespace folder, secrets, conflict markers)."""
        return _doctor.check_files(self.files, self.settings.store)

    def _index_health(self) -> dict[str, Any]:
        try:
            return self.index.health().to_dict()
        except ImportError:
            return {"state": "unavailable"}
        except Exception as exc:  # noqa: BLE001 - health must report, not crash
            return {"state": "error", "detail": str(exc)}

    def _find_duplicate(self, namespace: str, digest: str) -> MemoryRecord | None:
        try:
            found = self.index.find_by_hash(namespace, digest)
        except ImportError:
            return None
        if not found:
            return None
        try:
            record = self.files.find(found, self.index.path_of(found))
        except (NotFoundError, MemoryFormatError):
            return None
        if record.status != "active" or content_hash(record.content) != digest:
            return None
        return record

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
    ) -> tuple[list[MemoryRecord], int]:
        """A filtered, paged browse, newest first: (page, total matches); see :func:`remnic.browse.search`."""
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

    def review_queue(self, *, namespace: str | None = None, limit: int = 50) -> list[MemoryRecord]:
        """Memories waiting for a person: status pending_review or quarantined, newest first."""
        return _browse.review_queue(self.list(namespace=namespace), limit)

    def observe(
        self,
        session_key: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        namespace: str | None = None,
        source: str = "api",
    ) -> dict[str, Any]:
        """Archive conversation messages for the observation pipeline (see :mod:`remnic.observe`)."""
        return _observe.archive(self.root, session_key, messages, namespace or self.settings.namespaces.default, source)

    # --- sync: hand edits become indexed, committed memories (remnic.sync) ---

    def sync(
        self, *, commit: bool | None = None, normalize: bool = True, full: bool = False, source: str = "sync"
    ) -> Any:
        """Validate, normalise, index and commit what changed on disk since the last sync.

        Returns a :class:`remnic.sync.SyncReport`; see :func:`remnic.sync.run_sync`.
        """
        from remnic.sync.engine import SyncTarget, run_sync

        target = SyncTarget(self.root, self.files, self.ledger, self.settings, self._usable_index)
        return run_sync(target, commit=commit, normalize=normalize, full=full, source=source)

    def _usable_index(self) -> Any:
        try:
            return self.index
        except ImportError:
            return None

    # --- recall: the rebuildable search index (remnic.index) and the pipeline (remnic.recall) ---

    def recall(
        self,
        query: str,
        *,
        top_k: int | None = None,
        namespace: str | None = None,
        category: str | None = None,
        budget_chars: int | None = None,
        include_inactive: bool = False,
        statuses: Sequence[str] | None = None,
        progress: Progress | None = None,
        xray: bool = False,
        session_key: str | None = None,
        trace_id: str | None = None,
        clock: Any = None,
        source: str = "api",
    ) -> Any:
        """Hybrid recall (BM25 + local embeddings) over active memories, best first.

        Returns a :class:`remnic.recall.RecallResult`: iterate it for
        :class:`~remnic.recall.RecallHit` (id, path, score, content, frontmatter,
        namespace, category, status, served_by, safety, score terms); ``.stages`` is
        the filter ladder with considered/admitted counts. Superseded, forgotten,
        rejected … memories are left out unless ``include_inactive`` (or ``statuses``)
        asks for them. A missing, stale or foreign index is caught up or rebuilt
        first; if the index cannot be used at all the recall scans the files
        (``recall.fallbackScan``). Every recall appends one entry to the audit ledger
        (``result.audit_id``). With ``xray=True`` (or ``recall.xrayCapture``) the
        result carries ``.xray``, a :class:`remnic.xray.RecallXraySnapshot`; capture
        never changes the hits and a failure inside it is logged, not raised.
        ``clock`` (epoch ms) or ``REMNIC_XRAY_CLOCK`` pins the recall's clock.
        """
        import logging

        from remnic.recall import RecallOptions, check_query, resolve_clock, run_recall

        check_query(query)
        check_recall_args(
            top_k=top_k, namespace=namespace, category=category, budget_chars=budget_chars, statuses=statuses
        )
        try:
            clk = resolve_clock(clock)
        except ValueError as exc:
            raise ValidationError.single("clock", str(exc)) from None
        started = clk.perf_ms()
        options = RecallOptions(
            top_k=top_k,
            namespace=namespace,
            category=category,
            budget_chars=budget_chars,
            statuses=statuses,
            include_inactive=include_inactive,
        )
        try:
            fresh = self.index.ensure_fresh(self.files, self.ledger, progress)
            result = run_recall(self.index, query, options, self.settings.recall, fresh.to_dict(), clock=clk)
        except RemnicError:
            raise
        except Exception as exc:
            if not self.settings.recall.fallback_scan:
                raise
            from remnic.recall.fallback import scan_recall

            reason = f"{type(exc).__name__}: {exc}".strip()[:200]
            logging.getLogger("remnic.recall").warning("index unavailable (%s); recalling from the files", reason)
            result = scan_recall(
                self.files.scan().records, query, options, self.settings.recall, reason=reason, clock=clk
            )
        result.session_key, result.trace_id = session_key, trace_id
        if self.settings.recall.audit:
            result.audit_id = self._audit_recall(result, clk, clk.perf_ms() - started, source)
        if xray or self.settings.recall.xray_capture:
            result.xray = self._capture_xray(result, clk, namespace)
        return result

    def recall_xray(
        self,
        query: str,
        *,
        namespace: str | None = None,
        session_key: str | None = None,
        budget_chars: int | None = None,
        top_k: int | None = None,
        trace_id: str | None = None,
        clock: Any = None,
        source: str = "api",
    ) -> Any:
        """A fresh recall of ``query`` with its X-ray: a RecallXraySnapshot, or None if capture failed.

        Scoped exactly like :meth:`recall` (no namespace: every namespace), so the X-ray explains
        the recall a caller would get. Calls are serialised by one lock per memory root shared by
        every surface (CLI, HTTP, MCP), as the X-ray contract specifies.
        """
        from remnic.recall.locks import xray_lock

        with xray_lock(self.root):
            result = self.recall(
                query,
                top_k=top_k,
                namespace=namespace,
                budget_chars=budget_chars,
                xray=True,
                session_key=session_key,
                trace_id=trace_id,
                clock=clock,
                source=source,
            )
        return result.xray

    def audit_show(self, audit_id: str) -> dict[str, Any]:
        """One recall-audit entry by id (``audit-YYYYMMDD-<12 hex>``)."""
        from remnic.recall.audit import AuditLog

        return AuditLog(self.settings.state_dir).show(audit_id)

    def audit_recent(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest recall-audit entries, newest first."""
        from remnic.recall.audit import AuditLog

        return AuditLog(self.settings.state_dir).recent(limit)

    def _audit_recall(self, result: Any, clk: Any, latency_ms: float, source: str) -> str | None:
        from remnic.recall.snapshot import record_audit

        return record_audit(
            self.settings.state_dir,
            result,
            clock=clk,
            latency_ms=latency_ms,
            source=source,
            retention_days=self.settings.recall.audit_retention_days,
        )

    def _capture_xray(self, result: Any, clk: Any, namespace: str | None) -> Any:
        from remnic.recall.snapshot import capture

        return capture(result, clock=clk, namespace=namespace, read_text=self.files.read_text_cached)

    def reindex(self, *, progress: Progress | None = None) -> Any:
        """Rebuild the whole index from the files (embeddings come from the cache when unchanged)."""
        return self.index.rebuild(self.files, self.ledger, progress, reason="reindex requested")
