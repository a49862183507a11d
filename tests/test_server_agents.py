"""The agents' routes and tools: each answered over HTTP and over MCP (the official SDK client,
streamable HTTP, a real server on 127.0.0.1) with identical JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_server_http import NAMESPACES, Env, make_env
from test_server_mcp import http_client, run, text


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


@pytest.fixture
def ns_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


def tool(env: Env, name: str, arguments: dict[str, Any], token: str | None = None) -> Any:
    async def go() -> Any:
        async with http_client(env, token or env.alice) as client:
            return await client.call_tool(name, arguments)

    return run(go)


def same_over_both(env: Env, method: str, path: str, body: Any, name: str, arguments: dict[str, Any]) -> dict:
    """The route's body and the tool's text are the same bytes; returns the parsed body."""
    r = env.call(method, path, body)
    assert r.status < 300, r.raw
    result = tool(env, name, arguments)
    assert not result.is_error, text(result)
    assert text(result).encode() == r.raw, (text(result), r.raw)
    assert result.structured_content == json.loads(r.raw)
    return json.loads(r.raw)


CHAT = [
    {"role": "user", "content": "Let's rename the billing service to ledger-api before the March freeze."},
    {"role": "assistant", "content": "Agreed, I will update the deploy manifests."},
]


# --- the transcript archive ---


def test_lcm_search_flush_record_and_status_over_http_and_mcp(env: Env) -> None:
    assert env.call("POST", "/engram/v1/observe", {"sessionKey": "s1", "messages": CHAT}).status == 202
    body = same_over_both(
        env,
        "POST",
        "/engram/v1/lcm/search",
        {"query": "rename the billing service", "limit": 5},
        "remnic_lcm_search",
        {"query": "rename the billing service", "limit": 5},
    )
    assert body["lcmEnabled"] is True and body["count"] >= 1
    assert body["results"][0] | {"sessionId": "s1", "turnIndex": 0} == body["results"][0]
    assert set(body) >= {"query", "namespace", "results", "count", "lcmEnabled"}

    flushed = same_over_both(
        env,
        "POST",
        "/remnic/v1/lcm/compaction/flush",
        {"sessionKey": "s1"},
        "remnic_lcm_compaction_flush",
        {"sessionKey": "s1"},
    )
    assert flushed | {"enabled": True, "flushed": True, "sessionKey": "s1", "archivedTurns": 2} == flushed
    recorded = same_over_both(
        env,
        "POST",
        "/engram/v1/lcm/compaction/record",
        {"sessionKey": "s1", "tokensBefore": 5000, "tokensAfter": 800},
        "remnic_lcm_compaction_record",
        {"sessionKey": "s1", "tokensBefore": 5000, "tokensAfter": 800},
    )
    assert recorded["recorded"] is True and recorded["turnsArchived"] == 2
    ledger = (env.root / "state" / "lcm-compactions.jsonl").read_text().splitlines()
    assert len(ledger) == 2  # once over HTTP, once over MCP

    status = env.call("GET", "/engram/v1/lcm/status").json()
    assert status["enabled"] is True and status["archiveAvailable"] is True
    assert status["stats"]["totalTurns"] == 2

    bad = env.call("POST", "/engram/v1/lcm/compaction/record", {"sessionKey": "s1", "tokensBefore": -1})
    assert bad.status == 400
    fields = {d["field"] for d in bad.json()["details"]}
    assert fields == {"tokensBefore", "tokensAfter"}


def test_lcm_search_stays_inside_the_callers_namespaces(ns_env: Env) -> None:
    env = ns_env
    env.call("POST", "/engram/v1/observe", {"sessionKey": "a", "messages": CHAT})
    env.call("POST", "/engram/v1/observe", {"sessionKey": "b", "messages": CHAT}, token="bob")
    mine = env.call("POST", "/engram/v1/lcm/search", {"query": "billing"}).json()
    assert {r["sessionKey"] for r in mine["results"]} == {"a"} and mine["namespace"] == "alice"
    theirs = env.call("POST", "/engram/v1/lcm/search", {"query": "billing", "namespace": "bob"})
    assert theirs.status == 403 and theirs.json()["code"] == "namespace_forbidden"


# --- entities ---


def test_entities_list_and_get_over_http_and_mcp(env: Env) -> None:
    for content in ("Priya Raman approved the Postgres 16 upgrade.", "Ana prefers tabs over spaces."):
        assert env.call("POST", "/engram/v1/memories", {"content": content}).status == 201
    listed = same_over_both(
        env, "GET", "/engram/v1/entities?type=person", None, "remnic_memory_entities", {"type": "person"}
    )
    assert [e["name"] for e in listed["entities"]] == ["Ana", "Priya Raman"]
    assert listed["total"] == 2 and listed["limit"] == 50 and listed["offset"] == 0
    assert (
        listed["entities"][1] | {"id": "person-priya-raman", "factCount": 1, "managed": True} == listed["entities"][1]
    )

    got = same_over_both(
        env, "GET", "/remnic/v1/entities/Priya%20Raman", None, "remnic_entity_get", {"name": "Priya Raman"}
    )
    assert got["found"] is True and got["entity"]["type"] == "person"
    assert got["entity"]["timeline"][0]["text"].startswith("Priya Raman approved")
    assert got["entity"]["relationships"] == [{"target": "tool-postgres", "label": "named together in 1 memory"}]

    missing = env.call("GET", "/engram/v1/entities/nobody")
    assert missing.status == 404 and missing.json()["found"] is False
    result = tool(env, "remnic_entity_get", {"name": "nobody"})
    assert not result.is_error and text(result).encode() == missing.raw
    assert env.call("GET", "/engram/v1/entities?type=dragon").status == 400


def test_entities_over_http_hide_forgotten_pages_and_refuse_an_ambiguous_first_name(env: Env) -> None:
    for content in ("Ana Silva approved the budget.", "Ana Costa approved the plan.", "Priya Raman said yes."):
        assert env.call("POST", "/engram/v1/memories", {"content": content}).status == 201
    assert env.call("GET", "/engram/v1/entities/Priya%20Raman").status == 200
    env.memory.refresh_entities()  # a read writes no page: one to forget is written first
    env.memory.forget("person-priya-raman", "not tracked")
    names = [e["name"] for e in env.call("GET", "/engram/v1/entities").json()["entities"]]
    assert names == ["Ana Costa", "Ana Silva"]
    assert env.call("GET", "/engram/v1/entities/Priya%20Raman").status == 404
    ambiguous = env.call("GET", "/engram/v1/entities/Ana")
    assert ambiguous.status == 400 and "Ana Costa" in ambiguous.raw.decode() and "Ana Silva" in ambiguous.raw.decode()


# --- feedback and citations ---


def test_feedback_and_citations_over_http_and_mcp(env: Env) -> None:
    stored = env.call("POST", "/engram/v1/memories", {"content": "We deploy on Tuesdays"}).json()
    memory_id, path = stored["memoryId"], stored["path"]
    r = env.call("POST", f"/engram/v1/memories/{memory_id}/feedback", {"vote": "up", "note": "right"})
    assert r.status == 200, r.raw
    assert r.json() | {"recorded": True, "reinforcement_count": 1, "accessCount": 1} == r.json()
    result = tool(env, "remnic_memory_feedback", {"memoryId": memory_id, "signal": "thumbs_up"})
    assert not result.is_error and result.structured_content["reinforcement_count"] == 2
    assert set(result.structured_content) == set(r.json())

    body = {
        "sessionId": "s1",
        "citations": {"entries": [{"path": path, "lineStart": 1, "lineEnd": 2}], "rolloutIds": ["r"]},
    }
    for route in ("/v1/citations/observed", "/engram/v1/citations/observed"):
        r = env.call("POST", route, body)
        assert r.status == 200, r.raw
        assert (
            r.json() | {"ok": True, "submitted": 1, "matched": 1, "entriesReceived": 1, "rolloutIdsReceived": 1}
            == r.json()
        )
    result = tool(env, "remnic_citations_observed", body)
    assert not result.is_error and result.structured_content["memoryIds"] == [memory_id]
    got = env.call("GET", f"/engram/v1/memories/{memory_id}").json()["memory"]["frontmatter"]
    assert got["reinforcement_count"] == 5 and got["accessCount"] == 5

    assert env.call("POST", "/v1/citations/observed", {"citations": "nope"}).status == 400
    assert env.call("POST", f"/engram/v1/memories/{memory_id}/feedback", {}).status == 400
    assert env.call("POST", "/engram/v1/memories/mem_nope/feedback", {"vote": "up"}).status == 404


def test_feedback_over_http_refuses_a_conflicting_id_and_retired_memories(env: Env) -> None:
    kept = env.call("POST", "/engram/v1/memories", {"content": "We deploy on Tuesdays"}).json()["memoryId"]
    gone = env.call("POST", "/engram/v1/memories", {"content": "The staging box is kestrel"}).json()
    env.memory.forget(gone["memoryId"], "renamed")
    head = env.memory.head()
    r = env.call("POST", f"/engram/v1/memories/{kept}/feedback", {"memoryId": gone["memoryId"], "vote": "up"})
    assert r.status == 400 and kept in r.raw.decode() and gone["memoryId"] in r.raw.decode()
    r = env.call("POST", f"/engram/v1/memories/{gone['memoryId']}/feedback", {"vote": "up"})
    assert r.status == 400 and "is forgotten" in r.raw.decode()
    result = tool(env, "remnic_memory_feedback", {"memoryId": gone["memoryId"], "vote": "up"})
    assert result.is_error and "is forgotten" in text(result)
    cited = {"citations": {"entries": [{"path": gone["path"], "lineStart": 1, "lineEnd": 2}]}}
    r = env.call("POST", "/v1/citations/observed", cited)
    assert r.status == 400 and "is forgotten" in r.raw.decode()
    assert env.memory.head() == head and "accessCount" not in env.memory.get(kept).frontmatter
    same = env.call("POST", f"/engram/v1/memories/{kept}/feedback", {"memoryId": kept, "vote": "up"})
    assert same.status == 200, same.raw


# --- suggestions, profile, day summary, coding context ---


def test_suggestions_over_http_and_mcp(env: Env) -> None:
    r = env.call("POST", "/engram/v1/suggestions", {"content": "Maybe deploy on Wednesdays", "category": "decision"})
    assert r.status == 201, r.raw
    body = r.json()
    assert body | {"operation": "suggestion_submit", "status": "queued_for_review", "queued": True} == body
    result = tool(env, "remnic_suggestion_submit", {"content": "Maybe freeze deploys in December", "dryRun": True})
    assert not result.is_error
    assert (
        result.structured_content | {"status": "validated", "queued": True, "dryRun": True} == result.structured_content
    )
    queue = env.call("GET", "/engram/v1/review-queue").json()
    assert [m["content"] for m in queue["memories"]] == ["Maybe deploy on Wednesdays"]
    assert env.call("POST", "/engram/v1/suggestions", {"content": "x", "status": "active"}).status == 400


def test_review_disposition_over_http_and_mcp_leaves_the_queue(env: Env) -> None:
    first, second = (
        env.call("POST", "/engram/v1/suggestions", {"content": text}).json()["memoryId"]
        for text in ("Maybe deploy on Wednesdays", "Maybe freeze deploys in December")
    )
    r = env.call(
        "POST", "/engram/v1/review-disposition", {"memoryId": first, "status": "active", "reasonCode": "approved"}
    )
    assert r.status == 200, r.raw
    body = r.json()
    assert body | {"ok": True, "memoryId": first, "status": "active", "previousStatus": "pending_review"} == body
    assert body["commit"] and env.memory.get(first).frontmatter["reviewReasonCode"] == "approved"
    result = tool(env, "remnic_review_disposition", {"memoryId": second, "status": "rejected", "reasonCode": "wrong"})
    assert not result.is_error, text(result)
    assert result.structured_content["status"] == "rejected" and env.memory.get(second).status == "rejected"
    assert env.call("GET", "/engram/v1/review-queue").json()["count"] == 0
    bad = env.call("POST", "/engram/v1/review-disposition", {"memoryId": first, "status": "done", "reasonCode": "x"})
    assert bad.status == 400 and "active, rejected, quarantined" in bad.raw.decode()
    missing = env.call("POST", "/engram/v1/review-disposition", {"memoryId": first, "status": "active"})
    assert missing.status == 400 and "reasonCode" in missing.raw.decode()


def test_review_disposition_refuses_a_memory_not_in_the_queue_over_http_and_mcp(env: Env) -> None:
    gone = env.memory.store("Ana's home address is 12 Elm Street").record
    env.memory.forget(gone.id, reason="GDPR")
    head = env.memory.ledger.head()
    r = env.call(
        "POST", "/engram/v1/review-disposition", {"memoryId": gone.id, "status": "active", "reasonCode": "approved"}
    )
    assert r.status == 400 and r.json()["code"] == "input_error", r.raw
    assert f"{gone.id} is forgotten, not waiting for review" in r.json()["error"]
    result = tool(env, "remnic_review_disposition", {"memoryId": gone.id, "status": "active", "reasonCode": "ok"})
    assert result.is_error and f"{gone.id} is forgotten, not waiting for review" in text(result)
    assert env.memory.get(gone.id).status == "forgotten" and env.memory.ledger.head() == head


def test_profile_and_day_summary_over_http_and_mcp(env: Env) -> None:
    env.call("POST", "/engram/v1/memories", {"content": "Ana prefers dark mode", "category": "preference"})
    env.call("POST", "/engram/v1/memories", {"content": "Never force-push to main", "category": "rule"})
    profile = same_over_both(env, "GET", "/engram/v1/profile", None, "remnic_memory_profile", {})
    assert [p["content"] for p in profile["preferences"]] == ["Ana prefers dark mode"]
    assert [p["content"] for p in profile["rules"]] == ["Never force-push to main"]
    day = env.call("GET", "/engram/v1/memories").json()["memories"][0]["created"][:10]
    digest = same_over_both(env, "POST", "/engram/v1/day-summary", {"date": day}, "remnic_day_summary", {"date": day})
    assert digest["total"] == 2 and digest["counts"] == {"preference": 1, "rule": 1} and digest["llm"] is False
    assert env.call("GET", f"/engram/v1/day-summary?date={day}").json() == digest
    assert env.call("POST", "/engram/v1/day-summary", {"date": "May 5"}).status == 400


def test_day_summary_over_http_shows_only_active_memories_in_the_default_namespace(env: Env) -> None:
    kept = env.call("POST", "/engram/v1/memories", {"content": "We deploy from main", "category": "decision"}).json()
    gone = env.call("POST", "/engram/v1/memories", {"content": "The staging box is kestrel"}).json()
    env.memory.forget(gone["memoryId"], "renamed")
    day = env.memory.get(kept["memoryId"]).frontmatter["created"][:10]
    digest = env.call("GET", f"/engram/v1/day-summary?date={day}").json()
    assert [m["id"] for s in digest["sections"] for m in s["memories"]] == [kept["memoryId"]]
    assert [(c["id"], c["status"]) for c in digest["changed"]] == [(gone["memoryId"], "forgotten")]
    assert digest["namespace"] == "default"


def test_coding_context_tags_writes_and_boosts_recall(env: Env) -> None:
    r = env.call("POST", "/engram/v1/coding-context", {"sessionKey": "s1", "projectTag": "webapp"})
    assert r.status == 200 and r.json()["codingContext"]["projectId"] == "tag:webapp"
    result = tool(env, "remnic_set_coding_context", {"sessionKey": "s1", "projectTag": "webapp"})
    assert text(result).encode() == r.raw
    ours = env.call("POST", "/engram/v1/memories", {"content": "Run tests with npm test", "sessionKey": "s1"}).json()
    assert ours["project"] == "webapp"
    theirs = env.call("POST", "/engram/v1/memories", {"content": "Run tests with make test"}).json()
    recalled = env.call(
        "POST", "/engram/v1/recall", {"query": "how do I run tests", "sessionKey": "s1", "includeDebug": True}
    ).json()
    assert recalled["codingContext"]["projectName"] == "webapp"
    scores = {r["id"]: r["debug"]["scoreDecomposition"]["project"] for r in recalled["results"]}
    assert scores[ours["memoryId"]] > 0 and scores[theirs["memoryId"]] == 0
    by_tag = env.call(
        "POST", "/engram/v1/recall", {"query": "how do I run tests", "projectTag": "webapp", "includeDebug": True}
    ).json()
    assert {r["id"]: r["debug"]["scoreDecomposition"]["project"] for r in by_tag["results"]} == scores
    xray = env.call("GET", "/engram/v1/recall/xray?q=how+do+I+run+tests&projectTag=webapp").json()
    row = next(r for r in xray["snapshot"]["results"] if r["memoryId"] == ours["memoryId"])
    assert row["scoreDecomposition"]["projectBoost"] > 0

    cleared = env.call("POST", "/engram/v1/coding-context", {"sessionKey": "s1", "codingContext": None})
    assert cleared.json() == {"ok": True, "sessionKey": "s1", "codingContext": None}
    again = env.call("POST", "/engram/v1/recall", {"query": "how do I run tests", "sessionKey": "s1"}).json()
    assert "codingContext" not in again
    missing = env.call("POST", "/engram/v1/coding-context", {"sessionKey": "s1"})
    assert missing.status == 400 and "codingContext or projectTag is required" in missing.json()["error"]
    bad = env.call("POST", "/engram/v1/coding-context", {"sessionKey": "s1", "codingContext": {"projectId": "x"}})
    assert bad.status == 400
