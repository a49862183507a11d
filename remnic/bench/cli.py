"""CLI latency: `remnic store` and `remnic query` as whole processes, in-process and through a
running server (`remnic daemon`), and a server's first recall against the ones after it.

Each figure is a whole CLI process timed from outside (start-up, imports, the command, exit),
in alternating order so both sides see the same machine load.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from remnic.config import settings_for
from remnic.service.memory import Memory

from . import Report, md_table, percentile
from .words import sentence

# The console script a user runs, beside this Python (a venv's bin/).
REMNIC = str(Path(sys.executable).with_name("remnic"))


def _remnic(args: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall milliseconds of one ``remnic`` process (its output is checked, then dropped)."""
    started = time.perf_counter()
    proc = subprocess.run([REMNIC, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise RuntimeError(f"remnic {' '.join(args)} failed: {proc.stderr[-500:]}")
    return elapsed


def _wait_ready(env: dict[str, str], cwd: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        proc = subprocess.run(
            [REMNIC, "daemon", "status", "--json"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0 and json.loads(proc.stdout or "{}").get("running"):
            return
        time.sleep(0.2)
    raise RuntimeError("the server did not start")


def _row(name: str, values: list[float]) -> list[object]:
    return [name, len(values), f"{statistics.median(values):.0f} ms", f"{percentile(values, 95):.0f} ms"]


def run(quick: bool = False) -> Report:
    rng = random.Random(11)
    n_memories = 1_000 if quick else 10_000
    runs = 5 if quick else 15
    restarts = 2 if quick else 5
    with tempfile.TemporaryDirectory(prefix="remnic-bench-cli-") as tmp:
        root = Path(tmp) / "mem"
        mem = Memory.init(root, settings=settings_for(root))
        mem.import_records([{"content": sentence(rng), "category": "fact"} for _ in range(n_memories)])
        mem.recall("release deploy")  # the index is built before anything is timed
        mem.close()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("REMNIC_")},
            "REMNIC_MEMORY_DIR": str(root),
            "REMNIC_TOKENS_PATH": str(Path(tmp) / "tokens.json"),
        }
        _remnic(["token", "generate", "--principal", "bench"], env, root)
        solo = {**env, "REMNIC_NO_DAEMON": "1"}
        times: dict[str, list[float]] = {k: [] for k in ("store-in", "store-d", "query-in", "query-d")}
        first: list[float] = []
        later: list[float] = []
        _remnic(["daemon", "start"], env, root)
        try:
            _wait_ready(env, root)
            for i in range(runs):
                text = sentence(rng)
                times["store-in"].append(_remnic(["store", text + " solo"], solo, root))
                times["store-d"].append(_remnic(["store", text + " daemon"], env, root))
                words = " ".join(text.split()[:4])
                times["query-in"].append(_remnic(["query", words + f" {i}"], solo, root))
                times["query-d"].append(_remnic(["query", words + f" {i} again"], env, root))
            for k in range(restarts):
                _remnic(["daemon", "restart"], env, root)
                _wait_ready(env, root)
                time.sleep(1.0)  # `daemon status` answers once listening; the warm-up runs before that
                first.append(_remnic(["query", f"budget meeting {k}"], env, root))
                later += [_remnic(["query", f"replica cache {k} {j}"], env, root) for j in range(3)]
        finally:
            subprocess.run([REMNIC, "daemon", "stop"], cwd=root, env=env, capture_output=True)
    rows = [
        _row("`remnic store`, in-process (no server)", times["store-in"]),
        _row("`remnic store`, through the running server", times["store-d"]),
        _row("`remnic query`, in-process (no server)", times["query-in"]),
        _row("`remnic query`, through the running server", times["query-d"]),
        _row("first `remnic query` after the server (re)started", first),
        _row("the next three queries after it", later),
    ]
    ratio = statistics.median(first) / statistics.median(later)
    markdown = md_table(["command", "runs", "p50 wall", "p95 wall"], rows) + (
        f"\n\n{n_memories:,} memories; whole `remnic` processes timed from outside, in-process and server-backed "
        f"runs alternating. First query after a restart / later queries (p50): {ratio:.2f}×. Targets: store and "
        "query ≤ 150 ms with the server up, ≤ 1 s without; the first recall after `serve` as fast as the rest. "
        "`python -m remnic.bench cli`."
    )
    return Report(
        "cli",
        "CLI latency: in-process and through a running server",
        markdown,
        {k: statistics.median(v) for k, v in times.items()} | {"first_over_later": ratio},
    )
