"""`remnic audit`: the recall audit ledger's entries (``state/audit/``), one per recall."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import emit, open_memory, plural, wants_json


def _audit_text(entry: dict[str, Any]) -> str:
    lines = []
    for key, value in entry.items():
        if isinstance(value, (list, dict)):
            value = json.dumps(value, ensure_ascii=False)
        elif value is None:
            value = "-"
        lines.append(f"{key}: {value}")
    return "\n".join(lines)


def _shared_text(entry: dict[str, Any]) -> str:
    """The entry, then the others its id names (a pinned clock gives a recall run twice one id)."""
    shown = {k: v for k, v in entry.items() if k != "sharedId"}
    shared = entry.get("sharedId")
    if not isinstance(shared, dict):
        return _audit_text(shown)
    earlier = shared.get("earlier") or []
    lines = [
        _audit_text(shown),
        "",
        f"{shared.get('count')} entries share this id (a pinned clock gives the same recall one id): above is "
        f"the newest, below the {plural(len(earlier), 'earlier one')}, oldest first:",
    ]
    for i, other in enumerate(earlier, start=1):
        lines += ["", f"[{i}]", *("  " + line for line in _audit_text(other).splitlines())]
    return "\n".join(lines)


def cmd_audit_show(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    entry = memory.audit_show(args.audit_id)
    emit(args, entry, lambda: _shared_text(entry))
    return 0


def cmd_audit_list(args: argparse.Namespace) -> int:
    from remnic.render.jsfmt import collapse_whitespace
    from remnic.render.xray import QUOTE_CHARS

    def cut(query: str) -> str:
        # As long as the X-ray's `source:` (`audit show ID` has all of it), cut between characters:
        # the X-ray's JavaScript-style cut may split an emoji's surrogate pair, a terminal line must not.
        query = collapse_whitespace(query)
        return query if len(query) <= QUOTE_CHARS else query[:QUOTE_CHARS] + "\u2026"

    memory = open_memory(args)
    entries = memory.audit_recent(args.limit)
    rows = [
        f"{e.get('id')}  {e.get('ts')}  {len(e.get('returnedIds') or [])} result(s)  {cut(str(e.get('query')))!r}"
        for e in entries
    ]
    unreadable = memory.audit_unreadable()
    data = {"count": len(entries), "entries": entries, "unreadable": unreadable}
    emit(args, data, "\n".join(rows) if rows else "no recalls recorded yet")
    if not wants_json(args):  # on stderr, so the list itself stays clean for a pipe
        for path, n in unreadable.items():
            print(f"remnic: warning: {n} unreadable line(s) skipped in {path}", file=sys.stderr)
    return 0
