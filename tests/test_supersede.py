"""Supersession from every surface: the older memory leaves recall, keeps its file, and comes back on request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, snapshot_tree
from test_server_http import Env, make_env
from test_server_mcp import http_client, run

from remnic.errors import ValidationError
from remnic.service import Memory


def recalled(memory: Memory, query: str, **options: Any) -> list[str]:
    return [h.content for h in memory.recall(query, **options).hits]


def assert_superseded(memory: Memory, old_id: str, new_id: str) -> None:
    old, new = memory.get(old_id), memory.get(new_id)
    assert old.status == "superseded" and old.frontmatter["supersededBy"] == new_id
    assert "supersededAt" in old.frontmatter and "invalidAt" in old.frontmatter
    assert (memory.root / old.path).is_file()  # the file stays, with its history
    hits = recalled(memory, "office wifi password rotation")
    assert new.content in hits and old.content not in hits
    assert old.content in recalled(memory, "office wifi password rotation", statuses=["active", "superseded"])


def test_import_with_supersedes_recalls_only_the_correction(memory: Memory, tmp_path: Path) -> None:
    old = memory.store("The office wifi password rotates monthly").record
    batch = tmp_path / "fix.jsonl"
    batch.write_text(json.dumps({"content": "The office wifi password rotates weekly", "supersedes": old.id}) + "\n")
    result = run_cli("import", str(batch), "--memory-dir", str(memory.root), "--json")
    assert result.code == 0, result.err
    new_id = result.json()["ids"][0]
    assert_superseded(memory, old.id, new_id)
    assert len(git(memory.root, "log", "-1", "--format=%H").split()) == 1  # one commit for both files


def test_store_and_update_supersede_from_the_cli(memory: Memory) -> None:
    old = memory.store("The office wifi password rotates monthly").record
    new = run_cli(
        "store", "The office wifi password rotates weekly", "--supersedes", old.id, "--json",
        "--memory-dir", str(memory.root),
    ).json()  # fmt: skip
    assert_superseded(memory, old.id, new["id"])
    third = memory.store("The office wifi password rotates daily").record
    assert run_cli("update", third.id, "--supersedes", new["id"], "--memory-dir", str(memory.root)).code == 0
    assert memory.get(new["id"]).status == "superseded" and memory.get(third.id).frontmatter["supersedes"] == new["id"]


def test_an_unknown_supersedes_id_is_refused_and_nothing_is_written(memory: Memory) -> None:
    before = git(memory.root, "rev-parse", "HEAD")
    result = run_cli("store", "Something new", "--supersedes", "mem_nope", "--memory-dir", str(memory.root))
    assert result.code == 2 and "supersedes" in result.err and "mem_nope" in result.err
    assert git(memory.root, "rev-parse", "HEAD") == before and not memory.list()


def test_a_memory_cannot_supersede_itself_or_what_already_supersedes_it(memory: Memory) -> None:
    d = str(memory.root)
    old = memory.store("The office wifi password rotates monthly").record
    new = memory.store("The office wifi password rotates weekly", extra={"supersedes": old.id}).record
    newest = memory.store("The office wifi password rotates daily", extra={"supersedes": new.id}).record
    files, head = snapshot_tree(memory.root), git(memory.root, "rev-parse", "HEAD")
    for target, by, says in (
        (old.id, old.id, "cannot supersede itself"),
        (new.id, old.id, f"{new.id} already supersedes {old.id}"),  # they would supersede each other
        (newest.id, old.id, f"{newest.id} already supersedes {old.id}"),  # a loop through `new`
    ):
        result = run_cli("update", by, "--supersedes", target, "--memory-dir", d)
        assert result.code == 2 and "--supersedes" in result.err and says in result.err, result.err
        with pytest.raises(ValidationError) as caught:
            memory.update(by, {"supersedes": target})
        assert [p.field for p in caught.value.problems] == ["supersedes"]
    assert snapshot_tree(memory.root) == files and git(memory.root, "rev-parse", "HEAD") == head
    assert memory.get(new.id).frontmatter["supersedes"] == old.id and memory.get(newest.id).status == "active"
    assert recalled(memory, "office wifi password rotation") == [newest.content]


@pytest.fixture
def plain_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def test_http_and_mcp_writes_honour_supersedes(plain_env: Env) -> None:
    env = plain_env
    old = env.call("POST", "/engram/v1/memories", {"content": "The office wifi password rotates monthly"}).json()
    new = env.call(
        "POST",
        "/engram/v1/memories",
        {"content": "The office wifi password rotates weekly", "supersedes": old["memoryId"]},
    ).json()
    assert_superseded(env.memory, old["memoryId"], new["memoryId"])

    async def go() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.call_tool(
                "remnic_memory_store",
                {"content": "The office wifi password rotates daily", "supersedes": new["memoryId"]},
            )

    third = run(go).structured_content
    assert env.memory.get(new["memoryId"]).status == "superseded"
    assert env.memory.get(third["memoryId"]).frontmatter["supersedes"] == new["memoryId"]
