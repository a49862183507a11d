"""LoCoMo pipeline track: conversations observed turn by turn, questions asked of what the pipeline kept.

Each conversation goes into a fresh repository through ``Memory.observe`` — each session's
turns in order, one message per turn (speaker, dia_id as ``turnId``, the session's date as the
timestamp), as a host's stop hook hands them over, the buffer flushed at the end — then every question is asked with ``Memory.recall``.
A recalled memory counts for the evidence dia_ids in its ``sourceTurnIds``. Reported beside
the raw-turn track (one memory per turn, the same harness): evidence R@k per category, the
number of primitives, the compression ratio (trace tokens / stored primitive tokens, counted with
the packaged model's tokenizer; the trace is each turn's text as observed, image caption
included, as the raw-turn track stores it), observe throughput and the judge's verdicts.
Nothing in product code knows about LoCoMo.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from . import Report, md_table
from .locomo import (
    BASELINES,
    CATEGORY_NAMES,
    Conversation,
    QResult,
    default_data_dir,
    find_files,
    load_conversation,
    run_locomo,
    summarize,
)

KS = (1, 5, 10)
CLI_TURNS = 500  # the issue's `remnic observe` target: a 500-turn transcript in at most 5 s


def _messages(conv: Conversation, session: int) -> list[dict[str, Any]]:
    out = []
    for turn in (t for t in conv.turns if t.session == session):
        text = turn.text.strip() + (f" [shares {turn.caption.strip()}]" if turn.caption else "")
        message: dict[str, Any] = {"role": "user", "speaker": turn.speaker, "content": text, "turnId": turn.dia_id}
        if turn.date is not None:
            message["timestamp"] = (turn.date + timedelta(seconds=turn.index)).isoformat().replace("+00:00", "Z")
        out.append(message)
    return out


def token_counter() -> Callable[[str], int]:
    """Tokens of a text by the packaged embedding model's tokenizer (no special tokens)."""
    from tokenizers import Tokenizer

    from remnic.index.embed import DEFAULT_TOKENIZER_PATH

    tokenizer = Tokenizer.from_file(str(DEFAULT_TOKENIZER_PATH))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def model_speed(samples: int = 256) -> dict[str, float]:
    """Texts per CPU-second of the packaged model alone, for short facts and for longer passages: the
    bound on observe throughput (each primitive embeds its text and its episode passage)."""
    from remnic.index.embed import Embedder, EmbedderSpec

    embedder = Embedder(EmbedderSpec())
    fact = "Caroline joined a mentorship program for LGBTQ youth on the weekend before 17 July 2023."
    passage = " ".join([fact] * 5)
    embedder.embed_documents([fact])
    out = {}
    for name, text in (("factsPerCpuSecond", fact), ("passagesPerCpuSecond", passage)):
        texts = [f"{text} {i}" for i in range(samples)]
        cpu = time.process_time()
        embedder.embed_documents(texts)
        out[name] = samples / max(1e-9, time.process_time() - cpu)
    return out


