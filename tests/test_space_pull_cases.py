"""Pull and push in the cases a team met sharing spaces: one memory moved to two folders, a conflict that
ends forgotten, a remote that is another project, an uncommitted malformed edit, a branch the remote lacks,
a stale conflict log, the merge driver run outside a repository. Real git, a real bare remote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import test_space_sync as sync_cases
from conftest import git, run_cli
from test_space_sync import TEXT, assert_clean, edit_body, only

from remnic.config import settings_for
from remnic.errors import LedgerError, RemoteMovedError, UsageError
from remnic.memfile.paths import folder_category
from remnic.repo import remote as _remote
from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair  # the two clones of one bare remote, as a fixture of this module too


def doctor_check(mem: Memory, name: str) -> dict:
    out = run_cli("doctor", "--memory-dir", str(mem.root), "--json")
    return next(c for c in json.loads(out.out)["checks"] if c["name"] == name)


def test_a_memory_moved_to_two_folders_becomes_one_memory(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    ana.update(memory_id, {"category": "principle"})
    ana.space_push()
    ben.update(memory_id, {"category": "rule", "tags": ["ops", "flags"]})
    report = ben.space_pull()
    (record,) = [r for r in ben.list() if r.id == memory_id]
    assert record.category == "rule" and record.path.startswith("rules/")  # the merged category decides
    assert record.tags == ["ops", "flags"]
    hows = {r["path"]: r["how"] for r in report.resolved}
    assert "the other side deleted it" not in " ".join(hows.values())
    assert f"kept one memory at {record.path}" in hows[record.path]
    assert not list((ben.root / "principles").glob("*.md")) and not list((ben.root / "decisions").glob("*.md"))
    assert_clean(ben)
    ben.forget(memory_id)
    assert [h.id for h in ben.recall("deploy Tuesdays window", top_k=3) if h.id == memory_id] == []
    ben.space_push()
    ana.space_pull()
    assert [r.path for r in ana.list() if r.id == memory_id] == [record.path]


def test_hand_moves_to_two_folders_with_a_body_conflict_give_one_path_and_a_copy(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    old = ana.get(memory_id).path
    name = old.rsplit("/", 1)[1]
    for mem, folder, day in ((ana, "principles", "Thursdays"), (ben, "rules", "Fridays")):
        (mem.root / folder).mkdir(exist_ok=True)
        git(mem.root, "mv", old, f"{folder}/{name}")
        edit_body(mem, memory_id, "Tuesdays", day)
        git(mem.root, "commit", "-qam", f"move to {folder}")
    ana.space_push()
    report = ben.space_pull()
    mine = ben.get(memory_id)
    # Sync sets each side's category from its folder; the merged category picks one of the two paths.
    assert mine.path in (f"rules/{name}", f"principles/{name}") and folder_category(mine.path) == mine.category
    assert "Fridays" in mine.content
    (conflict,) = report.conflicts
    copy = ben.get(conflict["copyId"])
    assert "Thursdays" in copy.content and mine.status == copy.status == "pending_review"
    assert [r.path for r in ben.list() if r.id == memory_id] == [mine.path]
    assert_clean(ben)


def test_doctor_flags_two_files_with_one_id(memory: Memory) -> None:
    record = memory.store("Feature flags guard risky changes", category="rule").record
    assert doctor_check(memory, "duplicate-ids")["status"] == "ok"
    (memory.root / "principles").mkdir(exist_ok=True)
    (memory.root / "principles" / "copy.md").write_bytes((memory.root / record.path).read_bytes())
    check = doctor_check(memory, "duplicate-ids")
    assert check["status"] == "warn" and "delete the others" in check["detail"]
    assert check["problems"] == [f"{record.id}: principles/copy.md, {record.path}"]


def test_a_conflict_merged_to_forgotten_is_not_sent_to_the_review_queue(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    edit_body(ana, memory_id, "Tuesdays", "Thursdays")
    ana.forget(memory_id, reason="moved to the runbook")
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Fridays")
    ben.sync()
    out = run_cli("space", "pull", "--memory-dir", str(ben.root))
    assert out.code == 0, out.err
    assert "review" not in out.out.replace("not in the review queue", "") and "status: forgotten" in out.out
    assert ben.review_queue() == []
    again = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json")
    assert again.code == 0 and json.loads(again.out)["conflicts"] == []  # reported once, not again


def test_a_conflict_waiting_for_review_still_points_at_the_queue(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    edit_body(ana, memory_id, "Tuesdays", "Thursdays")
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Fridays")
    out = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json")
    (conflict,) = json.loads(out.out)["conflicts"]
    assert conflict["inReview"] is True and conflict["status"] == "pending_review"


@pytest.fixture
def project_remote(tmp_path: Path) -> Path:
    """A bare repository of a project that is not a memory space (its own README and history)."""
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    (src / "README.md").write_text("# Payments service\n")
    git(src, "add", ".")
    git(src, "commit", "-qm", "init")
    bare = tmp_path / "other.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    return bare


def test_pull_refuses_a_remote_with_unrelated_history(tmp_path: Path, project_remote: Path) -> None:
    mem = Memory.init(tmp_path / "p", settings=settings_for(tmp_path / "p"))
    mem.store("P deploys to eu-west-1", category="fact")
    git(mem.root, "remote", "add", "origin", str(project_remote))
    with pytest.raises(RemoteMovedError, match="shares no history") as moved:
        mem.space_push()
    assert "--allow-unrelated" in str(moved.value)
    head = mem.head()
    with pytest.raises(UsageError, match="shares no history") as refused:
        mem.space_pull()
    assert str(project_remote) in str(refused.value) and "--allow-unrelated" in str(refused.value)
    assert mem.head() == head and not (mem.root / "README.md").read_text().startswith("# Payments")
    out = run_cli("space", "pull", "--memory-dir", str(mem.root), "--allow-unrelated", "--json")
    assert out.code == 0, out.err
    assert json.loads(out.out)["outcome"] == "merge"
    mem.close()


def test_an_uncommitted_malformed_edit_is_named_by_pull_and_push(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    path = ben.get(memory_id).path
    full = ben.root / path
    full.write_text(full.read_text().replace("tags:", "tags: [oncall\nx:", 1))
    (ben.root / "notes.txt").write_text("mine\n")
    git(ben.root, "add", "notes.txt")
    git(ben.root, "commit", "-qm", "notes")
    (ben.root / "notes.txt").write_text("mine, edited\n")
    pushed = ben.space_push()
    assert pushed["uncommitted"] == sorted(["notes.txt", path]) and path in pushed["warnings"][0]["message"]
    ana.update(memory_id, {"importanceScore": 0.9})
    (ana.root / "notes.txt").write_text("theirs\n")
    git(ana.root, "add", "notes.txt")
    git(ana.root, "commit", "-qm", "their notes")
    ana.space_pull()
    ana.space_push()
    with pytest.raises(LedgerError) as stopped:
        ben.space_pull()
    message = str(stopped.value)
    assert "Your local changes" not in message and "remnic doctor" in message
    assert f"{path}: an uncommitted edit that is malformed" in message and "notes.txt: uncommitted" in message
    assert any(p.path == path and p.line for p in stopped.value.problems)


def test_pull_on_a_branch_the_remote_lacks_names_its_branches(pair: Pair) -> None:
    _ana, ben = pair
    git(ben.root, "checkout", "-q", "-b", "bob-wip")
    report = ben.space_pull()
    assert report.outcome == "no-branch" and report.remote_branches == ["main"]
    out = run_cli("space", "pull", "--memory-dir", str(ben.root))
    assert "origin has no branch bob-wip" in out.out and "main" in out.out


def test_a_conflict_log_committed_by_sync_is_not_reported_again(pair: Pair) -> None:
    ana, ben = pair
    memory_id = only(ana)
    edit_body(ana, memory_id, "Tuesdays", "Thursdays")
    ana.space_push()
    edit_body(ben, memory_id, "Tuesdays", "Fridays")
    ben.sync()
    git(ben.root, "pull", "-q", "--no-rebase", "origin", "main")  # the driver writes the copy, uncommitted
    assert doctor_check(ben, "merge")["status"] == "warn"
    ben.sync()  # commits the copy, as docs/spaces.md says
    assert doctor_check(ben, "merge")["status"] == "ok"
    ana.store("Staging is refreshed nightly", category="fact")
    ana.space_push()
    assert ben.space_pull().conflicts == []
    assert not (ben.git_dir / _remote.CONFLICT_LOG).exists()


def test_merge_file_outside_a_repository(tmp_path: Path) -> None:
    front = "---\nid: mem_0123456789abcdef0123\ncategory: fact\nupdated: 2026-01-01T00:00:00Z\n---\n"
    for name, body in (("base", TEXT), ("ours", TEXT.replace("Tuesdays", "Fridays"))):
        (tmp_path / name).write_text(front + body)
    (tmp_path / "theirs").write_text(front + TEXT.replace("Tuesdays", "Thursdays"))
    (tmp_path / "facts").mkdir()
    out = run_cli("merge-file", "base", "ours", "theirs", "facts/deploy.md", "--json", cwd=tmp_path)
    assert out.code == 0, out.err
    assert json.loads(out.out) == {"path": "facts/deploy.md", "resolved": True}
    (copy,) = (tmp_path / "facts").glob("deploy--conflict-*.md")
    assert "Thursdays" in copy.read_text() and "Fridays" in (tmp_path / "ours").read_text()


def test_clone_reports_the_merge_driver_as_configured(tmp_path: Path, spaces_file: Path) -> None:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    mem = Memory.init(tmp_path / "a", settings=settings_for(tmp_path / "a"))
    git(mem.root, "remote", "add", "origin", str(bare))
    mem.space_push()
    mem.close()
    out = run_cli("space", "clone", str(bare), str(tmp_path / "b"), "--name", "b", "--json")
    assert out.code == 0, out.err
    driver = json.loads(out.out)["mergeDriver"]
    assert driver["configured"] is True and driver["driver"] and isinstance(driver["changed"], bool)
    again = Memory.open(settings=settings_for(tmp_path / "b"))
    assert again.install_merge_driver()["configured"] is True
    assert again.install_merge_driver()["changed"] is False
    again.close()
