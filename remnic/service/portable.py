"""Export and restore: every memory file out as JSONL (or one Markdown document), and back in exactly.

An exported JSONL line is an import line: ``content``, ``namespace``, ``category`` and the
file's frontmatter keys, so ``jq`` and other tools read it, plus ``path`` and ``file`` (the
file's exact text). ``remnic import`` of a line that carries ``file`` restores that file at
``path`` byte for byte: frontmatter, body, key order, comments and line endings as they were,
no defaults added, no duplicate folding, no supersession applied again. Without ``file`` a
line is an ordinary new memory built from ``content`` and the keys, at a path of its own: an
export's ``path`` says where the exported file lived, so it is dropped, never a frontmatter key.
Its ``id`` is kept, so in the repository it came from such a line is either the memory already
there (same id and text: skipped as an exact duplicate) or refused until ``id`` is dropped too.
A line with ``file`` whose file a memory here already is, byte for byte (same id, same text), is
skipped as an exact duplicate as well (:func:`prepare_import`), so an export imports again into its
own repository and brings back only the files that are gone; with other text it is refused.

A malformed memory file (frontmatter that does not parse, conflict markers, a secret...) is
still exported, byte for byte, so a backup never loses its text: its line is ``path``,
``namespace``, ``file`` and ``malformed`` (what is wrong), with no keys read from it. Import
checks every ``file`` as it checks any memory file, so such a line is refused, naming it, until
its ``file`` is fixed (or the line left out): remnic never commits a file it cannot read. A
file that cannot be carried as text (not UTF-8, a symlink) is left out and reported: as
incomplete (``skipped``) unless it is a symlink to a file the export holds (then a warning).

An adopted note (a memory only through a ``store.include`` pattern, e.g. ``notes/trip.md`` under
``notes/**``) carries that pattern as ``storeInclude``: importing it into a repository without the
pattern adds it to that repository's ``remnic.config.json`` in the import's own commit, so ``remnic
init NEW`` and ``remnic import`` restore such a repository too. An older export has no ``storeInclude``;
its adopted notes are refused, naming the pattern to add (``remnic init NEW --adopt PATTERN``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, MemoryFormatError, RemnicError
from remnic.memfile.model import MemoryRecord, content_hash
from remnic.memfile.paths import OUTSIDE, MemoryPaths, glob_match, namespace_for_path
from remnic.memfile.schema import STATUSES
from remnic.memfile.validate import check_namespace
from remnic.repo.files import SYMLINK_REASON

from .include_config import INCLUDE, IncludeRule, config_problem, include_rule, write_include
from .restoring import DROP_FILE_HINT as DROP_FILE_HINT
from .restoring import LEAVE_OUT_HINT as LEAVE_OUT_HINT
from .restoring import MALFORMED, Restore, check_restore, clashes, export_line
from .restoring import RESERVED as RESERVED

if TYPE_CHECKING:
    from remnic.repo.transaction import Transaction

    from .memory import Memory
    from .writes import ImportPlan

FORMATS = ("jsonl", "md")
_OTHER_STATUSES = tuple(s for s in STATUSES if s != "superseded")


def new_memory_fields(item: Any) -> Any:
    """An import line without ``file`` as a new memory's fields: the export-only ``path`` and
    ``storeInclude`` dropped (export leaves such frontmatter keys only in ``file``, so the line's are
    never one; a new memory goes to its category's folder, which needs no pattern)."""
    if isinstance(item, Mapping) and ("path" in item or INCLUDE in item):
        return {k: v for k, v in item.items() if k not in ("path", INCLUDE)}
    return item


@dataclass(frozen=True)
class FileIssue:
    """A memory file export could not read as a memory: carried as it is (malformed) or left out."""

    path: str
    problems: tuple[FieldProblem, ...]

    @property
    def reason(self) -> str:
        return "; ".join(replace(p, path=None, line=None).describe() + _at(p.line) for p in self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "problems": [replace(p, path=None).to_dict() for p in self.problems]}


def _at(line: int | None) -> str:
    return f" (line {line})" if line else ""


@dataclass
class Export:
    """What ``Memory.export`` wrote, and every memory file it could not export as a memory."""

    format: str
    items: list[Any]
    """``jsonl``: JSON-ready objects, one per line; ``md``: the document's text, in chunks."""
    memories: int
    malformed: list[FileIssue] = field(default_factory=list)
    """Exported as they are (a ``malformed`` line; a section marked so in Markdown)."""
    skipped: list[FileIssue] = field(default_factory=list)
    """Left out: not readable as text. The export is incomplete when this is not empty."""
    warnings: list[FieldProblem] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "memories": self.memories,
            "malformed": [m.to_dict() for m in self.malformed],
            "skipped": [s.to_dict() for s in self.skipped],
            "warnings": [w.to_dict() for w in self.warnings],
        }


