"""Declared inputs of every API operation: one table drives HTTP validation and MCP input schemas.

An operation's parameters are declared once (name, JSON type, bounds, options);
``validate`` checks a request against them, collecting every problem with the
field it concerns and the valid options, and ``json_schema`` turns the same
declaration into the JSON Schema an MCP client sees in ``tools/list``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from remnic.config import StoreSettings
from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.model import CATEGORIES, ID_RE, NAMESPACE_RE, STATUSES
from remnic.memfile.validate import strings_problems

from .compat import DISCLOSURES, SORTS, TAG_MATCHES

RECALL_MODES = ("auto", "no_recall", "minimal", "full", "graph_mode")
XRAY_FORMATS = ("json", "text", "markdown")
STORE_STATUSES = ("active", "pending_review")
SCHEMA_VERSIONS = (1,)

_JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    """JSON type: string, integer, number, boolean, array or object."""
    description: str
    required: bool = False
    options: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    items: str | None = None
    """Element type of an array."""
    pattern: str | None = None
    """A regular expression the whole string must match (advertised as the JSON Schema ``pattern``)."""
    default: Any = None
    compat: bool = False
    """Accepted for compatibility with Remnic clients; has no effect here."""
    enforced_by: str | None = None
    """The service setting that enforces ``max_length`` (e.g. store.maxContentChars): the bound is
    advertised in the JSON Schema but left to the service's own check, so there is one limit with
    one message on every surface."""

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "description": self.description}
        if self.options is not None:
            out["enum"] = list(self.options)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.max_length is not None:
            out["maxLength" if self.kind == "string" else "maxItems"] = self.max_length
        if self.kind == "string" and self.required:
            out["minLength"] = 1
        if self.pattern is not None:
            out["pattern"] = self.pattern
        if self.items is not None:
            out["items"] = {"type": self.items}
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    params: tuple[Param, ...] = ()
    write: bool = False
    tool: bool = True
    """Exposed as an MCP tool (remnic_<name>, remnic.<name>, engram.<name>)."""
    aliases: tuple[tuple[str, str], ...] = ()
    """(other name, parameter) pairs: the original Remnic's names for a parameter (``maxResults``)."""
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(p.name for p in self.params) + tuple(a for a, _ in self.aliases))

    def input_schema(self) -> dict[str, Any]:
        properties = {p.name: p.schema() for p in self.params}
        for alias, name in self.aliases:
            properties[alias] = {**properties[name], "description": f"same as {name} (the original Remnic's name)"}
            properties[alias].pop("default", None)
        return {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }


