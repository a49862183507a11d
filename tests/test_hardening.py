"""Hostile and accidental inputs found in review: each must be refused or contained, never leaked or lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from remnic import Memory, ValidationError
from remnic.errors import MemoryFormatError, UsageError
from remnic.ledger import Ledger

from conftest import git, run_cli, run_remnic

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
    assert any(p.path == "facts/link.md" and "symbolic link" in p.message for p in report.problems)
    assert link.is_symlink()  # left as it is, never replaced by a copy of its target
    assert git(memory.root, "ls-files", "-s", "facts/link.md").startswith("120000")
    hits = memory.recall("giraffe vault passphrase", top_k=10)
    assert all("vault passphrase" not in h.content for h in hits)
    assert all(r.path != "facts/link.md" for r in memory.list())
    assert memory.files.scan().problems[0].path == "facts/link.md"
    with pytest.raises(MemoryFormatError):
        memory.files.read("facts/link.md")
    doctor = {c["name"]: c for c in memory.doctor()}
    assert any("symbolic link" in p for p in doctor["memory-files"]["problems"])


def test_pre_commit_hook_refuses_a_symlinked_memory(memory: Memory, tmp_path: Path) -> None:
    assert run_remnic("hooks", "install", "--memory-dir", str(memory.root)).code == 0
    (tmp_path / "t.txt").write_text("target")
    (memory.root / "facts" / "l.md").symlink_to(tmp_path / "t.txt")
    git(memory.root, "add", "facts/l.md")
    import subprocess

    proc = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "link"],
                          cwd=memory.root, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "facts/l.md" in proc.stderr + proc.stdout and "symbolic link" in proc.stderr + proc.stdout


@pytest.mark.parametrize("frontmatter", [
    "confidenceTier: [a]",
    "importanceLevel: {}",
    "status: [active]",
    "extra: &a [*a]",
    "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdef", "bcdefg")),
])
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
    batch.write_text(json.dumps({"content": "ok line"}) + "\n" +
                     json.dumps({"content": "Deploy key note", "entityRef": "ghp_" + "a" * 36}) + "\n")
    result = run_cli("import", str(batch), "--memory-dir", str(memory.root))
    assert result.code == 2 and f"{batch}:2" in result.err and "secret" in result.err
    assert memory.ledger.head() == head


def test_git_ignored_files_are_not_memories(memory: Memory) -> None:
    (memory.root / ".gitignore").write_text((memory.root / ".gitignore").read_text() + "drafts/\n")
    git(memory.root, "commit", "-qam", "ignore drafts")
    (memory.root / "drafts").mkdir()
    (memory.root / "drafts" / "z.md").write_text("A draft about okapis that is not ready\n")
    kept = memory.store("A real memory about okapis", category="fact")
    assert [r.id for r in memory.list()] == [kept.id]
    memory.reindex()
    assert [h.id for h in memory.recall("okapis", top_k=5)] == [kept.id]
    memory.sync(full=True)
    assert (memory.root / "drafts" / "z.md").exists()
    assert "drafts" not in git(memory.root, "ls-files")


def test_revert_refuses_to_discard_uncommitted_edits(memory: Memory) -> None:
    rec = memory.store("Editor is helix", category="preference")
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
    again = run_cli("versions", "revert", rec.path, "v3", "--memory-dir", str(memory.root))
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
