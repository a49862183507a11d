"""Output schemas: the JSON Schema of each operation's success body, advertised as a tool's
``outputSchema`` over MCP (the body is the tool result's ``structuredContent``) and checked
against real results by the tests.

Objects allow further keys (a later version may add fields without breaking a client that
validates); every key listed as required is always present.
"""

from __future__ import annotations

from remnic.memfile.model import CATEGORIES, STATUSES

from .original_routes import ACTION_CONFIDENCE_OUTPUT
from .outputs_agents import AGENT_OUTPUT_SCHEMAS, suggestion_schema
from .shapes import BOOLEAN, INTEGER, JSON, NULLABLE_STRING, NUMBER, STRING, WARNINGS, obj

FRONTMATTER: JSON = {"type": "object", "description": "the memory file's frontmatter, keys as written"}
# The original Remnic's memory-summary keys, added to every memory and hit remnic returns.
SUMMARY: dict[str, JSON] = {
    "created": STRING,
    "updated": STRING,
    "tags": {"type": "array", "items": STRING, "description": "trimmed, de-duplicated, sorted"},
    "entityRef": STRING,
    "preview": {"type": "string", "description": "the content, whitespace collapsed, first 180 characters"},
}

MALFORMED: JSON = {
    "type": "array",
    "description": "memory files that cannot be read, left out of the list (absent when there are none)",
    "items": obj({"path": STRING, "problem": STRING}),
}
MEMORY: JSON = obj(
    {
        "id": STRING,
        "path": {"type": "string", "description": "path of the memory file in the repository"},
        "namespace": STRING,
        "category": {"type": "string", "enum": list(CATEGORIES)},
        "status": {"type": "string", "enum": list(STATUSES)},
        "content": {"type": "string", "description": "the memory's text (the file's body)"},
        "frontmatter": FRONTMATTER,
    },
    SUMMARY,
    description="one memory",
)

QUEUE_REASON: JSON = {
    "anyOf": [{"type": "string"}, {"type": "null"}],
    "description": "why it waits for review: the observer's judge (its reason, a confidence below "
    "observe.reviewBelowConfidence; known where it was observed) or a person's flag; null when neither says",
}
QUEUED: JSON = {
    **MEMORY,
    "properties": {**MEMORY["properties"], "queueReason": QUEUE_REASON},
    "required": [*MEMORY["required"], "queueReason"],
    "description": "one memory waiting for review",
}

HIT: JSON = obj(
    {
        "id": STRING,
        "path": STRING,
        "namespace": NULLABLE_STRING,
        "category": STRING,
        "status": STRING,
        "score": NUMBER,
        "rank": {"type": "integer", "minimum": 1},
        "content": STRING,
        "frontmatter": FRONTMATTER,
        "safety": {
            "type": "string",
            "enum": ["safe", "requires-review", "blocked"],
            "description": "requires-review: unreviewed (pending_review), disputed, stale or low-confidence",
        },
        "safeToUse": {"type": "boolean", "description": "false unless safety is safe"},
    },
    {
        **SUMMARY,
        "disclosure": {"type": "string", "enum": ["chunk", "section", "raw"]},
        "snippet": {"type": "string", "description": "memory_search: the content, first 800 characters"},
        "space": {"type": "string", "description": "the memory space it came from (recall across spaces)"},
        "trimmed": {
            "type": "boolean",
            "enum": [True],
            "description": "the budget cut content to the memory's best passages (absent: the whole memory)",
        },
        "contentChars": {"type": "integer", "description": "the whole memory's length, on a trimmed hit"},
        "debug": {"type": "object", "description": "score terms, signals and tier (includeDebug)"},
    },
    description="one recalled memory",
)

SNAPSHOT: JSON = obj(
    {
        "schemaVersion": STRING,
        "query": STRING,
        "snapshotId": STRING,
        "capturedAt": {"type": "number", "description": "epoch milliseconds"},
        "filters": {
            "type": "array",
            "items": obj({"name": STRING, "considered": INTEGER, "admitted": INTEGER}, {"reason": STRING}),
        },
        "results": {
            "type": "array",
            "items": obj(
                {"memoryId": STRING, "path": STRING, "servedBy": STRING, "scoreDecomposition": {"type": "object"}}
            ),
        },
        "budget": obj({"chars": INTEGER, "used": INTEGER}),
    },
    {
        "tierExplain": {"type": "object"},
        "sessionKey": STRING,
        "namespace": STRING,
        "traceId": STRING,
    },
    description="the Recall X-ray snapshot (schema v1)",
)

ENVELOPE: JSON = obj(
    {"snapshotFound": BOOLEAN},
    {"snapshot": SNAPSHOT},
    description="snapshotFound false means nothing to show (and says nothing more)",
)

