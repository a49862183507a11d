"""The one Recall X-ray renderer: text, markdown and JSON.

Every surface (CLI, HTTP, MCP, legacy recall/explain markdown) renders a
snapshot through this module, so they cannot drift. ``render_xray`` is pure
and deterministic: same snapshot in, same bytes out.

All formatting decisions are made here, in small pure helpers; the Jinja2
templates in ``remnic/render/templates`` only lay out an already-prepared view model
and apply one escaping filter per format (``line`` for text, ``cell`` /
``inline`` for markdown).
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from .snapshot import SCORE_TERMS, RecallXraySnapshot, XrayResult

__all__ = [
    "FORMATS",
    "NOT_FOUND_JSON",
    "dumps_json",
    "fmt_score",
    "fmt_time",
    "make_environment",
    "parse_format",
    "render_xray",
    "snapshot_envelope",
]

FORMATS: tuple[str, ...] = ("text", "markdown", "json")

TEMPLATE_DIR = Path(__file__).parent / "templates"
TEMPLATE_NAMES: dict[str, str] = {"text": "xray.txt.j2", "markdown": "xray.md.j2"}

NA = "n/a"
UNKNOWN = "unknown"


# --------------------------------------------------------------------------
# format parsing
# --------------------------------------------------------------------------


def parse_format(value: str) -> str:
    """Validate a format name (case-insensitive, surrounding blanks ignored).

    Raises ValueError listing the valid options for anything else.
    """
    if isinstance(value, str):
        norm = value.strip().lower()
        if norm in FORMATS:
            return norm
    raise ValueError(f"unknown format {value!r}; valid options: {', '.join(FORMATS)}")


# --------------------------------------------------------------------------
# pure value formatters
# --------------------------------------------------------------------------


def _real(value: Any) -> float | None:
    """A finite real number, else None (bools are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        if not math.isfinite(value):
            return None
    except OverflowError:  # int too large for a float
        return None
    return value


def _fixed(value: Any, places: int) -> str:
    v = _real(value)
    if v is None:
        return NA
    text = f"{v:.{places}f}"
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]  # no "-0.0000"
    return text


def fmt_score(value: Any) -> str:
    """A score term with four decimals; non-finite / non-number -> ``n/a``."""
    return _fixed(value, 4)


def fmt_confidence(value: Any) -> str:
    """A confidence with two decimals; non-finite / non-number -> ``n/a``."""
    return _fixed(value, 2)


