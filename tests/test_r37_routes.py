"""The original Remnic's routes remnic lacked (seed 003): the action-confidence advice on both
prefixes, as an MCP tool under every spelling and as `remnic action-confidence`; GET maintenance;
and the trust-zone routes answered 501 not_implemented, documented as not provided. A real server
on 127.0.0.1, the official mcp SDK client over streamable HTTP, and the CLI in-process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import git, run_cli
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_server_http import NAMESPACES, Env, make_shared_env

DOCS = Path(__file__).resolve().parent.parent / "docs"
TRUST_ZONES = (
    ("GET", "trust-zones/status"),
    ("GET", "trust-zones/records"),
    ("POST", "trust-zones/promote"),
    ("POST", "trust-zones/demo-seed"),
)
REQUEST = {
    "intendedAction": "merge the release branch",
    "confidence": 0.8,
    "risk": "medium",
    "contextReadiness": "sufficient",
    "currentContextScopes": ["work"],
    "userRules": [{"kind": "ask-before", "description": "Ask before checkout", "matched": False}],
    "retrievedMemories": [
        {"source": "manual", "confidence": 0.9, "safety": "safe", "userContextScopes": ["work"], "namespace": "x"},
        {"confidence": 0.7, "safeToUse": False, "safetyReasons": ["status=pending_review"]},
    ],
}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        yield from make_shared_env(tmp_path_factory.mktemp("r37"), namespaces=NAMESPACES)


def action_confidence(request: dict[str, Any]) -> dict[str, Any]:
    """The service call every surface makes (imported here: collecting this file needs no new module)."""
    from remnic.service.action_confidence import action_confidence as advice

    result: dict[str, Any] = advice(request)
    return result


def mcp_calls(env: Env, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def go() -> list[Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {env.alice}"}, timeout=30)
        async with Client(streamable_http_client(env.url + "/mcp", http_client=http)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(asyncio.wait_for(go(), timeout=60))


# --- the decision ---


@pytest.mark.parametrize(
    ("request_", "decision"),
    [
        ({"risk": "low", "contextReadiness": "sufficient", "retrievedMemories": [{"confidence": 0.92}]}, "act"),
        ({"confidence": 0.85, "risk": "medium", "contextReadiness": "sufficient"}, "act"),
        ({"confidence": 0.6, "risk": "medium", "contextReadiness": "partial"}, "draft"),
        ({"confidence": 0.5, "risk": "medium", "contextReadiness": "partial"}, "ask"),
        ({"confidence": 0.9, "risk": "high", "contextReadiness": "sufficient"}, "draft"),
        ({"confidence": 0.9, "risk": "high", "contextReadiness": "partial"}, "ask"),
        ({"confidence": 0.99, "risk": "irreversible", "contextReadiness": "sufficient"}, "ask"),
        ({"confidence": 0.99, "risk": "restricted", "contextReadiness": "sufficient"}, "escalate"),
        (
            {
                "confidence": 0.97,
                "risk": "low",
                "contextReadiness": "sufficient",
                "userRules": [{"kind": "ask-before"}],
            },
            "ask",
        ),
        (
            {"confidence": 0.97, "contextReadiness": "sufficient", "userRules": [{"kind": "requires-escalation"}]},
            "escalate",
        ),
        ({"confidence": 0.97, "risk": "low", "userRules": [{"kind": "never", "description": "no deploys"}]}, "refuse"),
        (
            {"confidence": 0.97, "risk": "low", "retrievedMemories": [{"confidence": 0.9, "safety": "blocked"}]},
            "refuse",
        ),
        ({"confidence": 0.97, "risk": "low"}, "ask"),  # no context stated and no usable memory: none
    ],
)
def test_the_decision_follows_the_documented_rules(request_: dict[str, Any], decision: str) -> None:
    advice = action_confidence(request_)
    assert advice["decision"] == decision, advice
    assert advice["attentionPolicy"] == "interruption_budgeting" and advice["safeToAct"] is (decision == "act")
    assert advice == action_confidence(request_)  # deterministic


def test_factors_say_what_moved_the_confidence() -> None:
    advice = action_confidence(
        {
            "confidence": 0.9,
            "contextReadiness": "partial",
            "currentContextScopes": ["personal"],
            "retrievedMemories": [{"confidence": 0.9, "stale": True, "corrected": True, "userContextScopes": ["Work"]}],
        }
    )
    deltas = {f["name"]: f["delta"] for f in advice["factors"]}
    assert deltas == {"provenance": 0, "context": 0, "staleness": -0.08, "correction": -0.07, "scope": -0.12}
    assert advice["confidence"] == 0.63 and advice["decision"] == "draft"
    assert (advice["staleMemoryCount"], advice["correctedMemoryCount"], advice["scopeMismatchCount"]) == (1, 1, 1)


# --- action-confidence over HTTP, MCP and the CLI ---


def test_action_confidence_is_one_answer_on_both_prefixes_every_tool_name_and_writes_nothing(env: Env) -> None:
    before = git(env.root, "rev-parse", "HEAD")
    bodies = []
    for prefix in ("/remnic/v1", "/engram/v1"):
        r = env.call("POST", f"{prefix}/action-confidence", REQUEST)
        assert r.status == 200, r.raw
        bodies.append(r.raw)
    assert bodies[0] == bodies[1]
    body = json.loads(bodies[0])
    assert (
        body["decision"] == "act" and body["confidence"] == 0.88 and body["intendedAction"] == REQUEST["intendedAction"]
    )
    assert (body["retrievedMemoryCount"], body["usableMemoryCount"]) == (2, 1)
    assert body["blockers"] == [] and body["reasons"]

    names = ("remnic_action_confidence", "remnic.action_confidence", "engram.action_confidence")
    results = mcp_calls(env, [(name, REQUEST) for name in names])  # the SDK checks the outputSchema
    for result in results:
        assert not result.is_error and result.content[0].text == bodies[0].decode()
        assert result.structured_content == body

    cli = run_cli("action-confidence", "--confidence", "0.8", "--context", "sufficient", "--json")
    assert cli.code == 0 and cli.json() == action_confidence({"confidence": 0.8, "contextReadiness": "sufficient"})
    assert git(env.root, "rev-parse", "HEAD") == before and not git(env.root, "status", "--porcelain")


def test_action_confidence_refusals_name_the_field_and_the_valid_options(env: Env) -> None:
    r = env.call("POST", "/engram/v1/action-confidence", {"risk": "huge"})
    assert r.status == 400 and r.json()["code"] == "validation_error", r.raw
    [detail] = r.json()["details"]
    assert detail["field"] == "risk" and "restricted" in detail["options"]

    nested = {"userRules": [{"kind": "always"}], "retrievedMemories": [{"confidence": 2, "colour": "red"}]}
    r = env.call("POST", "/remnic/v1/action-confidence", nested)
    assert r.status == 400, r.raw
    fields = {d["field"]: d for d in r.json()["details"]}
    assert set(fields) == {"userRules[0].kind", "retrievedMemories[0].confidence", "retrievedMemories[0].colour"}
    assert "ask-before" in fields["userRules[0].kind"]["options"]
    assert "safety" in fields["retrievedMemories[0].colour"]["options"]
    [tool] = mcp_calls(env, [("remnic.action_confidence", nested)])
    assert tool.is_error and tool.content[0].text == r.raw.decode()

    cli = run_cli("action-confidence", "--risk", "huge")
    assert cli.code == 2 and "--risk" in cli.err and "irreversible" in cli.err, cli
    assert "remnic action-confidence --confidence" in run_cli("action-confidence", "--help").out


# --- maintenance ---


def test_maintenance_is_health_plus_the_review_queue_and_the_last_consolidation(env: Env) -> None:
    queued = env.call("POST", "/remnic/v1/suggestions", {"content": "The lab opens at nine"})
    assert queued.status == 201, queued.raw
    r = env.call("GET", "/engram/v1/maintenance")
    assert r.status == 200, r.raw
    body = r.json()
    assert body["namespace"] == "alice" and body["health"]["ok"] is True and body["health"]["principal"] == "alice"
    assert body["reviewQueue"]["pendingReview"] >= 1 and body["reviewQueue"]["total"] >= 1
    assert body["memories"]["byStatus"]["pending_review"] == body["reviewQueue"]["pendingReview"]
    assert body["lastConsolidation"] is None and body["latestGovernanceRun"] == {"found": False, "namespace": "alice"}
    same = env.call("GET", "/remnic/v1/maintenance").json()
    assert same["reviewQueue"] == body["reviewQueue"]
    # Counted within what the token reads: bob sees none of alice's queue.
    bob = env.call("GET", "/engram/v1/maintenance", token="bob").json()
    assert bob["namespace"] == "bob" and bob["reviewQueue"]["total"] == 0 and bob["memories"]["total"] == 0
    assert env.call("GET", "/engram/v1/maintenance?namespace=alice", token="bob").status == 403


# --- trust zones: not provided, and said so ---


def test_trust_zone_routes_are_501_not_implemented_naming_the_route(env: Env) -> None:
    for prefix in ("/engram/v1", "/remnic/v1"):
        for method, route in TRUST_ZONES:
            r = env.call(method, f"{prefix}/{route}", {} if method == "POST" else None)
            assert r.status == 501, (route, r.raw)
            body = r.json()
            assert body["code"] == "not_implemented" and f"{method} {prefix}/{route}" in body["error"]
            assert "does not provide trust zones" in body["error"]
    assert env.call("GET", "/engram/v1/trust-zones/status", token=None).status == 401  # still behind the token


def test_server_md_documents_the_routes_and_lists_trust_zones_as_not_provided() -> None:
    doc = (DOCS / "server.md").read_text(encoding="utf-8")
    original = doc.split("### Clients written for the original Remnic", 1)[1].split("\n### ", 1)[0]
    for _, route in TRUST_ZONES:
        assert f"/engram/v1/{route}" in original
    assert "not_implemented" in original
    routes = doc.split("## HTTP routes", 1)[1].split("\n## ", 1)[0]
    assert "`GET maintenance" in routes and "`POST action-confidence`" in routes
    assert "attentionPolicy" in (DOCS / "agents.md").read_text(encoding="utf-8")
