"""Output schemas of the agents' operations (see :mod:`.outputs`); merged into ``OUTPUT_SCHEMAS``."""

from __future__ import annotations

from .shapes import BOOLEAN, INTEGER, JSON, NULLABLE_STRING, NUMBER, STRING, WARNINGS, obj

LCM_HIT: JSON = obj(
    {
        "sessionId": {"type": "string", "description": "the session key (the original's name)"},
        "content": {"type": "string", "description": "the turn, or an excerpt around the first matching word"},
        "turnIndex": {"type": "integer", "description": "the turn's position in its session"},
        "sessionKey": STRING,
        "namespace": STRING,
        "role": {"type": "string", "enum": ["user", "assistant"]},
        "ts": {"type": "string", "description": "when the turn was archived"},
        "score": NUMBER,
    },
    description="one archived turn",
)

ENTITY_SUMMARY: JSON = obj(
    {
        "name": STRING,
        "type": {"type": "string", "description": "person, project, tool, place, company, topic or other"},
        "updated": STRING,
        "summary": {"type": "string", "description": "the synthesis's first paragraph"},
        "aliases": {"type": "array", "items": STRING},
        "factCount": INTEGER,
        "id": STRING,
        "path": STRING,
        "namespace": STRING,
        "managed": {"type": "boolean", "description": "true when remnic builds the page from the memories"},
    },
    description="one entity page, summarised",
)
ENTITY: JSON = obj(
    {
        "name": STRING,
        "type": STRING,
        "updated": STRING,
        "summary": STRING,
        "synthesis": STRING,
        "facts": {"type": "array", "items": STRING},
        "timeline": {
            "type": "array",
            "items": obj(
                {"timestamp": STRING, "text": STRING}, {"source": STRING, "session": STRING, "principal": STRING}
            ),
        },
        "relationships": {"type": "array", "items": obj({"target": STRING, "label": STRING})},
        "activity": {"type": "array", "items": obj({"date": STRING, "note": STRING})},
        "aliases": {"type": "array", "items": STRING},
        "extraSections": {"type": "array", "items": obj({"title": STRING, "body": STRING})},
        "id": STRING,
        "path": STRING,
        "namespace": STRING,
        "created": STRING,
        "memoryIds": {"type": "array", "items": STRING, "description": "the memories the timeline cites"},
        "managed": BOOLEAN,
    },
    description="the original Remnic's EntityFile, plus where the page is and the memories it cites",
)

MEMORY_LINE: JSON = obj(
    {"id": STRING, "category": STRING, "content": STRING, "importance": NUMBER},
    {"updated": NULLABLE_STRING, "status": STRING},
    description="one memory, its text on one line",
)
NO_LLM_NOTE: JSON = {"type": "string", "description": "says the output is compiled by rules, with no LLM"}
CODING_CONTEXT: JSON = obj(
    {
        "projectId": STRING,
        "branch": NULLABLE_STRING,
        "rootPath": STRING,
        "defaultBranch": NULLABLE_STRING,
    },
    {"projectName": STRING, "names": {"type": "array", "items": STRING}},
    description="the original's coding context, plus the names a memory may give the project by",
)

