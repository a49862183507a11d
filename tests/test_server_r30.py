"""Server fixes of round 30: observe's documented message fields, LCM behind the namespace policy,
incomplete listings that say so, the 429 retry time, recall's documented keys and an oversized
MCP request's id. A real server on 127.0.0.1 (the fixtures of test_server_http)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_server_http import NAMESPACES, Env, make_env

from remnic.errors import ValidationError
from remnic.server.api import error_reply
from remnic.server.errors import RateLimited
from remnic.server.limits import RateLimiter


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


@pytest.fixture
def ns_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


def observe(env: Env, messages: list[dict], token: str = "alice") -> dict:
    r = env.call("POST", "/engram/v1/observe", {"sessionKey": "s1", "messages": messages}, token=token)
    assert r.status == 202, r.raw
    return r.json()


# --- 1. observe takes the seed's message fields ---


def test_observe_accepts_source_format_parts_and_name(env: Env) -> None:
    observe(
        env,
        [
            {"role": "user", "content": "Dana moved to Lisbon.", "sourceFormat": "pi", "name": "dana"},
            {"role": "assistant", "content": "Noted.", "parts": [{"type": "text", "text": "Noted."}]},
        ],
    )
    hits = env.call("POST", "/engram/v1/lcm/search", {"query": "Lisbon"}).json()["results"]
    assert hits[0]["speaker"] == "dana"  # an OpenAI message's name is its speaker


def test_observe_message_fields_are_type_checked_with_the_options(env: Env) -> None:
    bad = {"role": "user", "content": "hi", "sourceFormat": "slack", "parts": ["x"], "name": 3}
    r = env.call("POST", "/engram/v1/observe", {"sessionKey": "s1", "messages": [bad]})
    assert r.status == 400, r.raw
    details = {d["field"]: d for d in r.json()["details"]}
    assert set(details) == {"messages[0].sourceFormat", "messages[0].parts", "messages[0].name"}
    assert "pi" in details["messages[0].sourceFormat"]["options"]
    assert "array of objects" in details["messages[0].parts"]["message"]
    assert "string" in details["messages[0].name"]["message"]
    typo = env.call("POST", "/engram/v1/observe", {"sessionKey": "s1", "messages": [{**bad, "speakr": "x"}]})
    assert "sourceFormat" in next(d for d in typo.json()["details"] if d["field"] == "messages[0].speakr")["options"]


def test_python_observe_accepts_the_fields(env: Env) -> None:
    msg = {"role": "user", "content": "Priya prefers tea.", "sourceFormat": "openai", "name": "priya"}
    env.memory.observe("py", [msg], extract=False)
    assert env.memory.lcm_search("tea")[0]["speaker"] == "priya"
    with pytest.raises(ValidationError) as info:
        env.memory.observe("py", [{**msg, "sourceFormat": 7}], extract=False)
    assert "messages[0].sourceFormat" in str([p.field for p in info.value.problems])


# --- 2. LCM behind the namespace policy ---


def test_lcm_search_of_an_unreadable_namespace_is_403_and_status_counts_only_readable(ns_env: Env) -> None:
    observe(ns_env, [{"role": "user", "content": "The vault combination is in the blue folder."}])
    r = ns_env.call("POST", "/engram/v1/lcm/search", {"query": "vault", "namespace": "alice"}, token="bob")
    assert r.status == 403 and r.json()["code"] == "namespace_forbidden"
    bobs = ns_env.call("GET", "/engram/v1/lcm/status", token="bob").json()["stats"]
    assert bobs == {"totalTurns": 0, "sessions": 0}
    observe(ns_env, [{"role": "user", "content": "Bob's own words."}], token="bob")
    assert ns_env.call("GET", "/engram/v1/lcm/status", token="bob").json()["stats"] == {"totalTurns": 1, "sessions": 1}
    alices = ns_env.call("GET", "/engram/v1/lcm/status").json()["stats"]
    assert alices == {"totalTurns": 1, "sessions": 1}


# --- 4. a listing that left a file out says so ---


def test_memories_and_review_queue_name_malformed_files(env: Env) -> None:
    assert env.call("POST", "/engram/v1/memories", {"content": "We deploy on Tuesdays"}).status == 201
    broken = env.root / "facts" / "broken.md"
    broken.parent.mkdir(exist_ok=True)
    broken.write_text("---\nid: mem_broken0001\ncategory: fact\ncreated: notadate\nstatus: [oops\n---\n\nbody\n")
    listed = env.call("GET", "/engram/v1/memories?limit=1").json()
    assert listed["total"] == 1
    assert [m["path"] for m in listed["malformed"]] == ["facts/broken.md"]
    assert listed["malformed"][0]["problem"]
    queue = env.call("GET", "/engram/v1/review-queue").json()
    assert [m["path"] for m in queue["malformed"]] == ["facts/broken.md"]
    broken.unlink()
    assert "malformed" not in env.call("GET", "/engram/v1/memories").json()


def test_malformed_files_of_an_unreadable_namespace_stay_hidden(ns_env: Env) -> None:
    broken = ns_env.root / "namespaces" / "bob" / "facts" / "broken.md"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("---\nid: mem_broken0002\nstatus: [oops\n---\n\nbody\n")
    assert "malformed" not in ns_env.call("GET", "/engram/v1/memories").json()
    bobs = ns_env.call("GET", "/engram/v1/memories", token="bob").json()
    assert [m["path"] for m in bobs["malformed"]] == ["namespaces/bob/facts/broken.md"]


# --- 5. the 429's retry time ---


def test_rate_limit_message_and_retry_after_agree_rounded_up() -> None:
    now = [0.0]
    limiter = RateLimiter(1, 60, clock=lambda: now[0])
    limiter.acquire("p")
    now[0] = 59.6  # 0.4 s left: "retry in 0s" would earn another 429
    with pytest.raises(RateLimited) as info:
        limiter.acquire("p")
    reply = error_reply(info.value)
    assert "retry in 1s" in info.value.message and reply.headers["Retry-After"] == "1"
    now[0] = 2.5
    with pytest.raises(RateLimited) as info:
        limiter.acquire("p")
    assert "retry in 58s" in info.value.message and error_reply(info.value).headers["Retry-After"] == "58"


# --- 6. documented keys always present, one namespace spelling ---


def test_recall_always_carries_session_key_and_requested_top_k(env: Env) -> None:
    body = env.call("POST", "/engram/v1/recall", {"query": "anything"}).json()
    assert "sessionKey" in body and body["sessionKey"] is None
    default = env.memory.settings.recall.top_k
    assert body["budgetsApplied"]["requestedTopK"] == default == body["budgetsApplied"]["appliedTopK"]
    asked = env.call("POST", "/engram/v1/recall", {"query": "anything", "topK": 3, "sessionKey": "k"}).json()
    assert asked["sessionKey"] == "k" and asked["budgetsApplied"]["requestedTopK"] == 3


def test_namespace_is_the_default_on_every_listing_when_namespaces_are_off(env: Env) -> None:
    default = env.memory.settings.namespaces.default
    for method, path, body in (
        ("GET", "/engram/v1/memories", None),
        ("GET", "/engram/v1/review-queue", None),
        ("GET", "/engram/v1/health", None),
        ("POST", "/engram/v1/recall", {"query": "x"}),
    ):
        r = env.call(method, path, body)
        assert r.status == 200, (path, r.raw)
        assert r.json()["namespace"] == default, path


# --- 7. an oversized MCP request keeps its id ---


def test_oversized_mcp_request_echoes_its_id(env: Env) -> None:
    big = "x" * (env.memory.settings.server.max_body_bytes + 1000)
    msg = {"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "remnic_memory_store"}}
    msg["params"]["arguments"] = {"content": big}
    r = env.call("POST", "/mcp", raw=json.dumps(msg).encode())
    assert r.status == 413
    body = r.json()
    assert body["id"] == 13 and body["error"]["code"] == -32600 and "server.maxBodyBytes" in body["error"]["message"]
    no_id = {"jsonrpc": "2.0", "params": {"content": big}, "id": 14, "method": "x"}  # id after params: not read
    assert env.call("POST", "/mcp", raw=json.dumps(no_id).encode()).json()["id"] is None
