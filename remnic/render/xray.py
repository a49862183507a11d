"""The one Recall X-ray renderer: text, markdown and JSON, as the original Remnic prints them.

Every surface (CLI, HTTP, MCP, recall/explain) renders a snapshot through
:func:`render_xray`, so they cannot drift. It is pure and deterministic: the
same snapshot gives the same bytes, and for a snapshot in the original's shape
they are the bytes the original's renderer writes (its layouts, placeholders,
ordering, and JavaScript's number and date formatting, see :mod:`.jsfmt`).
Values are printed as they are, like the original does: a newline in a query
starts a new line of the text rendering; markdown escapes ``\\`` and ``|``
where the original does and wraps identifiers in code spans.

Formatting decisions are made here, in small pure helpers that build a view
model of strings; the Jinja2 templates in ``templates/`` lay it out. remnic's
additions appear only when a snapshot carries them (``rawScores``, the
``recency``/``status``/``propagation`` score terms), so an original snapshot
renders exactly as the original renders it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from remnic.errors import ValidationError

from .jsfmt import (
    collapse_whitespace,
    is_finite_number,
    iso_time,
    js_dumps,
    js_number,
    js_string,
    js_typeof,
    lone_surrogates_replaced,
    to_fixed,
    truncate_utf16,
)
from .snapshot import DISCLOSURES, RAW_SCORE_TERMS, SCHEMA_VERSION, RecallXraySnapshot, XrayResult

__all__ = [
    "FORMATS",
    "NOT_FOUND_JSON",
    "build_view_model",
    "dumps_json",
    "format_captured_at",
    "format_score",
    "make_environment",
    "md_code",
    "md_escape",
    "parse_format",
    "provenance_summary",
    "render_xray",
    "snapshot_envelope",
]

FORMATS: tuple[str, ...] = ("json", "text", "markdown")
"""In the order the original lists them in its error message."""

TEMPLATE_DIR = Path(__file__).parent / "templates"
TEMPLATE_NAMES: dict[str, str] = {"text": "xray.txt.j2", "markdown": "xray.md.j2"}

UNKNOWN_TIME = "(unknown)"
QUOTE_CHARS = 120
"""A source quote is cut to this many (UTF-16) characters, at a word when one ends past half of it."""

# remnic's own score terms, printed after the original's when a snapshot carries them.
_EXTRA_TERMS = (
    ("recency", "recency"),
    ("status", "status"),
    ("propagation", "propagation"),
    ("date", "date"),
    ("context", "context"),
    ("rerank", "rerank"),
    ("project_boost", "project_boost"),
)


# --------------------------------------------------------------------------
# format parsing
# --------------------------------------------------------------------------


class FormatError(ValidationError, ValueError):
    """An unknown X-ray format: a ValidationError naming the argument (and a ValueError, as it was)."""


def parse_format(value: Any, *, flag: str | None = None) -> str:
    """``text``, ``markdown`` or ``json`` (case and surrounding blanks ignored); None → ``text``.

    Raises :class:`FormatError` naming the argument ``format`` and the valid options; a CLI passes
    its ``flag`` to get the original's wording, ``--format expects one of json, text, markdown; got "xml"``.
    """
    if value is None:
        return "text"
    if isinstance(value, str) and value.strip().lower() in FORMATS:
        return value.strip().lower()
    got = js_dumps(value) if isinstance(value, str) else js_typeof(value)
    if flag is not None:
        raise FormatError(f"{flag} expects one of {', '.join(FORMATS)}; got {got}")
    raise FormatError.single("format", f"unknown format {got}", options=FORMATS)


# --------------------------------------------------------------------------
# pure value formatters
# --------------------------------------------------------------------------


def format_score(value: Any) -> str:
    """A score term with four decimals (JavaScript rounding); not a finite number → ``0.0000``."""
    if not is_finite_number(value):
        return "0.0000"
    return to_fixed(value, 4)


def format_captured_at(epoch_ms: Any) -> str:
    """Epoch ms → ``2023-11-14T22:13:20.000Z``; negative, non-finite or beyond a Date → ``(unknown)``."""
    if not is_finite_number(epoch_ms) or epoch_ms < 0:
        return UNKNOWN_TIME
    return iso_time(epoch_ms) or UNKNOWN_TIME


def score_line(result: XrayResult) -> str:
    """``final=0.8700 vector=… bm25=…``: the terms present, ``reinforcement_boost`` only when > 0,
    then remnic's own terms."""
    s = result.score
    parts = [f"final={format_score(s.final)}"]
    for name, value in (
        ("vector", s.vector),
        ("bm25", s.bm25),
        ("importance", s.importance),
        ("mmr_penalty", s.mmr_penalty),
        ("tier_prior", s.tier_prior),
    ):
        if value is not None:
            parts.append(f"{name}={format_score(value)}")
    if s.reinforcement_boost is not None and s.reinforcement_boost > 0:
        parts.append(f"reinforcement_boost={format_score(s.reinforcement_boost)}")
    for name, attr in _EXTRA_TERMS:
        value = getattr(s, attr)
        if value is not None:
            parts.append(f"{name}={format_score(value)}")
    return " ".join(parts)


