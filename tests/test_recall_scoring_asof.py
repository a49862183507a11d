"""Score terms of candidates a tier keeps past a gate, and as-of recalls of memories superseded later.

- A pending_review memory kept as review context is not among the BM25 normalisers: its term is
  capped at ``weightBm25`` (the documented ``weightBm25 × bm25 / best bm25``), never above it.
- ``asOf``: a memory superseded after that time was current then — admitted, no status penalty,
  not stale, no historical state view; one superseded (invalidated) by then stays out, and a
  forgotten one stays out regardless.
"""

from __future__ import annotations

from pathlib import Path

from remnic.recall.filters import AS_OF_STAGE, facts_of, make_filters
from remnic.recall.scoring import Norms, bm25_term
from remnic.service.memory import Memory


def write(root: Path, rel: str, front: str, body: str) -> None:
    (root / rel).write_text(f"---\n{front.strip()}\n---\n{body}\n", encoding="utf-8")


def test_bm25_term_is_capped_at_its_weight_for_candidates_outside_the_normalisers() -> None:
    norms = Norms(1.0, 0.0, 2.0)
    assert bm25_term(1.0, norms, 1.25) == 1.25 * 1.0 / 2.0  # inside: exactly the uncapped term
    assert bm25_term(2.0, norms, 1.25) == 1.25
    assert bm25_term(7.0, norms, 1.25) == 1.25  # a review-context memory matching better than the best
    assert bm25_term(3.0, Norms(1.0, 0.0, 0.0), 1.25) == 1.25  # only it matched
    assert bm25_term(None, norms, 1.25) == 0.0


def test_a_review_context_memory_gets_no_bm25_term_above_the_weight(memory: Memory) -> None:
    root = memory.root
    write(root, "facts/a.md", "id: mem_a\ncategory: fact", "The recall cache TTL is fifteen minutes.")
    write(root, "facts/c.md", "id: mem_c\ncategory: fact", "The cache is per tenant.")
    write(
        root,
        "facts/b.md",
        "id: mem_b\ncategory: fact\nstatus: pending_review",
        "Cache TTL rumour: the cache TTL cache TTL might become one hour cache TTL.",
    )
    memory.sync()
    weight = memory.settings.recall.weight_bm25
    result = memory.recall("cache TTL", top_k=5, xray=True)
    hits = {h.id: h for h in result.hits}
    pending = hits["mem_b"]
    assert pending.served_by == "review-context"
    active = [h for h in result.hits if h.status == "active"]
    best = max(h.signals["bm25"] for h in active)
    assert pending.signals["bm25"] > best  # its raw score is above every normaliser's
    assert pending.terms.bm25 == weight  # capped (it was weight × raw / best, far above)
    for h in active:  # ordinary candidates keep exactly weight × raw / best
        assert abs(h.terms.bm25 - weight * h.signals["bm25"] / best) < 1e-4
    assert result.hits[0].id == "mem_a"
    assert result.xray is not None
    shown = {r.memory_id: r.score.bm25 for r in result.xray.results}
    assert shown["mem_b"] == weight


def superseded_history(root: Path) -> None:
    write(
        root,
        "decisions/old.md",
        "id: mem_old\ncategory: decision\ncreated: 2025-01-01T00:00:00Z\nstatus: superseded\n"
        "supersededBy: mem_new\nsupersededAt: 2026-03-01T00:00:00Z\ninvalidAt: 2026-02-01T00:00:00Z",
        "We deploy the release on Tuesdays.",
    )
    write(
        root,
        "decisions/new.md",
        "id: mem_new\ncategory: decision\ncreated: 2026-03-01T00:00:00Z\nvalidAt: 2026-02-01T00:00:00Z\n"
        "supersedes: mem_old",
        "We deploy the release on Thursdays.",
    )
    write(
        root,
        "facts/gone.md",
        "id: mem_gone\ncategory: fact\ncreated: 2025-01-01T00:00:00Z\nstatus: forgotten",
        "We deploy the release from the old laptop.",
    )


def test_as_of_returns_a_memory_superseded_later_as_it_stood_then(memory: Memory) -> None:
    superseded_history(memory.root)
    memory.sync()
    query = "when do we deploy the release"
    then = memory.recall(query, top_k=5, as_of="2025-06-01", xray=True)
    assert [h.id for h in then.hits] == ["mem_old"]  # the forgotten one stays out
    old = then.hits[0]
    assert old.status == "superseded"  # what the file says now
    assert old.terms.status == 0.0 and old.safety == "safe" and not old.verdict.stale
    assert old.rejected_by is None and "status-active" in old.admitted_by
    assert then.xray is not None
    shown = then.xray.results[0]
    assert shown.state_view is None and shown.rejected_by is None
    assert shown.provenance is not None and shown.provenance.stale is False and shown.provenance.safe_to_use
    status = next(s for s in then.stages if s.name == "status-active")
    assert "superseded" not in status.reason and "forgotten" in status.reason

    later = memory.recall(query, top_k=5, as_of="2026-02-15")
    assert [h.id for h in later.hits] == ["mem_new"]  # the old one's validity ended 2026-02-01
    assert "invalidated ×1" in next(s for s in later.stages if s.name == AS_OF_STAGE).reason

    now = memory.recall(query, top_k=5)
    assert [h.id for h in now.hits] == ["mem_new"]  # without asOf: superseded stays out


def test_the_end_of_validity_is_invalid_at_else_superseded_at() -> None:
    at = 1_750_000_000.0  # 2025-06-15
    filters = make_filters(None, "any", at)
    assert filters is not None
    later = facts_of({"created": "2025-01-01", "invalidAt": "2026-02-01", "supersededAt": "2025-03-01"})
    assert filters.verdict(later) is None  # still valid then, though replaced on record earlier
    assert filters.status_at("superseded", later) == "active"
    recorded = facts_of({"created": "2025-01-01", "supersededAt": "2026-03-01"})
    assert filters.verdict(recorded) is None and filters.status_at("superseded", recorded) == "active"
    unknown = facts_of({"created": "2025-01-01"})
    assert filters.status_at("superseded", unknown) == "superseded"  # no known end: stays out
    assert filters.status_at("forgotten", later) == "forgotten"
