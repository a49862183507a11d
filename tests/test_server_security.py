"""Security properties of the server, each against a real server on loopback.

Auth (401 with WWW-Authenticate; never a token from the query string), token
storage, body limits (413), malformed JSON (400), the write rate limit (429),
namespace isolation (escape attempts are refused and leak nothing), origin and Host checks.
"""

from __future__ import annotations

import http.client
import json
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli, run_remnic, snapshot_tree
from test_server_http import NAMESPACES, Env, commits, make_env, make_shared_env

from remnic.server.auth import TokenStore
from remnic.server.transport import HostCheck


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    """One server for the tests whose requests are all refused or only read: nothing is written."""
    yield from make_shared_env(tmp_path_factory.mktemp("shared"), namespaces=NAMESPACES)


# --- authentication ---


@pytest.mark.parametrize("path", ["/engram/v1/health", "/engram/v1/memories", "/engram/v1/nope", "/mcp"])
def test_missing_token_is_401_with_www_authenticate(shared: Env, path: str) -> None:
    r = shared.call("GET", path, token=None)
    assert r.status == 401 and r.json()["code"] == "unauthorized"
    assert r.headers["www-authenticate"] == 'Bearer realm="remnic"'
    assert r.headers["x-request-id"]


def test_wrong_token_and_wrong_scheme_are_401(shared: Env) -> None:
    for value in (f"Bearer {shared.alice}x", "Bearer rmn_guess", f"Basic {shared.alice}", shared.alice, "Bearer "):
        r = shared.call("GET", "/engram/v1/health", token=None, headers={"Authorization": value})
        assert r.status == 401, value
        assert r.headers["www-authenticate"].startswith('Bearer realm="remnic"')
    r = shared.call("GET", "/engram/v1/health", token="rmn_nope")
    assert 'error="invalid_token"' in r.headers["www-authenticate"]


@pytest.mark.parametrize("param", ["token", "access_token", "api_key"])
def test_token_in_query_string_is_401_even_with_a_valid_header(shared: Env, param: str) -> None:
    alone = shared.call("GET", f"/engram/v1/health?{param}={shared.alice}", token=None)
    assert alone.status == 401 and "query string" in alone.json()["error"]
    both = shared.call("GET", f"/engram/v1/memories?{param}={shared.alice}")
    assert both.status == 401


def test_revoked_token_stops_working_on_a_running_server(env: Env) -> None:
    assert env.call("GET", "/engram/v1/health", token="bob").status == 200
    env.store.revoke("bob")
    assert env.call("GET", "/engram/v1/health", token="bob").status == 401
    assert env.call("GET", "/engram/v1/health", token="alice").status == 200


def test_token_file_is_private_and_holds_only_hashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cfg" / "tokens.json"
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(path))
    made = run_remnic("token", "generate", "--principal", "alice", "--label", "laptop", "--json")
    assert made.code == 0, made.err
    secret = made.json()["token"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert secret not in text and json.loads(text)["tokens"][0]["principal"] == "alice"
    # `generate` above is a real process; list and revoke run in this one (the same commands).
    listed = run_cli("token", "list", "--json").json()["tokens"]
    assert secret not in json.dumps(listed) and listed[0]["label"] == "laptop"
    assert run_cli("token", "revoke", listed[0]["id"]).code == 0
    assert TokenStore(path).entries() == []
    assert run_cli("token", "revoke", "nobody").code == 1


def test_token_file_inside_the_memory_repo_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0  # set-up in this process; the refusal is a real `remnic token`
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(root / "tokens.json"))
    r = run_remnic("token", "generate", "--memory-dir", str(root))
    assert r.code == 2 and "inside the memory repository" in r.err
    assert not (root / "tokens.json").exists()


# --- request bodies ---


