"""`remnic review list|approve|dismiss|flag`: the facts the judge deferred, decided by a person."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, run_remnic, snapshot_tree

from remnic.config import settings_for
from remnic.service import Memory

HEDGED = """\
Ana: I think we might move the standup to 10:00 maybe.
Ana: Perhaps I prefer green tea, not sure.
Ana: We decided to cut releases every Tuesday.
Ben: I will probably switch to Rust for the parser someday.
"""


def review(root: Path, *args: str) -> dict:
    out = run_remnic("review", *args, "--json", "--memory-dir", str(root))
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
