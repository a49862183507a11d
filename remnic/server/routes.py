"""HTTP routing: which operation a method and path name, and the query strings of GET routes.

Every route lives under both ``/engram/v1/`` and ``/remnic/v1/``. Path segments are decoded
one by one and anything that could step outside its place ('..', an encoded '/', NUL) is
refused; memory ids must match the id pattern.
"""

from __future__ import annotations

from urllib.parse import parse_qs, unquote

from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.model import ID_RE
from remnic.memfile.schema import nfc_id

from .errors import MethodNotAllowed, NotProvided, RouteNotFound

PREFIXES = ("/engram/v1/", "/remnic/v1/")
ID = "{id}"
NAME = "{name}"
# (method, path segments) → operation. ``{id}`` matches one memory id, ``{name}`` any one segment.
ROUTES: dict[tuple[str, ...], dict[str, str]] = {
    ("health",): {"GET": "health"},
    ("recall",): {"POST": "recall"},
    ("recall", "xray"): {"GET": "recall_xray"},
    ("recall", "explain"): {"POST": "recall_explain"},
    ("memories",): {"GET": "memories_list", "POST": "memory_store"},
    ("memories", ID): {"GET": "memory_get"},
    ("memories", ID, "timeline"): {"GET": "memory_timeline"},
    ("observe",): {"POST": "observe"},
    ("review-queue",): {"GET": "review_queue_list"},
    ("review-disposition",): {"POST": "review_disposition"},
    ("lcm", "search"): {"POST": "lcm_search"},
    ("lcm", "status"): {"GET": "lcm_status"},
    ("lcm", "compaction", "flush"): {"POST": "lcm_compaction_flush"},
    ("lcm", "compaction", "record"): {"POST": "lcm_compaction_record"},
    ("memories", ID, "feedback"): {"POST": "memory_feedback"},
    ("memories", ID, "promote"): {"POST": "memory_promote"},
    ("citations", "observed"): {"POST": "citations_observed"},
    ("suggestions",): {"POST": "suggestion_submit"},
    ("profile",): {"GET": "memory_profile"},
    ("day-summary",): {"GET": "day_summary", "POST": "day_summary"},
    ("coding-context",): {"POST": "set_coding_context"},
    ("entities",): {"GET": "memory_entities"},
    ("entities", NAME): {"GET": "entity_get"},
    ("maintenance",): {"GET": "maintenance"},
    ("action-confidence",): {"POST": "action_confidence"},
}
NOT_PROVIDED: dict[tuple[str, ...], str] = {
    ("trust-zones", "status"): "trust zones",
    ("trust-zones", "records"): "trust zones",
    ("trust-zones", "promote"): "trust zones",
    ("trust-zones", "demo-seed"): "trust zones",
}
"""The original's routes remnic answers 501 not_implemented, not a bare 404: what they serve has no
counterpart here (no trust-zone store; a memory's status and the review queue play that part)."""
# Query-string names of GET routes whose HTTP spelling differs from the operation's fields (seed 000/001).
# None: accepted and ignored (the original's X-ray ``disclosure``; an X-ray body carries no warnings,
# because its bytes are the renderer's on every surface).
QUERY_ALIASES: dict[str, dict[str, str | None]] = {
    "recall_xray": {
        "q": "query",
        "session": "sessionKey",
        "namespace": "namespace",
        "budget": "budget",
        "topK": "topK",
        "cwd": "cwd",
        "projectTag": "projectTag",
        "disclosure": None,
        # The recall filters; a list is comma-separated (statuses=active,superseded).
        "category": "category",
        "statuses": "statuses",
        "includeSuperseded": "includeSuperseded",
        "includeInactive": "includeInactive",
        "tags": "tags",
        "tagMatch": "tagMatch",
        "asOf": "asOf",
    },
}
MAX_QUERY_FIELDS = 50


def _segments(path: str) -> list[str] | None:
    """Decoded path segments; None when any segment could step outside its place ('..', '/', NUL)."""
    out = []
    for raw in path.split("/"):
        seg = unquote(raw, errors="strict") if "%" in raw else raw
        if seg in ("", ".", "..") or "/" in seg or "\\" in seg or "\x00" in seg:
            return None
        out.append(seg)
    return out


BARE = {"/v1/citations/observed": "citations/observed"}
"""Routes the original serves without a prefix (as well as under both prefixes here)."""


def route(method: str, path: str) -> tuple[str, dict[str, str]]:
    """(operation, path arguments) for a request, or RouteNotFound / MethodNotAllowed."""
    rest = BARE.get(path) or next((path[len(p) :] for p in PREFIXES if path.startswith(p)), None)
    try:
        segments = _segments(rest) if rest is not None else None
    except UnicodeDecodeError:
        segments = None
    if not segments:
        raise RouteNotFound(
            f"no route {method} {path[:200]}; routes live under /engram/v1/ and /remnic/v1/ (see docs/server.md)"
        )
    missing = NOT_PROVIDED.get(tuple(segments))
    if missing is not None:
        raise NotProvided(
            f"{method} {path[:200]} is the original Remnic's route; remnic does not provide {missing} "
            "(see 'Clients written for the original Remnic' in docs/server.md)"
        )
    for pattern, methods in ROUTES.items():
        if len(pattern) != len(segments):
            continue
        args: dict[str, str] = {}
        for want, got in zip(pattern, segments):
            if want == ID:
                if not ID_RE.match(got):
                    raise RouteNotFound(f"no memory with id {got[:140]!r}")
                args["memoryId"] = nfc_id(got)  # `cafe%CC%81-1` names the memory `café-1`
            elif want == NAME:
                args["name"] = got
            elif want != got:
                break
        else:
            if method not in methods:
                raise MethodNotAllowed(
                    f"{method} is not allowed on {path}; allowed: {', '.join(methods)}", allow=list(methods)
                )
            return methods[method], args
    raise RouteNotFound(f"no route {method} {path[:200]} (see docs/server.md for the routes)")


def query_args(op: str, query: str) -> dict[str, str]:
    try:
        # Bytes that are not UTF-8 stay lone surrogates, which validation refuses (as in a JSON body).
        parsed = parse_qs(query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS, errors="surrogateescape")
    except ValueError:  # "Max number of fields exceeded"
        raise ValidationError.single("query", f"more than {MAX_QUERY_FIELDS} query parameters") from None
    aliases = QUERY_ALIASES.get(op)
    problems, out = [], {}
    for key, values in parsed.items():
        if len(values) > 1:
            problems.append(FieldProblem(key, "given more than once"))
            continue
        if aliases is not None:
            if key not in aliases:
                problems.append(FieldProblem(key, "unknown query parameter", options=list(aliases)))
                continue
            target = aliases[key]
            if target is None:
                continue
            key = target
        out[key] = values[0]
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)
    return out


def http_names(op: str, exc: ValidationError) -> ValidationError:
    """Name fields as the caller spelled them in the query string (``q``, not ``query``)."""
    reverse = {field: name for name, field in QUERY_ALIASES.get(op, {}).items() if field is not None}
    if not reverse:
        return exc
    for problem in exc.problems:
        problem.field = reverse.get(problem.field, problem.field)
    message = exc.problems[0].describe() if len(exc.problems) == 1 else exc.message
    return type(exc)(message, problems=exc.problems)
