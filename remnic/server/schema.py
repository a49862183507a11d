"""Declared inputs of every API operation: one table drives HTTP validation and MCP input schemas.

Each operation lists its :class:`~.params.Param` declarations here; :mod:`.params` checks a request
against them and turns them into the JSON Schema an MCP client sees in ``tools/list``.
"""

from __future__ import annotations

from typing import Any

from remnic.config import StoreSettings
from remnic.memfile.model import CATEGORIES, STATUSES
from remnic.service.conversations import SOURCE_FORMATS

from .compat import DISCLOSURES, SORTS, TAG_MATCHES
from .original_routes import original_operations
from .params import MEMORY_ID, NAMESPACE, Operation, Param
from .schema_agents import CODING_CONTEXT_SHAPE, agent_operations, capture_operation, suggestion_operation

RECALL_MODES = ("auto", "no_recall", "minimal", "full", "graph_mode")
XRAY_FORMATS = ("json", "text", "markdown")
STORE_STATUSES = ("active", "pending_review")
SCHEMA_VERSIONS = (1,)

_SESSION = Param("sessionKey", "string", "conversation/session identifier", max_length=512)
_CWD = Param(
    "cwd", "string", "working directory (accepted for Remnic compatibility; not used yet)", compat=True, max_length=2048
)
_TAG = Param(
    "projectTag",
    "string",
    "project name (accepted for Remnic compatibility; not used yet)",
    compat=True,
    max_length=256,
)
PROJECT_CWD = Param(
    "cwd",
    "string",
    "working directory: its git repository is the project (read from its files), whose memories recall "
    "boosts and writes are tagged with",
    max_length=2048,
)
PROJECT_TAG = Param(
    "projectTag", "string", "the project by name (wins over cwd); its memories get recall.projectBoost", max_length=256
)
CODING_CONTEXT = Param(
    "codingContext",
    "object",
    "{projectId, branch, rootPath, defaultBranch}: the project as the original's coding context (cwd and "
    "projectTag win); null is the same as leaving it out",
    nullable=True,
    object_schema=CODING_CONTEXT_SHAPE,
)
TAG_ITEM: dict[str, Any] = {
    "type": "string",
    "maxLength": 64,
    "pattern": r"^[^,\n]*[^\s,][^,\n]*$",
    "description": "up to 64 characters, no commas or newlines",
}
"""One stored tag, as memfile's TAG_RE checks it (after trimming spaces)."""
MESSAGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "role": {"type": "string", "enum": ["user", "assistant"]},
        "content": {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "object"}, "description": "content blocks ({type: text, text})"},
            ]
        },
        "speaker": {"type": "string", "description": "who said it (a name), for the user's turns"},
        "turnId": {"type": ["string", "integer"]},
        "timestamp": {"type": ["string", "number"], "description": "ISO 8601, epoch seconds or a date"},
        "name": {"type": "string", "description": "an OpenAI message's name: the speaker when none is given"},
        "sourceFormat": {"type": "string", "enum": list(SOURCE_FORMATS), "description": "the client's format"},
        "parts": {"type": "array", "items": {"type": "object"}, "description": "structured parts, archived"},
    },
    "required": ["role", "content"],
    "additionalProperties": False,
}
"""One observe message, as the service checks it (remnic/observe/transcripts.py check_messages)."""


RECALL_FILTERS = (
    Param("category", "string", "only memories of this category", options=CATEGORIES),
    Param(
        "statuses",
        "array",
        "admit only these statuses (default: active)",
        item_schema={"type": "string", "enum": list(STATUSES)},
        items="string",
        max_length=len(STATUSES),
    ),
    Param(
        "includeSuperseded",
        "boolean",
        "also memories a newer one superseded, each ranked below its successor (added to statuses)",
        default=False,
    ),
    Param(
        "includeInactive",
        "boolean",
        "every status: superseded, forgotten, rejected … too, ranked below active ones (not with statuses)",
        default=False,
    ),
    Param("tags", "array", "only memories with these tags", items="string", max_length=50),
    Param("tagMatch", "string", "any tag (default) or all of them", options=TAG_MATCHES, default="any"),
    Param("asOf", "string", "only memories valid at this ISO time", max_length=64),
)
"""Which memories a recall may return: the CLI's filter flags (``query``/``xray``), one set for the
recall and X-ray operations."""


def _compat(name: str, kind: str, what: str, **bounds: Any) -> Param:
    """A request field the original Remnic accepts that has no meaning here: accepted, and named in
    the response's ``warnings``."""
    return Param(name, kind, f"{what} (accepted for Remnic compatibility; no effect here)", compat=True, **bounds)


