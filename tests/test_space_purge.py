"""`space delete --purge` never destroys what git cannot bring back (files never committed,
uncommitted changes, stashes, commits no remote has) unless `--force`; `space create --path` says
when the folder already held files that are not memories. Real repositories, the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import git, run_cli
from test_spaces import ok

from remnic.config.spaces import load_registry


def bare_remote(tmp_path: Path) -> Path:
    bare = tmp_path / "team.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    return bare


def test_purge_refuses_an_untracked_user_file_and_it_survives(tmp_path: Path, spaces_file: Path) -> None:
    folder = tmp_path / "notmem"
    folder.mkdir()
    (folder / "keep.txt").write_text("hi\n")
    made = run_cli("space", "create", "nm", "--path", str(folder))
    assert made.code == 0
    refused = run_cli("space", "delete", "nm", "--purge")
    assert refused.code == 2 and refused.out == ""
    for words in ("'nm'", str(folder), "keep.txt", "untracked", "--purge --force"):
        assert words in refused.err, (words, refused.err)
    assert (folder / "keep.txt").read_text() == "hi\n" and (folder / ".git").is_dir()
    assert "nm" in load_registry().spaces  # a refusal forgets nothing either
    as_json = run_cli("space", "delete", "nm", "--purge", "--json")
    error = json.loads(as_json.err)
    assert as_json.code == 2 and as_json.out == ""
    assert error["code"] == "unsaved_work" and error["space"] == "nm" and error["path"] == str(folder)
    assert error["details"] == [{"field": "untracked", "message": "never committed", "path": "keep.txt"}]
    assert error["atRisk"] == {"untracked": 1, "uncommitted": 0, "stashes": 0, "unpushed": 0}
    assert "--force" in error["hint"] and (folder / "keep.txt").exists()
    # and creating the space had said so: a warning line naming the file
    assert "remnic: warning:" in made.err and "keep.txt" in made.err and "1 file that is not a memory" in made.err


def test_purge_refuses_unpushed_commits(tmp_path: Path, spaces_file: Path) -> None:
    bare = bare_remote(tmp_path)
    ok("space", "create", "team", "--path", str(tmp_path / "team"), "--remote", str(bare))
    ok("store", "The team retro is on Fridays", "--space", "team")
    ok("space", "push", "team")
    ok("store", "The team demo is on Thursdays", "--space", "team")  # committed, not pushed
    refused = run_cli("space", "delete", "team", "--purge")
    assert refused.code == 2 and "1 commit not pushed" in refused.err and "team demo is on Thursdays" in refused.err
    assert "remnic space push team" in refused.err and (tmp_path / "team" / ".git").is_dir()
    # No remote at all: every memory commit exists only here (the template's own commit does not count).
    ok("space", "create", "solo", "--path", str(tmp_path / "solo"))
    ok("store", "My bike lock code is in the drawer", "--space", "solo")
    alone = run_cli("space", "delete", "solo", "--purge", "--json")
    error = json.loads(alone.err)
    assert alone.code == 2 and error["atRisk"]["unpushed"] == 1 and error["remotes"] == []
    assert "has no remote" in error["error"] and "remote add origin" in error["hint"]
    assert (tmp_path / "solo" / ".git").is_dir() and "solo" in load_registry().spaces


def test_purge_refuses_uncommitted_changes_and_stashes_listing_at_most_ten(tmp_path: Path, spaces_file: Path) -> None:
    bare = bare_remote(tmp_path)
    root = tmp_path / "proj"
    ok("space", "create", "proj", "--path", str(root), "--remote", str(bare))
    ok("space", "push", "proj")
    (root / "README.md").write_text("my own notes\n")
    git(root, "stash")
    (root / "README.md").write_text("edited again\n")
    for n in range(12):
        (root / f"draft-{n:02}.txt").write_text(f"draft {n}\n")
    refused = run_cli("space", "delete", "proj", "--purge")
    assert refused.code == 2, refused.err
    assert "12 untracked files, 1 uncommitted change, 1 stash" in refused.err
    assert "draft-00.txt" in refused.err and "draft-09.txt" in refused.err and "draft-11.txt" not in refused.err
    assert "... and 4 more" in refused.err and "stash list" in refused.err
    error = json.loads(run_cli("space", "delete", "proj", "--purge", "--json").err)
    assert len(error["details"]) == 10 and error["atRisk"] == {
        "untracked": 12,
        "uncommitted": 1,
        "stashes": 1,
        "unpushed": 0,
    }
    assert (root / "README.md").read_text() == "edited again\n" and len(list(root.glob("draft-*.txt"))) == 12


def test_force_purges_anyway(tmp_path: Path, spaces_file: Path) -> None:
    folder = tmp_path / "notmem"
    folder.mkdir()
    (folder / "keep.txt").write_text("hi\n")
    ok("space", "create", "nm", "--path", str(folder))
    alone = run_cli("space", "delete", "nm", "--force")
    assert alone.code == 2 and "only applies with --purge" in alone.err and "nm" in load_registry().spaces
    gone = ok("space", "delete", "nm", "--purge", "--force")
    assert gone["purged"] is True and gone["forced"] is True and not folder.exists()
    assert "nm" not in load_registry().spaces


def test_a_clean_pushed_space_purges_without_force(tmp_path: Path, spaces_file: Path) -> None:
    bare = bare_remote(tmp_path)
    ok("space", "create", "team", "--path", str(tmp_path / "team"), "--remote", str(bare))
    ok("store", "The team retro is on Fridays", "--space", "team")
    ok("query", "when is the retro", "--space", "team")  # the git-ignored index and state are no obstacle
    ok("space", "push", "team")
    ok("space", "clone", str(bare), str(tmp_path / "copy"), "--name", "copy")
    for name in ("team", "copy"):
        gone = run_cli("space", "delete", name, "--purge")
        assert gone.code == 0 and "removed" in gone.out, gone.err
        assert not (tmp_path / name).exists() and name not in load_registry().spaces
    # A space never used (nothing but the template's commit, no remote) purges too.
    ok("space", "create", "empty", "--path", str(tmp_path / "empty"))
    assert ok("space", "delete", "empty", "--purge")["purged"] is True and not (tmp_path / "empty").exists()


def test_create_says_when_the_folder_held_files_that_are_not_memories(tmp_path: Path, spaces_file: Path) -> None:
    fresh = ok("space", "create", "fresh", "--path", str(tmp_path / "fresh"))
    assert fresh["existingFiles"] == {"count": 0, "more": False, "paths": []} and "warnings" not in fresh
    quiet = run_cli("space", "create", "again", "--path", str(tmp_path / "fresh2"))
    assert quiet.code == 0 and quiet.err == ""
    notes = tmp_path / "notes"
    (notes / "facts").mkdir(parents=True)
    (notes / "facts" / "a-fact.md").write_text("---\nid: mem_x\n---\nA memory already\n")
    (notes / "todo.txt").write_text("buy milk\n")
    (notes / "journal" / "monday.md").parent.mkdir()
    (notes / "journal" / "monday.md").write_text("a note outside the memory folders\n")
    made = ok("space", "create", "notes", "--path", str(notes))
    assert made["created"] is True
    assert made["existingFiles"] == {"count": 2, "more": False, "paths": ["todo.txt", "journal/monday.md"]}
    assert made["warnings"][0]["field"] == "path" and "2 files that are not memories" in made["warnings"][0]["message"]
    assert (notes / "todo.txt").read_text() == "buy milk\n"  # adopted around, never refused or touched
    # Registering an existing memory repository lays nothing in: no warning.
    ok("space", "delete", "notes")
    again = ok("space", "create", "notes", "--path", str(notes))
    assert again["created"] is False and again["existingFiles"]["count"] == 0 and "warnings" not in again
