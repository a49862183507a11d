"""Spaces over real git: bare remotes in temp dirs, clones editing the same memories, pull and push,
the merge driver (also under a plain `git pull`), a push refused because the remote moved, a kill -9
mid-pull and a conflict resolved by hand. Each ends with valid files, the index in step with HEAD
and every edit findable in git history."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.bench.spaces import simulate
from remnic.config import settings_for
from remnic.errors import RemoteMovedError
from remnic.repo import remote as _remote
from remnic.service.memory import Memory

TEXT = "We deploy on Tuesdays.\n\nThe window is two hours.\n\nRollback takes ten minutes.\n"


_PAIR_TEMPLATES: dict[Path, Path] = {}


def copy_template(template: Path, tmp: Path, configs: Iterable[str]) -> None:
    """Copy what ``template`` holds into ``tmp``; the absolute paths the ``configs`` files hold (git's remote
    urls, remnic's spaces file) are moved to the copy, and no other file may still name the template
    (but git's objects and reflogs: history, which nothing reads a path from)."""
    for entry in template.iterdir():
        if entry.is_dir():
            shutil.copytree(entry, tmp / entry.name, symlinks=True)
        else:
            shutil.copy2(entry, tmp / entry.name)
    old, new = f"{template}/", f"{tmp}/"
    for rel in configs:
        config = tmp / rel
        if config.exists():
            config.write_text(config.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    stale = [
        path
        for path in tmp.rglob("*")
        if path.is_file() and not {"objects", "logs"} & set(path.parts) and old.encode() in path.read_bytes()
    ]
    assert stale == [], f"files still naming the template: {stale}"


def build_pair_template(
    factory: pytest.TempPathFactory, cache: dict[Path, Path], name: str, seed: Callable[[Memory], object]
) -> Path:
    """Two clones, ana and ben, of one bare remote holding what ``seed`` stores in ana: built once a test
    process (kept in ``cache``) and copied for each test (:func:`copy_template`)."""
    base = factory.getbasetemp()
    if base not in cache:
        tmp = factory.mktemp(name)
        bare = tmp / "remote.git"
        subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(bare)], check=True)
        ana = Memory.init(tmp / "ana", settings=settings_for(tmp / "ana"))
        seed(ana)
        git(ana.root, "remote", "add", "origin", str(bare))
        ana.space_push()
        assert _remote.clone(str(bare), tmp / "ben", 60).ok
        ben = Memory.open(settings=settings_for(tmp / "ben"))
        ben.install_merge_driver()
        for mem, who in ((ana, "Ana"), (ben, "Ben")):
            git(mem.root, "config", "user.name", who)
            git(mem.root, "config", "user.email", f"{who.lower()}@example.com")
            mem.close()
        cache[base] = tmp
    return cache[base]


def _pair_template(factory: pytest.TempPathFactory) -> Path:
    """The two clones of :func:`pair`: one memory."""
    return build_pair_template(
        factory, _PAIR_TEMPLATES, "space-pair-template", lambda ana: ana.store(TEXT, category="decision", tags=["ops"])
    )


@pytest.fixture
def pair(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, Memory]]:
    """Two clones (ana, ben) of one bare remote holding one memory: a copy of a template (built once a test
    process) in this test's own folder."""
    copy_template(_pair_template(tmp_path_factory), tmp_path, ("ana/.git/config", "ben/.git/config"))
    ana = Memory.open(settings=settings_for(tmp_path / "ana"))
    ben = Memory.open(settings=settings_for(tmp_path / "ben"))
    yield ana, ben
    ana.close()
    ben.close()


def only(mem: Memory) -> str:
    (record,) = [r for r in mem.list() if r.category == "decision"]
    return record.id


def edit_body(mem: Memory, memory_id: str, old: str, new: str) -> None:
    path = mem.root / mem.get(memory_id).path
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def assert_clean(mem: Memory) -> None:
    """Valid files, no conflict markers, the index holding exactly the memory files at HEAD."""
    records, problems = mem.check_files()
    assert not problems, problems
    for path in mem.root.rglob("*.md"):
        if ".git" not in path.parts:
            assert "<<<<<<<" not in path.read_text(encoding="utf-8"), path
    mem.settle_index()
    live = {r.path: r.id for r in mem.list()}
    for path, memory_id in live.items():
        assert mem.index.path_of(memory_id) == path
    assert mem.index.manifest().commit == mem.head()
    assert mem.merge_state()["inProgress"] is None


def in_history(mem: Memory, text: str) -> bool:
    return bool(git(mem.root, "log", "--all", "-m", "--format=%H", "-S", text).strip())


