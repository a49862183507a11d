"""The recall filters (category, statuses, includeSuperseded, includeInactive) on every surface.

`remnic query`/`remnic xray` took them as flags; POST recall, GET recall/xray and the MCP tools now take
the same filters, and the X-ray of a filtered recall is the same bytes on the CLI, HTTP and MCP.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import run_cli
from mcp import Client
from test_server_http import Env, make_env
from test_server_mcp import http_client, run, stdio_client, text

from remnic.render.xray import render_xray


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def superseded_pair(env: Env) -> tuple[str, str]:
    """(old id, new id): the staging port 5432, superseded by 5433."""
    old = env.memory.store("The staging database port is 5432", category="fact")
    new = env.memory.store("The staging database port is 5433", category="fact", extra={"supersedes": old.id})
    assert env.memory.get(old.id).frontmatter["status"] == "superseded"
    return old.id, new.id


def ids(body: dict) -> list[str]:
    return [r["id"] for r in body["results"]]


def test_post_recall_takes_the_status_filters(env: Env) -> None:
    old, new = superseded_pair(env)
    env.memory.store("Ana prefers tabs", category="preference")
    plain = env.call("POST", "/remnic/v1/recall", {"query": "staging database port"}).json()
    assert new in ids(plain) and old not in ids(plain)
    both = env.call("POST", "/remnic/v1/recall", {"query": "staging database port", "includeSuperseded": True}).json()
    assert ids(both)[:2] == [new, old]  # the successor ranks first
    only = env.call("POST", "/remnic/v1/recall", {"query": "staging database port", "statuses": ["superseded"]}).json()
    assert ids(only) == [old]
    every = env.call("POST", "/remnic/v1/recall", {"query": "staging database port", "includeInactive": True}).json()
    assert {new, old} <= set(ids(every))
    prefs = env.call("POST", "/remnic/v1/recall", {"query": "tabs staging port", "category": "preference"}).json()
    assert prefs["results"] and {r["category"] for r in prefs["results"]} == {"preference"}


def test_bad_filters_are_refused_naming_the_field(env: Env) -> None:
    superseded_pair(env)
    both = env.call("POST", "/remnic/v1/recall", {"query": "port", "includeInactive": True, "statuses": ["superseded"]})
    assert both.status == 400 and "includeInactive" in both.raw.decode()
    bogus = env.call("POST", "/remnic/v1/recall", {"query": "port", "statuses": ["stale"]})
    assert bogus.status == 400
    body = bogus.raw.decode()
    assert "statuses" in body and "stale" in body and "superseded" in body  # the valid options are named
    category = env.call("GET", "/remnic/v1/recall/xray?q=port&category=nonsense")
    assert category.status == 400 and "category" in category.raw.decode() and "preference" in category.raw.decode()


def test_filtered_xray_is_the_same_bytes_on_cli_http_and_mcp(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_XRAY_CLOCK", "1776706200000")
    old, new = superseded_pair(env)
    assert run_cli("reindex", "--memory-dir", str(env.root)).code == 0
    query = "staging database port"
    http = env.call("GET", f"/remnic/v1/recall/xray?q={quote(query)}&includeSuperseded=true").raw
    snap = json.loads(http)["snapshot"]
    assert [r["memoryId"] for r in snap["results"]][:2] == [new, old]
    unfiltered = json.loads(env.call("GET", f"/remnic/v1/recall/xray?q={quote(query)}").raw)["snapshot"]
    assert old not in [r["memoryId"] for r in unfiltered["results"]]
    listed = json.loads(env.call("GET", f"/remnic/v1/recall/xray?q={quote(query)}&statuses=active,superseded").raw)
    assert [r["memoryId"] for r in listed["snapshot"]["results"]][:2] == [new, old]

    async def go(client: Client) -> str:
        async with client:
            return text(await client.call_tool("remnic_recall_xray", {"query": query, "includeSuperseded": True}))

    assert run(lambda: go(http_client(env, env.alice))).encode() == http
    assert run(lambda: go(stdio_client(env.root))).encode() == http
    cli = run_cli("xray", query, "--include-superseded", "--format", "json", "--memory-dir", str(env.root))
    assert cli.code == 0, cli.err
    assert cli.out == render_xray(snap, "json") + "\n"


def test_mcp_schema_lists_the_statuses(env: Env) -> None:
    async def go() -> dict:
        async with http_client(env, env.alice) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return {name: tools[name].input_schema for name in ("remnic_recall", "remnic_recall_xray")}

    for schema in run(go).values():
        props = schema["properties"]
        assert "superseded" in props["statuses"]["items"]["enum"]
        assert props["includeSuperseded"]["type"] == "boolean" and "preference" in props["category"]["enum"]
