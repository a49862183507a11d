"""Threads writing one memory through one Memory: every result's commit holds its change, none is lost,
and the working tree is clean afterwards (group commit must not mix a staged file with HEAD's copy)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import git

from remnic.memfile.model import parse_file
from remnic.service.memory import Memory


def _committed(root: Path, commit: str, path: str) -> dict[str, Any]:
    return parse_file(git(root, "show", f"{commit}:{path}"), path).frontmatter


def _run(workers: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded(work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted by the caller
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return errors


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "the writers never queued up"
        time.sleep(0.005)


def _one_batch(memory: Memory, writes: list[Callable[[], Any]]) -> dict[int, Any]:
    """Run ``writes`` from threads so that the first commits alone and all the others are one group commit."""
    results: dict[int, Any] = {}
    committer = memory.committer

    def run(k: int) -> None:
        try:
            results[k] = writes[k]()
        except BaseException as exc:  # noqa: BLE001 - returned to the test to assert
            results[k] = exc

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(writes))]
    with committer.exclusive():  # the writers queue up behind this lock
        threads[0].start()
        _wait_for(lambda: committer._leading and not committer._queue)  # the leader took its plan, waits for the lock
        for t in threads[1:]:
            t.start()
        _wait_for(lambda: len(committer._queue) == len(writes) - 1)
    for t in threads:
        t.join(30)
    assert sorted(results) == list(range(len(writes)))
    return results


def test_updates_queued_into_one_batch_each_commit_their_own_change(memory: Memory) -> None:
    mid = memory.store("seed memory for the batched updates").id
    results = _one_batch(memory, [lambda k=k: memory.update(mid, {f"key{k}": k}) for k in range(6)])
    path = memory.get(mid).path
    for k, result in results.items():
        assert result.changed and result.record.frontmatter[f"key{k}"] == k
        assert _committed(memory.root, result.commit, path)[f"key{k}"] == k, f"commit of key{k} lacks it"
    head = _committed(memory.root, "HEAD", path)
    assert all(head[f"key{k}"] == k for k in range(6))
    assert git(memory.root, "status", "--porcelain") == ""
    assert (memory.root / path).read_bytes() == git(memory.root, "show", f"HEAD:{path}").encode("utf-8")


def test_an_update_batched_after_a_move_finds_the_moved_file(memory: Memory) -> None:
    mid = memory.store("we ship on fridays").id
    results = _one_batch(
        memory,
        [
            lambda: memory.update(mid, {"first": 1}),
            lambda: memory.update(mid, {"category": "decision"}),
            lambda: memory.update(mid, {"second": 2}),
            lambda: memory.forget(mid, reason="retired"),
        ],
    )
    errors = [r for r in results.values() if isinstance(r, BaseException)]
    assert errors == []
    path = memory.get(mid).path
    assert path.startswith("decisions/")
    head = _committed(memory.root, "HEAD", path)
    assert (head["first"], head["second"], head["category"], head["status"]) == (1, 2, "decision", "forgotten")
    assert _committed(memory.root, results[2].commit, results[2].record.path)["second"] == 2
    assert git(memory.root, "status", "--porcelain") == ""
    assert [f for f in git(memory.root, "ls-files", "facts").split() if f.endswith(".md")] == []  # moved, not copied


def test_three_threads_updating_one_memory_lose_nothing(memory: Memory) -> None:
    mid = memory.store("seed memory for key race").id
    results: list[tuple[int, int, Any]] = []

    def updates(k: int) -> Callable[[], None]:
        def work() -> None:
            for i in range(6):
                results.append((k, i, memory.update(mid, {f"key{k}": i})))

        return work

    assert _run([updates(k) for k in range(3)]) == []
    path = memory.get(mid).path
    memory.close()
    for k, i, result in results:
        assert _committed(memory.root, result.commit, path)[f"key{k}"] == i, f"commit of key{k}={i} lacks it"
    head = _committed(memory.root, "HEAD", path)
    assert [head[f"key{k}"] for k in range(3)] == [5, 5, 5]
    assert git(memory.root, "status", "--porcelain") == ""


def test_mixed_writes_from_threads_on_one_memory_stay_committed(memory: Memory) -> None:
    shared = memory.store("the shared memory everyone touches").id
    stored: dict[int, list[str]] = {k: [] for k in range(3)}
    forgotten: list[Any] = []
    updates: list[tuple[int, int, Any]] = []
    votes: list[dict[str, Any]] = []

    def writer(k: int) -> Callable[[], None]:
        def work() -> None:
            for i in range(3):
                stored[k].append(memory.store(f"writer {k} note {i}", tags=[f"w{k}"]).id)
                updates.append((k, i, memory.update(shared, {f"key{k}": i})))
                votes.append(memory.feedback(shared, "up"))
                if i:
                    forgotten.append(memory.forget(stored[k][i - 1], reason=f"writer {k} retires note {i - 1}"))

        return work

    assert _run([writer(k) for k in range(3)]) == []
    path = memory.get(shared).path
    for k, i, result in updates:
        assert _committed(memory.root, result.commit, path)[f"key{k}"] == i, f"commit of key{k}={i} lacks it"
    for vote in votes:
        assert _committed(memory.root, vote["commit"], path)["reinforcement_count"] >= vote["reinforcement_count"]
    head = _committed(memory.root, "HEAD", path)
    assert [head[f"key{k}"] for k in range(3)] == [2, 2, 2]
    assert head["reinforcement_count"] == 9 and head["feedbackUp"] == 9
    assert len(forgotten) == 6
    for result in forgotten:
        assert _committed(memory.root, result.commit, result.record.path)["status"] == "forgotten"
    contents = {r.content: r.status for r in memory.list()}
    for k in range(3):
        assert [contents[f"writer {k} note {i}"] for i in range(3)] == ["forgotten", "forgotten", "active"]
    memory.close()
    assert git(memory.root, "status", "--porcelain") == ""


def test_two_batched_stores_choosing_one_id_leave_one_memory_with_it(memory: Memory) -> None:
    chosen = "mem_chosen0000000000000a"
    results = _one_batch(
        memory,
        [
            lambda: memory.store("a memory to hold the leader's commit"),
            lambda: memory.store("first text asking for the chosen id", extra={"id": chosen}),
            lambda: memory.store("second text asking for the same id", extra={"id": chosen}),
        ],
    )
    stored = [r for r in (results[1], results[2]) if not isinstance(r, BaseException)]
    refused = [r for r in (results[1], results[2]) if isinstance(r, BaseException)]
    assert len(stored) == 1 and len(refused) == 1 and "extra.id" in str(refused[0])
    assert [r.id for r in memory.list()].count(chosen) == 1
    assert git(memory.root, "status", "--porcelain") == ""
