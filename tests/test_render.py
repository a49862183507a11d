"""The Recall X-ray snapshot types (remnic.render.snapshot), JavaScript-compatible formatting
(remnic.render.jsfmt) and the renderer (remnic.render.xray), against the original Remnic's
tested renderer behaviour (in remnic's own data)."""

from __future__ import annotations

import copy
import json

import pytest
from xray_samples import bare, hit, rich

from remnic.errors import ValidationError
from remnic.render.snapshot import (
    CORRECTION_STATES,
    SAFETY_LEVELS,
    SCHEMA_VERSION,
    SERVED_BY_TIERS,
    RecallXraySnapshot,
)
from remnic.render.xray import (
    FORMATS,
    NOT_FOUND_JSON,
    dumps_json,
    md_code,
    md_escape,
    parse_format,
    render_xray,
    snapshot_envelope,
)

# ---------------------------------------------------------------- vocabulary and format parsing


def test_constants():
    assert SCHEMA_VERSION == "1"
    assert SERVED_BY_TIERS[:6] == ("direct-answer", "hybrid", "graph", "recent-scan", "procedural", "review-context")
    assert set(SERVED_BY_TIERS[6:]) == {"lcm-file-parts", "lcm-tool-parts"}
    assert CORRECTION_STATES == ("none", "correction", "superseded", "disputed", "forgotten")
    assert SAFETY_LEVELS == ("safe", "requires-review", "blocked")
    assert FORMATS == ("json", "text", "markdown")


def test_parse_format_defaults_to_text_and_ignores_case_and_blanks():
    assert parse_format(None) == "text"
    assert [parse_format(f) for f in FORMATS] == list(FORMATS)
    assert [parse_format(v) for v in (" Json ", "MARKDOWN", "\ttext\n")] == ["json", "markdown", "text"]


@pytest.mark.parametrize(
    "value, message",
    [
        ("yaml", '--format expects one of json, text, markdown; got "yaml"'),
        ("", '--format expects one of json, text, markdown; got ""'),
        (7, "--format expects one of json, text, markdown; got number"),
        (True, "--format expects one of json, text, markdown; got boolean"),
        (["text"], "--format expects one of json, text, markdown; got object"),
    ],
)
def test_parse_format_names_the_options_and_what_it_got(value, message):
    with pytest.raises(ValueError) as exc:
        parse_format(value, flag="--format")
    assert str(exc.value) == message


def test_render_rejects_unknown_format_and_dispatches_the_rest():
    with pytest.raises(ValidationError) as exc:  # the library names its argument, not a CLI flag
        render_xray(rich(), "html")
    assert exc.value.problems[0].field == "format" and "--format" not in str(exc.value)
    assert list(exc.value.problems[0].options or ()) == ["json", "text", "markdown"]
    assert render_xray(rich()) == render_xray(rich(), "text")
    assert render_xray(rich(), "JSON") == render_xray(rich(), "json")


# ---------------------------------------------------------------- text


def test_text_layout_of_a_full_snapshot():
    assert render_xray(rich(), "text") == (
        "=== Recall X-ray ===\n"
        "query: which editor does Ben use\n"
        "snapshot-id: c0ffee00-0000-4000-8000-000000000001\n"
        "captured-at: 2026-01-01T10:00:00.000Z\n"
        "session: sess-ben\n"
        "namespace: ben\n"
        "trace-id: tr-9\n"
        "budget: 812 / 3000 chars\n"
        "\n--- filters ---\n"
        "- namespace-scope: 6/50 admitted\n"
        "- recall-result-limit: 2/6 admitted (k=2)\n"
        "\n--- results ---\n"
        "[1] pref-editor — served-by=hybrid\n"
        "    path: preferences/pref-editor.md\n"
        "    score: final=0.9000 vector=0.7000 bm25=0.3000 importance=0.6000 mmr_penalty=0.1000\n"
        "    admitted-by: namespace-scope, trust-zone\n"
        "    graph-path: ent-ben -> pref-editor\n"
        "    audit-entry: audit-1\n"
        "[2] pref-old-editor — served-by=hybrid\n"
        "    path: preferences/pref-old-editor.md\n"
        "    score: final=0.7500\n"
        "    admitted-by: namespace-scope\n"
        "    rejected-by: recall-result-limit\n"
        "\n--- tier explain ---\n"
        "tier: direct-answer\n"
        "reason: single trusted preference\n"
        "candidates-considered: 6\n"
        "latency-ms: 4\n"
        "filtered-by: trust-zone\n"
        "source-anchors:\n"
        "  - preferences/pref-editor.md:3-4\n"
        "  - notes/x.md"
    )


