"""``remnic lcm search|status|flush``: the lossless transcript archive (``state/transcripts/``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import add_command, emit, open_memory, plural, positive_int, safe

EPILOG = """\
Every turn handed to observe (the agent hooks, POST observe, the observe tool) is
archived, lossless, in the memory repository's state/transcripts/: durable state
that reindex never deletes (git-ignored unless state.commit). `lcm search` finds
turns by words or a phrase through a tantivy index in .remnic/lcm/, which is
caught up on every search and rebuilt from the archive when it is missing.

examples:
  remnic lcm search "rename the billing service"
  remnic lcm search deploy --session claude-code:6f1e --limit 5 --json
  remnic lcm status
"""


def register(sub: Any) -> None:
    p = add_command(sub, "lcm", "search the transcript archive (every observed conversation turn)", epilog=EPILOG)
    lsub = p.add_subparsers(dest="lcm_command", metavar="<search|status|flush>", required=True)

    q = add_command(
        lsub,
        "search",
        "archived turns matching words or a phrase, best first",
        epilog='examples:\n  remnic lcm search "staging database"\n'
        "  remnic lcm search deploy --session-prefix claude-code: --limit 5",
    )
    q.add_argument("query", help="words or a phrase from the conversation")
    q.add_argument("--session", help="only this session's turns (its sessionKey)")
    q.add_argument("--session-prefix", help="only sessions whose key starts with this")
    q.add_argument("--namespace", "-n", help="only this namespace (default: every namespace)")
    q.add_argument("--limit", type=positive_int("--limit"), default=10, help="maximum results, 1-100 (default 10)")
    q.set_defaults(handler=cmd_search)

    q = add_command(lsub, "status", "how many turns and sessions the archive holds; catches its index up")
    q.set_defaults(handler=cmd_status)

    q = add_command(
        lsub,
        "flush",
        "make a session's archived turns searchable now (and committed, with state.commit)",
    )
    q.add_argument("session", help="the session key")
    q.add_argument("--namespace", "-n", help="the session's namespace (default: namespaces.default)")
    q.set_defaults(handler=cmd_flush)


def cmd_search(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    scope: dict[str, Any] = {
        "session_key": args.session,
        "session_prefix": args.session_prefix,
        "namespaces": [args.namespace] if args.namespace else None,
    }
    warnings: list[str] = []  # a query of stopwords only, searched as a phrase (as recall says it)
    results = memory.lcm_search(args.query, **scope, limit=args.limit, warnings=warnings)
    data: dict[str, Any] = {"query": args.query, "namespace": args.namespace, "count": len(results), "results": results}
    if warnings:
        data["warnings"] = warnings
    for w in warnings:
        print(f"remnic: warning: {safe(w)}", file=sys.stderr)
    # A mistyped --session or --namespace must not read like "nobody said that" (the exit code stays 0).
    warning = None if results or not any(scope.values()) else memory.lcm_scope_warning(**scope)
    if warning:
        data["warning"] = warning
        print(f"remnic: warning: {safe(warning)}", file=sys.stderr)

    def text() -> str:
        if not results:
            return f"no archived turn matches {args.query!r}"
        lines = []
        for r in results:
            speaker = f" ({r['speaker']})" if r.get("speaker") else ""
            head = f"{r['sessionKey']} #{r['turnIndex']} {r['role']}{speaker} {r['ts']} ({r['namespace']})"
            lines += [safe(head), "  " + safe(" ".join(r["content"].split()))]
        return "\n".join(lines)

    emit(args, data, text)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    data = memory.lcm_status()
    stats = data["stats"]
    index = data["index"]
    note = ""
    if index.get("rebuilt"):
        note = f"; index rebuilt from the archive ({index.get('reason')})"
    elif index.get("added"):
        note = f"; index caught up with {plural(index['added'], 'turn')}"
    text = (
        f"{plural(stats['totalTurns'], 'turn')} in {plural(stats['sessions'], 'session')} "
        f"archived in {data['archiveDir']}{note}"
    )
    if data.get("unreadable"):
        from remnic.service.lcm import unreadable_line

        text += f"\nwarning: {safe(unreadable_line(data['unreadable']['files']))} (not searchable; see `remnic doctor`)"
    emit(args, data, text)
    return 0


def cmd_flush(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    data = memory.lcm_flush(args.session, args.namespace, source="cli")
    emit(
        args,
        data,
        f"{plural(data['archivedTurns'], 'turn')} of {args.session} archived and searchable"
        + (f"; state committed as {data['stateCommit'][:12]}" if data.get("stateCommit") else ""),
    )
    return 0
