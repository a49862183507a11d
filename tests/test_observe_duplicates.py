"""Observed facts said again: reinforced when they repeat, superseding when a number or a denial
changes them, and seen by the duplicate checks before the index catches up."""

from __future__ import annotations

import pytest
from test_observe_service import CHAT, CORRECTION

from remnic.service import Memory


def test_a_near_duplicate_in_the_next_flush_reinforces_before_the_index_catches_up(memory: Memory) -> None:
    first = memory.observe(
        "s1", [{"role": "user", "speaker": "Ana", "content": "I prefer dark roast coffee in the morning."}], flush=True
    )
    created = first.flushes[0].created
    assert len(created) == 1
    # The next flush comes at once: the first primitive may still be on its way into the index.
    again = memory.observe(
        "s2", [{"role": "user", "speaker": "Ana", "content": "I prefer dark roast coffee every morning."}], flush=True
    )
    assert again.flushes[0].created == () and again.flushes[0].reinforced == created
    assert [r.frontmatter.get("reinforcement_count") for r in memory.list()] == [1]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("The staging server has 8 cores.", "The staging server has 16 cores."),
        ("We release version 2.3 on Monday.", "We release version 2.4 on Monday."),
        ("I felt so proud running 5 km today!", "I felt so proud running 8 km today!"),
    ],
)
def test_the_same_sentence_with_another_number_is_kept_beside_it_not_reinforcing_it(
    memory: Memory, before: str, after: str
) -> None:
    first = memory.observe("s1", [{"role": "user", "speaker": "Ana", "content": before}], flush=True)
    later = memory.observe("s2", [{"role": "user", "speaker": "Ana", "content": after}], flush=True)
    assert later.flushes[0].reinforced == () and later.flushes[0].superseded == ()
    assert len(first.flushes[0].created) == len(later.flushes[0].created) == 1
    assert sorted(r.status for r in memory.list()) == ["active", "active"]
    assert all("reinforcement_count" not in r.frontmatter for r in memory.list())


def test_a_denial_supersedes_and_the_denied_statement_said_again_later_is_current_again(memory: Memory) -> None:
    said = [{"role": "user", "speaker": "Ana", "content": "I prefer tabs over spaces."}]
    first = memory.observe("s1", said, flush=True)
    later = memory.observe(
        "s2", [{"role": "user", "speaker": "Ana", "content": "I do not prefer tabs over spaces."}], flush=True
    )
    (old_id,), (new_id,) = first.flushes[0].created, later.flushes[0].created
    assert later.flushes[0].reinforced == () and later.flushes[0].superseded == (old_id,)
    old = memory.get(old_id)
    assert old.status == "superseded" and old.frontmatter["supersededBy"] == new_id
    replay = memory.observe("s1", said, flush=True)  # the first transcript once more, its own key: a replay
    assert all(f.created == () for f in replay.flushes) and memory.get(old_id).status == "superseded"
    again = memory.observe("s3", said, flush=True)  # said again in a later session: current again, one file
    assert again.flushes[0].superseded == (new_id,)
    assert memory.get(old_id).status == "active" and memory.get(new_id).status == "superseded"
    assert sorted(r.status for r in memory.list(status=None)) == ["active", "superseded"]


def test_numbered_statements_observed_twice_stay_one_memory_each(memory: Memory) -> None:
    chat = "".join(f"Ana: We decided rule number {i} applies to the deploys.\n" for i in range(6))
    memory.observe_transcript("s1", chat, fmt="plain", flush=True)
    memory.observe_transcript("s2", chat, fmt="plain", flush=True)
    contents = [r.content for r in memory.list(status=None)]
    assert len(contents) == len(set(contents)) == 6


def test_a_reinforcement_adds_the_turn_that_said_it_again_to_the_provenance(memory: Memory) -> None:
    said = "I prefer dark roast coffee in the morning."
    memory.observe("s1", [{"role": "user", "speaker": "Ana", "content": said, "turnId": "a1"}], flush=True)
    memory.observe("s2", [{"role": "user", "speaker": "Ana", "content": said, "turnId": "b7"}], flush=True)
    memory.observe("s3", [{"role": "user", "speaker": "Ana", "content": said, "turnId": "b7"}], flush=True)
    (record,) = memory.list()
    fm = record.frontmatter
    # A caller numbers its turns per conversation: s3's "b7" is another saying than s2's, so it counts.
    assert fm["sourceTurnIds"] == ["a1", "b7"] and fm["sourceTurnId"] == "a1" and fm["reinforcement_count"] == 2


def test_index_later_holds_index_updates_yet_duplicates_and_supersession_see_the_held_writes(memory: Memory) -> None:
    memory.refresh_index()
    indexed_at = memory.index_health()["commit"]
    with memory.index_later():
        memory.observe_transcript("s1", CHAT, fmt="plain", flush=True)
        again = memory.observe_transcript("s2", CHAT, fmt="plain", flush=True)
        correction = memory.observe_transcript("s3", CORRECTION, fmt="plain", flush=True)
        assert memory.index.health(memory.ledger).to_dict()["commit"] == indexed_at  # nothing applied while held
        assert len(memory.indexer.pending_records()) >= 3
    assert again.flushes[0].created == () and len(again.flushes[0].reinforced) == 3
    assert len(correction.flushes[0].superseded) == 1
    hits = memory.recall("staging DB port")  # the block ended: the held writes are indexed
    assert memory.index_health()["state"] == "ok"
    assert [h.content for h in hits if "staging" in h.content] == ["The staging DB port is now 5433."]


def test_a_recall_inside_index_later_catches_the_index_up_first(memory: Memory) -> None:
    with memory.index_later():
        memory.observe_transcript("s1", CHAT, fmt="plain", flush=True)
        hits = memory.recall("release cadence Tuesday")
        assert any("Tuesday" in h.content for h in hits)
        assert not memory.indexer.pending_records()
