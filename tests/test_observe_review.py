"""`remnic review list|approve|dismiss|flag`: the facts the judge deferred, decided by a person."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import git, run_cli, run_remnic, snapshot_tree

from remnic.config import settings_for
from remnic.service import Memory

HEDGED = """\
Ana: I think we might move the standup to 10:00 maybe.
Ana: Perhaps I prefer green tea, not sure.
Ana: We decided to cut releases every Tuesday.
Ben: I will probably switch to Rust for the parser someday.
"""


def review(root: Path, *args: str) -> dict:
    out = run_cli("review", *args, "--json", "--memory-dir", str(root))
    assert out.code == 0, out.err
    return json.loads(out.out)


def test_deferred_facts_wait_for_review_and_each_disposition_lands_in_one_commit(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.observe_transcript("s", HEDGED, fmt="plain", flush=True)
    queued = review(root, "list")
    by_text = {m["content"]: m["id"] for m in queued["memories"]}
    assert queued["count"] == 3 and all(m["status"] == "pending_review" for m in queued["memories"])
    assert "We decided to cut releases every Tuesday." not in by_text  # accepted: active at once
    rust = by_text["Ben will probably switch to Rust for the parser someday."]
    tea = by_text["Perhaps Ana prefers green tea, not sure."]
    standup = by_text["Ana thinks we might move the standup to 10:00 maybe."]

    before = int(git(root, "rev-list", "--count", "HEAD"))
    assert review(root, "approve", rust)["status"] == "active"
    dismissed = review(root, "dismiss", tea, "--reason", "not-durable")
    assert dismissed["status"] == "rejected" and dismissed["frontmatter"]["reviewReasonCode"] == "not-durable"
    assert review(root, "flag", standup)["status"] == "quarantined"
    assert int(git(root, "rev-list", "--count", "HEAD")) == before + 3  # one commit each

    left = review(root, "list")
    assert [m["id"] for m in left["memories"]] == [standup]  # a flagged memory stays in view
    with Memory.open(settings=settings_for(root)) as memory:
        hits = {h.id for h in memory.recall("Rust parser, green tea, standup time", top_k=10).hits}
    assert rust in hits and tea not in hits and standup not in hits  # only what was approved is recalled

    files = snapshot_tree(root)
    missing = run_remnic("review", "approve", "mem_00000000000000000000", "--memory-dir", str(root))
    assert missing.code == 1 and "no memory with id 'mem_00000000000000000000'" in missing.err
    assert snapshot_tree(root) == files  # a bad id changes nothing

    changed_mind = review(root, "approve", tea)  # no reason: the dismissal's reason is not the approval's
    assert changed_mind["status"] == "active" and "reviewReasonCode" not in changed_mind["frontmatter"]


def test_review_decides_only_queued_memories_and_refuses_the_rest_changing_nothing(memory: Memory) -> None:
    d = str(memory.root)
    gone = memory.store("Ana's home address is 12 Elm Street").record
    memory.forget(gone.id, reason="GDPR")
    old = memory.store("The office wifi password rotates monthly").record
    new = memory.store("The office wifi password rotates weekly", extra={"supersedes": old.id}).record
    plain = memory.store("Releases are cut every Tuesday").record  # active, never queued
    files, head = snapshot_tree(memory.root), git(memory.root, "rev-parse", "HEAD")
    for action, target, status in (
        ("approve", gone, "forgotten"),
        ("flag", gone, "forgotten"),
        ("approve", old, "superseded"),
        ("dismiss", old, "superseded"),
        ("dismiss", plain, "active"),
    ):
        result = run_cli("review", action, target.id, "--memory-dir", d)
        assert result.code == 2 and f"{target.id} is {status}" in result.err, (action, status, result.err)
        assert "not waiting for review" in result.err and f"remnic update {target.id} --status" in result.err
    assert f"(by {new.id})" in run_cli("review", "approve", old.id, "--memory-dir", d).err
    assert f"`remnic update {gone.id} --status active`" in run_cli("review", "approve", gone.id, "--memory-dir", d).err
    assert snapshot_tree(memory.root) == files and git(memory.root, "rev-parse", "HEAD") == head
    hits = {h.id for h in memory.recall("home address, wifi password rotation", top_k=10).hits}
    assert gone.id not in hits and old.id not in hits and new.id in hits

    # A queued memory is decided, and a person may change their mind about their own decision.
    queued = memory.store("Maybe move the standup to ten", extra={"status": "pending_review"}).record
    assert run_cli("review", "dismiss", queued.id, "--memory-dir", d).code == 0
    assert run_cli("review", "approve", queued.id, "--memory-dir", d).code == 0
    assert memory.get(queued.id).status == "active"
    # An active memory someone doubts may be flagged into the queue.
    assert run_cli("review", "flag", plain.id, "--memory-dir", d).code == 0
    assert memory.get(plain.id).status == "quarantined"


def test_a_deferred_fact_said_again_in_another_session_is_reinforced_not_queued_twice(memory: Memory) -> None:
    said = "Ana: I think maybe we could try moving the release to Thursday.\n"
    first = memory.observe_transcript("monday", said, fmt="plain", flush=True)
    (queued,) = first.flushes[0].created
    again = memory.observe_transcript("tuesday", said, fmt="plain", flush=True)  # committed and indexed by now
    assert again.flushes[0].created == () and [o.resulting_primitive_id for o in again.observations] == [queued]
    waiting, total = memory.review_page()
    assert [m.id for m in waiting] == [queued] and total == 1
    assert memory.get(queued).frontmatter["reinforcement_count"] >= 1
    # With the index gone, the files say the same.
    memory.close()
    shutil.rmtree(memory.root / ".remnic" / "index")
    with Memory.open(memory.root, settings=settings_for(memory.root)) as reopened:
        third = reopened.observe_transcript("wednesday", said, fmt="plain", flush=True)
    assert third.flushes[0].created == () and [o.resulting_primitive_id for o in third.observations] == [queued]
