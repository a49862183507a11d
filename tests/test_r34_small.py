"""Small fixes: the X-ray's query-aspect share is at most 100%; a deleted working directory is an error, not a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import run_cli


def test_a_name_share_is_at_most_all_memories(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    said = (
        "The staging DB port is 5432.",
        "Actually the staging DB port is 5433 now.",
        "The staging DB port changed to 5434.",
    )
    for i, text in enumerate(said):
        transcript = tmp_path / f"c{i}.txt"
        transcript.write_text(f"[2026-11-25T1{i}:00:00Z] Ana: {text}\n", encoding="utf-8")
        args = ("observe", str(transcript), "--session-key", f"c{i}", "--flush", "--quiet", "--memory-dir", str(root))
        assert run_cli(*args).code == 0
    xray = run_cli("xray", "what is the staging DB port", "--memory-dir", str(root))
    shares = [int(s) for s in re.findall(r"in (\d+)% of memories", xray.out)]
    assert shares and max(shares) <= 100, xray.out


def test_a_deleted_working_directory_is_named_not_a_traceback(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    script = f"import os, sys; os.makedirs({str(gone)!r}, exist_ok=True); os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); from remnic.cli import main; sys.exit(main(sys.argv[1:]))"
    root = tmp_path / "mem"

    def remnic(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=120
        )

    assert remnic("init", str(root), "--quiet").returncode == 0  # an absolute path stands in for the directory
    stored = remnic("store", "Deploys need two approvals", "--memory-dir", str(root))
    assert stored.returncode == 0, stored.stderr
    listed = remnic("list")
    assert listed.returncode == 2 and "Traceback" not in listed.stderr
    assert "current directory no longer exists" in listed.stderr and "--memory-dir" in listed.stderr


def test_hooks_status_names_an_older_runner_outdated(tmp_path: Path) -> None:
    """A runner written by an older remnic (no `python -P`) is outdated until `hooks install` runs again."""
    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    assert run_cli("hooks", "install", "--memory-dir", str(root)).code == 0
    runner = root / ".git" / "hooks" / "remnic-hook"
    runner.write_text(runner.read_text().replace(" -P -m remnic", " -m remnic"))
    status = run_cli("hooks", "status", "--json", "--memory-dir", str(root))
    assert {r["state"] for r in status.json()["git"]} == {"outdated"}
    assert run_cli("hooks", "install", "--memory-dir", str(root)).code == 0
    again = run_cli("hooks", "status", "--json", "--memory-dir", str(root))
    assert {r["state"] for r in again.json()["git"]} == {"installed"}
    assert " -P -m remnic" in runner.read_text()


def test_the_merge_driver_git_runs_never_imports_the_repositorys_python(tmp_path: Path) -> None:
    """git runs the merge driver in the repository: a json.py committed there must not run."""
    import shlex
    import subprocess as sp

    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    marker = tmp_path / "imported"
    (root / "json.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    driver = sp.run(["git", "config", "merge.remnic.driver"], cwd=root, capture_output=True, text=True).stdout.strip()
    text = "---\nid: mem_0123456789abcdef0123\ncategory: fact\n---\nDeploys need two approvals.\n"
    for name in ("O", "A", "B"):
        (root / f".{name}.tmp").write_text(text)
    command = driver.replace("%O", ".O.tmp").replace("%A", ".A.tmp").replace("%B", ".B.tmp")
    command = command.replace("%P", shlex.quote("facts/deploys.md"))
    done = sp.run(["sh", "-c", command], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


def test_out_never_writes_over_a_file_the_repository_tracks(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    assert run_cli("store", "The build uses Bazel", "--memory-dir", str(root)).code == 0
    config = (root / "remnic.config.json").read_bytes()
    for command in (("xray", "bazel"), ("export",)):
        for name in ("remnic.config.json", ".gitattributes"):
            refused = run_cli(*command, "--out", str(root / name), "--memory-dir", str(root))
            assert refused.code == 2 and "tracks" in refused.err and name in refused.err, refused.err
    assert (root / "remnic.config.json").read_bytes() == config
    fresh = run_cli("export", "--out", str(root / "backup.jsonl"), "--memory-dir", str(root))
    assert fresh.code == 0 and (root / "backup.jsonl").is_file()  # a new file beside them is fine


def test_include_superseded_keeps_the_review_context_a_default_recall_shows(tmp_path: Path) -> None:
    """--include-superseded adds superseded memories; the pending_review one a default recall shows stays."""
    from remnic.config import settings_for
    from remnic.service.memory import Memory

    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        old = memory.store("The staging cluster runs in eu-west-1").record
        memory.store("The staging cluster runs in eu-central-1", extra={"supersedes": old.id})
        memory.store("The staging cluster may move to us-east-2 next quarter", extra={"status": "pending_review"})
        plain = {h.status for h in memory.recall("where does the staging cluster run")}
        both = {h.status for h in memory.recall("where does the staging cluster run", include_superseded=True)}
    assert plain == {"active", "pending_review"}
    assert both == {"active", "pending_review", "superseded"}
