"""Recall, index and audit operations of the ``Memory`` facade, typed for callers.

The recall and index layers load on first use (a command that never recalls never imports
them), so the implementations are imported inside each method; the types are for the checker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError

from . import arguments as _check

if TYPE_CHECKING:
    from remnic.index.state import FreshReport
    from remnic.recall.clock import RecallClock
    from remnic.recall.project import ProjectContext
    from remnic.recall.types import RecallHit, RecallResult
    from remnic.render.snapshot import RecallXraySnapshot
    from remnic.sync.engine import SyncReport

    from .consolidate import ConsolidationResult
    from .memory import Memory

Progress = Callable[[int, int], None]


def _flags(**values: object) -> None:
    """A flag is True or False: ``include_superseded="yes"`` would read as true, and 0 as false."""
    for name, value in values.items():
        if not isinstance(value, bool):
            shown = f"{type(value).__name__} {value!r}"[:200]
            raise ValidationError.single(name, f"must be a boolean (True or False), got {shown}")


class RecallOps:
    """Mixed into :class:`remnic.service.memory.Memory` (before the other mixins)."""

    def recall(
        self: Memory,
        query: str,
        *,
        top_k: int | None = None,
        namespace: str | None = None,
        category: str | None = None,
        budget_chars: int | None = None,
        include_inactive: bool = False,
        statuses: Sequence[str] | None = None,
        include_superseded: bool = False,
        tags: Sequence[str] | None = None,
        tag_match: str = "any",
        as_of: str | float | None = None,
        project: ProjectContext | None = None,
        xray: bool = False,
        session_key: str | None = None,
        trace_id: str | None = None,
        clock: RecallClock | int | str | None = None,
        source: str = "api",
        spaces: bool = True,
        audit: bool = True,
        progress: Progress | None = None,
        readable: Callable[[str], bool] | None = None,
    ) -> RecallResult:
        """Hybrid recall (BM25 + local embeddings) over active memories, best first: a
        :class:`remnic.RecallResult` (iterate it for :class:`remnic.RecallHit`). ``top_k`` is from 1 to 10000
        (None: ``recall.topK``); ``namespace`` None spans every namespace; ``budget_chars`` None is
        ``recall.budgetChars``, 0 no limit. Filters: ``category``; ``statuses`` (default ``["active"]``);
        ``include_superseded`` adds superseded ones, each ranked below its successor; ``include_inactive``
        admits every status, ranked below active ones (not with ``statuses``); ``tags`` keeps memories with
        any of them (``tag_match="all"``: all); ``as_of`` (an ISO time or epoch seconds) those valid then.
        ``xray=True`` puts a snapshot in ``.xray`` (see :meth:`recall_xray` for ``session_key``,
        ``trace_id``, ``clock`` and ``source``); ``spaces`` searches the read-only spaces too;
        ``audit=False`` writes no audit entry. An empty query, a string for ``statuses`` or ``tags``, or anything but
        True or False for a flag, is a ValidationError naming it. An empty recall in a ``namespace`` that
        holds no memory file says so in ``result.warnings``; ``readable`` (a server's principal) keeps the
        namespaces it names to those its caller may read."""
        from . import recall as _recall

        _flags(
            include_inactive=include_inactive,
            include_superseded=include_superseded,
            xray=xray,
            spaces=spaces,
            audit=audit,
        )
        return _recall.recall(
            self,
            _check.query(query),
            top_k=_check.top_k(top_k),
            namespace=namespace,
            category=category,
            budget_chars=budget_chars,
            include_inactive=include_inactive,
            statuses=statuses,
            include_superseded=include_superseded,
            tags=tags,
            tag_match=tag_match,
            as_of=as_of,
            project=project,
            xray=xray,
            session_key=session_key,
            trace_id=trace_id,
            clock=clock,
            source=source,
            spaces=spaces,
            audit=audit,
            progress=progress,
            readable=readable,
        )

    def recall_xray(
        self: Memory,
        query: str,
        *,
        namespace: str | None = None,
        session_key: str | None = None,
        budget_chars: int | None = None,
        top_k: int | None = None,
        trace_id: str | None = None,
        clock: RecallClock | int | str | None = None,
        source: str = "api",
        project: ProjectContext | None = None,
        category: str | None = None,
        include_inactive: bool = False,
        statuses: Sequence[str] | None = None,
        include_superseded: bool = False,
        tags: Sequence[str] | None = None,
        tag_match: str = "any",
        as_of: str | float | None = None,
        readable: Callable[[str], bool] | None = None,
    ) -> RecallXraySnapshot | None:
        """A fresh recall of ``query`` with its X-ray snapshot
        (:class:`remnic.render.snapshot.RecallXraySnapshot`, exported as :class:`remnic.RecallXraySnapshot`),
        or None if capture failed (the recall still ran and wrote its audit entry; the failure is logged).

        It runs the recall :meth:`recall` would, scoped and filtered the same way:

        - ``namespace``: None spans every namespace (the snapshot then has no ``namespace``);
        - ``budget_chars``: the characters the returned contents may use; None is ``recall.budgetChars``
          (8192), 0 no limit; the first hit is always kept, trimmed to its best passages if need be;
        - ``top_k``: 1 to 10000; None is ``recall.topK`` (10);
        - ``session_key``, ``trace_id``: carried into the snapshot (``sessionKey``, ``traceId``) and the
          audit entry as given, trimmed;
        - ``clock``: epoch milliseconds (an int, a string of digits, or a ``RecallClock``) pinning the
          recall's time, for reproducible snapshots; None reads ``REMNIC_XRAY_CLOCK``, else the live clock;
        - ``source``: what the audit entry's ``source`` says made the recall (default ``"api"``);
        - ``project``: from :meth:`project_context`, boosting that project's memories;
        - ``category``, ``statuses``, ``include_superseded``, ``include_inactive``, ``tags``,
          ``tag_match``, ``as_of``, ``readable``: :meth:`recall`'s filters (``include_inactive`` and
          ``statuses`` exclude each other).

        A wrong argument raises a ValidationError naming it, before anything runs. Calls are serialised by
        one lock per memory root, shared by every surface of the process (CLI, HTTP, MCP)."""
        from . import recall as _recall

        _flags(include_inactive=include_inactive, include_superseded=include_superseded)
        return _recall.recall_xray(
            self,
            _check.query(query),
            namespace=namespace,
            session_key=session_key,
            budget_chars=budget_chars,
            top_k=_check.top_k(top_k),
            trace_id=trace_id,
            clock=clock,
            source=source,
            project=project,
            category=category,
            include_inactive=include_inactive,
            statuses=statuses,
            include_superseded=include_superseded,
            tags=tags,
            tag_match=tag_match,
            as_of=as_of,
            readable=readable,
        )

    def namespace_warning(self: Memory, namespace: str | None) -> str | None:
        """A warning naming the namespaces that exist when ``namespace`` holds no memory file (else None);
        see :func:`remnic.service.recall.namespace_warning`."""
        from . import recall as _recall

        return _recall.namespace_warning(self, namespace)

    def citations(self: Memory, hits: Iterable[RecallHit]) -> str:
        """An ``<oai-mem-citation>`` block pointing at the files of these recall hits (Codex reads it)."""
        from . import recall as _recall

        return _recall.citations(self, hits)

    def audit_show(self: Memory, audit_id: str) -> dict[str, Any]:
        """One recall-audit entry by id (``audit-YYYYMMDD-<12 hex>``). Under a pinned clock a recall run
        twice shares one id: the newest entry, with ``sharedId`` (``count``, ``earlier``: the others)."""
        from . import recall as _recall

        return _recall.audit_show(self, _check.text(audit_id, "audit_id"))

    def audit_recent(self: Memory, limit: int = 20) -> list[dict[str, Any]]:
        """The newest recall-audit entries, newest first (lines that are not whole entries are skipped:
        :meth:`audit_unreadable` counts them)."""
        from . import recall as _recall

        return _recall.audit_recent(self, _check.count(limit, "limit"))

    def audit_unreadable(self: Memory) -> dict[str, int]:
        """Lines of the audit ledger that are not whole entries (a crash mid-append, a stray edit),
        counted per day file."""
        from remnic.recall.audit import AuditLog

        return AuditLog(self.settings.durable_dir).unreadable()

    def warm_up(self: Memory) -> None:
        """Load the index and the embedding model now, so a long-running server's first recall is not slow."""
        from . import recall as _recall

        _recall.warm_up(self)

    def refresh_index(self: Memory, progress: Progress | None = None) -> FreshReport:
        """Bring the index up to HEAD now (a catch-up from git, or a rebuild): what the next recall would
        do first. Returns the :class:`~remnic.index.state.FreshReport` (action, seconds, embedded)."""
        self.settle_index()
        report: FreshReport = self.index.ensure_fresh(self.files, self.ledger, progress)
        return report

    def reindex(self: Memory, *, progress: Progress | None = None) -> FreshReport:
        """Rebuild the whole index from the files (embeddings come from the cache when unchanged)."""
        self.settle_index()
        report: FreshReport = self.index.rebuild(self.files, self.ledger, progress, reason="reindex requested")
        return report

    def sync(
        self: Memory,
        *,
        commit: bool | None = None,
        normalize: bool = True,
        full: bool = False,
        source: str = "sync",
        normalize_all: bool = False,
        dry_run: bool = False,
        progress: Progress | None = None,
        read_progress: Progress | None = None,
    ) -> SyncReport:
        """Validate, normalize, index and commit what changed on disk since the last sync.

        ``normalize_all`` also gives files that already have an id the defaults they lack; ``dry_run``
        reports what would change and changes nothing. ``progress`` hears (done, total) while the
        index is written, ``read_progress`` while files are read (a full pass or a large batch). Returns a :class:`remnic.sync.SyncReport`;
        see :func:`remnic.sync.run_sync`.
        """
        from remnic.sync.engine import SyncTarget, run_sync

        from .chain_links import stranded_by_changes

        self.settle_index()
        target = SyncTarget(self.root, self.files, self.ledger, self.settings, lambda: self.index)
        with self.committer.exclusive() as tx:
            report = run_sync(
                target,
                tx,
                commit=commit,
                normalize=normalize,
                full=full,
                source=source,
                normalize_all=normalize_all,
                dry_run=dry_run,
                progress=progress,
                read_progress=read_progress,
            )
        if not dry_run:
            report.stranded = stranded_by_changes(self, report.changes)
        return report

    def consolidate(self: Memory, *, days: float | None = None) -> ConsolidationResult:
        """Merge near-duplicates among recently observed memories into the oldest (one commit)."""
        from .consolidate import consolidate

        return consolidate(self, days=days)


# Memory's own name in a caller's TypeError ("Memory.recall() got an unexpected keyword argument 'topk'"),
# not this mixin's: a caller knows Memory, and its signature is this one.
for _name, _method in list(vars(RecallOps).items()):
    if callable(_method) and not _name.startswith("_"):
        _method.__qualname__ = f"Memory.{_name}"
del _name, _method
