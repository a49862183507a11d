"""Housekeeping commands: ``export`` (JSONL that ``import`` restores byte for byte, or Markdown) and ``dedup``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from remnic.service.portable import Export

from ._common import add_command, choice_list, emit, open_memory, plural, safe, wants_json
from .recall import out_path, write_out

EXPORT_EPILOG = """\
jsonl (default): one line per memory file, every status, in path order. Each line is
an import line (content, namespace, category and the file's frontmatter keys) plus
`path` and `file`, the file's exact text: `remnic import` of the export into another
repository restores every file byte for byte at its path (ids, times, key order,
comments and line endings as they were). Drop `file` and `id` from a line to import it
as a new memory instead (its `path` is ignored: it gets an id and a path of its own); a
line without `file` whose text a memory here already holds (that very memory, or an
active one of its namespace) is skipped as an exact duplicate. A line that keeps `file`
must agree with it, or import refuses the line.
md: one Markdown document to read (each file under a heading); not for import.

A malformed memory file (frontmatter that does not parse, a secret, conflict markers)
is exported as it is, so no text is lost: its JSONL line is `path`, `namespace`,
`file` and `malformed` (what is wrong), and a warning names it. `remnic import`
refuses that line until its `file` is fixed (or the line is left out): remnic never
commits a file it cannot read. A file that is not text (not UTF-8, a symlink) cannot
be carried: it is named on standard error and in `skipped`, and export exits 1.
A --namespace that no memory file is in gives an empty export and a warning that
lists the namespaces there are.

--json prints a JSON object: format, memories, malformed, skipped and warnings, plus
`out` with --out, or the document as `markdown` with -f md. JSONL on standard output
stays JSONL (the object goes to standard error then, if it has anything to report).

examples:
  remnic export > memories.jsonl
  mkdir -p ~/backup && remnic export --out ~/backup/memories.jsonl
  remnic init ~/new && remnic import ~/backup/memories.jsonl --memory-dir ~/new
  remnic export --format md --namespace work --out ~/work-memories.md   # --out outside the repository
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


def _export_text(result: Export) -> str:
    if result.format == "md":
        return "".join(result.items)
    return "".join(json.dumps(line, ensure_ascii=False, default=str) + "\n" for line in result.items)


def _export_warnings(result: Export) -> list[str]:
    """One stderr line per file not exported as a memory, and per warning."""
    kept = (
        'exported as it is, marked "malformed" (`remnic import` refuses the line until its `file` is fixed)'
        if result.format == "jsonl"
        else "shown as it is"
    )
    lines = [f"{safe(m.path)}: not a valid memory file ({safe(m.reason)}); {kept}" for m in result.malformed]
    lines += [f"{safe(s.path)}: left out of the export ({safe(s.reason)})" for s in result.skipped]
    lines += [safe(w.message) for w in result.warnings]
    return [f"remnic: warning: {line}" for line in lines]


def _export_summary(result: Export, target: Path | None) -> str:
    counts = [plural(result.memories, "memory", "memories")]
    if result.malformed:
        counts.append(plural(len(result.malformed), "malformed file"))
    return f"exported {' and '.join(counts)} to {target} ({result.format})"


def cmd_export(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    target = out_path(args.out, memory.root) if args.out else None  # checked before the files are read
    result = memory.export(fmt=args.format, namespace=args.namespace)
    text = _export_text(result)
    data = result.to_dict()
    if result.skipped:  # the backup is incomplete: the exit code says so, not just a warning
        data.update(
            error=f"{plural(len(result.skipped), 'memory file')} could not be exported (see skipped)",
            code="export_incomplete",
        )
    # A JSON object on stdout carries the warnings; JSONL or Markdown on stdout leaves them to stderr.
    on_stdout = target is None and not (wants_json(args) and args.format == "md")
    if on_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
    elif target is not None:
        write_out(target, text)
        data["out"] = str(target)
    else:  # --json asks for JSON: the document is a field of the object, not the output
        data["markdown"] = text
    if not wants_json(args):
        for line in _export_warnings(result):
            print(line, file=sys.stderr)
        if result.skipped:
            print(
                f"remnic: error: the export is incomplete: {plural(len(result.skipped), 'memory file')} "
                "could not be exported (named above)",
                file=sys.stderr,
            )
    elif on_stdout and (result.malformed or result.skipped or result.warnings):
        print(json.dumps(data, indent=2, ensure_ascii=False), file=sys.stderr)
    if not on_stdout:
        emit(args, data, lambda: _export_summary(result, target))
    return 1 if result.skipped else 0


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
