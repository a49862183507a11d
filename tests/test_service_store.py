"""The write path and git ledger through the Python API, on real git repositories."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from conftest import git, run_cli, snapshot_tree

from remnic import Memory, NotFoundError, ValidationError
from remnic.config import settings_for
from remnic.errors import MemoryFormatError
from remnic.memfile.model import original_hash, parse_file


def trailers(root: Path, rev: str = "HEAD") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in git(root, "log", "-1", "--format=%(trailers:only,unfold)", rev).splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def test_init_lays_down_template_and_commits(memory: Memory) -> None:
    root = memory.root
    for rel in (
        "README.md",
        ".gitignore",
        "remnic.config.json",
        ".remnic-memory",
        "facts/.gitkeep",
        "procedures/.gitkeep",
    ):
        assert (root / rel).is_file(), rel
    assert "\n.remnic\n" in (root / ".gitignore").read_text()  # a file in its place is ignored too
    assert git(root, "status", "--porcelain") == ""
    assert trailers(root)["Remnic-Operation"] == ["init"]
    # Init again is harmless: nothing overwritten, no new commit.
    head = memory.ledger.head()
    (root / "README.md").write_text("my own readme\n")
    git(root, "commit", "-qam", "edit readme")
    Memory.init(root, settings=memory.settings)
    assert (root / "README.md").read_text() == "my own readme\n"
    assert memory.ledger.head() != head  # only the user's commit moved it


def test_a_new_repository_is_healthy_at_once_and_its_first_write_updates_the_index(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "m")
    try:
        health = memory.index_health()
        assert health["state"] == "ok" and memory.index.manifest().count == 0
        built = memory.index.manifest().built_at
        memory.store("The staging DB port is 5432.", category="fact")
        memory.settle_index()
        manifest = memory.index.manifest()
        assert manifest.count == 1 and manifest.built_at == built  # updated in place, not rebuilt
    finally:
        memory.close()
    # A model setting that cannot load does not fail init: the index is left to the first recall.
    broken = settings_for(tmp_path / "b", embed={"model_path": str(tmp_path / "none.onnx")})
    with Memory.init(tmp_path / "b", settings=broken) as other:
        assert not other.has_index() and (tmp_path / "b" / ".remnic-memory").is_file()
    # Init of a folder that already holds memories leaves the index to the first recall (it may be big).
    (tmp_path / "n" / "facts").mkdir(parents=True)
    (tmp_path / "n" / "facts" / "port.md").write_text("---\ncategory: fact\n---\nThe port is 5433.\n")
    with Memory.init(tmp_path / "n") as other:
        assert not other.has_index()


def test_store_writes_file_and_one_commit_with_trailers(memory: Memory) -> None:
    before = int(git(memory.root, "rev-list", "--count", "HEAD"))
    rec = memory.store(
        "Cut releases every Tuesday",
        category="decision",
        tags=["ops", "release"],
        importance=0.85,
        confidence=0.97,
        source="cli",
    ).record
    assert rec.path == "decisions/cut-releases-every-tuesday.md"
    on_disk = parse_file((memory.root / rec.path).read_text(), rec.path)
    assert on_disk.id == rec.id and on_disk.content == "Cut releases every Tuesday"
    fm = on_disk.frontmatter
    assert fm["confidenceTier"] == "explicit" and fm["importanceLevel"] == "high"
    assert fm["tags"] == ["ops", "release"] and fm["status"] == "active"
    assert fm["contentHash"] == original_hash("Cut releases every Tuesday")  # the original Remnic's spelling
    assert int(git(memory.root, "rev-list", "--count", "HEAD")) == before + 1
    t = trailers(memory.root)
    assert t == {
        "Remnic-Operation": ["store"],
        "Remnic-Memory-Id": [rec.id],
        "Remnic-Namespace": ["default"],
        "Remnic-Source": ["cli"],
    }
    assert git(memory.root, "status", "--porcelain") == ""
    assert memory.get(rec.id).content == "Cut releases every Tuesday"


def test_store_in_namespace_and_slug_collisions(memory: Memory) -> None:
    a = memory.store("Ana prefers tabs", category="preference", namespace="team-a").record
    b = memory.store("Ana prefers tabs!", category="preference", namespace="team-a").record
    assert a.path == "namespaces/team-a/preferences/ana-prefers-tabs.md"
    assert b.path == "namespaces/team-a/preferences/ana-prefers-tabs-2.md"
    assert a.namespace == "team-a"
    assert trailers(memory.root)["Remnic-Namespace"] == ["team-a"]
    assert {r.id for r in memory.list(namespace="team-a")} == {a.id, b.id}


def test_hand_edit_committed_with_plain_git_shows_in_versions_and_diff(memory: Memory) -> None:
    rec = memory.store("The staging database is db-stage-1", category="fact").record
    path = memory.root / rec.path
    path.write_text(path.read_text().replace("db-stage-1", "db-stage-2"))
    git(memory.root, "commit", "-qam", "hand edit: staging db moved")
    versions = memory.versions(rec.id)
    assert [v.label for v in versions] == ["v1", "v2"]
    assert versions[0].operation == "store" and versions[1].operation == "git-commit"
    assert versions[1].subject == "hand edit: staging db moved"
    diff = memory.version_diff(rec.id)
    assert f"--- {rec.path}@v1" in diff and f"+++ {rec.path}@v2" in diff
    assert "-The staging database is db-stage-1" in diff
    assert "+The staging database is db-stage-2" in diff


def test_uncommitted_edit_diffs_against_working_tree(memory: Memory) -> None:
    rec = memory.store("Coffee machine is on floor 3", category="fact").record
    path = memory.root / rec.path
    path.write_text(path.read_text().replace("floor 3", "floor 4"))
    diff = memory.version_diff(rec.path)
    assert "@working" in diff and "+Coffee machine is on floor 4" in diff


def test_a_tag_update_over_an_uncommitted_edit_commits_and_names_the_committed_text(memory: Memory) -> None:
    rec = memory.store("Coffee machine is on floor 3", category="fact").record
    path = memory.root / rec.path
    path.write_text(path.read_text().replace("floor 3", "floor 4"))
    memory.update(rec.id, {"tags": ["office"]})
    assert git(memory.root, "log", "-1", "--format=%s").strip() == "remnic update: Coffee machine is on floor 3"
    assert "floor 3" in git(memory.root, "show", f"HEAD:{rec.path}")
    assert "floor 4" in path.read_text() and 'tags: ["office"]' in path.read_text()  # the edit stays, uncommitted


def test_an_update_that_changes_nothing_writes_nothing_and_makes_no_commit(memory: Memory) -> None:
    rec = memory.store("Coffee machine is on floor 3", category="fact", importance=0.5).record
    d, files, head = str(memory.root), snapshot_tree(memory.root), git(memory.root, "rev-parse", "HEAD")
    for flags in (["--importance", "0.5"], ["--tags", " , ,"], ["--content", "Coffee machine is on floor 3"]):
        result = run_cli("update", rec.id, *flags, "--memory-dir", d, "--json")
        assert result.code == 0 and result.json()["changed"] is False and result.json()["commit"] is None, flags
    assert "nothing changed" in run_cli("update", rec.id, "--importance", "0.5", "--memory-dir", d).out
    same = memory.update(rec.id, {"status": "active", "importanceScore": 0.5, "tags": [], "title": None})
    assert not same.changed and same.commit is None and same.record.frontmatter == rec.frontmatter
    assert snapshot_tree(memory.root) == files and git(memory.root, "rev-parse", "HEAD") == head
    assert memory.update(rec.id, {"importanceScore": 0.7}).changed  # a real change still commits
    assert git(memory.root, "rev-parse", "HEAD") != head


def test_revert_restores_old_content_as_new_commit(memory: Memory) -> None:
    rec = memory.store("Deploy window is 9am", category="rule").record
    path = memory.root / rec.path
    original = path.read_text()
    path.write_text(original.replace("9am", "5pm"))
    git(memory.root, "commit", "-qam", "change window")
    reverted = memory.revert(rec.id, "v1").record
    # v1's text, except `updated`: a revert is a change made now
    assert path.read_text().replace(reverted.frontmatter["updated"], rec.frontmatter["updated"]) == original
    assert reverted.frontmatter["updated"] != rec.frontmatter["updated"]
    assert reverted.content == "Deploy window is 9am"
    versions = memory.versions(rec.id)
    assert len(versions) == 3 and versions[-1].operation == "revert"
    assert trailers(memory.root)["Remnic-Reverted-To"] == [versions[0].sha]


def test_rename_keeps_history_and_id(memory: Memory) -> None:
    rec = memory.store("Ana's editor is Helix", category="fact").record
    (memory.root / "facts" / "tools").mkdir()
    git(memory.root, "mv", rec.path, "facts/tools/editor.md")
    git(memory.root, "commit", "-qm", "organise")
    path = memory.root / "facts/tools/editor.md"
    path.write_text(path.read_text().replace("Helix", "Neovim"))
    git(memory.root, "commit", "-qam", "switch editor")
    moved = memory.get(rec.id)  # the id survives the rename
    assert moved.path == "facts/tools/editor.md"
    versions = memory.versions(rec.id)
    assert [v.path for v in versions] == [rec.path, "facts/tools/editor.md", "facts/tools/editor.md"]
    assert versions[1].change == "R" and versions[1].previous_path == rec.path
    assert "Helix" in memory.version_text("facts/tools/editor.md", "v1")[1]
    assert memory.versions("facts/tools/editor.md")[0].path == rec.path


def test_forget_keeps_body_and_unknown_keys(memory: Memory) -> None:
    rec = memory.store(
        "Old phone number is 555-0100", category="fact", extra={"customKey": "kept", "zeta": [1, 2]}
    ).record
    path = memory.root / rec.path
    before = parse_file(path.read_text(), rec.path)
    forgotten = memory.forget(rec.id, reason="number changed").record
    after = parse_file(path.read_text(), rec.path)
    assert after.body == before.body
    assert after.status == "forgotten" and "forgottenAt" in after.frontmatter
    assert after.frontmatter["forgottenReason"] == "number changed"
    assert after.frontmatter["customKey"] == "kept" and after.frontmatter["zeta"] == [1, 2]
    assert (
        list(after.frontmatter)[: len(before.frontmatter) - 2]
        == [k for k in before.frontmatter if k not in ("customKey", "zeta")][: len(before.frontmatter) - 2]
    )
    assert forgotten.status == "forgotten"
    events = memory.timeline(rec.id)
    assert [e["operation"] for e in events] == ["store", "forget"]
    assert [e["status"] for e in events] == ["active", "forgotten"]
    assert "555-0100" in memory.version_text(rec.id, "v1")[1]


def test_metadata_update_of_hand_written_file_keeps_everything(memory: Memory) -> None:
    rel = "facts/hand.md"
    text = (
        "---\nmy_key: 1\ncategory: fact\nweird: [a, {b: c}]\n---\n\n  Indented body with trailing spaces   \n\n"
        "And no final newline"
    )
    (memory.root / rel).write_text(text)
    git(memory.root, "add", rel)
    git(memory.root, "commit", "-qm", "hand written")
    rec = memory.files.read(rel)
    memory.update(rec.id, {"status": "archived"})
    after = (memory.root / rel).read_text()
    assert after.endswith("\n\n  Indented body with trailing spaces   \n\nAnd no final newline")
    parsed = parse_file(after, rel)
    assert parsed.frontmatter["my_key"] == 1 and parsed.frontmatter["weird"] == ["a", {"b": "c"}]
    assert parsed.status == "archived" and parsed.id == rec.id


def test_import_is_one_commit_and_validated_first(memory: Memory) -> None:
    head = memory.ledger.head()
    before = snapshot_tree(memory.root)
    items = [{"content": f"Imported fact number {i}", "tags": ["bulk"], "sourceTurnId": f"D1:{i}"} for i in range(20)]
    bad = items[:5] + [{"content": "ok", "confidence": "high"}, {"category": "fact"}] + items[5:]
    with pytest.raises(ValidationError) as info:
        memory.import_records(bad)
    lines = sorted({p.line for p in info.value.problems})
    assert lines == [6, 7]
    assert {p.field for p in info.value.problems} == {"confidence", "content"}
    assert memory.ledger.head() == head and snapshot_tree(memory.root) == before
    result = memory.import_records(items)
    assert len(result.records) == 20
    assert memory.ledger.head() != head
    assert int(git(memory.root, "rev-list", "--count", f"{head}..HEAD")) == 1
    t = trailers(memory.root)
    assert t["Remnic-Operation"] == ["import"] and t["Remnic-Memory-Count"] == ["20"]
    assert memory.get(result.records[3].id).frontmatter["sourceTurnId"] == "D1:3"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content": "x", "category": "musing"}, "category"),
        ({"content": "x", "confidence": "high"}, "confidence"),
        ({"content": "x", "importance": 7}, "importance"),
        ({"content": "x", "extra": {"status": "deleted"}}, "status"),
        ({"content": "x", "namespace": "../escape"}, "namespace"),
        ({"content": "x", "extra": {"id": "../../etc/passwd"}}, "id"),
        ({"content": "y" * 20_001}, "content"),
        ({"content": "my key is AKIAABCDEFGHIJKLMNOP ok"}, "content"),
        (
            {
                "content": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
            },
            "content",
        ),
        ({"content": "   "}, "content"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(memory: Memory, kwargs: dict, field: str) -> None:
    before = snapshot_tree(memory.root)
    head = memory.ledger.head()
    content = kwargs.pop("content")
    with pytest.raises(ValidationError) as info:
        memory.store(content, **kwargs)
    assert field in {p.field for p in info.value.problems}
    assert snapshot_tree(memory.root) == before and memory.ledger.head() == head


def test_unknown_category_error_lists_options(memory: Memory) -> None:
    with pytest.raises(ValidationError) as info:
        memory.store("x", category="musing")
    assert "valid options: fact, preference" in info.value.describe()


def test_malformed_file_is_reported_and_left_untouched(memory: Memory) -> None:
    good = memory.store("A good memory", category="fact").record
    bad_rel = "facts/broken.md"
    bad_text = "---\nid: mem_broken\nconfidence: [high\n---\nI wrote this by hand\n"
    (memory.root / bad_rel).write_bytes(bad_text.encode())
    scan = memory.files.scan()
    assert [r.id for r in scan.records] == [good.id]
    assert scan.problems[0].path == bad_rel and scan.problems[0].problems[0].line == 3
    with pytest.raises(MemoryFormatError):
        memory.files.read(bad_rel)
    doctor = {c["name"]: c for c in memory.doctor()}
    assert doctor["memory-files"]["status"] == "fail"
    assert any("facts/broken.md:3" in p and "invalid YAML" in p for p in doctor["memory-files"]["problems"])
    assert (memory.root / bad_rel).read_bytes() == bad_text.encode()


def test_get_unknown_and_traversal(memory: Memory) -> None:
    with pytest.raises(NotFoundError):
        memory.get("mem_doesnotexist")
    with pytest.raises(NotFoundError):
        memory.get("../../etc/passwd")
    with pytest.raises(ValidationError):
        memory.versions("../outside.md")


def test_git_index_lock_contention_is_retried(memory: Memory) -> None:
    lock = memory.root / ".git" / "index.lock"
    lock.write_text("")
    threading.Timer(0.4, lock.unlink).start()
    t0 = time.monotonic()
    rec = memory.store("Written while git's index was locked", category="fact").record
    assert time.monotonic() - t0 >= 0.3
    assert memory.versions(rec.id)[0].operation == "store"


def test_other_staged_user_changes_are_not_swept_into_remnic_commits(memory: Memory) -> None:
    (memory.root / "notes.txt").write_text("user's own staged work\n")
    git(memory.root, "add", "notes.txt")
    memory.store("Unrelated memory", category="fact")
    assert "notes.txt" not in git(memory.root, "show", "--name-only", "--format=", "HEAD")
    assert git(memory.root, "diff", "--cached", "--name-only").strip() == "notes.txt"


def test_commits_work_without_any_git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "empty-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    from remnic.config import settings_for

    mem = Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m"))
    rec = mem.store("No identity configured", category="fact").record
    assert mem.versions(rec.id)[0].author == "remnic"


# --- the scan memo (.remnic/scan-memo.sqlite) -----------------------------------------------------


def _bodies(memory: Memory) -> dict[str, str]:
    return {r.path: r.content for r in memory.list()}


def _memo_paths(root: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(root / ".remnic" / "scan-memo.sqlite")
    try:
        return {r[0] for r in conn.execute("SELECT path FROM memo")}
    finally:
        conn.close()


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every file the store parses (the real check runs; this only counts)."""
    from remnic.repo.files import MemoryStore

    parsed: list[str] = []
    real = MemoryStore.check

    def counting(self: MemoryStore, rel: str):  # type: ignore[no-untyped-def]
        parsed.append(rel)
        return real(self, rel)

    monkeypatch.setattr(MemoryStore, "check", counting)
    return parsed


