"""Recency queries, superseded memories beside their successors, status flags that contradict each
other, `remnic xray`'s filters, and where a status the recall did not ask for is rejected."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.memfile.model import format_time
from remnic.service.memory import Memory

PINNED = 1_776_706_200_000  # 2026-04-20T17:30:00Z
DAY = 86_400


def at(days_ago: int) -> str:
    return format_time(PINNED / 1000 - days_ago * DAY)


OLD = at(200)
RECENT = [  # the hire's wording is under the similarity floor; the newer latency memory's is not
    {
        "id": "mem_latency",
        "content": "Last week billing-api p95 latency improved from 480ms to 210ms after adding an index.",
        "category": "moment",
        "created": at(2),
        "updated": at(2),
    },
    {
        "id": "mem_hire",
        "content": "A new backend engineer, Lars Nygaard, joined the team on Monday.",
        "category": "moment",
        "created": at(3),
        "updated": at(3),
    },
]
TEAM = [
    {"id": "mem_rule", "content": "Rule: no production changes on Fridays.", "category": "rule"},
    {"id": "mem_go", "content": "The billing-api service is written in Go."},
    {"id": "mem_standup", "content": "Daily standup is at 9:30 CET."},
    {"id": "mem_redis", "content": "Session data lives in a Redis cluster."},
    {"id": "mem_cdn", "content": "The webapp is served from a CDN."},
]
DEPLOYS = [
    {
        "id": "mem_tue",
        "content": "Decision: production deploys happen on Tuesdays.",
        "category": "decision",
        "supersedes": "mem_thu",
    },
    {
        "id": "mem_thu",
        "content": "Decision: production deploys happen on Thursdays.",
        "category": "decision",
        "status": "superseded",
        "supersededBy": "mem_tue",
    },
    {"id": "mem_old", "content": "Deploy announcements went to the #orbit-dev channel.", "status": "archived"},
    {"id": "mem_rum", "content": "Rumour: production deploys may move to Fridays.", "status": "pending_review"},
]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("r33") / "team"
    memory = Memory.init(root)
    memory.import_records([{**r, "created": OLD, "updated": OLD} for r in TEAM] + RECENT)
    yield memory
    memory.close()


@pytest.fixture(scope="module")
def deploys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    memory = Memory.init(tmp_path_factory.mktemp("r33") / "deploys")
    memory.import_records(DEPLOYS)
    yield memory
    memory.close()


def ids(memory: Memory, query: str, **options: Any) -> list[str]:
    return [h.id for h in memory.recall(query, clock=PINNED, audit=False, **options).hits]


# --------------------------------------------------------------------- 2. recency queries


def test_what_changed_recently_returns_the_recent_memories_ahead_of_old_ones(team: Memory) -> None:
    result = team.recall("what changed recently?", clock=PINNED, audit=False)
    order = [h.id for h in result.hits]
    assert set(order[:2]) == {"mem_latency", "mem_hire"}, order  # the rule only shares "changes"
    assert all(h.served_by == "recent-scan" for h in result.hits[:2])
    # The hire's wording is under the similarity floor: recent-scan keeps it past it (exempt, not passed).
    assert next(h for h in result.hits if h.id == "mem_hire").rejected_by == "similarity-floor"
    floor = next(s for s in result.stages if s.name == "similarity-floor")
    assert floor.admitted >= 3


def test_a_recency_only_query_is_bounded_by_top_k_not_recent_scan_max(team: Memory) -> None:
    one = Memory.open(settings=settings_for(team.root, recall={"recent_scan_max": 1}))
    try:
        assert ids(one, "what changed recently?")[:2] == ["mem_latency", "mem_hire"]  # recentScanMax: topic queries
        assert ids(one, "what changed recently?", top_k=1) == ["mem_latency"]  # the newest one only
    finally:
        one.close()


FIVE_RECENT = [  # h3's wording: most of it under the similarity floor for "what changed recently?"
    ("mem_r1", "Team lunch on Thursday was at the ramen place near the station.", 1),
    ("mem_r2", "Ana scheduled the Q1 roadmap review for 12 January.", 2),
    ("mem_r3", "Decision: error budgets are reviewed every two weeks.", 3),
    ("mem_r4", "Billing-api p95 latency improved from 480ms to 210ms after adding an index.", 4),
    ("mem_r5", "A backend engineer, Lars Nygaard, joined the team on Monday.", 5),
]
# Old memories holding the query's recency words, and a decision the direct-answer tier would pin.
OLD_TRAPS: list[dict[str, Any]] = [
    {"id": "mem_trap_latest", "content": "The latest release of the webapp is 3.4.1."},
    {
        "id": "mem_trap_changes",
        "content": "Decision: recent changes to the deploy process are announced in #ops.",
        "category": "decision",
        "importance": 0.9,
        "confidence": 0.95,
    },
    {
        "id": "mem_k8s_decision",
        "content": "Decision: clusters stay on Kubernetes 1.29 until the Q3 upgrade window.",
        "category": "decision",
    },
    {
        "id": "mem_k8s_commit",
        "content": "Commitment: Jonas will upgrade the clusters to Kubernetes 1.31 in Q3.",
        "category": "commitment",
    },
]


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    memory = Memory.init(tmp_path_factory.mktemp("r33") / "busy")
    recent = [
        {"id": i, "content": text, "category": "moment", "created": at(days), "updated": at(days)}
        for i, text, days in FIVE_RECENT
    ] + [
        {
            "id": "mem_python",
            "content": "Upgraded the Python version on the build agents to 3.12.",
            "created": at(6),
            "updated": at(6),
        }
    ]
    old = [{**r, "created": OLD, "updated": OLD} for r in TEAM + OLD_TRAPS]
    memory.import_records(old + recent)
    yield memory
    memory.close()


def test_a_recency_only_query_admits_every_recent_memory_newest_first(busy: Memory) -> None:
    result = busy.recall("what changed recently?", clock=PINNED, audit=False, top_k=8)
    order = [h.id for h in result.hits]
    # Every memory of the window, not only recentScanMax (3) of them, newest first, ahead of the old
    # ones that share the recency words (and of the old decision the direct-answer tier would pin).
    assert order[:6] == [i for i, _, _ in FIVE_RECENT] + ["mem_python"], order
    assert all(h.served_by == "recent-scan" for h in result.hits[:6])
    assert result.hits[5].terms.final > result.hits[6].terms.final


def test_a_recency_word_in_an_old_memory_does_not_lift_an_off_topic_recent_one(busy: Memory) -> None:
    result = busy.recall("latest Kubernetes version", clock=PINNED, audit=False, top_k=6)
    order = [h.id for h in result.hits]
    # "latest Kubernetes version" asks about Kubernetes: the recent Python upgrade, sharing "version",
    # gets recentScanPrior × freshness at most, never what it takes to pass the Kubernetes memories.
    assert order.index("mem_python") > max(order.index("mem_k8s_decision"), order.index("mem_k8s_commit")), order
    python = next(h for h in result.hits if h.id == "mem_python")
    assert python.served_by == "recent-scan" and python.terms.tier_prior <= 0.15


@pytest.mark.parametrize(
    "query",
    [
        "what happened lately?",
        "any news lately?",
        "what happened recently?",
        "what is going on recently?",
        "anything new lately?",
        "what's been updated lately?",
    ],
)
def test_generic_words_of_a_recency_question_are_no_topic_words(team: Memory, query: str) -> None:
    from remnic.index.bm25 import query_terms
    from remnic.recall.tiers import intent_of

    assert ids(team, query, top_k=3)[:2] == ["mem_latency", "mem_hire"]
    assert intent_of(query, query_terms(query, stopwords=True, language="english")).recency_only


def test_a_query_not_about_recency_keeps_the_floor_for_recent_memories(team: Memory) -> None:
    result = team.recall("production changes", clock=PINNED, audit=False)
    assert [h.id for h in result.hits] == ["mem_rule"]
    assert not any(c.entered_by == "recent-scan" for c in result.candidates)


# --------------------------------------------------------------------- 3. a superseded memory and its successor


def test_a_superseded_memory_ranks_below_its_successor(deploys: Memory) -> None:
    got = ids(deploys, "production deploys", statuses=["active", "superseded"])
    assert got.index("mem_tue") < got.index("mem_thu"), got
    everything = ids(deploys, "production deploys", include_inactive=True)
    assert everything.index("mem_tue") < everything.index("mem_thu"), everything


def test_the_successor_is_served_when_the_cut_falls_between_it_and_its_predecessor(deploys: Memory) -> None:
    both = deploys.recall("production deploys", statuses=["active", "superseded"], clock=PINNED, audit=False)
    by_id = {h.id: h for h in both.hits}
    assert by_id["mem_thu"].terms.final > by_id["mem_tue"].terms.final  # the replaced one scores higher
    for options in ({"statuses": ["active", "superseded"]}, {"include_inactive": True}):
        assert ids(deploys, "production deploys", top_k=1, **options) == ["mem_tue"], options
    code, out, _ = cli(deploys.root, "query", "--include-superseded", "-k", "1")
    assert code == 0 and [h["id"] for h in json.loads(out)["hits"]] == ["mem_tue"]


# --------------------------------------------------------------------- 7. statuses the recall did not ask for


def test_a_status_choice_rejects_pending_review_at_status_active(deploys: Memory) -> None:
    result = deploys.recall("production deploys", statuses=["archived"], clock=PINNED, audit=False)
    stages = {s.name: s for s in result.stages}
    assert "pending_review" in stages["status-active"].reason
    assert stages["trust-zone"].considered == stages["trust-zone"].admitted
    rum = next(c for c in result.candidates if c.id == "mem_rum")
    assert rum.rejected_by == "status-active"
    default = deploys.recall("production deploys", clock=PINNED, audit=False)  # review context as before
    assert next(h for h in default.hits if h.id == "mem_rum").served_by == "review-context"


def test_pending_review_asked_for_is_not_review_context(deploys: Memory) -> None:
    choices: tuple[dict[str, Any], ...] = ({"statuses": ["pending_review"]}, {"include_inactive": True})
    for options in choices:
        result = deploys.recall("production deploys", clock=PINNED, audit=False, xray=True, **options)
        rum = next(h for h in result.hits if h.id == "mem_rum")
        assert rum.served_by == "hybrid", options
    assert result.xray is not None


# --------------------------------------------------------------------- 4 and 5. the CLI's filter flags


def cli(root: Path, command: str, *args: str) -> tuple[int, str, str]:
    r = run_cli(command, "production deploys", "--memory-dir", str(root), "--json", *args)
    return r.code, r.out, r.err


def test_status_flags_combine_or_are_refused(deploys: Memory) -> None:
    code, out, _ = cli(deploys.root, "query", "--status", "archived", "--include-superseded")
    assert code == 0
    assert {h["id"] for h in json.loads(out)["hits"]} == {"mem_old", "mem_thu"}
    code, _, err = cli(deploys.root, "query", "--status", "active", "--include-inactive")
    assert code == 2 and "--include-inactive" in err and "--status" in err
    code, _, err = cli(deploys.root, "xray", "--tag-match", "all")
    assert code == 2 and "--tag-match" in err and "--tag" in err


def test_xray_takes_the_recall_filters(deploys: Memory) -> None:
    code, out, err = cli(deploys.root, "xray", "--status", "archived", "--include-superseded")
    assert code == 0, err
    snap = json.loads(out)
    assert {r["memoryId"] for r in snap["results"]} == {"mem_old", "mem_thu"}
    plain = json.loads(cli(deploys.root, "xray")[1])
    assert {r["memoryId"] for r in plain["results"]} >= {"mem_tue"}
    code, out, err = cli(
        deploys.root, "xray", "--category", "decision", "--tag", "ops", "--as-of", "2026-01-01", "--include-inactive"
    )
    assert code == 0, err
    names = [f["name"] for f in json.loads(out)["filters"]]
    assert {"category-scope", "tag-match", "as-of"} <= set(names)


def test_a_recent_memory_the_retrievers_missed_is_kept_past_the_floor_in_a_large_repository(
    tmp_path: Path,
) -> None:
    """Offered by recent-scan, it is exempt from the floors before its gates run (it was rejected by them)."""
    from remnic.config import settings_for
    from remnic.service.memory import Memory

    root = tmp_path / "mem"
    old = "2025-01-10T09:00:00Z"
    lines = [
        {
            "content": f"Service number {i} of the fleet runs in rack {i % 17} with owner team {i % 5}.",
            "created": old,
            "updated": old,
        }
        for i in range(240)
    ]
    recent = [
        "Billing-api p95 latency improved from 480ms to 210ms after adding an index.",
        "Lars Nygaard joined the backend team on Monday.",
        "The staging cluster moved to three availability zones.",
    ]
    with Memory.init(root, settings=settings_for(root)) as mem:
        mem.import_records(lines)
        for text in recent:
            mem.store(text)
        got = [h.content for h in mem.recall("what changed recently?", top_k=5).hits]
    assert set(recent) <= set(got[:3]), got


def test_go_is_a_topic_not_a_recency_word() -> None:
    from remnic.index.bm25 import query_terms
    from remnic.recall.tiers import intent_of

    def only(q: str) -> bool:
        return intent_of(q, query_terms(q, stopwords=True, language="english")).recency_only

    assert not only("what's new in Go?")
    assert only("what is going on recently?")