def export(mem: Memory, fmt: str, namespace: str | None = None) -> Export:
    """Every memory file (every status) in path order, as JSONL lines or a Markdown document."""
    scan = mem.files.scan()
    entries: list[tuple[str, MemoryRecord | FileIssue, str | None]] = []
    known = {mem.settings.namespaces.default} | {r.namespace for r in scan.records}
    known |= {namespace_for_path(p) for p in [*scan.empty, *scan.links]}
    known |= {namespace_for_path(e.path) for e in scan.problems}
    for record in scan.records:
        if not namespace or record.namespace == namespace:
            entries.append((record.path, record, mem.files.read_text(record.path)))
    for error in scan.problems:
        if not namespace or namespace_for_path(error.path) == namespace:
            entries.append(_unreadable(mem, error))
    for path in scan.empty:
        if namespace and namespace_for_path(path) != namespace:
            continue
        entry = _without_text(mem, path)
        if entry is not None:
            entries.append(entry)
    exported = {path for path, _found, text in entries if text is not None}
    linked: list[FieldProblem] = []
    for link in scan.links:  # never read through: its target may be anything, even outside the repository
        if namespace and namespace_for_path(link) != namespace:
            continue
        target = _link_target(mem, link)
        if target in exported:  # its text is in this export: nothing is lost, but say why the link is not
            linked.append(FieldProblem("path", f"{link} is {SYMLINK_REASON}; it links to {target}, which is exported"))
        else:
            why = f"is {SYMLINK_REASON}, and what it links to is not in this export"
            entries.append((link, FileIssue(link, (FieldProblem("path", why),)), None))
    entries.sort(key=lambda entry: entry[0])
    result = Export(fmt, [], sum(isinstance(e[1], MemoryRecord) for e in entries), warnings=linked)
    for _path, found, text in entries:
        if isinstance(found, FileIssue):
            (result.malformed if text is not None else result.skipped).append(found)
    if namespace and namespace not in known:
        result.warnings.append(
            FieldProblem(
                "namespace",
                f"no memory file is in namespace {namespace!r}, so the export is empty "
                f"(namespaces here: {', '.join(sorted(known))})",
            )
        )
    result.items = list(_markdown(entries) if fmt == "md" else _lines(entries, mem.files.paths))
    return result


def _without_text(mem: Memory, path: str) -> tuple[str, FileIssue, None] | None:
    """A memory file with no text yet: left out, as import has nothing to make a memory of. One with
    frontmatter (an id, tags) is named in ``skipped``, since what it holds is not in the backup; a blank
    file holds nothing, so it is passed over."""
    try:
        text = mem.files.read_text(path)
    except (MemoryFormatError, OSError):
        text = "x"  # unreadable now: say so rather than pass over it
    if not text.strip():
        return None
    why = "has frontmatter but no text yet (an empty body, no title or description): give it a body to export it"
    return path, FileIssue(path, (FieldProblem("file", why),)), None


def _link_target(mem: Memory, link: str) -> str | None:
    """The repository path a symlinked memory file resolves to (None: outside the repository, or broken)."""
    root = os.path.realpath(mem.root)
    target = os.path.realpath(mem.root / link)
    if not target.startswith(root + os.sep) or not os.path.isfile(target):
        return None
    return os.path.relpath(target, root).replace(os.sep, "/")


