"""What adopting a vault says: one true line per symlinked folder, notes taken as they are counted by the
dry-run, a committed empty note named, no index churn on a repeated run, a name typed in another Unicode
form found, and `init` telling that the first sync commits uncommitted notes.

One small vault (committed by hand, with a dirty tree) adopted once for the whole module: init, a dry
run, a real run and a repeated run, through the CLI in-process.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.repo.files import LINKED_FOLDER

CAFE_NFD = unicodedata.normalize("NFD", "Notes/Café résumé.md")


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("r36")
    with pytest.MonkeyPatch.context() as patch:  # module scope: the autouse HOME fixture has not run yet
        patch.setenv("HOME", str(base / "home"))
        for var in ("REMNIC_MEMORY_DIR", "REMNIC_CONFIG_PATH", "REMNIC_SPACES_PATH", "XDG_CONFIG_HOME"):
            patch.delenv(var, raising=False)
        yield adopt(base)


def adopt(base: Path) -> dict[str, Any]:
    root, outside = base / "vault", base / "outside"
    notes = {
        "Notes/good.md": "good note\n",
        "Notes/toml.md": '+++\ntitle = "t"\n+++\na toml note\n',
        "Notes/withid.md": "---\nid: my-own-id\n---\na note with its own id\n",
        "Notes/bad.md": "---\ntags: a\ntags: b\n---\nbad note\n",
        "Notes/empty.md": "",
        CAFE_NFD: "un café noté\n",
        "Notes/tracked.md": "tracked\n",
    }
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    outside.mkdir()
    (outside / "o.md").write_text("outside\n")
    (root / "Notes/a.png").write_bytes(b"png")
    os.symlink(outside, root / "Linked outside")
    (root / "Loop").mkdir()
    os.symlink("..", root / "Loop/up")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "my notes")
    (root / "Notes/tracked.md").write_text("tracked, edited\n")  # uncommitted work the first sync takes
    (root / "Notes/untracked.md").write_text("untracked\n")
    where = ("--memory-dir", str(root))
    out = {"root": root, "init": run_cli("init", str(root), "--adopt", "**")}
    out["dry"] = run_cli("sync", "run", "--dry-run", *where)
    out["dryJson"] = run_cli("sync", "run", "--dry-run", "--json", *where)
    out["first"] = run_cli("sync", "run", *where)
    out["again"] = run_cli("sync", "run", "--json", *where)
    out["status"] = run_cli("status", "--json", *where)
    out["doctor"] = run_cli("doctor", "--json", *where)
    return out


def test_init_says_the_first_sync_commits_uncommitted_notes(adopted: dict[str, Any]) -> None:
    assert adopted["init"].code == 0
    assert "it commits each note as it is on disk: uncommitted, staged and untracked ones too" in adopted["init"].out


def test_the_dry_run_counts_the_notes_it_takes_as_they_are(adopted: dict[str, Any]) -> None:
    assert "2 more memory file(s) would be indexed as they are" in adopted["dry"].out  # the TOML note, the id
    assert adopted["dryJson"].json()["asIs"] == 2


def test_a_symlinked_folder_is_one_true_line_everywhere(adopted: dict[str, Any]) -> None:
    for name in ("dry", "first"):
        lines = [line for line in adopted[name].out.splitlines() if "Linked outside" in line or "Loop/up" in line]
        assert lines == [f"~ Linked outside: {LINKED_FOLDER}", f"~ Loop/up: {LINKED_FOLDER}"], adopted[name].out
    skipped = adopted["status"].json()["skipped"]
    links = [s for s in skipped if s["path"] in ("Linked outside", "Loop/up")]
    assert links == [{"path": p, "reason": LINKED_FOLDER} for p in ("Linked outside", "Loop/up")]
    assert sum(s["reason"] == "attachment, not a markdown note" for s in skipped) == 1  # Notes/a.png only
    check = next(c for c in adopted["doctor"].json()["checks"] if c["name"] == "skipped-files")
    assert check["status"] == "ok" and "unusable" not in check["detail"], check


def test_a_committed_empty_note_is_named_by_the_first_sync(adopted: dict[str, Any]) -> None:
    assert "~ Notes/empty.md: no text yet" in adopted["first"].out


def test_a_repeated_run_removes_nothing_from_the_index_but_still_exits_1(adopted: dict[str, Any]) -> None:
    again = adopted["again"]
    report = again.json()
    assert report["malformed"] == ["Notes/bad.md"] and not report["changes"]
    assert report["removedFromIndex"] == 0 and report["index"] == "unchanged", report
    assert again.code == 1  # a malformed file is still there: docs/cli.md's exit 1


def test_get_finds_a_decomposed_file_name_typed_precomposed(adopted: dict[str, Any]) -> None:
    typed = unicodedata.normalize("NFC", CAFE_NFD)
    got = run_cli("get", typed, "--json", "--memory-dir", str(adopted["root"]))
    assert got.code == 0, got.err
    assert got.json()["path"] == CAFE_NFD and "un café noté" in json.dumps(got.json(), ensure_ascii=False)
