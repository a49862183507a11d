"""A pull's marker `remnic space pull` cannot clear (it names no commits, or the repository has no remote left):
doctor, the refused write and the pull's error name the file and say what clears it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import git, run_cli

from remnic.repo import gitindex
from remnic.service.memory import Memory


def _marker(memory: Memory, **data: Any) -> Path:
    marker = memory.git_dir / gitindex.PULL_MARKER
    marker.write_text(json.dumps(data), encoding="utf-8")
    return marker


def _checks(root: Path) -> dict[str, dict[str, Any]]:
    result = run_cli("doctor", "--json", "--memory-dir", str(root))
    return {c["name"]: c for c in result.json()["checks"]}


def _store(root: Path) -> Any:
    return run_cli("store", "The deploy target is staging", "--category", "fact", "--memory-dir", str(root))


def test_a_marker_naming_no_commits_is_named_with_delete_it(memory: Memory) -> None:
    memory.store("Ana prefers tabs over spaces.", category="preference")
    marker = _marker(memory, head=memory.head())

    check = _checks(memory.root)["pull-marker"]
    assert check["status"] == "fail", check
    assert f"{marker} names no commits (no `target`)" in check["detail"] and "delete that file" in check["detail"]
    merge = _checks(memory.root)["merge"]  # the merge line gives the same advice, not `remnic space pull`
    assert merge["status"] == "fail" and "delete that file" in merge["detail"], merge

    refused = _store(memory.root)
    assert refused.code != 0
    assert f"{marker} names no commits" in refused.err and "delete that file" in refused.err, refused

    pulled = run_cli("space", "pull", "--memory-dir", str(memory.root))  # no remote: stops before the marker
    assert pulled.code == 2 and "has no remote to use" in pulled.err, pulled
    assert f"{marker} names no commits" in pulled.err and "delete that file" in pulled.err, pulled

    marker.unlink()  # as told: writes work again and doctor has nothing to say
    assert _store(memory.root).code == 0
    assert "pull-marker" not in _checks(memory.root)


def test_a_marker_in_a_repo_without_a_remote_says_to_add_it_back_or_delete_the_file(
    memory: Memory, tmp_path: Path
) -> None:
    head = memory.head()
    marker = _marker(memory, head=head, target=head, tracking="origin/main", pid=None, started=0)

    check = _checks(memory.root)["pull-marker"]
    assert check["status"] == "fail", check
    assert str(marker) in check["detail"] and "has none: add it back" in check["detail"], check
    assert "or delete that file" in check["detail"]
    assert _checks(memory.root)["merge"]["status"] == "fail"  # still blocked: not ignored

    pulled = run_cli("space", "pull", "--memory-dir", str(memory.root))
    assert pulled.code == 2 and "has no remote to use" in pulled.err, pulled
    assert str(marker) in pulled.err and "add it back" in pulled.err, pulled

    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(memory.root, "remote", "add", "origin", str(bare))
    assert "pull-marker" not in _checks(memory.root)  # `remnic space pull` clears it now


def test_a_pull_without_a_remote_and_no_marker_says_nothing_of_one(memory: Memory) -> None:
    pulled = run_cli("space", "pull", "--memory-dir", str(memory.root))
    assert pulled.code == 2 and "has no remote to use" in pulled.err and "paused" not in pulled.err, pulled
    assert "pull-marker" not in _checks(memory.root)
