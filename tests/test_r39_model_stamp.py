"""Model hashes kept as stamps in the cache folder (remnic.index.embed_spec._file_sha256 with ``stamps``):
a process after the first reads neither model file, and any write to either is still caught."""

from __future__ import annotations

import builtins
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import test_int8

from remnic.index import embed_spec, int8
from remnic.index.embed_spec import _default_model_path

cache = test_int8.cache  # a cache folder of the test's own, nothing remembered from an earlier test
SUFFIX = f"-i8v{int8.REWRITE_VERSION}.onnx"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file the hashing opens (stamps aside), and the file hashes of this test's own. Files made
    in the test are stamped at once (a stamp otherwise waits for a file to settle for two seconds)."""
    monkeypatch.setattr(embed_spec, "_file_hashes", {})
    monkeypatch.setattr(embed_spec, "_SETTLED_NS", 0, raising=False)
    seen: list[Path] = []

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        if not str(file).endswith(".sha256"):
            seen.append(Path(file).resolve())
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(embed_spec, "open", spy, raising=False)
    return seen


def new_process(reads: list[Path]) -> None:
    """What a new process starts with: nothing remembered, nothing read yet."""
    int8._memo.clear()
    embed_spec._file_hashes.clear()
    reads.clear()


def overwrite_in_place(path: Path, data: bytes) -> None:
    """``data`` written into ``path`` (same inode, same size), its mtime set back: only the ctime tells."""
    before = path.stat()
    assert len(data) == before.st_size
    with open(path, "r+b") as fh:
        fh.write(data)
    # Timestamps are coarse: damage done in the clock tick the stamp recorded would leave the ctime as
    # it was. Real damage comes later (stamps wait for a file to settle), so set the mtime back until
    # the ctime shows a later tick.
    deadline = time.monotonic() + 5
    while True:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = path.stat()
        if after.st_ctime_ns != before.st_ctime_ns or time.monotonic() > deadline:
            break
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)


def stamped(source: Path, cache: Path, reads: list[Path]) -> tuple[str, Callable[[bytes], bytes], list[bytes]]:
    """A small model's rewrite made, then checked by a second process (which stamps it); the cached file,
    the rewrite, and what it was given so far."""
    made: list[bytes] = []

    def make(data: bytes) -> bytes:
        made.append(data)
        return data[::-1]

    kept = int8._rewritten(source, "model", SUFFIX, make)
    assert isinstance(kept, str) and Path(kept).parent == cache
    new_process(reads)
    assert int8._rewritten(source, "model", SUFFIX, make) == kept and reads == [Path(kept)]
    new_process(reads)
    assert int8._rewritten(source, "model", SUFFIX, make) == kept and reads == []  # both stamps trusted
    return kept, make, made


def test_the_next_process_reads_neither_the_packaged_model_nor_its_rewrite(cache: Path, reads: list[Path]) -> None:
    packaged = _default_model_path()
    kept = int8.int8_model(packaged, "model")
    assert isinstance(kept, str)
    new_process(reads)
    assert int8.int8_model(packaged, "model") == kept  # its bytes checked once more, and stamped
    new_process(reads)
    assert int8.int8_model(packaged, "model") == kept and int8.kept_at(packaged, "model") == kept
    assert reads == []


def test_bytes_changed_with_size_and_mtime_set_back_are_hashed_again(
    cache: Path, reads: list[Path], tmp_path: Path
) -> None:
    source = tmp_path / "model.onnx"
    source.write_bytes(os.urandom(1 << 16))
    kept, make, made = stamped(source, cache, reads)
    good = Path(kept).read_bytes()

    overwrite_in_place(Path(kept), bytes(len(good)))  # a damaged rewrite that may still load
    new_process(reads)
    assert int8._rewritten(source, "model", SUFFIX, make) == kept
    assert Path(kept).read_bytes() == good and len(made) == 2  # not trusted: it was made again
    assert made[1] == source.read_bytes()

    # A model of other bytes (a new install) never runs an old rewrite.
    overwrite_in_place(source, os.urandom(1 << 16))
    new_process(reads)
    again = int8._rewritten(source, "model", SUFFIX, make)
    assert isinstance(again, str) and again != kept
    assert Path(again).read_bytes() == source.read_bytes()[::-1]


def test_a_stamp_that_does_not_parse_is_ignored(cache: Path, reads: list[Path], tmp_path: Path) -> None:
    source = tmp_path / "model.onnx"
    source.write_bytes(os.urandom(1 << 16))
    kept, make, _ = stamped(source, cache, reads)
    stamps = sorted(cache.glob("*.sha256"))
    assert len(stamps) == 2
    right = {p: json.loads(p.read_text()) for p in stamps}
    for junk in (b"\xff\xfe", b"[1, 2]", b"[" * 5000, json.dumps({**right[stamps[0]], "sha256": "z" * 64}).encode()):
        for stamp in stamps:
            stamp.write_bytes(junk)
        new_process(reads)
        assert int8._rewritten(source, "model", SUFFIX, make) == kept
        assert sorted(reads) == sorted([source.resolve(), Path(kept)])  # hashed, as without a stamp
        assert {p: json.loads(p.read_text()) for p in stamps} == right  # and stamped again
