"""versions after a hand move, and what the versions commands say of the file on disk.

- `versions revert --force` after a move made by hand (not committed yet) commits the move with
  the revert: HEAD holds one file with the id, and the id's history runs through both paths.
- `working` has no commit: its sha and date are null in --json (list, show, diff, timeline).
- A commit that changed the file while it held another id is named as such, not as "did not change".
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.service.memory import Memory


def cli(root: Path, *args: str) -> Any:
    result = run_cli(*args, "--json", "--memory-dir", str(root))
    assert result.code == 0, result
    return result.json()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A memory with three versions, built once: (root, id, path)."""
    root = tmp_path_factory.mktemp("versions") / "mem"
    assert run_cli("init", str(root)).code == 0
    with Memory.open(root) as memory:
        memory.defer_index(build_missing=False)  # no model: these tests read git, not the index
        record = memory.store("Ana prefers tabs").record
        memory.update(record.id, {}, content="Ana prefers tabs, width 4")
        memory.update(record.id, {}, content="Ana prefers tabs, width 2")
        path = memory.get(record.id).path
    return root, record.id, path


@pytest.fixture
def moved(history: tuple[Path, str, str], tmp_path: Path) -> tuple[Path, str, str]:
    """A copy of that repository whose memory file was then moved by hand (not committed): (root, id, old path)."""
    root = tmp_path / "mem"
    shutil.copytree(history[0], root, symlinks=True)
    os.rename(root / history[2], root / "facts" / "ana-x.md")
    return root, history[1], history[2]


def memory_files(root: Path) -> list[str]:
    return [p for p in git(root, "ls-files", "facts").split() if p.endswith(".md")]


def test_revert_force_after_a_hand_move_commits_the_move_and_keeps_the_history(moved: tuple[Path, str, str]) -> None:
    root, memory_id, old = moved
    refused = run_cli("versions", "revert", memory_id, "v1", "--memory-dir", str(root))
    assert refused.code == 2, refused  # the uncommitted move is an uncommitted change

    done = cli(root, "versions", "revert", memory_id, "v1", "--force")
    assert done["changed"] is True and done["movedFrom"] == old and done["path"] == "facts/ana-x.md"
    assert git(root, "status", "--porcelain") == ""  # the deletion of the old path is in the commit
    assert memory_files(root) == ["facts/ana-x.md"]  # one file with the id
    assert f"Moved from: {old}" in git(root, "log", "-1", "--format=%B")

    listed = cli(root, "versions", "list", memory_id)["versions"]
    assert [v["operation"] for v in listed] == ["store", "update", "update", "revert"]
    assert [v["path"] for v in listed] == [old, old, old, "facts/ana-x.md"]
    events = cli(root, "timeline", memory_id)["events"]
    assert [e["operation"] for e in events] == ["store", "update", "update", "revert"]
    assert (root / "facts" / "ana-x.md").read_text().endswith("\nAna prefers tabs\n")  # v1's text


def test_revert_to_the_text_a_hand_moved_file_already_holds_still_commits_its_new_path(
    moved: tuple[Path, str, str],
) -> None:
    root, memory_id, old = moved
    done = run_cli("versions", "revert", memory_id, "latest", "--force", "--memory-dir", str(root))
    assert done.code == 0, done
    assert f"the move from {old}" in done.out
    assert git(root, "status", "--porcelain") == ""
    assert memory_files(root) == ["facts/ana-x.md"]
    assert len(cli(root, "versions", "list", memory_id)["versions"]) == 4


def test_revert_by_the_old_path_after_a_hand_move_reverts_the_moved_file(moved: tuple[Path, str, str]) -> None:
    root, memory_id, old = moved
    done = cli(root, "versions", "revert", old, "v2", "--force")
    assert done["path"] == "facts/ana-x.md" and done["movedFrom"] == old
    assert not (root / old).exists() and memory_files(root) == ["facts/ana-x.md"]
    assert git(root, "status", "--porcelain") == ""
    assert len(cli(root, "versions", "list", memory_id)["versions"]) == 4


def test_working_has_null_sha_and_date(moved: tuple[Path, str, str]) -> None:
    root, memory_id, _old = moved
    shown = cli(root, "versions", "show", memory_id, "working")
    assert (shown["version"], shown["sha"], shown["date"]) == (None, None, None)
    diff = cli(root, "versions", "diff", memory_id)
    assert diff["to"]["label"] == "working" and diff["to"]["sha"] is None and diff["to"]["date"] is None
    assert diff["from"]["sha"] and diff["from"]["date"]
    events = cli(root, "timeline", memory_id)["events"]
    assert events[-1]["operation"] == "uncommitted" and events[-1]["sha"] is None and events[-1]["date"] is None
    table = run_cli("timeline", memory_id, "--memory-dir", str(root))
    assert table.code == 0 and "uncommitted" in table.out, table


def test_a_commit_that_gave_the_file_another_id_is_named_as_such(
    history: tuple[Path, str, str], tmp_path: Path
) -> None:
    root = tmp_path / "mem"
    shutil.copytree(history[0], root, symlinks=True)
    memory_id, rel = history[1], history[2]
    path = root / rel
    text = path.read_text()
    path.write_text(text.replace(f"id: {memory_id}", "id: mem_typo"))  # a hand edit of the id, committed
    git(root, "commit", "-qam", "typo")
    typo = git(root, "rev-parse", "HEAD").strip()
    path.write_text(text.replace("width 2", "width 3"))  # fixed, with an edit
    git(root, "commit", "-qam", "fix")

    result = run_cli("versions", "show", rel, typo[:8], "--memory-dir", str(root))
    assert result.code == 2, result
    assert "did not change" not in result.err, result.err
    assert f"changed {rel}, but the file then had id mem_typo, not {memory_id}" in result.err
    assert "the version in effect then is v3" in result.err
    listed = json.loads(run_cli("versions", "list", rel, "--json", "--memory-dir", str(root)).out)["versions"]
    assert typo not in [v["sha"] for v in listed] and len(listed) == 4
