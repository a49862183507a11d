"""The HTTP API on a real server (127.0.0.1, port 0) driven by a real HTTP client (http.client).

Routes, response shapes, git-backed timelines, paging, idempotency, observe,
review queue, error shapes and the daemon's start/status/stop.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, run_remnic

from remnic.config import settings_for
from remnic.render.xray import dumps_json
from remnic.server import Api, Authenticator, TokenStore, running_server
from remnic.service.memory import Memory

NAMESPACES = {
    "enabled": True,
    "policies": {
        "alice": {"readPrincipals": ["alice"], "writePrincipals": ["alice"]},
        "bob": {"readPrincipals": ["bob"], "writePrincipals": ["bob"]},
        "shared": {"readPrincipals": ["*"], "writePrincipals": ["alice"]},
    },
}


@dataclass
class Resp:
    status: int
    headers: dict[str, str]
    raw: bytes

    def json(self) -> Any:
        return json.loads(self.raw)


@dataclass
class Env:
    url: str
    port: int
    alice: str
    bob: str
    memory: Memory
    root: Path
    store: TokenStore

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = "alice",
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Resp:
        return request(
            self.port,
            method,
            path,
            body,
            token=getattr(self, token) if token in ("alice", "bob") else token,
            raw=raw,
            headers=headers,
        )


def request(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Resp:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        return Resp(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


def make_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **sections: Any) -> Iterator[Env]:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "secrets" / "tokens.json"))
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root, **sections))
    store = TokenStore()
    alice, _ = store.generate("alice")
    bob, _ = store.generate("bob")
    with running_server(Api(memory), Authenticator(store)) as server:
        yield Env(server.url, server.server_address[1], alice, bob, memory, root, store)
    memory.close()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


def make_shared_env(base: Path, **sections: Any) -> Iterator[Env]:
    """As :func:`make_env`, for a module-scoped fixture: the tokens file is named, not found through the
    environment. For tests that write nothing, so they can share one repository and server."""
    root = base / "mem"
    memory = Memory.init(root, settings=settings_for(root, **sections))
    store = TokenStore(base / "secrets" / "tokens.json")
    alice, _ = store.generate("alice")
    bob, _ = store.generate("bob")
    with running_server(Api(memory), Authenticator(store)) as server:
        yield Env(server.url, server.server_address[1], alice, bob, memory, root, store)
    memory.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    """One server for the tests that only read, or are refused before anything is written."""
    yield from make_shared_env(tmp_path_factory.mktemp("shared"), namespaces=NAMESPACES)


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


# --- routes ---


def test_health_on_both_prefixes_with_request_id(shared: Env) -> None:
    for prefix in ("/engram/v1", "/remnic/v1"):
        r = shared.call("GET", f"{prefix}/health")
        assert r.status == 200
        body = r.json()
        assert body["ok"] is True and body["principal"] == "alice" and body["namespace"] == "alice"
        assert "recallAvailable" not in body and "xrayAvailable" not in body  # no "not built yet" flags
        assert len(r.headers["x-request-id"]) == 36
        assert r.headers["content-type"].startswith("application/json")
    ids = {shared.call("GET", "/engram/v1/health").headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3


def test_store_get_and_timeline_come_from_git(env: Env) -> None:
    r = env.call(
        "POST",
        "/engram/v1/memories",
        {"content": "We deploy on Tuesdays", "category": "decision", "tags": ["ops"], "schemaVersion": 1},
    )
    assert r.status == 201, r.raw
    stored = r.json()
    assert stored["status"] == "stored" and stored["namespace"] == "alice" and stored["accepted"] is True
    assert stored["path"] == "namespaces/alice/decisions/we-deploy-on-tuesdays.md"
    assert (env.root / stored["path"]).is_file()

    got = env.call("GET", f"/engram/v1/memories/{stored['memoryId']}").json()
    assert got["found"] is True and got["memory"]["content"] == "We deploy on Tuesdays"
    assert got["memory"]["frontmatter"]["tags"] == ["ops"]
    assert got["memory"]["frontmatter"]["source"] == "http:alice"

    env.memory.forget(stored["memoryId"], "obsolete")
    timeline = env.call("GET", f"/remnic/v1/memories/{stored['memoryId']}/timeline").json()
    assert timeline["count"] == 2
    assert [e["operation"] for e in timeline["timeline"]] == ["store", "forget"]
    assert [e["status"] for e in timeline["timeline"]] == ["active", "forgotten"]
    shas = git(env.root, "log", "--format=%H", "--", stored["path"]).split()
    assert [e["sha"] for e in timeline["timeline"]] == list(reversed(shas))


def test_list_filters_and_pages_newest_first(env: Env) -> None:
    texts = [
        ("Release train leaves on Tuesday", "decision"),
        ("Ana prefers tabs over spaces", "preference"),
        ("The release checklist lives in docs", "fact"),
        ("Release notes are written by Bo", "fact"),
        ("Deploys freeze on Fridays", "decision"),
    ]
    for text, category in texts:
        assert env.call("POST", "/engram/v1/memories", {"content": text, "category": category}).status == 201
    page = env.call("GET", "/engram/v1/memories?query=release&limit=2").json()
    assert page["total"] == 3 and page["count"] == 2 and page["nextOffset"] == 2 and page["queryMode"] == "filter"
    rest = env.call("GET", "/engram/v1/memories?query=release&limit=2&offset=2").json()
    assert rest["count"] == 1 and rest["nextOffset"] is None
    seen = [m["content"] for m in page["memories"] + rest["memories"]]
    assert sorted(seen) == sorted(t for t, _ in texts if "release" in t.lower())
    assert seen[0] == "Release notes are written by Bo"  # newest first
    decisions = env.call("GET", "/engram/v1/memories?category=decision").json()
    assert {m["category"] for m in decisions["memories"]} == {"decision"} and decisions["total"] == 2
    assert env.call("GET", "/engram/v1/memories?status=forgotten").json()["total"] == 0
    bad = env.call("GET", "/engram/v1/memories?status=gone&limit=x")
    assert bad.status == 400 and bad.json()["code"] == "validation_error"
    fields = {d["field"]: d for d in bad.json()["details"]}
    assert "pending_review" in fields["status"]["options"] and "limit" in fields


def test_dry_run_writes_nothing_and_idempotency_replays(env: Env) -> None:
    before = commits(env.root)
    dry = env.call("POST", "/engram/v1/memories", {"content": "Dry run only", "dryRun": True})
    assert dry.status == 200 and dry.json()["status"] == "validated" and dry.json()["dryRun"] is True
    assert commits(env.root) == before and not (env.root / dry.json()["path"]).exists()

    body = {"content": "Standup is at 9:30", "category": "fact", "idempotencyKey": "k-1"}
    first = env.call("POST", "/engram/v1/memories", body)
    again = env.call("POST", "/engram/v1/memories", body)
    assert first.status == again.status == 201
    assert again.json()["memoryId"] == first.json()["memoryId"]
    assert first.json()["idempotencyReplay"] is False and again.json()["idempotencyReplay"] is True
    assert again.headers["idempotency-replayed"] == "true"
    assert commits(env.root) == before + 1

    conflict = env.call("POST", "/engram/v1/memories", {**body, "content": "Standup is at 10"})
    assert conflict.status == 409 and conflict.json()["code"] == "idempotency_conflict"
    assert conflict.json()["details"][0]["field"] == "idempotencyKey"
    # Keys belong to a principal: bob's k-1 is a different request.
    other = env.call("POST", "/engram/v1/memories", body, token="bob")
    assert other.status == 201 and other.json()["memoryId"] != first.json()["memoryId"]


def test_exact_duplicate_is_suppressed(env: Env) -> None:
    pytest.importorskip("remnic.index", reason="duplicate detection looks hashes up in the search index")
    body = {"content": "The VPN needs a hardware key", "category": "fact"}
    first = env.call("POST", "/engram/v1/memories", body).json()
    second = env.call("POST", "/engram/v1/memories", body)
    assert second.status == 200
    assert second.json()["status"] == "duplicate" and second.json()["duplicateOf"] == first["memoryId"]


def test_observe_archives_messages_and_answers_202(env: Env) -> None:
    msgs = [{"role": "user", "content": "I moved to Lisbon"}, {"role": "assistant", "content": "Noted."}]
    r = env.call("POST", "/engram/v1/observe", {"sessionKey": "agent:main/../x", "messages": msgs})
    assert r.status == 202
    body = r.json()
    assert {k: body[k] for k in ("accepted", "sessionKey", "namespace", "lcmArchived", "effectiveNamespace")} == {
        "accepted": 2,
        "sessionKey": "agent:main/../x",
        "namespace": "alice",
        "lcmArchived": True,
        "effectiveNamespace": "alice",
    }
    # The turns wait in the session's buffer for a flush: extraction is queued, nothing written yet.
    assert body["extractionQueued"] is True and body["pendingTurns"] == 2 and body["flushes"] == []
    files = list((env.root / "state" / "transcripts" / "alice").rglob("*.jsonl"))
    assert len(files) == 1 and ".." not in files[0].name and "/" not in files[0].name
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    assert [x["content"] for x in lines] == ["I moved to Lisbon", "Noted."]
    assert "state/" not in git(env.root, "ls-files")  # the archive is durable but git-ignored state
    bad = env.call("POST", "/engram/v1/observe", {"sessionKey": "s", "messages": [{"role": "robot", "content": 1}]})
    assert bad.status == 400
    details = {d["field"]: d for d in bad.json()["details"]}
    assert details["messages[0].role"]["options"] == ["user", "assistant"] and "messages[0].content" in details
    assert env.call("POST", "/engram/v1/observe", {"sessionKey": "s", "messages": []}).status == 400


def test_review_queue_lists_pending_newest_first(env: Env) -> None:
    env.call("POST", "/engram/v1/memories", {"content": "Active one"})
    first = env.call("POST", "/engram/v1/memories", {"content": "Maybe Ana likes jazz", "status": "pending_review"})
    assert first.status == 201 and first.json()["status"] == "queued_for_review"
    second = env.call("POST", "/engram/v1/memories", {"content": "Maybe Bo likes tea", "status": "pending_review"})
    queue = env.call("GET", "/engram/v1/review-queue").json()
    assert queue["count"] == 2 and queue["namespace"] == "alice"
    # The same key as GET memories: a list of memory records is "memories" everywhere.
    assert "items" not in queue and "memories" in env.call("GET", "/engram/v1/memories").json()
    assert [i["id"] for i in queue["memories"]] == [second.json()["memoryId"], first.json()["memoryId"]]
    assert env.call("GET", "/engram/v1/review-queue", token="bob").json()["count"] == 0
    # Paged like GET memories: the queue's size, and where the next page starts.
    page = env.call("GET", "/engram/v1/review-queue?limit=1").json()
    assert (page["total"], page["count"], page["nextOffset"]) == (2, 1, 1)
    last = env.call("GET", "/engram/v1/review-queue?limit=1&offset=1").json()
    assert [i["id"] for i in last["memories"]] == [first.json()["memoryId"]] and last["nextOffset"] is None
    assert env.call("GET", "/engram/v1/review-queue?offset=-1").json()["details"][0]["field"] == "offset"


def test_validation_errors_name_fields_and_options(shared: Env) -> None:
    r = shared.call("POST", "/engram/v1/recall", {})
    assert r.status == 400 and r.json()["code"] == "validation_error"
    assert r.json()["details"][0]["field"] == "query"
    r = shared.call("POST", "/engram/v1/recall", {"query": "x", "mode": "psychic", "topK": 201})
    details = {d["field"]: d for d in r.json()["details"]}
    assert details["mode"]["options"] == ["auto", "no_recall", "minimal", "full", "graph_mode"]
    assert "at most 200" in details["topK"]["message"]
    r = shared.call("POST", "/engram/v1/recall", {"query": "x", "budgetChars": 10**7})
    assert "must be at most 1000000," in r.json()["details"][0]["message"]  # not 1e+06
    r = shared.call("GET", "/engram/v1/recall/xray?q=caf%e9")  # not UTF-8: refused as in a JSON body
    assert r.status == 400 and r.json()["details"][0]["field"] == "q"
    r = shared.call("GET", "/engram/v1/recall/xray?q=x&sesion=s")
    assert r.status == 400
    options = ["q", "session", "namespace", "budget", "topK", "cwd", "projectTag", "disclosure", "category"]
    options += ["statuses"]
    options += ["includeSuperseded", "includeInactive", "tags", "tagMatch", "asOf"]
    assert r.json()["details"][0]["options"] == options
    r = shared.call("GET", "/engram/v1/recall/xray?q=a&q=b")
    assert r.status == 400 and "more than once" in r.json()["error"]


def test_unknown_route_method_and_memory(shared: Env) -> None:
    r = shared.call("GET", "/engram/v1/nope")
    assert r.status == 404 and r.json()["code"] == "not_found"
    r = shared.call("DELETE", "/engram/v1/memories")
    assert r.status == 405 and r.json()["code"] == "method_not_allowed" and r.headers["allow"] == "GET, POST"
    r = shared.call("GET", "/engram/v1/memories/mem_doesnotexist")
    assert r.status == 404 and r.json() == {
        "found": False,
        "namespace": "alice",
        "error": "no memory with id 'mem_doesnotexist'",
        "code": "not_found",
    }
    assert shared.call("GET", "/engram/v2/health").status == 404


def test_internal_error_returns_request_id_and_logs_it(
    shared: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**_: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(shared.memory, "review_page", broken)
    with caplog.at_level(logging.ERROR, logger="remnic.server"):
        r = shared.call("GET", "/engram/v1/review-queue")
    assert r.status == 500
    body = r.json()
    assert body["code"] == "internal_error" and "disk on fire" not in body["error"]
    assert body["requestId"] == r.headers["x-request-id"]
    assert any(r.headers["x-request-id"] in rec.getMessage() and rec.exc_info for rec in caplog.records)


def test_keep_alive_serves_several_requests_on_one_connection(shared: Env) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", shared.port, timeout=10)
    for _ in range(3):
        conn.request("GET", "/engram/v1/health", headers={"Authorization": f"Bearer {shared.alice}"})
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read())["ok"]
    conn.close()


# --- the server process ---


def test_server_refuses_to_start_without_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "none.json"))
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0  # set-up in this process; the server's refusal is a real one
    r = run_remnic("serve", "--memory-dir", str(root), "--port", "0", timeout=30)
    assert r.code == 2 and "no bearer token" in r.err  # a usage error, as `daemon start` says it
    assert "127.0.0.1" in run_cli("serve", "--help").out


def test_serve_with_an_explicit_token_then_sigterm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "none.json"))
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    env = {**os.environ, "REMNIC_TOKEN": "rmn_from_env_0123456789"}
    serve = ["serve", "--memory-dir", str(root), "--port", "0", "--json", "--principal", "ci"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", *serve], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["host"] == "127.0.0.1" and info["mcp"].endswith("/mcp")
        r = request(info["port"], "GET", "/engram/v1/health", token="rmn_from_env_0123456789")
        assert r.status == 200 and r.json()["principal"] == "ci"
        assert request(info["port"], "GET", "/engram/v1/health", token="rmn_other").status == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=20)
    assert code == 0


def test_daemon_start_status_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "tokens.json"))
    root = tmp_path / "mem"
    # Set-up, the checks between start and stop, and the stop run in this process (the same commands);
    # start is a real `remnic daemon` process: the server it launched outlives it.
    assert run_cli("init", str(root)).code == 0
    token = run_cli("token", "generate", "--principal", "ops", "--json").json()["token"]
    assert run_cli("daemon", "status", "--memory-dir", str(root)).code == 3
    started = run_remnic("daemon", "start", "--memory-dir", str(root), "--port", "0", "--json", timeout=60)
    assert started.code == 0, started.err
    info = started.json()
    try:
        assert info["running"] and info["host"] == "127.0.0.1"
        pid_file = root / ".remnic" / "server.pid"
        assert json.loads(pid_file.read_text())["pid"] == info["pid"]
        assert stat.S_IMODE(pid_file.stat().st_mode) == 0o600
        again = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0")
        assert again.code == 1 and "already running" in again.err  # a runtime state, not a usage error (2)
        status = run_cli("daemon", "status", "--memory-dir", str(root), "--json")
        assert status.code == 0 and status.json()["reachable"] is True
        r = request(info["port"], "GET", "/engram/v1/health", token=token)
        assert r.status == 200 and r.json()["principal"] == "ops"
        live = request(info["port"], "GET", "/remnic/v1/livez")
        assert live.status == 200 and live.json() == {"status": "ok"}
    finally:
        stopped = run_cli("daemon", "stop", "--memory-dir", str(root), "--json")
        if stopped.code != 0 or not stopped.json().get("stopped"):
            os.kill(info["pid"], 15)  # never leave a server behind
    assert stopped.json()["stopped"] is True and stopped.json()["killed"] is False
    assert not (root / ".remnic" / "server.pid").exists()
    logged = (root / ".remnic" / "server.log").read_text()
    assert "GET /engram/v1/health 200" in logged and " 401 " not in logged  # status asks livez, no token
    assert run_cli("daemon", "status", "--memory-dir", str(root)).code == 3


# --- recall, X-ray, explain ---


def test_recall_then_explain_shows_that_recall(env: Env) -> None:
    for text in ("We deploy on Tuesdays after standup", "Ana prefers tabs", "Deploys freeze on Fridays"):
        assert env.call("POST", "/engram/v1/memories", {"content": text}).status == 201
    recall = env.call("POST", "/engram/v1/recall", {"query": "when do we deploy", "sessionKey": "s1", "topK": 2})
    assert recall.status == 200, recall.raw
    body = recall.json()
    assert body["count"] == 2 and body["plannerMode"] == "full" and body["fallbackUsed"] is False
    assert set(body["sourcesUsed"]) <= {"bm25", "vector", "episode", "graph", "procedural", "recent-scan"}
    assert body["budgetsApplied"]["topK"] == 2 and body["latencyMs"] >= 0
    assert all(r["namespace"] == "alice" for r in body["results"])
    assert env.call("POST", "/engram/v1/recall", {"query": "x", "mode": "no_recall"}).json()["count"] == 0

    explained = env.call("POST", "/engram/v1/recall/explain", {"sessionKey": "s1"}).json()
    snap = explained["snapshot"]
    assert explained["snapshotFound"] is True and snap["query"] == "when do we deploy"
    assert snap["traceId"] == body["traceId"] and snap["namespace"] == "alice" and snap["sessionKey"] == "s1"
    assert [r["memoryId"] for r in snap["results"]] == [r["id"] for r in body["results"]]
    md = env.call("POST", "/engram/v1/recall/explain", {"sessionKey": "s1", "format": "markdown"}).json()
    assert md["format"] == "markdown" and "when do we deploy" in md["rendered"]
    for who, args in (("alice", {"sessionKey": "other"}), ("bob", {"sessionKey": "s1"})):
        assert env.call("POST", "/engram/v1/recall/explain", args, token=who).raw == b'{"snapshotFound": false}\n'


def test_recall_xray_route(env: Env) -> None:
    env.call("POST", "/engram/v1/memories", {"content": "Backups run nightly at 02:00"})
    r = env.call("GET", "/remnic/v1/recall/xray?q=when+do+backups+run&session=s9&budget=500")
    assert r.status == 200 and r.raw.endswith(b"}\n")
    body = r.json()
    assert body["snapshotFound"] is True and set(body) == {"snapshotFound", "snapshot"}
    snap = body["snapshot"]
    assert snap["schemaVersion"] == "1" and snap["query"] == "when do backups run"
    assert snap["sessionKey"] == "s9" and snap["namespace"] == "alice" and snap["budget"]["chars"] == 500
    assert snap["results"][0]["path"].startswith("namespaces/alice/")
    missing = env.call("GET", "/engram/v1/recall/xray?session=s9")
    assert missing.status == 400 and missing.json()["details"][0]["field"] == "q"  # named as sent
    bad = env.call("GET", "/engram/v1/recall/xray?q=x&budget=lots")
    assert bad.status == 400 and bad.json()["details"][0]["field"] == "budget"


# --- hostile input, settings-derived limits, one serialiser ---


def test_hostile_bodies_and_query_strings_are_400_and_the_server_stays_up(shared: Env) -> None:
    nested = b"[" * 60_000  # < 128 KiB, but json.loads would raise RecursionError
    r = shared.call("POST", "/engram/v1/memories", raw=nested)
    assert r.status == 400 and r.json()["code"] == "invalid_json" and "nested deeper" in r.json()["error"]
    deep_field = b'{"content": "x", "tags": ' + b"[" * 500 + b"]" * 500 + b"}"  # parses; too deep to handle
    r = shared.call("POST", "/engram/v1/memories", raw=deep_field)
    assert r.status == 400 and r.json()["code"] == "invalid_json"
    r = shared.call("POST", "/engram/v1/recall", raw=b'{"query": "x", "topK": ' + b"9" * 5000 + b"}")
    assert r.status == 400 and r.json()["code"] == "invalid_json" and "digits" in r.json()["error"]
    r = shared.call("GET", "/engram/v1/memories?" + "&".join(f"f{i}=1" for i in range(60)))
    assert r.status == 400 and r.json()["code"] == "validation_error" and "50" in r.json()["error"]
    r = shared.call("POST", "/mcp", raw=nested)
    assert r.status == 400 and r.json()["error"]["code"] == -32700
    assert shared.call("GET", "/engram/v1/health").status == 200


def test_content_limit_and_defaults_come_from_the_store_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = {"max_content_chars": 30_000, "default_confidence": 0.7}
    for env in make_env(tmp_path, monkeypatch, store=store):
        long = "word " * 5000  # 25,000 characters: over the old hard-coded 20,000
        r = env.call("POST", "/engram/v1/memories", {"content": long, "dryRun": True})
        assert r.status == 200 and r.json()["status"] == "validated", r.raw
        r = env.call("POST", "/engram/v1/memories", {"content": "x" * 30_001, "dryRun": True})
        assert r.status == 400 and r.json()["details"][0]["field"] == "content"
        assert r.json()["error"] == "content: is 30001 characters; the limit is 30000 (store.maxContentChars)"
        tools = env.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()
        schema = next(t for t in tools["result"]["tools"] if t["name"] == "remnic_memory_store")["inputSchema"]
        assert schema["properties"]["content"]["maxLength"] == 30_000
        assert "default 0.7" in schema["properties"]["confidence"]["description"]


def test_every_http_body_uses_the_shared_serialiser(shared: Env) -> None:
    """Routes, errors, /mcp (results and errors) and the base class's own 400s: all dumps_json."""
    responses = [
        shared.call("GET", "/engram/v1/health"),
        shared.call("GET", "/engram/v1/memories"),
        shared.call("GET", "/engram/v1/nope"),
        shared.call("DELETE", "/engram/v1/memories"),
        shared.call("GET", "/engram/v1/health", token=None),
        shared.call("POST", "/engram/v1/recall", raw=b"{x"),
        shared.call("POST", "/engram/v1/recall/explain", {"sessionKey": "none"}),
        shared.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        shared.call(
            "POST",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "remnic.memory_get", "arguments": {"memoryId": "mem_x"}},
            },
        ),
        shared.call("POST", "/mcp", raw=b"{nope"),
    ]
    with socket.create_connection(("127.0.0.1", shared.port), timeout=10) as sock:
        # 101 headers: the base class refuses the request before routing (431), through send_error.
        sock.sendall(b"GET /engram/v1/health HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n")
        head, _, body = sock.makefile("rb").read().partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ")
    responses.append(Resp(431, {}, body))
    for r in responses:
        assert r.raw == dumps_json(json.loads(r.raw)).encode(), r.raw


