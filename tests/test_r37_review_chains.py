"""Session 37: two memories waiting for review that claim the same current memory, approved and dismissed in
any order, leave one current memory of the value with its chain set on both sides; HTTP's review-disposition
and its MCP tool return the decision's warnings as the CLI prints them; a revert undoing an earlier revert's
release of a claim does not say the memory would be current again.

A real repository in a temp dir, a real server on 127.0.0.1 and the official mcp SDK client (which checks
the tool's outputSchema).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from test_r37_noticed import mcp_call
from test_server_http import Env, make_shared_env

from remnic.service.chain_links import one_sided_links
from remnic.service.chains import Links
from remnic.service.memory import Memory

TTL = "The cache TTL is {} seconds."


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        yield from make_shared_env(tmp_path_factory.mktemp("r37chains"))


def chain(mem: Memory, name: str) -> dict[str, str]:
    """A(100) ← B(200) current; P1(300) and P2(400) stored, then queued and claiming B (`update --supersedes`)."""
    ids = {"A": mem.store(TTL.format(f"100 {name}"), category="fact").id}
    ids["B"] = mem.store(TTL.format(f"200 {name}"), category="fact", extra={"supersedes": ids["A"]}).id
    for label, value in (("P1", 300), ("P2", 400)):
        ids[label] = mem.store(TTL.format(f"{value} {name}"), category="fact").id
        mem.update(ids[label], {"status": "pending_review"})
        mem.update(ids[label], {"supersedes": ids["B"]})
    return ids


def consistent(mem: Memory, ids: dict[str, str]) -> str:
    """The label of the value's one current memory; the chain has no link on one side only, nothing stranded."""
    records = mem.files.scan().records
    mine = [r for r in records if r.id in ids.values()]
    current = [label for label, i in ids.items() if mem.get(i).status == "active"]
    assert len(current) == 1, {label: mem.get(i).status for label, i in ids.items()}
    assert [(a.id, b.id, why) for a, b, _, why in one_sided_links(mine)] == []
    assert [s.describe() for s in Links(records).stranded() if s.old.id in ids.values()] == []
    return current[0]


def decide(mem: Memory, ids: dict[str, str], label: str, status: str) -> list[str]:
    return list(mem.review_disposition(ids[label], status, reason_code="r").warnings)


def test_two_claims_on_one_memory_approved_in_turn_then_dismissed_leave_one_current_value(env: Env) -> None:
    mem = env.memory
    ids = chain(mem, "seconds for the edge")
    decide(mem, ids, "P1", "active")
    assert consistent(mem, ids) == "P1"
    # P2's claim on B is stale (P1 replaced B since): dropped and said; P2 replaces P1, the value's memory.
    said = decide(mem, ids, "P2", "active")
    assert said == [f"no longer supersedes {ids['B']}: replaced since"]
    assert mem.get(ids["B"]).frontmatter["supersededBy"] == ids["P1"]
    assert mem.get(ids["P2"]).frontmatter["supersedes"] == ids["P1"]
    assert consistent(mem, ids) == "P2"
    decide(mem, ids, "P2", "rejected")  # only the value before P2 comes back
    assert consistent(mem, ids) == "P1"
    assert mem.get(ids["B"]).status == "superseded"
    doctor = {c["name"]: c["status"] for c in mem.doctor()}
    assert doctor["supersession-links"] == "ok", doctor
    # Decided again, in any order: still one current memory, linked both ways.
    for label, status, current in (
        ("P2", "active", "P2"),
        ("P2", "rejected", "P1"),
        ("P2", "active", "P2"),
        ("P2", "rejected", "P1"),
        ("P1", "rejected", "B"),
    ):
        decide(mem, ids, label, status)
        assert consistent(mem, ids) == current, (label, status)


def test_a_claim_dropped_on_the_cli_is_the_same_as_over_the_python_api(env: Env) -> None:
    ids = chain(env.memory, "seconds for the origin")
    for label in ("P1", "P2"):
        r = run_cli("review", "approve", ids[label], "--json", "--memory-dir", str(env.root))
        assert r.code == 0, r.err
    assert r.json()["warnings"] == [f"no longer supersedes {ids['B']}: replaced since"]
    assert consistent(env.memory, ids) == "P2"


def test_review_disposition_returns_the_decisions_warnings_over_http_and_mcp(env: Env) -> None:
    mem = env.memory
    # A flag of a memory that replaced another hides that value: said over HTTP as on the CLI.
    old = mem.store("The deploy window is Monday.", category="fact").id
    new = mem.store("The deploy window is Tuesday.", category="fact", extra={"supersedes": old}).id
    r = env.call("POST", "/remnic/v1/review-disposition", {"memoryId": new, "status": "quarantined", "reasonCode": "x"})
    assert r.status == 200, r.raw
    (warning,) = r.json()["warnings"]
    assert warning["field"] == "status" and warning["message"].startswith(f"hidden value: {old}")
    assert f"`remnic review dismiss {new}`" in warning["message"]

    # A stale claim dropped on approval, over MCP (the SDK client validates the output schema).
    ids = chain(mem, "seconds for the api")
    first = mcp_call(env, "remnic_review_disposition", {"memoryId": ids["P1"], "status": "active", "reasonCode": "ok"})
    assert not first.is_error and "warnings" not in first.structured_content
    tool = mcp_call(env, "remnic_review_disposition", {"memoryId": ids["P2"], "status": "active", "reasonCode": "ok"})
    assert not tool.is_error, tool.content
    assert tool.structured_content["warnings"] == [
        {"field": "supersedes", "message": f"no longer supersedes {ids['B']}: replaced since"}
    ]
    assert consistent(mem, ids) == "P2"


def test_a_revert_back_to_a_claiming_version_does_not_say_current_again(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root) as mem:
        a = mem.store("The staging DB port is 5432.", category="fact").id
        b = mem.store("The staging DB port is 5433.", category="fact").id
        c = mem.store("The staging DB port is 6543.", category="fact").id
        mem.update(b, {"supersedes": a})
        mem.update(c, {"supersedes": b})
    assert run_cli("versions", "revert", c, "v1", "--memory-dir", str(root)).code == 0  # b current again
    r = run_cli("versions", "revert", c, "v2", "--memory-dir", str(root))
    assert r.code == 2
    assert f"v2 says {c} (current) supersedes {b}" in r.err and "current again" not in r.err, r.err
