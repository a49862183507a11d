"""The Recall X-ray snapshot types (remnic.render.snapshot) and JavaScript-compatible number,
time and text formatting (remnic.render.jsfmt), against the original Remnic's tested behaviour."""

from __future__ import annotations

import math

import pytest
from xray_samples import T0, bare, hit, rich

from remnic.render import jsfmt
from remnic.render.snapshot import (
    ABSENT,
    Budget,
    FilterTrace,
    PeerProfileInjection,
    Provenance,
    RecallXraySnapshot,
    ScoreDecomposition,
    SourceAnchor,
    TierExplain,
    XrayResult,
)
from remnic.render.xray import (
    format_captured_at,
    format_score,
)

# ---------------------------------------------------------------- types


def test_to_dict_uses_the_originals_key_order():
    snap = RecallXraySnapshot.from_dict(
        bare(
            sessionKey="s",
            namespace="n",
            traceId="t",
            peerProfileInjection={"peerId": "p", "fieldsInjected": 2},
            tierExplain={
                "tier": "hybrid",
                "tierReason": "r",
                "filteredBy": [],
                "candidatesConsidered": 1,
                "latencyMs": 0,
                "sourceAnchors": [{"path": "a.md"}],
            },
            results=[
                hit(
                    scoreDecomposition={
                        "final": 1,
                        "vector": 1,
                        "bm25": 1,
                        "importance": 1,
                        "mmrPenalty": 0,
                        "tierPrior": 0.1,
                        "reinforcementBoost": 0.1,
                        "recency": 0.1,
                    },
                    graphPath=["a", "b"],
                    graphEdgeConfidences=[0.5],
                    pathNodeIds=["a"],
                    pathPenaltyApplied=True,
                    stateView="current",
                    auditEntryId="x",
                    rejectedBy="y",
                    disclosure="raw",
                    estimatedTokens=3,
                    tags=["t"],
                    provenance={"source": "s", "created": "c", "updated": "u", "namespace": "n", "status": "active"},
                    sourceSpan={"quote": "q", "observedAt": "o", "provenance": "none"},
                    trust={"score": 1},
                    rawScores={"bm25": 2.5, "vector": 0.4},
                )
            ],
        )
    )
    d = snap.to_dict()
    assert list(d) == [
        "schemaVersion", "query", "snapshotId", "capturedAt", "tierExplain", "results", "appliedResultLimit",
        "appliedResults", "headroomResults", "filters", "budget", "sessionKey", "namespace", "traceId",
        "peerProfileInjection",
    ]  # fmt: skip
    r = d["results"][0]
    assert list(r) == [
        "memoryId", "path", "servedBy", "scoreDecomposition", "admittedBy", "graphPath", "graphEdgeConfidences",
        "pathNodeIds", "pathPenaltyApplied", "stateView", "auditEntryId", "rejectedBy", "disclosure",
        "estimatedTokens", "tags", "provenance", "sourceSpan", "trust", "rawScores",
    ]  # fmt: skip
    assert list(r["scoreDecomposition"]) == [
        "final", "vector", "bm25", "importance", "mmrPenalty", "tierPrior", "reinforcementBoost", "recency",
    ]  # fmt: skip
    assert list(r["provenance"])[:11] == [
        "source", "scope", "userContextScopes", "retrievalReason", "confidence", "stale", "corrected",
        "correctionState", "safeToUse", "safety", "safetyReasons",
    ]  # fmt: skip
    assert list(r["provenance"])[11:] == ["created", "updated", "namespace", "status"]
    assert r["rawScores"] == {"vector": 0.4, "bm25": 2.5}
    assert list(d["tierExplain"]) == [
        "tier", "tierReason", "filteredBy", "candidatesConsidered", "latencyMs", "sourceAnchors",
    ]  # fmt: skip


def test_to_dict_leaves_out_what_is_not_there():
    snap = RecallXraySnapshot(
        query="q",
        snapshot_id="s",
        captured_at=1,
        results=[XrayResult("m", "p", "hybrid", ScoreDecomposition(final=0.5))],
    )
    d = snap.to_dict()
    assert "sessionKey" not in d and "peerProfileInjection" not in d and d["tierExplain"] is None
    assert d["results"][0] == {
        "memoryId": "m",
        "path": "p",
        "servedBy": "hybrid",
        "scoreDecomposition": {"final": 0.5},
        "admittedBy": [],
    }
    assert TierExplain("hybrid").to_dict().get("sourceAnchors", "absent") == "absent"


def test_from_dict_round_trips_the_originals_shape():
    original = rich()
    original["peerProfileInjection"] = None  # explicitly "none injected": kept as null
    snap = RecallXraySnapshot.from_dict(original)
    assert snap.tier_explain.tier_reason == "single trusted preference"
    assert snap.tier_explain.source_anchors == [
        SourceAnchor("preferences/pref-editor.md", (3, 4)),
        SourceAnchor("notes/x.md"),
    ]
    assert snap.peer_profile_injection is None
    assert snap.to_dict() == original
    assert RecallXraySnapshot.from_dict(snap.to_dict()) == snap


def test_from_dict_reads_what_earlier_remnic_versions_wrote():
    te = TierExplain.from_dict(
        {"tier": "direct-answer", "reason": "old key", "sourceAnchors": ["a/b.md:10-14", "c.md", {"path": "d.md"}, 3]}
    )
    assert te.tier_reason == "old key"
    assert [str(a) for a in te.source_anchors] == ["a/b.md:10-14", "c.md", "d.md"]
    assert te.to_dict()["sourceAnchors"][0] == {"path": "a/b.md", "lineRange": [10, 14]}


