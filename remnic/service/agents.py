"""The agents' operations of the ``Memory`` facade: the transcript archive, entities, feedback,
suggestions, the profile, the day's digest and coding context.

A mixin, so each operation is a ``Memory`` method every surface calls while its logic lives
in its own module (:mod:`.lcm`, :mod:`.state`, …) and ``memory.py`` stays small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError
from remnic.lazy import LazyModule

from . import arguments as _check
from . import state as _state

if TYPE_CHECKING:
    from . import feedback as _feedback
    from . import lcm as _lcm
    from . import profile as _profile
    from .memory import Memory
    from .writes import WriteResult
else:  # each loads with the first call that needs it, not with every Memory
    _feedback = LazyModule("remnic.service.feedback")
    _lcm = LazyModule("remnic.service.lcm")
    _profile = LazyModule("remnic.service.profile")


class AgentOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    # --- the transcript archive (LCM) ---

    def lcm_search(
        self: Memory,
        query: str,
        *,
        session_key: str | None = None,
        session_prefix: str | None = None,
        namespaces: Sequence[str] | None = None,
        limit: int = 10,
        warnings: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Archived turns matching ``query``, best first; see :func:`remnic.service.lcm.search`."""
        limit = _check.count(limit, "limit")
        return _lcm.search(
            self,
            query,
            session_key=session_key,
            session_prefix=session_prefix,
            namespaces=namespaces,
            limit=limit,
            warnings=warnings,
        )

    def lcm_scope_warning(
        self: Memory,
        *,
        session_key: str | None = None,
        session_prefix: str | None = None,
        namespaces: Sequence[str] | None = None,
    ) -> str | None:
        """For an empty search: a warning when its session or namespace filter matches no archived session,
        naming those archived (the CLI's; see :func:`remnic.service.lcm.scope_warning`)."""
        return _lcm.scope_warning(self, session_key=session_key, session_prefix=session_prefix, namespaces=namespaces)

    def lcm_status(self: Memory) -> dict[str, Any]:
        """The archive's state: turns, sessions, and whether its search index had to catch up."""
        return _lcm.status(self)

    def lcm_flush(
        self: Memory, session_key: str, namespace: str | None = None, *, source: str = "api"
    ) -> dict[str, Any]:
        """Make a session's archived turns searchable (and committed, with ``state.commit``) before compaction."""
        return _lcm.flush(self, session_key, namespace or self.settings.namespaces.default, source=source)

    def lcm_record(
        self: Memory, session_key: str, tokens_before: int, tokens_after: int, namespace: str | None = None
    ) -> dict[str, Any]:
        """Record a host compaction's token counts in the compaction ledger."""
        return _lcm.record(
            self, session_key, namespace or self.settings.namespaces.default, tokens_before, tokens_after
        )

    # --- entities ---

    def refresh_entities(
        self: Memory, *, force: bool = False, source: str = "api", progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """Rebuild remnic's entity pages from the memories (when they changed, or ``force``), in one commit."""
        from . import entities as _entities  # its extraction rules compile on import: only when used

        return _entities.refresh(self, force=force, source=source, progress=progress)

    def entities(
        self: Memory,
        *,
        query: str | None = None,
        entity_type: str | None = None,
        namespace: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[dict[str, Any]], int]:
        """Entity summaries sorted by name, and the total before paging: the pages as a refresh would write
        them, shown without writing anything (``refresh_entities`` writes them)."""
        from . import entities as _entities

        limit, offset = _check.count(limit, "limit"), _check.count(offset, "offset")
        return _entities.list_entities(
            self, query=query, entity_type=entity_type, namespace=namespace, limit=limit, offset=offset
        )

    def entity(self: Memory, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        """One entity page (by id, name or alias) as the original's EntityFile JSON; NotFoundError if none."""
        from . import entities as _entities

        return _entities.get_entity(self, name, namespace=namespace)

    # --- feedback ---

    def feedback(
        self: Memory,
        memory_id: str,
        vote: str | None = None,
        *,
        signal: str | None = None,
        note: str | None = None,
        session_key: str | None = None,
        source: str = "api",
    ) -> dict[str, Any]:
        """A vote (``up``/``down``, or ``signal`` thumbs_up/thumbs_down) on a memory: its usage counters
        raised in one commit, the vote in ``state/feedback.jsonl``; see :mod:`remnic.service.feedback`."""
        return _feedback.feedback(
            self, memory_id, _feedback.vote_of(vote, signal), note=note, session_key=session_key, source=source
        )

    def observe_citations(
        self: Memory,
        entries: Sequence[Any],
        *,
        rollout_ids: Sequence[str] = (),
        namespace: str | None = None,
        readable: Any = None,
        source: str = "api",
    ) -> dict[str, Any]:
        """The memories an answer cited (``[{path, lineStart, lineEnd}]``): usage counters raised, one commit."""
        return _feedback.citations(
            self, entries, rollout_ids=rollout_ids, namespace=namespace, readable=readable, source=source
        )

    # --- suggestions, profile, the day's digest ---

    def suggest(self: Memory, content: str, **options: Any) -> WriteResult:
        """Store ``content`` as a ``pending_review`` memory (a suggestion a person approves or rejects);
        the options are :meth:`store`'s. ``sourceReason`` defaults to saying it was suggested."""
        extra = dict(options.pop("extra", None) or {})
        extra["status"] = "pending_review"
        extra.setdefault("sourceReason", "submitted via suggestion_submit")
        return self.store(content, extra=extra, **options)

    def profile(self: Memory, *, namespace: str | None = None) -> dict[str, Any]:
        """The user's preferences, rules and principles, and identity facts, compiled by rules."""
        return _profile.profile(self, namespace=namespace)

    def day_summary(
        self: Memory, *, day: str | None = None, time_zone: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        """The memories created or changed on one day, by category (no LLM: nothing summarised)."""
        return _profile.day_summary(self, day=day, time_zone=time_zone, namespace=namespace)

    def pinned_memories(self: Memory, *, min_importance: float | None = None) -> list[Any]:
        """Rules, principles and important preferences (``hooks.pinnedMinImportance``): what a new
        session always gets, most binding first."""
        floor = self.settings.hooks.pinned_min_importance if min_importance is None else min_importance
        return _profile.pinned(self, min_importance=floor)

    # --- coding context ---

    def project_context(
        self: Memory,
        *,
        cwd: str | None = None,
        project_tag: str | None = None,
        coding_context: Mapping[str, Any] | None = None,
    ) -> Any:
        """The project a recall or write is for, or None: ``project_tag`` wins over ``cwd`` (read from
        the git repository's files, no git run), which wins over a client's ``coding_context``
        ``{projectId, branch, rootPath, defaultBranch}``. Pass it to :meth:`recall` as ``project``."""
        from remnic.recall import project as _project  # the recall layer loads on demand

        if project_tag is not None and project_tag.strip():
            return _project.from_tag(project_tag)
        if cwd is not None and cwd.strip():
            return _project.from_cwd(cwd)
        if coding_context is not None:
            keys = ("projectId", "branch", "rootPath", "defaultBranch")
            extra = sorted(set(coding_context) - set(keys))
            missing = [k for k in keys if k not in coding_context]
            if extra or missing:
                raise ValidationError.single(
                    "codingContext",
                    f"needs exactly {', '.join(keys)}"
                    + (f"; unknown: {', '.join(extra)}" if extra else "")
                    + (f"; missing: {', '.join(missing)}" if missing else ""),
                )
            for key, limit in (("projectId", 128), ("rootPath", 1024)):
                value = coding_context[key]
                if not isinstance(value, str) or not 1 <= len(value) <= limit:
                    raise ValidationError.single(f"codingContext.{key}", f"must be a string of 1 to {limit} characters")
            for key in ("branch", "defaultBranch"):
                if coding_context[key] is not None and not isinstance(coding_context[key], str):
                    raise ValidationError.single(f"codingContext.{key}", "must be a string or null")
            return _project.from_dict(coding_context)
        return None

    # --- durable state ---

    def commit_state(self: Memory, reason: str, *, source: str = "api") -> str | None:
        """With ``state.commit``: commit the state files changed since the last state commit."""
        return _state.commit_state(self, reason, source=source)

    def state_status(self: Memory) -> dict[str, Any]:
        return _state.state_status(self.root)
