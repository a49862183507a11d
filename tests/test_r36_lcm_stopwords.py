"""Session 36: `lcm search` with a query of stopwords only is searched as a phrase, with recall's warning,
and the archive index's rebuild reason names the versions.

A real git repository, the real tantivy index and the CLI in-process; one archive for the module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.observe.lcm.index import VERSION, LcmIndex
from remnic.service.memory import Memory

TURNS = [
    {"role": "user", "content": "To be or not to be, that is the question Hamlet asks."},
    {"role": "user", "content": "We saw The Who play at Wembley in 1979."},
    {"role": "user", "content": "Rename the billing service to ledger."},
    {"role": "user", "content": "The deploy is on Friday."},
]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("lcmstop") / "mem"
    mem = Memory.init(root, settings=settings_for(root))
    mem.observe("s1", TURNS, extract=False)
    yield mem
    mem.close()


def test_a_stopword_query_no_turn_holds_finds_nothing_and_says_why(memory: Memory) -> None:
    r = run_cli("lcm", "search", "the of and is to", "--memory-dir", str(memory.root))
    assert r.code == 0 and "no archived turn matches" in r.out
    assert "only stopwords, no content words ('the of and is to'): searched as a phrase" in r.err
    assert "which no archived turn holds, so nothing is returned" in r.err
    data = run_cli("lcm", "search", "the of and is to", "--json", "--memory-dir", str(memory.root)).json()
    assert data["count"] == 0 and "searched as a phrase" in data["warnings"][0]


def test_a_stopword_phrase_finds_only_the_turn_that_holds_it(memory: Memory) -> None:
    for query, turn in (("to be or not to be", 0), ("The Who", 1)):
        data = run_cli("lcm", "search", query, "--json", "--memory-dir", str(memory.root)).json()
        assert [h["turnIndex"] for h in data["results"]] == [turn], query
        assert "so only the 1 turn that holds it can be returned" in data["warnings"][0]
    # a query with a content word is searched as before, with no warning
    data = run_cli("lcm", "search", "the billing", "--json", "--memory-dir", str(memory.root)).json()
    assert data["results"][0]["turnIndex"] == 2 and "warnings" not in data


def test_the_rebuild_reason_names_the_index_versions(memory: Memory) -> None:
    index = LcmIndex(memory.root)
    index.catch_up()
    manifest = json.loads(index.manifest_path.read_text(encoding="utf-8"))
    Path(index.manifest_path).write_text(json.dumps({**manifest, "version": VERSION - 1}), encoding="utf-8")
    caught = index.catch_up()
    assert caught.rebuilt and caught.reason == f"index v{VERSION - 1}, this remnic writes v{VERSION}"
    assert memory.lcm_search("Wembley")[0]["turnIndex"] == 1