def _unreadable(mem: Memory, error: MemoryFormatError) -> tuple[str, FileIssue, str | None]:
    """A malformed file with its text (carried as it is), or without (not text: left out)."""
    issue = FileIssue(error.path, tuple(error.problems))
    try:
        return error.path, issue, mem.files.read_text(error.path)
    except MemoryFormatError as exc:  # not UTF-8, a symlink, not a regular file: no text to carry
        return error.path, FileIssue(error.path, tuple(exc.problems)), None
    except (FileNotFoundError, NotADirectoryError):
        return error.path, FileIssue(error.path, (FieldProblem("path", "was removed while the export ran"),)), None


def _lines(
    entries: Sequence[tuple[str, MemoryRecord | FileIssue, str | None]], paths: MemoryPaths
) -> Iterator[dict[str, Any]]:
    for path, found, text in entries:
        if text is None:
            continue
        if isinstance(found, MemoryRecord):
            line = export_line(found, text)
        else:
            problems = [replace(p, path=None).to_dict() for p in found.problems]
            line = {"path": path, "namespace": namespace_for_path(path), MALFORMED: problems, "file": text}
        pattern = include_pattern(paths, path)
        if pattern is not None:  # before `file`, so the line reads path, pattern, text
            line = {**{k: v for k, v in line.items() if k != "file"}, INCLUDE: pattern, "file": text}
        yield line


def include_pattern(paths: MemoryPaths, path: str) -> str | None:
    """The first ``store.include`` pattern that makes ``path`` a memory, when no memory folder does."""
    if replace(paths, include=()).skip_reason(path) != OUTSIDE:
        return None
    return next((p for p in paths.include if glob_match(p, path)), None)


def _markdown(entries: Sequence[tuple[str, MemoryRecord | FileIssue, str | None]]) -> Iterator[str]:
    """A readable Markdown document: one section per memory file, shown as it is."""
    yield "# remnic export\n"
    for path, found, text in entries:
        note = ""
        if isinstance(found, FileIssue):
            state = "not a valid memory file, shown as it is" if text is not None else "left out: not readable as text"
            note = f"> {state}: {found.reason}\n\n"
        if text is None:
            yield f"\n## {path}\n\n{note}"
            continue
        fence = md_fence(text)
        yield f"\n## {path}\n\n{note}{fence}markdown\n{text.rstrip(chr(10))}\n{fence}\n"