def test_no_snapshot_and_empty_sections_have_the_originals_placeholders():
    assert render_xray(None, "text") == "=== Recall X-ray ===\nNo X-ray snapshot captured."
    assert render_xray(None, "markdown") == "# Recall X-ray\n\n_No X-ray snapshot captured._"
    assert render_xray(None, "json") == '{\n  "schemaVersion": "1",\n  "snapshotFound": false\n}'
    text = render_xray(bare(sessionKey="", namespace=None), "text")
    assert "\n--- filters ---\n(no filter traces recorded)\n" in text
    assert "\n--- results ---\n(no results admitted)\n" in text
    assert text.endswith("\n--- tier explain ---\n(not populated — direct-answer tier disabled or did not fire)")
    assert "session:" not in text and "namespace:" not in text and "trace-id:" not in text


def test_path_and_admitted_by_only_when_there_is_one():
    text = render_xray(bare(results=[hit(path="", admittedBy=[])]), "text")
    assert "[1] pref-editor — served-by=hybrid\n    score: final=0.7500\n\n" in text


def test_edge_confidences_only_under_a_graph_path():
    with_path = render_xray(bare(results=[hit(graphPath=["a", "b", "c"], graphEdgeConfidences=[0.9, 0.45])]), "text")
    assert "    graph-path: a -> b -> c\n    edge-confidences: 0.90, 0.45\n" in with_path
    without = render_xray(bare(results=[hit(graphEdgeConfidences=[0.9])]), "text")
    assert "edge-confidences" not in without
    assert "edge-confidences" not in render_xray(rich(), "text")  # a graph path with no confidences


def test_path_penalty_fields_only_when_recorded():
    plain = rich()
    for fmt in ("text", "markdown"):
        out = render_xray(plain, fmt)
        assert not any(x in out for x in ("path-penalty", "path-node-ids", "Path penalty", "Path node ids"))
    plain["results"][0].update(pathPenaltyApplied=True, pathNodeIds=["seed", "hop", "pref-editor"])
    text, md = render_xray(plain, "text"), render_xray(plain, "markdown")
    assert "    path-penalty: yes\n    path-node-ids: seed -> hop -> pref-editor\n" in text
    assert "- **Path penalty applied:** `yes`\n- **Path node ids:** `seed` → `hop` → `pref-editor`\n" in md
    plain["results"][0]["pathPenaltyApplied"] = False
    assert "    path-penalty: no\n" in render_xray(plain, "text")


def test_state_view_is_printed_once_right_after_the_path():
    text = render_xray(bare(results=[hit(stateView="historical", pathPenaltyApplied=False)]), "text")
    assert text.count("state-view:") == 1
    assert (
        "[1] pref-editor — served-by=hybrid\n    path: preferences/pref-editor.md\n    state-view: historical\n"
        "    score: final=0.7500\n    path-penalty: no\n"
    ) in text
    md = render_xray(bare(results=[hit(stateView="current", admittedBy=["a"], rejectedBy="b")]), "markdown")
    assert "- **Admitted by:** `a`\n- **State view:** `current`\n- **Rejected by:** `b`\n" in md


def test_score_line_terms_in_order_with_reinforcement_only_when_positive():
    score = {"final": 0.5, "tierPrior": 0.2, "mmrPenalty": 0, "bm25": 0.1, "reinforcementBoost": 0.03125}
    assert "    score: final=0.5000 bm25=0.1000 mmr_penalty=0.0000 tier_prior=0.2000 reinforcement_boost=0.0313\n" in (
        render_xray(bare(results=[hit(scoreDecomposition=score)]), "text")
    )
    score["reinforcementBoost"] = 0
    assert "reinforcement_boost" not in render_xray(bare(results=[hit(scoreDecomposition=score)]), "text")
    odd = {"final": 0.123456789, "vector": 0, "bm25": float("nan"), "importance": -0.00001}
    assert "score: final=0.1235 vector=0.0000 bm25=0.0000 importance=-0.0000\n" in render_xray(
        bare(results=[hit(scoreDecomposition=odd)]), "text"
    )