def observe_conversation(root: Path, conv: Conversation) -> dict[str, Any]:
    """Observe every turn of every session (flush per session); counts and timings."""
    from remnic.config import settings_for
    from remnic.service import Memory

    turns = verdicts = 0
    accepted = rejected = deferred = 0
    tokens = token_counter()
    trace_tokens = trace_words = 0
    started = time.perf_counter()
    observing = observing_cpu = 0.0
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.refresh_index()  # a repository in use has its index (here: empty), as after its first write
        # Observe is acknowledged at each flush's commit; the index follows after the last session, so
        # the two are timed apart instead of sharing the cores (and the CPU clock).
        with memory.index_later():
            for session in sorted(conv.sessions):
                messages = _messages(conv, session)
                if not messages:
                    continue
                # The session's turns, in order, one message each (as a host's stop hook hands them over).
                t, cpu = time.perf_counter(), time.process_time()
                result = memory.observe(f"{conv.name}:session-{session}", messages, flush=True, source="locomo")
                observing += time.perf_counter() - t
                observing_cpu += time.process_time() - cpu
                turns += len(messages)
                if result:
                    for obs in result.observations:
                        verdicts += 1
                        accepted += obs.verdict.kind == "accept"
                        rejected += obs.verdict.kind == "reject"
                        deferred += obs.verdict.kind == "defer"
            seconds = time.perf_counter() - started
            t, cpu = time.perf_counter(), time.process_time()
        memory.settle_index()
        indexing = time.perf_counter() - t
        indexing_cpu = time.process_time() - cpu
        primitives = [r for r in memory.list() if r.frontmatter.get("source") == "extraction"]
    for session in conv.sessions:
        for message in _messages(conv, session):
            trace_tokens += tokens(message["content"])
            trace_words += len(message["content"].split())
    stored = [r.content for r in primitives if r.status in ("active", "pending_review")]
    return {
        "turns": turns,
        "seconds": seconds,
        "observeSeconds": observing,
        "indexCatchUpSeconds": indexing,
        "observeCpuSeconds": observing_cpu,
        "indexCatchUpCpuSeconds": indexing_cpu,
        "primitives": len(primitives),
        "stored": len(stored),
        "traceTokens": trace_tokens,
        "keptTokens": sum(tokens(text) for text in stored),
        "traceWords": trace_words,
        "keptWords": sum(len(text.split()) for text in stored),
        "verdicts": verdicts,
        "accepted": accepted,
        "rejected": rejected,
        "deferred": deferred,
    }


def cli_observe(conv: Conversation, turns: int = CLI_TURNS) -> dict[str, Any]:
    """``remnic observe FILE --format plain --flush`` of the conversation's first ``turns`` turns (as
    ``[time] Speaker: text`` lines) into a fresh repository: one whole CLI process, imports and model
    load included; wall and CPU-seconds (the process and its git children)."""
    import os
    import resource
    import subprocess
    import sys

    from remnic.config import settings_for
    from remnic.service import Memory

    lines = [
        f"[{m['timestamp']}] {m['speaker']}: {m['content']}"
        if m.get("timestamp")
        else f"{m['speaker']}: {m['content']}"
        for session in sorted(conv.sessions)
        for m in _messages(conv, session)
    ][:turns]
    with tempfile.TemporaryDirectory(prefix="remnic-pipeline-cli-") as tmp:
        root, transcript = Path(tmp) / "memory", Path(tmp) / "transcript.txt"
        transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with Memory.init(root, settings=settings_for(root)):
            pass
        command = [sys.executable, "-m", "remnic", "observe", str(transcript), "--session-key", "cli", "--format"]
        env = {**os.environ, "REMNIC_MEMORY_DIR": str(root)}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([*command, "plain", "--flush"], env=env, check=True, capture_output=True)
        seconds = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with Memory.open(root) as memory:
            primitives = sum(1 for r in memory.list() if r.frontmatter.get("source") == "extraction")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {
        "conversation": conv.name,
        "turns": len(lines),
        "seconds": seconds,
        "cpuSeconds": cpu,
        "primitives": primitives,
    }


def evaluate(root: Path, conv: Conversation, ks: Sequence[int]) -> list[QResult]:
    from remnic.service import Memory

    kmax = max(ks)
    out = []
    with Memory.open(root) as memory:
        holds = {r.id: set(map(str, r.frontmatter.get("sourceTurnIds") or [])) for r in memory.list()}
        memory.recall("warm up", top_k=1)
        for q in conv.questions:
            t = time.perf_counter()
            result = memory.recall(q.text, top_k=kmax, statuses=["active", "pending_review"])
            ms = (time.perf_counter() - t) * 1000
            ranked = [holds.get(h.id, set()) for h in result.hits]
            evidence = set(q.evidence)
            found, hit = {}, {}
            for k in ks:
                got = set().union(*ranked[:k]) if ranked[:k] else set()
                found[k] = len(evidence & got) / len(evidence)
                hit[k] = 1.0 if evidence & got else 0.0
            rr = next((1.0 / i for i, ids in enumerate(ranked, 1) if ids & evidence), 0.0)
            out.append(QResult(q.category, found, hit, rr, ms))
    return out


