"""Clients written for the original Remnic: its request fields are accepted (meaningful ones
implemented, the rest named in ``warnings``) and its response keys are all there, beside
remnic's own — over HTTP and MCP, on a real server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_server_http import NAMESPACES, Env, make_env

SUMMARY_KEYS = {"id", "path", "category", "status", "created", "updated", "tags", "preview"}
RECALL_KEYS = {
    "query",
    "sessionKey",
    "namespace",
    "context",
    "count",
    "memoryIds",
    "results",
    "recordedAt",
    "traceId",
    "plannerMode",
    "fallbackUsed",
    "sourcesUsed",
    "disclosure",
    "budgetsApplied",
    "latencyMs",
}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


def store(env: Env, content: str, **fields: Any) -> str:
    r = env.call("POST", "/engram/v1/memories", {"content": content, **fields})
    assert r.status == 201, r.raw
    return r.json()["memoryId"]


def warned(body: dict[str, Any]) -> set[str]:
    return {w["field"] for w in body.get("warnings", [])}


def test_recall_takes_the_originals_request_and_answers_in_its_shape(env: Env) -> None:
    tagged = store(env, "We deploy on Tuesdays after the standup", tags=["ops"])
    store(env, "Deploys freeze on Fridays before holidays")
    request = {
        "query": "when do we deploy",
        "sessionKey": "sess-1",
        "topK": 5,
        "mode": "auto",
        "includeDebug": False,
        "disclosure": "section",
        "tags": ["ops"],
        "tagMatch": "any",
        "includeLowConfidence": True,
        "codingContext": {"projectId": "origin:abcd1234", "rootPath": "/src/app"},
        "cwd": "/src/app",
    }
    r = env.call("POST", "/engram/v1/recall", request)
    assert r.status == 200, r.raw
    body = r.json()
    assert set(body) >= RECALL_KEYS and {"auditEntryId"} <= set(body)  # remnic's own keys stay
    assert body["query"] == "when do we deploy" and body["sessionKey"] == "sess-1" and body["namespace"] == "alice"
    assert body["memoryIds"] == [tagged] and body["count"] == 1  # the tag filter kept only the ops memory
    assert body["context"] == "We deploy on Tuesdays after the standup"
    item = body["results"][0]
    assert set(item) >= SUMMARY_KEYS and {"score", "rank", "content", "frontmatter"} <= set(item)
    assert item["tags"] == ["ops"] and item["disclosure"] == "section" and item["preview"].startswith("We deploy")
    assert body["budgetsApplied"]["appliedTopK"] == 5 and body["budgetsApplied"]["requestedTopK"] == 5
    assert warned(body) == {"includeLowConfidence"}  # cwd and codingContext choose the boosted project
    assert body["codingContext"]["projectName"] == "app"  # cwd wins over codingContext

    past = env.call("POST", "/engram/v1/recall", {"query": "when do we deploy", "asOf": "2001-01-01T00:00:00Z"})
    assert past.status == 200 and past.json()["count"] == 0  # nothing was valid back then
    both = env.call("POST", "/engram/v1/recall", {"query": "deploy", "tags": ["ops", "nope"], "tagMatch": "all"})
    assert both.json()["count"] == 0
    none = env.call("POST", "/engram/v1/recall", {"query": "deploy", "topK": 0})
    assert none.status == 200 and none.json()["results"] == [] and none.json()["context"] == ""
    assert "warnings" not in none.json()
    bad = env.call("POST", "/engram/v1/recall", {"query": "deploy", "asOf": "last tuesday"})
    assert bad.status == 400 and bad.json()["details"][0]["field"] == "asOf"
    typo = env.call("POST", "/engram/v1/recall", {"query": "deploy", "topk": 3})  # not the original's either
    assert typo.status == 400 and typo.json()["details"][0]["field"] == "topk"


def test_writes_answer_queued_and_take_the_originals_fields(env: Env) -> None:
    r = env.call(
        "POST",
        "/engram/v1/memories",
        {
            "schemaVersion": 1,
            "idempotencyKey": "k-1",
            "dryRun": False,
            "sessionKey": "sess-1",
            "content": "Ana prefers tabs",
            "category": "preference",
            "confidence": 0.9,
            "namespace": "alice",
            "tags": ["editor"],
            "entityRef": "person:ana",
            "ttl": "7d",
            "sourceReason": "said so in standup",
        },
    )
    assert r.status == 201, r.raw
    body = r.json()
    assert body["queued"] is False and body["status"] == "stored" and body["accepted"] is True
    assert warned(body) == {"ttl"}  # sessionKey names the session whose coding context tags the memory
    queued = env.call("POST", "/engram/v1/memories", {"content": "Maybe switch to spaces", "status": "pending_review"})
    assert queued.status == 201 and queued.json()["queued"] is True and queued.json()["status"] == "queued_for_review"


def test_browse_get_and_timeline_in_the_originals_shape(env: Env) -> None:
    first = store(env, "first memory about editors")
    second = store(env, "second memory about editors")
    r = env.call("GET", "/engram/v1/memories?q=editors&sort=created_asc&limit=1&offset=0")
    assert r.status == 200, r.raw
    body = r.json()
    assert {"namespace", "sort", "total", "count", "limit", "offset", "memories"} <= set(body)
    assert body["sort"] == "created_asc" and body["total"] == 2 and [m["id"] for m in body["memories"]] == [first]
    assert set(body["memories"][0]) >= SUMMARY_KEYS
    newest = env.call("GET", "/engram/v1/memories?q=editors").json()
    assert newest["sort"] == "updated_desc" and newest["memories"][0]["id"] == second
    assert env.call("GET", "/engram/v1/memories?q=a&query=b").status == 400  # one name or the other

    got = env.call("GET", f"/engram/v1/memories/{first}?namespace=alice")
    assert got.status == 200 and got.json()["found"] is True and set(got.json()["memory"]) >= SUMMARY_KEYS
    elsewhere = env.call("GET", f"/engram/v1/memories/{first}?namespace=shared")
    assert elsewhere.status == 404 and elsewhere.json()["found"] is False and elsewhere.json()["namespace"] == "shared"
    missing = env.call("GET", "/engram/v1/memories/mem_0000000000000000000")
    assert missing.status == 404 and {"found": False, "namespace": "alice"}.items() <= missing.json().items()

    timeline = env.call("GET", f"/engram/v1/memories/{first}/timeline?limit=1&namespace=alice")
    assert timeline.status == 200 and timeline.json()["count"] == 1
    gone = env.call("GET", "/engram/v1/memories/mem_0000000000000000000/timeline")
    assert gone.status == 404
    assert {"found": False, "namespace": "alice", "count": 0, "timeline": []}.items() <= gone.json().items()
    xray = env.call("GET", "/engram/v1/recall/xray?q=editors&disclosure=chunk")
    assert xray.status == 200 and xray.json()["snapshotFound"] is True and "warnings" not in xray.json()


def test_mcp_tools_take_the_originals_arguments(env: Env) -> None:
    store(env, "We deploy on Tuesdays after the standup")

    async def go() -> dict[str, Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {env.alice}"}, timeout=30)
        async with Client(streamable_http_client(env.url + "/mcp", http_client=http)) as client:
            out = {}
            for name, arguments in (
                ("remnic_memory_search", {"query": "deploy", "maxResults": 3, "mode": "hybrid"}),
                ("remnic_memory_get", {"memoryId": "mem_0000000000000000000", "sessionKey": "s"}),
                ("remnic_review_queue_list", {"runId": "run-1"}),
                ("remnic_recall", {"query": "when do we deploy", "disclosure": "chunk", "topK": 0}),
            ):
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content[0].text)
                assert result.structured_content == json.loads(result.content[0].text)
                out[name] = result.structured_content
            return out

    out = asyncio.run(asyncio.wait_for(go(), timeout=60))
    search = out["remnic_memory_search"]
    assert search["count"] == 1 and search["results"][0]["snippet"].startswith("We deploy")
    assert warned(search) == {"mode"}
    assert out["remnic_memory_get"]["found"] is False and warned(out["remnic_memory_get"]) == {"sessionKey"}
    assert warned(out["remnic_review_queue_list"]) == {"runId"}
    assert RECALL_KEYS - {"sessionKey"} <= set(out["remnic_recall"])
