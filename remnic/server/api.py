"""The operations HTTP and MCP share: validate → resolve the namespace → call the service → shape the reply.

Both transports call :meth:`Api.call` with the same operation names, so an
operation returns the same JSON bytes over either (``Reply.text`` is encoded
once, with the X-ray renderer's ``dumps_json``). Nothing here decides what a
memory is or how recall ranks: that is :class:`remnic.service.Memory`.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from remnic.config import Settings
from remnic.errors import NotFoundError, RemnicError, UsageError, ValidationError
from remnic.memfile.model import MemoryRecord, now_iso
from remnic.memfile.paths import namespace_for_path
from remnic.memfile.schema import NAMESPACES_DIR
from remnic.render.xray import dumps_json, render_xray, snapshot_envelope
from remnic.service.arguments import request_names
from remnic.service.memory import Memory
from remnic.service.recall import context_text
from remnic.service.review import queue_listing
from remnic.version import __version__

from . import compat, presence
from .api_agents import AgentApi
from .codestamp import restart_note
from .derived import apply_api_settings
from .errors import NamespaceForbidden, RestartNeeded
from .limits import IdempotencyCache, RateLimiter, fingerprint
from .original_routes import OriginalApi
from .params import Operation, validate
from .reply import Reply, error_reply, internal_error

# Which retrievers a hit's ``signals.source`` stands for (others, e.g. graph, stand for themselves).
_SOURCES: dict[str, tuple[str, ...]] = {"both": ("bm25", "vector"), "sibling": ("episode",)}
LAST_RECALLS = 1024
"""How many (principal, namespace, session) last-recall snapshots recall/explain keeps."""


def _records(records: list[MemoryRecord]) -> list[dict[str, Any]]:
    """Full records plus the original's summary keys (created, updated, tags, entityRef, preview)."""
    return [compat.with_summary(r.to_dict()) for r in records]


def _filters(values: dict[str, Any]) -> dict[str, Any]:
    """The recall filters of a request (schema.RECALL_FILTERS) as the service takes them."""
    return {
        "category": values.get("category"),
        "statuses": values.get("statuses"),
        "include_superseded": values["includeSuperseded"],
        "include_inactive": values["includeInactive"],
        "tags": values.get("tags"),
        "tag_match": values["tagMatch"],
        "as_of": values.get("asOf"),
    }


