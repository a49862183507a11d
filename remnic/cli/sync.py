"""`remnic sync run|watch`: hand edits become validated, indexed, committed memories."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from remnic.errors import EXIT_INTERRUPTED

from ._common import add_command, emit, non_negative_int, open_memory, progress_bar, wants_json

EXIT_TERMINATED = 143
"""Stopped by SIGTERM, as shells report it (128 + 15)."""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "sync",
        "bring the index and git in step with hand edits (run once, or watch)",
        epilog="Sync finds what changed since the commit the index reflects (remnic's commits,\n"
        "plain `git commit`, a pull, a checkout, uncommitted edits), validates it,\n"
        "normalises frontmatter (id and defaults for a body-only file; updated and\n"
        "contentHash after an edit) without touching the body, updates the index and\n"
        "commits the edits as one sync commit. A malformed file is reported with its\n"
        "line, left untouched (sync never commits its text; moving one you committed is\n"
        "committed as a pure rename), and kept out of the index. Every run exits 1 while\n"
        "a file is malformed.\n\n"
        "examples:\n  remnic sync run\n  remnic sync run --no-commit --json\n"
        "  remnic sync watch --debounce-ms 300",
    )
    ssub = p.add_subparsers(dest="sync_command", metavar="<run|watch>", required=True)

    q = add_command(
        ssub,
        "run",
        "sync once: validate, normalise, index and commit what changed",
        epilog="A file that already has an id (written by remnic, the original Remnic or you) is\n"
        "taken as it is: it changes only when you edit its text (updated, in your spelling,\n"
        "and its contentHash follow) or move it to another category folder (its category\n"
        "follows). A file without an id gets one and remnic's default keys. Files that are\n"
        "not memories (outside the memory folders, README-like, attachments) are listed\n"
        "with the reason and never touched.\n\n"
        "When many notes need embedding (a first adoption: more than sync.deferEmbeddingsAbove\n"
        "texts), they are indexed for BM25 and committed first, so they are searchable at once;\n"
        "their vectors are computed next, with a progress bar on stderr. Stopping it is safe:\n"
        "the next `remnic sync run` continues where it stopped, and recall works meanwhile.\n\n"
        "examples:\n  remnic sync run --dry-run\n  remnic sync run --normalize",
    )
    q.add_argument("--no-commit", action="store_true", help="index and normalise, but leave the edits uncommitted")
    q.add_argument("--full", action="store_true", help="re-read every memory file instead of diffing")
    q.add_argument(
        "--dry-run", action="store_true", help="list what would change (files, keys, commits); change nothing"
    )
    q.add_argument(
        "--normalize",
        action="store_true",
        help="also give files that have an id the default keys they lack and bring tiers and contentHash "
        "in step (every file; your values are never replaced otherwise)",
    )
    q.set_defaults(handler=cmd_run)

    q = add_command(
        ssub,
        "watch",
        "watch the repository and sync each burst of saves",
        epilog="Prints one line per change (JSON lines with --json). Stops on Ctrl-C (exit 130,\n"
        "as every command) or SIGTERM/SIGHUP (exit 0: a service manager's stop, a closed\n"
        "terminal) after syncing what is pending; a second Ctrl-C aborts at once.\n\n"
        "examples:\n  remnic sync watch\n  remnic sync watch --debounce-ms 1000 --json   # JSON lines, one per change",
    )
    q.add_argument(
        "--debounce-ms",
        type=non_negative_int("--debounce-ms"),
        default=None,
        help="wait this long after the last save before syncing (0: at once; default: sync.debounceMs, 200)",
    )
    q.add_argument("--no-commit", action="store_true", help="index and normalise, but leave the edits uncommitted")
    q.set_defaults(handler=cmd_watch)


class Terminated(KeyboardInterrupt):
    """SIGTERM during ``sync run``: stopped as Ctrl-C stops it, with the same last line, exit 143."""

    exit_code = EXIT_TERMINATED


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` where SIGINT raises KeyboardInterrupt (only the main thread
    may set a handler: run inside a server's thread, the process's own handling stays)."""

    def terminate(_signum: int, _frame: Any) -> None:
        raise Terminated

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_run(args: argparse.Namespace) -> int:
    from remnic.service.adopt import binary_files, interrupted_sync  # loaded before a Ctrl-C needs it

    memory = open_memory(args)
    with memory, _terminate_as_interrupt():
        before, started = memory.head(), time.time()
        try:
            report = memory.sync(
                commit=False if args.no_commit else None,
                full=args.full,
                normalize_all=args.normalize,
                dry_run=args.dry_run,
                progress=progress_bar(args, "indexing"),
                read_progress=_then_says(progress_bar(args, "reading memory files"), args),
            )
        except KeyboardInterrupt as exc:
            if args.dry_run:
                raise
            # What stands is said by the CLI's interrupt line (exit 130, or 143 for SIGTERM).
            raise type(exc)(interrupted_sync(memory, before, started)) from None
        if not wants_json(args):
            binaries = binary_files(memory.root, report.malformed_paths)
            print(_run_text(args, report, binaries), flush=True)  # searchable now: say so before the vectors' phase
        vectors, stopped_by = (None, EXIT_INTERRUPTED) if args.dry_run else _embed_pending(args, memory)
        waiting = memory.vectors_pending()[1] if vectors is not None and vectors.remaining else 0
    if wants_json(args):
        emit(args, {**report.to_dict(), **({"vectors": vectors.to_dict()} if vectors is not None else {})})
    elif vectors is not None:
        print(_vectors_text(vectors, waiting))
    if vectors is not None and vectors.interrupted:
        return stopped_by
    return 1 if report.problems or report.mode == "paused" else 0