def fmt_count(value: Any) -> str:
    """An integer-ish quantity (counts, budgets, latency).

    Integral values print without a decimal point; other finite floats print
    with up to three decimals; non-finite / non-number -> ``n/a``.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    v = _real(value)
    if v is None:
        return NA
    if float(v).is_integer():
        return str(int(v))
    text = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def fmt_time(epoch_ms: Any) -> str:
    """Epoch milliseconds -> ``2026-04-20T17:30:00.000Z`` (UTC).

    Non-number, non-finite or out-of-range values -> ``unknown``.
    """
    v = _real(epoch_ms)
    if v is None:
        return UNKNOWN
    try:
        ms = math.floor(v)
        secs, millis = divmod(ms, 1000)
        t = _EPOCH + _dt.timedelta(seconds=secs, milliseconds=millis)
    except (OverflowError, ValueError):
        return UNKNOWN
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{millis:03d}Z"


def fmt_bool(value: Any) -> str:
    return "true" if value is True else "false"


def fmt_list(values: Any, sep: str = ", ") -> str:
    return sep.join(str(v) for v in (values or ()))


def fmt_score_line(score: Any) -> str:
    """``final=0.8912 vector=… bm25=…`` with only the present terms."""
    parts = [f"final={fmt_score(getattr(score, 'final', None))}"]
    for attr, _key in SCORE_TERMS:
        value = getattr(score, attr, None)
        if value is not None:
            parts.append(f"{attr}={fmt_score(value)}")
    return " ".join(parts)


# --------------------------------------------------------------------------
# escaping (used as Jinja filters)
# --------------------------------------------------------------------------

# Line-breaking characters (str.splitlines() splits on all of these).
_LINE_BREAKS = ("\r\n", "\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _control_escape(ch: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if ch in named:
        return named[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_TEXT_TABLE = {
    code: _control_escape(chr(code))
    for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]
    if code != 0x09  # a tab cannot break a line; keep it
}


def text_line(value: Any) -> str:
    """Keep a value on one line of the text format: control characters and
    line breaks become visible escapes (``\\n``, ``\\r``, ``\\x00``...)."""
    return str(value).translate(_TEXT_TABLE)


def _collapse_breaks(text: str, repl: str) -> str:
    for br in _LINE_BREAKS:
        text = text.replace(br, repl)
    return text


_MD_CONTROL_TABLE = {
    code: "\\" + _control_escape(chr(code))  # "\\" renders as a literal backslash
    for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
    if code != 0x09
}


def md_cell(value: Any) -> str:
    """Make a value safe inside a GitHub table cell: backslashes and pipes are
    escaped, line breaks become ``<br>``, other control characters are shown
    as escapes. User text can never add or split a column or a row."""
    text = str(value).replace("\\", "\\\\").replace("|", "\\|")
    text = _collapse_breaks(text, "<br>")
    return text.translate(_MD_CONTROL_TABLE)


def md_inline(value: Any) -> str:
    """Make a value safe on a single markdown line (headings, list items):
    line breaks collapse to a space, other control characters are escaped."""
    return _collapse_breaks(str(value), " ").translate(_MD_CONTROL_TABLE)


# --------------------------------------------------------------------------
# view model
# --------------------------------------------------------------------------


def _provenance_line(prov: Any) -> str:
    parts = [f"source={prov.source}"]
    if prov.created is not None:
        parts.append(f"created={prov.created}")
    if prov.updated is not None:
        parts.append(f"updated={prov.updated}")
    if prov.namespace is not None:
        parts.append(f"namespace={prov.namespace}")
    parts.append(f"scope={prov.scope}")
    parts.append(f"confidence={fmt_confidence(prov.confidence)}")
    parts.append(f"stale={fmt_bool(prov.stale)}")
    # ``corrected`` shows the correction state when there is one
    # (e.g. ``corrected=superseded``), else the boolean.
    state = prov.correction_state
    corrected = state if state and state != "none" else fmt_bool(prov.corrected)
    parts.append(f"corrected={corrected}")
    parts.append(f"safe={fmt_bool(prov.safe_to_use)}")
    return " ".join(parts)


def _result_fields(r: XrayResult) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = [("path", r.path), ("score", fmt_score_line(r.score))]
    prov = r.provenance
    if prov is not None:
        fields.append(("provenance", _provenance_line(prov)))
        if prov.retrieval_reason:
            fields.append(("retrieval-reason", prov.retrieval_reason))
        if prov.user_context_scopes:
            fields.append(("context-scopes", fmt_list(prov.user_context_scopes)))
        if prov.safety != "safe":
            safety = prov.safety or UNKNOWN
            if prov.safety_reasons:
                safety += f" ({fmt_list(prov.safety_reasons)})"
            fields.append(("safety", safety))
    if r.graph_path:
        fields.append(("graph-path", fmt_list(r.graph_path, " -> ")))
    if r.graph_edge_confidences:
        fields.append(("edge-confidences", ", ".join(fmt_confidence(c) for c in r.graph_edge_confidences)))
    fields.append(("admitted-by", fmt_list(r.admitted_by) if r.admitted_by else "(none)"))
    if r.rejected_by is not None:
        fields.append(("rejected-by", r.rejected_by))
    if r.audit_entry_id is not None:
        fields.append(("audit-entry", r.audit_entry_id))
    return fields


def build_view_model(snapshot: RecallXraySnapshot | None) -> dict[str, Any]:
    """Everything the templates print, already formatted (but not escaped)."""
    if snapshot is None:
        return {"found": False}
    s = snapshot
    header: list[tuple[str, str]] = [
        ("query", s.query),
        ("snapshot-id", s.snapshot_id),
        ("captured-at", fmt_time(s.captured_at)),
    ]
    if s.session_key is not None:
        header.append(("session", s.session_key))
    if s.namespace is not None:
        header.append(("namespace", s.namespace))
    if s.trace_id is not None:
        header.append(("trace-id", s.trace_id))
    header.append(("budget", f"{fmt_count(s.budget.used)} / {fmt_count(s.budget.chars)} chars"))

    filters = []
    for f in s.filters:
        try:
            rejected = fmt_count(f.considered - f.admitted)
        except TypeError:
            rejected = NA
        filters.append(
            {
                "name": f.name,
                "considered": fmt_count(f.considered),
                "admitted": fmt_count(f.admitted),
                "rejected": rejected,
                "reason": f.reason or "",
            }
        )

    results = [
        {
            "index": i,
            "id": r.memory_id,
            "served_by": r.served_by,
            "fields": _result_fields(r),
        }
        for i, r in enumerate(s.results, start=1)
    ]

    tier = None
    te = s.tier_explain
    if te is not None:
        tier_fields: list[tuple[str, str]] = [
            ("tier", te.tier),
            ("reason", te.reason),
            ("candidates-considered", fmt_count(te.candidates_considered)),
            ("latency-ms", fmt_count(te.latency_ms)),
        ]
        if te.filtered_by:
            tier_fields.append(("filtered-by", fmt_list(te.filtered_by)))
        tier = {"fields": tier_fields, "anchors": list(te.source_anchors)}

    return {
        "found": True,
        "header": header,
        "filters": filters,
        "results": results,
        "tier": tier,
    }


# --------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------


def _json_safe(obj: Any) -> Any:
    """Copy of ``obj`` that strict JSON can encode: non-finite floats become
    None, tuples become lists, mapping keys become strings."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