def raw_scores_line(result: XrayResult) -> str:
    """``vector=0.4980 bm25=7.2100``: the raw signals behind the normalised terms ('' if none)."""
    raw = result.raw_scores or {}
    return " ".join(f"{k}={format_score(raw[k])}" for k in RAW_SCORE_TERMS if k in raw)


def provenance_summary(prov: Any) -> str:
    """The original's seven ``key=value`` fields, in its order (``updated`` and ``namespace`` are
    in the JSON only)."""
    created = js_string(prov.created) if prov.created is not None else "unknown"
    return " ".join(
        (
            f"source={prov.source}",
            f"created={created}",
            f"scope={prov.scope}",
            f"confidence={to_fixed(prov.confidence, 2)}",
            f"stale={'true' if prov.stale else 'false'}",
            f"corrected={prov.correction_state if prov.corrected else 'false'}",
            f"safe={'true' if prov.safe_to_use else 'false'}",
            *((f"space={prov.space}",) if getattr(prov, "space", None) else ()),
        )
    )


def _whole_tokens(value: Any) -> int:
    return math.floor(value) if is_finite_number(value) and value >= 0 else 0


def token_spend(results: list[XrayResult]) -> dict[str, Any] | None:
    """Results and estimated tokens per disclosure level, when any result has a level."""
    buckets = {name: [0, 0] for name in (*DISCLOSURES, "unspecified")}
    for r in results:
        bucket = buckets[r.disclosure if r.disclosure in DISCLOSURES else "unspecified"]
        bucket[0] += 1
        bucket[1] += _whole_tokens(r.estimated_tokens)
    if not any(buckets[name][0] for name in DISCLOSURES):
        return None
    rows = [(name, js_number(n), js_number(t)) for name, (n, t) in buckets.items() if name != "unspecified"]
    n, t = buckets["unspecified"]
    return {"rows": rows, "unspecified": (js_number(n), js_number(t)) if n else None}


# --------------------------------------------------------------------------
# markdown escaping (Jinja filters)
# --------------------------------------------------------------------------


def md_escape(value: Any) -> str:
    """Backslashes, then pipes, escaped: all a GitHub table cell needs (nothing else changes)."""
    return js_string(value).replace("\\", "\\\\").replace("|", "\\|")


def md_code(value: Any) -> str:
    """An inline code span whose fence is one backtick longer than any run inside the value,
    padded when the value starts or ends with a backtick; ``````  for an empty value."""
    text = js_string(value)
    if not text:
        return "``"
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# --------------------------------------------------------------------------
# view model
# --------------------------------------------------------------------------


def _text(value: Any) -> str:
    """A member printed only when truthy in the original: '' for absent or empty."""
    return js_string(value) if value not in (None, "") else ""


