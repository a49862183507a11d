"""Session 38: two pending replacements of one memory, approved and dismissed in any order, leave one
current memory (a claim on a dismissed memory stands for what it replaced); a completed commitment
("I sent the report") closes the open one ("I'll send the report by Friday"); entity typing keeps a
tool's name of more words whole ("Argo CD") and a person after a tool cue a person ("we switched to Tom",
"deployed the app with Ben"); "Grafana lives in the monitoring namespace" is a fact.

Real repositories in temp dirs (git, the index), the observer end to end.
"""

from __future__ import annotations

import pytest

from remnic.observe.entities.rules import text_mentions
from remnic.observe.extract import classify
from remnic.service.chain_links import one_sided_links
from remnic.service.memory import Memory

TTL = "The {} cache TTL is {} seconds."


def chain(mem: Memory, name: str) -> dict[str, str]:
    """A(100) ← B(200) current; P1(300) and P2(400) stored, then queued and claiming B."""
    ids = {"A": mem.store(TTL.format(name, 100), category="fact").id}
    ids["B"] = mem.store(TTL.format(name, 200), category="fact", extra={"supersedes": ids["A"]}).id
    for label, value in (("P1", 300), ("P2", 400)):
        ids[label] = mem.store(TTL.format(name, value), category="fact").id
        mem.update(ids[label], {"status": "pending_review"})
        mem.update(ids[label], {"supersedes": ids["B"]})
    return ids


def current(mem: Memory, ids: dict[str, str]) -> str:
    mine = [r for r in mem.files.scan().records if r.id in ids.values()]
    now = [label for label, i in ids.items() if mem.get(i).status == "active"]
    assert len(now) == 1, {label: mem.get(i).status for label, i in ids.items()}
    assert [(a.id, b.id, why) for a, b, _, why in one_sided_links(mine)] == []
    return now[0]


@pytest.mark.parametrize(
    "steps",
    [
        # approve P1, approve P2, dismiss both, approve again: the value's memory before them is replaced
        ("a1", "a2", "d2", "d1", "a2"),
        ("a1", "a2", "d2", "d1", "a1"),
        ("a1", "a2", "d2", "d1", "a1", "a2", "d2"),
    ],
)
def test_pending_replacements_decided_in_any_order_leave_one_current_memory(
    memory: Memory, steps: tuple[str, ...]
) -> None:
    ids = chain(memory, "edge")
    for step in steps:
        label, status = f"P{step[1]}", "active" if step[0] == "a" else "rejected"
        memory.review_disposition(ids[label], status, reason_code="r")
        current(memory, ids)
    if steps[-1] == "a2" and steps[-2] == "d1":
        # P2 claimed the dismissed P1: it replaces what P1 replaced (B), and says so.
        assert memory.get(ids["P2"]).frontmatter["supersedes"] == ids["B"]
        assert memory.get(ids["B"]).frontmatter["supersededBy"] == ids["P2"]
    doctor = {c["name"]: c["status"] for c in memory.doctor()}
    assert doctor["supersession-links"] == "ok", doctor


def test_the_approval_says_it_no_longer_claims_a_dismissed_memory(memory: Memory) -> None:
    ids = chain(memory, "origin")
    for label, status in (("P1", "active"), ("P2", "active"), ("P2", "rejected"), ("P1", "rejected")):
        memory.review_disposition(ids[label], status, reason_code="r")
    result = memory.review_disposition(ids["P2"], "active", reason_code="r")
    assert f"no longer supersedes {ids['P1']}: dismissed" in " ".join(result.warnings)
    assert current(memory, ids) == "P2"


@pytest.mark.parametrize(
    ("done", "said"),
    [
        ("I sent the report.", "Ana sent the report."),
        ("Done: sent the report.", "Ana sent the report."),
    ],
)
def test_a_completed_commitment_closes_the_open_one(memory: Memory, done: str, said: str) -> None:
    first = memory.observe_transcript(
        "mon", "[2026-05-04T09:00:00Z] Ana: I'll send the report by Friday.\n", fmt="plain", flush=True
    )
    (promise,) = first.flushes[0].created
    assert memory.get(promise).frontmatter["structuredAttributes"] == {"commitment": "open"}
    later = memory.observe_transcript("fri", f"[2026-05-08T09:00:00Z] Ana: {done}\n", fmt="plain", flush=True)
    (closing,) = later.flushes[0].created
    closed, completion = memory.get(promise), memory.get(closing)
    assert completion.content == said and completion.status == "active"
    assert completion.frontmatter["structuredAttributes"] == {"commitment": "fulfilled"}
    assert closed.status == "superseded" and closed.frontmatter["supersededBy"] == closing


def test_another_task_done_leaves_the_commitment_open(memory: Memory) -> None:
    first = memory.observe_transcript(
        "mon", "[2026-05-04T09:00:00Z] Ana: I'll send the report by Friday.\n", fmt="plain", flush=True
    )
    (promise,) = first.flushes[0].created
    memory.observe_transcript("fri", "[2026-05-08T09:00:00Z] Ana: I sent the invoice.\n", fmt="plain", flush=True)
    assert memory.get(promise).status == "active"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We use Argo CD.", [("tool", "Argo CD")]),
        ("We use GitHub Actions for CI.", [("tool", "GitHub Actions")]),
        ("We switched to Postgres Monday.", [("tool", "Postgres")]),
        ("Our old sitter moved away, so we switched to Tom.", [("person", "Tom")]),
        ("We switched to Tom for babysitting.", [("person", "Tom")]),
        ("I deployed the app with Ben.", [("person", "Ben")]),
        ("We deploy staging with Flux.", [("tool", "Flux")]),
        ("We use Flux.", [("tool", "Flux")]),
    ],
)
def test_tool_names_stay_whole_and_people_stay_people(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(m.type, m.name) for m in text_mentions(text)] == expected


def test_where_a_system_runs_is_a_fact(memory: Memory) -> None:
    assert classify("Grafana lives in the monitoring namespace.", "user", 4) == ("fact", "where a system runs")
    assert classify("Caroline lives in the city.", "user", 4) == "no durable cue"
    result = memory.observe_transcript(
        "ops", "Ana: Grafana lives in the monitoring namespace.\n", fmt="plain", flush=True
    )
    (created,) = result.flushes[0].created
    assert memory.get(created).content == "Grafana lives in the monitoring namespace."
