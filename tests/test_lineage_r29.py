"""A memory's history by id where ``git log --follow`` loses the thread: a move git took for a delete
and an add, a merge (not listed by git log), a hand swap, a revival git took for a copy, an id typo
fixed, a hand id change, a move on both clones. Real git repositories and clones."""

from __future__ import annotations

import time

from conftest import git, run_cli
from test_space_sync import only, pair  # noqa: F401  (pair: the two clones, as a fixture here)

from remnic.service.memory import Memory

OLD = "Release train leaves every second Wednesday at noon from platform nine, ask Dana for the deploy key"
NEW = "The CI runners are on the new cluster since March; use the arm64 pool for builds and x86 for tests"


def _ops(mem: Memory, ref: str) -> list[tuple[str, str]]:
    return [(v.operation, v.path) for v in mem.versions(ref)]


def test_a_rewrite_and_recategorise_keeps_the_history_before_it(memory: Memory) -> None:
    first = memory.store(OLD, category="fact")
    mid = first.record.id
    moved = memory.update(mid, {"category": "rule"}, content=NEW)
    new_path = moved.records[0].path
    assert new_path.startswith("rules/")
    assert "D\t" in git(memory.root, "show", "--name-status", "--format=", "HEAD")  # git saw no rename
    assert _ops(memory, mid) == [("store", first.record.path), ("update", new_path)]
    assert [v.operation for v in memory.versions(new_path)] == ["store", "update"]
    memory.revert(mid, "v1")
    assert "platform nine" in (memory.root / new_path).read_text(encoding="utf-8")
    assert not (memory.root / first.record.path).exists()


def test_after_a_merge_latest_is_what_head_holds_and_revert_latest_never_unforgets(pair) -> None:  # noqa: F811
    ana, ben = pair
    mid = only(ana)
    ben.forget(mid)
    time.sleep(1.1)  # the other side's commit is the newer one by date
    ana.update(mid, {"tags": ["ops", "food"]})
    ana.space_push()
    ben.space_pull()
    assert ben.get(mid).status == "forgotten"
    events = ben.timeline(mid)
    assert events[-1]["status"] == "forgotten"
    assert events[-1]["sha"] == git(ben.root, "rev-parse", "HEAD").strip()
    assert "status: active" in ben.version_diff(mid)  # the last step is the merge, from the active side
    ben.revert(mid, "latest")
    assert ben.get(mid).status == "forgotten" and "food" in ben.get(mid).tags


def test_a_hand_swap_of_two_files_keeps_each_memorys_earlier_versions(memory: Memory) -> None:
    a = memory.store("Alpha memory about swap tests", category="fact").record
    b = memory.store("Beta memory about swap tests", category="fact").record
    memory.update(a.id, {}, content="Alpha memory about swap tests v2")
    pa, pb = memory.root / a.path, memory.root / b.path
    ta, tb = pa.read_text(encoding="utf-8"), pb.read_text(encoding="utf-8")
    pa.write_text(tb, encoding="utf-8")
    pb.write_text(ta, encoding="utf-8")
    assert run_cli("sync", "run", "--memory-dir", str(memory.root)).code == 0
    assert _ops(memory, a.id) == [("store", a.path), ("update", a.path), ("sync", b.path)]
    assert _ops(memory, b.id) == [("store", b.path), ("sync", a.path)]
    assert "Alpha memory about swap tests\n" in memory.version_text(a.id, "v1")[1]


def test_a_revival_git_takes_for_a_copy_keeps_the_history_before_the_deletion(memory: Memory) -> None:
    x = memory.store("Backups run nightly at two", category="fact").record
    memory.update(x.id, {}, content="Backups run nightly at two, checked weekly")
    (memory.root / x.path).unlink()
    assert run_cli("sync", "run", "--memory-dir", str(memory.root)).code == 0
    memory.store("Backups run nightly at two, checked weekly", category="fact")
    memory.revert(x.id, "v2")
    assert "C0" in git(memory.root, "log", "-1", "--follow", "-M", "--name-status", "--format=", "--", x.path)
    assert [v.operation for v in memory.versions(x.id)] == ["store", "update", "sync", "revert"]
    memory.revert(x.id, "v1")
    assert "checked weekly" not in (memory.root / x.path).read_text(encoding="utf-8")


def test_an_id_typo_fixed_keeps_the_versions_before_it(memory: Memory) -> None:
    t = memory.store("Typo id memory", category="fact").record
    updated = memory.update(t.id, {}, content="Typo id memory v2").commit
    f = memory.root / t.path
    for new_id, msg in ((f"{t.id}x", "oops: typo in id"), (t.id, "fix the typo")):
        lines = [f"id: {new_id}" if x.startswith("id:") else x for x in f.read_text(encoding="utf-8").split("\n")]
        f.write_text("\n".join(lines), encoding="utf-8")
        git(memory.root, "commit", "-qam", msg)
    assert [v.operation for v in memory.versions(t.id)] == ["store", "update", "git-commit"]
    assert [v.operation for v in memory.versions(t.path)] == ["store", "update", "git-commit"]
    assert updated is not None
    label, text = memory.version_text(t.id, updated[:8])
    assert "Typo id memory v2" in text and label.endswith(f"@v2 ({updated[:8]})")


def test_a_committed_hand_id_change_is_not_uncommitted_and_revert_says_why(memory: Memory) -> None:
    c = memory.store("Gamma memory id edit", category="fact").record
    f = memory.root / c.path
    f.write_text(f.read_text(encoding="utf-8").replace(f"id: {c.id}", "id: mem_handedited000001"), encoding="utf-8")
    assert run_cli("sync", "run", "--memory-dir", str(memory.root)).code == 0
    assert git(memory.root, "status", "--porcelain") == ""
    assert not memory.memory_history(c.id).uncommitted
    assert [e["operation"] for e in memory.timeline(c.id, working=True)] == ["store"]
    refused = run_cli("versions", "revert", c.id, "v1", "--memory-dir", str(memory.root))
    assert refused.code == 2 and "mem_handedited000001" in refused.err and "uncommitted" not in refused.err


def test_a_move_on_both_clones_shows_the_other_clones_move_as_a_version(pair) -> None:  # noqa: F811
    ana, ben = pair
    mid = only(ana)
    ana.update(mid, {"category": "principle"})
    time.sleep(1.1)
    ben.update(mid, {"category": "rule"})
    ana.space_push()
    ben.space_pull()
    events = ben.timeline(mid)
    assert "deleted" not in [e["status"] for e in events]
    moved = next(e for e in events if e["path"].startswith("principles/"))
    assert moved["change"] == "R" and moved["previousPath"].startswith("decisions/")
    assert "category: principle" in ben.version_text(mid, moved["label"])[1]