def test_oversized_body_is_413_and_nothing_is_written(shared: Env) -> None:
    before = commits(shared.root)
    big = json.dumps({"content": "x" * (128 * 1024)}).encode()
    r = shared.call("POST", "/engram/v1/memories", raw=big)
    assert r.status == 413 and r.json()["code"] == "request_body_too_large"
    assert "131072" in r.json()["error"]
    assert commits(shared.root) == before
    # Exactly at the limit is not "too large": it reaches validation instead.
    at_limit = json.dumps({"content": "y" * 10, "pad": ""}).encode()
    at_limit = at_limit.replace(b'""', b'"' + b"z" * (131072 - len(at_limit)) + b'"')
    assert len(at_limit) == 131072
    r = shared.call("POST", "/engram/v1/memories", raw=at_limit)
    assert r.status == 400 and r.json()["code"] == "validation_error"


def test_malformed_json_is_400_invalid_json(shared: Env) -> None:
    r = shared.call("POST", "/engram/v1/memories", raw=b'{"content": "unterminated')
    assert r.status == 400 and r.json()["code"] == "invalid_json" and "line 1" in r.json()["error"]
    r = shared.call("POST", "/engram/v1/recall", raw=b"\xff\xfe{}")
    assert r.status == 400 and r.json()["code"] == "invalid_json"
    r = shared.call("POST", "/engram/v1/recall", raw=b'["a list"]')
    assert r.status == 400 and r.json()["code"] == "invalid_json_object"


# --- rate limit ---