def run_pipeline(
    data: Sequence[str | Path], *, ks: Sequence[int] = KS, log: Callable[[str], None] | None = None
) -> dict[str, Any]:
    results: list[QResult] = []
    per_conv: dict[str, dict[str, Any]] = {}
    convs = [load_conversation(p) for p in find_files(data)]
    for conv in convs:
        with tempfile.TemporaryDirectory(prefix=f"remnic-pipeline-{conv.name}-") as tmp:
            root = Path(tmp) / "memory"
            stats = observe_conversation(root, conv)
            results += evaluate(root, conv, ks)
            per_conv[conv.name] = stats
            if log:
                log(
                    f"  {conv.name} [pipeline]: {stats['turns']} turns → {stats['primitives']} primitives "
                    f"in {stats['seconds']:.1f}s"
                )
    totals = {k: sum(s[k] for s in per_conv.values()) for k in next(iter(per_conv.values()), {})}
    return {
        "ks": list(ks),
        "conversations": [c.name for c in convs],
        "questions": sum(len(c.questions) for c in convs),
        "perConversation": per_conv,
        "totals": totals,
        "compression": totals["traceTokens"] / max(1, totals["keptTokens"]) if totals else 0.0,
        "turnsPerSecond": totals["turns"] / max(1e-9, totals["observeSeconds"]) if totals else 0.0,
        "turnsPerCpuSecond": (
            totals["turns"] / max(1e-9, totals["observeCpuSeconds"] + totals["indexCatchUpCpuSeconds"])
            if totals
            else 0.0
        ),
        "observeTurnsPerCpuSecond": totals["turns"] / max(1e-9, totals["observeCpuSeconds"]) if totals else 0.0,
        "model": model_speed(),
        "metrics": summarize(results, ks),
    }


def render(pipeline: dict[str, Any], raw: dict[str, Any]) -> str:
    def row(name: str, summary: dict[str, Any]) -> list[str]:
        o = summary["overall"]
        cats = [
            f"{(summary['categories'].get(c) or {}).get(f'recall@{k}', float('nan')):.3f}"
            for c in (1, 2, 3, 4)
            for k in (5, 10)
        ]
        return [name, f"{o['recall@5']:.3f}", f"{o['recall@10']:.3f}", f"{o['mrr']:.3f}", *cats]

    head = [
        "track",
        "R@5",
        "R@10",
        "MRR",
        *[f"{CATEGORY_NAMES[c]} R@{k}" for c in (1, 2, 3, 4) for k in (5, 10)],
    ]
    raw_hybrid = raw["methods"][BASELINES[0].name]
    t = pipeline["totals"]
    lines = [
        md_table(
            head, [row("raw turns (one memory per turn)", raw_hybrid), row("pipeline (observed)", pipeline["metrics"])]
        ),
        "",
        f"Pipeline: {t['turns']} turns observed at {pipeline['turnsPerSecond']:.1f} turns/s "
        f"({t['observeSeconds']:.1f} s in `Memory.observe`, every flush's persist and commit included; the index, "
        f"held while observing, caught up in {t['indexCatchUpSeconds']:.1f} s after) → {t['primitives']} primitives "
        f"({t['stored']} active or pending review); compression {pipeline['compression']:.2f}× "
        f"({t['traceTokens']} trace tokens / {t['keptTokens']} stored tokens; in words "
        f"{t['traceWords'] / max(1, t['keptWords']):.2f}×); judge: {t['accepted']} accepted, "
        f"{t['rejected']} rejected, {t['deferred']} deferred (pending review).",
        "",
        f"CPU (wall time on this shared machine depends on the other jobs, CPU time does not): observe "
        f"{pipeline['observeTurnsPerCpuSecond']:.1f} turns per CPU-second ({t['observeCpuSeconds']:.1f} CPU-s: "
        f"extraction, one embedding per fact sentence, duplicate checks, files and commits); the index catch-up "
        f"{t['indexCatchUpCpuSeconds']:.1f} CPU-s (the sentences come from the embedding cache; each primitive's "
        f"episode passage is embedded); together {pipeline['turnsPerCpuSecond']:.1f} turns per CPU-second. The "
        f"model alone embeds {pipeline['model']['factsPerCpuSecond']:.0f} one-sentence facts or "
        f"{pipeline['model']['passagesPerCpuSecond']:.0f} five-sentence passages per CPU-second.",
        "",
        md_table(
            ["conversation", "turns", "primitives", "compression", "turns/s", "accepted", "rejected", "deferred"],
            [
                [
                    name,
                    s["turns"],
                    s["primitives"],
                    f"{s['traceTokens'] / max(1, s['keptTokens']):.2f}×",
                    f"{s['turns'] / max(1e-9, s['observeSeconds']):.1f}",
                    s["accepted"],
                    s["rejected"],
                    s["deferred"],
                ]
                for name, s in pipeline["perConversation"].items()
            ],
        ),
    ]
    return "\n".join(lines)


