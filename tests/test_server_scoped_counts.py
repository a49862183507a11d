"""A recall held to a namespace counts and expands within that namespace: another namespace's
words read exactly like missing words in its X-ray. Real server on 127.0.0.1, the official MCP client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_server_agents import tool
from test_server_http import NAMESPACES, Env, make_env
from test_server_mcp import text

BOB = ("Bob's salary review is next week", "The garage door code hint is on the fridge", "Bob likes hiking")
ALICE = (
    "Priya leads the salary review",
    "Priya asked for a raise",
    "Priya prefers tea",
    "The secret PIN is blue42",
    "Keep the secret vault password private",
)
QUERIES = ("salary review Priya", "PIN hint blue42")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


def scope_reasons(env: Env) -> list[str]:
    """Bob's X-ray reason of the namespace-scope stage, for each query."""
    out = []
    for query in QUERIES:
        result = tool(env, "remnic_recall_xray", {"query": query}, env.bob)
        assert not result.is_error, text(result)
        scope = json.loads(text(result))["snapshot"]["filters"][0]
        assert scope["name"] == "namespace-scope"
        out.append(scope["reason"])
    return out


def test_bobs_xray_reads_the_same_before_and_after_alice_writes(env: Env) -> None:
    for content in BOB:
        assert env.call("POST", "/engram/v1/memories", {"content": content}, token="bob").status == 201
    before = scope_reasons(env)
    for content in ALICE:
        body = {"content": content, "tags": ["secret"] if "secret" in content else []}
        assert env.call("POST", "/engram/v1/memories", body).status == 201
    after = scope_reasons(env)
    for query, was, now in zip(QUERIES, before, after):
        assert now == was, query  # not an aspect "without Priya", not an expansion to alice's words
