"""Feedback and citations raise a memory's usage counters in one commit, leaving its text alone."""

from __future__ import annotations

import json
import threading

import pytest
from conftest import git

from remnic.errors import ValidationError
from remnic.service.memory import Memory


def test_votes_raise_counters_without_touching_body_or_updated(memory: Memory) -> None:
    stored = memory.store("We deploy on Tuesdays", category="decision").record
    before = (memory.root / stored.path).read_text()
    up = memory.feedback(stored.id, "up", note="this answered it", session_key="s1")
    assert (up["reinforcement_count"], up["accessCount"], up["feedbackUp"], up["feedbackDown"]) == (1, 1, 1, 0)
    down = memory.feedback(stored.id, signal="thumbs_down")
    assert (down["reinforcement_count"], down["accessCount"], down["feedbackDown"]) == (1, 2, 1)
    after = memory.get(stored.id)
    assert after.content == stored.content and after.frontmatter["updated"] == stored.frontmatter["updated"]
    assert after.frontmatter["lastRecalledAt"] == down["lastRecalledAt"]
    assert before.split("---", 2)[2] == (memory.root / stored.path).read_text().split("---", 2)[2]  # body bytes
    assert "Remnic-Operation: feedback" in git(memory.root, "log", "-1", "--format=%B")
    ledger = [json.loads(x) for x in (memory.root / "state" / "feedback.jsonl").read_text().splitlines()]
    assert [(e["vote"], e.get("note")) for e in ledger] == [("up", "this answered it"), ("down", None)]


def test_a_vote_needs_a_valid_vote_or_signal(memory: Memory) -> None:
    memory_id = memory.store("x y z").id
    for kwargs in ({}, {"vote": "sideways"}, {"signal": "meh"}, {"vote": "up", "signal": "thumbs_down"}):
        with pytest.raises(ValidationError):
            memory.feedback(memory_id, **kwargs)


def test_concurrent_votes_lose_no_count(memory: Memory) -> None:
    memory_id = memory.store("Ana prefers tabs", category="preference").id
    threads = [threading.Thread(target=memory.feedback, args=(memory_id, "up")) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert memory.get(memory_id).frontmatter["reinforcement_count"] == 8


def test_citations_match_paths_and_raise_reinforcement(memory: Memory) -> None:
    a = memory.store("We deploy on Tuesdays").record
    b = memory.store("The VPN needs a hardware key").record
    out = memory.observe_citations(
        [
            {"path": a.path, "lineStart": 1, "lineEnd": 4},
            {"path": str(memory.root / b.path), "lineStart": 2, "lineEnd": 2, "note": "used"},
            {"path": "facts/nowhere.md"},
            {"lineStart": 3},
        ],
        rollout_ids=["r1", "r2"],
    )
    assert (out["submitted"], out["matched"], out["entriesReceived"], out["rolloutIdsReceived"]) == (3, 2, 4, 2)
    assert set(out["memoryIds"]) == {a.id, b.id} and out["commit"]
    for memory_id in (a.id, b.id):
        fm = memory.get(memory_id).frontmatter
        assert fm["reinforcement_count"] == 1 and fm["accessCount"] == 1 and "lastRecalledAt" in fm
    assert memory.observe_citations([{"path": "missing.md"}])["matched"] == 0


def test_feedback_and_citations_refuse_retired_memories_and_entity_pages(memory: Memory) -> None:
    gone = memory.store("The staging box is called kestrel").record
    memory.forget(gone.id, "renamed")
    memory.store("Priya Raman approved the Postgres 16 upgrade.")
    memory.refresh_entities()
    page = memory.get("person-priya-raman")
    head = memory.head()
    with pytest.raises(ValidationError, match=f"{gone.id} is forgotten"):
        memory.feedback(gone.id, "up")
    with pytest.raises(ValidationError, match="person-priya-raman is an entity page, not a recall result"):
        memory.feedback(page.id, "up")
    for cited in (gone.path, page.path):
        with pytest.raises(ValidationError):
            memory.observe_citations([{"path": cited, "lineStart": 1, "lineEnd": 2}])
    assert memory.head() == head and "accessCount" not in memory.get(gone.id).frontmatter
    assert not (memory.root / "state" / "feedback.jsonl").exists()


def test_an_upvoted_memory_carries_a_reinforcement_boost_in_the_xray(memory: Memory) -> None:
    first = memory.store("Deploys happen on Tuesdays after standup").id
    memory.store("Deploys happen on Thursdays in the hotfix window")
    for _ in range(3):
        memory.feedback(first, "up")
    result = memory.recall("when do deploys happen", xray=True)
    hit = next(h for h in result if h.id == first)
    assert hit.terms.reinforcement > 0
    row = next(r for r in result.xray.to_dict()["results"] if r["memoryId"] == first)
    assert row["scoreDecomposition"]["reinforcementBoost"] > 0
