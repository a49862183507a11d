"""Write-path benchmark: single `store` latency and bulk `import` throughput.

Both are measured end to end through the public API: validation, the atomic
file write, the git commit and the incremental index update (embedding included).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

from remnic.config import settings_for
from remnic.service.memory import Memory

from . import Report, md_table, percentile
from .words import sentence


def run(quick: bool = False) -> Report:
    rng = random.Random(7)
    n_store = 50 if quick else 200
    n_import = 1_000 if quick else 10_000
    with tempfile.TemporaryDirectory(prefix="remnic-bench-store-") as tmp:
        root = Path(tmp) / "mem"
        mem = Memory.init(root, settings=settings_for(root))
        mem.store("warm-up: loads the embedding model once", category="fact")
        latencies = []
        for _ in range(n_store):
            t = time.perf_counter()
            mem.store(sentence(rng), category="fact")
            latencies.append((time.perf_counter() - t) * 1000)
        items = [{"content": sentence(rng), "category": "fact", "tags": ["bulk"]} for _ in range(n_import)]
        t = time.perf_counter()
        result = mem.import_records(items)
        import_s = time.perf_counter() - t
        mem.close()
    rows = [
        [
            f"single `store` (n={n_store})",
            f"{statistics.median(latencies):.1f} ms",
            f"{percentile(latencies, 95):.1f} ms",
            "—",
        ],
        [
            f"bulk `import` of {n_import:,} records (one commit)",
            "—",
            "—",
            f"{len(result.records) / import_s:,.0f} records/s ({import_s:.1f} s)",
        ],
    ]
    markdown = md_table(["operation", "p50", "p95", "throughput"], rows) + (
        "\n\nMeasured through `Memory.store` / `Memory.import_records` on a fresh repo: validation, atomic write, "
        "git commit and incremental index update (embedding included). `python -m remnic.bench store`."
    )
    return Report(
        "store",
        "Write path: store latency and import throughput",
        markdown,
        {"store_p50_ms": statistics.median(latencies), "import_per_s": len(result.records) / import_s},
    )
