"""A pull merges in a scratch work tree and copies the changed paths over; these check the copy on real bare
remotes with two clones (each user with their own HOME): a pull killed after git moved HEAD (a fast-forward, a
first pull adopting the remote's history) is finished by the next pull and pauses sync meanwhile, never
committed back as "hand edits"; files arrive as git's checkout writes them (eol=crlf, core.autocrlf), a folder
replaced by a file and a mode change included; the scratch tree does not outlive a pull."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git
from test_r34_spaces_branch import User, empty_remote

from remnic.repo.pullmark import PULL_MARKER
from remnic.service.pull_guard import PULL_TREE


def _pair(tmp: Path) -> tuple[User, User]:
    alice, bob = User(tmp, "alice"), User(tmp, "bob")
    bare = empty_remote(tmp, alice)
    alice.ok("space", "create", "team", "--path", str(alice.team), "--kind", "team", "--remote", str(bare), "--switch")
    alice.ok("store", "seed memory")
    alice.ok("space", "push")
    bob.ok("space", "clone", str(bare), str(bob.team), "--name", "team")
    bob.ok("space", "switch", "team")
    return alice, bob


def _commit_all(user: User, message: str) -> None:
    subprocess.run(["git", "add", "-A"], cwd=user.team, env={**user.env, "PATH": _env_path()}, check=True)
    subprocess.run(["git", "commit", "-qm", message], cwd=user.team, env={**user.env, "PATH": _env_path()}, check=True)


def _env_path() -> str:
    return os.environ["PATH"]


def _status(user: User) -> str:
    return git(user.team, "status", "--short")


def _texts(user: User) -> dict[str, str]:
    return {p.name: p.read_text() for p in (user.team / "facts").glob("*.md")}


def test_a_fast_forward_killed_after_head_moved_is_finished_not_reverted(tmp_path: Path) -> None:
    alice, bob = _pair(tmp_path)
    made = json.loads(alice.ok("store", "The on-call rotation changes on Fridays", "--json").out)
    alice.ok("space", "push")
    bob.ok("space", "pull")
    alice.ok("update", made["id"], "--content", "The on-call rotation changes on Mondays")
    alice.ok("store", "Alice: staging is in eu-west-1")
    alice.ok("space", "push")
    theirs = git(alice.team, "rev-parse", "HEAD").strip()

    cut = subprocess.run(
        [*_remnic(), "space", "pull"],
        cwd=bob.home,
        env={**_base_env(), **bob.env, "REMNIC_CRASH_AT": "pull-merging"},
        capture_output=True,
    )
    assert cut.returncode != 0
    assert git(bob.team, "rev-parse", "HEAD").strip() == theirs  # git fast-forwarded; files not copied yet
    assert _status(bob)  # the old files: not hand edits

    synced = bob("sync", "run")
    assert "paused" in synced.out + synced.err
    assert git(bob.team, "rev-parse", "HEAD").strip() == theirs  # nothing committed over the pull

    pulled = bob.ok("space", "pull")
    assert "finished" in pulled.out
    assert git(bob.team, "rev-parse", "HEAD").strip() == theirs
    assert _status(bob) == ""
    texts = _texts(bob)
    assert any("Mondays" in t for t in texts.values()) and not any("Fridays\n" in t for t in texts.values())
    assert "alice-staging-is-in-eu-west-1.md" in texts
    assert not (bob.team / ".git" / PULL_MARKER).exists()
    assert not (bob.team / ".git" / PULL_TREE).exists()


def _remnic() -> list[str]:
    return [sys.executable, "-m", "remnic"]


def _base_env() -> dict[str, str]:
    return dict(os.environ)


def _kill_first_pull_at(tmp: Path, point: str) -> tuple[User, User]:
    alice, bob = User(tmp, "alice"), User(tmp, "bob")
    bare = empty_remote(tmp, alice)
    bob.ok("space", "clone", str(bare), str(bob.team), "--name", "team")
    bob.ok("space", "switch", "team")
    alice.ok("space", "create", "team", "--path", str(alice.team), "--remote", str(bare), "--switch")
    for n in range(12):
        alice.ok("store", f"Fact {n}: service s{n} owns queue q{n}")
    alice.ok("space", "push")
    cut = subprocess.run(
        [*_remnic(), "space", "pull"], cwd=bob.home, env={**_base_env(), **bob.env, "REMNIC_CRASH_AT": point}
    )
    assert cut.returncode != 0
    return alice, bob


def _adopted_cleanly(alice: User, bob: User) -> None:
    synced = bob("sync", "run")
    assert git(bob.team, "log", "--format=%s").count("hand edit") == 0, synced.out
    bob.ok("space", "pull")
    assert git(bob.team, "rev-parse", "HEAD") == git(alice.team, "rev-parse", "HEAD")
    assert _status(bob) == ""
    assert _texts(bob) == _texts(alice)
    assert not (bob.team / ".git" / PULL_MARKER).exists()


def test_a_first_pull_killed_after_it_took_the_remotes_history_is_finished(tmp_path: Path) -> None:
    alice, bob = _kill_first_pull_at(tmp_path, "pull-adopt-moved")
    assert git(bob.team, "rev-parse", "HEAD") == git(alice.team, "rev-parse", "HEAD")
    _adopted_cleanly(alice, bob)


def test_a_first_pull_killed_before_it_moved_the_branch_adopts_again(tmp_path: Path) -> None:
    alice, bob = _kill_first_pull_at(tmp_path, "pull-adopt-read")
    assert git(bob.team, "rev-parse", "HEAD") != git(alice.team, "rev-parse", "HEAD")
    _adopted_cleanly(alice, bob)


def _one_sided_edits(alice: User, bob: User, memory_id: str) -> None:
    (alice.team / "notes.txt").write_text("line one\nline two\n")
    alice.ok("update", memory_id, "--content", "Deploys happen on Tuesday")
    _commit_all(alice, "two")
    alice.ok("space", "push")


def test_a_fast_forward_with_eol_crlf_arrives_as_checkout_writes_it(tmp_path: Path) -> None:
    alice, bob = _pair(tmp_path)
    with (alice.team / ".gitattributes").open("a") as out:
        out.write("* text eol=crlf\n")
    (alice.team / "notes.txt").write_text("line one\n")
    made = json.loads(alice.ok("store", "Deploys happen on Monday", "--json").out)
    _commit_all(alice, "crlf")
    alice.ok("space", "push")
    bob.ok("space", "pull")
    for old in [bob.team / "notes.txt", *(bob.team / "facts").glob("*.md")]:
        old.unlink()
    git(bob.team, "checkout", "--", ".")
    _one_sided_edits(alice, bob, made["id"])

    pulled = json.loads(bob.ok("space", "pull", "--json").out)

    assert pulled["outcome"] == "fast-forward" and pulled["savedDuringPull"] == []
    assert _status(bob) == ""
    assert (bob.team / "notes.txt").read_bytes() == b"line one\r\nline two\r\n"
    assert not list((bob.team / "facts").glob("*conflict*"))
    assert any(b"Tuesday\r\n" in p.read_bytes() for p in (bob.team / "facts").glob("*.md"))


def test_core_autocrlf_leaves_the_clone_clean_for_the_next_pull(tmp_path: Path) -> None:
    alice, bob = _pair(tmp_path)
    git(bob.team, "config", "core.autocrlf", "true")
    made = json.loads(alice.ok("store", "Deploys happen on Monday", "--json").out)
    alice.ok("space", "push")
    bob.ok("space", "pull")
    assert _status(bob) == ""
    arrived = [p.read_bytes() for p in (bob.team / "facts").glob("*.md") if b"Deploys" in p.read_bytes()]
    assert len(arrived) == 1 and b"\r\n" in arrived[0]  # as git's checkout writes it
    alice.ok("update", made["id"], "--content", "Deploys happen on Tuesday")
    alice.ok("space", "push")

    second = bob("space", "pull")

    assert second.code == 0, second.err
    assert _status(bob) == ""
    assert any("Tuesday" in t for t in _texts(bob).values())


def test_a_folder_replaced_by_a_file_and_a_mode_change_arrive(tmp_path: Path) -> None:
    alice, bob = _pair(tmp_path)
    (alice.team / "tools").mkdir()
    (alice.team / "notes" / "dir").mkdir(parents=True)
    (alice.team / "tools" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (alice.team / "notes" / "dir" / "a.txt").write_text("a\n")
    _commit_all(alice, "files")
    alice.ok("space", "push")
    bob.ok("space", "pull")
    (alice.team / "tools" / "run.sh").chmod(0o755)
    (alice.team / "notes" / "dir" / "a.txt").unlink()
    (alice.team / "notes" / "dir").rmdir()
    (alice.team / "notes" / "dir").write_text("nowfile\n")
    _commit_all(alice, "shapes")
    alice.ok("space", "push")

    pulled = json.loads(bob.ok("space", "pull", "--json").out)

    assert pulled["savedDuringPull"] == []
    assert _status(bob) == ""
    assert (bob.team / "notes" / "dir").read_text() == "nowfile\n"
    assert (bob.team / "tools" / "run.sh").stat().st_mode & 0o111


def test_an_up_to_date_pull_removes_a_scratch_tree_left_behind(tmp_path: Path) -> None:
    _, bob = _pair(tmp_path)
    left = bob.team / ".git" / PULL_TREE / "facts"
    left.mkdir(parents=True)  # what a killed pull's git wrote there
    (left / "copy.md").write_text("x\n")

    assert "up-to-date" in bob.ok("space", "pull").out
    assert not (bob.team / ".git" / PULL_TREE).exists()
