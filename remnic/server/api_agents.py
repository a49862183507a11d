"""The agents' operations over HTTP and MCP: transcript archive, entities, feedback, suggestions,
profile, day summary and coding context.

A mixin of :class:`~.api.Api`, so every handler runs through the same ``Api.call``
(validation, namespace policy, rate limit, idempotency) and a tool's result is
byte-for-byte its route's body.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from remnic.errors import NotFoundError, ValidationError
from remnic.service import lcm as _lcm
from remnic.service.feedback import check_citations, vote_of

from . import compat
from .reply import Reply

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from remnic.memfile.model import MemoryRecord
    from remnic.service.memory import Memory

    from .auth import NamespacePolicy

NOTE_BLOCK = re.compile(r"</?\s*memory_note\b", re.IGNORECASE)
CONTEXTS = 1024
"""How many (principal, session) coding contexts set_coding_context keeps (the oldest go first)."""


def _reply(status: int, body: Any) -> Reply:
    return Reply(status, body)


class AgentApi:
    """Mixed into :class:`~.api.Api`, which sets these."""

    memory: Memory
    policy: NamespacePolicy
    _last_lock: threading.Lock
    _contexts: dict[tuple[str, str], Any]
    _write: Callable[[str, str, dict[str, Any], Callable[[], Reply]], Reply]
    _store: Callable[[str, dict[str, Any], str], Reply]
    _memory: Callable[..., MemoryRecord]
    _not_found: Callable[..., Reply]
    config_report: dict[str, Any] | None = None
    """What health says about config changed since the server started (set by :mod:`.config_watch`)."""

    def restart_notes(self) -> dict[str, Any]:
        """Health's keys for what only a restart applies: ``configStale``… and ``codeChanged`` (an
        upgrade replaced remnic's files under this server)."""
        from .codestamp import code_changed, started_stamp

        out = dict(self.config_report or {})
        if started_stamp() is not None:
            out["codeChanged"] = code_changed()
        return out

    # --- the transcript archive (LCM) ---

    def op_lcm_search(self, principal: str, values: dict[str, Any]) -> Reply:
        # A namespace the caller may not read is 403 namespace_forbidden, as on every read route.
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        warnings: list[str] = []  # a query of stopwords only, searched as a phrase: as the CLI warns
        results = self.memory.lcm_search(
            values["query"],
            session_key=values.get("sessionKey"),
            session_prefix=values.get("sessionPrefix"),
            namespaces=[ns] if ns is not None else None,
            limit=values["limit"],
            warnings=warnings,
        )
        body: dict[str, Any] = {
            "query": values["query"],
            "namespace": ns or self.policy.default,
            "results": results,
            "count": len(results),
            "lcmEnabled": True,
        }
        if warnings:  # as recall's: each opens with what it is about ("query: …")
            body["warnings"] = [compat.warning(w.split(" ", 1)[0].rstrip(":"), w) for w in warnings]
        return _reply(200, body)

    def op_lcm_status(self, principal: str, values: dict[str, Any]) -> Reply:
        if not self.policy.enabled:
            return _reply(200, self.memory.lcm_status())
        # Counts only what this principal may read: how much others talked is theirs.
        return _reply(200, _lcm.status(self.memory, lambda ns: self.policy.can_read(principal, ns)))

    def op_lcm_compaction_flush(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=True)
        assert ns is not None

        def flush() -> Reply:
            return _reply(200, self.memory.lcm_flush(values["sessionKey"], ns, source=values["_source"]))

        return self._write(principal, "lcm_compaction_flush", {**values, "namespace": ns}, flush)

    def op_lcm_compaction_record(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=True)
        assert ns is not None

        def record() -> Reply:
            body = self.memory.lcm_record(values["sessionKey"], values["tokensBefore"], values["tokensAfter"], ns)
            return _reply(200, body)

        return self._write(principal, "lcm_compaction_record", {**values, "namespace": ns}, record)

    # --- entities ---

    def op_memory_entities(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        rows, total = self.memory.entities(
            query=values.get("q"),
            entity_type=values.get("type"),
            namespace=ns,
            limit=values["limit"],
            offset=values["offset"],
        )
        rows = [r for r in rows if self.policy.can_read(principal, r["namespace"])]
        body = {
            "namespace": ns or self.policy.default,
            "total": total,
            "count": len(rows),
            "limit": values["limit"],
            "offset": values["offset"],
            "entities": rows,
        }
        return _reply(200, body)

    def op_entity_get(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        try:
            entity = self.memory.entity(values["name"], namespace=ns)
        except NotFoundError as exc:
            return self._not_found(principal, values, exc)
        if not self.policy.can_read(principal, entity["namespace"]):
            return self._not_found(principal, values, NotFoundError(f"no entity named {values['name'][:100]!r}"))
        return _reply(200, {"found": True, "namespace": entity["namespace"], "entity": entity})

    # --- feedback ---

    def op_memory_feedback(self, principal: str, values: dict[str, Any]) -> Reply:
        vote_of(values.get("vote"), values.get("signal"))  # arguments before the lookup: both named in one answer
        record = self._memory(principal, values["memoryId"], values.get("namespace"))
        self.policy.resolve(principal, record.namespace, write=True)  # voting changes the memory's file

        def vote() -> Reply:
            body = self.memory.feedback(
                record.id,
                values.get("vote"),
                signal=values.get("signal"),
                note=values.get("note"),
                session_key=values.get("sessionKey"),
                source=values["_source"],
            )
            return _reply(200, {**body, "namespace": record.namespace})

        return self._write(principal, "memory_feedback", values, vote)

    def op_review_disposition(self, principal: str, values: dict[str, Any]) -> Reply:
        record = self._memory(principal, values["memoryId"], values.get("namespace"))
        self.policy.resolve(principal, record.namespace, write=True)

        def decide() -> Reply:
            result = self.memory.review_disposition(
                record.id, values["status"], reason_code=values["reasonCode"], source=values["_source"]
            )
            said = result.to_dict()  # the CLI's keys for what the decision did, why the memory waited
            body = {
                "ok": True,
                "memoryId": record.id,
                "status": result.record.status,
                "previousStatus": record.status,
                "reasonCode": values["reasonCode"],
                **{k: said[k] for k in ("decision", "queueReason", "alsoChanged")},
                "namespace": record.namespace,
                "commit": result.commit,
            }
            if said.get("warnings"):  # a claim dropped, a value a flag hides: what the CLI prints under its answer
                body["warnings"] = said["warnings"]
            return _reply(200, body)

        return self._write(principal, "review_disposition", values, decide)

    def op_memory_promote(self, principal: str, values: dict[str, Any]) -> Reply:
        record = self._memory(principal, values["memoryId"], values.get("namespace"))
        space = values.get("targetSpace")
        target_ns = values.get("targetNamespace") or (None if space else "shared")
        resolved = self.policy.resolve(principal, target_ns or record.namespace, write=True)

        def promote() -> Reply:
            try:
                result = self.memory.promote(record.id, to_space=space, namespace=resolved, source=values["_source"])
            except ValidationError as exc:
                # The Python API names its keywords (to_space, namespace): name the fields the caller sent.
                renamed = {"to_space": "targetSpace", "to": "targetSpace", "namespace": "targetNamespace"}
                for problem in exc.problems:
                    problem.field = renamed.get(problem.field, problem.field)
                message = exc.message
                for old, new in renamed.items():
                    if message.startswith(f"{old}: "):
                        message = f"{new}: " + message.removeprefix(f"{old}: ")
                raise ValidationError(message, problems=exc.problems) from None
            copy = result.record
            body: dict[str, Any] = {
                "promoted": result.changed,
                "memoryId": copy.id,
                "sourceMemoryId": record.id,
                "path": copy.path,
                "namespace": copy.namespace,
                "commit": result.commit,
            }
            if space:
                body["space"] = space
            if copy.frontmatter.get("sourceSpace"):
                body["sourceSpace"] = str(copy.frontmatter["sourceSpace"])
            return _reply(200, body)

        return self._write(principal, "memory_promote", values, promote)

    def op_citations_observed(self, principal: str, values: dict[str, Any]) -> Reply:
        # Every key checked before anything is written: a typo is a 400 naming it, never a silent no-op.
        entries, rollouts = check_citations(values["citations"])
        ns = values.get("namespace")
        if ns is not None:
            self.policy.resolve(principal, ns, write=True)

        def observe() -> Reply:
            body = self.memory.observe_citations(
                entries,
                rollout_ids=rollouts,
                namespace=ns,
                readable=lambda namespace: self.policy.can_write(principal, namespace),
                source=values["_source"],
            )
            return _reply(200, {**body, "entriesReceived": len(entries)})

        return self._write(principal, "citations_observed", values, observe)

    # --- suggestions, profile, the day's digest ---

    def op_suggestion_submit(self, principal: str, values: dict[str, Any]) -> Reply:
        return self._store(principal, values, "suggestion_submit")

    def op_memory_capture(self, principal: str, values: dict[str, Any]) -> Reply:
        # One note a call: a <memory_note> block inside is the model wrapping notes it meant to capture apart.
        if NOTE_BLOCK.search(values["content"]):
            raise ValidationError.single(
                "content", "holds a <memory_note> block: capture each note's own text, one note a call"
            )
        return self._store(principal, {**values, "status": "active"}, "memory_capture")

    def op_memory_profile(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        return _reply(200, self.memory.profile(namespace=ns))

    def op_day_summary(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        body = self.memory.day_summary(day=values.get("date"), time_zone=values.get("timeZone"), namespace=ns)
        return _reply(200, body)

    # --- coding context ---

    def project_for(self, principal: str, values: dict[str, Any]) -> Any:
        """The project a request is for: its projectTag, cwd or codingContext, else the one
        set_coding_context chose for its session; None when there is none."""
        project = self.memory.project_context(
            cwd=values.get("cwd"), project_tag=values.get("projectTag"), coding_context=values.get("codingContext")
        )
        if project is None and values.get("sessionKey"):
            with self._last_lock:
                project = self._contexts.get((principal, values["sessionKey"]))
        return project

    def op_set_coding_context(self, principal: str, values: dict[str, Any]) -> Reply:
        given = values.get("_given", frozenset())
        key = (principal, values["sessionKey"])
        clear = "codingContext" in given and values.get("codingContext") is None
        if clear:
            with self._last_lock:
                self._contexts.pop(key, None)
            return _reply(200, {"ok": True, "sessionKey": values["sessionKey"], "codingContext": None})
        project = self.memory.project_context(
            cwd=values.get("cwd"), project_tag=values.get("projectTag"), coding_context=values.get("codingContext")
        )
        if project is None:
            raise ValidationError.single(
                "codingContext", "codingContext or projectTag is required (or cwd; codingContext null clears)"
            )
        with self._last_lock:
            self._contexts.pop(key, None)
            self._contexts[key] = project
            while len(self._contexts) > CONTEXTS:
                self._contexts.pop(next(iter(self._contexts)))
        return _reply(200, {"ok": True, "sessionKey": values["sessionKey"], "codingContext": project.to_dict()})
