"""Scale benchmark: recall latency and RSS at 10k and 100k memories, reindex time, write-to-searchable.

For each size a memory repository of short synthetic memories is written and
committed. At 10k (and in --quick runs) the full reindex runs the real model on
every memory with an empty embedding cache. At 100k, running the model over
every memory would take most of the benchmark's time without telling anything
new about the index, so the embedding cache is seeded with random unit vectors
for the memories (queries are still embedded by the real model); its reindex
time is reported as "cached embeddings".

Recall latency and RSS are measured in a fresh child process per size (warm,
in-process, hybrid defaults); the cold ``remnic query`` time is a whole CLI
process, import to exit.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import Report, load_average, md_table, measured_line, percentile

DEFAULT_SIZES = (10_000, 100_000)
REAL_EMBED_MAX = 20_000  # sizes above this get seeded (random) vectors
_WORDS = [
    "release",
    "deploy",
    "tuesday",
    "cache",
    "editor",
    "python",
    "server",
    "budget",
    "memory",
    "team",
    "review",
    "design",
    "ticket",
    "user",
    "agent",
    "model",
    "index",
    "commit",
    "branch",
    "invoice",
    "customer",
    "meeting",
    "roadmap",
    "latency",
    "database",
    "backup",
    "migration",
    "schema",
    "incident",
    "oncall",
    "runbook",
    "alert",
    "metric",
    "dashboard",
    "contract",
    "vendor",
    "hiring",
    "onboarding",
    "laptop",
    "vpn",
    "password",
    "rotation",
    "policy",
    "privacy",
    "audit",
    "report",
    "quarter",
    "revenue",
    "forecast",
    "launch",
    "pricing",
    "discount",
    "churn",
    "feedback",
    "survey",
    "design-system",
    "typography",
    "color",
    "accessibility",
    "mobile",
    "android",
    "ios",
    "web",
    "api",
    "gateway",
    "queue",
    "worker",
    "retry",
    "timeout",
    "cron",
    "job",
    "container",
    "kubernetes",
    "terraform",
    "staging",
    "production",
    "rollback",
    "feature",
    "flag",
]
_SUBJECTS = ("Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kai", "Lena")
_VERBS = ("prefers", "decided", "noted", "asked about", "fixed", "reviewed", "planned", "owns", "dislikes", "moved")


def synthetic_text(rng: random.Random, i: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 11)))
    return f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} the {words} (note {i})."


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB, from /proc."""
    cur = peak = float("nan")
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return cur, peak


def write_repo(root: Path, n: int, seed: int = 7) -> list[str]:
    """A committed memory repository with n one-sentence memories; returns their texts."""
    from remnic.config import settings_for
    from remnic.memfile.model import DEFAULT_NAMESPACE, body_for, format_time, serialize
    from remnic.memfile.validate import new_frontmatter
    from remnic.repo.messages import trailers_for
    from remnic.service.memory import Memory

    memory = Memory.init(root, settings=settings_for(root))
    rng = random.Random(seed)
    texts, paths = [], []
    base = time.time() - 400 * 86400
    cfg = memory.settings.store
    for i in range(n):
        text = synthetic_text(rng, i)
        when = format_time(base + i * 300)
        meta, _ = new_frontmatter(
            memory_id=f"mem_s{i:08d}",
            now=when,
            content=text,
            category="fact",
            settings=cfg,
            importance=round(rng.random(), 2),
        )
        rel = f"facts/s{i // 1000:03d}/m{i:06d}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(serialize(meta, body_for(text)), encoding="utf-8")
        texts.append(text)
        paths.append(rel)
    memory.ledger.git("add", "-A", "facts")
    memory.ledger.git(
        "commit",
        "-q",
        "--no-verify",
        "-m",
        f"bench: {n} synthetic memories\n\n"
        + "\n".join(
            f"Remnic-{k}: {v}"
            for k, v in trailers_for("import", [], DEFAULT_NAMESPACE, "bench").items()
            if isinstance(v, str)
        ),
    )
    memory.close()
    return texts


