"""Small defects: memory paths taken literally by git (a ``[draft]`` name is no glob, a leading ``:`` no
pathspec magic), memory_capture's minimum counted on the trimmed text, observe's flush with ``messages``
left out, memory_timeline/memory_get naming a path as a path, and a broken repo config read once when
remnic runs from the repository's root."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from test_server_http import Env, make_env
from test_server_mcp import http_client, run, text

from remnic.config import load_settings
from remnic.errors import ValidationError
from remnic.service import pull_resolve
from remnic.service.memory import Memory
from remnic.sync.times import file_times

DRAFT, SIBLING = "facts/[draft] idea.md", "facts/d idea.md"
OLD = 1_000_000_000.0  # 2001: a modification time no commit of this test has


def _commit(root: Path, *paths: str) -> None:
    git(root, "add", "--", *(f":(literal){p}" for p in paths))
    git(root, "commit", "-q", "-m", "add")


# --- git pathspecs ---


def test_a_bracketed_name_is_not_taken_for_its_glob_sibling(memory: Memory) -> None:
    root = memory.root
    (root / "facts").mkdir(exist_ok=True)
    (root / SIBLING).write_text("the sibling\n")
    _commit(root, SIBLING)
    (root / DRAFT).write_text("not committed\n")
    # `facts/[draft] idea.md` as a glob matches `facts/d idea.md`: the draft is not tracked.
    assert memory.is_tracked(SIBLING) is True
    assert memory.is_tracked(DRAFT) is False


def test_a_resolved_pull_removes_only_the_path_it_names(memory: Memory) -> None:
    root = memory.root
    (root / "facts").mkdir(exist_ok=True)
    (root / SIBLING).write_text("the sibling\n")
    _commit(root, SIBLING)
    pull_resolve._keep_one(memory, "facts/kept.md", "kept\n", [DRAFT, None])
    tracked = git(root, "ls-files", "-z").split("\0")
    assert SIBLING in tracked and "facts/kept.md" in tracked
    assert (root / SIBLING).read_text() == "the sibling\n"


def test_adopted_times_come_from_the_history_of_the_exact_path(memory: Memory) -> None:
    root = memory.root
    (root / "facts").mkdir(exist_ok=True)
    names = [":colon idea.md", DRAFT]
    for name in names:
        (root / name).write_text(f"{name}\n")
    _commit(root, *names)
    committed = float(git(root, "log", "-1", "--format=%ct").strip())
    for name in names:
        os.utime(root / name, (OLD, OLD))
    times = file_times(root, memory.ledger, names, set())
    # A leading ':' is pathspec magic: `:colon idea.md` matched `colon idea.md`, so no history was found.
    assert {name: (t.created, t.updated) for name, t in times.items()} == {
        name: (committed, committed) for name in names
    }


# --- server: capture, observe flush, memory paths ---


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def _calls(env: Env, *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    async def go() -> list[Any]:
        async with http_client(env, env.alice) as client:
            return [await client.call_tool(name, args) for name, args in requests]

    return list(run(go))


def _body(result: Any) -> dict[str, Any]:
    return dict(json.loads(text(result)))


SAID = [{"role": "user", "content": "We moved the weekly standup to 9:30 on Mondays, starting next week."}]


def test_capture_flush_and_paths_over_mcp(env: Env) -> None:
    stored = env.call(
        "POST", "/remnic/v1/memories", {"content": "We cut releases every Tuesday", "category": "decision"}
    )
    memory_id, path = stored.json()["memoryId"], stored.json()["path"]
    padded, fed, flushed, unflushed, timeline, missing = _calls(
        env,
        ("remnic_memory_capture", {"content": "   short    "}),
        ("remnic_observe", {"sessionKey": "s1", "messages": SAID}),
        ("remnic_observe", {"sessionKey": "s1", "flush": True}),
        ("remnic_observe", {"sessionKey": "s1"}),
        ("remnic_memory_timeline", {"memoryId": path}),
        ("remnic_memory_get", {"memoryId": "facts/nonexistent.md"}),
    )
    # The note is stored trimmed: 5 characters, under the 10 the capture needs.
    assert padded.is_error and _body(padded)["details"][0]["field"] == "content", text(padded)
    assert "5 characters once surrounding whitespace is trimmed" in _body(padded)["error"]
    assert not (env.root / "facts" / "short.md").exists()
    assert not fed.is_error and _body(fed)["pendingTurns"] == 1, text(fed)
    assert not flushed.is_error, text(flushed)
    assert _body(flushed)["pendingTurns"] == 0 and len(_body(flushed)["flushes"]) == 1
    assert unflushed.is_error and _body(unflushed)["details"][0]["field"] == "messages"
    assert "flush: true" in _body(unflushed)["error"]
    out = _body(timeline)
    assert out["memoryId"] == memory_id and out["path"] == path, out
    assert _body(missing)["error"] == "no memory at path 'facts/nonexistent.md'"


def test_observe_flush_without_messages_and_paths_over_http(env: Env) -> None:
    assert env.call("POST", "/remnic/v1/observe", {"sessionKey": "s2", "messages": SAID}).status == 202
    r = env.call("POST", "/remnic/v1/observe", {"sessionKey": "s2", "flush": True})
    assert r.status == 202 and r.json()["pendingTurns"] == 0 and len(r.json()["flushes"]) == 1, r.raw
    refused = env.call("POST", "/remnic/v1/observe", {"sessionKey": "s2"})
    assert refused.status == 400 and refused.json()["details"][0]["field"] == "messages", refused.raw
    by_id = env.call("GET", "/remnic/v1/memories/mem_doesnotexist")
    assert by_id.status == 404 and by_id.json()["error"] == "no memory with id 'mem_doesnotexist'"


# --- config ---


def test_a_broken_repo_config_is_reported_once_from_the_repository_root(memory: Memory) -> None:
    (memory.root / "remnic.config.json").write_text('{"recall": {"topK": 3,}\n')
    with pytest.raises(ValidationError) as caught:
        load_settings(memory.root, cwd=memory.root)
    assert len(caught.value.problems) == 1, [p.describe() for p in caught.value.problems]
    assert "2 problems" not in caught.value.message
