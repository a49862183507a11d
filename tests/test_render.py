"""Unit tests for the Recall X-ray types (remnic.xray) and renderer (remnic.render)."""

from __future__ import annotations

import json
import math

import pytest

from remnic.render.snapshot import (
    CORRECTION_STATES,
    SAFETY_LEVELS,
    SCHEMA_VERSION,
    SERVED_BY_TIERS,
    Budget,
    FilterTrace,
    Provenance,
    RecallXraySnapshot,
    ScoreDecomposition,
    TierExplain,
    XrayResult,
)
from remnic.render.xray import (
    FORMATS,
    NOT_FOUND_JSON,
    dumps_json,
    fmt_score,
    fmt_time,
    md_cell,
    parse_format,
    render_xray,
    snapshot_envelope,
)


def make_snapshot(**overrides) -> RecallXraySnapshot:
    snap = RecallXraySnapshot(
        query="what editor do I use",
        snapshot_id="snap-1",
        captured_at=1776706200000,
        tier_explain=TierExplain(
            tier="direct-answer",
            reason="unambiguous",
            candidates_considered=3,
            latency_ms=8,
            filtered_by=["below-floor"],
            source_anchors=["facts/editor.md:1-3"],
        ),
        results=[
            XrayResult(
                memory_id="facts/editor",
                path="facts/editor.md",
                served_by="hybrid",
                score=ScoreDecomposition(
                    final=0.87,
                    vector=0.81,
                    bm25=0.42,
                    importance=0.9,
                    recency=0.1,
                    mmr_penalty=0.05,
                    tier_prior=0.2,
                    reinforcement_boost=0.01,
                ),
                admitted_by=["namespace", "trust-zone"],
                rejected_by="mmr",
                graph_path=["a", "b", "c"],
                graph_edge_confidences=[0.9, 0.5],
                audit_entry_id="audit-1",
                provenance=Provenance(
                    source="conversation",
                    scope="namespace:ws",
                    retrieval_reason="served-by=hybrid",
                    confidence=0.94,
                    created="2026-04-18T21:13:00.000Z",
                    updated="2026-04-19T00:00:00.000Z",
                    namespace="ws",
                    user_context_scopes=["work"],
                    stale=True,
                    corrected=True,
                    correction_state="correction",
                    safe_to_use=False,
                    safety="blocked",
                    safety_reasons=["do-not-use"],
                ),
            )
        ],
        filters=[FilterTrace("namespace", 10, 4, reason="cap=4"), FilterTrace("trust", 4, 4)],
        budget=Budget(chars=4096, used=1234),
        session_key="sess-42",
        namespace="ws",
        trace_id="trace-xyz",
    )
    for key, value in overrides.items():
        setattr(snap, key, value)
    return snap


# ---------------------------------------------------------------- constants


def test_constants():
    assert SCHEMA_VERSION == "1"
    assert SERVED_BY_TIERS == (
        "direct-answer",
        "hybrid",
        "graph",
        "recent-scan",
        "procedural",
        "review-context",
    )
    assert CORRECTION_STATES == ("none", "correction", "superseded", "disputed", "forgotten")
    assert SAFETY_LEVELS == ("safe", "requires-review", "blocked")
    assert FORMATS == ("text", "markdown", "json")


# ---------------------------------------------------------------- parse_format


@pytest.mark.parametrize("value", ["yaml", "", "txt", "md", None, 3])
def test_parse_format_error_lists_options(value):
    with pytest.raises(ValueError) as exc:
        parse_format(value)
    assert "valid options: text, markdown, json" in str(exc.value)
    assert repr(value) in str(exc.value)


def test_parse_format_message_exact():
    with pytest.raises(ValueError, match=r"^unknown format 'yaml'; valid options: text, markdown, json$"):
        parse_format("yaml")


@pytest.mark.parametrize("value, expected", [("text", "text"), (" Markdown ", "markdown"), ("JSON", "json")])
def test_parse_format_accepts(value, expected):
    assert parse_format(value) == expected


def test_render_rejects_unknown_format():
    with pytest.raises(ValueError, match="valid options"):
        render_xray(make_snapshot(), "html")


# ---------------------------------------------------------------- types


