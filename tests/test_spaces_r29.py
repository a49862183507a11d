"""Pull and push over a real bare remote, in the cases round 29 found: a rewrite moved to another folder
(git sees a delete and an add) against an edit, a pull finishing a merge a plain `git pull` left, the merge
driver's imports, what push leaves behind, and the error code of each way a pull or push fails."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import test_space_sync as sync_cases
from conftest import git, run_cli
from test_space_sync import TEXT, assert_clean, only

from remnic.errors import RepoBusyError
from remnic.repo import remote as _remote
from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair

REWRITE = "Completely rewritten decision: we adopt Bazel for all builds from Q3 onward"


def files_holding(mem: Memory, memory_id: str) -> list[str]:
    return sorted(
        str(p.relative_to(mem.root))
        for p in mem.root.rglob("*.md")
        if ".git" not in p.parts and f"id: {memory_id}" in p.read_text(encoding="utf-8")
    )


@pytest.mark.parametrize("mover", ["remote", "here"])
def test_a_rewrite_moved_to_another_folder_against_an_edit_stays_one_memory(pair: Pair, mover: str) -> None:
    ana, ben = pair
    memory_id = only(ana)
    old = ana.get(memory_id).path
    moving, editing = (ana, ben) if mover == "remote" else (ben, ana)
    moving.update(memory_id, {"category": "principle"}, content=REWRITE)
    editing.update(memory_id, {"tags": ["ops", "urgent"]})
    ana.space_push()  # ben pulls the other side, which moved it or edited it
    report = ben.space_pull()
    (path,) = files_holding(ben, memory_id)  # one file, not the moved one plus the edited old one
    assert path.startswith("principles/") and path != old
    record = ben.get(memory_id)
    assert record.path == path and record.category == "principle"
    assert record.content.strip() == REWRITE and record.tags == ["ops", "urgent"]
    hows = {r["path"]: r["how"] for r in report.resolved}
    assert "git saw a delete and an add" in hows[path] and f"kept at {path}" in hows[old]
    assert not any("deleted it" in how for how in hows.values())
    assert next(c for c in ben.doctor() if c["name"] == "duplicate-ids")["status"] == "ok"
    assert [h.id for h in ben.recall("Bazel builds", top_k=5)].count(memory_id) == 1
    assert_clean(ben)
    ben.space_push()
    ana.space_pull()
    assert files_holding(ana, memory_id) == [path]


def test_a_memory_deleted_by_hand_against_an_edit_still_keeps_the_edit(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    path = ana.get(memory_id).path
    ana.store("A different memory, added in the same commit range", category="principle")
    git(ana.root, "rm", "-q", path)
    git(ana.root, "commit", "-qm", "remove the note by hand")
    ana.space_push()
    ben.update(memory_id, {"tags": ["ops", "kept"]})
    report = ben.space_pull()
    assert files_holding(ben, memory_id) == [path] and ben.get(memory_id).tags == ["ops", "kept"]
    assert {"path": path, "how": "kept the edited version (the other side deleted it)"} in report.resolved


def diverge_notes(ana: Memory, ben: Memory) -> str:
    """A stored memory and a notes.txt edit on ana, pushed; another notes.txt edit on ben, then a plain
    `git pull` that stops in a conflict on notes.txt. Returns the stored memory's path."""
    (ana.root / "notes.txt").write_text("base\n")
    git(ana.root, "add", "notes.txt")
    git(ana.root, "commit", "-qm", "notes")
    ana.space_push()
    ben.space_pull()
    stored = ana.store("Kafka brokers live on kafka-prod-7", category="fact")
    (ana.root / "notes.txt").write_text("base\nfrom ana\n")
    git(ana.root, "commit", "-qam", "notes ana")
    ana.space_push()
    (ben.root / "notes.txt").write_text("base\nfrom ben\n")
    git(ben.root, "commit", "-qam", "notes ben")
    stopped = subprocess.run(["git", "pull", "-q", "--no-rebase"], cwd=ben.root, capture_output=True, text=True)
    assert stopped.returncode != 0 and _remote.merge_head(ben.ledger) is not None
    return ana.get(stored.id).path


def test_finishing_a_merge_a_plain_git_pull_left_reports_what_arrived(pair: Pair) -> None:
    ana, ben = pair
    arrived = diverge_notes(ana, ben)
    pre_merge = ben.head()
    report = ben.space_pull()
    assert report.finished_previous == "finished" and report.outcome == "merge"
    assert report.before == pre_merge == git(ben.root, "rev-parse", "HEAD^1").strip()
    assert report.after == ben.head() != pre_merge
    assert report.changed == [arrived] and report.indexed >= 1
    assert [r["path"] for r in report.resolved] == ["notes.txt"]
    assert ben.get(ben.list(category="fact")[0].id).path == arrived
    assert_clean(ben)


