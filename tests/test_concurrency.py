"""Concurrent writers in separate processes lose nothing (the write lock + git retry)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import git

from remnic.service.memory import Memory

WRITER = textwrap.dedent("""
    import sys
    from remnic.config import settings_for
    from remnic.service import Memory

    root, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mem = Memory.open(settings=settings_for(root))
    for i in range(count):
        mem.store(f"Process {worker} writes memory number {i} of the batch", category="fact", source=f"worker-{worker}")
    mem.close()
""")


def test_four_processes_times_25_stores_lose_nothing(memory: Memory, tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    base = int(git(memory.root, "rev-list", "--count", "HEAD"))
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(memory.root), str(w), "25"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    records = memory.list()
    assert len(records) == 100
    contents = {r.content for r in records}
    assert contents == {f"Process {w} writes memory number {i} of the batch" for w in range(4) for i in range(25)}
    assert len({r.path for r in records}) == 100
    commits = int(git(memory.root, "rev-list", "--count", "HEAD")) - base
    assert commits == 100
    assert git(memory.root, "status", "--porcelain") == ""
    # Every commit touched exactly one memory file and named it in its trailers.
    log = git(memory.root, "log", f"-{commits}", "--format=%(trailers:key=Remnic-Memory-Id,valueonly)")
    ids = [line.strip() for line in log.splitlines() if line.strip()]
    assert sorted(ids) == sorted(r.id for r in records)