def test_to_dict_key_order():
    d = make_snapshot().to_dict()
    assert list(d) == [
        "schemaVersion",
        "query",
        "snapshotId",
        "capturedAt",
        "sessionKey",
        "namespace",
        "traceId",
        "tierExplain",
        "filters",
        "results",
        "budget",
    ]
    result = d["results"][0]
    assert list(result) == [
        "memoryId",
        "path",
        "servedBy",
        "scoreDecomposition",
        "admittedBy",
        "rejectedBy",
        "graphPath",
        "graphEdgeConfidences",
        "auditEntryId",
        "provenance",
    ]
    assert list(result["scoreDecomposition"]) == [
        "final",
        "vector",
        "bm25",
        "importance",
        "recency",
        "mmrPenalty",
        "tierPrior",
        "reinforcementBoost",
    ]
    assert list(result["provenance"]) == [
        "source",
        "created",
        "updated",
        "namespace",
        "scope",
        "userContextScopes",
        "retrievalReason",
        "confidence",
        "stale",
        "corrected",
        "correctionState",
        "safeToUse",
        "safety",
        "safetyReasons",
    ]
    assert list(d["tierExplain"]) == [
        "tier",
        "reason",
        "candidatesConsidered",
        "latencyMs",
        "filteredBy",
        "sourceAnchors",
    ]
    assert d["filters"][1] == {"name": "trust", "considered": 4, "admitted": 4}


def test_to_dict_omits_optional_none():
    snap = RecallXraySnapshot(
        query="q",
        snapshot_id="s",
        captured_at=1,
        results=[XrayResult("m", "p", "hybrid", ScoreDecomposition(final=0.5))],
    )
    d = snap.to_dict()
    assert "sessionKey" not in d and "namespace" not in d and "traceId" not in d
    assert d["tierExplain"] is None
    assert d["results"][0] == {
        "memoryId": "m",
        "path": "p",
        "servedBy": "hybrid",
        "scoreDecomposition": {"final": 0.5},
        "admittedBy": [],
    }
    assert d["budget"] == {"chars": 0, "used": 0}


def test_from_dict_roundtrip():
    snap = make_snapshot()
    assert RecallXraySnapshot.from_dict(snap.to_dict()) == snap


def test_filter_rejected_property():
    assert FilterTrace("x", 12, 7).rejected == 5


def test_from_dict_tolerant():
    snap = RecallXraySnapshot.from_dict(
        {
            "query": 42,
            "capturedAt": "yesterday",
            "unknownKey": {"x": 1},
            "results": [
                {
                    "scoreDecomposition": {"final": "high", "vector": "x", "bm25": float("nan")},
                    "admittedBy": "namespace",
                    "graphPath": "a->b",
                    "provenance": "nope",
                },
                "not-a-result",
            ],
            "filters": [1, None, {"name": 3}],
            "tierExplain": [],
            "budget": "lots",
        }
    )
    assert snap.query == "42"
    assert snap.captured_at == 0
    assert len(snap.results) == 1
    r = snap.results[0]
    assert r.score.final == 0.0 and r.score.vector is None and math.isnan(r.score.bm25)
    assert r.admitted_by == [] and r.graph_path is None and r.provenance is None
    assert snap.filters == [FilterTrace(name="3", considered=0, admitted=0)]
    assert snap.tier_explain is None
    assert snap.budget == Budget(0, 0)
    assert snap.schema_version == "1"


@pytest.mark.parametrize("data", [None, [], "x", 3, {"results": None}])
def test_from_dict_non_mapping(data):
    snap = RecallXraySnapshot.from_dict(data)
    assert snap.results == [] and snap.filters == [] and snap.query == ""


# ---------------------------------------------------------------- formatters


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.5, "0.5000"),
        (0.12345, "0.1235"),
        (1, "1.0000"),
        (-0.00001, "0.0000"),
        (float("nan"), "n/a"),
        (float("inf"), "n/a"),
        (None, "n/a"),
        ("0.5", "n/a"),
        (True, "n/a"),
    ],
)
def test_fmt_score_four_decimals(value, expected):
    assert fmt_score(value) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (1776706200000, "2026-04-20T17:30:00.000Z"),
        (1700000000123.9, "2023-11-14T22:13:20.123Z"),
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (float("nan"), "unknown"),
        (float("-inf"), "unknown"),
        (1e20, "unknown"),
        (10**400, "unknown"),
        ("2026", "unknown"),
        (None, "unknown"),
    ],
)
def test_fmt_time(value, expected):
    assert fmt_time(value) == expected


def test_score_line_only_present_terms_in_order():
    text = render_xray(make_snapshot(), "text")
    assert (
        "    score: final=0.8700 vector=0.8100 bm25=0.4200 importance=0.9000 recency=0.1000 "
        "mmr_penalty=0.0500 tier_prior=0.2000 reinforcement_boost=0.0100\n"
    ) in text
    snap = make_snapshot()
    snap.results[0].score = ScoreDecomposition(final=0.1, tier_prior=0.3)
    assert "    score: final=0.1000 tier_prior=0.3000\n" in render_xray(snap, "text")


