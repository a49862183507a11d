"""Housekeeping commands: ``export`` (JSONL that ``import`` restores byte for byte, or Markdown), the
``import`` handler (registered with the memory commands) and ``dedup``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, ValidationError

from ._common import add_command, choice_list, emit, emit_failure, open_memory, plural, progress_bar, safe, wants_json
from .recall import OUT_HELP, out_path, write_out

if TYPE_CHECKING:  # the service loads when export or import runs, not when the parser is built
    from remnic.service.portable import Export, Skip

    from .import_input import ImportInput

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
md: one Markdown document to read (each file under a heading, in a code fence longer
than any run of backticks in it, so no text ends it early); not for import.

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

IMPORT_EPILOG = """\
Each line is a JSON object with `content` plus any frontmatter keys, e.g.
  {"content": "Ana prefers tabs", "category": "preference", "tags": ["style"]}
Every line is validated before anything is written; a bad line is reported
with its line number and nothing is imported. A line from `remnic export`
(with `path` and `file`) restores that file exactly, and its other keys must
agree with `file` (its body, as a new memory's content, at most store.maxContentChars
characters); without `file` and `id` the line is a new memory (its `path` is
ignored). A line export marked `malformed` is refused until its `file` is fixed.
Exact duplicates are skipped and named, by line and the memory they match (the
line's other keys are not merged into it): a line with `file` whose file is here,
byte for byte with its id (so an export imports again into its own repository and
restores only the files that are gone), and a line whose text a memory here already
holds (that very memory, an active one of its namespace, or one with the line's status and
category there: so running an import again adds nothing) or another line brings (an earlier
one, or a later active one when this line is not active). A file here with the line's
path or id and other text is refused (drop `file` and `id` to import its text as a new memory).
A new-memory line with status superseded needs supersededBy naming a memory here or one this
import writes (or a line of the import naming it in supersedes), as `update --status superseded`
does. A restored line (with `file`) is restored as it is; one marked superseded whose successor
is in neither the repository nor the import is named in a warning (--json: warnings), as its
value is left with no current memory.
A new-memory line naming a memory here in `supersedes` marks that memory superseded in the
same commit (named after the summary; --json: alsoChanged, each {id, path, change:
superseded, by}), and takes its category, tags and importance when the line gives none, as
`store --supersedes` does (a memory only this import brings gives none). A line with status
archived (forgotten) and no archivedAt (forgottenAt) gets the import's time, as `update` sets it.
--dry-run reports how many lines would be imported and which would be skipped;
--json names them in `skipped` (line, reason: file, text or batch, and the id and
path of the memory matched, or sameAsLine).
A UTF-8 BOM at the start of the file is allowed; a key given twice in a line is refused.
The original Remnic's export (`remnic export --format json` there: a directory with
manifest.json and bundle.json) is read too, given the directory or its bundle.json: each
record at a memory path here restores its file exactly, checked as a line with `file` is;
a record outside the repository is refused; the others (state/, profile.md, ...) are left
out and named (--json: bundle {format, schemaVersion, records, leftOut}). Its messages
name a record as records[i] (from 0; --json: record); a schemaVersion other than 1 or 2
is read with a warning. With --namespace NS its records are restored under namespaces/NS/
(relative to that namespace's root, as the original imports them).
A pretty-printed JSON array or object is refused in one line naming the `jq -c` command
that writes it as JSON Lines.

examples:
  remnic import memories.jsonl --dry-run   # what would be imported and skipped
  remnic import memories.jsonl --namespace work
  remnic import ~/old-remnic-export   # the original Remnic's export directory
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
one that duplicates another survivor stays active, listed as "left active" with the
command that keeps one of the two (--json: keptActive, each with its reason and hint:
`remnic update LATER --supersedes EARLIER`). Without --merge nothing changes; with it
every other member is archived with mergedInto, the survivor lists them in derived_from
and adds up their reinforcement counts, and all groups go into one commit.

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
        if result.skipped:
            emit_failure(args, data["error"], data["code"])
    return 1 if result.skipped else 0


def cmd_import(args: argparse.Namespace) -> int:
    import time

    from remnic.memfile.validate import check_namespace
    from remnic.service.importing import catch_up_index, committed_before_interrupt
    from remnic.service.include_config import newly_adopted
    from remnic.service.original_bundle import into_namespace
    from remnic.service.portable import Restore, adopted_patterns, prepare_import

    from .import_input import bundle_data, bundle_text, read_input

    started = time.perf_counter()
    bad_namespace = check_namespace(args.namespace)
    if bad_namespace:  # the flag is wrong, not the file's lines: one error, naming --namespace
        raise ValidationError(bad_namespace[0].describe(), problems=bad_namespace)
    memory = open_memory(args)
    memory.defer_index(build_missing=False)  # indexed below, with progress, as its own phase
    read = read_input(memory, args.file)
    if read.bundle is not None:  # its records are relative to the namespace's root, as the original imports
        into_namespace(read.bundle, args.namespace, memory.settings.namespaces.default)
    items, problems, line_numbers = read.items, read.problems, read.line_numbers
    unit = "record" if read.bundle is not None else "line"
    parsed = time.perf_counter() - started
    if problems or args.dry_run:  # the JSON problems with the lines' own, or what the import would do
        checked = prepare_import(memory, items, line_numbers, args.namespace, "cli-import")
        problems += checked.problems
        if problems:
            raise read.refused(problems)
        skipped = [_by_record(s.to_dict(), unit) for s in checked.skipped]
        planned = checked.plan.items if checked.plan is not None else []
        patterns = adopted_patterns(planned)
        also = newly_adopted(memory, patterns, [p.path for p in planned if isinstance(p, Restore)])
        data: dict[str, Any] = {
            "valid": len(items),
            "dryRun": True,
            "wouldImport": checked.to_import,
            "duplicates": len(checked.skipped),
            "skipped": skipped,
            "storeIncludeAdded": patterns,
            "alsoAdopted": also,
            "warnings": [*_bundle_warning(read), *(_by_record(w.to_dict(), unit) for w in checked.warnings)],
        }
        if read.bundle is not None:
            data["bundle"] = bundle_data(read)
        emit(
            args,
            data,
            lambda: (
                bundle_text(read)
                + f"{plural(len(items), unit)} valid; nothing imported (--dry-run): would import "
                + plural(checked.to_import, "memory", "memories")
                + (f", skip {plural(len(checked.skipped), 'exact duplicate')}" if checked.skipped else "")
                + (f", and add {_patterns_text(patterns)}{_also_text(also, 'would make')}" if patterns else "")
                + _skips_text(checked.skipped, unit)
            ),
        )
        _warn(args, [w["message"] for w in _bundle_warning(read)] + [_said(w, unit) for w in checked.warnings])
        return 0
    head_before = memory.head()
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
        raise read.refused(exc.problems) from None
    except KeyboardInterrupt:  # after its commit landed, the import stands: say so, as during indexing
        committed = committed_before_interrupt(memory, head_before)
        if committed is None:
            raise
        raise KeyboardInterrupt(_committed_text(committed)) from None
    phases = {"validate": parsed + result.phases["validate"], "write": result.phases["write"]}
    try:
        index, index_error = catch_up_index(memory, progress_bar(args, "indexing")) if result.records else (None, None)
    except KeyboardInterrupt:  # say that the import itself stands: running it again would skip every line
        done = plural(len(result.records), "memory", "memories")
        raise KeyboardInterrupt(_committed_text(done + (f", {result.commit[:8]}" if result.commit else ""))) from None
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
    text = bundle_text(read) + text
    if result.store_include:
        text += f"; added {_patterns_text(list(result.store_include))} (adopted notes restored)"
        text += _also_text(list(result.also_adopted), "makes")
    if duplicates:
        text += f"; skipped {plural(duplicates, 'exact duplicate')}"
        text += f" ({unnamed} found while writing)" if unnamed > 0 else ""
        text += _skips_text(list(result.skipped), unit)
    if result.also_changed:  # a memory here rewritten by the commit is named, as revert names its own
        text += "\nalso changed in that commit:\n" + "\n".join(
            f"  {safe(a.describe(a.by))}" for a in result.also_changed
        )
    text += "\n" + phase_line(phases, index.to_dict() if index is not None else None)
    data = {
        **_result_by_record(result.to_dict(), unit),
        "phasesMs": {k: round(v * 1000, 1) for k, v in phases.items()},
        "index": index.to_dict() if index is not None else None,
    }
    if read.bundle is not None:
        data["bundle"] = bundle_data(read)
    if _bundle_warning(read):
        data["warnings"] = [*_bundle_warning(read), *data.get("warnings", [])]
    if index_error is not None:  # the commit stands: reported, with the index left to catch up
        data["indexError"] = index_error
        data["warnings"] = [*data.get("warnings", []), {"field": "index", "message": _index_warning(index_error)}]
    emit(args, data, text)
    notes = (
        [w["message"] for w in _bundle_warning(read)]
        + [_said(n, unit) for n in result.notes]
        + ([_index_warning(index_error)] if index_error else [])
    )
    _warn(args, notes)
    return 0


def _committed_text(what: str) -> str:
    """An interrupted import whose commit landed: it stands (running it again skips every line)."""
    return (
        f"the import is committed ({what}); only what follows the commit was cut short (the indexing), "
        "and the next `remnic sync run` or recall catches the index up"
    )


def _bundle_warning(read: ImportInput) -> list[dict[str, Any]]:
    """A bundle's unknown schemaVersion, as a --json warning (its message names the field)."""
    warning = read.bundle.warning if read.bundle is not None else None
    return [] if warning is None else [{"field": warning.field, "message": warning.describe()}]


def _by_record(entry: dict[str, Any], unit: str) -> dict[str, Any]:
    """A --json entry naming a line; in a bundle, its record instead (``record``: the index i of
    ``records[i]``, from 0, as every bundle message numbers them)."""
    if unit == "line":
        return entry
    renamed = {"line": "record", "sameAsLine": "sameAsRecord"}
    return {renamed.get(k, k): v - 1 if k in renamed and isinstance(v, int) else v for k, v in entry.items()}


def _result_by_record(data: dict[str, Any], unit: str) -> dict[str, Any]:
    for key in ("skipped", "warnings"):
        if isinstance(data.get(key), list):
            data[key] = [_by_record(e, unit) if isinstance(e, dict) else e for e in data[key]]
    return data


def _said(problem: FieldProblem, unit: str) -> str:
    """A warning about one line, which in a bundle is one of its records."""
    from remnic.service.original_bundle import records_said

    text = problem.describe()
    return text if unit == "line" else records_said(text)


def _warn(args: argparse.Namespace, lines: list[str]) -> None:
    """Warnings on standard error (--json carries them in its object instead)."""
    if wants_json(args):
        return
    for line in lines:
        print(f"warning: {safe(line)}", file=sys.stderr)


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


def _skips_text(skips: list[Skip], unit: str = "line", shown: int = 10) -> str:
    """``:`` and one line per duplicate (the first few), naming the line (a bundle's record) and what it
    duplicates."""
    if not skips:
        return ""
    from remnic.service.original_bundle import records_said

    lines = [f"  {safe(s.describe() if unit == 'line' else records_said(s.describe()))}" for s in skips[:shown]]
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
        f"    to keep one: `{safe(kept['hint'])}`",
    ]


def cmd_dedup(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    result = memory.dedup(
        merge=args.merge,
        namespace=args.namespace,
        source="cli",
        progress=progress_bar(args, "finding duplicates (embedding, then comparing memories)"),
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
