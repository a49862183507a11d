"""Each tier serves at least one result on a fixture repository, only on its own conditions, and
changes what recall returns; recall answers from the files when the index cannot be used."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from test_xray_capture import build_demo

from remnic.config import settings_for
from remnic.index.search import SearchIndex
from remnic.recall import graph as G
from remnic.recall.tiers import intent_of
from remnic.recall.types import TIERS
from remnic.render.snapshot import SERVED_BY_TIERS
from remnic.service.memory import Memory

PINNED = 1_776_706_200_000


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    memory = build_demo(tmp_path_factory.mktemp("tiers") / "memory")
    yield memory
    memory.close()


def served(memory: Memory, query: str, **kwargs: Any) -> dict[str, str]:
    snap = memory.recall_xray(query, **kwargs)
    assert snap is not None
    return {r.memory_id: r.served_by for r in snap.results}


def variant(memory: Memory, **recall: Any) -> Memory:
    return Memory.open(settings=settings_for(memory.root, recall=recall))


# --------------------------------------------------------------------- every tier serves


def test_each_tier_serves_at_least_one_result(demo: Memory) -> None:
    seen: dict[str, str] = {}
    for query in (
        "what did we decide about the recall cache TTL",
        "how do I roll back a release?",
        "who is the release captain?",
        "what changed recently about the replica lag alarm?",
        "is the staging database password rotated every week?",
    ):
        for memory_id, tier in served(demo, query).items():
            seen.setdefault(tier, memory_id)
    assert set(seen) == set(TIERS) and set(TIERS) <= set(SERVED_BY_TIERS)  # every tier remnic has, served
    assert seen["direct-answer"] == "mem_demo_cache_ttl"
    assert seen["procedural"] == "mem_demo_rollback"
    assert seen["graph"] == "mem_demo_ana_editor"
    assert seen["recent-scan"] == "mem_demo_replica_lag"
    assert seen["review-context"] in ("mem_demo_ttl_rumour", "mem_fx_rotation_disputed")
    assert "hybrid" in seen


def test_direct_answer_explains_itself_with_anchors(demo: Memory) -> None:
    snap = demo.recall_xray("what did we decide about the recall cache TTL")
    te = snap.tier_explain
    assert te.tier == "direct-answer" and "trusted decision" in te.tier_reason and "unambiguous" in te.tier_reason
    assert te.candidates_considered >= len(snap.results) and te.latency_ms >= 0
    assert "status-active" in te.filtered_by
    (anchor,) = te.source_anchors  # the original's {path, lineRange} shape
    path, (first, last) = anchor.path, anchor.line_range
    text = (demo.root / path).read_text(encoding="utf-8").splitlines()
    assert "The recall cache TTL is 15 minutes" in "\n".join(text[first - 1 : last])
    assert text[first - 2].strip() in ("", "---")
    assert snap.results[0].memory_id == "mem_demo_cache_ttl"


def test_direct_answer_needs_a_clear_margin(demo: Memory) -> None:
    # "release captain" matches a trusted decision, but a relationship scores close to it: ambiguous.
    snap = demo.recall_xray("who is the release captain?")
    assert "direct-answer" not in {r.served_by for r in snap.results}
    assert snap.tier_explain.tier == "hybrid" and "ambiguous" in snap.tier_explain.tier_reason
    strict = variant(demo, direct_answer_min_importance=0.95)
    try:
        assert "direct-answer" not in served(strict, "what did we decide about the recall cache TTL").values()
    finally:
        strict.close()


def test_procedural_needs_a_how_to_query(demo: Memory) -> None:
    assert intent_of("how do I roll back a release?", []).how_to
    assert intent_of("steps to rotate the password", []).how_to
    assert not intent_of("how did Caroline feel about the race", []).how_to
    assert not intent_of("roll back a release", []).how_to
    assert "procedural" not in served(demo, "roll back a release").values()
    on = demo.recall("how do I roll back a release?", top_k=3)
    off = variant(demo, procedural=False)
    try:
        plain = off.recall("how do I roll back a release?", top_k=3)
    finally:
        off.close()
    assert on.hits[0].served_by == "procedural" and plain.hits[0].served_by == "hybrid"
    assert on.hits[0].score == pytest.approx(plain.hits[0].score + demo.settings.recall.procedural_prior)


def test_graph_follows_edges_from_strong_hits_and_changes_the_results(demo: Memory) -> None:
    snap = demo.recall_xray("who is the release captain?", top_k=4)
    node = next(r for r in snap.results if r.served_by == "graph")
    assert node.memory_id == "mem_demo_ana_editor"
    assert node.graph_path == ["mem_demo_ana_captain", "mem_demo_ana_editor"]
    assert node.graph_edge_confidences == [demo.settings.recall.graph_entity_confidence]
    assert len(node.graph_edge_confidences) == len(node.graph_path) - 1
    assert node.score.tier_prior and node.score.tier_prior > 0
    assert "token-overlap" in node.admitted_by  # floor 0: nothing to exempt
    off = variant(demo, graph=False)
    try:
        without = [r.memory_id for r in off.recall_xray("who is the release captain?", top_k=4).results]
    finally:
        off.close()
    assert "mem_demo_ana_editor" not in without  # the graph tier brought it into the top 4


def test_graph_traversal_two_hops_wikilinks_and_confidence_floor() -> None:
    class Fake:
        fm: dict[int, Mapping[str, Any]] = {
            1: {"links": ["b"]},
            2: {"entityRef": "ana"},
            3: {"entityRef": "ana"},
            4: {},
            5: {},
        }
        content = {1: "see [[e|the notes]]", 2: "", 3: "", 4: "", 5: ""}

        def fields(self, rows: Sequence[int]) -> dict[int, tuple[Mapping[str, Any], str]]:
            return {r: (self.fm[r], self.content[r]) for r in rows}

        def row_of_ref(self, ref: str) -> int | None:
            return {"b": 2, "e": 5}.get(ref)

        def rows_with_entity(self, entity: str) -> list[int]:
            return [2, 3] if entity == "ana" else []

    common = dict(link_conf=0.9, wikilink_conf=0.85, entity_conf=0.75, max_nodes=10)
    reached = {r.row: r for r in G.traverse([1], Fake(), max_hops=2, min_confidence=0.5, **common)}
    assert set(reached) == {2, 3, 5}
    assert reached[2].path_rows == [1, 2] and reached[2].confidences == [0.9]
    assert reached[3].path_rows == [1, 2, 3] and reached[3].confidences == [0.9, 0.75]
    assert reached[3].kinds == ["link", "entityRef"] and reached[5].kinds == ["wikilink"]
    one_hop = {r.row for r in G.traverse([1], Fake(), max_hops=1, min_confidence=0.5, **common)}
    assert one_hop == {2, 5}
    strict = {r.row for r in G.traverse([1], Fake(), max_hops=2, min_confidence=0.7, **common)}
    assert strict == {2, 5}  # 0.9 × 0.75 = 0.675 falls below the floor
    assert G.wikilinks("a [[x]] b [[y|label]] c [[x#h]]") == ["x", "y"]


def test_recent_scan_needs_a_recency_query_and_a_recent_update(demo: Memory) -> None:
    tiers = served(demo, "what changed recently about the replica lag alarm?")
    assert tiers["mem_demo_replica_lag"] == "recent-scan"
    assert tiers.get("mem_fx_old_dashboard", "hybrid") != "recent-scan"  # updated in 2025: outside the window
    assert "recent-scan" not in served(demo, "replica lag alarm").values()
    # At a clock far past every update nothing is recent any more.
    assert (
        "recent-scan"
        not in served(
            demo, "what changed recently about the replica lag alarm?", clock=PINNED + 400 * 86_400_000
        ).values()
    )


def test_recent_scan_offers_recent_memories_the_retrievers_missed(demo: Memory) -> None:
    narrow = variant(demo, candidates=1)
    try:
        result = narrow.recall(
            "what changed recently about the replica lag alarm or the release cadence?", top_k=5, xray=True
        )
    finally:
        narrow.close()
    offered = [c for c in result.candidates if c.entered_by == "recent-scan"]
    assert offered and any(h.served_by == "recent-scan" for h in result.hits)
    assert "recent-scan" in result.stages[0].reason  # the scope stage says how the pool was filled


def test_review_context_is_capped_flagged_and_optional(demo: Memory) -> None:
    result = demo.recall("what did we decide about the recall cache TTL")
    rumour = next(h for h in result.hits if h.id == "mem_demo_ttl_rumour")
    assert rumour.served_by == "review-context" and rumour.safety == "requires-review"
    assert rumour.rejected_by == "trust-zone" and rumour.terms.status < 0
    off = variant(demo, review_context=False)
    try:
        assert "mem_demo_ttl_rumour" not in [h.id for h in off.recall("what did we decide about the recall cache TTL")]
    finally:
        off.close()
    none = variant(demo, review_context_max=0)
    try:
        assert "mem_demo_ttl_rumour" not in [h.id for h in none.recall("recall cache TTL one hour")]
    finally:
        none.close()
    unrelated = demo.recall("quarterly planning weeks")
    assert "mem_demo_ttl_rumour" not in [h.id for h in unrelated.hits]  # shares too few words to be kept


# --------------------------------------------------------------------- the index cannot be used


@pytest.fixture
def broken(demo: Memory, tmp_path: Path) -> Memory:
    """A copy of the demo repository whose index directory is a plain file: unreadable, not rebuildable."""
    root = tmp_path / "copy"
    shutil.copytree(demo.root, root)
    shutil.rmtree(root / ".remnic" / "index")
    (root / ".remnic" / "index").write_text("not an index", encoding="utf-8")
    memory = Memory.open(settings=settings_for(root))
    yield memory
    memory.close()


def test_recall_answers_from_the_files_when_the_index_is_corrupt(
    broken: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="remnic.recall"):
        result = broken.recall("how do I roll back a release?", xray=True)
    assert "index unavailable" in caplog.text
    assert result.index["action"] == "unavailable"
    assert result.hits[0].id == "mem_demo_rollback"
    assert {h.served_by for h in result.hits} == {"recent-scan"}
    assert all(h.status == "active" for h in result.hits)  # the ladder still applies
    snap = result.xray
    assert snap.tier_explain.tier == "recent-scan" and "index unavailable" in snap.tier_explain.tier_reason
    assert all(r.raw_scores is None for r in snap.results)  # a file scan has no similarity or BM25 to show
    for prev, cur in zip(snap.filters, snap.filters[1:]):
        assert cur.considered == prev.admitted
    assert broken.audit_show(snap.results[0].audit_entry_id)["returnedIds"][0] == "mem_demo_rollback"


def test_recall_answers_from_the_files_when_the_model_cannot_load(
    demo: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_model(self: SearchIndex, text: str) -> Any:
        raise RuntimeError("onnx model missing")

    monkeypatch.setattr(SearchIndex, "embed_query", no_model)
    result = demo.recall("who is the release captain?", namespace="default")
    assert result.index == {"action": "unavailable", "reason": "RuntimeError: onnx model missing"}
    assert result.hits and {h.served_by for h in result.hits} == {"recent-scan"}
    assert {"mem_demo_ana_captain", "mem_demo_release_cadence"} <= {h.id for h in result.hits}
    off = variant(demo, fallback_scan=False)
    try:
        with pytest.raises(RuntimeError):
            off.recall("who is the release captain?")
    finally:
        off.close()
