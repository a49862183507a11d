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

import pytest
from conftest import git
from test_r34_spaces_branch import User, copy_users, empty_remote

from remnic.repo.pullmark import PULL_MARKER
from remnic.service.pull_guard import PULL_TREE
from remnic.service.spaces import clone_space, create_space, switch_space

PAIR = ("alice", "bob")


@pytest.fixture(scope="module")
def pair_template(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Path:
    """Alice's team space (with a seed memory) pushed to a bare remote and Bob's clone of it, built once a
    module; each test gets its own copy (:func:`pair`)."""
    tmp = tmp_path_factory.mktemp("pair-template")
    alice, bob = User(tmp, "alice", cache=model_cache), User(tmp, "bob", cache=model_cache)
    bare = empty_remote(tmp, alice)
    with alice.environ():
        create_space("team", alice.team, kind="team", remote=str(bare), activate=True)
    with alice.memory() as mem:
        mem.store("seed memory")
        mem.space_push()
    with bob.environ():
        clone_space(str(bare), bob.team, name="team")
        switch_space("team")
    return tmp


@pytest.fixture
def pair(pair_template: Path, tmp_path: Path) -> tuple[User, User]:
    alice, bob = copy_users(pair_template, tmp_path, PAIR)
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


def test_a_fast_forward_killed_after_head_moved_is_finished_not_reverted(pair: tuple[User, User]) -> None:
    alice, bob = pair
    with alice.memory() as mem:
        made = mem.store("The on-call rotation changes on Fridays").id
        mem.space_push()
    with bob.memory() as mem:
        mem.space_pull()
    with alice.memory() as mem:
        mem.update(made, {}, content="The on-call rotation changes on Mondays")
        mem.store("Alice: staging is in eu-west-1")
        mem.space_push()
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


@pytest.fixture(scope="module")
def adopt_template(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Path:
    """Bob's clone of an empty remote, then Alice's space on it with twelve memories pushed (the history
    Bob's first pull takes), built once a module."""
    tmp = tmp_path_factory.mktemp("adopt-template")
    alice, bob = User(tmp, "alice", cache=model_cache), User(tmp, "bob", cache=model_cache)
    bare = empty_remote(tmp, alice)
    with bob.environ():
        clone_space(str(bare), bob.team, name="team")
        switch_space("team")
    with alice.environ():
        create_space("team", alice.team, remote=str(bare), activate=True)
    with alice.memory() as mem:
        mem.import_records({"content": f"Fact {n}: service s{n} owns queue q{n}"} for n in range(12))
        mem.space_push()
    return tmp


def _kill_first_pull_at(template: Path, tmp: Path, point: str) -> tuple[User, User]:
    alice, bob = copy_users(template, tmp, PAIR)
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


def test_a_first_pull_killed_after_it_took_the_remotes_history_is_finished(
    adopt_template: Path, tmp_path: Path
) -> None:
    alice, bob = _kill_first_pull_at(adopt_template, tmp_path, "pull-adopt-moved")
    assert git(bob.team, "rev-parse", "HEAD") == git(alice.team, "rev-parse", "HEAD")
    _adopted_cleanly(alice, bob)


def test_a_first_pull_killed_before_it_moved_the_branch_adopts_again(adopt_template: Path, tmp_path: Path) -> None:
    alice, bob = _kill_first_pull_at(adopt_template, tmp_path, "pull-adopt-read")
    assert git(bob.team, "rev-parse", "HEAD") != git(alice.team, "rev-parse", "HEAD")
    _adopted_cleanly(alice, bob)


def _one_sided_edits(alice: User, memory_id: str) -> None:
    (alice.team / "notes.txt").write_text("line one\nline two\n")
    with alice.memory() as mem:
        mem.update(memory_id, {}, content="Deploys happen on Tuesday")
    _commit_all(alice, "two")
    with alice.memory() as mem:
        mem.space_push()


def test_a_fast_forward_with_eol_crlf_arrives_as_checkout_writes_it(pair: tuple[User, User]) -> None:
    alice, bob = pair
    with (alice.team / ".gitattributes").open("a") as out:
        out.write("* text eol=crlf\n")
    (alice.team / "notes.txt").write_text("line one\n")
    with alice.memory() as mem:
        made = mem.store("Deploys happen on Monday").id
    _commit_all(alice, "crlf")
    with alice.memory() as mem:
        mem.space_push()
    with bob.memory() as mem:
        mem.space_pull()
    for old in [bob.team / "notes.txt", *(bob.team / "facts").glob("*.md")]:
        old.unlink()
    git(bob.team, "checkout", "--", ".")
    _one_sided_edits(alice, made)

    pulled = json.loads(bob.ok("space", "pull", "--json").out)

    assert pulled["outcome"] == "fast-forward" and pulled["savedDuringPull"] == []
    assert _status(bob) == ""
    assert (bob.team / "notes.txt").read_bytes() == b"line one\r\nline two\r\n"
    assert not list((bob.team / "facts").glob("*conflict*"))
    assert any(b"Tuesday\r\n" in p.read_bytes() for p in (bob.team / "facts").glob("*.md"))


def test_core_autocrlf_leaves_the_clone_clean_for_the_next_pull(pair: tuple[User, User]) -> None:
    alice, bob = pair
    git(bob.team, "config", "core.autocrlf", "true")
    with alice.memory() as mem:
        made = mem.store("Deploys happen on Monday").id
        mem.space_push()
    with bob.memory() as mem:
        mem.space_pull()
    assert _status(bob) == ""
    arrived = [p.read_bytes() for p in (bob.team / "facts").glob("*.md") if b"Deploys" in p.read_bytes()]
    assert len(arrived) == 1 and b"\r\n" in arrived[0]  # as git's checkout writes it
    with alice.memory() as mem:
        mem.update(made, {}, content="Deploys happen on Tuesday")
        mem.space_push()

    second = bob("space", "pull")

    assert second.code == 0, second.err
    assert _status(bob) == ""
    assert any("Tuesday" in t for t in _texts(bob).values())


def test_a_folder_replaced_by_a_file_and_a_mode_change_arrive(pair: tuple[User, User]) -> None:
    alice, bob = pair
    (alice.team / "tools").mkdir()
    (alice.team / "notes" / "dir").mkdir(parents=True)
    (alice.team / "tools" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (alice.team / "notes" / "dir" / "a.txt").write_text("a\n")
    _commit_all(alice, "files")
    with alice.memory() as mem:
        mem.space_push()
    with bob.memory() as mem:
        mem.space_pull()
    (alice.team / "tools" / "run.sh").chmod(0o755)
    (alice.team / "notes" / "dir" / "a.txt").unlink()
    (alice.team / "notes" / "dir").rmdir()
    (alice.team / "notes" / "dir").write_text("nowfile\n")
    _commit_all(alice, "shapes")
    with alice.memory() as mem:
        mem.space_push()

    pulled = json.loads(bob.ok("space", "pull", "--json").out)

    assert pulled["savedDuringPull"] == []
    assert _status(bob) == ""
    assert (bob.team / "notes" / "dir").read_text() == "nowfile\n"
    assert (bob.team / "tools" / "run.sh").stat().st_mode & 0o111


def test_an_up_to_date_pull_removes_a_scratch_tree_left_behind(pair: tuple[User, User]) -> None:
    _, bob = pair
    left = bob.team / ".git" / PULL_TREE / "facts"
    left.mkdir(parents=True)  # what a killed pull's git wrote there
    (left / "copy.md").write_text("x\n")

    assert "up-to-date" in bob.ok("space", "pull").out
    assert not (bob.team / ".git" / PULL_TREE).exists()
