"""Sync's index step never stamps HEAD over an index that holds only its batch.

An index that cannot be used as it is (deleted, a write interrupted by a crash, built by another remnic's
schema, for another model or other settings) is replaced by an empty build on its next write. Sync's
incremental batch (one hand-edited file) written there and recorded as reflecting HEAD left recall answering
from that one file under a manifest that says it is current, so no recall or sync ever caught it up: every
other memory was gone from recall, and ``status`` said ``ok``. The index is now filled from every file
(sync's full pass, or a rebuild when it breaks during the run), and a stamp never lands on a fresh build.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import build_memory_template, copied_memory_root
from test_space_sync import pair  # noqa: F401 - the fixture

from remnic.config import settings_for
from remnic.index.manifest import CATALOG_FILE, SCHEMA_VERSION, read_current
from remnic.index.state import NotContinued
from remnic.service.memory import Memory

TOPICS = ["kiwi orchard", "boiler service", "tax filing", "piano lessons", "bicycle repair"]
NEEDLE = "The zanzibar telescope lens is kept in the blue drawer"
N = 51  # fifty notes and the needle


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~50 memories, synced, with an index at HEAD: one repository a module, copied for each test."""
    root = build_memory_template(tmp_path_factory)
    mem = Memory.open(settings=settings_for(root))
    try:
        notes = [f"Note {i}: the {TOPICS[i % 5]} entry, detail {i * 7}" for i in range(N - 1)]
        mem.import_records([{"content": c, "category": "fact"} for c in [*notes, NEEDLE]])
        mem.sync()
        mem.refresh_index()
        assert mem.index.health(mem.ledger).state == "ok"
    finally:
        mem.close()
    return root


@pytest.fixture
def copy(template: Path, tmp_path: Path) -> Path:
    return copied_memory_root(template, tmp_path / "mem")


def _catalog(root: Path) -> Path:
    index = root / ".remnic" / "index"
    build = read_current(index)
    assert build is not None
    return index / build / CATALOG_FILE


def _set_meta(root: Path, **values: str) -> None:
    """What another remnic (or a crash) leaves in the live catalog; the generation moves, as a writer's does."""
    with sqlite3.connect(_catalog(root)) as conn:
        for key, value in values.items():
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


BREAKS: dict[str, Callable[[Path], None]] = {
    "schema": lambda root: _set_meta(root, schema_version=str(SCHEMA_VERSION - 1)),
    "model": lambda root: _set_meta(root, model_id="another-model"),
    "settings": lambda root: _set_meta(root, fingerprint="0000000000000000"),
    "interrupted": lambda root: _set_meta(root, pending=f"{_dead_pid()}:1"),
    "deleted": lambda root: shutil.rmtree(root / ".remnic" / "index"),
}


def _edit_one(mem: Memory) -> None:
    """A hand edit of one note that is not the needle."""
    path = next(mem.root / r.path for r in mem.list() if r.content.startswith("Note 3:"))
    path.write_text(path.read_text(encoding="utf-8").replace("Note 3:", "Note 3 (edited by hand):"), encoding="utf-8")


def _assert_whole(mem: Memory) -> None:
    """The index records HEAD and holds every memory: the needle, which no sync batch touched, included."""
    health = mem.index.health(mem.ledger)
    assert (health.state, health.manifest and health.manifest.count) == ("ok", N), health
    assert health.manifest is not None and health.manifest.commit == mem.ledger.head()
    assert mem.index.indexed_paths() == {r.path for r in mem.list()}
    needle = next(r for r in mem.list() if r.content == NEEDLE)
    assert mem.index.path_of(needle.id) == needle.path
    assert [h.id for h in mem.recall("where is the zanzibar telescope lens", top_k=1).hits] == [needle.id]


@pytest.fixture
def opened(copy: Path) -> Iterator[Memory]:
    mem = Memory.open(settings=settings_for(copy))
    yield mem
    mem.close()


@pytest.mark.parametrize("broken", sorted(BREAKS))
def test_a_sync_over_an_index_it_cannot_continue_fills_it_from_every_file(copy: Path, broken: str) -> None:
    BREAKS[broken](copy)  # as a new process finds it: an upgrade, a model or settings change, a crash
    mem = Memory.open(settings=settings_for(copy))
    try:
        _edit_one(mem)
        report = mem.sync()
        assert report.index == "updated" and report.commit, report.to_dict()
        _assert_whole(mem)
    finally:
        mem.close()


@pytest.mark.parametrize("broken", ["interrupted", "deleted", "schema"])
def test_an_index_that_breaks_during_an_incremental_sync_is_rebuilt_not_stamped(
    opened: Memory, broken: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import remnic.sync.engine as engine

    read_all = engine.read_all

    def broken_meanwhile(*args: Any, **kwargs: Any) -> Any:  # after the run probed the index, before its index step
        BREAKS[broken](opened.root)
        return read_all(*args, **kwargs)

    monkeypatch.setattr(engine, "read_all", broken_meanwhile)
    _edit_one(opened)
    report = opened.sync()
    assert (report.mode, report.index, report.indexed) == ("incremental", "updated", 1), report.to_dict()
    _assert_whole(opened)


def test_refresh_paths_never_records_a_commit_over_a_fresh_index(opened: Memory) -> None:
    head = opened.ledger.head()
    BREAKS["schema"](opened.root)
    with pytest.raises(NotContinued):
        opened.index.refresh_paths(opened.files, [], head)
    health = opened.index.health(opened.ledger)
    assert health.state == "schema-mismatch" and health.manifest is not None and health.manifest.count == N
    assert opened.index.refresh_paths(opened.files, []).action == "catch-up"  # no commit to record: a fresh build
    assert opened.index.health(opened.ledger).detail.endswith("(partial)")
    opened.recall("anything")  # rebuilds the partial index, as any recall would
    _assert_whole(opened)


def test_a_pull_over_an_index_of_another_schema_leaves_it_whole(pair: tuple[Memory, Memory]) -> None:  # noqa: F811
    ana, ben = pair
    kept = ana.import_records(
        [{"content": f"Ana's note {i} about the {t}", "category": "fact"} for i, t in enumerate(TOPICS)]
    )
    ana.settle_index()
    ana.space_push()
    brought = ben.store("Staging is refreshed every night", category="fact").record
    ben.space_pull()
    ben.space_push()
    BREAKS["schema"](ana.root)
    report = ana.space_pull()
    assert report.index_behind is None, report.to_dict()
    health = ana.index.health(ana.ledger)
    assert health.state == "ok" and health.manifest is not None and health.manifest.commit == ana.ledger.head()
    assert ana.index.indexed_paths() == {r.path for r in ana.list()}
    assert {r.path for r in kept.records} | {brought.path} <= (ana.index.indexed_paths() or set())


def test_no_commit_is_recorded_over_an_index_whose_commit_history_lost(opened: Memory) -> None:
    """What changed since a commit that is gone cannot be known: only a rebuild continues such an index."""
    head = opened.ledger.head()
    _set_meta(opened.root, commit="0" * 40)
    with pytest.raises(NotContinued, match="is gone"):
        opened.index.refresh_paths(opened.files, [], head)
    _edit_one(opened)
    assert opened.sync().index == "updated"
    _assert_whole(opened)
