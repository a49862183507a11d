"""A fact a reviewer dismissed (rejected) or flagged (quarantined) stays so when it is said again: the
same words, or a near duplicate that claims nothing else, reinforce that memory (count, time, turns,
session) and no new file is written, active or queued; another claim is still a new fact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import git, run_cli, run_remnic, snapshot_tree

from remnic.service import Memory

SAID = "We deploy staging with ArgoCD."
STORED = "Ana and others deploy staging with ArgoCD."  # as the observer writes a group's "we"


def _said(when: str, text: str) -> str:
    return f"[2026-11-{when}T10:00:00Z] Ana: {text}\n"


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "facts").glob("*.md"))


def _decided(root: Path, text: str, status: str) -> str:
    """One observed fact, then a review's decision on it (flag first: a review decides the queue)."""
    with Memory.open(root) as memory:
        memory.observe_transcript("e1", _said("26", text), flush=True)
        [fact] = memory.list()
        if fact.status == "active":
            memory.review_disposition(fact.id, "quarantined", reason_code="doubtful")
        if status == "rejected":
            memory.review_disposition(fact.id, "rejected", reason_code="wrong")
        return fact.id


def _init(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    return root


def test_a_dismissed_fact_said_again_reinforces_it_and_stays_rejected(tmp_path: Path) -> None:
    root = _init(tmp_path)
    dismissed = _decided(root, SAID, "rejected")
    before = _files(root)
    with Memory.open(root) as memory:
        result = memory.observe_transcript("e2", _said("27", SAID), flush=True)
        [flush] = result.flushes
        assert (flush.created, flush.reinforced) == ((), (dismissed,))
        assert [o.resulting_primitive_id for o in result.observations] == [dismissed]
        [record] = memory.list()
    assert _files(root) == before
    fm: dict[str, Any] = record.frontmatter
    assert record.id == dismissed and record.status == "rejected" and record.content == STORED
    assert fm["reinforcement_count"] == 1 and fm["last_reinforced_at"] and fm["reviewReasonCode"] == "wrong"
    assert fm["sessionKeys"] == ["e1", "e2"] and fm["sourceTurnIds"] == ["L1"]
    assert "Remnic-Reinforced: 1" in git(root, "log", "-1", "--format=%B")

    # Said once more, through the CLI in a process of its own (the index may still have it as it was).
    out = run_remnic(
        "observe", "-", "--session-key", "e3", "--flush", "--memory-dir", str(root), stdin=_said("28", SAID)
    )
    assert out.code == 0, out.err
    assert "0 new, 1 reinforced" in out.out, out.out
    got = run_cli("get", dismissed, "--json", "--memory-dir", str(root)).json()
    assert got["status"] == "rejected" and got["frontmatter"]["reinforcement_count"] == 2
    assert _files(root) == before

    # A new, different claim is still written, and active.
    out = run_remnic(
        "observe", "-", "--session-key", "e4", "--flush", "--json", "--memory-dir", str(root),
        stdin=_said("28", "We deploy staging with Flux."),
    )  # fmt: skip
    assert out.code == 0, out.err
    [flush] = out.json()["flushes"]
    assert flush["created"] == 1 and flush["reinforced"] == 0
    active = run_cli("list", "--status", "active", "--json", "--memory-dir", str(root)).json()["memories"]
    assert [m["content"] for m in active] == ["Ana and others deploy staging with Flux."]


def test_a_flagged_fact_said_again_stays_quarantined_and_the_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = _init(tmp_path)
    flagged = _decided(root, SAID, "quarantined")
    d = ["--memory-dir", str(root)]
    tree, head = snapshot_tree(root), git(root, "rev-parse", "HEAD")
    preview = run_remnic(
        "observe", "-", "--session-key", "e2", "--flush", "--dry-run", "--json", *d, stdin=_said("27", SAID)
    )
    assert preview.code == 0, preview.err
    planned = preview.json()
    [flush] = planned["flushes"]
    assert (flush["created"], flush["reinforced"], flush["createdIds"]) == (None, None, None)  # never predicted
    assert [(o["judgeVerdict"], o["fact"]["content"]) for o in planned["observations"]] == [("accept", STORED)]
    assert snapshot_tree(root) == tree and git(root, "rev-parse", "HEAD") == head

    done = run_remnic("observe", "-", "--session-key", "e2", "--flush", "--json", *d, stdin=_said("27", SAID))
    assert done.code == 0, done.err
    result = done.json()
    # The run makes the observations the dry run predicted; they are the flagged memory.
    assert [(o["judgeVerdict"], o["fact"]["content"]) for o in result["observations"]] == [("accept", STORED)]
    assert [o["resultingPrimitiveId"] for o in result["observations"]] == [flagged]
    assert (result["flushes"][0]["created"], result["flushes"][0]["reinforcedIds"]) == (0, [flagged])
    [record] = run_cli("list", "--json", *d).json()["memories"]
    assert record["id"] == flagged and record["status"] == "quarantined"
    assert run_cli("get", flagged, "--json", *d).json()["frontmatter"]["reinforcement_count"] == 1


def test_a_dismissed_deferred_fact_said_again_is_not_queued_again(tmp_path: Path) -> None:
    root = _init(tmp_path)
    hedged = "Maybe we should move the standup to 9:30, not sure yet."
    dismissed = _decided(root, hedged, "rejected")
    before = _files(root)
    with Memory.open(root) as memory:
        for i, when in enumerate(("27", "28")):
            memory.observe_transcript(f"s{i}", _said(when, hedged), flush=True)
        assert memory.list(status="pending_review") == []
        [record] = memory.list()
    assert record.id == dismissed and record.status == "rejected"
    assert record.frontmatter["reinforcement_count"] == 2
    assert _files(root) == before


def test_a_rewording_reinforces_the_dismissed_fact_but_another_claim_or_a_memory_in_use_comes_first(
    tmp_path: Path,
) -> None:
    root = _init(tmp_path)
    dismissed = _decided(root, SAID, "rejected")
    with Memory.open(root) as memory:
        reworded = memory.observe_transcript("e2", _said("27", "We deploy our staging with ArgoCD."), flush=True)
        assert reworded.flushes[0].reinforced == (dismissed,) and reworded.flushes[0].created == ()
        for i, other in enumerate(("We deploy staging with Flux.", "We deploy production with ArgoCD.")):
            written = memory.observe_transcript(f"o{i}", _said("28", other), flush=True)
            assert len(written.flushes[0].created) == 1, other
        assert memory.get(dismissed).status == "rejected"
        assert memory.get(dismissed).frontmatter["reinforcement_count"] == 1
        assert sorted(m.content for m in memory.list(status="active")) == [
            "Ana and others deploy production with ArgoCD.",
            "Ana and others deploy staging with Flux.",
        ]

        # Stored again by hand after the dismissal: the memory in use is the one said again.
        kept = memory.store(STORED, category="fact").record.id
        result = memory.observe_transcript("e3", _said("29", SAID), flush=True)
        assert result.flushes[0].reinforced == (kept,)
        assert memory.get(dismissed).frontmatter["reinforcement_count"] == 1
