"""Every derived file garbled in turn: health says so, and the next recall heals it (never a silent file scan)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from remnic.config import settings_for
from remnic.service import Memory


def build(tmp_path: Path) -> Memory:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    for text in ("We deploy on Tuesdays", "Ana prefers tabs in Python", "The staging DB port is 5433"):
        memory.store(text)
    assert memory.recall("tabs").hits[0].content == "Ana prefers tabs in Python"
    memory.close()
    return Memory.open(root)


def live_build(root: Path) -> Path:
    return root / ".remnic" / "index" / (root / ".remnic" / "index" / "CURRENT").read_text().strip()


def garble(path: Path, offset: int = 0) -> None:
    data = bytearray(path.read_bytes())
    end = min(len(data), offset + 4096)
    data[offset:end] = b"\xa5" * (end - offset)
    path.write_bytes(bytes(data))


def checkpointed(path: Path) -> Path:
    """The catalog with its write-ahead log folded in, so garbling the main file garbles what is read
    (a reader thread of the closed handle may have kept the log from being checkpointed at close)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path


def catalog_header(root: Path) -> None:
    garble(checkpointed(live_build(root) / "catalog.sqlite"))


def catalog_pages(root: Path) -> None:
    path = checkpointed(live_build(root) / "catalog.sqlite")
    size = path.stat().st_size
    garble(path, offset=4096 if size > 8192 else size // 2)


def tantivy_segments(root: Path) -> None:
    for path in (live_build(root) / "tantivy").iterdir():
        if path.suffix in (".idx", ".term", ".store"):
            garble(path)


def tantivy_meta(root: Path) -> None:
    (live_build(root) / "tantivy" / "meta.json").write_text("{not json")


def manifest(root: Path) -> None:
    (live_build(root) / "manifest.json").write_text("garbage")


def embedding_cache(root: Path) -> None:
    garble(root / ".remnic" / "embeddings.sqlite")


def scan_memo(root: Path) -> None:
    garble(root / ".remnic" / "scan-memo.sqlite")


def current_pointer(root: Path) -> None:
    (root / ".remnic" / "index" / "CURRENT").write_text("build-999999-gone\n")


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "catalog-header": catalog_header,
    "catalog-pages": catalog_pages,
    "tantivy-segments": tantivy_segments,
    "tantivy-meta": tantivy_meta,
    "manifest": manifest,
    "embedding-cache": embedding_cache,
    "scan-memo": scan_memo,
    "current-pointer": current_pointer,
}
INDEX_PARTS = {"catalog-header", "catalog-pages", "tantivy-segments", "tantivy-meta", "current-pointer"}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_garbled_derived_file_is_reported_and_healed(tmp_path: Path, kind: str) -> None:
    memory = build(tmp_path)
    root = memory.root
    memory.close()
    for extra in root.glob(".remnic/*-wal"):
        extra.unlink()  # the write-ahead log would paper over a garbled main file
    CORRUPTIONS[kind](root)
    with Memory.open(root) as fresh:
        if kind in INDEX_PARTS:  # doctor looks inside the files; status reads only the manifest
            doctor = {c["name"]: c for c in fresh.doctor()}
            assert doctor["index"]["status"] == "warn" and "corrupt" in doctor["index"]["detail"], doctor["index"]
        result = fresh.recall("tabs")
        assert result.hits and result.hits[0].content == "Ana prefers tabs in Python"
        assert result.index.get("action") != "unavailable"  # healed, not a silent scan of the files
        assert fresh.index_health()["state"] == "ok"
        assert len(fresh.list()) == 3
    with Memory.open(root) as again:  # and it stays healed in the next process
        assert again.recall("staging port").hits[0].content == "The staging DB port is 5433"
