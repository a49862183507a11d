"""Teammates starting from one empty remote share one branch: `space clone` of an empty remote is on
`main`, as `space create` is; a clone that stored nothing yet takes the remote's history on its first pull
(no --allow-unrelated); one that did is told exactly what joins the two; the no-branch hint never advises
pushing a second branch. Real bare remotes, each user with their own HOME and git identity (git's default
branch set to master, where the split showed); the commands run in-process under the user's environment
(the same code as the `remnic` process, without a process and a model load each)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import Result, git, run_cli
from test_space_sync import copy_template

from remnic.config import settings_for
from remnic.service.memory import Memory
from remnic.service.spaces import clone_space

# What the autouse isolated_home fixture clears, cleared too where a module-scoped fixture builds users.
LEAKY_ENV = ("REMNIC_MEMORY_DIR", "REMNIC_CONFIG_PATH", "REMNIC_SPACES_PATH", "XDG_CONFIG_HOME")


class User:
    """A person with their own HOME (git identity, remnic's spaces file); ``fresh=False`` names one whose
    HOME a template copy already made. The model cache is the test run's (``cache``, else the
    ``XDG_CACHE_HOME`` the isolated_home fixture set): a cache per user would rewrite the model in each
    user's first process and copy it with every template."""

    def __init__(self, tmp: Path, name: str, *, fresh: bool = True, cache: Path | None = None) -> None:
        self.home = tmp / name
        self.env = {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(cache or os.environ.get("XDG_CACHE_HOME") or self.home / ".cache"),
            "REMNIC_NO_DAEMON": "1",
        }
        self.team = self.home / "team"
        if not fresh:
            return
        self.home.mkdir()
        for key, value in (
            ("user.name", name),
            ("user.email", f"{name}@example.com"),
            ("init.defaultBranch", "master"),
        ):
            subprocess.run(["git", "config", "--global", key, value], env={**self.env, "PATH": _path()}, check=True)

    def __call__(self, *args: str) -> Result:
        """``remnic ARGS`` as this user, in their HOME (in-process: the tests are about what the commands
        do and say, not the process boundary; crash tests start their own processes)."""
        with self.environ():
            return run_cli(*args, cwd=self.home)

    def ok(self, *args: str) -> Result:
        out = self(*args)
        assert out.code == 0, (args, out.out, out.err)
        return out

    @contextmanager
    def environ(self) -> Iterator[None]:
        """This process under the user's HOME (their git identity, their spaces file): the service called
        in-process for setup steps that are not what a test is about, without a CLI subprocess each."""
        with pytest.MonkeyPatch.context() as env:
            for var in LEAKY_ENV:
                env.delenv(var, raising=False)
            for key, value in self.env.items():
                env.setenv(key, value)
            yield

    @contextmanager
    def memory(self) -> Iterator[Memory]:
        """The API on this user's clone, in-process (:meth:`environ`)."""
        with self.environ():
            mem = Memory.open(settings=settings_for(self.team))
            try:
                yield mem
            finally:
                mem.close()


def _path() -> str:
    return os.environ["PATH"]


def empty_remote(tmp: Path, user: User) -> Path:
    bare = tmp / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], env={**user.env, "PATH": _path()}, check=True)
    return bare


def copy_users(template: Path, tmp: Path, names: tuple[str, ...]) -> list[User]:
    """Copy users' HOMEs and the bare remote a module built once into ``tmp`` (their clones' remote urls and
    spaces files moved to the copy)."""
    configs = [f"{name}/{rel}" for name in names for rel in ("team/.git/config", ".config/remnic/spaces.json")]
    copy_template(template, tmp, configs)
    return [User(tmp, name, fresh=False) for name in names]


def branches(bare: Path) -> list[str]:
    return git(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def memories(user: User) -> set[str]:
    """What `remnic list` shows (run in-process: an inspection, not what the tests are about)."""
    out = run_cli("list", "--memory-dir", str(user.team), "--json")
    assert out.code == 0, out.err
    return {m["content"].strip() for m in json.loads(out.out)["memories"]}


def test_a_clone_of_an_empty_remote_is_on_main_and_joins_what_create_pushed(tmp_path: Path) -> None:
    alice, bob = User(tmp_path, "alice"), User(tmp_path, "bob")
    bare = empty_remote(tmp_path, alice)
    bob.ok("space", "clone", str(bare), str(bob.team), "--name", "team")
    assert git(bob.team, "symbolic-ref", "--short", "HEAD").strip() == "main"
    alice.ok("space", "create", "team", "--path", str(alice.team), "--remote", str(bare), "--switch")
    with alice.memory() as mem:
        mem.store("Alice: the API gateway times out after 30s")
        mem.space_push()

    pulled = json.loads(bob.ok("space", "pull", "--memory-dir", str(bob.team), "--json").out)

    assert pulled["outcome"] == "fast-forward" and pulled["adopted"] and pulled["tracking"] == "origin/main"
    assert memories(bob) == {"Alice: the API gateway times out after 30s"}
    with bob.memory() as mem:
        mem.store("Bob: the API gateway is nginx")
    bob.ok("space", "push", "--memory-dir", str(bob.team))
    alice.ok("space", "pull")
    assert (
        memories(alice)
        == memories(bob)
        == {
            "Alice: the API gateway times out after 30s",
            "Bob: the API gateway is nginx",
        }
    )
    assert branches(bare) == ["main"]
    text = bob.ok("space", "pull", "--memory-dir", str(bob.team)).out
    assert "pulled origin/main: up-to-date" in text


def test_two_clones_of_an_empty_remote_that_both_stored_are_told_how_to_join(tmp_path: Path) -> None:
    alice, bob = User(tmp_path, "alice"), User(tmp_path, "bob")
    bare = empty_remote(tmp_path, alice)
    for user in (alice, bob):
        with user.environ():
            clone_space(str(bare), user.team, name="team")
        with user.memory() as mem:
            mem.store(f"{user.home.name}: first memory")
    with alice.memory() as mem:
        mem.space_push()

    pushed = bob("space", "push", "--memory-dir", str(bob.team))
    pulled = bob("space", "pull", "--memory-dir", str(bob.team))

    assert pushed.code == 1 and pulled.code == 2
    for said in (pushed.err, pulled.err):
        assert "own `remnic init` commit" in said and "remnic space pull --allow-unrelated" in said
        assert "keeps every memory of both" in said
    bob.ok("space", "pull", "--memory-dir", str(bob.team), "--allow-unrelated")
    bob.ok("space", "push", "--memory-dir", str(bob.team))
    alice.ok("space", "pull", "--memory-dir", str(alice.team))
    assert memories(alice) == memories(bob) == {"alice: first memory", "bob: first memory"}
    assert branches(bare) == ["main"]


def test_the_no_branch_hint_advises_taking_the_remotes_branch_not_pushing_a_second(tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(bare)], check=True)
    ana = Memory.init(tmp_path / "ana", settings=settings_for(tmp_path / "ana"))
    git(ana.root, "remote", "add", "origin", str(bare))
    ana.store("Staging is refreshed every night", category="fact")
    ana.space_push()
    git(ana.root, "branch", "-m", "main", "master")
    git(ana.root, "config", "--unset", "branch.master.remote")
    git(ana.root, "config", "--unset", "branch.master.merge")
    ana.close()

    out = run_cli("space", "pull", "--memory-dir", str(ana.root))

    assert out.code == 0, out.err
    assert "`remnic space push` creates it there" not in out.out
    assert "(it has: main)" in out.out and "branch -m master main" in out.out
    assert "Pushing would start a second branch" in out.out