# The "no snapshot" sentinel has one canonical single-line form.
NOT_FOUND_JSON = '{"snapshotFound": false}\n'


def _is_not_found(obj: Any) -> bool:
    return isinstance(obj, Mapping) and len(obj) == 1 and obj.get("snapshotFound") is False


def dumps_json(obj: Any) -> str:
    """The canonical X-ray JSON serialiser shared by every surface:
    2-space indent, UTF-8 kept as-is, key order preserved, NaN/Infinity ->
    null, one trailing newline. The bare ``{"snapshotFound": false}``
    envelope is always the single line ``NOT_FOUND_JSON``."""
    if _is_not_found(obj):
        return NOT_FOUND_JSON
    return json.dumps(_json_safe(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _coerce(snapshot: RecallXraySnapshot | Mapping[str, Any] | None) -> RecallXraySnapshot | None:
    if snapshot is None or isinstance(snapshot, RecallXraySnapshot):
        return snapshot
    if isinstance(snapshot, Mapping):
        # Accept our own envelopes back: {"snapshotFound": false} and
        # {"snapshotFound": true, "snapshot": {...}}.
        found = snapshot.get("snapshotFound")
        if found is False:
            return None
        inner = snapshot.get("snapshot")
        if found is True and isinstance(inner, Mapping):
            return RecallXraySnapshot.from_dict(inner)
        return RecallXraySnapshot.from_dict(snapshot)
    return RecallXraySnapshot.from_dict(None)  # wrong type: an empty snapshot


def snapshot_envelope(snapshot: RecallXraySnapshot | Mapping[str, Any] | None) -> dict[str, Any]:
    """The HTTP/MCP response body: ``{"snapshotFound": true, "snapshot": {...}}``
    or ``{"snapshotFound": false}``. Serialise it with ``dumps_json``."""
    snap = _coerce(snapshot)
    if snap is None:
        return {"snapshotFound": False}
    return {"snapshotFound": True, "snapshot": snap.to_dict()}


def _flat_envelope(snap: RecallXraySnapshot | None) -> dict[str, Any]:
    if snap is None:
        return {"snapshotFound": False}
    return {"snapshotFound": True, **snap.to_dict()}


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
    env.filters["line"] = text_line
    env.filters["cell"] = md_cell
    env.filters["inline"] = md_inline
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
        return dumps_json(_flat_envelope(snap))
    template = env.get_template(TEMPLATE_NAMES[fmt])
    return template.render(**build_view_model(snap))


def render_xray(
    snapshot: RecallXraySnapshot | Mapping[str, Any] | None,
    fmt: str = "text",
) -> str:
    """Render a Recall X-ray snapshot as ``text``, ``markdown`` or ``json``.

    ``snapshot`` may be a RecallXraySnapshot, a raw camelCase dict (parsed
    tolerantly with ``RecallXraySnapshot.from_dict``) or None (no snapshot
    captured). Never raises for dict input; raises ValueError for an unknown
    format. JSON output is ``{"snapshotFound": true, <snapshot fields>}``.
    """
    return _render(snapshot, fmt, _default_environment())
