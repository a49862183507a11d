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
        assert (
            new.status == "rejected" and new.frontmatter["supersedes"] == old_id
        )  # kept: approving it again replaces it
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


def test_dismissing_one_that_replaced_several_revives_them_all_and_approving_replaces_them_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        a = memory.store("The release train leaves on Mondays.", category="fact").record
        b = memory.store("The release train leaves on Tuesdays.", category="fact").record
        c = memory.store("The release train leaves on Thursdays.", category="fact").record
        memory.update(c.id, {"supersedes": a.id})
        memory.update(c.id, {"supersedes": b.id})  # a stays superseded by c; c's field now names b
        assert {memory.get(a.id).status, memory.get(b.id).status} == {"superseded"}
        memory.update(c.id, {"status": "pending_review"})
        memory.review_disposition(c.id, "rejected", reason_code="wrong", source="test")
        assert memory.get(a.id).status == memory.get(b.id).status == "active"
        assert sorted(memory.get(c.id).frontmatter["supersedes"]) == sorted([a.id, b.id])
        memory.review_disposition(c.id, "active", reason_code="right after all", source="test")
        for old in (a, b):
            now = memory.get(old.id)
            assert now.status == "superseded" and now.frontmatter["supersededBy"] == c.id
        assert [h.id for h in memory.recall("when does the release train leave", top_k=3).hits][:1] == [c.id]
        assert git(root, "status", "--porcelain") == ""


def test_reviving_keeps_a_hand_edit_of_the_revived_file_uncommitted(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        old = memory.store("The staging DB port is 5432.", category="fact").record
        new = memory.store("The staging DB port is 5433.", category="fact", extra={"supersedes": old.id}).record
        path = root / old.path
        path.write_text(path.read_text().replace("5432.", "5432 (the default)."))
        memory.review_disposition(new.id, "quarantined", reason_code=None, source="test")
        memory.review_disposition(new.id, "rejected", reason_code=None, source="test")
        committed = git(root, "show", f"HEAD:{old.path}")
        assert "status: active" in committed and "(the default)" not in committed
        on_disk = path.read_text()
        assert "status: active" in on_disk and "(the default)" in on_disk
        assert git(root, "status", "--porcelain").split() == ["M", old.path]