def test_a_fetch_failing_after_finishing_a_merge_says_the_merge_was_committed(pair: Pair, tmp_path: Path) -> None:
    ana, ben = pair
    diverge_notes(ana, ben)
    shutil.move(tmp_path / "remote.git", tmp_path / "moved.git")
    out = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json")
    assert out.code == 1, out.err
    error = json.loads(out.err)
    assert error["code"] == "remote_unreachable"
    assert "remote set-url origin" in error["error"] and "finished and committed as" in error["error"]
    assert [d["path"] for d in error["details"]] == ["notes.txt"]
    assert _remote.merge_head(ben.ledger) is None
    assert len(git(ben.root, "rev-parse", "HEAD^2").split()) == 1  # the merge commit was made


def test_push_names_a_changed_non_memory_file_and_untracked_files(pair: Pair) -> None:
    _ana, ben = pair
    (ben.root / "notes.txt").write_text("base\n")
    git(ben.root, "add", "notes.txt")
    git(ben.root, "commit", "-qm", "notes")
    (ben.root / "notes.txt").write_text("base\nchanged\n")
    (ben.root / "todo.txt").write_text("new\n")
    pushed = ben.space_push()
    assert pushed["uncommitted"] == ["notes.txt"] and pushed["untracked"] == ["todo.txt"]
    by_field = {w["field"]: w["message"] for w in pushed["warnings"]}
    assert "notes.txt (a changed file that is not a memory: commit it with git)" in by_field["uncommitted"]
    assert "malformed" not in by_field["uncommitted"]
    assert "todo.txt" in by_field["untracked"] and "git add" in by_field["untracked"]
    out = run_cli("space", "push", "--memory-dir", str(ben.root))
    assert out.code == 0 and "untracked" in out.err and "not a memory" in out.err


def test_push_during_a_merge_is_repo_busy_as_store_is(pair: Pair) -> None:
    ana, ben = pair
    diverge_notes(ana, ben)
    with pytest.raises(RepoBusyError, match="a merge is in progress"):
        ben.space_push()
    pushed = run_cli("space", "push", "--memory-dir", str(ben.root), "--json")
    stored = run_cli("store", "x y z", "--memory-dir", str(ben.root), "--json")
    assert (
        (pushed.code, json.loads(pushed.err)["code"])
        == (1, "repo_busy")
        == (
            stored.code,
            json.loads(stored.err)["code"],
        )
    )


def test_an_unreachable_remote_and_a_hook_rejection_have_codes_of_their_own(pair: Pair, tmp_path: Path) -> None:
    _ana, ben = pair
    bare = tmp_path / "remote.git"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are frozen this week' >&2\nexit 1\n")
    hook.chmod(0o755)
    ben.store("The freeze ends on Friday", category="fact")
    refused = run_cli("space", "push", "--memory-dir", str(ben.root), "--json")
    assert refused.code == 1
    error = json.loads(refused.err)
    assert error["code"] == "push_rejected" and "pushes are frozen this week" in error["error"]
    shutil.move(bare, tmp_path / "elsewhere.git")
    for command in ("push", "pull"):
        out = run_cli("space", command, "--memory-dir", str(ben.root), "--json")
        assert out.code == 1, out.err
        error = json.loads(out.err)
        assert error["code"] == "remote_unreachable", error
        assert str(bare) in error["error"] and f"git -C {ben.root} remote set-url origin NEW-URL" in error["error"]


def test_a_pull_refused_over_uncommitted_changes_has_its_code(pair: Pair) -> None:
    ana, ben = pair
    for mem, text in ((ana, "theirs\n"), (ben, "mine\n")):
        (mem.root / "notes.txt").write_text(text)
    git(ana.root, "add", "notes.txt")
    git(ana.root, "commit", "-qm", "their notes")
    ana.space_push()
    out = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json")
    assert out.code == 1
    error = json.loads(out.err)
    assert error["code"] == "uncommitted_changes" and "notes.txt: untracked" in error["error"]
    assert (ben.root / "notes.txt").read_text() == "mine\n"


HEAVY = ("remnic.service.memory", "remnic.sync.engine", "remnic.observe.cues", "remnic.index", "git")


def test_the_merge_driver_module_imports_only_the_merge_code(tmp_path: Path) -> None:
    """The module git's driver runs, imported on its own (the service package's own ``__init__`` left out,
    since it is the facade's): no Memory, sync, observe, index or GitPython."""
    probe = (
        "import sys, types, remnic\n"
        "pkg = types.ModuleType('remnic.service'); pkg.__path__ = [remnic.__path__[0] + '/service']\n"
        "sys.modules['remnic.service'] = pkg\n"
        "import remnic.service.merge_driver\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    loaded = set(ran.stdout.split())
    assert "remnic.memfile.merge" in loaded
    assert not [m for m in loaded if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY))]
    assert "remnic.fsio" not in loaded  # only a conflict copy writes through it