def test_remnic_terms_and_raw_scores_appear_only_when_captured():
    r = hit(
        scoreDecomposition={"final": 1.5, "vector": 1.0, "recency": 0.02, "status": -0.5}, rawScores={"vector": 0.498}
    )
    text = render_xray(bare(results=[r]), "text")
    assert (
        "    score: final=1.5000 vector=1.0000 recency=0.0200 status=-0.5000\n    raw-scores: vector=0.4980\n" in text
    )
    assert "- **Raw scores:** vector=0.4980\n" in render_xray(bare(results=[r]), "markdown")
    assert "raw-scores" not in render_xray(rich(), "text")


PROVENANCE = {
    "source": "chat",
    "created": "2025-12-24T18:00:00.000Z",
    "namespace": "ben",
    "scope": "namespace:ben",
    "userContextScopes": ["personal", "repo"],
    "retrievalReason": "served-by=hybrid: bm25 #2",
    "confidence": 0.7,
    "stale": True,
    "corrected": True,
    "correctionState": "superseded",
    "safeToUse": False,
    "safety": "requires-review",
    "safetyReasons": ["status=superseded", "stale=true"],
}


def test_text_provenance_lines():
    text = render_xray(bare(results=[hit(provenance=PROVENANCE)]), "text")
    assert (
        "    provenance: source=chat created=2025-12-24T18:00:00.000Z scope=namespace:ben confidence=0.70 "
        "stale=true corrected=superseded safe=false\n"
        "    retrieval-reason: served-by=hybrid: bm25 #2\n"
        "    context-scopes: personal, repo\n"
        "    safety: requires-review (status=superseded, stale=true)\n"
    ) in text


def test_markdown_provenance_block_without_a_safety_line_when_safe():
    prov = dict(PROVENANCE, userContextScopes=["repo"], stale=False, corrected=False, correctionState="none",
                safeToUse=True, safety="safe", safetyReasons=[])  # fmt: skip
    md = render_xray(bare(results=[hit(provenance=prov)]), "markdown")
    assert (
        "\n### 1. `pref-editor` — served-by=hybrid\n\n"
        "- **Path:** `preferences/pref-editor.md`\n"
        "- **Score:** final=0.7500\n"
        "- **Provenance:** source=chat created=2025-12-24T18:00:00.000Z scope=namespace:ben confidence=0.70 "
        "stale=false corrected=false safe=true\n"
        "- **Retrieval reason:** `served-by=hybrid: bm25 #2`\n"
        "- **Context scopes:** `repo`\n\n"
    ) in md
    assert "**Safety:**" not in md and "Admitted by" not in md


def test_provenance_edge_cases():
    prov = {"source": "x", "scope": "y", "retrievalReason": "", "safety": "safe", "safetyReasons": ["why"],
            "corrected": False, "correctionState": "superseded"}  # fmt: skip
    text = render_xray(bare(results=[hit(provenance=prov)]), "text")
    assert "created=unknown" in text and "corrected=false" in text
    assert "    retrieval-reason: \n" in text  # printed even when empty
    assert "    safety: safe (why)\n" in text  # a reason is enough to print the line


def test_source_span_lines():
    span = {
        "quote": "We moved CI to\n  the new runners",
        "observedAt": "2025-12-20T09:00:00.000Z",
        "provenance": "verified",
    }
    snap = bare(results=[hit(sourceSpan=span)])
    assert (
        '    source: "We moved CI to the new runners" (observed 2025-12-20T09:00:00.000Z) [verified]\n'
        in render_xray(snap, "text")
    )
    assert '- **Source:** "We moved CI to the new runners" (`2025-12-20T09:00:00.000Z`) — verified\n' in render_xray(
        snap, "markdown"
    )
    long = bare(results=[hit(sourceSpan=dict(span, quote="word " * 100))])
    line = next(x for x in render_xray(long, "text").split("\n") if "source:" in x)
    quote = line.split('"')[1]
    assert quote.endswith("…") and len(quote) <= 121
    assert "source:" not in render_xray(bare(results=[hit()]), "text")
    assert "**Source:**" not in render_xray(bare(results=[hit()]), "markdown")


