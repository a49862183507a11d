"""Consolidation of observed memories: `remnic consolidate`, and the passes that long-running
processes (the server, the watcher) run after flushes and for sessions their hosts left idle."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import git, run_cli, run_remnic
from test_sync_watch import Running, wait_until

from remnic.config import settings_for
from remnic.drivers.watch import watch_line
from remnic.errors import ValidationError
from remnic.server import Api, Authenticator
from remnic.server.auth import TokenStore
from remnic.server.http import running_server
from remnic.service import Memory
from remnic.service.memory import MemoryRecord

FIRST = "[2026-05-02T09:00:00Z] Ben: I prefer tabs over spaces in the Python code.\n"
SECOND = "[2026-05-03T09:00:00Z] Ben: I prefer tabs over spaces in Python code.\n"
# Flushes that see no near-duplicate (a word overlap no pair reaches): both facts are written, as when
# two flushes commit at once or the index lags. Consolidation, with the defaults, then merges them.
BLIND = {"near_duplicate_word_overlap": 1.01}


def two_near_duplicates(root: Path) -> tuple[MemoryRecord, MemoryRecord]:
    Memory.init(root, settings=settings_for(root)).close()
    with Memory.open(settings=settings_for(root, observe=BLIND)) as memory:
        memory.observe_transcript("s1", FIRST, fmt="plain", flush=True)
        memory.observe_transcript("s2", SECOND, fmt="plain", flush=True)
        first, second = sorted(memory.list(status="active"), key=lambda r: r.created)
    assert "the Python" in first.content and "the Python" not in second.content
    return first, second


def test_consolidate_merges_near_duplicates_the_flushes_let_through(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    first, second = two_near_duplicates(root)
    out = run_remnic("consolidate", "--json", "--memory-dir", str(root))
    assert out.code == 0, out.err
    assert json.loads(out.out)["merged"] == [{"id": second.id, "into": first.id}]
    assert git(root, "log", "-1", "--format=%s").startswith("remnic consolidate: 1 near-duplicate")
    with Memory.open(settings=settings_for(root)) as memory:
        merged, survivor = memory.get(second.id), memory.get(first.id)
        assert merged.status == "archived" and merged.frontmatter["mergedInto"] == first.id
        assert survivor.status == "active" and survivor.frontmatter["reinforcement_count"] == 1
        assert survivor.frontmatter["derived_from"] == [second.id]
        remaps = (root / "state" / "observation-ledger" / "primitive-remaps.jsonl").read_text().splitlines()
        assert [(r["from"], r["to"]) for r in map(json.loads, remaps)] == [(second.id, first.id)]
        hits = [h.id for h in memory.recall("tabs or spaces in Python", top_k=5).hits]
        assert first.id in hits and second.id not in hits
        again = memory.consolidate()
        assert again.merged == [] and again.commit is None  # nothing left to merge, no commit


def test_the_server_consolidates_flushes_another_process_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent hooks flush in processes of their own; the server, between requests, finds their
    flush commits and consolidates (observe.tendIntervalS)."""
    root = tmp_path / "mem"
    first, second = two_near_duplicates(root)
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "tokens.json"))
    store = TokenStore()
    store.generate("alice")
    with Memory.open(settings=settings_for(root, observe={"tend_interval_s": 0.2})) as memory:
        with running_server(Api(memory), Authenticator(store)):
            wait_until(lambda: memory.get(second.id).status == "archived", timeout=60, what="the server to consolidate")
        assert memory.get(second.id).frontmatter["mergedInto"] == first.id


