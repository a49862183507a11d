"""Housekeeping commands: ``export`` (JSONL that ``import`` restores byte for byte, or Markdown) and ``dedup``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import add_command, choice_list, emit, open_memory, plural, safe
from .recall import out_path, write_out

EXPORT_EPILOG = """\
jsonl (default): one line per memory file, every status, in path order. Each line is
an import line (content, namespace, category and the file's frontmatter keys) plus
`path` and `file`, the file's exact text: `remnic import` of the export into another
repository restores every file byte for byte at its path (ids, times, key order,
comments and line endings as they were). Drop `file` from a line to import it as a
new memory instead (its `path` is then ignored: the new memory gets a path of its own).
md: one Markdown document to read (each file under a heading); not for import.

examples:
  remnic export > memories.jsonl
  remnic export --out ~/backup/memories.jsonl && remnic import ~/backup/memories.jsonl --memory-dir ~/new
  remnic export --format md --namespace work --out work.md
"""

DEDUP_EPILOG = """\
Exact duplicates have the same text (after trimming) in one namespace. Near-duplicates
are embeddings at least observe.duplicateSimilarityFloor alike that also share
observe.nearDuplicateWordOverlap of their words, in the same category and namespace
(consolidation's rule). The oldest memory of each group survives. Without --merge
nothing changes; with it every other member is archived with mergedInto, the survivor
lists them in derived_from, and all groups go into one commit.

examples:
  remnic dedup
  remnic dedup --json
  remnic dedup --merge
"""


def register(sub: Any) -> None:
    p = add_command(
        sub, "export", "every memory file as JSONL that `import` restores exactly, or as Markdown", epilog=EXPORT_EPILOG
    )
    p.add_argument(
        "--format",
        "-f",
        type=choice_list("format", ("jsonl", "md")),
        default="jsonl",
        help="jsonl (default; what `remnic import` reads back) or md (one readable document)",
    )
    p.add_argument("--namespace", "-n", help="only this namespace (default: every namespace)")
    p.add_argument(
        "--out",
        "-o",
        metavar="PATH",
        help="write to PATH (atomically, ~ expanded) instead of standard output",
    )
    p.set_defaults(handler=cmd_export)

    p = add_command(
        sub, "dedup", "find exact and near-duplicate memories; --merge folds each group into one", epilog=DEDUP_EPILOG
    )
    p.add_argument(
        "--merge",
        action="store_true",
        help="merge each group into its oldest memory (others archived with mergedInto), one commit",
    )
    p.add_argument("--namespace", "-n", help="only this namespace (default: every namespace)")
    p.set_defaults(handler=cmd_dedup)


def _export_text(memory: Any, fmt: str, namespace: str | None) -> tuple[str, int]:
    chunks = memory.export(fmt=fmt, namespace=namespace)
    if fmt == "md":
        parts = list(chunks)
        return "".join(parts), len(parts) - 1
    lines = [json.dumps(line, ensure_ascii=False, default=str) for line in chunks]
    return "".join(line + "\n" for line in lines), len(lines)


def cmd_export(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    text, count = _export_text(memory, args.format, args.namespace)
    if args.out:
        target = out_path(args.out, memory.root)
        write_out(target, text)
        emit(
            args,
            {"format": args.format, "memories": count, "out": str(target)},
            f"exported {plural(count, 'memory', 'memories')} to {target} ({args.format})",
        )
        return 0
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def _group_text(group: dict[str, Any]) -> list[str]:
    s = group["survivor"]
    lines = [f"{group['kind']}: keep {s['id']}  {s['path']}", f"    {safe(s['content'][:100])}"]
    for d in group["duplicates"]:
        lines.append(f"  {d['similarity']:.3f}  {d['id']}  {d['path']}")
        lines.append(f"    {safe(d['content'][:100])}")
    return lines


def cmd_dedup(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    result = memory.dedup(merge=args.merge, namespace=args.namespace, source="cli")
    data = result.to_dict()

    def text() -> str:
        if not result.groups:
            return f"no duplicates among {plural(result.considered, 'active memory', 'active memories')}"
        lines = [line for g in data["groups"] for line in _group_text(g)]
        if args.merge:
            lines.append(
                f"merged {plural(len(result.merged), 'duplicate')} in commit {(result.commit or '')[:8]}"
                if result.merged
                else "nothing merged"
            )
        else:
            lines.append(
                f"{plural(data['duplicates'], 'duplicate')} in {plural(len(result.groups), 'group')}; "
                "`remnic dedup --merge` merges them"
            )
        return "\n".join(lines)

    emit(args, data, text)
    return 0