def test_31st_write_in_a_minute_is_429(env: Env) -> None:
    for i in range(5):  # dry runs are not writes
        assert env.call("POST", "/engram/v1/memories", {"content": f"dry {i}", "dryRun": True}).status == 200
    for i in range(29):
        assert env.call("POST", "/engram/v1/memories", {"content": f"note number {i}"}).status == 201
    keyed = {"content": "the thirtieth", "idempotencyKey": "k30"}
    assert env.call("POST", "/engram/v1/memories", keyed).status == 201
    assert env.call("POST", "/engram/v1/memories", keyed).status == 201  # a replay is not a write
    before = commits(env.root)
    r = env.call("POST", "/engram/v1/memories", {"content": "one too many"})
    assert r.status == 429 and r.json()["code"] == "write_rate_limited"
    assert 1 <= int(r.headers["retry-after"]) <= 60
    r = env.call("POST", "/engram/v1/observe", {"sessionKey": "s", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status == 429  # observe is a write too
    assert commits(env.root) == before
    assert env.call("POST", "/engram/v1/memories", {"content": "bob has his own budget"}, token="bob").status == 201
    assert env.call("GET", "/engram/v1/memories").status == 200  # reads are not limited


# --- namespaces ---


def test_namespace_escapes_are_refused_and_change_nothing(env: Env) -> None:
    bob_memory = env.call("POST", "/engram/v1/memories", {"content": "Bob's secret plan"}, token="bob").json()
    before, tree = commits(env.root), snapshot_tree(env.root)
    for ns in ("..", "../bob", "alice/../bob", "/etc", "ALICE", "a" * 65, "bob\x00", ""):
        r = env.call("POST", "/engram/v1/memories", {"content": "escape attempt", "namespace": ns})
        if ns == "":  # empty means "my namespace"
            continue
        assert r.status == 400 and r.json()["details"][0]["field"] == "namespace", ns
    for ns in ("bob", "nonexistent"):
        r = env.call("POST", "/engram/v1/memories", {"content": "cross write", "namespace": ns})
        assert r.status == 403 and r.json() == {
            "error": f"principal 'alice' may not write namespace {ns!r}",
            "code": "namespace_forbidden",
        }
        for path in (f"/engram/v1/memories?namespace={ns}", f"/engram/v1/review-queue?namespace={ns}"):
            assert env.call("GET", path).status == 403
        r = env.call("POST", "/engram/v1/recall", {"query": "secret plan", "namespace": ns})
        assert r.status == 403, r.raw
        r = env.call(
            "POST",
            "/engram/v1/observe",
            {"sessionKey": "s", "namespace": ns, "messages": [{"role": "user", "content": "x"}]},
        )
        assert r.status == 403
    # The shared namespace is readable by all but writable only by alice.
    assert (
        env.call("POST", "/engram/v1/memories", {"content": "team fact", "namespace": "shared"}, token="bob").status
        == 403
    )
    assert env.call("GET", "/engram/v1/memories?namespace=shared", token="bob").status == 200
    # Only the empty-namespace write above (into alice's own namespace) happened.
    assert commits(env.root) == before + 1
    changed = set(snapshot_tree(env.root)) - set(tree)
    assert len(changed) == 1 and next(iter(changed)).startswith("namespaces/alice/")
    assert "Bob's secret plan" not in env.call("GET", "/engram/v1/memories?query=secret").raw.decode()
    assert bob_memory["namespace"] == "bob"


def test_other_principals_memory_reads_exactly_like_a_missing_one(env: Env) -> None:
    bob_id = env.call("POST", "/engram/v1/memories", {"content": "Bob's diary"}, token="bob").json()["memoryId"]
    assert env.call("GET", f"/engram/v1/memories/{bob_id}", token="bob").status == 200
    for suffix in ("", "/timeline"):
        theirs = env.call("GET", f"/engram/v1/memories/{bob_id}{suffix}")
        missing = env.call("GET", f"/engram/v1/memories/mem_0000000000000000000{suffix}")
        assert theirs.status == missing.status == 404
        assert theirs.json()["error"].replace(bob_id, "ID") == missing.json()["error"].replace(
            "mem_0000000000000000000", "ID"
        )
        assert "diary" not in theirs.raw.decode()
    # Nor does naming it in `supersedes` tell it from a missing one.
    theirs, missing = (
        env.call("POST", "/engram/v1/memories", {"content": "Mine now", "supersedes": target})
        for target in (bob_id, "mem_0000000000000000000")
    )
    assert theirs.status == missing.status == 400
    assert theirs.json()["details"][0]["message"].replace(bob_id, "ID") == missing.json()["details"][0][
        "message"
    ].replace("mem_0000000000000000000", "ID")
    # Nor does recall or search reach into bob's namespace.
    recall = env.call("POST", "/engram/v1/recall", {"query": "Bob's diary", "includeDebug": True})
    assert recall.status == 200 and recall.json()["query"] == "Bob's diary"  # the caller's own words, echoed
    assert "diary" not in json.dumps({k: v for k, v in recall.json().items() if k != "query"})
    assert env.call("GET", "/engram/v1/memories?query=diary").json()["total"] == 0


@pytest.mark.parametrize(
    "path",
    [
        "/engram/v1/memories/../../etc/passwd",
        "/engram/v1/memories/..%2F..%2Fetc%2Fpasswd",
        "/engram/v1/memories/%2e%2e/timeline",
        "/engram/v1/%2e%2e/%2e%2e/etc/passwd",
        "/engram/v1/memories/.git/timeline",
        "/engram/v1/memories/namespaces%2Fbob%2Fdecisions",
        "/engram/v1/memories/x%00y",
        "/engram/v1//memories",
    ],
)
def test_path_segment_escapes_are_404(shared: Env, path: str) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", shared.port, timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)  # sent as-is, no client-side normalisation
    conn.putheader("Authorization", f"Bearer {shared.alice}")
    conn.endheaders()
    r = conn.getresponse()
    body = json.loads(r.read())
    conn.close()
    assert r.status == 404 and body["code"] == "not_found"
    assert "root:" not in json.dumps(body)


def test_cross_namespace_xray_is_snapshot_not_found_and_nothing_else(env: Env) -> None:
    env.call("POST", "/engram/v1/memories", {"content": "Bob's travel plans for May"}, token="bob")
    for ns in ("bob", "nonexistent"):
        r = env.call("GET", f"/engram/v1/recall/xray?q=travel+plans&namespace={ns}")
        assert r.status == 200 and r.raw == b'{"snapshotFound": false}\n'
    r = env.call("POST", "/engram/v1/recall/explain", {"namespace": "bob"})
    assert r.status == 200 and r.raw == b'{"snapshotFound": false}\n'
    r = env.call("GET", "/engram/v1/recall/xray?q=travel&namespace=..%2Fbob")
    assert r.status == 400 and r.json()["details"][0]["field"] == "namespace"


def test_an_xray_in_ones_own_namespace_does_not_count_the_others(env: Env) -> None:
    for i in range(3):
        env.call("POST", "/engram/v1/memories", {"content": f"Bob's travel plans number {i}"}, token="bob")
    env.call("POST", "/engram/v1/memories", {"content": "Alice's travel plans for May"})
    r = env.call("GET", "/engram/v1/recall/xray?q=travel+plans")
    assert r.status == 200
    scope = r.json()["snapshot"]["filters"][0]
    assert scope["name"] == "namespace-scope" and scope["reason"].startswith("namespace=alice: 1 memory in scope")
    assert "4" not in scope["reason"].split(";")[0]


def test_cross_origin_browser_requests_are_refused(shared: Env) -> None:
    r = shared.call("GET", "/engram/v1/health", headers={"Origin": "http://evil.example"})
    assert r.status == 403 and r.json()["code"] == "forbidden_origin"
    r = shared.call("GET", "/engram/v1/health", headers={"Origin": f"http://127.0.0.1:{shared.port}"})
    assert r.status == 200


@pytest.mark.parametrize(
    ("bind", "extra", "accepted", "refused"),
    [
        (
            "127.0.0.1",
            (),
            ["127.0.0.1:4318", "localhost:4318", "[::1]:4318", "LocalHost:4318"],
            ["evil.example:4318", "localhost", "localhost:4319", "192.168.1.5:4318", "[::1]", "localhost:43x", ""],
        ),
        ("0.0.0.0", ("box.lan",), ["192.168.1.5:4318", "[fe80::1]:4318", "box.lan:4318"], ["evil.example:4318"]),
        ("::1", (), ["[::1]:4318"], ["[::2]:4318", "::1:4318"]),
        ("192.168.1.5", (), ["192.168.1.5:4318", "127.0.0.1:4318"], ["192.168.1.6:4318"]),
    ],
)
def test_host_header_must_name_this_server(bind: str, extra: tuple, accepted: list, refused: list) -> None:
    check = HostCheck(bind, 4318, extra)
    for host in accepted:
        assert check.accepts(host), host
    for host in refused:
        assert not check.accepts(host), host
    assert check.accepts(None)  # HTTP/1.0 tools; browsers (the rebinding vector) always send Host


def test_allowed_hosts_setting_admits_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for env in make_env(tmp_path, monkeypatch, server={"allowed_hosts": ["memory.box.lan"]}):
        r = env.call("GET", "/engram/v1/health", headers={"Host": f"memory.box.lan:{env.port}"})
        assert r.status == 200
        r = env.call("GET", "/engram/v1/health", headers={"Host": f"other.box.lan:{env.port}"})
        assert r.status == 421 and "memory.box.lan" in r.json()["error"]


def test_concurrent_token_generate_and_revoke_lose_nothing(tmp_path: Path) -> None:
    """Processes generating (and revoking) tokens at once: every token generated and not revoked survives."""
    path = tmp_path / "cfg" / "tokens.json"
    go = tmp_path / "go"
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from remnic.server.auth import TokenStore\n"
        "store, who = TokenStore(Path(sys.argv[1])), sys.argv[3]\n"
        "print('ready', flush=True)\n"
        "while not os.path.exists(sys.argv[2]): time.sleep(0.001)\n"
        "for i in range(12):\n"
        "    store.generate(who)\n"
        "    if i % 4 == 3: store.generate('tmp-' + who); store.revoke('tmp-' + who)\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), str(go), f"p{n}"], stdout=subprocess.PIPE)
        for n in range(5)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    go.touch()
    assert [proc.wait(timeout=60) for proc in procs] == [0] * 5
    entries = TokenStore(path).entries()
    assert sorted(e.principal for e in entries) == sorted(f"p{n}" for n in range(5) for _ in range(12))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