def _then_says(bar: Any, args: argparse.Namespace) -> Any:
    """The reading bar, then a line for the steps with no bar of their own (writing frontmatter, the commit,
    BM25 indexing), which take a while for thousands of notes and would otherwise look hung."""

    def step(done: int, total: int) -> None:
        bar(done, total)
        if done >= total and bar.enabled and not said:
            said.append(True)
            print(f"writing frontmatter, committing and indexing {total} note(s)...", file=sys.stderr, flush=True)

    said: list[bool] = []
    return step


def _embed_pending(args: argparse.Namespace, memory: Any) -> tuple[Any, int]:
    """The second phase of a first adoption: the vectors of notes already searchable by BM25, and the exit
    code when a signal stopped it (130 for Ctrl-C, 143 for SIGTERM)."""
    if not memory.vectors_pending()[0]:
        return None, EXIT_INTERRUPTED
    bar = progress_bar(args, "embedding")
    stopped: list[int] = []
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def interrupt(signum: int, _frame: Any) -> None:
        stopped.append(signum)  # finish the batch in flight (its vectors are kept), then stop
        for sig, handler in previous.items():  # a second signal aborts at once
            signal.signal(sig, handler)

    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        for sig in signals:
            signal.signal(sig, interrupt)
    try:
        vectors = memory.embed_pending(progress=bar, stop=lambda: bool(stopped))
    finally:
        if in_main:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return vectors, EXIT_TERMINATED if stopped[:1] == [signal.SIGTERM] else EXIT_INTERRUPTED


def _vectors_text(vectors: Any, waiting: int) -> str:
    # In the bar's unit, texts (a note's chunks and its context passage), as reindex says it.
    cached = max(0, vectors.texts - vectors.embedded)
    done = (
        f"computed the vectors of {vectors.filled} notes ({vectors.embedded} texts embedded, {cached} from the "
        f"cache) in {vectors.seconds:.1f}s"
    )
    if vectors.remaining:
        return (
            f"{done}; {vectors.remaining} notes ({waiting} texts) still wait for theirs (searchable by BM25 "
            "meanwhile): `remnic sync run` continues"
        )
    return done


