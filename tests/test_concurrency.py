"""Concurrent writers in separate processes lose nothing (the write lock + git retry)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import git

from remnic.service.memory import Memory

# With the start line every store races the others' (commits interleave all through the log), so a few
# per writer show what a long batch did.
WRITERS, STORES = 4, 8

WRITER = textwrap.dedent("""
    import sys
    import time
    from pathlib import Path
    from remnic.config import settings_for
    from remnic.service import Memory

    root, worker, count, gate, writers = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5])
    mem = Memory.open(settings=settings_for(root))
    # A start line: no writer stores before every one has started up, so their writes overlap.
    (gate / f"ready-{worker}").touch()
    deadline = time.monotonic() + 120
    while len(list(gate.glob("ready-*"))) < writers:
        if time.monotonic() > deadline:
            sys.exit("the other writers never started")
        time.sleep(0.005)
    for i in range(count):
        mem.store(f"Process {worker} writes memory number {i} of the batch", category="fact", source=f"worker-{worker}")
    mem.close()
""")


def test_four_processes_storing_at_once_lose_nothing(memory: Memory, tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    gate = tmp_path / "gate"
    gate.mkdir()
    base = int(git(memory.root, "rev-list", "--count", "HEAD"))
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(memory.root), str(w), str(STORES), str(gate), str(WRITERS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    total = WRITERS * STORES
    records = memory.list()
    assert len(records) == total
    contents = {r.content for r in records}
    assert contents == {
        f"Process {w} writes memory number {i} of the batch" for w in range(WRITERS) for i in range(STORES)
    }
    assert len({r.path for r in records}) == total
    commits = int(git(memory.root, "rev-list", "--count", "HEAD")) - base
    assert commits == total
    assert git(memory.root, "status", "--porcelain") == ""
    # Every commit touched exactly one memory file and named it in its trailers.
    log = git(memory.root, "log", f"-{commits}", "--format=%(trailers:key=Remnic-Memory-Id,valueonly)")
    ids = [line.strip() for line in log.splitlines() if line.strip()]
    assert sorted(ids) == sorted(r.id for r in records)
    # The writes did overlap: one writer's commits are not all in one run between the others'.
    order = [{r.id: r.frontmatter.get("source") for r in records}[i] for i in ids]
    assert sum(a != b for a, b in itertools.pairwise(order)) >= WRITERS