def test_user_text_is_printed_as_it_is():
    snap = bare(query="line one\nline two", results=[hit("id\twith tab")])
    text = render_xray(snap, "text")
    assert "query: line one\nline two\n" in text and "[1] id\twith tab — served-by=hybrid\n" in text
    unicode = "日本語 🧠 " + "x" * 5000
    assert f"query: {unicode}\n" in render_xray(bare(query=unicode), "text")
    assert unicode in render_xray(bare(query=unicode), "json")
    # An unpaired surrogate (from JSON "\ud83e") is written as U+FFFD, as Node writes it.
    assert "query: a\ufffdb\n" in render_xray(bare(query="a\ud83eb"), "text")


def test_no_trailing_newline_in_any_format():
    for fmt in FORMATS:
        for snap in (rich(), bare(), None):
            assert not render_xray(snap, fmt).endswith("\n")


# ---------------------------------------------------------------- markdown


def test_markdown_escapes_table_cells_and_fences_code():
    assert md_escape("a|b\\c") == "a\\|b\\\\c"
    assert md_code("") == "``" and md_code("plain") == "`plain`"
    assert md_code("a`b") == "``a`b``" and md_code("`edge`") == "`` `edge` ``" and md_code("x``y") == "```x``y```"
    snap = bare(filters=[{"name": "scope|ns", "considered": 8, "admitted": 3, "reason": "because|so"}])
    assert "\n| scope\\|ns | 8 | 3 | because\\|so |\n" in render_xray(snap, "markdown")


def test_markdown_layout_of_a_full_snapshot():
    md = render_xray(rich(), "markdown")
    assert md.startswith(
        "# Recall X-ray\n\n**Query:** `which editor does Ben use`\n\n| Field | Value |\n| --- | --- |\n"
        "| Snapshot ID | `c0ffee00-0000-4000-8000-000000000001` |\n| Captured at | 2026-01-01T10:00:00.000Z |\n"
        "| Session | `sess-ben` |\n| Namespace | `ben` |\n| Trace ID | `tr-9` |\n| Budget | 812 / 3000 chars |\n\n"
        "## Filters\n\n| Filter | Considered | Admitted | Reason |\n| --- | ---: | ---: | --- |\n"
        "| namespace-scope | 50 | 6 |  |\n| recall-result-limit | 6 | 2 | k=2 |\n\n## Results\n"
    )
    assert "- **Graph path:** `ent-ben` → `pref-editor`\n- **Audit entry:** `audit-1`\n" in md
    assert md.endswith(
        "## Tier Explain\n\n| Field | Value |\n| --- | --- |\n| Tier | `direct-answer` |\n"
        "| Reason | single trusted preference |\n| Candidates considered | 6 |\n| Latency (ms) | 4 |\n"
        "| Filtered by | `trust-zone` |\n\n**Source anchors:**\n- `preferences/pref-editor.md:3-4`\n- `notes/x.md`"
    )
    empty = render_xray(bare(), "markdown")
    assert (
        "## Filters\n\n_No filter traces recorded._\n\n## Results\n\n_No results admitted._\n\n## Tier Explain\n\n"
        in empty
    )
    assert empty.endswith("_Not populated — direct-answer tier disabled or did not fire._")
    nothing_filtered = rich()
    nothing_filtered["tierExplain"]["filteredBy"] = []
    assert "| Filtered by | _(none)_ |" in render_xray(nothing_filtered, "markdown")
    assert "filtered-by: (none)\n" in render_xray(nothing_filtered, "text")


def test_markdown_edge_confidences_and_captured_at_placeholder():
    snap = bare(capturedAt=float("nan"), results=[hit(graphPath=["a", "b"], graphEdgeConfidences=[0.125])])
    md = render_xray(snap, "markdown")
    assert "- **Graph path:** `a` → `b`\n- **Edge confidences:** `0.13`\n" in md
    assert "| Captured at | (unknown) |" in md


def test_disclosure_lines_and_token_spend_table():
    results = [
        hit("a", disclosure="section", estimatedTokens=30),
        hit("b", disclosure="chunk"),
        hit("c", estimatedTokens=9.5),
        hit("d"),
    ]
    md = render_xray(bare(results=results), "markdown")
    assert "- **Disclosure:** `section` (~30 tokens)\n" in md and "- **Disclosure:** `chunk`\n" in md
    assert "- **Estimated tokens:** 9.5\n" in md
    assert md.split("### Token spend by disclosure\n\n", 1)[1].startswith(
        "| Disclosure | Results | Estimated tokens |\n| --- | ---: | ---: |\n| chunk | 1 | 0 |\n| section | 1 | 30 |\n"
        "| raw | 0 | 0 |\n| _(unspecified)_ | 2 | 9 |\n\n## Tier Explain"
    )
    assert "Token spend" not in render_xray(bare(results=[hit(estimatedTokens=4)]), "markdown")
    assert "isclosure" not in render_xray(bare(results=results), "text")


