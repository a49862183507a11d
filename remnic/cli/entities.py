"""``remnic entities list|show|refresh``: pages for the people, projects, tools and places the memories name."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from remnic.errors import NotFoundError
from remnic.service.entities import ENTITY_TYPES

from ._common import (
    add_command,
    choice_list,
    emit,
    emit_failure,
    non_negative_int,
    open_memory,
    plural,
    positive_int,
    progress_bar,
    safe,
    table,
    wants_json,
)

EPILOG = """\
Entity pages are markdown files in entities/ (entities/person-priya-raman.md), in the
original Remnic's format: a synthesis, a timeline citing each memory as [[id]],
connections and aliases. remnic builds them by rules from the memories' frontmatter
(entityRef, project, tags like person:ana) and text (a name before "prefers", "said",
"approved"…; "moved to Lisbon"; "the webapp repo"; known tools). list and show read the
pages as a build from the current memories makes them, writing nothing; `entities refresh`
writes and commits them. Rewrite a page's Synthesis or add sections and remnic keeps them;
pages it did not write are never rewritten.

examples:
  remnic entities list --type person
  remnic entities show "Priya Raman"
  remnic entities refresh --force
"""


def register(sub: Any) -> None:
    p = add_command(
        sub, "entities", "entity pages: people, projects, tools and places the memories name", epilog=EPILOG
    )
    esub = p.add_subparsers(dest="entities_command", metavar="<list|show|refresh>", required=True)

    q = add_command(
        esub,
        "list",
        "entities sorted by name",
        epilog="When the memories changed since the pages were last written, the listing shows remnic's\n"
        "pages as a build from them makes them, without writing anything (`remnic entities refresh`\n"
        'writes them). A person who left (a memory such as "Priya left the company") is marked\n'
        '"(left DATE)"; --json gives it as left: {date, text, memoryId}.\n\n'
        "examples:\n  remnic entities list --type person\n  remnic entities list release   # names, aliases, facts",
    )
    q.add_argument("query", nargs="?", help="only entities whose name, summary, aliases or facts contain this")
    q.add_argument("--type", type=choice_list("type", ENTITY_TYPES), help=", ".join(ENTITY_TYPES))
    q.add_argument("--namespace", "-n", help="only this namespace")
    q.add_argument("--limit", type=positive_int("--limit"), default=200, help="at most this many (default 200)")
    q.add_argument("--offset", type=non_negative_int("--offset"), default=0, help="skip this many first (default 0)")
    q.set_defaults(handler=cmd_list)

    q = add_command(
        esub,
        "show",
        "one entity page: synthesis, timeline, connections, aliases",
        epilog="Like list, shows the page as a build from the current memories makes it, writing nothing,\n"
        "and says when and how a person left. --json prints {found, namespace, entity}, as GET entities/:name does; for an entity not found\n"
        "the error on standard error, as every error is, is {error, code, found: false, namespace}\n"
        "(exit 1).\n\n"
        "examples:\n  remnic entities show ana   # a name or an alias\n  remnic entities show person-priya-raman",
    )
    q.add_argument("name", help="the entity's name, an alias, or its id (person-priya-raman)")
    q.add_argument("--namespace", "-n", help="look in this namespace")
    q.set_defaults(handler=cmd_show)

    q = add_command(esub, "refresh", "rebuild remnic's entity pages from the memories now (one commit)")
    q.add_argument("--force", action="store_true", help="even when no memory changed since the last build")
    q.set_defaults(handler=cmd_refresh)


def _open(args: argparse.Namespace) -> Any:
    """The repository for the pages. A refresh's commit leaves its index update to the next recall (which
    catches up from git, with a bar), so it never waits on embedding the pages; a long-running process's
    handle (a server's, shared) keeps indexing them in its background."""
    memory = open_memory(args)
    if not memory.background_work:
        memory.defer_index(build_missing=False)
    return memory


def _index_now(args: argparse.Namespace, memory: Any) -> None:
    """With store.cliIndex a one-shot command indexes what it wrote before it exits: here from git,
    with a bar (the queued update would have run silently at exit)."""
    if memory.settings.store.cli_index and not memory.background_work:
        memory.refresh_index(progress_bar(args, "indexing entity pages"))


def _left_mark(row: dict[str, Any]) -> str:
    left = row.get("left")
    return f" (left {left['date']})" if left else ""


def cmd_list(args: argparse.Namespace) -> int:
    memory = _open(args)
    rows, total = memory.entities(
        query=args.query, entity_type=args.type, namespace=args.namespace, limit=args.limit, offset=args.offset
    )
    data = {
        "namespace": args.namespace or memory.settings.namespaces.default,
        "total": total,
        "count": len(rows),
        "limit": args.limit,
        "offset": args.offset,
        "entities": rows,
    }
    # A namespace that holds no memory must not read like one whose memories name nobody yet.
    warning = None if total or not args.namespace else memory.namespace_warning(args.namespace)
    if warning:
        data["warning"] = warning
        print(f"remnic: warning: {safe(warning)}", file=sys.stderr)
    none = (
        f"no entities in namespace {args.namespace}" + (": it holds no memories" if warning else "")
        if args.namespace
        else "no entities yet"
    )
    emit(
        args,
        data,
        lambda: (
            (
                table(
                    [[safe(r["name"]) + _left_mark(r), r["type"], str(r["factCount"]), r["path"]] for r in rows],
                    ["NAME", "TYPE", "MEMORIES", "PAGE"],
                )
                if rows
                else f"no entities at --offset {args.offset} ({total} match)"
                if total
                else safe(none) + " (pages are built from the memories' names: see `remnic entities --help`)"
            )
            + (
                f"\n{len(rows)} of {total}; next page: --offset {end}"
                if (end := args.offset + len(rows)) < total
                else ""
            )
        ),
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    memory = _open(args)
    namespace = args.namespace or memory.settings.namespaces.default
    try:
        entity = memory.entity(args.name, namespace=args.namespace)
    except NotFoundError as exc:
        if not wants_json(args):
            raise
        emit_failure(args, exc.message, exc.code, found=False, namespace=namespace)
        return exc.exit_code

    def text() -> str:
        lines = [f"{entity['name']} ({entity['type']}) — {entity['path']}", "", entity["synthesis"], ""]
        if entity.get("left"):
            left = entity["left"]
            lines[1:1] = [f"left: {left['date']} — {left['text']}"]
        if entity["timeline"]:
            lines.append("timeline:")
            lines += [f"  {e['timestamp'][:10]}  {e['text']}" for e in entity["timeline"]]
        if entity["relationships"]:
            lines.append("connected to: " + ", ".join(r["target"] for r in entity["relationships"]))
        if entity["aliases"]:
            lines.append("aliases: " + ", ".join(entity["aliases"]))
        return safe("\n".join(lines))

    emit(args, {"found": True, "namespace": entity["namespace"], "entity": entity}, text)
    return 0


def cmd_refresh(args: argparse.Namespace) -> int:
    memory = _open(args)
    result = memory.refresh_entities(
        force=args.force, source="cli", progress=progress_bar(args, "reading memories for entity pages")
    )
    if result.get("commit"):
        _index_now(args, memory)
    if not result["enabled"]:
        text = "entity pages are off (entities.enabled)"
    elif not result["refreshed"]:
        text = "entity pages are current (no memory changed since they were built)"
    else:
        text = f"{plural(len(result['written']), 'page')} written, {len(result['removed'])} removed" + (
            f" (commit {result['commit'][:12]})" if result["commit"] else ""
        )
    emit(args, result, text)
    return 0