OUTPUT_SCHEMAS: dict[str, JSON] = {
    "recall": obj(
        {
            "query": STRING,
            "namespace": STRING,
            "context": {
                "type": "string",
                "description": "the recalled memories' text, one paragraph each; those that need review "
                "(safety requires-review) after a heading that says so, each marked [requires-review]",
            },
            "count": INTEGER,
            "memoryIds": {"type": "array", "items": STRING},
            "results": {"type": "array", "items": HIT},
            "recordedAt": STRING,
            "traceId": STRING,
            "plannerMode": {"type": "string", "enum": ["full", "no_recall"]},
            "fallbackUsed": BOOLEAN,
            "sourcesUsed": {"type": "array", "items": STRING},
            "disclosure": {"type": "string", "enum": ["chunk", "section", "raw"]},
            "budgetsApplied": obj(
                {
                    "topK": INTEGER,
                    "budgetChars": INTEGER,
                    "budgetUsed": INTEGER,
                    "appliedTopK": INTEGER,
                    "recallBudgetChars": INTEGER,
                },
                {"requestedTopK": INTEGER},
            ),
            "latencyMs": NUMBER,
        },
        {
            "sessionKey": NULLABLE_STRING,
            "auditEntryId": STRING,
            "debug": {"type": "object"},
            "codingContext": {"type": "object", "description": "the project whose memories were boosted"},
            "warnings": WARNINGS,
            "citations": {"type": "string", "description": "an <oai-mem-citation> block of the results' files"},
        },
    ),
    "recall_xray": ENVELOPE,
    "recall_explain": {
        **ENVELOPE,
        "properties": {
            **ENVELOPE["properties"],
            "format": {"type": "string", "enum": ["text", "markdown"]},
            "rendered": {"type": "string", "description": "the snapshot rendered as text or markdown"},
        },
    },
    "memory_store": obj(
        {
            "schemaVersion": {"type": "integer", "enum": [1]},
            "operation": {"type": "string", "enum": ["memory_store"]},
            "namespace": STRING,
            "dryRun": BOOLEAN,
            "accepted": BOOLEAN,
            "queued": {"type": "boolean", "description": "true when the memory waits for review"},
            "status": {"type": "string", "enum": ["validated", "stored", "duplicate", "queued_for_review"]},
            "memoryId": STRING,
            "path": STRING,
            "commit": {
                **NULLABLE_STRING,
                "description": "the git commit that holds the memory; null for a dry run or a duplicate",
            },
        },
        {
            "duplicateOf": STRING,
            "idempotencyKey": STRING,
            "idempotencyReplay": BOOLEAN,
            "project": {"type": "string", "description": "the project the memory was tagged with (cwd, projectTag)"},
            "warnings": WARNINGS,
        },
    ),
    "memory_get": obj(
        {"found": BOOLEAN, "namespace": STRING},
        {"memory": MEMORY, "error": STRING, "code": STRING, "warnings": WARNINGS},
        description="found false (no memory, the error and code saying so) when there is no such memory",
    ),
    "memory_search": obj(
        {"query": STRING, "namespace": NULLABLE_STRING, "count": INTEGER, "results": {"type": "array", "items": HIT}},
        {"warnings": WARNINGS},
    ),
    "memory_timeline": obj(
        {
            "found": BOOLEAN,
            "namespace": STRING,
            "count": {"type": "integer", "description": "how many events timeline holds"},
            "total": {"type": "integer", "description": "how many events the memory has in all"},
            "truncated": {
                "type": "boolean",
                "description": "true when the oldest events were left out (total > limit)",
            },
            "timeline": {
                "type": "array",
                "description": "the newest `limit` events, oldest first (the last one is the current state)",
                "items": obj(
                    {
                        "version": {"type": "integer", "minimum": 1},
                        "label": STRING,
                        "sha": STRING,
                        "path": STRING,
                        "date": STRING,
                        "operation": {"type": "string", "description": "Remnic-Operation trailer, or git-commit"},
                        "status": {"type": "string", "description": "the memory's status at that version"},
                    },
                    {
                        "previousPath": NULLABLE_STRING,
                        "author": STRING,
                        "subject": STRING,
                        "change": STRING,
                        "trailers": {"type": "object"},
                    },
                    description="one commit that touched the memory",
                ),
            },
        },
        {
            "memoryId": STRING,
            "path": {"type": "string", "description": "where the memory's file is, or was when it is deleted"},
            "deleted": {"type": "boolean", "description": "true when no file holds the memory now (deleted)"},
            "error": STRING,
            "code": STRING,
        },
    ),
    "observe": obj(
        {
            "accepted": INTEGER,
            "sessionKey": STRING,
            "namespace": STRING,
            "lcmArchived": BOOLEAN,
            "extractionQueued": BOOLEAN,
            "effectiveNamespace": STRING,
            "dryRun": BOOLEAN,
            "turnsReceived": INTEGER,
            "turnsBuffered": INTEGER,
            "duplicateTurns": INTEGER,
            "pendingTurns": INTEGER,
            "flushes": {"type": "array", "items": {"type": "object"}, "description": "one entry per flush run"},
            "observations": {
                "type": "array",
                "items": {"type": "object"},
                "description": "MemoryObservation records of the flushes (id, fact, importance, verdict, resultingPrimitiveId…)",
            },
        },
        {"warnings": WARNINGS},
    ),
    "review_queue_list": obj(
        {
            "namespace": NULLABLE_STRING,
            "count": INTEGER,
            "memories": {"type": "array", "items": QUEUED},
            "total": INTEGER,
            "offset": INTEGER,
            "limit": INTEGER,
            "nextOffset": {"anyOf": [INTEGER, {"type": "null"}], "description": "the next page's offset; null: last"},
        },
        {"warnings": WARNINGS, "malformed": MALFORMED},
    ),
}

OUTPUT_SCHEMAS.update(AGENT_OUTPUT_SCHEMAS)
OUTPUT_SCHEMAS["suggestion_submit"] = suggestion_schema(OUTPUT_SCHEMAS["memory_store"])
OUTPUT_SCHEMAS["action_confidence"] = ACTION_CONFIDENCE_OUTPUT
