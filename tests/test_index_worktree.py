"""Files the index took from the work tree (uncommitted) are followed after a rebuild too.

A rebuild reads every memory file on disk, so it indexes uncommitted ones beside HEAD's. It must
record them as indexed from the work tree: otherwise an untracked file deleted later is in no git
diff and no `git status`, and every recall keeps returning a memory whose file is gone. status and
doctor compare the index with the files, so such a ghost is visible before any recall.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, run_remnic
from test_everyday import cli
from test_server_http import Env, make_env

GIRAFFE = "---\nid: mem_giraffe1\ncategory: fact\n---\nGiraffes have long necks.\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    cli(root, "store", "The release ships on Friday", "--category", "fact")
    cli(root, "store", "Cats sleep most of the day")
    return root


def index_check(root: Path) -> dict[str, Any]:
    doctor = json.loads(run_cli("doctor", "--json", "--memory-dir", str(root)).out)
    return next(c for c in doctor["checks"] if c["name"] == "index")


def test_a_file_deleted_after_a_reindex_is_not_recalled(repo: Path) -> None:
    (repo / "facts" / "giraffe.md").write_text(GIRAFFE, encoding="utf-8")
    reindexed = run_remnic("reindex", "--memory-dir", str(repo))  # a one-shot process, as a user runs it
    assert reindexed.code == 0, reindexed.err
    (repo / "facts" / "giraffe.md").unlink()
    assert git(repo, "status", "--porcelain").strip() == ""  # untracked and gone: git says nothing

    # Before any recall, status and doctor see that the index holds a memory whose file is gone.
    status = json.loads(run_cli("status", "--json", "--memory-dir", str(repo)).out)
    assert status["memories"] == 2 and status["index"]["count"] == 3
    assert status["index"]["mismatch"]["gone"] == ["facts/giraffe.md"]
    text = run_cli("status", "--memory-dir", str(repo)).out
    assert "index mismatch: 3 memories indexed, 2 memory files" in text and "facts/giraffe.md" in text
    check = index_check(repo)
    assert check["status"] == "warn" and "facts/giraffe.md: indexed, no memory file" in check["problems"]

    query = run_cli("query", "giraffes long necks", "--json", "--memory-dir", str(repo))
    assert query.code == 0, query.err
    assert "mem_giraffe1" not in [h["id"] for h in json.loads(query.out)["hits"]]
    assert run_cli("get", "mem_giraffe1", "--memory-dir", str(repo)).code != 0
    status = cli(repo, "status")
    assert status["index"]["count"] == status["memories"] == 2 and "mismatch" not in status["index"]
    assert index_check(repo)["status"] == "ok"


def test_an_uncommitted_edit_put_back_after_a_reindex_is_indexed_as_head_has_it(repo: Path) -> None:
    stored = cli(repo, "store", "The coffee machine is on the second floor")
    path = repo / stored["path"]
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace("second floor", "third floor"), encoding="utf-8")
    assert run_cli("reindex", "--memory-dir", str(repo)).code == 0  # takes the edited text
    git(repo, "checkout", "--", stored["path"])  # git status is clean again
    hits = cli(repo, "query", "where is the coffee machine")["hits"]
    assert "second floor" in hits[0]["content"]


def test_a_new_file_not_recalled_yet_is_an_uncommitted_change_not_an_index_problem(repo: Path) -> None:
    assert run_cli("reindex", "--memory-dir", str(repo)).code == 0
    (repo / "facts" / "zebra.md").write_text(GIRAFFE.replace("giraffe1", "zebra").replace("Giraffes", "Zebras"))
    assert index_check(repo)["status"] == "ok"  # the next recall indexes it; working-tree says so
    assert "mismatch" not in cli(repo, "status")["index"]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def test_a_running_server_drops_a_file_deleted_after_a_reindex(env: Env) -> None:
    for content in ("The release ships on Friday", "Cats sleep most of the day"):
        assert env.call("POST", "/remnic/v1/memories", {"content": content}).status == 201
    for _ in range(2):  # the server's handle now follows edits through file events
        assert env.call("POST", "/remnic/v1/recall", {"query": "release"}).status == 200
    (env.root / "facts" / "giraffe.md").write_text(GIRAFFE, encoding="utf-8")
    assert run_remnic("reindex", "--memory-dir", str(env.root)).code == 0  # another process rebuilds
    (env.root / "facts" / "giraffe.md").unlink()

    body = env.call("POST", "/remnic/v1/recall", {"query": "giraffes long necks", "sessionKey": "g"}).json()
    assert "mem_giraffe1" not in body["memoryIds"]
    explained = env.call("POST", "/remnic/v1/recall/explain", {"sessionKey": "g"}).json()
    scope = explained["snapshot"]["filters"][0]
    assert scope["name"] == "namespace-scope" and "2 memories in scope" in scope["reason"]
