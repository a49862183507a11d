"""Spaces' advice and reports: a refusal with --remote repeats it, push's two-inits message reads as a
sentence, and a malformed conflict's copyId is the id its copy holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git

from remnic.config import settings_for
from remnic.errors import RemoteMovedError, UsageError
from remnic.service.memory import Memory


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(path)], check=True)
    return path


def space(tmp_path: Path, name: str, remote: Path, text: str) -> Memory:
    """A memory repository of its own `remnic init`, one memory stored, ``remote`` as origin."""
    # Two inits in one second make the same root commit (a shared history): dated apart, they are two.
    stamp = f"2020-01-01T00:00:{len(name):02d}Z"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GIT_AUTHOR_DATE", stamp)
        env.setenv("GIT_COMMITTER_DATE", stamp)
        mem = Memory.init(tmp_path / name, settings=settings_for(tmp_path / name))
    mem.store(text, category="fact")
    git(mem.root, "remote", "add", "origin", str(remote))
    return mem


def test_an_unrelated_refusal_with_remote_repeats_it_and_push_says_a_sentence(tmp_path: Path) -> None:
    origin, other = bare(tmp_path / "origin.git"), bare(tmp_path / "other.git")
    with (
        space(tmp_path, "ana", origin, "Ana's team deploys on Tuesdays") as ana,
        space(tmp_path, "cyril", origin, "Cyril's team deploys on Fridays") as cy,
        space(tmp_path, "elsewhere", other, "Another project's fact") as elsewhere,
    ):
        ana.space_push()
        elsewhere.space_push()
        git(cy.root, "remote", "add", "other", str(other))
        with pytest.raises(UsageError) as refused:
            cy.space_pull("other")
        assert "`remnic space pull --remote other --allow-unrelated`" in str(refused.value)
        with pytest.raises(UsageError) as plain:
            cy.space_pull()  # origin, the default: no --remote to repeat
        assert "`remnic space pull --allow-unrelated` joins the two histories" in str(plain.value)
        with pytest.raises(RemoteMovedError) as moved:
            cy.space_push()
        assert "refused: its branch main is a memory repository whose history shares no commit" in str(moved.value)


def test_a_malformed_conflicts_copy_id_is_the_id_its_copy_holds(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    with space(tmp_path, "bob", remote, "Malformed conflict demo") as bob:
        bob.space_push()
        (record,) = [r for r in bob.list() if r.content.startswith("Malformed")]
        raw = tmp_path / "raw"
        subprocess.run(["git", "clone", "-q", str(remote), str(raw)], check=True)
        path = raw / record.path
        text = path.read_text().replace("tags: []", "tags: [broken, ").replace("demo\n", "demo, raw edit\n")
        path.write_text(text)
        git(raw, "commit", "-qam", "raw edit")
        git(raw, "push", "-q", "origin", "HEAD:main")
        bob.update(record.id, {}, content="Malformed conflict demo, bob edit")
        report = bob.space_pull()
    (entry,) = report.malformed_conflicts
    copy = (tmp_path / "bob" / entry["copyPath"]).read_text()
    assert copy == text  # kept byte for byte
    assert entry["copyId"] == record.id and f"\nid: {record.id}\n" in copy
