"""Recall commands: ``query``, ``xray``, ``audit``, ``reindex`` and ``benchmark`` (LoCoMo retrieval, scale, adopt)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from remnic.config import CEILINGS, STATE_DIR
from remnic.errors import FieldProblem, RemnicError, UsageError
from remnic.fsio import write_atomic
from remnic.memfile.paths import MemoryPaths

from ._common import (
    add_command,
    add_filter_args,
    choice_list,
    emit,
    filter_options,
    open_memory,
    plural,
    positive_int,
    progress_bar,
    read_text_arg,
    safe,
    wants_json,
)
from .audit import cmd_audit_list, cmd_audit_show


def _non_negative_int(name: str) -> Any:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be 0 (no limit) or a positive integer, got {value!r}"
            ) from None
        if number < 0:
            raise argparse.ArgumentTypeError(f"{name} must be 0 (no limit) or a positive integer, got {value!r}")
        return number

    return parse


def _k_list(value: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in value.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k must be comma-separated positive integers, got {value!r}") from None
    if not ks or ks[0] <= 0:
        raise argparse.ArgumentTypeError(f"--k must be comma-separated positive integers, got {value!r}")
    return ks


def _sizes(value: str) -> list[int]:
    try:
        sizes = [int(x.replace("_", "").lower().replace("k", "000")) for x in value.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--sizes must be comma-separated counts like 10k,100k, got {value!r}"
        ) from None
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError(f"--sizes must be comma-separated positive counts, got {value!r}")
    return sizes


QUERY_EPILOG = """\
Hybrid recall: BM25 (tantivy, stemmed) and local embeddings (ONNX), fused by
normalised scores, plus importance and recency, episode expansion and MMR, cut
to --top-k and the character budget. Only active memories are searched unless
--include-inactive, --include-superseded or --status says otherwise; without
--namespace every namespace is searched (one that holds no memory file gets a
warning on stderr naming the namespaces that do). The index under .remnic/ is checked
first and caught up or rebuilt when it is missing or stale (the footer says so,
apart from the recall's own time), and memory files edited since the last
commit are indexed first, without committing them.

examples:
  remnic query "when do we release?"
  remnic query "editor settings" --top-k 3 --namespace work --json
  remnic query "old plans" --include-inactive
"""


XRAY_EPILOG = """\
A fresh recall of QUERY with its X-ray: the tier that served each result
(direct-answer, hybrid, graph, recent-scan, procedural, review-context), the
filter ladder with considered/admitted counts, each result's score
decomposition (terms that sum to its final score, mmr_penalty subtracted: it
is shown as the positive amount taken off; the raw similarity and BM25 score
are beside the normalised terms), provenance and safety, the budget used, and
the audit entry id (see `remnic audit show ID`). Without --namespace
the recall spans every namespace, like `remnic query` (and, like it, warns
when --namespace holds no memory file).
The layouts are the original Remnic's: text and markdown print what its
renderer prints for the same snapshot, and --format json prints the snapshot
flat, {"snapshotFound": true, "schemaVersion": "1", ...}
({"schemaVersion": "1", "snapshotFound": false} when none was captured).
Set REMNIC_XRAY_CLOCK=<epoch ms> for a reproducible X-ray (pinned time, ids and
latencies): what golden tests and cross-surface comparisons use.

examples:
  remnic xray "what did we decide about the recall cache TTL"
  remnic xray "how do I roll back a release?" --format markdown --out ~/xray.md
  remnic xray "editor" --format json --namespace work --budget 2048 --session sess-42
"""


def _xray_format(value: str) -> str:
    from remnic.render.xray import parse_format

    try:
        return parse_format(value, flag="--format")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: Any) -> None:
    p = add_command(sub, "query", "hybrid recall: the memories that best match TEXT", epilog=QUERY_EPILOG)
    p.add_argument("text", metavar="TEXT", help="what to recall (free text; - reads standard input)")
    p.add_argument(
        "--top-k",
        "-k",
        type=positive_int("--top-k", CEILINGS["recall.topK"]),
        help="results to return (default: recall.topK)",
    )
    p.add_argument(
        "--namespace", "-n", help="search only this namespace (default: every namespace, not namespaces.default)"
    )
    p.add_argument(
        "--budget",
        type=_non_negative_int("--budget"),
        metavar="CHARS",
        help="character budget for the returned contents (0 = no limit; default: recall.budgetChars)",
    )
    p.add_argument(
        "--citations",
        action="store_true",
        help="end with an <oai-mem-citation> block naming each result's file and lines (the form Codex reads)",
    )
    add_filter_args(p)
    p.add_argument(
        "--explain",
        action="store_true",
        help="append the recall's X-ray (tiers, filter ladder, score terms, provenance; see `remnic xray`)",
    )
    p.set_defaults(handler=cmd_query)

    p = add_command(sub, "xray", "recall X-ray: why each memory surfaced for QUERY", epilog=XRAY_EPILOG)
    p.add_argument("text", metavar="QUERY", help="what to recall (free text; - reads standard input)")
    p.add_argument(
        "--format",
        "-f",
        type=_xray_format,
        default=None,
        metavar="FORMAT",
        help="text (default), markdown or json (the snapshot flat under snapshotFound; "
        "GET /engram/v1/recall/xray and MCP send it as {snapshotFound, snapshot})",
    )
    p.add_argument(
        "--budget",
        type=_non_negative_int("--budget"),
        metavar="CHARS",
        help="character budget for this recall (0 = no limit; default: recall.budgetChars)",
    )
    p.add_argument("--namespace", "-n", help="scope the recall to this namespace (default: every namespace)")
    p.add_argument("--session", metavar="KEY", help="session key recorded in the snapshot and the audit entry")
    p.add_argument(
        "--top-k", "-k", type=positive_int("--top-k", CEILINGS["recall.topK"]), help="results (default: recall.topK)"
    )
    add_filter_args(p)
    p.add_argument(
        "--out",
        "-o",
        metavar="PATH",
        help="write the rendering to PATH (~ expanded, written atomically) instead of standard output " + OUT_HELP,
    )
    p.set_defaults(handler=cmd_xray)

    p = add_command(
        sub,
        "audit",
        "the recall audit ledger: one entry per recall under state/audit/",
        epilog="examples:\n  remnic audit list --limit 5\n  remnic audit show audit-20261121-5f6b1a2c9d8e --json",
    )
    audit = p.add_subparsers(dest="audit_command", metavar="<show|list>", required=True)
    a = add_command(
        audit,
        "show",
        "print one audit entry (the auditEntryId of an X-ray result); under a pinned clock, the newest of "
        "those sharing the id, then the others",
    )
    a.add_argument("audit_id", metavar="ID", help="an audit entry id, e.g. audit-20261121-5f6b1a2c9d8e")
    a.set_defaults(handler=cmd_audit_show)
    a = add_command(audit, "list", "the newest audit entries, newest first (a long query cut to 120 characters)")
    a.add_argument("--limit", type=positive_int("--limit"), default=20, help="entries to show (default 20)")
    a.set_defaults(handler=cmd_audit_list)

    p = add_command(
        sub,
        "reindex",
        "rebuild the search index from the memory files",
        epilog="Re-reads every memory file, re-embeds only text the embedding cache has not seen,\n"
        "and swaps the new index in atomically (recalls in other processes keep working).\n"
        "Safe to run any time; `rm -rf .remnic/` followed by a recall does the same.",
    )
    p.set_defaults(handler=cmd_reindex)

    p = add_command(
        sub,
        "benchmark",
        "benchmarks: LoCoMo evidence recall, scale latency, adopting a notes vault",
        epilog="examples:\n  remnic benchmark locomo --data ../shared/data/locomo\n"
        "  remnic benchmark locomo --data 26.json --granularity session --k 1,3,5\n"
        "  remnic benchmark scale --sizes 10k\n  remnic benchmark adopt --notes 2000",
    )
    bench = p.add_subparsers(dest="suite", metavar="<locomo|scale|adopt>", required=True)

    b = add_command(
        bench,
        "locomo",
        "evidence recall@k on LoCoMo conversations (imported through the API)",
        epilog="Each conversation goes into a fresh temporary memory repository; every question\n"
        "is asked with Memory.recall. Prints recall@k, hit@k per category (category 5,\n"
        "adversarial, apart), MRR and latency, beside BM25-only and vector-only baselines.",
    )
    b.add_argument(
        "--data",
        nargs="+",
        metavar="DIR|FILE",
        help="LoCoMo *.json files or directories (default: $REMNIC_LOCOMO_DIR or ../shared/data/locomo)",
    )
    b.add_argument(
        "--granularity",
        type=choice_list("granularity", ("turn", "session")),
        default="turn",
        help="one memory per turn (default) or per session",
    )
    b.add_argument(
        "--track",
        type=choice_list("track", ("raw", "pipeline")),
        default="raw",
        help="raw: one memory per turn or session (default); pipeline: conversations observed turn by turn "
        "through the observation pipeline, reported beside the raw-turn track",
    )
    b.add_argument("--k", type=_k_list, default=[1, 5, 10], help="cut-offs, e.g. 1,5,10 (default)")
    b.add_argument("--variants", action="store_true", help="also evaluate the documented setting variants")
    b.add_argument(
        "--cv",
        action="store_true",
        help="leave-one-conversation-out cross-validation of the tuned settings, beside the in-sample figures",
    )
    b.add_argument("--limit-questions", type=positive_int("--limit-questions"), help="ask at most N per conversation")
    b.set_defaults(handler=cmd_bench_locomo)

    b = add_command(bench, "scale", "recall latency, RSS, reindex time and write-to-searchable at N memories")
    b.add_argument("--sizes", type=_sizes, help="memory counts, e.g. 10k,100k (default: 10k,100k)")
    b.add_argument(
        "--queries", type=positive_int("--queries"), default=200, help="queries timed per size (default: 200)"
    )
    b.set_defaults(handler=cmd_bench_scale)

    b = add_command(
        bench,
        "adopt",
        "adopt a generated notes vault: time to searchable, to vectors, peak RSS, values kept, long notes found",
        epilog="Generates a vault (long-tailed lengths, wikilinks, aliases, foreign and TOML frontmatter,\n"
        "some unparsable YAML), runs `remnic init --adopt '**'` and a real `remnic sync run`, and\n"
        "reports: all notes BM25-searchable (target <= 15 s), embeddings complete vs the model's\n"
        "raw throughput, peak RSS of the sync (target <= 500 MB), notes rejected, user values\n"
        "rewritten, and every long note recalled by a phrase from its end.",
    )
    b.add_argument("--notes", type=positive_int("--notes"), default=2000, help="notes in the vault (default 2000)")
    b.add_argument("--seed", type=int, default=18, help="seed of the generated vault (default 18)")
    b.set_defaults(handler=cmd_bench_adopt)


def _hit_text(result: Any, explain: bool) -> str:
    lines = []
    own = (getattr(result, "spaces", None) or [None])[0]
    for h in result.hits:
        tier = "" if h.served_by == "hybrid" else f"  <{h.served_by}>"
        flag = "" if h.safety == "safe" else f"  !{h.safety}"
        # A read-only space's hit: its path is in that space's repository, not this one.
        where = f"space {h.space}: " if getattr(h, "space", None) and h.space != own else ""
        lines.append(safe(f"[{h.rank}] {h.score:.3f}  {h.id}  [{h.category}, {h.status}]  {where}{h.path}{tier}{flag}"))
        body = " ".join(h.content.split())
        lines.append("    " + safe(body[:240] + "…" if len(body) > 240 else body))
    if not result.hits:
        fit = next((s for s in result.stages if s.name == "budget-fit"), None)
        if fit is not None and fit.considered and not fit.admitted:
            lines.append(
                f"{plural(fit.considered, 'match', 'matches')} found, but none fits the budget of "
                f"{result.budget_chars} characters (raise --budget)"
            )
        else:
            lines.append("no memories match")
    else:
        lines.append(
            f"{len(result.hits)} result(s); {result.budget_used} chars"
            + (f" of {result.budget_chars}" if result.budget_chars else "")
            + f"; {result.timings_ms.get('total', 0):.0f} ms"
        )
    lines += [*index_lines(result.index), *result.notes]  # e.g. the query cut to recall.maxQueryChars
    if explain:
        from remnic.render.xray import render_xray  # its templates load only for an X-ray

        # The same renderer as `remnic xray`, HTTP and MCP: one X-ray layout everywhere.
        lines += ["", render_xray(result.xray, "text")]
    return "\n".join(lines)


def index_lines(index: dict[str, Any]) -> list[str]:
    """What the recall had to do to the index first, apart from the recall's own time: a rebuild
    is reported as one, never hidden in the latency."""
    lines = []
    action, seconds = index.get("action"), index.get("seconds", 0.0)
    if action == "rebuild":
        lines.append(
            f"index rebuilt before this recall: {plural(index.get('changed', 0), 'memory', 'memories')} "
            f"in {seconds:.1f} s ({index.get('reason') or 'requested'}); not counted in the recall's time"
        )
    elif action == "catch-up":
        lines.append(
            f"index caught up with {plural(index.get('changed', 0), 'changed file')} in {seconds:.2f} s first "
            f"({index.get('reason')})"
        )
    elif action == "unavailable" and index.get("model"):  # the model is at fault, not the index
        lines.append(f"embedding model unusable ({index['model']}): the files were scanned; the index is fine")
    elif action == "unavailable":
        lines.append(f"index unavailable; the files were scanned instead ({index.get('reason')})")
    if index.get("note"):
        lines.append(str(index["note"]))
    return lines


def cmd_query(args: argparse.Namespace) -> int:
    text = read_text_arg(args.text)
    if not text.strip():
        raise UsageError("TEXT must not be empty (give the words to recall)")
    memory = open_memory(args)
    result = memory.recall(
        text,
        top_k=args.top_k,
        namespace=args.namespace,
        budget_chars=args.budget,
        **filter_options(args),
        xray=args.explain,
        source="cli",
        progress=progress_bar(args, "indexing"),
    )
    _warn_namespace(memory, args.namespace, bool(result.hits))
    for warning in result.warnings:  # the namespace's was just said, in the flag's words
        if not warning.startswith("namespace "):
            print(f"remnic: warning: {warning}", file=sys.stderr)
    data = result.to_dict(with_candidates=args.explain)
    if args.explain:
        data["xray"] = result.xray.to_dict() if result.xray is not None else None
    cite = args.citations or memory.settings.recall.citations
    if cite:
        data["citations"] = memory.citations(result.hits)
    emit(args, data, lambda: _hit_text(result, args.explain) + ("\n" + data["citations"] if cite else ""))
    return 0


def _warn_namespace(memory: Any, namespace: str | None, found: bool) -> None:
    """On stderr (the exit code stays 0): an empty recall in a namespace that holds no memory file."""
    warning = None if found else memory.namespace_warning(namespace)
    if warning:
        print(f"remnic: warning: {warning}", file=sys.stderr)


def out_path(path: str, memory: Any, what: str = "output") -> Path | None:
    """Where ``--out`` writes (``~`` expanded; None: ``-``, standard output, as ``-`` is standard input
    elsewhere), checked before anything runs: not a folder, and not a path the repository would take as
    a memory file (the next sync would commit the output as one), a file git tracks (its config) nor git's
    own folder. Elsewhere in the
    repository is fine, as ``remnic export > f.jsonl`` is. ``export`` and ``xray`` share this rule."""
    if path == "-":
        return None
    target = Path(os.path.expanduser(path)).absolute()
    if target.is_dir():
        raise UsageError(f"--out {path!r} is a directory; give a file path")
    if not target.parent.is_dir():
        raise UsageError(f"--out {path!r}: directory {target.parent} does not exist; create it first")
    real, root = os.path.realpath(target), os.path.realpath(memory.root)
    if not real.startswith(root + os.sep):
        return target
    rel = os.path.relpath(real, root).replace(os.sep, "/")
    if rel.split("/")[0] == ".git":
        raise UsageError(f"--out {path!r} is inside the repository's .git folder (git's own data); write it elsewhere")
    if memory.is_tracked(rel):
        raise UsageError(
            f"--out {path!r} is a file this repository tracks in git ({rel}); writing the {what} over it would "
            f"change the repository itself; write it elsewhere (a new file, or a path under {STATE_DIR}/)"
        )
    if MemoryPaths.from_store(memory.settings.store).is_memory(rel):
        raise UsageError(
            f"--out {path!r} would be a memory file of this repository ({rel} is in its memory folders or "
            f"store.include), so the next sync would take the {what} as a memory; write it elsewhere, or under "
            f"a name no memory file has (a .jsonl file, or a path under {STATE_DIR}/)"
        )
    return target


OUT_HELP = (
    "('-': standard output; ./- for a file named -); anywhere but a path that would be a memory file of "
    "this repository (its memory folders, store.include), a file git tracks there (remnic.config.json, "
    ".gitattributes, …) or under its .git folder"
)
"""What ``--out`` of ``export`` and ``xray`` refuses, said in both helps."""


def write_out(target: Path, text: str) -> None:
    """Write atomically (temp file + rename); the previous file, if any, survives a failure."""
    try:
        write_atomic(target, text)
    except OSError as exc:
        raise RemnicError(f"cannot write --out {target}: {exc.strerror or exc}") from None


class FlagConflict(UsageError):
    """Two flags that contradict each other: a usage error as argparse's are (``code`` usage_error), each
    flag a detail, so a script reads the same shape whichever of them the parser could have refused."""

    code = "usage_error"


def cmd_xray(args: argparse.Namespace) -> int:
    from remnic.render.xray import FORMATS, render_xray

    text = read_text_arg(args.text).strip()
    if not text:
        raise UsageError("QUERY must not be empty (give the words to recall)")
    if wants_json(args) and args.format not in (None, "json"):
        raise FlagConflict(
            f"--json means --format json and conflicts with --format {args.format}; give one of them "
            "(--format text, markdown or json)",
            problems=[
                FieldProblem("--json", f"means --format json, not --format {args.format}"),
                FieldProblem("--format", f"{args.format} conflicts with --json", options=FORMATS),
            ],
        )
    fmt = args.format or ("json" if wants_json(args) else "text")
    filters = filter_options(args)
    memory = open_memory(args)
    target = out_path(args.out, memory, "X-ray") if args.out else None
    snapshot = memory.recall_xray(
        text,
        namespace=args.namespace,
        session_key=args.session,
        budget_chars=args.budget,
        top_k=args.top_k,
        **filters,
        source="cli",
    )
    _warn_namespace(memory, args.namespace, bool(snapshot is not None and snapshot.results))
    # One renderer for every format and surface; like the original's CLI, the rendering is
    # printed as a line (the renderer itself ends without a newline), to stdout or --out.
    rendered = render_xray(snapshot, fmt) + "\n"
    if target is not None:
        write_out(target, rendered)
        print(f"wrote the X-ray ({fmt}) to {target}", file=sys.stderr)
    else:
        sys.stdout.write(rendered)
        sys.stdout.flush()
    if snapshot is None:
        print("remnic: error: the X-ray could not be captured (the recall ran; see the log)", file=sys.stderr)
        return 1
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    bar = progress_bar(args, "embedding")
    cached: list[int] = []
    texts = [0]

    def progress(done: int, total: int) -> None:
        # The cache's hits are reported first: the bar counts only what the model runs for, as the summary.
        if not cached:
            cached.append(done)
        texts[0] = total
        if total > cached[0]:
            bar(done - cached[0], total - cached[0])

    report = memory.reindex(progress=progress)
    health = memory.index_health()
    data = {**report.to_dict(), "texts": texts[0], "index": health}
    text = (
        f"reindexed {plural(report.changed, 'memory', 'memories')} in {report.seconds:.1f}s "
        f"({report.embedded} texts embedded, {max(texts[0] - report.embedded, 0)} from the cache); "
        f"index {health['state']}"
    )
    if report.problems:
        text += f"\n{len(report.problems)} malformed file(s) left out (run `remnic doctor`):\n  " + "\n  ".join(
            report.problems
        )
    emit(args, data, text)
    return 0


def cmd_bench_locomo(args: argparse.Namespace) -> int:
    from remnic.bench import locomo

    data = args.data or [str(locomo.default_data_dir())]
    try:
        files = locomo.find_files(data)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    methods: tuple[locomo.Method, ...] = locomo.BASELINES if args.granularity == "turn" else locomo.BASELINES[:3]
    if args.variants:
        methods = (locomo.BASELINES[0], *locomo.VARIANTS)
    log = None if wants_json(args) else (lambda msg: print(msg, file=sys.stderr, flush=True))
    if args.track == "pipeline":
        from remnic.bench import pipeline

        observed = pipeline.run_pipeline(files, ks=args.k, log=log)
        raw = locomo.run_locomo(files, granularity="turn", ks=args.k, methods=locomo.BASELINES[:1], log=log)
        emit(
            args,
            {"pipeline": observed, "raw": raw},
            lambda: pipeline.render(observed, raw) + "\n\n" + pipeline.targets(observed, raw),
        )
        return 0
    if args.cv:
        from remnic.bench import locomo_cv

        try:
            cv = locomo_cv.run_cv(
                files, granularity=args.granularity, ks=args.k, limit_questions=args.limit_questions, log=log
            )
        except ValueError as exc:
            raise UsageError(f"--cv: {exc}") from None
        emit(args, cv, lambda: locomo_cv.render_cv(cv))
        return 0
    result = locomo.run_locomo(
        files, granularity=args.granularity, ks=args.k, methods=methods, limit_questions=args.limit_questions, log=log
    )
    emit(args, result, lambda: locomo.render(result) if not args.variants else locomo.render_variants(result))
    return 0


def cmd_bench_scale(args: argparse.Namespace) -> int:
    from remnic.bench import scale

    sizes = args.sizes or list(scale.DEFAULT_SIZES)
    log = None if wants_json(args) else (lambda msg: print(msg, file=sys.stderr, flush=True))
    result = scale.run_scale(sizes, queries=args.queries, log=log, progress=lambda label: progress_bar(args, label))
    emit(args, result, lambda: scale.render(result))
    return 0


def cmd_bench_adopt(args: argparse.Namespace) -> int:
    from remnic.bench import adopt

    log = None if wants_json(args) else (lambda msg: print(msg, file=sys.stderr, flush=True))
    result = adopt.run_adopt(args.notes, seed=args.seed, log=log)
    emit(args, result, lambda: adopt.render(result))
    return 0
