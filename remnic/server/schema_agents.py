"""Declared inputs of the agents' operations (transcript archive, entities, feedback, suggestions,
profile, day summary, coding context): the same :class:`~.params.Param` tables as the core
operations, merged into :func:`~.schema.build_operations`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from remnic.config import StoreSettings
from remnic.memfile.model import NAMESPACE_RE
from remnic.service.entities import ENTITY_TYPES

from .params import MEMORY_ID, NAMESPACE, Operation, Param

CODING_CONTEXT_SHAPE: dict[str, Any] = {
    "properties": {
        "projectId": {"type": "string", "minLength": 1, "maxLength": 128},
        "branch": {"type": ["string", "null"]},
        "rootPath": {"type": "string", "minLength": 1, "maxLength": 1024},
        "defaultBranch": {"type": ["string", "null"]},
    },
    "required": ["projectId", "branch", "rootPath", "defaultBranch"],
    "additionalProperties": False,
}
"""The original's coding context, as the service checks it (Memory.project_context)."""
CITATIONS_SHAPE: dict[str, Any] = {
    "properties": {
        "entries": {
            "type": "array",
            "description": "the memory files the answer cited",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1, "description": "the memory file's path"},
                    "lineStart": {"type": "integer", "minimum": 1},
                    "lineEnd": {"type": "integer", "minimum": 1, "description": "not before lineStart"},
                    "note": {"type": "string"},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        },
        "rolloutIds": {"type": "array", "items": {"type": "string"}, "description": "the answer's rollout ids"},
        "threadIds": {"type": "array", "items": {"type": "string"}, "description": "legacy name of rolloutIds"},
    },
    "additionalProperties": False,
}
"""The original's citations object, as the service checks it (feedback.check_citations)."""
MAX_TOKENS = 2**53 - 1
"""The largest token count a ledger line may hold: every JSON reader (JavaScript's included) reads it exactly."""
_SESSION_REQUIRED = Param("sessionKey", "string", "conversation/session identifier", required=True, max_length=512)


def suggestion_operation(memory_store: Operation) -> Operation:
    """``suggestion_submit``: ``memory_store``'s fields (the original's schema is literally the same)
    except ``status``: a suggestion always waits for review."""
    return Operation(
        "suggestion_submit",
        "Suggest a memory for a person to approve: stored as pending_review (recall shows it only as "
        "review context), one git commit; exact duplicates are suppressed. Same JSON as POST suggestions.",
        tuple(p for p in memory_store.params if p.name != "status"),
        write=True,
    )


CAPTURE_CHARS = (10, 4000)
"""How long a captured note may be (seed 003's explicit-capture rule)."""
CAPTURE_FIELDS = ("content", "category", "confidence", "namespace", "tags", "entityRef", "ttl", "sourceReason")
CAPTURE_CONFIDENCE = 0.95


def capture_operation(memory_store: Operation) -> Operation:
    """``memory_capture``: the seed's explicit capture, ``memory_store``'s write with its own rules (a
    10-4000 character note, no nested ``<memory_note>`` block, confidence 0.95 by default)."""
    low, high = CAPTURE_CHARS
    fields = {p.name: p for p in memory_store.params}
    params = [fields[name] for name in CAPTURE_FIELDS]
    params[0] = Param(
        "content",
        "string",
        f"one durable fact, decision, correction, commitment or other standalone note ({low}-{high} characters; "
        "no <memory_note> block inside)",
        required=True,
        max_length=high,
        min_length=low,
    )
    params[1] = replace(fields["category"], default="fact", description="memory category (default fact)")
    params[2] = replace(
        fields["confidence"], default=CAPTURE_CONFIDENCE, description=f"confidence 0..1 (default {CAPTURE_CONFIDENCE})"
    )
    params += [fields["dryRun"], fields["idempotencyKey"]]
    return Operation(
        "memory_capture",
        "Capture one explicit memory note (the original's memory_capture): stored active at once, one git "
        "commit; exact duplicates return the existing id; secrets, a note outside 10-4000 characters or a nested "
        "<memory_note> block are refused, naming the field. Same JSON as memory_store.",
        tuple(params),
        write=True,
    )


