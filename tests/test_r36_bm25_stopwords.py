"""A query of stopwords only is searched as a phrase and says so (h6 M3): "the of and is to" returns
nothing (it used to return a full budget of unrelated memories), while "to be or not to be", "The Who"
and "It" still find the memories that hold them; ``warnings`` says so in Python, the CLI (stderr and
JSON), HTTP and MCP, and the X-ray's namespace-scope reason too. No LoCoMo question is all stopwords.

One real repository and server (module scope), with the real index and model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_server_http import Env, make_shared_env

from remnic.config import settings_for
from remnic.index.bm25 import stopword_phrase
from remnic.service.memory import Memory

HAMLET = "To be or not to be, that is the question: the line I keep quoting from Hamlet"
WHO = "I saw The Who live at Wembley in 1979"
CACHE = "The cache of the build is stored in S3 and it is warm"
OTHERS = ["Deploys need two approvals", "Ana moved to Lisbon in May", "Standup is at 9:30 on weekdays"]
LOCOMO = Path("/work/shared/data/locomo")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    base = tmp_path_factory.mktemp("r36stop")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(base / "home"))
        for e in make_shared_env(base):
            for text in (HAMLET, WHO, CACHE, *OTHERS):
                e.memory.store(text)
            yield e


def _found(env: Env, query: str) -> tuple[list[str], list[str]]:
    result = env.memory.recall(query, top_k=10)
    return [h.content.strip() for h in result.hits], result.warnings


def test_stopwords_alone_find_only_the_memories_holding_them_as_a_phrase(env: Env) -> None:
    hits, warnings = _found(env, "the of and is to")
    assert hits == []  # every memory says "the", none says "the of and is to"
    assert warnings == [
        "query: only stopwords, no content words ('the of and is to'): searched as a phrase, which no memory "
        "holds, so nothing is returned; add a word the memory is about"
    ]
    assert _found(env, "to be or not to be")[0] == [HAMLET]
    assert _found(env, "The Who")[0] == [WHO]
    hits, warnings = _found(env, "It")
    assert hits == [CACHE]
    assert warnings[0].endswith("searched as a phrase, so only the 1 memory that holds it can be returned")
    # A content word beside them: an ordinary recall, no warning.
    hits, warnings = _found(env, "the cache of it")
    assert hits[0] == CACHE and warnings == []


def test_the_xray_says_it_and_query_stopwords_off_keeps_the_old_recall(env: Env) -> None:
    snap = env.memory.recall_xray("to be or not to be")
    assert snap is not None
    scope = next(f for f in snap.to_dict()["filters"] if f["name"] == "namespace-scope")
    assert "only stopwords: searched as the phrase 'to be or not to be' (1 memory holds it)" in scope["reason"]
    root = env.root
    with Memory.open(settings=settings_for(root, recall={"query_stopwords": False})) as plain:
        result = plain.recall("the of and is to", top_k=3)
        assert result.warnings == [] and len(result.hits) == 3  # stopwords are words like any other


def test_every_surface_carries_the_warning(env: Env) -> None:
    args: dict[str, Any] = {"query": "the of and is to", "topK": 5}
    body = env.call("POST", "/remnic/v1/recall", args).json()
    assert body["count"] == 0
    [warning] = body["warnings"]
    assert warning["field"] == "query" and "only stopwords" in warning["message"]
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remnic_recall", "arguments": args}}
    r = env.call("POST", "/mcp", msg, headers={"Accept": "application/json, text/event-stream"})
    assert r.json()["result"]["structuredContent"]["warnings"] == body["warnings"]
    cli = run_cli("--memory-dir", str(env.root), "query", "to be or not to be")
    assert cli.code == 0 and HAMLET in cli.out
    assert "remnic: warning: query: only stopwords" in cli.err
    data = json.loads(run_cli("--memory-dir", str(env.root), "query", "--json", "The Who").out)
    assert [h["content"].strip() for h in data["hits"]] == [WHO] and "only stopwords" in data["warnings"][0]


def test_no_locomo_question_is_all_stopwords() -> None:
    files = sorted(LOCOMO.glob("*.json"))
    if not files:
        pytest.skip("no LoCoMo data here")
    questions = [q["question"] for f in files for q in json.loads(f.read_text(encoding="utf-8"))["qa"]]
    assert len(questions) > 900
    assert [q for q in questions if stopword_phrase(q)] == []
    assert stopword_phrase("What's up?") == ["what", "s", "up"] and stopword_phrase("what's new?") == []