# ---------------------------------------------------------------- text


def test_text_layout():
    text = render_xray(make_snapshot(), "text")
    assert text.startswith(
        "=== Recall X-ray ===\n"
        "query: what editor do I use\n"
        "snapshot-id: snap-1\n"
        "captured-at: 2026-04-20T17:30:00.000Z\n"
        "session: sess-42\n"
        "namespace: ws\n"
        "trace-id: trace-xyz\n"
        "budget: 1234 / 4096 chars\n"
        "\n--- filters ---\n"
        "- namespace: 4/10 admitted (cap=4)\n"
        "- trust: 4/4 admitted\n"
        "\n--- results ---\n"
        "[1] facts/editor — served-by=hybrid\n"
        "    path: facts/editor.md\n"
    )
    assert (
        "    provenance: source=conversation created=2026-04-18T21:13:00.000Z "
        "updated=2026-04-19T00:00:00.000Z namespace=ws scope=namespace:ws confidence=0.94 "
        "stale=true corrected=correction safe=false\n"
        "    retrieval-reason: served-by=hybrid\n"
        "    context-scopes: work\n"
        "    safety: blocked (do-not-use)\n"
        "    graph-path: a -> b -> c\n"
        "    edge-confidences: 0.90, 0.50\n"
        "    admitted-by: namespace, trust-zone\n"
        "    rejected-by: mmr\n"
        "    audit-entry: audit-1\n"
    ) in text
    assert text.endswith(
        "\n--- tier explain ---\n"
        "tier: direct-answer\n"
        "reason: unambiguous\n"
        "candidates-considered: 3\n"
        "latency-ms: 8\n"
        "filtered-by: below-floor\n"
        "source-anchors:\n"
        "  - facts/editor.md:1-3\n"
    )


def test_text_empty_sections_say_none():
    snap = RecallXraySnapshot(query="q", snapshot_id="s", captured_at=0)
    text = render_xray(snap, "text")
    assert "--- filters ---\n(none)\n" in text
    assert "--- results ---\n(none)\n" in text
    assert text.endswith("--- tier explain ---\n(none)\n")
    assert "session:" not in text and "trace-id:" not in text


def test_text_newlines_in_user_text_stay_on_one_line():
    snap = make_snapshot(query="line1\nline2\rline3\x00")
    text = render_xray(snap, "text")
    assert "query: line1\\nline2\\rline3\\x00\n" in text


def test_no_snapshot_renderings():
    assert render_xray(None, "text") == "=== Recall X-ray ===\n(no snapshot captured)\n"
    assert render_xray(None, "markdown") == "## Recall X-ray\n\n(no snapshot captured)\n"
    assert render_xray(None, "json") == '{"snapshotFound": false}\n'
    assert render_xray(None) == render_xray(None, "text")


# ---------------------------------------------------------------- markdown


def test_md_cell_escaping():
    assert md_cell("a|b") == "a\\|b"
    assert md_cell("a\\|b") == "a\\\\\\|b"
    assert md_cell("x\ny\r\nz") == "x<br>y<br>z"


def test_markdown_pipes_escaped_and_rows_intact():
    snap = make_snapshot(query="a | b\nc", namespace="n|s")
    snap.filters = [FilterTrace("f|1", 2, 1, reason="why | not\nnow")]
    snap.results[0].path = "p|q.md"
    md = render_xray(snap, "markdown")
    assert "| query | a \\| b<br>c |\n" in md
    assert "| namespace | n\\|s |\n" in md
    assert "| f\\|1 | 2 | 1 | 1 | why \\| not<br>now |\n" in md
    assert "| path | p\\|q.md |\n" in md
    # every table row has exactly the right number of unescaped pipes
    for line in md.splitlines():
        if line.startswith("|"):
            unescaped = line.replace("\\\\", "").replace("\\|", "")
            assert unescaped.count("|") in (3, 6), line


def test_markdown_structure():
    md = render_xray(make_snapshot(), "markdown")
    assert md.startswith("## Recall X-ray\n\n| Field | Value |\n| --- | --- |\n| query | what editor do I use |\n")
    for heading in ("### Filters", "### Results", "#### [1] facts/editor — served-by=hybrid", "### Tier explain"):
        assert f"\n{heading}\n" in md
    assert md.endswith("Source anchors:\n\n- facts/editor.md:1-3\n")