def test_scan_memo_serves_unchanged_files_across_processes_and_sees_every_edit(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import remnic.repo.scan_memo as scan_memo

    monkeypatch.setattr(scan_memo, "RACY_NS", 0)  # memoise at once instead of two seconds after a write
    a = memory.store("Alpha runs the nightly backup", category="fact", tags=["ops"]).record
    b = memory.store("Beta owns the release checklist", category="fact").record
    first = {r.path: r for r in memory.list()}
    assert _memo_paths(memory.root) >= {a.path, b.path}

    parsed = _count_parses(monkeypatch)
    reopened = Memory.open(memory.root)  # another process would open it like this
    again = {r.path: r for r in reopened.list()}
    assert parsed == []  # every record came from the memo ...
    assert again == first  # ... and equals what parsing gave
    assert reopened.get(a.id).path == a.path  # ids found through the memoised scan
    parsed.clear()

    # A caller mutating what it got cannot reach the memo.
    again[a.path].frontmatter["tags"].append("mutated")
    assert {r.path: r for r in reopened.list()}[a.path].tags == ["ops"]

    # Hand edits, a malformed file, its fix and a deletion all show up; only changed files are parsed.
    (memory.root / a.path).write_text((memory.root / a.path).read_text().replace("nightly", "weekly"))
    assert _bodies(reopened)[a.path] == "Alpha runs the weekly backup"
    assert parsed == [a.path]
    bad = memory.root / "facts/bad.md"
    bad.write_text("---\nstatus: [nope\n---\ntext\n")
    assert [e.path for e in reopened.files.scan().problems] == ["facts/bad.md"]
    assert "facts/bad.md" not in _memo_paths(memory.root)  # malformed files are never memoised
    bad.write_text("---\nstatus: active\n---\ntext\n")
    assert reopened.files.scan().problems == [] and "facts/bad.md" in _bodies(reopened)
    (memory.root / b.path).unlink()
    assert b.path not in _bodies(reopened) and b.path not in _memo_paths(memory.root)


def test_scan_memo_never_trusts_a_file_changed_within_the_racy_window(memory: Memory) -> None:
    rec = memory.store("Gamma value is 1111", category="fact").record
    path = memory.root / rec.path
    assert _bodies(memory)[rec.path] == "Gamma value is 1111"
    # Same size, same inode, very likely the same mtime tick: only the racy rule tells them apart.
    with open(path, "r+", encoding="utf-8") as fh:
        text = fh.read()
        fh.seek(0)
        fh.write(text.replace("1111", "2222"))
    assert _bodies(memory)[rec.path] == "Gamma value is 2222"
    assert rec.path not in _memo_paths(memory.root)


def test_scan_memo_keeps_only_what_round_trips_and_survives_a_corrupt_memo(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import remnic.repo.scan_memo as scan_memo

    monkeypatch.setattr(scan_memo, "RACY_NS", 0)
    (memory.root / "facts/odd.md").write_text("---\nid: mem_odd\nextra:\n  1: one\n---\nOdd keys.\n")
    memory.store("Plain memory", category="fact")
    memory.settle_index()  # the first write builds the index on a worker thread, which scans too
    records = {r.path: r for r in memory.list()}
    assert records["facts/odd.md"].frontmatter["extra"] == {1: "one"}
    assert "facts/odd.md" not in _memo_paths(memory.root)  # an int key would come back as "1"
    assert {r.path: r for r in memory.list()} == records

    (memory.root / ".remnic" / "scan-memo.sqlite").write_bytes(b"not a database at all" * 100)
    assert {r.path: r for r in memory.list()} == records
    assert len(_memo_paths(memory.root)) == 1  # started over


def test_scan_memo_can_be_turned_off(tmp_path: Path) -> None:
    mem = Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m", store={"scan_memo": False}))
    mem.store("Delta is not memoised", category="fact")
    assert len(mem.list()) == 1
    assert not (mem.root / ".remnic" / "scan-memo.sqlite").exists()


def test_back_to_back_writes_check_duplicates_without_scanning_every_file(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the index worker applies the previous write, the next write's duplicate check still uses
    the index (its catalog holds the rows of the commit it records): a scan of every file per write
    would make each write cost as much as listing the repository."""
    memory.store("The first memory builds the index")
    memory.settle_index()
    scans: list[int] = []
    original = type(memory.files).scan
    monkeypatch.setattr(type(memory.files), "scan", lambda self: scans.append(1) or original(self))
    for i in range(25):
        memory.store(f"Back to back write number {i} about the release train")
    assert scans == []
    again = memory.store("Back to back write number 7 about the release train")  # still found as a duplicate
    assert not again.changed and again.record.content == "Back to back write number 7 about the release train"
