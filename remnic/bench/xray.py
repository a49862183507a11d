"""X-ray capture overhead: recall p50/p95 with capture on vs off at 10,000 memories, in one run.

A repository of short synthetic memories (the scale benchmark's generator) is
indexed with seeded embedding vectors (queries still go through the real
model: capture cost does not depend on what the vectors mean). Each query is
recalled four times: capture off and on as a new query (the query-embedding
memo emptied first, so the recall embeds its query, as the scale benchmark's
recalls do), then off and on again as a repeated query (its embedding
memoised). Off and on alternate which goes first, so both sides see the same
machine load and the same caches; the ratio of the medians is the overhead.
Timing a memo miss against a memo hit would compare two different recalls:
the split keeps each median over one kind. The cost of building the snapshot
alone (from the finished recall) is timed apart.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from . import Report, load_average, md_table, measured_line, percentile

SIZE = 10_000
TARGET = 1.10
KINDS = ("new", "repeat")


def measure(n: int, queries: int, log: Any = print) -> dict[str, Any]:
    from remnic.recall.clock import LIVE
    from remnic.recall.snapshot import build_snapshot
    from remnic.service.memory import Memory

    from .scale import _WORDS, seed_cache, write_repo

    with tempfile.TemporaryDirectory(prefix=f"remnic-xray-{n}-") as tmp:
        root = Path(tmp) / "memory"
        t = time.perf_counter()
        texts = write_repo(root, n)
        seed_cache(root, texts)
        with Memory.open(root) as memory:
            memory.reindex()
            log(f"  {n}: repository and index ready in {time.perf_counter() - t:.1f}s; timing {queries} queries × 4")
            rng = random.Random(5)
            qs = [" ".join(rng.sample(_WORDS, 3)) + "?" for _ in range(queries)]
            for q in qs[:5]:  # warm both paths (model, index, templates of the snapshot types)
                memory.recall(q, xray=True)
                memory.recall(q)
            times: dict[tuple[str, bool], list[float]] = {(kind, c): [] for kind in KINDS for c in (False, True)}
            build: list[float] = []
            same = True
            embedder = memory.index.embedder
            for i, q in enumerate(qs):
                order = (False, True) if i % 2 == 0 else (True, False)
                now = int(time.time() * 1000)  # one recall clock per query: recency terms match to the bit
                for kind in KINDS:
                    got = {}
                    for capture in order:
                        if kind == "new":
                            embedder.forget_queries()
                        t0 = time.perf_counter()
                        result = memory.recall(q, xray=capture, clock=now)
                        times[kind, capture].append((time.perf_counter() - t0) * 1000)
                        got[capture] = result
                    same &= [(h.id, h.score) for h in got[True].hits] == [(h.id, h.score) for h in got[False].hits]
                    same &= got[True].xray is not None and got[False].xray is None
                t0 = time.perf_counter()
                build_snapshot(got[True], clock=LIVE, namespace=None, read_text=memory.files.read_text_cached)
                build.append((time.perf_counter() - t0) * 1000)
    out: dict[str, Any] = {"size": n, "queries": queries, "buildP50": statistics.median(build), "identicalHits": same}
    for kind in KINDS:
        off, on = times[kind, False], times[kind, True]
        p50_off, p50_on = statistics.median(off), statistics.median(on)
        out[kind] = {
            "p50Off": p50_off,
            "p95Off": percentile(off, 95),
            "p50On": p50_on,
            "p95On": percentile(on, 95),
            "ratio": p50_on / p50_off if p50_off else float("nan"),
        }
    out["ratio"] = out["new"]["ratio"]
    return out


def render(data: dict[str, Any]) -> str:
    rows = []
    for kind, label in (("new", "new query"), ("repeat", "repeated query (embedding memoised)")):
        d = data[kind]
        rows.append([label, "off", f"{d['p50Off']:.1f} ms", f"{d['p95Off']:.1f} ms", "—"])
        rows.append(
            [
                label,
                "on (`xray=True`)",
                f"{d['p50On']:.1f} ms",
                f"{d['p95On']:.1f} ms",
                f"{d['ratio']:.3f}× ({(d['ratio'] - 1) * 100:+.1f}%)",
            ]
        )
    verdict = "meets" if data["ratio"] <= TARGET else "misses"
    return "\n".join(
        [
            md_table(["recall", "capture", "p50", "p95", "p50 on / off"], rows),
            "",
            f"{data['size']:,} memories, {data['queries']} queries. Each query is recalled with capture off and on "
            "in alternating order (same process, same load), first as a new query (the query-embedding memo emptied, "
            "so the recall embeds its query: the recall the scale table times), then repeated (embedding memoised, "
            "so the fixed cost of capture weighs more). Building the snapshot alone from a finished recall: "
            f"p50 {data['buildP50']:.2f} ms. Hits identical with and without capture: {data['identicalHits']}. "
            f"Capture overhead on a new query {verdict} the ≤ 10% target. Every recall (both sides) also appends "
            "its audit entry. `python -m remnic.bench xray`.",
        ]
    )


def run(quick: bool = False) -> Report:
    t0, load0 = time.perf_counter(), load_average()
    data = measure(2_000 if quick else SIZE, 60 if quick else 300, log=lambda m: print(m, flush=True))
    md = render(data) + f"\n\n{measured_line(time.perf_counter() - t0, load0)}."
    return Report("xray", "Recall X-ray: capture overhead", md, data)
