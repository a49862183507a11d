"""Hostile and accidental inputs found in review: each must be refused or contained, never leaked or lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git, run_cli, run_remnic, snapshot_tree

from remnic import Memory, ValidationError
from remnic.errors import MemoryFormatError, UsageError
from remnic.memfile.values import hash_matches
from remnic.repo.ledger import Ledger

SECRET = "giraffe-password-1234 is the vault passphrase"


def test_symlinked_memory_is_never_read_through(memory: Memory, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET)
    memory.store("An ordinary memory about giraffes", category="fact")
    link = memory.root / "facts" / "link.md"
    link.symlink_to(outside)
    git(memory.root, "add", "facts/link.md")
    git(memory.root, "commit", "-qm", "sneak a link in", "--no-verify")
    report = memory.sync()
    said = [p.message for p in report.problems if p.path == "facts/link.md"]
    said += [s["reason"] for s in report.skipped if s["path"] == "facts/link.md"]
    assert any("symbolic link" in m for m in said)
    assert link.is_symlink()  # left as it is, never replaced by a copy of its target
    assert git(memory.root, "ls-files", "-s", "facts/link.md").startswith("120000")
    hits = memory.recall("giraffe vault passphrase", top_k=10)
    assert all("vault passphrase" not in h.content for h in hits)
    assert all(r.path != "facts/link.md" for r in memory.list())
    scan = memory.files.scan()
    assert scan.links == ["facts/link.md"] and not scan.problems  # not a memory: skipped, never read
    with pytest.raises(MemoryFormatError):
        memory.files.read("facts/link.md")
    doctor = {c["name"]: c for c in memory.doctor()}
    assert doctor["memory-files"]["status"] == "ok"
    assert any("facts/link.md: a symbolic link" in p for p in doctor["skipped-files"]["problems"])


def test_pre_commit_hook_refuses_a_symlinked_memory(memory: Memory, tmp_path: Path) -> None:
    assert run_remnic("hooks", "install", "--memory-dir", str(memory.root)).code == 0
    (tmp_path / "t.txt").write_text("target")
    (memory.root / "facts" / "l.md").symlink_to(tmp_path / "t.txt")
    git(memory.root, "add", "facts/l.md")
    import subprocess

    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "link"],
        cwd=memory.root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "facts/l.md" in proc.stderr + proc.stdout and "symbolic link" in proc.stderr + proc.stdout


@pytest.mark.parametrize("frontmatter", ["confidenceTier: [a]", "importanceLevel: {}", "status: [active]"])
def test_odd_values_of_known_keys_are_read_not_a_crash(memory: Memory, frontmatter: str) -> None:
    memory.store("Tapirs are related to horses", category="fact")
    odd = memory.root / "facts" / "odd.md"
    odd.write_text(f"---\n{frontmatter}\n---\nodd body about tapirs\n")
    for args in (["query", "tapirs"], ["list"], ["status"], ["reindex"], ["doctor"]):
        result = run_cli(*args, "--memory-dir", str(memory.root), "--json")
        assert result.code == 0, (args, result.err)
    assert not memory.sync().problems and odd.read_text().endswith("\nodd body about tapirs\n")


@pytest.mark.parametrize(
    "frontmatter",
    [
        "extra: &a [*a]",
        "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
        + "".join(
            f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdef", "bcdefg")
        ),
    ],
)
def test_hostile_frontmatter_is_malformed_not_a_crash(memory: Memory, frontmatter: str) -> None:
    memory.store("Tapirs are related to horses", category="fact")
    bad = memory.root / "facts" / "hostile.md"
    bad.write_text(f"---\n{frontmatter.rstrip()}\n---\nhostile body\n")
    for args in (["query", "tapirs"], ["list"], ["status"], ["reindex"]):
        result = run_cli(*args, "--memory-dir", str(memory.root), "--json")
        assert result.code == 0, (args, result.err)
    doctor = run_cli("doctor", "--memory-dir", str(memory.root), "--json")
    assert doctor.code == 1 and "facts/hostile.md" in doctor.out
    assert memory.sync().problems and bad.read_text().startswith("---\n")


def test_secrets_in_frontmatter_are_refused_on_write(memory: Memory, tmp_path: Path) -> None:
    head = memory.ledger.head()
    with pytest.raises(ValidationError) as info:
        memory.store("Deploy key note", category="fact", extra={"note": "AKIAABCDEFGHIJKLMNOP"})
    assert "secret" in info.value.describe()
    batch = tmp_path / "b.jsonl"
    batch.write_text(
        json.dumps({"content": "ok line"})
        + "\n"
        + json.dumps({"content": "Deploy key note", "entityRef": "ghp_" + "a" * 36})
        + "\n"
    )
    result = run_cli("import", str(batch), "--memory-dir", str(memory.root))
    assert result.code == 2 and f"{batch}:2" in result.err and "secret" in result.err
    assert memory.ledger.head() == head


def test_git_ignored_files_are_not_memories(memory: Memory) -> None:
    (memory.root / ".gitignore").write_text((memory.root / ".gitignore").read_text() + "drafts/\n")
    git(memory.root, "commit", "-qam", "ignore drafts")
    (memory.root / "drafts").mkdir()
    (memory.root / "drafts" / "z.md").write_text("A draft about okapis that is not ready\n")
    kept = memory.store("A real memory about okapis", category="fact").record
    assert [r.id for r in memory.list()] == [kept.id]
    memory.reindex()
    assert [h.id for h in memory.recall("okapis", top_k=5)] == [kept.id]
    memory.sync(full=True)
    assert (memory.root / "drafts" / "z.md").exists()
    assert "drafts" not in git(memory.root, "ls-files")


def test_revert_refuses_to_discard_uncommitted_edits(memory: Memory) -> None:
    rec = memory.store("Editor is helix", category="preference").record
    memory.forget(rec.id)
    path = memory.root / rec.path
    path.write_text(path.read_text() + "\nUNSAVED precious note\n")
    result = run_cli("versions", "revert", rec.path, "v1", "--memory-dir", str(memory.root))
    assert result.code == 2 and "uncommitted changes" in result.err and "--force" in result.err
    assert "precious" in path.read_text()
    with pytest.raises(UsageError):
        memory.revert(rec.id, "v1")
    forced = run_cli("versions", "revert", rec.path, "v1", "--force", "--memory-dir", str(memory.root), "--json")
    assert forced.code == 0 and forced.json()["changed"] is True
    assert forced.json()["keptEdits"]["label"] == "v3"  # the edit, committed before the revert (v4)
    again = run_cli("versions", "revert", rec.path, "v4", "--memory-dir", str(memory.root))
    assert again.code == 0 and "nothing to commit" in again.out


def test_sync_commits_the_bytes_it_checked_not_a_later_save(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    path = memory.root / "facts" / "race.md"
    path.write_text("Checked text about pangolins\n")
    late = "A save that lands while sync is committing ghp_" + "b" * 36 + "\n"
    original = Ledger.commit

    def commit_after_a_save(self, paths, *args, **kwargs):  # the one fault we can't time for real
        path.write_text(late)
        return original(self, paths, *args, **kwargs)

    monkeypatch.setattr(Ledger, "commit", commit_after_a_save)
    report = memory.sync()
    monkeypatch.setattr(Ledger, "commit", original)
    committed = git(memory.root, "show", "HEAD:facts/race.md")
    assert report.commit and "Checked text about pangolins" in committed and "ghp_" not in committed
    assert path.read_text() == late  # the late save is still there, uncommitted
    follow_up = memory.sync()
    assert any(p.path == "facts/race.md" and "secret" in p.message for p in follow_up.problems)
    assert "ghp_" not in git(memory.root, "show", "HEAD:facts/race.md")


def test_update_keeps_comments_crlf_and_bom(memory: Memory) -> None:
    rel = "facts/windows.md"
    raw = "\ufeff---\r\nid: mem_windows\r\n# a comment the user wrote\r\ncategory: fact\r\n---\r\nBody line one\r\nline two\r\n"
    (memory.root / rel).write_bytes(raw.encode("utf-8"))
    git(memory.root, "add", rel)
    git(memory.root, "commit", "-qm", "windows file")
    memory.forget("mem_windows", reason="test")
    after = (memory.root / rel).read_bytes().decode("utf-8")
    assert after.startswith("\ufeff---\r\n") and "# a comment the user wrote\r\n" in after
    assert after.endswith("---\r\nBody line one\r\nline two\r\n")
    assert "status: forgotten\r\n" in after and "\n" not in after.replace("\r\n", "")
    assert git(memory.root, "status", "--porcelain") == ""


def test_update_with_new_content_keeps_a_crlf_file_crlf(memory: Memory) -> None:
    d, rel = str(memory.root), "facts/crlf.md"
    path = memory.root / rel
    path.write_bytes(b"---\r\ntitle: CRLF note\r\n---\r\n\r\nWindows line endings here.\r\n")
    assert run_cli("sync", "run", "--memory-dir", d).code == 0
    memory_id = next(r.id for r in memory.list() if r.path == rel)
    result = run_cli(
        "update", memory_id, "--content", "Windows line endings changed\nover two lines", "--memory-dir", d
    )
    assert result.code == 0, result.err
    after = path.read_bytes().decode("utf-8")
    assert after.endswith("---\r\n\r\nWindows line endings changed\r\nover two lines\r\n")
    assert "\n" not in after.replace("\r\n", "")  # no LF-only line anywhere
    record = memory.get(memory_id)
    assert hash_matches(record.frontmatter["contentHash"], record.content) is True  # hashed as written
    memory.update(memory_id, {"title": None})  # removing a key rewrites the frontmatter whole
    after = path.read_bytes().decode("utf-8")
    assert "title:" not in after and "\n" not in after.replace("\r\n", "")
    assert git(memory.root, "status", "--porcelain") == ""


def test_failed_update_restores_the_original_bytes(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    rel = "facts/keep.md"
    raw = "---\nid: mem_keep\n# keep this comment\ncategory: fact\n---\nbody\n"
    (memory.root / rel).write_text(raw)
    git(memory.root, "add", rel)
    git(memory.root, "commit", "-qm", "keep")

    def boom(*args, **kwargs):  # a commit that fails after the file was written
        raise OSError("disk full")

    monkeypatch.setattr(Ledger, "commit", boom)
    with pytest.raises(OSError):
        memory.forget("mem_keep")
    assert (memory.root / rel).read_text() == raw
    assert sorted(os.listdir(memory.root / "facts")) == [".gitkeep", "keep.md"]  # no temp file left behind


def test_import_refuses_repeated_and_existing_ids(memory: Memory, tmp_path: Path) -> None:
    memory.store("Existing memory with a chosen id", category="fact", extra={"id": "mem_taken"})
    batch = tmp_path / "ids.jsonl"
    batch.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"content": "one", "id": "mem_twice"},
                {"content": "two", "id": "mem_twice"},
                {"content": "three", "id": "mem_taken"},
                {"content": "four"},
            ]
        )
        + "\n"
    )
    result = run_cli("import", str(batch), "--memory-dir", str(memory.root))
    assert result.code == 2
    assert f"{batch}:2" in result.err and "used again (first on line 1)" in result.err
    assert f"{batch}:3" in result.err and "already exists" in result.err
    assert len(memory.list()) == 1


def test_history_commands_only_take_memory_files(memory: Memory) -> None:
    for args in (["versions", "revert", "README.md", "v1"], ["versions", "list", ".gitignore"]):
        result = run_cli(*args, "--memory-dir", str(memory.root))
        assert result.code == 2 and "is not a memory file" in result.err, args
    assert run_cli("versions", "list", "", "--memory-dir", str(memory.root)).code == 2


def test_timeline_of_a_deleted_memory_comes_from_history(memory: Memory) -> None:
    rec = memory.store("Short-lived memory about newts", category="fact").record
    git(memory.root, "rm", "-q", rec.path)
    git(memory.root, "commit", "-qm", "remove it")
    events = run_cli("timeline", rec.id, "--memory-dir", str(memory.root), "--json").json()["events"]
    assert [e["status"] for e in events] == ["active", "deleted"]


def test_forget_twice_changes_nothing(memory: Memory) -> None:
    rec = memory.store("Forget me once", category="fact").record
    memory.forget(rec.id, reason="first")
    head = memory.ledger.head()
    second = run_cli("forget", rec.id, "--reason", "second", "--memory-dir", str(memory.root))
    assert second.code == 0 and "already forgotten" in second.out
    assert memory.ledger.head() == head and memory.get(rec.id).frontmatter["forgottenReason"] == "first"


def test_writes_are_refused_on_a_detached_head(memory: Memory) -> None:
    memory.store("First", category="fact")
    git(memory.root, "checkout", "-q", "--detach", "HEAD")
    result = run_cli("store", "Would be orphaned", "--memory-dir", str(memory.root))
    assert result.code == 1 and "HEAD is detached" in result.err
    assert not (memory.root / "facts" / "would-be-orphaned.md").exists()


def test_get_of_a_malformed_file_says_what_is_wrong(memory: Memory) -> None:
    rec = memory.store("Staging db is db1", category="fact").record
    path = memory.root / rec.path
    path.write_text(path.read_text().replace("status: active", "status: [bogus"))
    result = run_cli("get", rec.id, "--memory-dir", str(memory.root))
    assert result.code == 1 and rec.path in result.err and "invalid YAML" in result.err


def test_a_malformed_uncommitted_edit_is_not_a_clean_working_tree(memory: Memory) -> None:
    rec = memory.store("Staging db is db1", category="fact").record
    path = memory.root / rec.path
    path.write_text(path.read_text().replace("status: active", "status: [bogus"))
    status = memory.status()
    assert status["uncommitted"] == [] and status["uncommittedHeld"] == [rec.path]
    tree = {c["name"]: c for c in memory.doctor()}["working-tree"]
    assert tree["status"] == "warn" and "until fixed" in tree["detail"] and tree["problems"] == [rec.path]
    text = run_cli("status", "--memory-dir", str(memory.root))
    assert "uncommitted changes: 0 (and 1 that sync leaves until fixed" in text.out


def test_init_on_a_file_and_list_with_a_bad_namespace_are_usage_errors(tmp_path: Path, memory: Memory) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    assert run_cli("init", str(target)).code == 2
    result = run_cli("list", "--namespace", "../x", "--memory-dir", str(memory.root))
    assert result.code == 2 and "namespace" in result.err


def test_init_refuses_a_repository_inside_another_naming_the_outer_one(tmp_path: Path) -> None:
    from remnic.config import settings_for

    outer = tmp_path / "repo1"
    assert run_cli("init", str(outer)).code == 0
    before, head = snapshot_tree(outer), git(outer, "rev-parse", "HEAD")
    for inner in (outer / "facts", outer / "notes" / "deeper"):
        result = run_cli("init", str(inner))
        assert result.code == 2 and f"{inner} is inside the memory repository {outer}" in result.err
        assert not (inner / ".git").exists() and not (inner / ".remnic-memory").exists()
    assert not (outer / "notes").exists()  # refused before anything is made
    with pytest.raises(UsageError, match="inside the memory repository"):
        Memory.init(outer / "facts", settings=settings_for(outer / "facts"))
    # `remnic init` with no path, run inside the repository, completes it (its documented default) …
    assert run_cli("init", cwd=outer / "facts").code == 0
    # … and so does naming the repository itself
    assert run_cli("init", str(outer)).code == 0
    assert snapshot_tree(outer) == before and git(outer, "rev-parse", "HEAD") == head
    assert not (outer / "facts" / ".git").exists()


def test_init_with_an_empty_path_is_a_usage_error(tmp_path: Path, isolated_home: Path) -> None:
    for args in ([""], ["   "], ["--memory-dir", ""]):
        result = run_cli("init", *args, cwd=tmp_path)
        assert result.code == 2 and "the directory to create is empty" in result.err, args
    assert not (isolated_home / ".remnic").exists()  # not the default ~/.remnic/memory …
    assert list(tmp_path.iterdir()) == []  # … nor the current directory


def test_state_dir_ignores_itself_even_without_a_gitignore_entry(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitignore").write_text("node_modules/\n")
    mem = Memory.init(root, settings=__import__("remnic.config", fromlist=["settings_for"]).settings_for(root))
    mem.store("A memory in a repo whose .gitignore forgot .remnic", category="fact")
    git(root, "add", "-A")
    assert ".remnic" not in git(root, "diff", "--cached", "--name-only")
    assert {c["name"]: c["status"] for c in mem.doctor()}["gitignore"] == "ok"
    mem.close()


def test_terminal_escapes_are_shown_not_obeyed(memory: Memory) -> None:
    memory.store("esc \x1b[31mRED\x1b[0m and \u202eevil", category="fact")
    for args in (["list"], ["query", "RED evil"]):
        out = run_cli(*args, "--memory-dir", str(memory.root)).out
        assert "\x1b" not in out and "\u202e" not in out and "\\x1b[31m" in out


def test_xray_out_is_checked_before_the_recall(memory: Memory) -> None:
    memory.store("Recall cache TTL is 15 minutes", category="decision")
    before = len(memory.audit_recent(100))
    inside = run_cli(
        "xray", "cache ttl", "--out", str(memory.root / "facts" / "x.md"), "--memory-dir", str(memory.root)
    )
    assert inside.code == 2 and "would be a memory file of this repository" in inside.err
    missing = run_cli("xray", "cache ttl", "--out", "/nonexistent-dir/x.json", "--memory-dir", str(memory.root))
    assert missing.code == 2 and "does not exist" in missing.err
    assert len(memory.audit_recent(100)) == before  # no recall ran


def test_a_budget_too_small_still_returns_the_best_match_trimmed(memory: Memory) -> None:
    memory.store("Ocelots are small wild cats", category="fact")
    out = run_cli("query", "ocelots", "--budget", "1", "--memory-dir", str(memory.root)).out
    assert "ocelots-are-small-wild-cats.md" in out and "1 result(s); 1 chars of 1" in out


def test_thresholds_hold_at_exactly_their_value(tmp_path: Path) -> None:
    from remnic.config import settings_for

    root = tmp_path / "m"
    mem = Memory.init(root, settings=settings_for(root, recall={"confidence_floor": 0.7}))
    kept = mem.store("Capybaras are the largest rodents", category="fact", confidence=0.7).record
    mem.store("Capybaras live near water", category="fact", confidence=0.69)
    assert [h.id for h in mem.recall("capybaras rodents water")] == [kept.id]
    mem.close()


def test_duplicate_check_hashes_the_content_not_a_stale_frontmatter_hash(memory: Memory) -> None:
    rel = "facts/stale-hash.md"
    (memory.root / rel).write_text(
        "---\nid: mem_stale\ncontentHash: sha256:0000\n---\nWombats have cube-shaped droppings\n"
    )
    git(memory.root, "add", rel)
    git(memory.root, "commit", "-qm", "hand written, hash not updated")
    memory.reindex()
    again = memory.store("Wombats have cube-shaped droppings", category="fact")
    assert not again.changed and again.id == "mem_stale"


def test_status_and_doctor_mid_merge_name_the_merge_not_a_missing_file(memory: Memory) -> None:
    rec = memory.store("Staging db is db1", category="fact").record
    memory.recall("staging db")  # the index now reflects HEAD
    path = memory.root / rec.path
    path.write_text(path.read_text() + "<<<<<<< ours\nStaging db is db2\n=======\nStaging db is db3\n>>>>>>> theirs\n")
    (memory.root / ".git" / "MERGE_HEAD").write_text(memory.ledger.head() + "\n")
    status = memory.status()
    assert status["inProgress"] == "a merge is in progress" and "mismatch" not in status["index"]
    assert "repository: a merge is in progress" in run_cli("status", "--memory-dir", str(memory.root)).out
    index = {c["name"]: c for c in memory.doctor()}["index"]
    assert "no memory file" not in index["detail"]