# ---------------------------------------------------------------- json


def test_json_envelope_and_roundtrip():
    snap = make_snapshot()
    out = render_xray(snap, "json")
    data = json.loads(out)
    assert list(data)[:2] == ["snapshotFound", "schemaVersion"]
    assert data["snapshotFound"] is True
    assert RecallXraySnapshot.from_dict(data).to_dict() == snap.to_dict()
    data.pop("snapshotFound")
    assert data == snap.to_dict()
    assert out.endswith("}\n") and out.startswith('{\n  "snapshotFound": true,\n')


def test_json_accepts_raw_dict_and_envelopes():
    snap = make_snapshot()
    expected = render_xray(snap, "json")
    assert render_xray(snap.to_dict(), "json") == expected
    assert render_xray(json.loads(expected), "json") == expected
    assert render_xray(snapshot_envelope(snap), "json") == expected
    assert render_xray({"snapshotFound": False}, "text") == render_xray(None, "text")


def test_snapshot_envelope_and_dumps_json():
    snap = make_snapshot()
    env = snapshot_envelope(snap)
    assert env == {"snapshotFound": True, "snapshot": snap.to_dict()}
    assert snapshot_envelope(None) == {"snapshotFound": False}
    assert dumps_json(snapshot_envelope(None)) == NOT_FOUND_JSON == render_xray(None, "json")
    body = dumps_json(env)
    assert json.loads(body) == env and body.endswith("\n")
    assert dumps_json(env) == dumps_json(snapshot_envelope(snap.to_dict()))


def test_nan_scores_give_valid_json_and_na_text():
    snap = make_snapshot(captured_at=float("nan"))
    snap.results[0].score = ScoreDecomposition(final=float("nan"), vector=float("inf"), bm25=float("-inf"))
    snap.budget = Budget(chars=float("inf"), used=-5)
    out = render_xray(snap, "json")
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    assert data["capturedAt"] is None
    assert data["results"][0]["scoreDecomposition"] == {"final": None, "vector": None, "bm25": None}
    text = render_xray(snap, "text")
    assert "captured-at: unknown\n" in text
    assert "    score: final=n/a vector=n/a bm25=n/a\n" in text
    assert "budget: -5 / n/a chars\n" in text
    assert "| captured-at | unknown |" in render_xray(snap, "markdown")


def test_unicode_and_long_query_as_is():
    query = "日本語 🧠 " + "x" * 5000
    snap = make_snapshot(query=query)
    assert f"query: {query}\n" in render_xray(snap, "text")
    assert query in render_xray(snap, "json")  # ensure_ascii=False


# ---------------------------------------------------------------- robustness


def test_deterministic():
    snap = make_snapshot()
    for fmt in FORMATS:
        assert render_xray(snap, fmt) == render_xray(snap, fmt)
        assert render_xray(snap.to_dict(), fmt) == render_xray(make_snapshot(), fmt)


GARBAGE = [
    {},
    {"results": "x", "filters": [1, None, {"name": 3}]},
    {"results": [{}], "filters": [{}], "tierExplain": {}, "budget": {}},
    {
        "results": [
            {
                "scoreDecomposition": None,
                "provenance": {},
                "graphPath": [None, 1, "a"],
                "graphEdgeConfidences": ["x", float("nan"), 2],
            }
        ]
    },
    {"capturedAt": float("inf"), "budget": {"chars": -1, "used": 10**30}},
    {"capturedAt": 10**400, "budget": {"chars": 1.5, "used": float("nan")}},
    {"query": None, "snapshotId": ["a"], "sessionKey": {}, "tierExplain": {"sourceAnchors": "a"}},
    {"filters": [{"name": "f", "considered": "ten", "admitted": None, "reason": 7}]},
    {"results": [{"provenance": {"safety": None, "safetyReasons": [None, "r"], "confidence": "hi"}}]},
    {"snapshotFound": True, "snapshot": "not a dict"},
    {1: 2, None: "x"},
]


@pytest.mark.parametrize("data", GARBAGE)
@pytest.mark.parametrize("fmt", FORMATS)
def test_garbage_never_raises(data, fmt):
    out = render_xray(data, fmt)
    assert isinstance(out, str) and out.endswith("\n")
    if fmt == "json":
        json.loads(out, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    else:
        assert "Recall X-ray" in out


def test_garbage_example_renders_something_sensible():
    text = render_xray({"results": "x", "filters": [1, None, {"name": 3}]}, "text")
    assert "- 3: 0/0 admitted\n" in text
    assert "--- results ---\n(none)\n" in text