AGENT_OUTPUT_SCHEMAS: dict[str, JSON] = {
    "lcm_search": obj(
        {
            "query": STRING,
            "namespace": STRING,
            "results": {"type": "array", "items": LCM_HIT},
            "count": INTEGER,
            "lcmEnabled": BOOLEAN,
        },
        {"warnings": WARNINGS},
    ),
    "lcm_status": obj(
        {
            "enabled": BOOLEAN,
            "archiveAvailable": BOOLEAN,
            "stats": obj({"totalTurns": INTEGER}, {"sessions": INTEGER}),
        },
        {"archiveDir": STRING, "index": {"type": "object"}, "unreadable": {"type": "object"}},
    ),
    "lcm_compaction_flush": obj(
        {"enabled": BOOLEAN, "flushed": BOOLEAN, "sessionKey": STRING, "namespace": STRING},
        {
            "reason": STRING,
            "archivedTurns": INTEGER,
            "indexedTurns": INTEGER,
            "stateCommit": {"type": "string", "description": "the commit holding state/ (state.commit)"},
            "warnings": WARNINGS,
        },
    ),
    "lcm_compaction_record": obj(
        {"enabled": BOOLEAN, "recorded": BOOLEAN, "sessionKey": STRING, "namespace": STRING},
        {"reason": STRING, "turnsArchived": INTEGER, "warnings": WARNINGS},
    ),
    "memory_entities": obj(
        {
            "namespace": STRING,
            "total": INTEGER,
            "count": INTEGER,
            "limit": INTEGER,
            "offset": INTEGER,
            "entities": {"type": "array", "items": ENTITY_SUMMARY},
        },
        {"warnings": WARNINGS},
    ),
    "entity_get": obj(
        {"found": BOOLEAN, "namespace": STRING},
        {"entity": ENTITY, "error": STRING, "code": STRING, "warnings": WARNINGS},
        description="found false (with the error and code saying so) when no page matches",
    ),
    "memory_feedback": obj(
        {
            "recorded": BOOLEAN,
            "memoryId": STRING,
            "vote": {"type": "string", "enum": ["up", "down"]},
            "status": STRING,
            "reinforcement_count": INTEGER,
            "accessCount": INTEGER,
            "feedbackUp": INTEGER,
            "feedbackDown": INTEGER,
            "lastRecalledAt": STRING,
            "namespace": STRING,
        },
        {"commit": NULLABLE_STRING, "warnings": WARNINGS},
    ),
    "review_disposition": obj(
        {
            "ok": BOOLEAN,
            "memoryId": STRING,
            "status": STRING,
            "previousStatus": STRING,
            "reasonCode": STRING,
            "decision": {
                "type": "string",
                "description": "approved, dismissed, flagged (superseded: approved as superseded)",
            },
            "queueReason": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "description": "why it waited for review when decided, as review-queue's queueReason said; null: "
                "nothing said (an active memory flagged, a status set by hand)",
            },
            "alsoChanged": {
                "type": "array",
                "items": obj({"id": STRING, "path": STRING, "change": STRING}),
                "description": "each other memory the decision's commit changed",
            },
            "namespace": STRING,
        },
        {
            "commit": NULLABLE_STRING,
            "warnings": {
                **WARNINGS,
                "description": "what the decision did that needs a look, as `remnic review` prints it: field "
                "supersedes (a claim on a memory replaced since, dropped; nothing superseded), field status (approved "
                "as superseded: overtaken by a later value; a flag hiding the value its memory replaced), field "
                "gitIndex (git's index lagging behind the commit)",
            },
        },
    ),
    "memory_promote": obj(
        {
            "promoted": BOOLEAN,
            "memoryId": STRING,
            "sourceMemoryId": STRING,
            "path": {"type": "string", "description": "the new memory's path in the target"},
            "namespace": STRING,
            "commit": NULLABLE_STRING,
        },
        {
            "space": {"type": "string", "description": "the target space, when one was named"},
            "sourceSpace": STRING,
            "warnings": WARNINGS,
        },
        description="promoted false: the same text was already there (memoryId names it)",
    ),
    "citations_observed": obj(
        {
            "ok": BOOLEAN,
            "submitted": INTEGER,
            "matched": INTEGER,
            "entriesReceived": INTEGER,
            "rolloutIdsReceived": INTEGER,
            "memoryIds": {"type": "array", "items": STRING},
        },
        {"commit": NULLABLE_STRING, "warnings": WARNINGS},
    ),
    "memory_profile": obj(
        {
            "namespace": STRING,
            "profile": {"type": "string", "description": "the profile as markdown"},
            "identity": {"type": "array", "items": MEMORY_LINE},
            "preferences": {"type": "array", "items": MEMORY_LINE},
            "rules": {"type": "array", "items": MEMORY_LINE, "description": "rules and principles"},
            "counts": {"type": "object"},
            "generatedBy": {"type": "string", "enum": ["rules"]},
            "note": NO_LLM_NOTE,
        },
        {"profileFile": {"type": "string", "description": "profile.md, when a person wrote one"}, "warnings": WARNINGS},
    ),
    "day_summary": obj(
        {
            "date": STRING,
            "timeZone": STRING,
            "namespace": NULLABLE_STRING,
            "total": INTEGER,
            "changedCount": INTEGER,
            "counts": {"type": "object"},
            "sections": {
                "type": "array",
                "items": obj(
                    {"category": STRING, "count": INTEGER, "memories": {"type": "array", "items": MEMORY_LINE}}
                ),
            },
            "decisions": {"type": "array", "items": MEMORY_LINE},
            "commitments": {"type": "array", "items": MEMORY_LINE},
            "changed": {"type": "array", "items": MEMORY_LINE},
            "summary": {"type": "string", "description": "the digest as markdown"},
            "generatedBy": {"type": "string", "enum": ["rules"]},
            "llm": {"type": "boolean", "enum": [False]},
            "note": NO_LLM_NOTE,
        },
        {"warnings": WARNINGS},
    ),
    "set_coding_context": obj(
        {
            "ok": BOOLEAN,
            "sessionKey": STRING,
            "codingContext": {"anyOf": [CODING_CONTEXT, {"type": "null"}]},
        },
        {"warnings": WARNINGS},
    ),
}


def store_output(store: JSON, operation: str) -> JSON:
    """memory_store's output with the operation it names (suggestion_submit, memory_capture)."""
    out = {**store, "properties": {**store["properties"]}}
    out["properties"]["operation"] = {"type": "string", "enum": [operation]}
    return out


def suggestion_schema(store: JSON) -> JSON:
    return store_output(store, "suggestion_submit")