def _result_view(r: XrayResult, rank: int) -> dict[str, Any]:
    prov = r.provenance
    provenance = None
    if prov is not None:
        provenance = {
            "summary": provenance_summary(prov),
            "retrieval_reason": prov.retrieval_reason,
            "scopes": list(prov.user_context_scopes),
            "show_safety": prov.safety != "safe" or bool(prov.safety_reasons),
            "safety": prov.safety,
            "safety_reasons": list(prov.safety_reasons),
        }
    span = r.source_span
    source = None
    if span is not None:
        quote = truncate_utf16(collapse_whitespace(span.quote), QUOTE_CHARS)
        source = {"quote": quote, "observed_at": span.observed_at, "provenance": span.provenance}
    graph = list(r.graph_path or ())
    return {
        "rank": rank,
        "memory_id": r.memory_id,
        "served_by": f"served-by={r.served_by}",
        "path": _text(r.path),
        "state_view": _text(r.state_view),
        "score": score_line(r),
        "raw_scores": raw_scores_line(r),
        "provenance": provenance,
        "source": source,
        "admitted_by": list(r.admitted_by),
        "rejected_by": _text(r.rejected_by),
        "graph_path": graph,
        "edge_confidences": [to_fixed(c, 2) for c in r.graph_edge_confidences or ()] if graph else [],
        "path_penalty": None if r.path_penalty_applied is None else ("yes" if r.path_penalty_applied else "no"),
        "path_node_ids": list(r.path_node_ids or ()),
        "audit_entry": _text(r.audit_entry_id),
        "disclosure": r.disclosure,
        "estimated_tokens": js_number(r.estimated_tokens) if r.estimated_tokens is not None else None,
    }


def build_view_model(snapshot: RecallXraySnapshot | None) -> dict[str, Any]:
    """Everything the templates print, formatted as the original formats it (not escaped)."""
    if snapshot is None:
        return {"found": False}
    s = snapshot
    tier = None
    te = s.tier_explain
    if te is not None:
        tier = {
            "tier": te.tier,
            "reason": te.tier_reason,
            "candidates": js_string(te.candidates_considered),
            "latency": js_string(te.latency_ms),
            "filtered_by": list(te.filtered_by),
            "anchors": [str(a) for a in te.source_anchors or ()],
            "vectors_pending": js_string(te.vectors_pending) if te.vectors_pending else "",
        }
    return {
        "found": True,
        "query": s.query,
        "snapshot_id": s.snapshot_id,
        "captured_at": format_captured_at(s.captured_at),
        "session": _text(s.session_key),
        "namespace": _text(s.namespace),
        "trace_id": _text(s.trace_id),
        "index_note": _text(s.index_note),
        "budget_used": js_string(s.budget.used),
        "budget_chars": js_string(s.budget.chars),
        # remnic's budget 0 means no limit (every surface): "used / 0 chars" would read as an overflow.
        "budget_shown": (
            f"{js_string(s.budget.used)} chars (no limit)"
            if s.budget.chars == 0
            else f"{js_string(s.budget.used)} / {js_string(s.budget.chars)} chars"
        ),
        "filters": [
            {
                "name": f.name,
                "considered": js_string(f.considered),
                "admitted": js_string(f.admitted),
                "reason": _text(f.reason),
            }
            for f in s.filters
        ],
        "results": [_result_view(r, i) for i, r in enumerate(s.results, start=1)],
        "token_spend": token_spend(s.results),
        "tier": tier,
    }


# --------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------

# The "no snapshot" body HTTP and MCP send: one canonical single line.
NOT_FOUND_JSON = '{"snapshotFound": false}\n'


def _is_not_found(obj: Any) -> bool:
    return isinstance(obj, Mapping) and len(obj) == 1 and obj.get("snapshotFound") is False


