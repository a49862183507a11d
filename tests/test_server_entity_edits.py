"""An entities rebuild leaves a person's uncommitted edit of an entity page as it is: not
rewritten, not committed. Real server on 127.0.0.1, the official MCP client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from test_server_agents import tool
from test_server_http import Env, make_env
from test_server_mcp import text

HAND = "Hand note: Ana prefers async standups.\n"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def test_a_hand_edit_of_an_entity_page_stays_uncommitted_through_a_rebuild(env: Env) -> None:
    assert not tool(env, "remnic_memory_store", {"content": "Ana Silva leads the data team"}).is_error
    head = git(env.root, "rev-parse", "HEAD")
    first = tool(env, "remnic_entity_get", {"name": "Ana Silva"})
    assert not first.is_error, text(first)
    # The read showed the page a build makes and wrote nothing; a refresh writes it.
    assert git(env.root, "rev-parse", "HEAD") == head and git(env.root, "status", "--porcelain") == ""
    rel = json.loads(text(first))["entity"]["path"]
    assert env.memory.refresh_entities()["written"] == [rel]
    page = env.root / rel
    with page.open("a", encoding="utf-8") as f:
        f.write(HAND)
    edited = page.read_bytes()

    assert not tool(env, "remnic_memory_store", {"content": "Ana Silva approved the Q3 budget"}).is_error
    before = git(env.root, "rev-parse", "HEAD")
    again = tool(env, "remnic_entity_get", {"name": "Ana Silva"})
    assert not again.is_error, text(again)
    assert "Q3 budget" not in text(again)  # shown as it is on disk, as a refresh leaves it

    assert page.read_bytes() == edited  # neither rewritten nor dropped
    assert HAND.strip() not in git(env.root, "show", f"HEAD:{rel}")
    assert git(env.root, "status", "--porcelain", "--", rel).startswith(" M")
    assert git(env.root, "rev-parse", "HEAD") == before  # no entities commit carried the edit
    assert env.memory.refresh_entities(force=True)["skipped"] == [rel]

    git(env.root, "commit", "-q", "-am", "my note on Ana")  # once committed, the page is rebuilt again
    rebuilt = env.memory.refresh_entities()
    assert rebuilt["written"] == [rel] and rebuilt["skipped"] == []
    assert "Q3 budget" in page.read_text(encoding="utf-8")
