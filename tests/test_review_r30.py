"""Review decisions that undo a supersession, and retried decisions that change nothing."""

from __future__ import annotations

from pathlib import Path

from conftest import git

from remnic.config import settings_for
from remnic.service import Memory

HEDGED_CORRECTION = (
    "[2026-03-01T07:00:00Z] Marek: The staging DB port is 5433.\n"
    "[2026-03-02T07:00:00Z] Marek: I think the staging DB port is 5434.\n"
)


def _queued_correction(memory: Memory) -> tuple[str, str]:
    memory.observe_transcript("r", HEDGED_CORRECTION, fmt="plain", flush=True)
    (queued,) = memory.review_queue()
    old = next(r for r in memory.list() if "5433" in r.content)
    return queued.id, old.id


def test_dismissing_an_approved_correction_makes_the_value_it_replaced_current_again(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        new_id, old_id = _queued_correction(memory)
        memory.review_disposition(new_id, "active", reason_code=None, source="test")
        assert memory.get(old_id).status == "superseded"
        assert memory.get(old_id).frontmatter["supersededBy"] == new_id
        before = int(git(root, "rev-list", "--count", "HEAD"))
        result = memory.review_disposition(new_id, "rejected", reason_code="wrong", source="test")
        assert int(git(root, "rev-list", "--count", "HEAD")) == before + 1  # one commit for both files
        old, new = memory.get(old_id), memory.get(new_id)
        assert old.status == "active"
        assert not {"supersededBy", "supersededAt", "invalidAt"} & set(old.frontmatter)
        assert new.status == "rejected" and "supersedes" not in new.frontmatter
        assert old_id in git(root, "show", "--format=%B", "-s", result.commit or "HEAD")
        hits = [h.id for h in memory.recall("staging DB port", top_k=5).hits]
        assert hits[:1] == [old_id] and new_id not in hits
        assert git(root, "status", "--porcelain") == ""


def test_rejecting_leaves_a_memory_superseded_by_another_alone(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        first = memory.store("The build cache lives in S3.", category="fact").record
        second = memory.store("The build cache lives in GCS.", category="fact", extra={"supersedes": first.id}).record
        third = memory.store("The build cache lives in R2.", category="fact", extra={"supersedes": second.id}).record
        memory.update(third.id, {"status": "pending_review"})
        memory.review_disposition(third.id, "rejected", reason_code=None, source="test")
        assert memory.get(second.id).status == "active"  # what the rejected memory replaced
        assert memory.get(first.id).status == "superseded"  # replaced by another: stays as it was
        assert memory.get(first.id).frontmatter["supersededBy"] == second.id


def test_a_retried_approval_makes_no_commit(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        new_id, _ = _queued_correction(memory)
        first = memory.review_disposition(new_id, "active", reason_code="ok", source="test")
        assert first.changed and first.commit
        head = git(root, "rev-parse", "HEAD")
        again = memory.review_disposition(new_id, "active", reason_code="ok", source="test")
        assert not again.changed and again.commit is None
        assert git(root, "rev-parse", "HEAD") == head
        other = memory.review_disposition(new_id, "active", reason_code="re-checked", source="test")
        assert other.changed and git(root, "rev-parse", "HEAD") != head  # a new reason is a new decision