class Api(AgentApi, OriginalApi):
    """One per server process, shared by every request thread (the service is thread-safe)."""

    operations: dict[str, Operation]

    def __init__(
        self, memory: Memory, settings: Settings | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.memory = memory
        # A server is a long-running process: consolidation after flushes, the edit feed at once.
        memory.background_work = True
        self.settings = settings or memory.settings
        server = self.settings.server
        self.limiter = RateLimiter(server.write_rate_limit, server.write_rate_window_s, clock)
        self.idempotency = IdempotencyCache(server.idempotency_window_s, clock=clock)
        # Operations, namespace policy, limits: derived as a config reload derives them again.
        apply_api_settings(self, self.settings)
        # The last recall per (principal, namespace, session): what recall/explain explains.
        self._last: dict[tuple[str, str, str], Any] = {}
        self._last_lock = threading.Lock()
        # The coding context per (principal, session) that set_coding_context chose.
        self._contexts: dict[tuple[str, str], Any] = {}

    # --- dispatch ---

    def operation(self, name: str) -> Operation:
        op = self.operations.get(name)
        if op is None:
            raise NotFoundError(f"unknown operation {name!r}")
        return op

    def call(self, name: str, principal: str, args: Any, *, from_query: bool = False, surface: str = "http") -> Reply:
        """Run one operation for ``principal``; ``surface`` (http, mcp, mcp-stdio) is recorded as the write source."""
        op = self.operation(name)
        values = validate(op, args, from_query=from_query)
        values["_source"] = f"{surface}:{principal}"
        values["_given"] = frozenset(args) if isinstance(args, Mapping) else frozenset()
        # The user's own agent on stdio is not throttled unless asked (mcp.rateLimitStdio).
        values["_limited"] = surface != "mcp-stdio" or self.settings.mcp.rate_limit_stdio
        handler: Callable[[str, dict[str, Any]], Reply] = getattr(self, f"op_{name}")
        if name != "health":  # health answers "not ok" itself
            presence.check_present(self.memory.root)  # never recreate a deleted memory directory
        try:
            reply = handler(principal, values)
        except ImportError as exc:  # a module first used now, from files an upgrade replaced under us
            raise RestartNeeded(restart_note(exc)) from exc
        except (RemnicError, OSError) as exc:
            if isinstance(exc, ValidationError):  # the service names a Python keyword (reason_code)
                request_names(exc, (p.name for p in op.params))
            said = presence.unusable_state(self.memory.root, exc)
            if said is None or said is exc:
                raise
            raise said from None
        ignored = [
            compat.warning(p.name, "accepted for compatibility with Remnic clients; it has no effect here")
            for p in op.params
            if p.compat and p.name in values
        ]
        if ignored and isinstance(reply.body, dict) and "snapshotFound" not in reply.body:
            # Never on an X-ray envelope: its bytes are the renderer's, the same on every surface.
            body = {**reply.body, "warnings": [*reply.body.get("warnings", []), *ignored]}
            reply = Reply(reply.status, body, headers=reply.headers)
        return reply

    def _write(self, principal: str, op: str, values: dict[str, Any], fn: Callable[[], Reply]) -> Reply:
        """Idempotency replay first (a replay is not a write), then the rate limit, then the write."""
        counted = values["_limited"] and not values.get("dryRun")

        def run() -> Reply:
            if counted:
                self.limiter.acquire(principal)
            try:
                return fn()
            except UsageError:
                if counted:
                    self.limiter.refund(principal)  # refused input wrote nothing
                raise

        key = values.get("idempotencyKey")
        if not key:
            return run()
        # Same key over HTTP or MCP: one request. dryRun aside: a dry run and its real write are one request.
        request = {k: v for k, v in values.items() if not k.startswith("_") and k != "dryRun"}
        if values.get("dryRun"):
            # Not recorded under the key (the real write that follows with it must run), but refused
            # as that write would be when the key is already taken by another request.
            self.idempotency.check(principal, key, fingerprint(op, request))
            return run()
        reply, replayed = self.idempotency.run(principal, key, fingerprint(op, request), run)
        if not replayed:
            return reply
        body = {**reply.body, "idempotencyReplay": True}
        return Reply(reply.status, body, headers={"Idempotency-Replayed": "true"})

    def _memory(self, principal: str, memory_id: str, namespace: str | None = None) -> MemoryRecord:
        """A memory the principal may read (in ``namespace`` when given); any other id reads exactly
        like a missing one."""
        missing = self._missing(memory_id)
        try:
            record = self.memory.get(memory_id)
        except NotFoundError:
            raise missing from None
        if not self.policy.can_read(principal, record.namespace) or namespace not in (None, record.namespace):
            raise missing
        return record

    def _missing(self, memory_id: str) -> NotFoundError:
        """Not found, said of a path when the caller gave one (memoryId takes either)."""
        said = "at path" if self.memory.names_path(memory_id) else "with id"
        return NotFoundError(f"no memory {said} {memory_id!r}")

    def _not_found(self, principal: str, values: dict[str, Any], exc: NotFoundError, **extra: Any) -> Reply:
        """The original's 404 body ``{found: false, namespace}``, with remnic's error and code."""
        namespace = values.get("namespace") or self.policy.home(principal)
        body = {"found": False, "namespace": namespace, **extra, "error": exc.message, "code": exc.code}
        return Reply(404, body)

    # --- operations ---

    def op_health(self, principal: str, values: dict[str, Any]) -> Reply:
        gone = presence.missing(self.memory.root)
        if gone is not None:
            body = {"ok": False, "status": "memory_dir_missing", "code": "memory_dir_missing", "error": gone}
            return Reply(503, {**body, "service": "remnic", "version": __version__, "memoryDir": str(self.memory.root)})
        return Reply(
            200,
            {
                "ok": True,
                "status": "ok",
                "service": "remnic",
                "version": __version__,
                "principal": principal,
                "namespace": self.policy.home(principal),
                "namespacesEnabled": self.policy.enabled,
                **self.restart_notes(),
                # The original's health keys, answered for what remnic is.
                "memoryDir": str(self.memory.root),
                "defaultNamespace": self.policy.default,
                "searchBackend": "remnic",
                "qmdEnabled": False,
                "nativeKnowledgeEnabled": False,
                "projectionAvailable": False,
            },
        )

    def op_recall(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        requested = values.get("topK")
        top_k = self.settings.recall.top_k if requested is None else requested
        requested_budget = values.get("budgetChars")  # 0 is no limit, as everywhere: not "use the default"
        budget = self.settings.recall.budget_chars if requested_budget is None else requested_budget
        session_key = values.get("sessionKey")
        project = self.project_for(principal, values)
        trace_id = str(uuid.uuid4())
        started = time.perf_counter()
        result = None
        if values["mode"] != "no_recall" and top_k > 0:
            # Capture the X-ray as the recall runs (from values it already computed), so
            # recall/explain can show this exact recall later without running it again.
            # Tags and asOf are stages of the recall (before top-k and the budget), so the budget, the
            # X-ray and the audit entry describe what is returned.
            result = self.memory.recall(
                values["query"],
                top_k=top_k,
                namespace=ns,
                budget_chars=budget,
                session_key=session_key,
                trace_id=trace_id,
                xray=True,
                source=values["_source"],
                project=project,
                readable=lambda name: self.policy.can_read(principal, name),
                **_filters(values),
            )
        hits = list(result) if result is not None else []
        results = [self._hit(h, values["includeDebug"]) for h in hits]
        # Defence in depth: a hit from a namespace this principal may not read never leaves.
        results = [r for r in results if self.policy.can_read(principal, r.get("namespace") or self.policy.default)]
        results = [{**compat.with_summary(r), "disclosure": values["disclosure"]} for r in results]
        kept = {r["id"] for r in results}
        sources = sorted(
            {
                src
                for h in hits
                if h.id in kept
                for src in _SOURCES.get(h.signals.get("source", ""), (h.signals.get("source", ""),))
                if src
            }
        )
        index = getattr(result, "index", None) or {}
        body: dict[str, Any] = {"query": values["query"], "sessionKey": session_key}  # null when not given
        body.update(
            {
                "namespace": ns or self.policy.default,
                # Unreviewed hits go under a heading that says so, never as plain text (service/recall.py).
                "context": context_text(h for h in hits if h.id in kept),
                "count": len(results),
                "memoryIds": [r["id"] for r in results],
                "results": results,
                "recordedAt": now_iso(),
                "traceId": trace_id,
                # One pipeline (all tiers, hybrid retrieval) serves every mode except no_recall.
                "plannerMode": "no_recall" if result is None else "full",
                "fallbackUsed": index.get("action") == "unavailable",  # the index was unusable: files were scanned
                "sourcesUsed": sources,
                "disclosure": values["disclosure"],
                "budgetsApplied": {
                    "topK": top_k,
                    "budgetChars": budget,
                    "budgetUsed": result.budget_used if result is not None else 0,
                    "requestedTopK": top_k if requested is None else requested,  # the default when not given
                    "appliedTopK": top_k,
                    "recallBudgetChars": budget,
                },
                "latencyMs": round((time.perf_counter() - started) * 1000, 2),
            }
        )
        wants_citations = values.get("citations")
        if wants_citations or (wants_citations is None and self.settings.recall.citations):
            body["citations"] = self.memory.citations([h for h in hits if h.id in kept])
        if project is not None:
            body["codingContext"] = project.to_dict()
        if result is not None and result.warnings:  # an empty namespace, a query of stopwords: as the CLI says
            # Each warning opens with what it is about ("namespace 'x': …", "query: …").
            body["warnings"] = [compat.warning(w.split(" ", 1)[0].rstrip(":"), w) for w in result.warnings]
        if result is not None and getattr(result, "audit_id", None):
            body["auditEntryId"] = result.audit_id
        if values["includeDebug"] and result is not None:
            full = result.to_dict()
            body["debug"] = {k: full[k] for k in ("filters", "queryTerms", "timingsMs", "index") if k in full}
        if result is not None:
            self._remember(principal, ns, session_key, getattr(result, "xray", None))
        return Reply(200, body)

    def _remember(self, principal: str, ns: str | None, session_key: str | None, snapshot: Any) -> None:
        with self._last_lock:
            key = (principal, ns or "", session_key or "")
            self._last.pop(key, None)
            self._last[key] = snapshot
            while len(self._last) > LAST_RECALLS:
                self._last.pop(next(iter(self._last)))

    @staticmethod
    def _hit(hit: Any, debug: bool) -> dict[str, Any]:
        """A recall hit as the API's result object."""
        data = hit.to_dict()
        keep = ("id", "path", "namespace", "category", "status", "score", "rank", "content", "frontmatter", "space")
        # trimmed/contentChars: a hit the budget cut to its best passages says so (absent: the whole memory).
        out = {k: data[k] for k in (*keep, "trimmed", "contentChars") if k in data}
        # Always, not only with includeDebug: a client must be able to tell an unreviewed hit.
        out["safety"] = hit.safety
        out["safeToUse"] = hit.safety == "safe"
        if debug:
            out["debug"] = {k: v for k, v in data.items() if k not in out}
        return out

    def _envelope(self, ns: str | None, snapshot: Any) -> Reply:
        """The X-ray body HTTP and MCP send: ``dumps_json(snapshot_envelope(...))``, the original's
        ``{snapshotFound, snapshot}`` shape."""
        envelope = snapshot_envelope(snapshot)
        inner = envelope.get("snapshot") or {}
        if envelope["snapshotFound"] and ns is not None and inner.get("namespace") not in (None, ns):
            envelope = {"snapshotFound": False}  # defence in depth: never hand out a foreign snapshot
        return Reply(200, envelope, text=dumps_json(envelope))

    def op_recall_xray(self, principal: str, values: dict[str, Any]) -> Reply:
        try:
            ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        except NamespaceForbidden:
            # Another principal's namespace: nothing, not even whether it has memories.
            return Reply(200, {"snapshotFound": False}, text=dumps_json({"snapshotFound": False}))
        if values.get("topK") == 0:  # as POST recall: 0 returns nothing without recalling, so no X-ray
            return Reply(200, {"snapshotFound": False}, text=dumps_json({"snapshotFound": False}))
        # Nothing surface-specific goes in (no trace id): the snapshot must equal the CLI's, which
        # prints the same members flat (render_xray "json") where this route wraps them.
        snapshot = self.memory.recall_xray(
            values["query"],
            namespace=ns,
            session_key=values.get("sessionKey"),
            budget_chars=values.get("budget"),
            top_k=values.get("topK"),
            source=values["_source"],
            project=self.project_for(principal, values),
            readable=lambda name: self.policy.can_read(principal, name),
            **_filters(values),
        )
        return self._envelope(ns or self.policy.default, snapshot)

    def op_recall_explain(self, principal: str, values: dict[str, Any]) -> Reply:
        not_found = Reply(200, {"snapshotFound": False}, text=dumps_json({"snapshotFound": False}))
        try:
            ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        except NamespaceForbidden:
            return not_found
        with self._last_lock:
            snapshot = self._last.get((principal, ns or "", values.get("sessionKey") or ""))
        if snapshot is None:
            return not_found
        reply = self._envelope(ns, snapshot)
        if values["format"] == "json" or not reply.body["snapshotFound"]:
            return reply
        return Reply(
            200, {**reply.body, "format": values["format"], "rendered": render_xray(snapshot, values["format"])}
        )

    def op_memory_store(self, principal: str, values: dict[str, Any]) -> Reply:
        return self._store(principal, values, "memory_store")

    def _store(self, principal: str, values: dict[str, Any], operation: str) -> Reply:
        """memory_store and suggestion_submit (which always queues for review)."""
        ns = self.policy.resolve(principal, values.get("namespace"), write=True)
        assert ns is not None
        project = self.project_for(principal, values)

        def store() -> Reply:
            extra = {k: values[k] for k in ("entityRef", "sourceReason", "supersedes") if values.get(k)}
            if project is not None and project.name:
                extra["project"] = project.name
            if operation == "suggestion_submit":
                extra.setdefault("sourceReason", "submitted via suggestion_submit")
                extra["status"] = "pending_review"
            elif values["status"] != "active":
                extra["status"] = values["status"]
            result = self.memory.store(
                values["content"],
                category=values.get("category"),
                tags=values.get("tags"),
                confidence=values.get("confidence"),
                importance=values.get("importance"),
                namespace=ns,
                source=values["_source"],
                extra=extra,
                dry_run=values["dryRun"],
            )
            # A dry run predicts the real write: an exact duplicate would not be written (same answer, plus dryRun).
            record = result.record
            duplicate = not result.changed and (not values["dryRun"] or bool(result.duplicates))
            if duplicate:
                status = "duplicate"
            elif values["dryRun"]:
                status = "validated"
            else:
                status = "queued_for_review" if record.status == "pending_review" else "stored"
            body: dict[str, Any] = {
                "schemaVersion": 1,
                "operation": operation,
                "namespace": ns,
                "dryRun": values["dryRun"],
                "accepted": status in ("stored", "queued_for_review", "validated"),
                "queued": status == "queued_for_review" or (operation == "suggestion_submit" and status == "validated"),
                "status": status,
                "memoryId": record.id,
                "path": record.path,
                "commit": None if duplicate or values["dryRun"] else result.commit,  # null: nothing committed
            }
            if duplicate:
                body["duplicateOf"] = record.id
            if result.warnings:
                body["warnings"] = [{"field": "gitIndex", "message": w} for w in result.warnings]
            if project is not None and project.name:
                body["project"] = project.name
            if values.get("idempotencyKey"):
                body["idempotencyKey"] = values["idempotencyKey"]
                body["idempotencyReplay"] = False
            return Reply(201 if status in ("stored", "queued_for_review") else 200, body)

        return self._write(principal, operation, {**values, "namespace": ns}, store)

    def op_memory_get(self, principal: str, values: dict[str, Any]) -> Reply:
        try:
            record = self._memory(principal, values["memoryId"], values.get("namespace"))
        except NotFoundError as exc:
            return self._not_found(principal, values, exc)
        memory = compat.with_summary(record.to_dict())
        return Reply(200, {"found": True, "namespace": record.namespace, "memory": memory})

    def op_memory_timeline(self, principal: str, values: dict[str, Any]) -> Reply:
        memory_id, asked = values["memoryId"], values.get("namespace")
        missing: dict[str, Any] = {"count": 0, "total": 0, "truncated": False, "timeline": []}
        try:
            # The service's history, as `remnic timeline` reads it: a deleted memory's too.
            found, events = self.memory.located_timeline(memory_id)
        except NotFoundError as exc:
            said = exc
            try:  # a file not committed yet: said only to a caller who may read it
                self._memory(principal, memory_id, asked)
            except NotFoundError as unreadable:
                said = unreadable
            return self._not_found(principal, values, said, **missing)
        namespace = namespace_for_path(found.working_path)  # where its file is, or was
        if not self.policy.can_read(principal, namespace) or asked not in (None, namespace):
            return self._not_found(principal, values, self._missing(memory_id), **missing)
        # The newest events when cut (still oldest first): the memory's current state is the last one.
        kept = events[-values["limit"] :]
        body = {
            "found": True,
            "memoryId": found.memory_id or memory_id,  # asked by path: the id its file holds
            "path": found.working_path,
            "namespace": namespace,
            "deleted": found.working is None,
            "count": len(kept),
            "total": len(events),
            "truncated": len(kept) < len(events),
            "timeline": kept,
        }
        return Reply(200, body)

    def op_memories_list(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        sort, limit, offset = values["sort"], values["limit"], values["offset"]
        filters = {k: values.get(k) for k in ("category", "status", "tag")}
        if sort == "updated_desc":  # the service's own order: let it page
            page, total = self.memory.search(values.get("query"), **filters, namespace=ns, limit=limit, offset=offset)
        else:
            matches, total = self.memory.search(values.get("query"), **filters, namespace=ns, limit=2**31, offset=0)
            matches.sort(key=compat.sort_key(sort), reverse=sort.endswith("_desc"))
            page = matches[offset : offset + limit]
        end = offset + len(page)
        body = {
            "namespace": ns or self.policy.default,
            "sort": sort,
            "query": values.get("query"),
            "queryMode": "filter",
            "total": total,
            "count": len(page),
            "limit": values["limit"],
            "offset": values["offset"],
            "nextOffset": end if end < total else None,
            "memories": _records(page),
        }
        return Reply(200, {**body, **self._malformed(principal, ns)})

    def _malformed(self, principal: str, ns: str | None) -> dict[str, Any]:
        """``{malformed: [{path, problem}]}`` for the unreadable memory files a listing had to leave
        out (in ``ns``, or in any namespace the principal reads), else nothing: a client paging through
        every memory must learn that one is missing. ``remnic doctor`` names them too."""
        _, problems = self.memory.check_files()
        found: dict[str, list[str]] = {}
        for p in problems:
            if not p.path:
                continue
            # A file outside namespaces/ belongs to the default namespace (memfile/paths.py).
            in_ns = namespace_for_path(p.path) if p.path.startswith(NAMESPACES_DIR + "/") else self.policy.default
            if (ns is None or in_ns == ns) and self.policy.can_read(principal, in_ns):
                found.setdefault(p.path, []).append(replace(p, path=None).describe())
        if not found:
            return {}
        return {"malformed": [{"path": path, "problem": "; ".join(found[path])} for path in sorted(found)]}

    def op_memory_search(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        hits = self.memory.recall(
            values["query"],
            top_k=values["limit"],
            namespace=ns,
            category=values.get("category"),
            source=values["_source"],
        )
        results = [self._hit(h, False) for h in hits]
        results = [r for r in results if self.policy.can_read(principal, r.get("namespace") or self.policy.default)]
        results = [{**r, "snippet": compat.preview(r["content"], compat.SNIPPET_CHARS)} for r in results]
        return Reply(
            200,
            {
                "query": values["query"],
                "namespace": ns or self.policy.default,
                "count": len(results),
                "results": results,
            },
        )

    def op_observe(self, principal: str, values: dict[str, Any]) -> Reply:
        if values.get("messages") is None:  # a flush at a session's end has nothing new to send
            if not values["flush"]:
                raise ValidationError.single("messages", "is required (leave it out only with flush: true)")
            values = {**values, "messages": []}
        ns = self.policy.resolve(principal, values.get("namespace"), write=True)

        def observe() -> Reply:
            result = self.memory.observe(
                values["sessionKey"],
                values["messages"],
                namespace=ns,
                source=values["_source"],
                flush=values["flush"],
                extract=not values["skipExtraction"],
                dry_run=values["dryRun"],
            )
            body = {
                "accepted": result.received,
                "sessionKey": result.session_key,
                "namespace": result.namespace,
                "effectiveNamespace": result.namespace,
                "lcmArchived": not result.dry_run,  # a dry run archives nothing
                "extractionQueued": not values["skipExtraction"] and not result.dry_run and result.pending > 0,
                **result.to_dict(),
            }
            return Reply(202, body)

        return self._write(principal, "observe", {**values, "namespace": ns}, observe)

    def op_review_queue_list(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        limit, offset = values["limit"], values.get("offset") or 0
        page = queue_listing(
            self.memory, namespace=ns, limit=limit, offset=offset, readable=lambda n: self.policy.can_read(principal, n)
        )
        queued, total = page.memories, page.total
        # Same keys as memories_list (a list of memory records is always "memories", paged the same way),
        # each with why it waits, as `remnic review list --json` says it.
        body = {
            "namespace": ns or self.policy.default,
            "count": len(queued),
            "memories": [{**m, "queueReason": page.reason(m["id"])} for m in _records(queued)],
            "total": total,
            "offset": offset,
            "limit": limit,
            "nextOffset": offset + len(queued) if offset + len(queued) < total else None,
        }
        return Reply(200, {**body, **self._malformed(principal, ns)})


__all__ = ["Api", "Reply", "error_reply", "internal_error"]
