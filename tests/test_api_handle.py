"""A Memory handle's life: what Memory.open says when it cannot open, and a closed handle refusing calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from remnic import Memory
from remnic.config import settings_for
from remnic.errors import NotFoundError, RemnicError

CLOSED = "this Memory is closed; open a new one with Memory.open(...)"


def test_a_closed_memory_refuses_every_call(memory: Memory) -> None:
    memory.store("We deploy on Tuesdays", category="decision")
    memory.close()
    calls = [
        lambda: memory.store("more"),
        lambda: memory.recall("deploy"),
        lambda: memory.observe("s", [{"role": "user", "content": "we deploy on Fridays now"}]),
        lambda: memory.list(),
        lambda: memory.index,
        lambda: memory.__enter__(),
    ]
    for call in calls:
        with pytest.raises(RemnicError) as exc:
            call()
        assert str(exc.value) == CLOSED
    assert memory.closed and memory._index is None and memory.indexer._thread is None
    memory.close()  # closing twice is harmless


def test_leaving_the_with_block_closes_it(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    with Memory.open(root) as mem:
        mem.store("We deploy on Tuesdays", category="decision")
    with pytest.raises(RemnicError, match="closed"):
        mem.store("after the block")


def test_open_says_what_is_true(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as exc:
        Memory.open(tmp_path / "nowhere")
    assert "--memory-dir" not in str(exc.value) and "Memory.open" in str(exc.value)
    afile = tmp_path / "a-file"
    afile.write_text("x")
    with pytest.raises(NotFoundError, match="is a file, not a memory directory"):
        Memory.open(afile)
    root = tmp_path / "r2"
    Memory.init(root, settings=settings_for(root)).close()
    with pytest.raises(NotFoundError) as exc:
        Memory.open(root / "facts")
    assert f"inside the memory repository {root}" in str(exc.value) and "remnic init" not in str(exc.value)
