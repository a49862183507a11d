"""Hand-written status words: `pending-review`, `quarantine`, `Rejected`, `removed` … are the statuses they
name (they take the memory out of recall, as meant); a word naming no status still reads active (a vault's
`draft` must not vanish) but `remnic doctor` warns, naming the file, the field and the valid statuses. The
file's bytes stay as written. (A vault's own workflow words — `reject`, `forget`, `review`, `flagged` — name
no status: tests/test_r34_v2fix_status_words.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.memfile.schema import STATUSES
from remnic.memfile.values import status_word, unknown_status


@pytest.mark.parametrize(
    ("word", "status"),
    [
        ("pending-review", "pending_review"),
        ("Pending Review", "pending_review"),
        ("quarantine", "quarantined"),
        ("REJECTED", "rejected"),
        ("Deleted", "forgotten"),
        ("archive", "archived"),
        ("Superseded", "superseded"),
        ("needs-review", "pending_review"),
        ("Active", "active"),
        ("pending_review", "pending_review"),
    ],
)
def test_status_words_read_as_the_status_they_name(word: str, status: str) -> None:
    assert status_word(word) == status
    assert not unknown_status({"status": word})


def test_words_naming_no_status_are_unknown() -> None:
    for word in ("pending-reveiw", "draft", "done", 42):
        assert status_word(word) is None and unknown_status({"status": word}), word
    assert not unknown_status({}) and not unknown_status({"status": ""})


def _stored(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    mid = run_cli("store", "The prod DB password rotates every Monday.", "--json", "--memory-dir", str(root)).json()
    return root, root / mid["path"], mid["id"]


def _set_status(root: Path, path: Path, word: str) -> None:
    text = path.read_text(encoding="utf-8")
    lines = [f"status: {word}" if line.startswith("status:") else line for line in text.split("\n")]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0


@pytest.mark.parametrize(
    ("word", "status"),
    [
        ("pending-review", "pending_review"),
        ("quarantine", "quarantined"),
        ("Rejected", "rejected"),
        ("removed", "forgotten"),
    ],
)
def test_a_hand_edited_status_word_takes_the_memory_out_of_recall(tmp_path: Path, word: str, status: str) -> None:
    root, path, mid = _stored(tmp_path)
    d = ["--memory-dir", str(root)]
    _set_status(root, path, word)
    assert run_cli("get", mid, "--json", *d).json()["status"] == status
    assert run_cli("list", "--status", "active", "--json", *d).json()["memories"] == []
    assert f"\nstatus: {word}\n" in path.read_text(encoding="utf-8")  # kept as written
    checks = {c["name"]: c for c in run_cli("doctor", "--json", *d).json()["checks"]}
    assert checks["foreign-values"]["status"] == "ok", checks["foreign-values"]


def test_a_status_naming_none_reads_active_and_doctor_warns_with_the_valid_statuses(tmp_path: Path) -> None:
    root, path, mid = _stored(tmp_path)
    d = ["--memory-dir", str(root)]
    _set_status(root, path, "pending-reveiw")
    assert git(root, "status", "--porcelain") == ""
    assert run_cli("get", mid, "--json", *d).json()["status"] == "active"  # fail-open, as docs/remnic-compat.md says
    doctor = run_cli("doctor", "--json", *d)
    check = {c["name"]: c for c in doctor.json()["checks"]}["foreign-values"]
    assert check["status"] == "warn", check
    [line] = check["problems"]
    rel = path.relative_to(root).as_posix()
    assert line.startswith(f"{rel}: status 'pending-reveiw'") and "read as 'active'" in line, line
    assert "valid statuses: " + ", ".join(STATUSES) in line, line
    text = run_cli("doctor", *d).out
    assert "[WARN] foreign-values" in text and rel in text