def agent_operations(store: StoreSettings) -> tuple[Operation, ...]:
    """The agents' operations, with limits from ``store`` where they depend on settings."""
    ns = NAMESPACE
    return (
        Operation(
            "lcm_search",
            "Full-text search of the archived conversation turns (the lossless transcript archive). Same "
            "JSON as POST lcm/search.",
            (
                Param("query", "string", "words or a phrase from the conversation", required=True, max_length=4000),
                Param("sessionKey", "string", "only this session's turns", max_length=512),
                Param("sessionPrefix", "string", "only sessions whose key starts with this", max_length=512),
                ns,
                Param("limit", "integer", "maximum results", minimum=1, maximum=100, default=10),
            ),
        ),
        Operation(
            "lcm_status",
            "The transcript archive: whether it is available and how many turns it holds.",
            (),
            tool=False,
        ),
        Operation(
            "lcm_compaction_flush",
            "Before the host compacts its context: make every archived turn of the session searchable "
            "(and committed, with state.commit).",
            (
                _SESSION_REQUIRED,
                ns,
                Param(
                    "cwd",
                    "string",
                    "working directory (accepted for Remnic compatibility)",
                    compat=True,
                    max_length=2048,
                ),
                Param(
                    "projectTag",
                    "string",
                    "project name (accepted for Remnic compatibility)",
                    compat=True,
                    max_length=256,
                ),
            ),
            write=True,
        ),
        Operation(
            "lcm_compaction_record",
            "Record a host compaction (tokens before and after) in the archive's compaction ledger.",
            (
                _SESSION_REQUIRED,
                ns,
                Param(
                    "tokensBefore",
                    "integer",
                    "context tokens before the compaction",
                    required=True,
                    minimum=0,
                    maximum=MAX_TOKENS,
                ),
                Param(
                    "tokensAfter",
                    "integer",
                    "context tokens after the compaction",
                    required=True,
                    minimum=0,
                    maximum=MAX_TOKENS,
                ),
            ),
            write=True,
        ),
        Operation(
            "memory_entities",
            "The people, projects, tools and places the memories name (entity pages, built by rules), "
            "sorted by name. Same JSON as GET entities.",
            (
                Param(
                    "q",
                    "string",
                    "only entities whose name, type, summary, aliases or facts contain this",
                    max_length=256,
                ),
                Param("type", "string", "only this kind of entity", options=ENTITY_TYPES),
                ns,
                Param("limit", "integer", "page size", minimum=1, maximum=200, default=50),
                Param("offset", "integer", "skip this many", minimum=0, default=0, maximum=2**31 - 1),
            ),
            aliases=(("query", "q"),),
        ),
        Operation(
            "entity_get",
            "One entity page: synthesis, timeline (each line citing its memory), connections, aliases; "
            "found by id (person-priya-raman), name or alias. Same JSON as GET entities/:name.",
            (Param("name", "string", "the entity's name, alias or id", required=True, max_length=256), ns),
        ),
        Operation(
            "memory_feedback",
            "Tell remnic whether a memory helped: an up vote raises its reinforcement (recall ranks it a "
            "little higher), either vote its usage count and lastRecalledAt. One commit. Give vote or "
            "signal: one of the two is required.",
            (
                MEMORY_ID,
                Param(
                    "vote",
                    "string",
                    "up or down (the original's MCP name); this or signal is required",
                    options=("up", "down"),
                ),
                Param(
                    "signal",
                    "string",
                    "thumbs_up or thumbs_down (the seed's name); this or vote is required",
                    options=("thumbs_up", "thumbs_down"),
                ),
                Param("note", "string", "why (kept in state/feedback.jsonl, not in the memory)", max_length=2000),
                ns,
                Param("sessionKey", "string", "conversation/session identifier", max_length=512),
            ),
            write=True,
        ),
        Operation(
            "review_disposition",
            "A person's decision on a memory in review (approve: active, dismiss: rejected, flag: "
            "quarantined), with the reason, as one commit. Same JSON as POST "
            "review-disposition.",
            (
                MEMORY_ID,
                Param(
                    "status",
                    "string",
                    "the memory's new status (approve: active, dismiss: rejected, flag: quarantined)",
                    required=True,
                    options=("active", "rejected", "quarantined"),
                ),
                Param(
                    "reasonCode", "string", "why, one line (kept as reviewReasonCode)", required=True, max_length=256
                ),
                ns,
            ),
            write=True,
            destructive=True,  # rejected and quarantined memories leave recall
        ),
        Operation(
            "memory_promote",
            "Promote a memory to a shared namespace (default shared) of this repository, or into another "
            "registered memory space (targetSpace), so other agents can use it: a new memory pointing back "
            "at the source (sourceMemoryId), one git commit; secrets are refused as for any write.",
            (
                MEMORY_ID,
                Param(
                    "targetNamespace",
                    "string",
                    "destination namespace (default: shared)",
                    max_length=64,
                    pattern=NAMESPACE_RE.pattern,
                ),
                Param("targetSpace", "string", "destination memory space (`remnic space list`)", max_length=64),
                ns,
            ),
            write=True,
        ),
        Operation(
            "citations_observed",
            "The memory files an answer cited ({path, lineStart, lineEnd}): each matched memory's usage "
            "count, lastRecalledAt and reinforcement are raised, in one commit. Same JSON as POST "
            "/v1/citations/observed.",
            (
                Param(
                    "citations",
                    "object",
                    "{entries: [{path, lineStart, lineEnd, note?}], rolloutIds: [string]}; an unknown key is refused",
                    required=True,
                    object_schema=CITATIONS_SHAPE,
                ),
                Param("sessionId", "string", "the conversation the answer belongs to", max_length=512),
                ns,
            ),
            write=True,
        ),
        Operation(
            "memory_profile",
            "The user's profile: preferences, rules and principles, and identity facts (name, role, home, "
            "family), most important first, plus profile.md when a person wrote one. Compiled by rules, no LLM.",
            (ns,),
        ),
        Operation(
            "day_summary",
            "A digest of one day's memories (created or changed that day), grouped by category, decisions and "
            "commitments called out. Rules only: nothing is summarised or inferred, and the output says so.",
            (
                Param("date", "string", "the day, YYYY-MM-DD (default: today)", pattern=r"^\d{4}-\d{2}-\d{2}$"),
                Param("timeZone", "string", "IANA time zone the day is in (default UTC)", max_length=64),
                ns,
                Param(
                    "sessionKey",
                    "string",
                    "conversation/session identifier (accepted; no effect)",
                    compat=True,
                    max_length=512,
                ),
                Param(
                    "memories",
                    "string",
                    "text to summarise (the original's LLM input; remnic digests the stored memories instead)",
                    max_length=100_000,
                    compat=True,
                ),
            ),
        ),
        Operation(
            "set_coding_context",
            "Set (or clear, with codingContext null) the project a session works in: its recalls then boost "
            "that project's memories and its writes are tagged with it. Give projectTag, cwd or codingContext.",
            (
                _SESSION_REQUIRED,
                Param(
                    "codingContext",
                    "object",
                    "{projectId, branch, rootPath, defaultBranch}, or null to clear the session's context",
                    nullable=True,
                    object_schema=CODING_CONTEXT_SHAPE,
                ),
                Param("projectTag", "string", "the project by name", max_length=256),
                Param("cwd", "string", "a working directory: its git repository is the project", max_length=2048),
            ),
        ),
    )
