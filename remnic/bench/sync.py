"""Sync benchmark: saved file → searchable and committed (the watcher), and `sync run` on a large repo.

1. A real ``remnic sync watch`` subprocess (default debounce) on a fresh repo;
   100 sequential hand edits of memory bodies. Latency is from the file write
   to the watcher's JSON line for that change, which it prints after the index
   update and the commit (so the edit is searchable and committed by then).
2. A repo of 10,000 memories (1,000 with --quick): ``Memory.sync()`` with
   nothing changed, and with 10 hand-edited files (normalise + index + one
   commit); plus the wall time of a whole ``remnic sync run`` process.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from remnic.config import settings_for
from remnic.service.memory import Memory

from . import Report, md_table, percentile
from .words import sentence


def _edit(path: Path, rng: random.Random) -> None:
    text = path.read_text(encoding="utf-8")
    head, sep, _body = text.rpartition("---\n")
    path.write_text(head + sep + "\n" + sentence(rng) + "\n", encoding="utf-8")


def watch_latency(n_edits: int, rng: random.Random) -> tuple[list[float], int]:
    """(ms from write to the watcher's change line, per edit; commits made)."""
    with tempfile.TemporaryDirectory(prefix="remnic-bench-sync-watch-") as tmp:
        root = Path(tmp) / "mem"
        mem = Memory.init(root, settings=settings_for(root))
        paths = [root / mem.store(sentence(rng), category="fact").record.path for _ in range(10)]
        rel = [str(p.relative_to(root)) for p in paths]
        commits_before = int(mem.ledger.git("rev-list", "--count", "HEAD"))
        mem.close()
        proc = subprocess.Popen(
            [sys.executable, "-m", "remnic", "sync", "watch", "--json", "--memory-dir", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        seen: list[tuple[float, dict]] = []
        cond = threading.Condition()

        def reader() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                event = json.loads(line)
                with cond:
                    seen.append((time.perf_counter(), event))
                    cond.notify_all()

        threading.Thread(target=reader, daemon=True).start()

        def wait_for(pred, since: int, timeout: float = 30.0) -> tuple[float, dict]:
            deadline = time.monotonic() + timeout
            with cond:
                while True:
                    for stamp, event in seen[since:]:
                        if pred(event):
                            return stamp, event
                    if time.monotonic() > deadline:
                        raise TimeoutError("the watcher did not report the change")
                    cond.wait(0.5)

        latencies: list[float] = []
        try:
            wait_for(lambda e: e["event"] == "ready", 0)
            for i in range(n_edits):
                k = i % len(paths)
                with cond:
                    mark = len(seen)
                t = time.perf_counter()
                _edit(paths[k], rng)
                stamp, _ = wait_for(
                    lambda e, k=k: e["event"] == "change" and e["path"] == rel[k] and e.get("commit"), mark
                )
                latencies.append((stamp - t) * 1000)
                time.sleep(0.3)  # let the write-back of the normalised frontmatter settle: edits are sequential
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        commits = (
            int(Memory.open(settings=settings_for(root)).ledger.git("rev-list", "--count", "HEAD")) - commits_before
        )
    return latencies, commits


def run_large(n_memories: int, rng: random.Random, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"noop": [], "ten": [], "cli_noop": []}
    with tempfile.TemporaryDirectory(prefix="remnic-bench-sync-large-") as tmp:
        root = Path(tmp) / "mem"
        mem = Memory.init(root, settings=settings_for(root))
        result = mem.import_records([{"content": sentence(rng), "category": "fact"} for _ in range(n_memories)])
        paths = [root / r.path for r in result.records]
        t = time.perf_counter()
        mem.sync()  # establishes the sync state (full pass when the index records no commit)
        out["first"] = [(time.perf_counter() - t) * 1000]
        # A pass over this many new notes defers their vectors (sync.deferEmbeddingsAbove); the
        # second phase, which `remnic sync run` would run next, is timed on its own.
        t = time.perf_counter()
        pending = mem.embed_pending()
        out["vectors"] = [(time.perf_counter() - t) * 1000, float(pending.filled)]
        for _ in range(rounds):
            t = time.perf_counter()
            report = mem.sync()
            out["noop"].append((time.perf_counter() - t) * 1000)
            assert not report.changes
        for _r in range(rounds):
            for path in rng.sample(paths, 10):
                _edit(path, rng)
            t = time.perf_counter()
            report = mem.sync()
            out["ten"].append((time.perf_counter() - t) * 1000)
            assert len(report.changes) == 10 and report.commit, report.to_dict()
        for _ in range(max(rounds // 2, 2)):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "remnic", "sync", "run", "--memory-dir", str(root)],
                check=True,
                capture_output=True,
            )
            out["cli_noop"].append((time.perf_counter() - t) * 1000)
        out["index"] = [1.0 if report.index == "updated" else 0.0]
        mem.close()
    return out


def run(quick: bool = False) -> Report:
    rng = random.Random(11)
    n_edits = 30 if quick else 100
    n_memories = 1_000 if quick else 10_000
    latencies, commits = watch_latency(n_edits, rng)
    large = run_large(n_memories, rng, rounds=3 if quick else 5)
    p50 = lambda xs: f"{statistics.median(xs):.0f} ms"  # noqa: E731
    p95 = lambda xs: f"{percentile(xs, 95):.0f} ms"  # noqa: E731
    index_note = "index updated" if large["index"][0] else "no index available in this build: index step skipped"
    rows = [
        [
            f"saved file → searchable and committed (watch, debounce 200 ms, n={n_edits})",
            p50(latencies),
            p95(latencies),
            "≤ 500 ms p50",
        ],
        [f"`sync run`, {n_memories:,} memories, nothing changed", p50(large["noop"]), p95(large["noop"]), "≤ 0.5 s"],
        [f"`sync run`, {n_memories:,} memories, 10 files edited", p50(large["ten"]), p95(large["ten"]), "≤ 2 s"],
        [
            f"whole `remnic sync run` process, {n_memories:,} memories, nothing changed",
            p50(large["cli_noop"]),
            p95(large["cli_noop"]),
            "—",
        ],
        [
            f"first `sync run` after an `import` of {n_memories:,} (a full pass: the fresh index records no commit)",
            f"{large['first'][0]:.0f} ms",
            "—",
            "—",
        ],
        [
            f"its second phase: vectors of the {large['vectors'][1]:,.0f} notes it deferred (`embed_pending`)",
            f"{large['vectors'][0]:.0f} ms",
            "—",
            "—",
        ],
    ]
    markdown = md_table(["measurement", "p50", "p95", "target"], rows) + (
        f"\n\nWatch: a real `remnic sync watch --json` subprocess; each of {n_edits} sequential body edits is timed "
        f"from the write to the watcher's line for it, printed after the index update and the commit "
        f"({commits} commits for {n_edits} edits). Large repo: `Memory.sync()` in-process ({index_note}); "
        "10 edited files are normalised (updated, contentHash), indexed and committed as one commit. "
        "`python -m remnic.bench sync`."
    )
    return Report(
        "sync",
        "Sync: hand edits to searchable commits",
        markdown,
        {
            "watch_p50_ms": statistics.median(latencies),
            "watch_p95_ms": percentile(latencies, 95),
            "noop_p50_ms": statistics.median(large["noop"]),
            "ten_p50_ms": statistics.median(large["ten"]),
        },
    )