def targets(pipeline: dict[str, Any], raw: dict[str, Any]) -> str:
    """The issue's targets, each met or not, from this run's figures."""
    r10 = pipeline["metrics"]["overall"].get("recall@10", float("nan"))  # nan when --k leaves 10 out
    raw_r10 = raw["methods"][BASELINES[0].name]["overall"].get("recall@10", float("nan"))

    def mark(ok: bool) -> str:
        return "met" if ok else "**missed**"

    rows = [
        ["compression ≥ 2×", f"{pipeline['compression']:.2f}×", mark(pipeline["compression"] >= 2.0)],
        [
            "R@10 at most 0.05 below the raw-turn track",
            f"{r10:.3f} vs {raw_r10:.3f} ({r10 - raw_r10:+.3f})",
            mark(r10 >= raw_r10 - 0.05),
        ],
        [
            "observe ≥ 200 turns/s, persist included",
            f"{pipeline['turnsPerSecond']:.1f} turns/s wall ({pipeline['observeTurnsPerCpuSecond']:.0f} per CPU-second)",
            mark(pipeline["turnsPerSecond"] >= 200),
        ],
    ]
    cli = pipeline.get("cli")
    if cli:
        rows.append(
            [
                f"`remnic observe` of a {CLI_TURNS}-turn transcript ≤ 5 s",
                f"{cli['seconds']:.1f} s wall, {cli['cpuSeconds']:.1f} CPU-s ({cli['turns']} turns of conversation "
                f"{cli['conversation']}, {cli['primitives']} primitives; one CLI process on a fresh repository, load "
                f"average {cli['loadBefore']:.1f})",
                mark(cli["seconds"] <= 5.0 and cli["turns"] >= CLI_TURNS),
            ]
        )
    return md_table(["target", "this run", ""], rows)


def run(quick: bool = False, data: Sequence[str | Path] | None = None) -> Report:
    files = find_files(list(data or [default_data_dir()]))
    if quick:
        files = files[:1]

    def log(msg: str) -> None:
        print(msg, flush=True)

    import os

    t0 = time.perf_counter()
    load_before = os.getloadavg()[0]
    pipeline = run_pipeline(files, log=log)
    load_after = os.getloadavg()[0]
    convs = [load_conversation(p) for p in files]
    longest = next((c for c in convs if len(c.turns) >= CLI_TURNS), max(convs, key=lambda c: len(c.turns)))
    pipeline["cli"] = {**cli_observe(longest), "loadBefore": os.getloadavg()[0]}
    log(f"  {longest.name} [cli]: {pipeline['cli']['turns']} turns in {pipeline['cli']['seconds']:.1f}s")
    raw = run_locomo(files, granularity="turn", methods=BASELINES[:1], log=log)
    text = "\n".join(
        [
            "Each conversation observed turn by turn through `Memory.observe` (speaker, dia_id as turnId, the "
            "session date as timestamp; a flush per session), then every question recalled; a memory counts "
            "for the dia_ids in its `sourceTurnIds`. Beside it, the raw-turn track from the same run.",
            "",
            render(pipeline, raw),
            "",
            targets(pipeline, raw),
            "",
            f"Measured in {time.perf_counter() - t0:.0f} s (load average {load_before:.1f} before the pipeline "
            f"track, {load_after:.1f} after, on {os.cpu_count()} cores); data: {', '.join(p.name for p in files)}. "
            f"p50 recall {statistics.median([pipeline['metrics']['overall']['p50_ms']]):.1f} ms.",
        ]
    )
    return Report("pipeline", "LoCoMo pipeline track: observed conversations", text, {"pipeline": pipeline, "raw": raw})