def test_the_merge_driver_command_imports_only_the_merge_code(tmp_path: Path) -> None:
    front = "---\nid: mem_0123456789abcdef0123\ncategory: fact\nupdated: 2026-01-01T00:00:00Z\n---\n"
    for name, body in (("base", TEXT), ("ours", TEXT), ("theirs", TEXT.replace("Tuesdays", "Fridays"))):
        (tmp_path / name).write_text(front + body)
    probe = (
        "import sys\nfrom remnic.cli import main\n"
        "code = main(['merge-file', 'base', 'ours', 'theirs', 'decisions/deploy.md'])\n"
        "print(code); print('\\n'.join(sorted(sys.modules)))\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    code, *loaded = ran.stdout.split()
    assert code == "0" and "Fridays" in (tmp_path / "ours").read_text()
    assert not [m for m in loaded if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY))]
    assert "remnic.fsio" not in loaded  # a clean merge keeps no copy


def test_a_read_only_clone_of_the_same_remote_does_not_repeat_an_id_in_recall(
    tmp_path: Path, spaces_file: Path
) -> None:
    assert run_cli("space", "create", "team", "--path", str(tmp_path / "team")).code == 0
    stored = run_cli("store", "Bulk item nine ships on Thursday", "--space", "team", "--json")
    assert stored.code == 0, stored.err
    git(tmp_path, "clone", "-q", str(tmp_path / "team"), str(tmp_path / "team-ro"))
    registered = run_cli("space", "create", "team-ro", "--path", str(tmp_path / "team-ro"), "--read-only")
    assert registered.code == 0, registered.err
    found = run_cli("query", "bulk item nine", "--space", "team", "--json")
    hits = json.loads(found.out)["hits"]
    assert [h["id"] for h in hits].count(stored.json()["id"]) == 1, hits
    assert hits[0]["space"] in (None, "team")  # the active space's copy


def test_a_memory_rewritten_and_moved_on_both_sides_stays_one_memory_and_a_linked_copy(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    old = ana.get(memory_id).path
    rewrites = {"rule": "The CI runners moved to the new cluster in March; arm64 builds, x86 tests only"}
    rewrites["principle"] = "Parking permits are renewed in January at the front desk with your badge"
    ana.update(memory_id, {"category": "rule"}, content=rewrites["rule"])
    ben.update(memory_id, {"category": "principle"}, content=rewrites["principle"])
    ana.space_push()
    report = ben.space_pull()  # git merges this cleanly: a delete and an add on each side, no path in common
    assert report.outcome == "merge"
    (path,) = files_holding(ben, memory_id)
    (conflict,) = report.conflicts
    assert conflict["path"] == path and conflict["copyId"] != memory_id
    assert files_holding(ben, conflict["copyId"]) == [conflict["copyPath"]]
    kept = {ben.get(memory_id).content.strip(), ben.get(conflict["copyId"]).content.strip()}
    assert kept == set(rewrites.values())  # each text once, neither lost
    hows = {r["path"]: r["how"] for r in report.resolved}
    assert "a delete and an add on each side" in hows[path] and f"kept one memory at {path}" in hows[path]
    assert old in hows and len(hows) == 3
    assert next(c for c in ben.doctor() if c["name"] == "duplicate-ids")["status"] == "ok"
    assert [h.id for h in ben.recall("CI runners parking permits", top_k=10)].count(memory_id) == 1
    assert len(git(ben.root, "rev-list", "--parents", "-n1", "HEAD~1").split()) == 3  # the merge, then the copy
    assert_clean(ben)
    ben.space_push()
    ana.space_pull()
    assert files_holding(ana, memory_id) == [path]


@pytest.mark.parametrize("renamer", ["remote", "here"])
def test_a_move_against_a_rewrite_and_move_names_each_sides_folder(pair: Pair, renamer: str) -> None:
    ana, ben = pair
    memory_id = only(ana)
    old = ana.get(memory_id).path
    renaming, rewriting = (ana, ben) if renamer == "remote" else (ben, ana)
    renaming.update(memory_id, {"category": "rule", "tags": ["ops", "release"]})  # a rename git pairs
    rewriting.update(memory_id, {"category": "principle"}, content=REWRITE)  # a delete and an add
    renamed, rewritten = renaming.get(memory_id).path, rewriting.get(memory_id).path
    ana.space_push()
    report = ben.space_pull()
    (path,) = files_holding(ben, memory_id)
    hows = {r["path"]: r["how"] for r in report.resolved}
    mover, editor = ("this side", "the other side") if renamer == "remote" else ("the other side", "this side")
    assert f"moved from {old} to {rewritten} on {mover} (git saw a delete and an add)" in hows[path]
    assert f"moved from {old} to {renamed} and edited on {editor}" in hows[path]
    other = renamed if path == rewritten else rewritten
    assert hows[other] == f"the same memory, moved on both sides: kept at {path}"
    assert ben.get(memory_id).tags == ["ops", "release"] and ben.get(memory_id).content.strip() == REWRITE
