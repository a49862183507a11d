"""Housekeeping commands: ``export`` (JSONL that ``import`` restores byte for byte, or Markdown), the
``import`` handler (registered with the memory commands) and ``dedup``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from remnic.errors import FieldProblem, UsageError, ValidationError
from remnic.memfile.validate import check_namespace
from remnic.service.include_config import newly_adopted
from remnic.service.portable import Export, Restore, Skip, adopted_patterns, prepare_import

from ._common import add_command, choice_list, emit, not_utf8, open_memory, plural, progress_bar, safe, wants_json
from .recall import OUT_HELP, out_path, write_out

EXPORT_EPILOG = """\
jsonl (default): one line per memory file, every status, in path order. Each line is
an import line (content, namespace, category and the file's frontmatter keys) plus
`path` and `file`, the file's exact text: `remnic import` of the export into another
repository restores every file byte for byte at its path (ids, times, key order,
comments and line endings as they were). A note that is a memory through a
store.include pattern (one `remnic init --adopt` adopted) carries that pattern as
`storeInclude`, and import adds a pattern the repository's own remnic.config.json
lacks to that file in the same commit (only its store.include list changes), so the
recipe below restores an adopted vault too; a note the pattern makes a memory that is
already there is named (`remnic sync run` then adopts it). Import refuses while
remnic.config.json has uncommitted changes (the commit would take them along) or is a
symlink, and when a config file above the repository's (./remnic.config.json,
REMNIC_CONFIG_PATH) sets a store.include the notes would not be memories under. An
export without `storeInclude` (an older remnic's) names the pattern to add first:
`remnic init ~/new --adopt 'notes/**'`. Drop `file` and `id` from a line to import it
as a new memory instead (its `path` is ignored: it gets an id and a path of its own); a
line without `file` whose text a memory here already holds (that very memory, an
active one of its namespace, or one with the line's status and category there) is
skipped as an exact duplicate, so running an import again adds nothing. A line that keeps `file`
must agree with it, or import refuses the line. A line whose `file` is here already,
byte for byte with its id, is skipped as an exact duplicate too, so importing an export
into the repository it came from restores only the files that are gone (a file here
with the line's path or id and other text is refused).
md: one Markdown document to read (each file under a heading); not for import.

A malformed memory file (frontmatter that does not parse, a secret, conflict markers)
is exported as it is, so no text is lost: its JSONL line is `path`, `namespace`,
`file` and `malformed` (what is wrong), and a warning names it. `remnic import`
refuses that line until its `file` is fixed (or the line is left out): remnic never
commits a file it cannot read. A file that is not text (not UTF-8, a symlink), or one
with frontmatter but no text yet (import has nothing to make a memory of; a blank
file is passed over), cannot be carried: it is named on standard error and in
`skipped`, and export exits 1; a
symlink to a memory file that is in the export loses no text, so it gets a warning.
A --namespace that no memory file is in gives an empty export and a warning that
lists the namespaces there are.

--json prints a JSON object: format, memories, malformed, skipped and warnings, plus
`out` with --out, or the document as `markdown` with -f md. JSONL on standard output
stays JSONL (the object goes to standard error then, if it has anything to report).

examples:
  remnic export > memories.jsonl
  mkdir -p ~/backup && remnic export --out ~/backup/memories.jsonl
  remnic init ~/new && remnic import ~/backup/memories.jsonl --memory-dir ~/new
  remnic export --format md --namespace work --out ~/work-memories.md
"""

DEDUP_EPILOG = """\
Exact duplicates have the same text (after trimming) in one namespace. Near-duplicates
are embeddings at least observe.duplicateSimilarityFloor alike that also share
observe.nearDuplicateWordOverlap of their words, in the same category and namespace
(consolidation's rule). The oldest memory of each group survives, and every other member
is a near-duplicate of the survivor itself: A like B and B like C, but C not like A,
merges B into A and leaves C active. A memory that is the current one of a supersession
chain (it replaced another), or that others were merged into before, is never merged:
it survives and takes in its own duplicates, older ones too (the group's note says so);
one that duplicates another survivor stays active, listed as "left active" (--json:
keptActive, each with its reason). Without --merge nothing changes; with it every other
member is archived with mergedInto, the survivor lists them in derived_from and adds up
their reinforcement counts, and all groups go into one commit.

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
        help="write to PATH (atomically, ~ expanded) instead of standard output " + OUT_HELP,
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
    target = out_path(args.out, memory, "export") if args.out else None  # the rule xray's --out follows too
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


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's keys, each once (at any depth): a repeated key is refused, not the last one kept."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _jsonl_lines(path: str) -> Iterator[tuple[int, bytes]]:
    """Numbered raw lines (decoded by the caller, so a bad byte is a problem on its line)."""
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # stdin replaced by a text stream (embedding, tests)
            yield from enumerate((line.encode("utf-8", "surrogateescape") for line in sys.stdin), 1)
            return
        yield from enumerate(buffer, 1)
        return
    try:
        fh = open(Path(path).expanduser(), "rb")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        yield from enumerate(fh, 1)


def cmd_import(args: argparse.Namespace) -> int:
    import time

    from remnic.service.importing import catch_up_index

    started = time.perf_counter()
    bad_namespace = check_namespace(args.namespace)
    if bad_namespace:  # the flag is wrong, not the file's lines: one error, naming --namespace
        raise ValidationError(bad_namespace[0].describe(), problems=bad_namespace)
    memory = open_memory(args)
    memory.defer_index(build_missing=False)  # indexed below, with progress, as its own phase
    items: list[Any] = []
    problems: list[FieldProblem] = []
    line_numbers: list[int] = []
    for number, raw in _jsonl_lines(args.file):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # every bad line is reported, with the offset in its line
            problems.append(FieldProblem("", not_utf8(exc, "the line"), path=args.file, line=number))
            continue
        if number == 1 and line.startswith("\ufeff"):  # a BOM, as Windows editors save UTF-8
            line = line[1:]
        if not line.strip():
            continue
        try:
            items.append(json.loads(line, object_pairs_hook=_unique_keys))
            line_numbers.append(number)
        except json.JSONDecodeError as exc:
            problems.append(
                FieldProblem("", f"invalid JSON: {exc.msg} (column {exc.colno})", path=args.file, line=number)
            )
        except _DuplicateKey as exc:  # JSON would keep the last silently: which one was meant is unknown
            problems.append(
                FieldProblem(
                    exc.key, "the key appears twice in this line's object; keep one", path=args.file, line=number
                )
            )
    parsed = time.perf_counter() - started
    if problems or args.dry_run:  # the JSON problems with the lines' own, or what the import would do
        checked = prepare_import(memory, items, line_numbers, args.namespace, "cli-import")
        problems += checked.problems
        if problems:
            raise _in_file(args.file, problems)
        skipped = [s.to_dict() for s in checked.skipped]
        planned = checked.plan.items if checked.plan is not None else []
        patterns = adopted_patterns(planned)
        also = newly_adopted(memory, patterns, [p.path for p in planned if isinstance(p, Restore)])
        emit(
            args,
            {
                "valid": len(items),
                "dryRun": True,
                "wouldImport": checked.to_import,
                "duplicates": len(checked.skipped),
                "skipped": skipped,
                "storeIncludeAdded": patterns,
                "alsoAdopted": also,
            },
            lambda: (
                f"{plural(len(items), 'line')} valid; nothing imported (--dry-run): would import "
                + plural(checked.to_import, "memory", "memories")
                + (f", skip {plural(len(checked.skipped), 'exact duplicate')}" if checked.skipped else "")
                + (f", and add {_patterns_text(patterns)}{_also_text(also, 'would make')}" if patterns else "")
                + _skips_text(checked.skipped)
            ),
        )
        return 0
    try:  # the import Memory.import_records is: checked, its exact duplicates skipped, written
        result = memory.import_records(
            items,
            namespace=args.namespace,
            source="cli-import",
            line_numbers=line_numbers,
            progress=progress_bar(args, "writing"),
        )
    except ValidationError as exc:
        if not exc.problems:
            raise
        raise _in_file(args.file, exc.problems) from None
    phases = {"validate": parsed + result.phases["validate"], "write": result.phases["write"]}
    index, index_error = catch_up_index(memory, progress_bar(args, "indexing")) if result.records else (None, None)
    if index is not None:
        phases["index"] = index.seconds
    # Named: the ones found before writing. The import skips any a concurrent write made a duplicate since.
    duplicates = len(result.duplicates)
    unnamed = duplicates - len(result.skipped)
    imported = plural(len(result.records), "memory", "memories")
    if not result.records:
        text = "nothing to import"
    elif result.commit:
        text = f"imported {imported} in one commit ({result.commit[:8]})"
    else:  # the files written are what the last commit holds (a deleted file restored): no commit to make
        text = f"imported {imported}; the files match the last commit, so nothing was committed"
    if result.store_include:
        text += f"; added {_patterns_text(list(result.store_include))} (adopted notes restored)"
        text += _also_text(list(result.also_adopted), "makes")
    if duplicates:
        text += f"; skipped {plural(duplicates, 'exact duplicate')}"
        text += f" ({unnamed} found while writing)" if unnamed > 0 else ""
        text += _skips_text(list(result.skipped))
    text += "\n" + phase_line(phases, index.to_dict() if index is not None else None)
    data = {
        **result.to_dict(),
        "phasesMs": {k: round(v * 1000, 1) for k, v in phases.items()},
        "index": index.to_dict() if index is not None else None,
    }
    if index_error is not None:  # the commit stands: reported, with the index left to catch up
        data["indexError"] = index_error
        data["warnings"] = [*data.get("warnings", []), {"field": "index", "message": _index_warning(index_error)}]
    emit(args, data, text)
    if index_error is not None and not wants_json(args):
        print(f"warning: {_index_warning(index_error)}", file=sys.stderr)
    return 0


def _patterns_text(patterns: list[str]) -> str:
    """``store.include pattern 'notes/**' to remnic.config.json``, the patterns quoted as typed."""
    quoted = ", ".join(repr(p) for p in patterns)
    return f"store.include {'pattern' if len(patterns) == 1 else 'patterns'} {safe(quoted)} to remnic.config.json"


def _index_warning(why: str) -> str:
    return (
        f"the index was not updated ({why}); the memories are committed, and `remnic sync run` "
        "or the next recall catches the index up"
    )


def _also_text(paths: list[str], verb: str, shown: int = 3) -> str:
    """What a broad pattern does to the notes already here: they become memories too, named."""
    if not paths:
        return ""
    names = ", ".join(safe(p) for p in paths[:shown]) + (f", … {len(paths) - shown} more" if len(paths) > shown else "")
    return f", which {verb} {plural(len(paths), 'note')} already here {'a memory' if len(paths) == 1 else 'memories'} too ({names}; `remnic sync run` takes them in)"


def _in_file(path: str, problems: list[FieldProblem]) -> ValidationError:
    """The import's problems, each named by the file and line, in file order (JSON and line checks
    are two passes)."""
    problems = sorted(problems, key=lambda p: p.line or 0)
    for p in problems:
        p.path = path
    return ValidationError(f"{len(problems)} problem(s) in {path}; nothing was imported", problems=problems)


def _skips_text(skips: list[Skip], shown: int = 10) -> str:
    """``:`` and one line per duplicate (the first few), naming the line and what it duplicates."""
    if not skips:
        return ""
    lines = [f"  {safe(s.describe())}" for s in skips[:shown]]
    if len(skips) > shown:
        lines.append(f"  … and {len(skips) - shown} more (--json lists every one)")
    return ":\n" + "\n".join(lines)


def phase_line(phases: dict[str, float], index: dict[str, Any] | None) -> str:
    """``validate 0.3 s, write and commit 1.2 s, index 17.8 s (rebuild, 2000 embedded)``."""
    names = {"validate": "validate", "write": "write and commit", "index": "index"}
    parts = [f"{names.get(k, k)} {v:.1f} s" for k, v in phases.items()]
    if index is not None and parts:
        parts[-1] += f" ({index['action']}, {index['embedded']} embedded)"
    return "took " + ", ".join(parts)


def _group_text(group: dict[str, Any]) -> list[str]:
    s = group["survivor"]
    lines = [f"{group['kind']}: keep {s['id']}  {s['path']}", f"    {safe(s['content'][:100])}"]
    if group["note"]:
        lines.append(f"    ({safe(group['note'])})")
    for d in group["duplicates"]:
        lines.append(f"  {d['similarity']:.3f}  {d['id']}  {d['path']}")
        lines.append(f"    {safe(d['content'][:100])}")
    return lines


def _kept_text(kept: dict[str, Any]) -> list[str]:
    return [
        f"left active: {kept['id']}  {kept['path']}  ({kept['similarity']:.3f} like {kept['duplicateOf']})",
        f"    {safe(kept['content'][:100])}",
        f"    because {safe(kept['reason'])}",
    ]


def cmd_dedup(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    result = memory.dedup(
        merge=args.merge,
        namespace=args.namespace,
        source="cli",
        progress=progress_bar(args, "embedding memories for dedup"),
    )
    data = result.to_dict()

    def text() -> str:
        kept = [line for k in data["keptActive"] for line in _kept_text(k)]
        if not result.groups:
            none = f"no duplicates {'to merge ' if kept else ''}among {plural(result.considered, 'active memory', 'active memories')}"
            return "\n".join([*kept, none])
        lines = [line for g in data["groups"] for line in _group_text(g)] + kept
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
