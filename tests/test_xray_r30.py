"""X-ray reasons that agree with the rest of the X-ray: direct-answer under --as-of, trust-zone under
--status pending_review; --json against another --format."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from remnic.service.memory import Memory

OLD = {
    "content": "The recall cache TTL is 15 minutes.",
    "category": "decision",
    "created": "2026-04-02T10:00:00.000Z",
    "updated": "2026-04-02T10:00:00.000Z",
    "importanceScore": 0.85,
    "confidence": 0.96,
    "id": "mem_ttl_old",
}


def _supersede(memory: Memory) -> None:
    result = run_cli(
        "store",
        "The recall cache TTL is 5 minutes.",
        "--supersedes",
        "mem_ttl_old",
        "--confidence",
        "0.96",
        "--quiet",
        "--memory-dir",
        str(memory.root),
    )
    assert result.code == 0, result


@pytest.fixture
def superseded(memory: Memory) -> Memory:
    memory.import_records([OLD, {"content": "Ana prefers tabs over spaces.", "category": "preference"}])
    _supersede(memory)
    return memory


def test_as_of_judges_direct_answer_as_the_memory_stood_then(superseded: Memory) -> None:
    root = superseded.root
    result = run_cli(
        "query", "what is the recall cache TTL", "--as-of", "2026-06-01", "--explain", "--memory-dir", str(root)
    )
    assert result.code == 0, result
    assert "stale=false" in result.out
    assert "stale or disputed" not in result.out and "(mem_ttl_old: stale" not in result.out, result.out
    assert "[1] mem_ttl_old — served-by=direct-answer" in result.out, result.out

    # Without --as-of the old one is superseded: out of the results, and its successor answers.
    now = run_cli("query", "what is the recall cache TTL", "--explain", "--memory-dir", str(root))
    assert "[1] mem_ttl_old" not in now.out and "mem_ttl_old" not in now.out.split("reason:")[0]
    assert "served-by=direct-answer" in now.out


def test_a_stale_memory_is_declined_as_stale_with_its_reason(memory: Memory) -> None:
    stale = {**OLD, "id": "mem_ttl_stale", "invalidAt": "2026-05-01T00:00:00Z"}
    memory.import_records([stale, {"content": "Ana prefers tabs over spaces.", "category": "preference"}])
    result = run_cli("query", "what is the recall cache TTL", "--explain", "--memory-dir", str(memory.root))
    assert "(mem_ttl_stale: stale (invalidAt passed))" in result.out, result.out


def test_trust_zone_says_pending_review_was_admitted_because_asked_for(superseded: Memory) -> None:
    rumour = {
        "content": "Someone said the recall cache TTL might move to one hour.",
        "category": "fact",
        "status": "pending_review",
        "confidence": 0.5,
    }
    superseded.import_records([rumour])
    root = superseded.root
    asked = run_cli("query", "recall cache TTL", "--status", "pending_review", "--explain", "--memory-dir", str(root))
    assert "- trust-zone: 1/1 admitted (admitted pending_review ×1: the recall asked for them)" in asked.out, asked.out
    assert "no quarantined or pending_review candidates" not in asked.out
    every = run_cli("query", "recall cache TTL", "--include-inactive", "--explain", "--memory-dir", str(root))
    assert "admitted pending_review ×1: every status is admitted" in every.out, every.out
    default = run_cli("query", "recall cache TTL", "--explain", "--memory-dir", str(root))
    assert "1 pending_review kept as review-context)" in default.out and "asked for" not in default.out


@pytest.mark.parametrize(
    ("args", "other"),
    [
        (("xray", "cache TTL", "--json", "--format", "markdown"), "markdown"),
        (("--json", "xray", "cache TTL", "--format", "text"), "text"),
    ],
)
def test_json_and_another_format_is_a_usage_error_naming_both(superseded: Memory, args: tuple, other: str) -> None:
    result = run_cli(*args, "--memory-dir", str(superseded.root))
    assert result.code == 2, result
    assert "--json" in result.err and f"--format {other}" in result.err, result.err
    assert result.out == ""


@pytest.mark.parametrize("args", [("xray", "cache TTL", "--json"), ("xray", "cache TTL", "--json", "--format", "json")])
def test_json_alone_or_agreeing_prints_json(superseded: Memory, args: tuple) -> None:
    result = run_cli(*args, "--memory-dir", str(superseded.root))
    assert result.code == 0, result
    assert json.loads(result.out)["snapshotFound"] is True


def test_a_memory_without_a_context_passage_has_its_chunk_cosine_as_its_similarity(memory: Memory) -> None:
    for text in (
        "Runbook step 19: to roll back a search release, run make rollback VERSION=prev.",
        "The billing service uses PostgreSQL 16.",
        "Ana prefers tabs over spaces.",
    ):
        memory.store(text, category="fact")
    result = memory.recall("zzzqqq nonexistent", top_k=5)
    assert result.candidates
    for c in result.candidates:  # not 1.5 × the chunk cosine: the text is counted once
        assert abs(c.cosine - c.chunk_cosine) < 1e-6, (c.path, c.cosine, c.chunk_cosine)
    xray = json.loads(run_cli("xray", "zzzqqq nonexistent", "--format", "json", "--memory-dir", str(memory.root)).out)
    for hit in xray["results"]:
        assert hit["rawScores"]["vector"] < 0.3, hit  # a cosine, read against minSimilarity (0.2)
