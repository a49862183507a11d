"""A rejection a person set by hand and sync committed leaves the value it replaced superseded by a rejected
memory: dismissing it then is no retry, it revives that value (one commit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.service import Memory
from remnic.service.superseding import stranded_by


def _id(result: object) -> str:
    return str(result.json()["id"])  # type: ignore[attr-defined]


def _corrected(root: Path, *, reviewed: bool) -> tuple[str, str, Path]:
    """A = the old on-call phone, B superseding it (approved from the queue when ``reviewed``)."""
    assert run_cli("init", str(root)).code == 0
    d = ["--memory-dir", str(root)]
    a = _id(run_cli("store", "The on-call phone is 555-0100.", "--json", *d))
    b = _id(run_cli("store", "The on-call phone is 555-0199.", "--supersedes", a, "--json", *d))
    if reviewed:
        assert run_cli("update", b, "--status", "pending_review", *d).code == 0
        assert run_cli("review", "approve", b, *d).code == 0
    path = root / run_cli("get", b, "--json", *d).json()["path"]
    return a, b, path


def _reject_by_hand_and_sync(root: Path, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "\nstatus: active\n" in text
    path.write_text(text.replace("\nstatus: active\n", "\nstatus: rejected\n"), encoding="utf-8")
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    assert git(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("reviewed", [True, False])
def test_dismissing_a_rejection_sync_committed_revives_what_it_replaced(tmp_path: Path, reviewed: bool) -> None:
    root = tmp_path / "mem"
    d = ["--memory-dir", str(root)]
    a, b, path = _corrected(root, reviewed=reviewed)
    _reject_by_hand_and_sync(root, path)
    assert run_cli("get", a, "--json", *d).json()["status"] == "superseded"
    with Memory.open(root) as memory:
        assert stranded_by(memory.list()) == [(a, b)]
    checks = {c["name"]: c for c in run_cli("doctor", "--json", *d).json()["checks"]}
    stranded = checks["superseded-by-rejected"]
    assert stranded["status"] == "warn" and f"`remnic review dismiss {b}`" in stranded["problems"][0]
    head = git(root, "rev-parse", "HEAD").strip()

    result = run_cli("review", "dismiss", b, "--json", *d)
    assert result.code == 0, result
    assert result.json()["changed"] is True and result.json()["commit"], result.json()
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert run_cli("get", a, "--json", *d).json()["status"] == "active"
    assert run_cli("get", b, "--json", *d).json()["status"] == "rejected"
    hits = run_cli("query", "on-call phone", "--json", *d).json()["hits"]
    assert [h["id"] for h in hits] == [a]
    with Memory.open(root) as memory:
        assert stranded_by(memory.list()) == []
    checks = {c["name"]: c for c in run_cli("doctor", "--json", *d).json()["checks"]}
    assert checks["superseded-by-rejected"]["status"] == "ok"
    assert git(root, "status", "--porcelain") == ""

    again = run_cli("review", "dismiss", b, "--json", *d)  # nothing stranded any more: a retry
    assert again.code == 0 and again.json()["changed"] is False and again.json()["commit"] is None


def test_a_rejected_memory_with_nothing_stranded_is_still_refused_without_a_review(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    d = ["--memory-dir", str(root)]
    assert run_cli("init", str(root)).code == 0
    b = _id(run_cli("store", "The on-call phone is 555-0199.", "--json", *d))
    assert run_cli("update", b, "--status", "rejected", *d).code == 0
    result = run_cli("review", "dismiss", b, *d)
    assert result.code != 0 and "not waiting for review" in result.err, result