def test_tags_on_one_side_and_body_on_the_other(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    ana.update(memory_id, {"tags": ["ops", "release"]})
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Wednesdays")
    report = ben.space_pull()
    assert report.outcome == "merge" and report.edits_commit and not report.conflicts
    assert report.changed == [ben.get(memory_id).path]
    merged = ben.get(memory_id)
    assert merged.tags == ["ops", "release"] and "Wednesdays" in merged.content
    ben.space_push()
    assert ana.space_pull().outcome == "fast-forward"
    assert ana.file_text(merged.path) == ben.file_text(merged.path)
    assert [h.id for h in ana.recall("Wednesdays deploy", top_k=1)] == [memory_id]
    for mem in (ana, ben):
        assert_clean(mem)
    assert in_history(ana, "Wednesdays") and in_history(ana, '"release"')


def test_both_bodies_edited_become_two_linked_memories_for_review(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    edit_body(ana, memory_id, "Tuesdays", "Thursdays")
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Fridays")
    report = ben.space_pull()
    (conflict,) = report.conflicts
    assert conflict["id"] == memory_id and conflict["copyPath"].startswith("decisions/")
    mine, theirs = ben.get(memory_id), ben.get(conflict["copyId"])
    assert "Fridays" in mine.content and "Thursdays" in theirs.content
    assert mine.status == theirs.status == "pending_review"
    assert mine.frontmatter["conflictsWith"] == [theirs.id] and theirs.frontmatter["conflictsWith"] == [mine.id]
    assert {r.id for r in ben.review_queue()} == {mine.id, theirs.id}
    ben.space_push()
    ana.space_pull()
    assert {r.id for r in ana.review_queue()} == {mine.id, theirs.id}
    for mem in (ana, ben):
        assert_clean(mem)
        assert in_history(mem, "Thursdays") and in_history(mem, "Fridays")
    assert ana.head() == ben.head()


def test_forget_on_one_side_and_edit_on_the_other(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    ana.forget(memory_id, reason="obsolete")
    ana.space_push()
    edit_body(ben, memory_id, "two hours", "one hour")
    ben.space_pull()
    merged = ben.get(memory_id)
    assert merged.status == "forgotten" and "one hour" in merged.content
    assert merged.frontmatter["forgottenReason"] == "obsolete"
    assert_clean(ben)
    assert in_history(ben, "one hour")


def test_rename_on_one_side_and_edit_on_the_other(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    old = ana.get(memory_id).path
    git(ana.root, "mv", old, "decisions/release-day.md")
    git(ana.root, "commit", "-qm", "rename the release day note")
    ana.space_push()
    edit_body(ben, memory_id, "ten minutes", "five minutes")
    report = ben.space_pull()
    assert report.outcome == "merge" and not report.conflicts
    merged = ben.get(memory_id)
    assert merged.path == "decisions/release-day.md" and "five minutes" in merged.content
    assert not (ben.root / old).exists()
    assert_clean(ben)
    assert in_history(ben, "five minutes")


def test_push_refused_when_the_remote_moved_then_pull_and_push(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    ana.store("Staging is refreshed every night", category="fact")
    ana.space_push()
    ben.store("The on-call rotation changes on Mondays", category="fact")
    with pytest.raises(RemoteMovedError, match="run `remnic space pull`, then push again"):
        ben.space_push()
    out = run_cli("space", "push", "--memory-dir", str(ben.root), "--json")
    assert out.code == 1 and '"remote_moved"' in out.err
    assert ben.space_pull().outcome == "merge"
    assert ben.space_push()["pushed"] is True
    assert ana.space_pull().outcome == "fast-forward"
    assert {r.content for r in ana.list()} == {r.content for r in ben.list()}
    assert_clean(ana)


def test_first_push_sets_the_upstream(tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    mem = Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m"))
    git(mem.root, "remote", "add", "origin", str(bare))
    assert _remote.upstream(mem.ledger) is None
    assert mem.space_push()["upstreamSet"] is True
    assert _remote.upstream(mem.ledger) == "origin/main"
    again = mem.space_push()
    assert again["upstreamSet"] is False and again["pushed"] is False
    assert mem.space_pull().outcome == "up-to-date"
    mem.close()


def pull_process(mem: Memory, crash_at: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REMNIC_CRASH_AT": crash_at, "REMNIC_NO_DAEMON": "1"}
    return subprocess.run(
        [sys.executable, "-m", "remnic", "space", "pull", "--memory-dir", str(mem.root), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_kill_9_while_git_is_stopped_in_a_merge(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    path = ana.get(memory_id).path
    git(ana.root, "rm", "-q", path)
    git(ana.root, "commit", "-qm", "remove the note by hand")
    ana.space_push()
    edit_body(ben, memory_id, "two hours", "three hours")
    crashed = pull_process(ben, "pull-merging")
    assert crashed.returncode == -9, crashed.stderr
    assert ben.merge_state()["inProgress"] == "a merge is in progress"
    assert ben.sync().mode == "paused"  # never commits over a merge
    check = next(c for c in ben.doctor() if c["name"] == "merge")
    assert check["status"] == "fail" and path in check["unmerged"]
    report = ben.space_pull()
    assert report.finished_previous == "finished"
    assert "three hours" in ben.get(memory_id).content  # the edit wins over the deletion
    assert_clean(ben)
    ben.space_push()
    ana.space_pull()
    assert_clean(ana)
    assert in_history(ana, "three hours")


def test_kill_9_after_the_merge_before_the_copies_are_committed(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    edit_body(ana, memory_id, "Tuesdays", "Thursdays")
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Fridays")
    crashed = pull_process(ben, "pull-merged")
    assert crashed.returncode == -9, crashed.stderr
    assert next(c for c in ben.doctor() if c["name"] == "merge")["status"] == "warn"
    report = ben.space_pull()
    assert len(report.conflicts) == 1 and report.outcome == "up-to-date"
    assert git(ben.root, "status", "--porcelain").strip() == ""
    assert_clean(ben)
    assert in_history(ben, "Thursdays") and in_history(ben, "Fridays")


def test_plain_git_pull_uses_the_merge_driver(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    ana.update(memory_id, {"tags": ["ops", "release"]})
    edit_body(ana, memory_id, "Tuesdays", "Thursdays")
    ana.sync()
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Fridays")
    ben.update(memory_id, {"tags": ["ops", "oncall"]})
    ben.sync()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"  # remnic is not on PATH: the driver names its Python itself
    subprocess.run(["git", "pull", "--no-rebase", "--no-edit"], cwd=ben.root, env=env, check=True, capture_output=True)
    mine = ben.files.read(ben.get(memory_id).path)
    assert "Fridays" in mine.content and mine.status == "pending_review"
    assert sorted(mine.tags) == ["oncall", "ops", "release"]
    copies = list((ben.root / "decisions").glob("*--conflict-*.md"))
    assert len(copies) == 1 and "Thursdays" in copies[0].read_text()
    report = ben.sync()  # the copy the driver wrote beside it becomes a committed memory
    assert report.commit and copies[0].name in " ".join(c.path for c in report.changes)
    assert_clean(ben)


def test_a_conflict_resolved_by_hand(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    memory_id = only(ana)
    edit_body(ana, memory_id, "Tuesdays", "Thursdays")
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Fridays")
    ben.sync()
    git(ben.root, "config", "--remove-section", "merge.remnic")  # as a repository cloned without remnic
    path = ben.root / ben.get(memory_id).path
    pulled = subprocess.run(["git", "pull", "--no-rebase", "--no-edit"], cwd=ben.root, capture_output=True, text=True)
    assert pulled.returncode != 0, pulled.stdout + pulled.stderr
    assert "<<<<<<<" in path.read_text()
    assert ben.sync().mode == "paused"
    assert next(c for c in ben.doctor() if c["name"] == "merge")["status"] == "fail"
    git(ben.root, "checkout", "--theirs", "--", str(path))  # a person picks a side, then rewrites the line
    path.write_text(path.read_text().replace("We deploy on Thursdays.", "We deploy on Thursdays or Fridays."))
    git(ben.root, "add", str(path))
    git(ben.root, "commit", "-qm", "resolve the release day by hand")
    report = ben.sync()
    assert report.mode != "paused"
    assert "Thursdays or Fridays" in ben.get(memory_id).content
    assert_clean(ben)
    ben.space_push()
    ana.space_pull()
    assert_clean(ana)
    for text in ("We deploy on Thursdays.", "We deploy on Fridays.", "Thursdays or Fridays"):
        assert in_history(ana, text)


def test_a_small_simulation_loses_nothing(tmp_path: Path) -> None:
    # Two clones, two rounds: every kind of change (store, hand edit, tag, forget), merges and a conflict kept
    # for review, and a second round made on top of the first round's merges.
    result = simulate(2, rounds=2, changes_per_round=2, seed=5, base=tmp_path)
    assert result.changes == 8 and result.pulls >= 4 and result.merges >= 2 and result.review_items >= 1
    assert result.lost == [] and result.marker_files == [] and result.invalid_files == []
    assert result.index_mismatches == 0 and result.heads == 1


def test_the_same_fact_stored_on_both_sides(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    first = ana.store("Ana prefers tabs over spaces", category="preference").record
    ana.space_push()
    second = ben.store("Ana prefers tabs over spaces", category="preference").record
    assert first.path == second.path and first.id != second.id
    report = ben.space_pull()
    assert report.conflicts == [] and [d["copyId"] for d in report.duplicates] == [first.id]
    assert ben.get(second.id).status == "active"
    kept = ben.get(first.id)
    assert kept.status == "superseded" and kept.frontmatter["supersededBy"] == second.id
    assert [h.id for h in ben.recall("does Ana prefer tabs", top_k=3)][:1] == [second.id]
    assert_clean(ben)


def test_kill_9_during_a_push_leaves_a_state_the_next_push_completes(pair: tuple[Memory, Memory]) -> None:
    ana, ben = pair
    ana.store("Pager duty hands over at noon", category="fact")
    env = {**os.environ, "REMNIC_CRASH_AT": "pushed", "REMNIC_NO_DAEMON": "1"}
    crashed = subprocess.run(
        [sys.executable, "-m", "remnic", "space", "push", "--memory-dir", str(ana.root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert crashed.returncode == -9, crashed.stderr
    again = ana.space_push()
    assert again["pushed"] is False and git(ana.root, "rev-parse", "origin/main").strip() == ana.head()
    assert ben.space_pull().outcome == "fast-forward"
    assert_clean(ben)