def _run_text(args: argparse.Namespace, report: Any, binaries: Sequence[str] = ()) -> str:
    """What one sync did, in lines."""
    lines = report.lines()
    if report.mode == "paused":
        lines.append(f"sync paused: {report.not_committed} (`remnic space pull` finishes a pull's merge)")
    elif args.dry_run:
        lines.append(
            f"would sync {len(report.changes)} change(s) (--dry-run: nothing written, committed or indexed)"
            if report.changes
            else "nothing would change (--dry-run)"
        )
    elif report.commit:
        committed = sum(1 for c in report.changes if c.committed)  # what the commit holds; the rest was in git
        in_git = len(report.changes) - committed
        lines.append(
            f"synced {committed} change(s) in commit {report.commit[:8]}"
            + (f"; indexed {in_git} already committed in git" if in_git else "")
        )
    elif report.changes and all(c.origin == "git" for c in report.changes):
        lines.append(f"indexed {len(report.changes)} change(s) already committed in git; nothing to commit")
    elif report.changes:
        lines.append(
            f"synced {len(report.changes)} change(s); nothing committed" + (" (--no-commit)" if args.no_commit else "")
        )
    else:
        # The files are in step with this commit; the index may still be catching up with one-shot
        # writes (the next recall does that), so the index is not named here.
        lines.append("nothing to sync" + (f"; files in step with commit {report.head[:8]}" if report.head else ""))
    if report.as_is and args.dry_run:  # what adopting takes without a line of its own (`asIs` in --json)
        lines.append(
            f"{report.as_is} more memory file(s) would be indexed as they are "
            "(valid and in git already: nothing to write or commit, such as a note with an id or TOML front matter)"
        )
    if report.problems:
        lines.append(
            f"{len(report.malformed_paths)} malformed file(s) left untouched; fix them and run "
            "`remnic sync run` again (`remnic doctor` lists them too)"
        )
        if binaries:  # an image or a PDF named .md: nothing to fix, it is just no note
            shown = ", ".join(binaries[:3]) + (", …" if len(binaries) > 3 else "")
            lines.append(
                f"{len(binaries)} of them {'holds' if len(binaries) == 1 else 'hold'} binary data ({shown}): not notes, nothing to "
                "fix; leave them out "
                f'with store.exclude in remnic.config.json, e.g. {{"store": {{"exclude": ["{binaries[0]}"]}}}}'
                ' (a glob such as "**/image-*.md" works too)'
            )
    if report.elapsed_ms >= 1000 and report.phases_ms:
        lines.append("took " + ", ".join(f"{name} {ms / 1000:.1f} s" for name, ms in report.phases_ms.items()))
    return "\n".join(lines)


def cmd_watch(args: argparse.Namespace) -> int:
    from remnic.drivers.watch import Watcher, watch_line

    memory = open_memory(args)
    as_json = wants_json(args)

    def out(event: dict[str, Any]) -> None:
        if as_json:
            line: str | None = json.dumps(event, ensure_ascii=False, default=str)
        else:
            line = watch_line(event)
        if line:
            stream = sys.stderr if event.get("event") in ("error", "warning") and not as_json else sys.stdout
            print(line, file=stream, flush=True)

    watcher = Watcher(memory, emit=out, debounce_ms=args.debounce_ms, commit=False if args.no_commit else None)
    previous: dict[int, Any] = {}
    received: list[int] = []

    def stop(signum: int, _frame: Any) -> None:
        received.append(signum)
        watcher.request_stop()
        for sig, handler in previous.items():  # a second signal acts as usual (aborts at once)
            signal.signal(sig, handler)

    # SIGHUP: the terminal it ran in closed; stop as for SIGTERM rather than die with saves unsynced.
    for sig in (signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])):
        previous[sig] = signal.signal(sig, stop)
    try:
        with memory:
            code = watcher.run()
        # Ctrl-C exits 130 as every command does, once the pending changes are flushed.
        return EXIT_INTERRUPTED if code == 0 and received[:1] == [signal.SIGINT] else code
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
