"""`remnic observe`, `remnic consolidate`, `remnic review`: conversations become memories, people review them."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from remnic.errors import UsageError
from remnic.memfile.schema import CATEGORIES

from ._common import (
    add_command,
    choice_list,
    emit,
    memory_ref,
    non_negative_int,
    open_memory,
    plural,
    positive_float,
    positive_int,
    progress_bar,
    repo_path,
    safe,
    table,
)

FORMATS = ("auto", "claude-code", "codex", "openai", "anthropic", "plain")
REVIEW_ACTIONS = {"approve": "active", "dismiss": "rejected", "flag": "quarantined"}
REVIEW_EXAMPLES = {
    "approve": "examples:\n  remnic review list   # the ids waiting\n  remnic review approve mem_018f9a3b2c1d4e5f6a7b",
    "dismiss": "examples:\n  remnic review dismiss mem_018f9a3b2c1d4e5f6a7b --reason duplicate\n"
    '  remnic review dismiss --all-pending --why "no date" --session chat-s12\n'
    "  remnic review list --json | jq -r '.memories[].id' | remnic review dismiss -",
    "flag": "examples:\n  remnic review flag facts/staging-password.md --reason leaked-secret",
}
BATCH_EPILOG = (
    "Several memories (ids, - for ids on standard input, or --all-pending) are decided in one\n"
    "commit, each as it would be alone. One that cannot be decided (not found, not waiting for\n"
    "review) is named on stderr with why, and the others are still decided; the exit status is\n"
    "then 1. --json answers decision, commit, decided, unchanged, failed and results (one per id:\n"
    "ref, ok, and id, status, previousStatus, alsoChanged… or error).\n\n"
)


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "observe",
        "turn a conversation transcript into memories (rules, no LLM)",
        epilog="Reads a transcript (a file, or - for standard input) in one of the formats below,\n"
        "drops what the host injected (instructions, reminders, tool output), journals the\n"
        "turns in the session's buffer and, when a trigger fires (--flush, turn count, time,\n"
        "topic shift), extracts standalone facts, scores and judges them, and writes the\n"
        "accepted ones as memories in one commit: duplicates reinforce what exists, a new\n"
        "value supersedes the old one. Each line printed is a verdict (accept, defer with the\n"
        "judge's reason, reject), the category and the fact.\n"
        "A session takes each turn once: observing a transcript again (or after it grew) adds\n"
        "only the turns it has not seen; a turn is its id with its words (other words under an\n"
        "id it has seen are taken, with a warning).\n\n"
        "formats (--format; auto tells them apart by the content):\n"
        "  claude-code  a Claude Code session file: JSON lines with type, message, uuid\n"
        "  codex        a Codex rollout file: JSON lines with timestamp, type, payload\n"
        '  openai       a JSON array of {role, content} messages, {"messages": [...]}, or one\n'
        "               message per line; a message's name is its speaker\n"
        '  anthropic    {"system", "messages": [...]} or the array of messages\n'
        "  plain        one turn per line, `Speaker: text` or `[2026-05-02T09:30:00Z] Speaker: text`;\n"
        "               a time may go first without brackets (`2026-05-02 09:30 Ana: text`, `9:30 PM\n"
        "               Ana: text`) or as a bracketed clock time (`[09:30] Ana: text`): a clock time\n"
        "               without a date is no turn time; lines starting with # are comments\n\n"
        "examples:\n  remnic observe chat.txt --session-key standup-0502 --flush\n"
        "  remnic observe ~/.claude/projects/x/session.jsonl --session-key cc:abc --format claude-code\n"
        "  cat chat.txt | remnic observe - --session-key s1 --dry-run --json",
    )
    p.add_argument("file", metavar="FILE|-", help="the transcript file, or - to read standard input")
    p.add_argument("--session-key", required=True, help="the conversation this is (turns are buffered per session)")
    p.add_argument(
        "--format",
        "-f",
        type=choice_list("--format", FORMATS),
        default="auto",
        help="transcript format: " + ", ".join(FORMATS) + " (default: auto, detected from the content)",
    )
    p.add_argument("--flush", action="store_true", help="flush the session's buffer now (the session ended)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show what this command would do (the flushes its triggers would run, their observations, "
        "the turns left waiting; not what they would create, reinforce or supersede: those counts are "
        "null); write nothing but the embedding cache (.remnic/embeddings.sqlite, rebuildable). "
        "With --flush: what flushing everything would make",
    )
    p.add_argument("--namespace", "-n", help="namespace the memories go to (default: namespaces.default)")
    p.set_defaults(handler=cmd_observe)

    p = add_command(
        sub,
        "consolidate",
        "merge near-duplicates among recently observed memories (one commit)",
        epilog="The server and the watcher run this after each flush; run it by hand after a\n"
        "bulk import of transcripts. The merged memory keeps its file as `archived`\n"
        "with `mergedInto`; the survivor is reinforced.",
    )
    p.add_argument(
        "--days",
        type=positive_float("--days"),
        default=None,
        help="look at memories observed in this many days (default 7)",
    )
    p.set_defaults(handler=cmd_consolidate)

    p = add_command(
        sub,
        "review",
        "the review queue: memories waiting for a person (pending_review, quarantined)",
        epilog="approve, dismiss and flag decide memories in the queue (and may change an\n"
        "earlier approve or dismiss); flag also puts a doubtful active memory in the\n"
        "queue. Any other memory is refused, forgotten and superseded ones included:\n"
        "`remnic update ID --status STATUS` sets a status directly.\n"
        "Dismissing a memory that replaced others makes them current again in the same\n"
        "commit (approving it later replaces them again). Deciding the same again (same\n"
        "status and reason) changes nothing and makes no commit. A status: rejected set by\n"
        "hand revives nothing by itself: `remnic doctor` names each value left with no\n"
        "current memory (superseded-by-rejected), and dismissing the rejected one revives it.\n"
        "A decision says what it did: the status before it and why it waited (as `review list`\n"
        "says), the reason, and each other memory it changed (--json: previousStatus,\n"
        "queueReason, decision, reasonCode, alsoChanged; the commit's trailers:\n"
        "Remnic-Review-Decision, Remnic-Review-Reason, Remnic-Also-Changed). Approving a fact the\n"
        "observer queued computes its key again from the statement without its hedge; one with no\n"
        "key supersedes nothing, and a line (--json: warnings) says so.\n\n"
        "examples:\n  remnic review list\n  remnic review approve mem_01a2…\n"
        "  remnic review dismiss mem_01a2… --reason duplicate",
    )
    rsub = p.add_subparsers(dest="review_command", metavar="<list|approve|dismiss|flag>", required=True)
    q = add_command(
        rsub,
        "list",
        "memories waiting for review, newest first",
        epilog="Shows a page of the queue and how many wait in all; --json adds total, offset, limit and\n"
        "nextOffset (null on the last page), as `remnic list --json` does. WHY (--json: queueReason)\n"
        'says why each memory waits: the observer\'s judge ("Hedged: the speaker is not sure", a\n'
        "confidence below observe.reviewBelowConfidence; read from the verdict ledger in state/, so\n"
        "only where it was observed) or a person's flag; - (null) when neither says.\n\n"
        "examples:\n  remnic review list --limit 50 --offset 50   # the second page of 50",
    )
    q.add_argument("--limit", type=positive_int("--limit"), default=50, help="at most this many (default 50)")
    q.add_argument("--offset", type=non_negative_int("--offset"), default=0, help="skip this many first (default 0)")
    q.add_argument("--namespace", "-n", help="only this namespace")
    q.set_defaults(handler=cmd_review_list)
    for action, status in REVIEW_ACTIONS.items():
        what = "memories waiting for review, or active ones," if action == "flag" else "memories waiting for review"
        q = add_command(
            rsub, action, f"set the status of {what} to {status}", epilog=BATCH_EPILOG + REVIEW_EXAMPLES[action]
        )
        q.add_argument(
            "ids",
            nargs="*",
            metavar="ID-OR-PATH",
            help="memory ids (mem_…) or file paths (facts/x.md); - reads them from standard input",
        )
        # dest: the API's keyword, so a refused reason is reported as --reason
        q.add_argument(
            "--reason", dest="reason_code", metavar="REASON", help="a reason code kept in the file (reviewReasonCode)"
        )
        q.add_argument(
            "--all-pending", action="store_true", help="every memory with status pending_review (narrowed by the below)"
        )
        q.add_argument("--session", metavar="KEY", help="with --all-pending: only those observed in this session key")
        q.add_argument(
            "--category",
            "-c",
            type=choice_list("category", CATEGORIES),
            help="with --all-pending: only this category",
        )
        q.add_argument("--why", metavar="TEXT", help="with --all-pending: only those whose queue reason contains TEXT")
        q.add_argument("--namespace", "-n", help="with --all-pending: only this namespace")
        q.set_defaults(handler=cmd_review_disposition, status=status)


def _read(path: str) -> tuple[str, str]:
    """(text, name) of the transcript; a clear error for an unreadable or non-UTF-8 file."""
    try:
        if path == "-":
            data, name = sys.stdin.buffer.read(), "standard input"
        else:
            with open(path, "rb") as fh:
                data, name = fh.read(), path
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        raise UsageError(f"{name} is not UTF-8 text: byte 0x{data[exc.start]:02X} at byte offset {exc.start}") from None


def cmd_observe(args: argparse.Namespace) -> int:
    text, name = _read(args.file)
    memory = open_memory(args)
    with memory:
        result = memory.observe_transcript(
            args.session_key,
            text,
            fmt=args.format,
            name=name,
            namespace=args.namespace,
            source="cli",
            flush=args.flush,
            dry_run=args.dry_run,
            progress=progress_bar(args, "observing"),
        )

    def lines() -> str:
        out = []
        for obs in result.observations:
            verdict = obs.verdict.kind
            where = f" -> {obs.resulting_primitive_id}" if obs.resulting_primitive_id else ""
            why = f"  ({obs.verdict.reason})" if verdict == "defer" else ""  # what a reviewer decides on
            out.append(f"{verdict:7} {obs.fact.category:11} {safe(obs.fact.content)}{where}{why}")
        warned = [f"warning: {safe(w)}" for w in result.warnings()]
        if result.dry_run:
            # The same command without --dry-run: the flushes its triggers run, the turns it leaves waiting.
            for flush in result.would_flush:
                out.append(
                    f"would flush {flush.reason} turns {flush.turns[0]}-{flush.turns[1]}: "
                    f"{plural(len(flush.observations), 'observation')}"
                )
            waiting = f"{plural(result.pending, 'turn')} would wait in the session's buffer"
            if not result.would_flush:
                waiting = (
                    "no trigger fires; " + waiting + (" (--flush to preview writing them)" if result.pending else "")
                )
            out.append(f"{waiting}; nothing written (--dry-run)")
            return "\n".join(out + warned)
        for flush in result.flushes:
            c = flush.counts()
            state = "already committed" if flush.replayed else f"commit {(flush.commit or 'none')[:8]}"
            out.append(
                f"flush {flush.reason} turns {flush.turns[0]}-{flush.turns[1]}: {c['created']} new, "
                f"{c['reinforced']} reinforced, {c['superseded']} superseded, {c['rejected']} rejected ({state})"
            )
        out.append(
            f"{plural(result.buffered, 'turn')} taken"
            + (f", {result.duplicates} already seen" if result.duplicates else "")
            + f"; {result.pending} waiting in the session's buffer"
            + ("" if result.flushes or not result.pending else " (--flush to write them now)")
        )
        return "\n".join(out + warned)

    emit(args, result.to_dict(), lines)
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    with memory:
        result = memory.consolidate(days=args.days)
    text = "\n".join(f"merged {a} into {b}" for a, b in result.merged) or "no near-duplicates to merge"
    emit(args, result.to_dict(), text + f" ({result.considered} recent observed memories looked at)")
    return 0


def cmd_review_list(args: argparse.Namespace) -> int:
    from remnic.service.review import queue_listing

    memory = open_memory(args)
    page = queue_listing(memory, namespace=args.namespace, limit=args.limit, offset=args.offset)
    queued, total = page.memories, page.total
    end = args.offset + len(queued)
    # The judge's reason, a person's flag; none for a status set by hand.
    rows = [[r.id, r.status, r.category, safe(r.content[:70]), safe(page.reason(r.id) or "-")] for r in queued]
    shown = f"{plural(len(queued), 'memory', 'memories')} waiting for review"
    if len(queued) < total:
        shown = f"{args.offset + 1}-{end} of {total} waiting for review" + (
            f"; {total - end} more: --offset {end} (after deciding some, start again at --offset 0)"
            if end < total
            else ""
        )
    emit(
        args,
        {
            "count": len(queued),
            "total": total,
            "offset": args.offset,
            "limit": args.limit,
            "nextOffset": end if end < total else None,
            "memories": [{**r.to_dict(), "queueReason": page.reason(r.id)} for r in queued],
        },
        lambda: (
            f"{table(rows, ['ID', 'STATUS', 'CATEGORY', 'CONTENT', 'WHY'])}\n{shown}"
            if rows
            else f"nothing at --offset {args.offset} ({total} waiting for review)"
            if total
            else "nothing waiting for review"
        ),
    )
    return 0


def cmd_review_disposition(args: argparse.Namespace) -> int:
    filters = {"--session": args.session, "--category": args.category, "--why": args.why, "--namespace": args.namespace}
    used = [flag for flag, value in filters.items() if value is not None]
    if args.all_pending and args.ids:
        raise UsageError("name memories (ID-OR-PATH, or -) or pass --all-pending, not both")
    if used and not args.all_pending:
        raise UsageError(f"{', '.join(used)} narrows --all-pending; pass --all-pending too, or name the memories")
    if not args.all_pending and not args.ids:
        raise UsageError(
            "name a memory to decide (ID-OR-PATH), several, - to read ids from standard input, or --all-pending"
        )
    if args.all_pending or args.ids != [args.ids[0]] or args.ids == ["-"]:
        return _review_batch(args)
    memory = open_memory(args)
    with memory, memory_ref(memory, args.ids[0]) as target:
        result = memory.review_disposition(target, args.status, reason_code=args.reason_code, source="cli")
    status = result.record.status  # approving a value said before a newer one leaves it superseded
    said = result.to_dict()
    why = f", reason {safe(result.reason_code)}" if result.reason_code else ""
    waited = f", queued: {safe(result.queue_reason)}" if result.queue_reason else ""
    text = (
        f"{result.id} is now {status} ({(result.commit or '')[:8]}): {said['decision']} "
        f"(was {result.previous_status}{waited}){why}"
        if result.changed
        else f"{result.id} is already {status}"
    )
    # The other memories the decision changed in its commit, so no file is rewritten unannounced.
    also = [f"also changed: {safe(a.describe(result.id))}" for a in result.also_changed]
    notes = list(result.warnings)
    emit(
        args,
        {
            **result.record.to_dict(),
            "changed": result.changed,
            "commit": result.commit,
            "warnings": notes,
            **{k: said[k] for k in ("previousStatus", "decision", "reasonCode", "queueReason", "alsoChanged")},
        },
        "\n".join([text, *also, *notes]),
    )
    return 0


def _review_batch(args: argparse.Namespace) -> int:
    from remnic.service.review import DECISIONS
    from remnic.service.review_batch import dispose_many, pending_ids

    refs = [r for ref in args.ids for r in (sys.stdin.read().split() if ref == "-" else [ref])]
    memory = open_memory(args)
    with memory:
        if args.all_pending:
            refs = pending_ids(
                memory, namespace=args.namespace, session=args.session, category=args.category, why=args.why
            )
            if not refs:
                emit(
                    args,
                    {
                        "decision": DECISIONS[args.status],
                        "commit": None,
                        "decided": 0,
                        "unchanged": 0,
                        "failed": 0,
                        "results": [],
                    },
                    "nothing waiting for review matches",
                )
                return 0
        elif not refs:
            raise UsageError("no memory ids on standard input (one or more, separated by spaces or lines)")
        batch = dispose_many(
            memory,
            refs,
            args.status,
            args.reason_code,
            source="cli",
            resolve=lambda r: memory.memory_id(repo_path(memory, r)),
        )
    said = batch.to_dict()
    lines = []
    for _ref, result in batch.results:
        state = f"now {result.record.status}: {said['decision']} (was {result.previous_status})"
        lines.append(f"{result.id} {state if result.changed else f'is already {result.record.status}'}")
        lines += [f"  also changed: {safe(a.describe(result.id))}" for a in result.also_changed]
        lines += [f"  {safe(w)}" for w in result.warnings]
    commit = f" in commit {batch.commit[:8]}" if batch.commit else ""
    lines.append(
        f"{plural(said['decided'], 'memory', 'memories')} {said['decision']}{commit}"
        + (f", {said['unchanged']} already so" if said["unchanged"] else "")
        + (f", {said['failed']} not decided" if said["failed"] else "")
    )
    emit(args, said, "\n".join(lines))
    for ref, why in batch.errors:
        print(f"remnic: not decided: {safe(ref)}: {safe(why)}", file=sys.stderr)
    return 1 if batch.errors else 0