def seed_cache(root: Path, texts: Sequence[str]) -> None:
    """Random unit vectors for the memories' texts, so a 100k reindex skips the model."""
    import numpy as np

    from remnic.config import settings_for
    from remnic.index.embed_cache import EmbeddingCache
    from remnic.index.search import SearchIndex
    from remnic.memfile.model import content_hash

    index = SearchIndex(settings_for(root))
    rng = np.random.default_rng(3)
    with EmbeddingCache(root / ".remnic" / "embeddings.sqlite") as cache:
        for start in range(0, len(texts), 5000):
            chunk = texts[start : start + 5000]
            vecs = rng.standard_normal((len(chunk), index.embedder.dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            cache.put_many(index.model_id, {content_hash(t): v for t, v in zip(chunk, vecs)})
    index.close()


def child_measure(root: str, queries: list[str]) -> dict[str, Any]:
    """Run in a fresh process: warm recall latency and RSS for one repository."""
    from remnic.service.memory import Memory

    t = time.perf_counter()
    memory = Memory.open(root)
    memory.recall("warm up the model and the index", top_k=10)
    load_s = time.perf_counter() - t
    lat = []
    for q in queries:
        t = time.perf_counter()
        memory.recall(q, top_k=10)
        lat.append((time.perf_counter() - t) * 1000)
    cur, peak = rss_mb()
    return {
        "loadSeconds": load_s,
        "p50": statistics.median(lat),
        "p95": percentile(lat, 95),
        "rssMb": cur,
        "peakRssMb": peak,
        "queries": len(lat),
        **edit_check_cost(memory, queries),
    }


def edit_check_cost(memory: Any, queries: list[str]) -> dict[str, float]:
    """What looking for unsynced hand edits adds to a recall when nothing was edited: the check alone
    (warm: the file-event feed; asking git: a handle without one), and recall p50 with the check off."""
    from dataclasses import replace

    from remnic.service.freshness import edited_memory_paths, follow_edits

    warm, git = [], []
    for _ in range(max(20, len(queries) // 4)):
        t = time.perf_counter()
        follow_edits(memory)
        warm.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        memory.index.follow_worktree(memory.files, edited_memory_paths(memory), 50)
        git.append((time.perf_counter() - t) * 1000)
    # The same queries with the check on and off, alternating, so both sides see the same load.
    recall = memory.settings.recall
    settings = {True: recall, False: replace(recall, follow_edits=False)}
    timed: dict[bool, list[float]] = {True: [], False: []}
    for i, q in enumerate(queries):
        for on in (True, False) if i % 2 else (False, True):
            memory.settings.recall = settings[on]
            t = time.perf_counter()
            memory.recall(q, top_k=10)
            timed[on].append((time.perf_counter() - t) * 1000)
    memory.settings.recall = recall
    return {
        "editCheckMs": statistics.median(warm),
        "editCheckP95Ms": percentile(warm, 95),
        "editCheckGitMs": statistics.median(git),
        "p50EditCheckOn": statistics.median(timed[True]),
        "p50EditCheckOff": statistics.median(timed[False]),
        "editFeed": bool(memory.edit_feed),
    }


def _child(root: Path, queries: list[str]) -> dict[str, Any]:
    code = (
        "import json,sys; from remnic.bench.scale import child_measure; "
        "print(json.dumps(child_measure(sys.argv[1], json.loads(sys.stdin.read()))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)], input=json.dumps(queries), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_query_seconds(root: Path, text: str, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "remnic", "query", text, "--memory-dir", str(root), "--json"],
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def write_to_searchable(root: Path, rounds: int = 5) -> dict[str, float]:
    """Time of a store() call, then of a hand edit + refresh_paths, until recall returns the new text first."""
    from remnic.service.memory import Memory

    store_ms, found_ms, edit_ms, unsynced_ms = [], [], [], []
    with Memory.open(root) as memory:
        memory.recall("warm up", top_k=1)
        for i in range(rounds):
            word = f"zqxmarker{i}{random.randint(1000, 9999)}"
            t = time.perf_counter()
            rec = memory.store(f"Quarterly {word} review moved to Thursday", source="bench").record
            t1 = time.perf_counter()
            hits = memory.recall(word, top_k=1).hits
            t2 = time.perf_counter()
            assert hits and hits[0].id == rec.id, "stored memory not searchable"
            store_ms.append((t1 - t) * 1000)
            found_ms.append((t2 - t1) * 1000)
            # A hand edit of that file, then the re-read that `remnic sync`/the watcher performs.
            path = memory.root / rec.path
            word2 = word + "edited"
            text = path.read_text(encoding="utf-8").replace(word, word2)
            t = time.perf_counter()
            path.write_text(text, encoding="utf-8")
            memory.index.refresh_paths(memory.files, [rec.path])
            hits = memory.recall(word2, top_k=1).hits
            edit_ms.append((time.perf_counter() - t) * 1000)
            assert hits and hits[0].path == rec.path, "edited file not searchable"
            # A hand edit and nothing else (no sync, no watcher): the recall indexes it first.
            word3 = word + "unsynced"
            text = path.read_text(encoding="utf-8").replace(word2, word3)
            t = time.perf_counter()
            path.write_text(text, encoding="utf-8")
            hits = memory.recall(word3, top_k=1).hits
            unsynced_ms.append((time.perf_counter() - t) * 1000)
            assert hits and hits[0].path == rec.path, "unsynced edit not searchable"
    return {
        "storeMs": statistics.median(store_ms),
        "recallAfterStoreMs": statistics.median(found_ms),
        "editToSearchableMs": statistics.median(edit_ms),
        "unsyncedEditToSearchableMs": statistics.median(unsynced_ms),
    }


def run_scale(
    sizes: Sequence[int],
    *,
    queries: int = 200,
    log: Callable[[str], None] | None = None,
    progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> dict[str, Any]:
    """``progress(label)`` gives a progress callback for a long step (the CLI's bars on a terminal)."""
    from remnic.service.memory import Memory

    rows = []
    rng = random.Random(11)
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"remnic-scale-{n}-") as tmp:
            root = Path(tmp) / "memory"
            t = time.perf_counter()
            texts = write_repo(root, n)
            write_s = time.perf_counter() - t
            real = n <= REAL_EMBED_MAX
            if not real:
                seed_cache(root, texts)
            if log:
                log(
                    f"  {n}: wrote and committed in {write_s:.1f}s; reindexing ({'model' if real else 'seeded vectors'})"
                )
            with Memory.open(root) as memory:
                t = time.perf_counter()
                report = memory.reindex(progress=progress(f"{n:,}: embedding") if progress else None)
                reindex_s = time.perf_counter() - t
            qs = [" ".join(rng.sample(_WORDS, 3)) + "?" for _ in range(queries)]
            if log:
                log(f"  {n}: reindex {reindex_s:.1f}s ({report.embedded} embedded); timing {queries} recalls")
            child = _child(root, qs)
            cold = cold_query_seconds(root, "who owns the staging rollback runbook?")
            wts = write_to_searchable(root)
            rows.append(
                {
                    "size": n,
                    "realEmbeddings": real,
                    "reindexSeconds": reindex_s,
                    "embedded": report.embedded,
                    "coldQuerySeconds": cold,
                    **child,
                    **wts,
                }
            )
            if log:
                log(
                    f"  {n}: p50 {child['p50']:.1f} ms, p95 {child['p95']:.1f} ms, RSS {child['rssMb']:.0f} MB, "
                    f"cold query {cold:.2f}s"
                )
    return {"sizes": list(sizes), "rows": rows}


def render(result: dict[str, Any]) -> str:
    head = [
        "memories",
        "recall p50",
        "recall p95",
        "RSS",
        "peak RSS",
        "cold `remnic query`",
        "full reindex",
        "store() call",
        "store → searchable",
        "hand edit → searchable",
        "unsynced hand edit → recalled",
        "edit check (events / git)",
        "recall p50, check on / off",
    ]
    rows = []
    for r in result["rows"]:
        reindex = f"{r['reindexSeconds']:.1f} s" + ("" if r["realEmbeddings"] else " (cached embeddings)")
        rows.append(
            [
                f"{r['size']:,}",
                f"{r['p50']:.1f} ms",
                f"{r['p95']:.1f} ms",
                f"{r['rssMb']:.0f} MB",
                f"{r['peakRssMb']:.0f} MB",
                f"{r['coldQuerySeconds']:.2f} s",
                reindex,
                f"{r['storeMs']:.0f} ms",
                f"{r['recallAfterStoreMs']:.1f} ms",
                f"{r['editToSearchableMs']:.0f} ms",
                f"{r['unsyncedEditToSearchableMs']:.0f} ms",
                f"{r['editCheckMs']:.3f} / {r['editCheckGitMs']:.1f} ms",
                f"{r['p50EditCheckOn']:.1f} / {r['p50EditCheckOff']:.1f} ms",
            ]
        )
    return md_table(head, rows)


def run(quick: bool = False) -> Report:
    sizes = [2_000] if quick else list(DEFAULT_SIZES)
    t0, load0 = time.perf_counter(), load_average()
    result = run_scale(sizes, queries=50 if quick else 200, log=lambda m: print(m, flush=True))
    md = "\n".join(
        [
            "Short synthetic one-sentence memories (hybrid recall, defaults, top 10). Latency and RSS in a fresh "
            'process after one warm-up recall; "cold `remnic query`" is a whole CLI process. The full reindex '
            "embeds every memory with the real model on an empty cache up to "
            f"{REAL_EMBED_MAX:,} memories; above that the cache is seeded with random vectors. "
            '"store → searchable" is the recall right after `store()` returned (the index is updated inside the '
            'write call); "hand edit → searchable" is write file + `refresh_paths` + recall; "unsynced hand edit → '
            'recalled" is write file + recall (the recall indexes the edit first, nothing else runs). "edit check" '
            "is the recall's look for unsynced edits when nothing was edited: with the file-event feed a handle "
            "opens at its second recall, and asking git (a handle's first recall, or no feed).",
            "",
            render(result),
            "",
            f"{measured_line(time.perf_counter() - t0, load0)}.",
        ]
    )
    return Report("scale", "Recall at scale", md, result)


if __name__ == "__main__":  # pragma: no cover
    print(render(run_scale([int(x) for x in sys.argv[1:]] or list(DEFAULT_SIZES), log=print)))