def dumps_json(obj: Any) -> str:
    """The serialiser of every HTTP and MCP body: ``JSON.stringify(obj, null, 2)`` (numbers as
    JavaScript prints them, NaN/Infinity → null, key order kept, UTF-8 as is) plus one newline.
    The bare ``{"snapshotFound": false}`` body is always the single line ``NOT_FOUND_JSON``."""
    if _is_not_found(obj):
        return NOT_FOUND_JSON
    return js_dumps(obj) + "\n"


def _coerce(snapshot: RecallXraySnapshot | Mapping[str, Any] | None) -> RecallXraySnapshot | None:
    if snapshot is None or isinstance(snapshot, RecallXraySnapshot):
        return snapshot
    if isinstance(snapshot, Mapping):
        # Envelopes come back as the snapshot they carry: {"snapshotFound": false, ...} is none,
        # {"snapshotFound": true, "snapshot": {...}} the inner one, the flat form itself.
        found = snapshot.get("snapshotFound")
        if found is False:
            return None
        inner = snapshot.get("snapshot")
        if found is True and isinstance(inner, Mapping):
            return RecallXraySnapshot.from_dict(inner)
        return RecallXraySnapshot.from_dict(snapshot)
    return RecallXraySnapshot.from_dict(None)  # wrong type: an empty snapshot


def snapshot_envelope(snapshot: RecallXraySnapshot | Mapping[str, Any] | None) -> dict[str, Any]:
    """The HTTP/MCP response body: ``{"snapshotFound": true, "snapshot": {...}}`` or
    ``{"snapshotFound": false}`` (the original's route and tool shape). Serialise it with
    ``dumps_json``."""
    snap = _coerce(snapshot)
    if snap is None:
        return {"snapshotFound": False}
    return {"snapshotFound": True, "snapshot": snap.to_dict()}


def _render_json(snap: RecallXraySnapshot | None) -> str:
    if snap is None:
        return js_dumps({"schemaVersion": SCHEMA_VERSION, "snapshotFound": False})
    return js_dumps({"snapshotFound": True, **snap.to_dict()})


# --------------------------------------------------------------------------
# templates
# --------------------------------------------------------------------------


def make_environment(loader: jinja2.BaseLoader | None = None) -> jinja2.Environment:
    """A Jinja2 environment configured for the X-ray templates.

    ``loader`` defaults to the package's ``templates`` directory; tests pass
    a ``DictLoader`` to prove template edits are caught by the goldens.
    """
    env = jinja2.Environment(
        loader=loader or jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["md_escape"] = md_escape
    env.filters["code"] = md_code
    return env


@functools.lru_cache(maxsize=1)
def _default_environment() -> jinja2.Environment:
    return make_environment()


def _render(
    snapshot: RecallXraySnapshot | Mapping[str, Any] | None,
    fmt: str,
    env: jinja2.Environment,
) -> str:
    fmt = parse_format(fmt)
    snap = _coerce(snapshot)
    if fmt == "json":
        out = _render_json(snap)
    else:
        out = env.get_template(TEMPLATE_NAMES[fmt]).render(**build_view_model(snap))
        # Every template line ends in a newline; the original joins its lines without a last one.
        out = out.removesuffix("\n")
    return lone_surrogates_replaced(out)


def render_xray(
    snapshot: RecallXraySnapshot | Mapping[str, Any] | None,
    fmt: str = "text",
) -> str:
    """Render a Recall X-ray snapshot as ``text``, ``markdown`` or ``json``, with no final newline.

    ``snapshot`` may be a RecallXraySnapshot, a camelCase dict (the original's shape, remnic's,
    or either envelope; read tolerantly by ``RecallXraySnapshot.from_dict``) or None (no
    snapshot captured). Never raises for dict input; raises :class:`FormatError` (a ValidationError
    naming ``format``) for an unknown format.
    JSON is flat, ``{"snapshotFound": true, <snapshot members>}``, or
    ``{"schemaVersion": "1", "snapshotFound": false}``, indented by two spaces.
    """
    return _render(snapshot, fmt, _default_environment())