def build_operations(store: StoreSettings) -> dict[str, Operation]:
    """Every operation, with the limits and defaults that come from settings taken from ``store``."""
    ops = {
        op.name: op
        for op in (
            Operation("health", "Service health: version, principal and namespace.", tool=False),
            Operation(
                "recall",
                "Hybrid recall (BM25 + local embeddings) of the memories most relevant to a query.",
                (
                    Param("query", "string", "what to recall", required=True, max_length=4000),
                    _SESSION,
                    NAMESPACE,
                    Param("topK", "integer", "maximum results (0 returns none)", minimum=0, maximum=200),
                    Param(
                        "mode",
                        "string",
                        "planner mode; no_recall returns nothing",
                        options=RECALL_MODES,
                        default="auto",
                    ),
                    Param("includeDebug", "boolean", "include score details per result", default=False),
                    Param(
                        "citations",
                        "boolean",
                        "end the response with an <oai-mem-citation> block of the results' files "
                        "(default: recall.citations)",
                    ),
                    Param(
                        "budgetChars",
                        "integer",
                        "character budget for returned contents (0 = no limit; default: recall.budgetChars)",
                        minimum=0,
                        maximum=1_000_000,
                    ),
                    Param(
                        "disclosure",
                        "string",
                        "the original's detail level, echoed per result; it never cuts content here (only budgetChars does: "
                        "a hit it trimmed has trimmed: true and contentChars)",
                        options=DISCLOSURES,
                        default="chunk",
                    ),
                    *RECALL_FILTERS,
                    _compat("includeLowConfidence", "boolean", "include low-confidence memories (they always are)"),
                    _compat("idempotencyKey", "string", "idempotency key", max_length=256),
                    CODING_CONTEXT,
                    PROJECT_CWD,
                    PROJECT_TAG,
                ),
            ),
            Operation(
                "recall_xray",
                "Recall X-ray: a fresh recall for the query with per-result attribution "
                "(tier, score decomposition, filters, budget). Same JSON as GET recall/xray.",
                (
                    Param("query", "string", "what to recall", required=True, max_length=4000),
                    _SESSION,
                    NAMESPACE,
                    Param(
                        "budget",
                        "integer",
                        "character budget override for this recall (0 = no limit; default: recall.budgetChars)",
                        minimum=0,
                        maximum=1_000_000,
                    ),
                    Param(
                        "topK",
                        "integer",
                        "maximum results, as recall's topK (0: no recall, so no snapshot; default: recall.topK)",
                        minimum=0,
                        maximum=200,
                    ),
                    *RECALL_FILTERS,
                    PROJECT_CWD,
                    PROJECT_TAG,
                ),
            ),
            Operation(
                "recall_explain",
                "The X-ray of the last recall this caller made in a session (or without one).",
                (
                    _SESSION,
                    NAMESPACE,
                    Param(
                        "format",
                        "string",
                        "json returns the snapshot; text/markdown add it rendered",
                        options=XRAY_FORMATS,
                        default="json",
                    ),
                ),
            ),
            Operation(
                "memory_store",
                "Store one memory (one markdown file, one git commit); exact duplicates are "
                "suppressed and return the existing id.",
                (
                    Param(
                        "content",
                        "string",
                        f"the memory's text (at most {store.max_content_chars} characters, store.maxContentChars)",
                        required=True,
                        max_length=store.max_content_chars,
                        enforced_by="store.maxContentChars",
                    ),
                    Param(
                        "category",
                        "string",
                        "memory category (default fact; with supersedes: the superseded memory's)",
                        options=CATEGORIES,
                    ),
                    Param("tags", "array", "tags to attach", items="string", item_schema=TAG_ITEM, max_length=50),
                    Param(
                        "confidence",
                        "number",
                        f"confidence 0..1 (default {store.default_confidence:g}, store.defaultConfidence)",
                        minimum=0,
                        maximum=1,
                    ),
                    Param(
                        "importance",
                        "number",
                        f"importance 0..1 (default {store.default_importance:g}, store.defaultImportance)",
                        minimum=0,
                        maximum=1,
                    ),
                    NAMESPACE,
                    Param("entityRef", "string", "related entity id", max_length=512),
                    Param(
                        "supersedes",
                        "string",
                        "id of the memory this one replaces (it becomes superseded; its file stays)",
                        max_length=128,
                    ),
                    Param("sourceReason", "string", "why this was stored (kept in frontmatter)", max_length=2000),
                    Param(
                        "status",
                        "string",
                        "active, or pending_review to queue it for a person",
                        options=STORE_STATUSES,
                        default="active",
                    ),
                    Param("schemaVersion", "integer", "write envelope version", options=SCHEMA_VERSIONS),
                    Param(
                        "idempotencyKey",
                        "string",
                        "repeat a write safely: the same key replays the first response",
                        max_length=256,
                    ),
                    Param("dryRun", "boolean", "validate and report without writing", default=False),
                    Param(
                        "sessionKey",
                        "string",
                        "conversation/session identifier: the session's coding context (set_coding_context) "
                        "tags the memory with its project",
                        max_length=512,
                    ),
                    _compat("ttl", "string", "time to live (ISO time or 30m/12h/7d/2w)", max_length=128),
                    PROJECT_CWD,
                    PROJECT_TAG,
                ),
                write=True,
            ),
            Operation(
                "memory_get",
                "Fetch one memory by id; a missing one is {found: false, namespace}.",
                (
                    MEMORY_ID,
                    NAMESPACE,
                    _compat("sessionKey", "string", "conversation/session identifier", max_length=512),
                ),
            ),
            Operation(
                "memory_search",
                "Search memories: ranked hybrid recall, results only (no X-ray capture).",
                (
                    Param("query", "string", "the search query", required=True, max_length=4000),
                    Param("limit", "integer", "maximum results", minimum=1, maximum=200, default=10),
                    Param("category", "string", "only this category", options=CATEGORIES),
                    NAMESPACE,
                    Param(
                        "collection",
                        "string",
                        "accepted for Remnic compatibility; must be omitted or 'global'",
                        options=("global",),
                        compat=True,
                    ),
                    _compat("mode", "string", "search mode", options=("search", "hybrid", "bm25", "vector")),
                ),
                aliases=(("maxResults", "limit"),),
            ),
            Operation(
                "memory_timeline",
                "A memory's lifecycle from git: one event per commit.",
                (
                    MEMORY_ID,
                    NAMESPACE,
                    Param(
                        "limit",
                        "integer",
                        "at most this many events: the newest ones, oldest first (total and truncated say "
                        "whether older ones were left out)",
                        minimum=1,
                        default=200,
                    ),
                ),
            ),
            Operation(
                "memories_list",
                "Browse memories with filters and paging (newest first).",
                (
                    Param(
                        "query",
                        "string",
                        "every term must appear in content, tags or id (case-insensitive)",
                        max_length=4000,
                    ),
                    Param("status", "string", "only this status", options=STATUSES),
                    Param("category", "string", "only this category", options=CATEGORIES),
                    Param("tag", "string", "only memories with this tag", max_length=64),
                    NAMESPACE,
                    Param("limit", "integer", "page size", minimum=1, maximum=200, default=50),
                    Param("offset", "integer", "skip this many matches", minimum=0, default=0, maximum=2**31 - 1),
                    Param("sort", "string", "order of the matches", options=SORTS, default="updated_desc"),
                ),
                tool=False,
                aliases=(("q", "query"),),
            ),
            Operation(
                "observe",
                "Feed conversation messages to the observation pipeline: archived, buffered per session, and "
                "turned into memories when the buffer flushes (flush=true forces it).",
                (
                    Param("sessionKey", "string", "conversation session identifier", required=True, max_length=512),
                    Param(
                        "messages",
                        "array",
                        "[{role: user|assistant, content (text or content blocks), speaker?, turnId?, timestamp?}] "
                        "in order; only text is observed (a message of tool or image blocks only is skipped, and "
                        "named in warnings); [] or left out only with flush: true, to flush what the session holds",
                        items="object",
                        item_schema=MESSAGE,
                        max_length=1000,
                    ),
                    NAMESPACE,
                    Param(
                        "skipExtraction",
                        "boolean",
                        "archive only: the turns are not buffered nor turned into memories",
                        default=False,
                    ),
                    Param(
                        "flush",
                        "boolean",
                        "flush the session's buffer now (e.g. at the end of a session)",
                        default=False,
                    ),
                    Param(
                        "dryRun",
                        "boolean",
                        "return what this request would do (the flushes its triggers would run, their observations, "
                        "the turns left pending; with flush, a flush of everything); write nothing",
                        default=False,
                    ),
                    Param(
                        "idempotencyKey",
                        "string",
                        "repeat safely: the same key replays the first response",
                        max_length=256,
                    ),
                    _CWD,
                    _TAG,
                ),
                write=True,
            ),
            Operation(
                "review_queue_list",
                "Memories waiting for review (pending_review, quarantined), newest first.",
                (
                    NAMESPACE,
                    Param("limit", "integer", "maximum items", minimum=1, maximum=200, default=50),
                    Param(
                        "offset",
                        "integer",
                        "skip this many first (page with nextOffset)",
                        minimum=0,
                        default=0,
                        maximum=2**31 - 1,
                    ),
                    _compat("runId", "string", "governance run id", max_length=256),
                ),
            ),
            *agent_operations(store),
            *original_operations(),
        )
    }
    ops["suggestion_submit"] = suggestion_operation(ops["memory_store"])
    ops["memory_capture"] = capture_operation(ops["memory_store"])
    return ops


OPERATIONS: dict[str, Operation] = build_operations(StoreSettings())
"""The operations under default settings: names and shapes. A server validates with
``Api.operations``, built from the settings it runs with."""
