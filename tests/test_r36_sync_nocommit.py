"""Session 36: a full `sync run --no-commit` over a fresh index indexes the uncommitted files an earlier
`--no-commit` run left as they are (it used to leave them out, as if the index still held them).

A real git repository and the real index, in-process.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from remnic.config import STATE_DIR, settings_for
from remnic.service.memory import Memory
from remnic.sync.indexing import indexed_paths


def test_a_full_no_commit_pass_over_a_fresh_index_indexes_quiet_uncommitted_files(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    mem = Memory.init(root, settings=settings_for(root))
    try:
        (root / "facts").mkdir(exist_ok=True)
        (root / "facts/quokka.md").write_text("Quokkas live on Rottnest Island.\n", encoding="utf-8")
        first = mem.sync(commit=False)
        assert first.pending == ["facts/quokka.md"] and first.indexed == 1
    finally:
        mem.close()
    shutil.rmtree(root / STATE_DIR / "index")  # a fresh index: `rm -rf .remnic/index`, a new machine's cache
    mem = Memory.open(root, settings=settings_for(root))
    try:
        report = mem.sync(commit=False, full=True)
        assert report.mode == "full" and report.commit is None
        assert report.pending == ["facts/quokka.md"] and report.changes == []  # unchanged: nothing new to say
        assert report.indexed == 1 and "facts/quokka.md" in indexed_paths(mem.index)
        again = mem.sync(commit=False)  # an incremental run still passes the quiet file over
        assert again.indexed == 0 and "facts/quokka.md" in indexed_paths(mem.index)
    finally:
        mem.close()