def md_fence(text: str) -> str:
    """A backtick fence no line of ``text`` can close: longer than its longest run of backticks (CommonMark
    closes a fence at a run at least as long), at least three. A tilde line cannot close a backtick fence."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def plan_restores(
    mem: Memory, items: Sequence[Any], line_numbers: Sequence[int] | None
) -> tuple[list[Restore], list[int], list[FieldProblem]]:
    """The restore lines of an import batch (those with ``file``), checked like any memory file:
    (restores, offsets of the items that are restores, problems naming line and field)."""
    restores: list[Restore] = []
    offsets: list[int] = []
    problems: list[FieldProblem] = []
    existing: dict[str, str] | None = None
    seen_paths: dict[str, int] = {}
    seen_ids: dict[str, int] = {}
    rule: IncludeRule | None = None
    for offset, item in enumerate(items):
        if not isinstance(item, Mapping) or "file" not in item:
            continue
        offsets.append(offset)
        line = line_numbers[offset] if line_numbers else offset + 1
        rule = rule or include_rule(mem)
        found = check_restore(mem, item, line, rule)
        if isinstance(found, list):
            problems += found
            continue
        if existing is None:
            existing = mem.files.ids()
        problems += clashes(mem, found, existing, seen_paths, seen_ids)
        restores.append(found)
    wanted = adopted_patterns(restores)
    problem = config_problem(mem, wanted) if wanted else None
    return restores, offsets, [*problems, problem] if problem else problems


def stage_include(mem: Memory, tx: Transaction, planned: Sequence[Any]) -> None:
    """Add the ``storeInclude`` patterns of the restored adopted notes to ``store.include`` in this
    repository's remnic.config.json, staged in the import's own commit (the files need it to be memories)."""
    write_include(mem, tx, adopted_patterns(planned))


def adopted_patterns(planned: Sequence[Any]) -> list[str]:
    """The ``store.include`` patterns an import plan adds, in line order, once each."""
    return list(dict.fromkeys(p.include for p in planned if isinstance(p, Restore) and p.include))


# --- an import batch checked as `remnic import` runs it: exact duplicates named, and left out ---


@dataclass(frozen=True)
class Skip:
    """An import line that writes nothing, being an exact duplicate, and what it duplicates."""

    line: int
    reason: str
    """``file``: this very file is here byte for byte; ``text``: a memory here (or one this import
    restores) holds its text, active or with the line's status and category; ``batch``: another line of
    the batch brings its text: an earlier one, or a later active one when this line is not active (one
    line a text is written; ``id``: the memory that line matched, when it was a duplicate too)."""
    id: str | None = None
    path: str | None = None
    same_as_line: int | None = None
    kept: bool = False
    """Left in the batch because another line supersedes its id: the write skips it itself (its
    duplicate is then among the write's own ``duplicates``)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "reason": self.reason}
        if self.id is not None:
            out.update(id=self.id, path=self.path)
        if self.same_as_line is not None:
            out["sameAsLine"] = self.same_as_line
        return out

    def describe(self) -> str:
        if self.reason == "batch":
            return f"line {self.line}: same text as line {self.same_as_line}"
        what = "is" if self.reason == "file" else "has the text of"
        return f"line {self.line}: {what} {self.id} ({self.path})"


@dataclass
class ImportCheck:
    """An import batch checked without writing: the lines to write, the exact duplicates, or the problems."""

    items: list[Any]
    line_numbers: list[int]
    skipped: list[Skip]
    problems: list[FieldProblem]
    left_in: int = 0
    """Duplicates kept in ``items`` because another line supersedes their id: the import skips them itself."""
    texts: dict[int, tuple[str, str]] = field(default_factory=dict)
    """Line → (namespace, content hash) of each ``batch`` skip: the memory it duplicates is known once written."""
    plan: ImportPlan | None = None
    """``items`` as the write plans them, so the import writes what was checked without checking it again."""
    warnings: list[FieldProblem] = field(default_factory=list)
    """What the import writes but leaves needing attention (a restored superseded file whose successor
    is in neither the repository nor the import), each naming its line."""

    @property
    def to_import(self) -> int:
        return len(self.items) - self.left_in


def prepare_import(
    mem: Memory, items: Sequence[Any], line_numbers: Sequence[int] | None, namespace: str | None, source: str
) -> ImportCheck:
    """Every line checked as ``Memory.import_records`` checks it, and its exact duplicates found as it
    finds them, so a dry run predicts the real one. A line restoring a file a memory here already is,
    byte for byte, is a duplicate (the import would refuse its path and id); the duplicates are left
    out of ``items`` so the lines named are the lines skipped."""
    from .duplicates import DuplicateLookup, find_duplicate  # the import's own rule; writes imports this module
    from .import_lines import complete_lines
    from .importing import stranded_restores, successor_problems, with_later_problems
    from .writes import ImportPlan, plan_items

    bad_namespace = check_namespace(namespace)
    if bad_namespace:  # the caller's argument, said once rather than against every line
        return ImportCheck([], [], [], bad_namespace)
    items = complete_lines(mem, items, namespace)  # what a new memory takes that its line does not say
    numbers = list(line_numbers) if line_numbers else list(range(1, len(items) + 1))
    skipped: list[Skip] = []
    batch: list[Any] = []
    lines: list[int] = []
    ids: dict[str, str] | None = None
    for item, line in zip(items, numbers, strict=True):
        here = None
        if isinstance(item, Mapping) and isinstance(item.get("file"), str) and not item.get(MALFORMED):
            ids = mem.files.ids() if ids is None else ids
            here = _file_here(mem, item, ids)
        if here is not None:
            skipped.append(Skip(line, "file", here.id, here.path))
        else:
            batch.append(item)
            lines.append(line)
    plan, problems = plan_items(mem, batch, lines, namespace, source)
    if problems:  # the lines without a problem are checked on, so one run names every problem
        return ImportCheck([], [], skipped, with_later_problems(mem, batch, lines, problems, namespace, source))
    targets = {t for item in batch if isinstance(item, Mapping) and isinstance(t := item.get("supersedes"), str)}
    # The write keeps one line per text (its first), so an inactive line gives way to a later active one.
    active_line: dict[tuple[str, str], int] = {}
    for planned, line in zip(plan.items, lines, strict=True):
        if isinstance(planned, Restore) or planned[0]["id"] in plan.here:
            continue
        if str(planned[0].get("status") or "active") == "active":
            active_line.setdefault((planned[2], content_hash(planned[1].strip())), line)
    restored: dict[tuple[str, str], MemoryRecord] = {}  # as the transaction stages them, first one per text
    seen: dict[tuple[str, str], int] = {}
    via: dict[tuple[str, str], MemoryRecord] = {}  # a seen text whose line was skipped: the memory it matched
    result = ImportCheck([], [], skipped, [])
    kept: list[Any] = []  # the plan of each line left in
    lookup = DuplicateLookup(mem)
    for item, planned, line in zip(batch, plan.items, lines, strict=True):
        skip = None
        if isinstance(planned, Restore):
            restored.setdefault((planned.record.namespace, content_hash(planned.record.content)), planned.record)
        else:
            meta, content, ns, category = planned
            key = (ns, content_hash(content.strip()))
            status = str(meta.get("status") or "active")
            named = meta["id"] in targets  # a later line names it: the import resolves that to the memory matched
            found = _by_id(mem, meta["id"]) if meta["id"] in plan.here else None
            earlier = via.get(key)
            # An active line is no duplicate of a line that matched an inactive memory (that line writes nothing).
            fresh = status == "active" and earlier is not None and earlier.status != "active"
            if found is None and (key not in seen or fresh):
                staged = restored.get(key)
                # The write skips only active duplicates, so a line kept for a link must match an active one.
                same = staged is not None and not named and (staged.status, staged.category) == (status, category)
                found = staged if staged is not None and (staged.status == "active" or same) else None
                found = found or find_duplicate(mem, ns, key[1], None, lookup)
                if found is None and status != "active" and not named:
                    found = lookup.inactive(ns, key[1], status, category)
            if found is not None:
                skip = Skip(line, "text", found.id, found.path, kept=named)
                if found.status != "active" and not named:
                    # A later line with this text but another status is skipped by the write as this
                    # line's batch duplicate the first time: so it is on every import after that, too.
                    seen.setdefault(key, line)
                    via.setdefault(key, found)
            elif status != "active" and not named and active_line.get(key, line) > line and key not in seen:
                skip = Skip(line, "batch", same_as_line=active_line[key])
                result.texts[line] = key
            elif key in seen and not fresh and not (named and key in via):
                skip = Skip(line, "batch", same_as_line=seen[key], kept=named)
                if earlier is not None:
                    skip = replace(skip, id=earlier.id, path=earlier.path)
                else:
                    result.texts[line] = key
            else:
                seen[key] = line
                via.pop(key, None)
            if skip is not None:
                skipped.append(skip)
                if not named:
                    continue
                result.left_in += 1
        result.items.append(item)
        result.line_numbers.append(line)
        kept.append(planned)
    skipped.sort(key=lambda s: s.line)
    problems = successor_problems(mem, kept, result.line_numbers, {s.line for s in skipped})
    if problems:
        return ImportCheck([], [], skipped, problems)
    result.plan = ImportPlan(kept, plan.here)
    result.warnings = stranded_restores(mem, kept, result.line_numbers, {s.line for s in skipped})
    return result


def _file_here(mem: Memory, item: Mapping[str, Any], ids: Mapping[str, str]) -> MemoryRecord | None:
    """The memory whose file is this export line's ``file`` byte for byte, with the line's id, if one is here."""
    text, path, line_id = item["file"], item.get("path"), item.get("id")
    candidates = [path if isinstance(path, str) else None, ids.get(line_id) if isinstance(line_id, str) else None]
    for rel in dict.fromkeys(c for c in candidates if c):
        if rel.startswith("/") or ".." in rel.split("/") or not mem.files.paths.is_memory(rel):
            continue
        try:
            if mem.files.read_text(rel) != text:
                continue
            record = mem.files.read(rel)
        except (RemnicError, OSError):
            continue
        # Same bytes at the line's path are the same memory; elsewhere, only by the id the line names.
        if record.id == line_id or (line_id is None and rel == path):
            return record
    return None


def _by_id(mem: Memory, memory_id: str) -> MemoryRecord | None:
    try:
        return mem.get(memory_id)
    except RemnicError:
        return None
