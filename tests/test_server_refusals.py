"""What the server answers that is not its own doing: a file a person broke, a merge under way, what a store inherits."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from test_server_http import NAMESPACES, Env, make_env


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch, namespaces=NAMESPACES)


def test_a_broken_file_and_a_merge_under_way_are_refusals_not_server_faults(env: Env) -> None:
    stored = env.call("POST", "/engram/v1/memories", {"content": "Kiwis are flightless"}).json()
    path = env.root / stored["path"] if "path" in stored else next((env.root / "namespaces").rglob("kiwis*.md"))
    path.write_text(path.read_text().replace("tags: []", "tags: [unclosed"))
    broken = env.call("GET", f"/engram/v1/memories/{stored['memoryId']}")
    assert broken.status == 422 and broken.json()["code"] == "malformed_memory" and "requestId" not in broken.json()
    git(env.root, "checkout", "--", ".")
    merge_head = env.root / ".git" / "MERGE_HEAD"
    merge_head.write_text(git(env.root, "rev-parse", "HEAD") + "\n")
    # A merge stopped long ago (no git at work on it): refused at once, not after the wait for a running git.
    os.utime(merge_head, (time.time() - 3600, time.time() - 3600))
    busy = env.call("POST", "/engram/v1/memories", {"content": "Takahe are flightless too"})
    assert busy.status == 409 and busy.json()["code"] == "repo_busy" and "merge" in busy.json()["error"]


def test_store_with_supersedes_takes_the_superseded_memorys_category_when_none_is_given(env: Env) -> None:
    old = env.call("POST", "/engram/v1/memories", {"content": "We cut releases on Tuesdays", "category": "decision"})
    new = env.call(
        "POST",
        "/engram/v1/memories",
        {"content": "We cut releases on Wednesdays", "supersedes": old.json()["memoryId"]},
    )
    assert new.status == 201, new.json()
    assert env.memory.get(new.json()["memoryId"]).category == "decision"
    plain = env.call("POST", "/engram/v1/memories", {"content": "Kakapo are parrots"})
    assert env.memory.get(plain.json()["memoryId"]).category == "fact"
