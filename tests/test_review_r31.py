"""Review decisions on a correction whose status a person already set by hand (not committed yet):
judged against what git has, so the values it replaced are revived or replaced again all the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.service import Memory

HEDGED_CORRECTION = (
    "[2026-03-01T07:00:00Z] Marek: The staging DB port is 5433.\n"
    "[2026-03-02T07:00:00Z] Marek: I think the staging DB port is 5434.\n"
)


def _approved_correction(root: Path) -> tuple[str, str, Path]:
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.observe_transcript("r", HEDGED_CORRECTION, fmt="plain", flush=True)
        (queued,) = memory.review_queue()
        old = next(r for r in memory.list() if "5433" in r.content)
        memory.review_disposition(queued.id, "active", reason_code=None, source="test")
        assert memory.get(old.id).status == "superseded"
        return queued.id, old.id, root / memory.get(queued.id).path


def _hand_set(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert f"\nstatus: {old}\n" in text
    path.write_text(text.replace(f"\nstatus: {old}\n", f"\nstatus: {new}\n"), encoding="utf-8")


def _statuses(root: Path) -> dict[str, str]:
    listed = run_cli("list", "--json", "--memory-dir", str(root)).json()["memories"]
    return {r["id"]: r["status"] for r in listed}


@pytest.mark.parametrize("reason", [["--reason", "wrong"], []])
def test_dismissing_a_correction_already_marked_rejected_by_hand_revives_what_it_replaced(
    tmp_path: Path, reason: list[str]
) -> None:
    root = tmp_path / "mem"
    new_id, old_id, path = _approved_correction(root)
    _hand_set(path, "active", "rejected")
    head = git(root, "rev-parse", "HEAD")

    result = run_cli("review", "dismiss", new_id, *reason, "--memory-dir", str(root))
    assert result.code == 0, result
    assert "already" not in result.out and "now rejected" in result.out
    assert git(root, "rev-parse", "HEAD") != head  # HEAD said active: the decision is committed
    assert _statuses(root) == {new_id: "rejected", old_id: "active"}
    rel = path.relative_to(root).as_posix()
    assert "status: rejected" in git(root, "show", f"HEAD:{rel}")
    assert git(root, "status", "--porcelain") == ""  # the hand edit is all in the decision's commit
    hits = run_cli("query", "staging DB port", "--json", "--memory-dir", str(root)).json()["hits"]
    assert [h["id"] for h in hits] == [old_id]

    again = run_cli("review", "dismiss", new_id, *reason, "--memory-dir", str(root))
    assert again.code == 0 and "already rejected" in again.out  # now HEAD says it too: a retry


def test_approving_a_dismissed_correction_already_set_active_by_hand_replaces_the_value_again(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    new_id, old_id, path = _approved_correction(root)
    assert run_cli("review", "dismiss", new_id, "--memory-dir", str(root)).code == 0
    assert _statuses(root) == {new_id: "rejected", old_id: "active"}
    _hand_set(path, "rejected", "active")

    result = run_cli("review", "approve", new_id, "--memory-dir", str(root))
    assert result.code == 0 and "already" not in result.out, result
    assert _statuses(root) == {new_id: "active", old_id: "superseded"}
    hits = run_cli("query", "staging DB port", "--json", "--memory-dir", str(root)).json()["hits"]
    assert [h["id"] for h in hits] == [new_id]


def test_update_status_rejected_on_a_hand_rejected_correction_revives_too(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    new_id, old_id, path = _approved_correction(root)
    _hand_set(path, "active", "rejected")
    result = run_cli("update", new_id, "--status", "rejected", "--memory-dir", str(root))
    assert result.code == 0, result
    assert _statuses(root) == {new_id: "rejected", old_id: "active"}
