"""`versions revert --force` over uncommitted hand edits: the edits are committed first as a version of
their own (a malformed file byte for byte), named in the output and in --json as keptEdits, so nothing
a user wrote is lost; a revert over a clean file makes its one commit and nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git, run_cli

NOTE = "IMPORTANT HAND NOTE: only on Tuesdays after QA sign-off.\n"
PATH = "decisions/we-cut-releases-every-tuesday.md"


@pytest.fixture
def superseded(tmp_path: Path) -> tuple[Path, list[str]]:
    """The README's example: Tuesday's decision (v1, then v2 tagged, v3 superseded by Wednesday's)."""
    root = tmp_path / "mem"
    d = ["--memory-dir", str(root)]
    assert run_cli("init", str(root)).code == 0
    first = run_cli("store", "We cut releases every Tuesday", "--category", "decision", "--json", *d).json()["id"]
    assert run_cli("update", first, "--tags", "ops", *d).code == 0
    assert run_cli("store", "We cut releases every Wednesday", "--supersedes", first, *d).code == 0
    return root, d


def _rev(root: Path, spec: str) -> str:
    return git(root, "rev-parse", spec).strip()


def _blob(root: Path, commit: str) -> bytes:
    return subprocess.run(["git", "show", f"{commit}:{PATH}"], cwd=root, capture_output=True, check=True).stdout


def _commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def test_force_revert_commits_the_hand_edit_first_and_names_it(superseded: tuple[Path, list[str]]) -> None:
    root, d = superseded
    file = root / PATH
    # A clean file: the revert's one commit, nothing kept (v4 is that revert, dropping Wednesday's claim).
    before = _commits(root)
    clean = run_cli("versions", "revert", PATH, "v1", "--force", "--json", *d)
    assert clean.code == 0 and clean.json()["keptEdits"] is None, clean
    assert _commits(root) == before + 1

    with file.open("a", encoding="utf-8") as fh:
        fh.write(NOTE)
    edited = file.read_bytes()
    before = _commits(root)

    refused = run_cli("versions", "revert", PATH, "v1", *d)
    assert refused.code == 2 and PATH in refused.err and "nothing is discarded" in refused.err, refused
    assert file.read_bytes() == edited and _commits(root) == before

    result = run_cli("versions", "revert", PATH, "v2", "--force", "--json", *d)
    assert result.code == 0, result
    out = result.json()
    kept = out["keptEdits"]
    assert kept is not None and kept["version"] == 5 and kept["label"] == "v5" and kept["malformed"] is False, out
    assert kept["path"] == PATH
    # Its own commit, right before the revert's, holding the file exactly as it was on disk.
    assert _commits(root) == before + 2
    assert _rev(root, "HEAD~1") == kept["commit"] and _rev(root, "HEAD") == out["commit"]
    assert _blob(root, kept["commit"]) == edited
    assert "keep" in git(root, "log", "-1", "--format=%s", kept["commit"]).lower()
    assert NOTE.strip() not in file.read_text(encoding="utf-8")  # the revert itself did happen
    assert git(root, "status", "--porcelain").strip() == ""
    listed = run_cli("versions", "list", PATH, "--json", *d).json()["versions"]
    assert [(v["label"], v["sha"]) for v in listed][4:] == [("v5", kept["commit"]), ("v6", out["commit"])], listed

    # The text output names the kept version; reverting to it brings the hand note back.
    with file.open("a", encoding="utf-8") as fh:
        fh.write("second hand note\n")
    text = run_cli("versions", "revert", PATH, "v1", "--force", *d)
    assert text.code == 0, text
    assert "second hand note" not in file.read_text(encoding="utf-8")
    sha = _rev(root, "HEAD~1")
    assert f"kept your uncommitted edits as v7 (commit {sha[:8]}) before reverting" in text.out, text.out
    assert "second hand note" in git(root, "show", f"{sha}:{PATH}")
    assert run_cli("versions", "revert", PATH, "v5", *d).code == 0
    assert NOTE.strip() in file.read_text(encoding="utf-8")


def test_force_revert_keeps_a_malformed_hand_edit_byte_for_byte(superseded: tuple[Path, list[str]]) -> None:
    root, d = superseded
    broken = b"---\nid: [broken\n---\nmy half-typed note \xe2\x80\x94 keep me\n"
    (root / PATH).write_bytes(broken)
    result = run_cli("versions", "revert", PATH, "v2", "--force", "--json", *d)
    assert result.code == 0, result
    kept = result.json()["keptEdits"]
    assert kept is not None and kept["malformed"] is True and kept["version"] == 4, result.json()
    shown = run_cli("versions", "show", PATH, kept["label"], *d)
    assert shown.code == 0 and shown.out.encode("utf-8") == broken, shown
    assert _blob(root, kept["commit"]) == broken
    assert git(root, "status", "--porcelain").strip() == ""
    assert "tags:" in (root / PATH).read_text(encoding="utf-8")  # v2's text is on disk now