def _type_ok(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if kind == "number" and isinstance(value, float) and not math.isfinite(value):
        return False
    return isinstance(value, _JSON_TYPES[kind])


def _coerce(value: str, kind: str) -> Any:
    """A query-string value as the declared type; unchanged when it does not parse (validation reports it)."""
    if kind == "integer":
        try:
            return int(value, 10)
        except ValueError:
            return value
    if kind == "number":
        try:
            return float(value)
        except ValueError:
            return value
    if kind == "boolean" and value.lower() in ("true", "1", "false", "0"):
        return value.lower() in ("true", "1")
    return value


def validate(op: Operation, args: Any, *, from_query: bool = False) -> dict[str, Any]:
    """The arguments with defaults filled in, or a ValidationError naming every bad field."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ValidationError.single("", f"arguments must be a JSON object, got {type(args).__name__}")
    problems: list[FieldProblem] = []
    out: dict[str, Any] = {}
    declared = {p.name: p for p in op.params}
    if op.aliases:
        args = dict(args)
        for alias, name in op.aliases:
            if alias in args:
                if args.get(name) is not None:
                    problems.append(FieldProblem(alias, f"is another name for {name}; give one of them"))
                args[name] = args.pop(alias)
    for key in args:
        if key not in declared:
            problems.append(FieldProblem(str(key), "unknown field", options=op.names or ("(none)",)))
    for p in op.params:
        if p.name not in args or args[p.name] is None:
            if p.required:
                problems.append(FieldProblem(p.name, f"is required ({p.description})"))
            elif p.default is not None:
                out[p.name] = p.default
            continue
        value = args[p.name]
        if from_query and isinstance(value, str):
            value = _coerce(value, p.kind)
        if not _type_ok(value, p.kind):
            problems.append(
                FieldProblem(
                    p.name,
                    f"must be {'an' if p.kind[0] in 'aio' else 'a'} {p.kind}, got {type(value).__name__} {value!r}"[
                        :200
                    ],
                )
            )
            continue
        problems += _check_bounds(p, value)
        # NUL and lone surrogates (what undecodable bytes become) in any string, nested ones included.
        problems += strings_problems(value, p.name)
        out[p.name] = value
    if problems:
        summary = (
            problems[0].describe() if len(problems) == 1 else f"request validation failed ({len(problems)} problems)"
        )
        raise ValidationError(summary, problems=problems)
    return out


def _check_bounds(p: Param, value: Any) -> list[FieldProblem]:
    problems = []
    if p.options is not None and value not in p.options:
        problems.append(FieldProblem(p.name, f"unknown value {value!r}", options=[str(o) for o in p.options]))
    if p.minimum is not None and isinstance(value, (int, float)) and value < p.minimum:
        problems.append(FieldProblem(p.name, f"must be at least {p.minimum:g}, got {value!r}"))
    if p.maximum is not None and isinstance(value, (int, float)) and value > p.maximum:
        problems.append(FieldProblem(p.name, f"must be at most {p.maximum:g}, got {value!r}"))
    if p.kind == "string" and p.required and not value.strip():
        problems.append(FieldProblem(p.name, "must not be empty"))
    if p.pattern is not None and isinstance(value, str) and value and not re.fullmatch(p.pattern, value):
        problems.append(FieldProblem(p.name, f"{value[:80]!r} does not match {p.pattern} ({p.description})"))
    if (
        p.max_length is not None
        and p.enforced_by is None
        and isinstance(value, (str, list))
        and len(value) > p.max_length
    ):
        unit = "characters" if isinstance(value, str) else "items"
        problems.append(FieldProblem(p.name, f"has {len(value)} {unit}; the limit is {p.max_length}"))
    if p.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            if not _type_ok(item, p.items):
                problems.append(FieldProblem(f"{p.name}[{i}]", f"must be a {p.items}, got {type(item).__name__}"))
    return problems


# --- the operations ---

_NS = Param(
    "namespace",
    "string",
    "namespace to act on (default: the caller's own namespace, else the default); lowercase letters, digits, "
    "'-' and '_'",
    max_length=64,
    pattern=NAMESPACE_RE.pattern,
)
_SESSION = Param("sessionKey", "string", "conversation/session identifier", max_length=512)
_CWD = Param("cwd", "string", "working directory (accepted for Remnic compatibility; not used yet)", compat=True)
_TAG = Param("projectTag", "string", "project name (accepted for Remnic compatibility; not used yet)", compat=True)
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
    "projectTag win)",
)


def _compat(name: str, kind: str, what: str, **bounds: Any) -> Param:
    """A request field the original Remnic accepts that has no meaning here: accepted, and named in
    the response's ``warnings``."""
    return Param(name, kind, f"{what} (accepted for Remnic compatibility; no effect here)", compat=True, **bounds)


_MEMORY_ID = Param(
    "memoryId", "string", "the memory's id (frontmatter `id`)", required=True, max_length=128, pattern=ID_RE.pattern
)


def build_operations(store: StoreSettings) -> dict[str, Operation]:
    """Every operation, with the limits and defaults that come from settings taken from ``store``."""
    from .schema_agents import agent_operations, suggestion_operation

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
                    _NS,
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
                        "budgetChars", "integer", "character budget for returned contents", minimum=1, maximum=1_000_000
                    ),
                    Param(
                        "disclosure",
                        "string",
                        "the original's detail level, echoed per result; results always carry the full content here",
                        options=DISCLOSURES,
                        default="chunk",
                    ),
                    Param("tags", "array", "only memories with these tags", items="string", max_length=50),
                    Param("tagMatch", "string", "any tag (default) or all of them", options=TAG_MATCHES, default="any"),
                    Param("asOf", "string", "only memories valid at this ISO time", max_length=64),
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
                    _NS,
                    Param(
                        "budget", "integer", "character budget override for this recall", minimum=1, maximum=1_000_000
                    ),
                    PROJECT_CWD,
                    PROJECT_TAG,
                ),
            ),
            Operation(
                "recall_explain",
                "The X-ray of the last recall this caller made in a session (or without one).",
                (
                    _SESSION,
                    _NS,
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
                    Param("category", "string", "memory category", options=CATEGORIES, default="fact"),
                    Param("tags", "array", "tags to attach", items="string", max_length=50),
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
                    _NS,
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
                (_MEMORY_ID, _NS, _compat("sessionKey", "string", "conversation/session identifier", max_length=512)),
            ),
            Operation(
                "memory_search",
                "Search memories: ranked hybrid recall, results only (no X-ray capture).",
                (
                    Param("query", "string", "the search query", required=True, max_length=4000),
                    Param("limit", "integer", "maximum results", minimum=1, maximum=200, default=10),
                    Param("category", "string", "only this category", options=CATEGORIES),
                    _NS,
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
                    _MEMORY_ID,
                    _NS,
                    Param("limit", "integer", "at most this many events, oldest first", minimum=1, default=200),
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
                    _NS,
                    Param("limit", "integer", "page size", minimum=1, maximum=200, default=50),
                    Param("offset", "integer", "skip this many matches", minimum=0, default=0),
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
                        "in order",
                        required=True,
                        items="object",
                        max_length=1000,
                    ),
                    _NS,
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
                        "return the observations a flush would make; write nothing",
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
                    _NS,
                    Param("limit", "integer", "maximum items", minimum=1, maximum=200, default=50),
                    _compat("runId", "string", "governance run id", max_length=256),
                ),
            ),
            *agent_operations(store),
        )
    }
    ops["suggestion_submit"] = suggestion_operation(ops["memory_store"])
    return ops


OPERATIONS: dict[str, Operation] = build_operations(StoreSettings())
"""The operations under default settings: names and shapes. A server validates with
``Api.operations``, built from the settings it runs with."""