def test_from_dict_is_faithful_and_tolerant():
    snap = RecallXraySnapshot.from_dict(
        {
            "query": 42,
            "capturedAt": "yesterday",
            "sessionKey": "",
            "unknownKey": {"x": 1},
            "results": [
                {
                    "scoreDecomposition": {"final": "high", "vector": "x", "bm25": float("nan")},
                    "admittedBy": "namespace",
                    "graphPath": "a->b",
                    "provenance": "nope",
                    "pathPenaltyApplied": "yes",
                },
                "not-a-result",
            ],
            "filters": [1, None, {"name": 3, "considered": -2}],
            "tierExplain": [],
            "budget": "lots",
            "peerProfileInjection": "someone",
        }
    )
    assert snap.query == "" and snap.captured_at is None and snap.session_key == ""
    (r,) = snap.results
    assert r.score.final == 0 and r.score.vector is None and math.isnan(r.score.bm25)
    assert r.admitted_by == [] and r.graph_path is None and r.provenance is None and r.path_penalty_applied is None
    assert snap.filters == [FilterTrace(name="", considered=-2, admitted=0)]
    assert snap.tier_explain is None and snap.budget == Budget(0, 0) and snap.peer_profile_injection is ABSENT
    assert PeerProfileInjection.from_any({"peerId": "p"}) == PeerProfileInjection("p", 0)


def test_provenance_defaults_follow_the_originals_normaliser():
    p = Provenance.from_dict({"safeToUse": False, "corrected": True})
    assert (p.source, p.scope, p.retrieval_reason, p.confidence) == ("unknown", "unknown", "retrieved", 0)
    assert (p.safety, p.correction_state, p.corrected) == ("requires-review", "correction", True)


@pytest.mark.parametrize("data", [None, [], "x", 3, {"results": None}])
def test_from_dict_non_mapping(data):
    snap = RecallXraySnapshot.from_dict(data)
    assert snap.results == [] and snap.filters == [] and snap.query == ""


# ---------------------------------------------------------------- JavaScript formatting


@pytest.mark.parametrize(
    "value, expected",
    [
        (0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (42.5, "42.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (-123.456, "-123.456"),
        (2**53 + 1, "9007199254740992"),
        (10**400, "Infinity"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_js_number_prints_what_javascript_prints(value, expected):
    assert jsfmt.js_number(value) == expected


@pytest.mark.parametrize(
    "value, places, expected",
    [
        (0.03125, 4, "0.0313"),  # an exact binary tie: away from zero (Python's format gives 0.0312)
        (0.125, 2, "0.13"),
        (0.625, 2, "0.63"),
        (0.715, 2, "0.71"),  # below the tie in binary
        (-0.00001, 4, "-0.0000"),
        (-0.0, 4, "0.0000"),
        (1, 4, "1.0000"),
        (0.123456789, 4, "0.1235"),
        (2e21, 2, "2e+21"),
        (float("nan"), 2, "NaN"),
    ],
)
def test_to_fixed_rounds_like_javascript(value, places, expected):
    assert jsfmt.to_fixed(value, places) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (T0, "2026-01-01T10:00:00.000Z"),
        (1700000000123.9, "2023-11-14T22:13:20.123Z"),
        (0, "1970-01-01T00:00:00.000Z"),
        (253402300800000, "+010000-01-01T00:00:00.000Z"),
        (8.64e15, "+275760-09-13T00:00:00.000Z"),
        (8.64e15 + 1, None),
        (-1, "1969-12-31T23:59:59.999Z"),
        (float("nan"), None),
        ("2026", None),
        (True, None),
    ],
)
def test_iso_time_is_javascripts_to_iso_string(value, expected):
    assert jsfmt.iso_time(value) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (T0, "2026-01-01T10:00:00.000Z"),
        (-1, "(unknown)"),
        (float("nan"), "(unknown)"),
        (float("inf"), "(unknown)"),
        (1e20, "(unknown)"),
        (None, "(unknown)"),
        ("2026-01-01", "(unknown)"),
    ],
)
def test_captured_at_shows_unknown_for_what_is_not_a_time(value, expected):
    assert format_captured_at(value) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.5, "0.5000"),
        (0.123456789, "0.1235"),
        (0, "0.0000"),
        (float("nan"), "0.0000"),
        (float("-inf"), "0.0000"),
        (None, "0.0000"),
    ],
)
def test_format_score_four_decimals_and_zero_for_non_finite(value, expected):
    assert format_score(value) == expected


def test_truncation_counts_utf16_units_and_cuts_at_a_word():
    assert jsfmt.truncate_utf16("short", 10) == "short"
    assert jsfmt.truncate_utf16("aaaa bbbb cccc", 12) == "aaaa bbbb…"
    assert jsfmt.truncate_utf16("x" * 30, 12) == "x" * 12 + "…"  # no space past half: cut as is
    # An emoji is two UTF-16 units: a cut through it leaves half a pair, written as U+FFFD.
    cut = jsfmt.truncate_utf16("🧠" * 10, 5)
    assert jsfmt.lone_surrogates_replaced(cut) == "🧠🧠\ufffd…"
    assert jsfmt.collapse_whitespace("\ufeff a\u00a0\n b\u2028 ") == "a b"


def test_js_dumps_matches_json_stringify():
    value = {"a": [1.0, 1e20, float("nan"), -0.0, True, None], "b": {}, "c": [], 3: "\ud800\n\u2028é"}
    assert jsfmt.js_dumps(value) == (
        '{\n  "a": [\n    1,\n    100000000000000000000,\n    null,\n    0,\n    true,\n    null\n  ],\n'
        '  "b": {},\n  "c": [],\n  "3": "\\ud800\\n\u2028é"\n}'
    )