# --- the serve command ---


@pytest.mark.parametrize("port", ["99999", "-1", "65536", "http"])
def test_serve_port_out_of_range_is_a_usage_error(port: str) -> None:
    r = run_cli("serve", f"--port={port}", "--token", "x" * 32)  # argparse refuses it: nothing starts
    assert r.code == 2 and "--port" in r.err and "0 to 65535" in r.err and "Traceback" not in r.err


def test_serve_refuses_a_short_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "none.json"))
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    # Refused before anything starts (or loads): run in this process, the same command.
    r = run_cli("serve", "--memory-dir", str(root), "--port", "0", "--token", "short")
    assert r.code == 2 and "at least 16" in r.err and "Traceback" not in r.err
    monkeypatch.setenv("REMNIC_TOKEN", "tooshort")
    r = run_cli("serve", "--memory-dir", str(root), "--port", "0")
    assert r.code == 2 and "REMNIC_TOKEN" in r.err


def test_foreground_serve_is_visible_to_daemon_status_and_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain `remnic serve` (here on 0.0.0.0, which warns) records itself: status, start and stop see it."""
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "tokens.json"))
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0  # set-up, and the daemon commands below, in this process
    token = "rmn_foreground_0123456789"
    serve = ["serve", "--memory-dir", str(root), "--host", "0.0.0.0", "--port", "0", "--json", "--token", token]
    proc = subprocess.Popen([sys.executable, "-m", "remnic", *serve], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        pid_file = json.loads((root / ".remnic" / "server.pid").read_text())
        assert pid_file["pid"] == proc.pid and pid_file["mode"] == "foreground"
        status = run_cli("daemon", "status", "--memory-dir", str(root), "--json")
        assert status.code == 0 and status.json()["pid"] == proc.pid and status.json()["mode"] == "foreground"
        assert status.json()["port"] == info["port"] and status.json()["reachable"] is True
        text = run_cli("daemon", "status", "--memory-dir", str(root)).out
        assert "foreground" in text and str(proc.pid) in text
        start = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0")
        assert start.code == 1 and "foreground" in start.err and "already running" in start.err
        stopped = run_cli("daemon", "stop", "--memory-dir", str(root))
        assert stopped.code == 0 and "stopped the foreground server" in stopped.out
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert "warning: binding 0.0.0.0, not loopback" in err and "reachable from the network" in err
    assert not (root / ".remnic" / "server.pid").exists()
    assert run_cli("daemon", "status", "--memory-dir", str(root)).code == 3