# ---------------------------------------------------------------- json


def test_json_is_flat_with_snapshot_found_first():
    out = render_xray(rich(), "json")
    data = json.loads(out)
    assert out.startswith('{\n  "snapshotFound": true,\n  "schemaVersion": "1",\n')
    assert "snapshot" not in data and data.pop("snapshotFound") is True
    assert data == rich()
    assert json.loads(render_xray(None, "json")) == {"schemaVersion": "1", "snapshotFound": False}


def test_json_keeps_numbers_as_given_and_nulls_non_finite():
    out = render_xray(bare(capturedAt=1e20, budget={"chars": 4096.0, "used": float("nan")}), "json")
    assert '"capturedAt": 100000000000000000000,' in out and '"chars": 4096,' in out and '"used": null' in out
    assert json.loads(out)["capturedAt"] == 1e20


def test_json_accepts_raw_dicts_and_envelopes():
    expected = render_xray(rich(), "json")
    snap = RecallXraySnapshot.from_dict(rich())
    assert render_xray(snap, "json") == expected
    assert render_xray(json.loads(expected), "json") == expected
    assert render_xray(snapshot_envelope(snap), "json") == expected
    assert render_xray({"snapshotFound": False}, "text") == render_xray(None, "text")
    assert render_xray({"schemaVersion": "1", "snapshotFound": False}, "json") == render_xray(None, "json")


def test_snapshot_envelope_and_dumps_json():
    snap = RecallXraySnapshot.from_dict(rich())
    env = snapshot_envelope(snap)
    assert env == {"snapshotFound": True, "snapshot": snap.to_dict()}
    assert snapshot_envelope(None) == {"snapshotFound": False}
    assert dumps_json(snapshot_envelope(None)) == NOT_FOUND_JSON == '{"snapshotFound": false}\n'
    body = dumps_json(env)
    assert json.loads(body) == env and body.endswith("}\n")
    # The envelope's snapshot is, member for member and byte for byte, the flat rendering's.
    flat = render_xray(snap, "json")
    assert [line[2:] for line in body.split("\n")[3:-3]] == flat.split("\n")[2:-1]
    assert json.loads(flat) == {"snapshotFound": True, **json.loads(body)["snapshot"]}


# ---------------------------------------------------------------- robustness


def test_deterministic():
    for fmt in FORMATS:
        assert render_xray(rich(), fmt) == render_xray(copy.deepcopy(rich()), fmt)
        assert render_xray(RecallXraySnapshot.from_dict(rich()), fmt) == render_xray(rich(), fmt)


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
                "sourceSpan": {"quote": 1},
                "trust": {"components": None},
            }
        ]
    },
    {"capturedAt": float("inf"), "budget": {"chars": -1, "used": 10**30}},
    {"capturedAt": 10**400, "budget": {"chars": 1.5, "used": float("nan")}},
    {"query": None, "snapshotId": ["a"], "sessionKey": {}, "tierExplain": {"sourceAnchors": "a"}},
    {"filters": [{"name": "f", "considered": "ten", "admitted": None, "reason": 7}]},
    {"results": [{"provenance": {"safety": None, "safetyReasons": [None, "r"], "confidence": "hi"}}]},
    {"tierExplain": {"sourceAnchors": [{"path": "p", "lineRange": [1]}, {"lineRange": [1, 2]}]}},
    {"snapshotFound": True, "snapshot": "not a dict"},
    {1: 2, None: "x"},
]


@pytest.mark.parametrize("data", GARBAGE)
@pytest.mark.parametrize("fmt", FORMATS)
def test_garbage_never_raises(data, fmt):
    out = render_xray(data, fmt)
    assert isinstance(out, str) and out
    if fmt == "json":
        json.loads(out, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    else:
        assert "Recall X-ray" in out


def test_garbage_example_renders_something_sensible():
    text = render_xray({"results": "x", "filters": [1, None, {"name": 3}]}, "text")
    assert "\n- : 0/0 admitted\n" in text
    assert "--- results ---\n(no results admitted)\n" in text
    assert "captured-at: (unknown)\n" in text