def test_a_session_its_host_left_idle_is_flushed_by_the_next_tending_pass(memory: Memory) -> None:
    memory.background_work = True  # as the server and the watcher are
    memory.observe_transcript("left-open", FIRST, fmt="plain")  # buffered: the host never said it ended
    assert memory.list(status="active") == []
    assert memory.tend_observations(source="watch") == {"flushed": [], "consolidating": False}  # not idle yet
    (journal,) = (memory.root / "state").glob("observe-buffer/*/*.jsonl")
    old = time.time() - 2 * 3600  # past observe.bufferMaxMinutes (30)
    os.utime(journal, (old, old))
    done = memory.tend_observations(source="watch")
    assert done == {"flushed": ["left-open"], "consolidating": True}
    assert [r.content for r in memory.list(status="active")] == ["Ben prefers tabs over spaces in the Python code."]
    assert watch_line({"event": "observations", **done}) == (
        "flushed idle session(s) left-open; consolidating the new observations"
    )
    assert memory.tend_observations(source="watch") == {"flushed": [], "consolidating": False}  # nothing new


def test_flushes_during_a_background_pass_make_it_run_once_more_not_once_each(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.background_work = True
    real, passes = memory.consolidate, []

    def slow(**kwargs: object) -> object:
        passes.append(time.monotonic())
        time.sleep(0.3)  # a pass that takes a while: the flushes below land during it
        return real()

    monkeypatch.setattr(memory, "consolidate", slow)
    for _ in range(5):
        memory.schedule_consolidation()
    wait_until(lambda: memory._consolidation is None, timeout=30, what="the passes to end")
    assert len(passes) == 2  # the first, and one more for the four that came meanwhile
    memory.schedule_consolidation()
    wait_until(lambda: memory._consolidation is None and len(passes) == 3, timeout=30, what="a new pass")


@pytest.mark.parametrize("days", ["-1", "0", "nan", "soon"])
def test_consolidate_refuses_a_window_that_is_not_a_positive_number_of_days(memory: Memory, days: str) -> None:
    out = run_cli("consolidate", "--days", days, "--memory-dir", str(memory.root))
    assert out.code == 2 and "--days must be a positive number" in out.err
    with pytest.raises(ValidationError, match="days"):
        memory.consolidate(days=float(days) if days != "soon" else days)  # type: ignore[arg-type]


def test_dedup_and_consolidate_keep_contradicting_memories_and_a_merge_keeps_the_tags(memory: Memory) -> None:
    first = memory.store("The staging database runs on port 5433", tags=["infra"]).record
    other = memory.store("The staging database runs on port 5434", tags=["infra"]).record
    again = memory.store("The staging database runs on port 5433.", tags=["db"]).record
    merged = memory.dedup(merge=True)
    assert [(g.survivor.id, [r.id for r in g.others]) for g in merged.groups] == [(first.id, [again.id])]
    assert memory.get(other.id).status == "active" and memory.get(again.id).status == "archived"
    assert memory.get(first.id).frontmatter["tags"] == ["infra", "db"]


def test_consolidate_does_not_merge_a_denial_into_what_it_denies(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    with Memory.open(settings=settings_for(root, observe=BLIND)) as memory:
        memory.observe_transcript("s1", FIRST, fmt="plain", flush=True)
        memory.observe_transcript("s2", FIRST.replace("I prefer", "I do not prefer"), fmt="plain", flush=True)
        assert memory.consolidate().merged == []
        assert sorted(r.status for r in memory.list()) == ["active", "active"]


def test_the_watcher_says_what_each_consolidation_pass_did(tmp_path: Path) -> None:
    """The pass runs on a background thread; the watcher prints its result between its own lines."""
    root = tmp_path / "mem"
    first, second = two_near_duplicates(root)
    with Memory.open(settings=settings_for(root)) as memory:
        running = Running(memory, debounce_ms=100)
        running.thread.start()
        try:
            wait_until(lambda: running.of("consolidated"), timeout=60, what="the watcher to report the pass")
        finally:
            running.stop()
    [event] = running.of("consolidated")
    assert event["merged"] == [{"id": second.id, "into": first.id}] and event["considered"] >= 2
    # The pass's own commit; the entity pages written after it (a long-running process writes them) follow.
    assert event["commit"] in git(root, "log", "--format=%H").split()
    assert watch_line(event) == f"consolidation: merged 1 near-duplicate(s) among {event['considered']} recent " + (
        f"observation(s) (commit {event['commit'][:8]})"
    )
    kinds = [e["event"] for e in running.events]
    assert kinds.index("consolidated") < kinds.index("stopped")
