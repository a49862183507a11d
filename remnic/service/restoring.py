"""An import line that keeps ``file`` (a restore) checked as any memory file, and held to it.

Such a line restores the file at its ``path`` byte for byte, so its path must be a memory path of this
repository (never outside it, never where remnic keeps its own records), its other keys must be what
export writes for that file, and no file or memory here may already hold its path or id with other
text: a restore never overwrites. The export side (:mod:`.portable`) writes the lines; this module
reads one back.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, MemoryFormatError
from remnic.memfile.model import MemoryRecord, split_file
from remnic.memfile.paths import SKIP_DIRS, STATE_RECORDS_DIR
from remnic.memfile.schema import NAMESPACES_DIR
from remnic.memfile.validate import check_text

from .include_config import INCLUDE, IncludeRule

if TYPE_CHECKING:
    from .memory import Memory

MALFORMED = "malformed"
"""The key marking an export line whose ``file`` is not a valid memory file (its value: the problems)."""
RESERVED = ("content", "namespace", "path", "file", MALFORMED, INCLUDE)
"""Keys an export line sets itself; a frontmatter key of the same name is kept only in ``file``."""
_NOT_COMPARED = ("path", "file", MALFORMED, INCLUDE)
DROP_FILE_HINT = "drop `file` and `id` to import the line as a new memory"
LEAVE_OUT_HINT = "jq -c 'select(.malformed | not)'"


@dataclass(frozen=True)
class Restore:
    """An import line that restores one exported file exactly."""

    path: str
    text: str
    record: MemoryRecord
    line: int
    include: str | None = None
    """The line's ``storeInclude`` pattern when this repository needs it to take ``path`` as a memory."""


def export_line(record: MemoryRecord, text: str) -> dict[str, Any]:
    """The JSON-ready export line of one valid memory file (also what a restore line is held to)."""
    line: dict[str, Any] = {"content": record.content, "namespace": record.namespace}
    line.update((k, v) for k, v in record.frontmatter.items() if k not in RESERVED)
    line.setdefault("category", record.category)
    line["path"] = record.path
    line["file"] = text
    return line


def path_problem(path: str) -> str | None:
    """Why a restore may not write ``path`` by where it points (None: that is for the memory rule to say):
    outside the repository, spelled with ``..``, in remnic's own ``state/`` records or a hidden folder."""
    if path.startswith("/") or re.match(r"[A-Za-z]:[\\/]", path):
        return f"{path!r} is an absolute path: give it from the repository root (e.g. facts/x.md)"
    parts = path.split("/")
    if any(p in ("..", ".", "") for p in parts):
        plain = posixpath.normpath(path)
        if plain == ".." or plain.startswith("../"):
            return f"{path!r} points outside the memory repository (its '..' climbs above the root)"
        return f"{path!r} is not spelled plainly: give it from the repository root as {plain!r} (no '..', '.' or '//')"
    in_ns = len(parts) >= 3 and parts[0] == NAMESPACES_DIR
    if len(parts) >= 2 and (parts[2] if in_ns else parts[0]) == STATE_RECORDS_DIR and (not in_ns or len(parts) >= 4):
        folder = "/".join(parts[:3] if in_ns else parts[:1])
        return (
            f"{path!r} is in {folder}/, where remnic (and the original Remnic) keep their own records, never memories"
        )
    hidden = next((p for p in parts if p.startswith(".") or p in SKIP_DIRS), None)
    if hidden is not None:
        what = "a hidden file" if hidden == parts[-1] else f"in {hidden}/, a hidden or tool folder"
        return f"{path!r} is {what}, which never holds memories"
    return None


def size_problem(text: str, limit: int) -> str | None:
    """Why a restored file's body is too long for a memory (``store.maxContentChars``, as a new memory's
    ``content`` is held to it), or None; counted as stored (surrounding whitespace dropped)."""
    if len(text) <= limit:  # the body is shorter still: no need to split the file
        return None
    try:
        body = split_file(text)[1]
    except MemoryFormatError:  # an unclosed frontmatter: the whole text would be the memory
        body = text
    stored = len(body.strip())
    if stored <= limit:
        return None
    return (
        f"the memory's text (the body after the frontmatter) is {stored} characters; the limit is {limit} "
        "(store.maxContentChars): split it into smaller memories, or raise store.maxContentChars"
    )


def check_restore(mem: Memory, item: Mapping[str, Any], line: int, rule: IncludeRule) -> Restore | list[FieldProblem]:
    """The restore a line with ``file`` is, or its problems (each naming the line and field)."""
    text, path = item.get("file"), item.get("path")
    if not isinstance(text, str):
        return [FieldProblem("file", f"must be the file's text (a string), got {type(text).__name__}", line=line)]
    if not isinstance(path, str) or not path.strip():
        return [FieldProblem("path", "is required with file (where the file goes, e.g. facts/x.md)", line=line)]
    where = path_problem(path)
    if where is not None:
        return [FieldProblem("path", where, line=line)]
    include = rule.needed(path, item.get(INCLUDE))
    if isinstance(include, FieldProblem):
        return [replace(include, line=line)]
    too_long = size_problem(text, mem.settings.store.max_content_chars)
    if too_long is not None:  # before parsing and scanning it: a huge file costs gigabytes there
        return [FieldProblem("file", too_long, line=line)]
    checked = check_text(text, path, mem.settings.store)
    if checked.problems or checked.record is None:
        problems = [
            FieldProblem(
                p.field, p.message + (f" (line {p.line} of `file`)" if p.line else ""), line=line, options=p.options
            )
            for p in checked.problems
        ] or [FieldProblem("file", "is not a memory file", line=line)]
        if item.get(MALFORMED):
            problems.append(
                FieldProblem(
                    MALFORMED,
                    f"export carried {path} as it was, not a valid memory file, and import restores only valid "
                    f"ones: fix its text in `file`, or leave the line out (e.g. {LEAVE_OUT_HINT})",
                    line=line,
                )
            )
        return problems
    if checked.empty:
        return [FieldProblem("file", "has no text (an empty body and no title or description)", line=line)]
    edited = _disagreeing_keys(item, export_line(checked.record, text))
    problems = []
    if "namespace" in edited:  # the path gives a restored file its namespace, not the file's text
        edited.remove("namespace")
        problems.append(
            FieldProblem(
                "namespace",
                f"is {item['namespace']!r}, but the line's path {path!r} puts the file in namespace "
                f"{checked.record.namespace!r} (a restored file's namespace is the folder its path names: "
                f"{NAMESPACES_DIR}/<name>/…, else the default): change `path`, or drop `namespace`",
                line=line,
            )
        )
    if edited:
        problems.append(
            FieldProblem(
                ", ".join(edited),
                f"{'differs' if len(edited) == 1 else 'differ'} from the file in this line's `file`, which is what "
                f"import restores, byte for byte; to change the memory, edit its text in `file`, or {DROP_FILE_HINT}",
                line=line,
            )
        )
    if problems:
        return problems
    return Restore(path, text, checked.record, line, include)


def _disagreeing_keys(item: Mapping[str, Any], exported: Mapping[str, Any]) -> list[str]:
    """The line's keys whose values are not what export writes for its ``file`` (a key left out of
    the line is no disagreement: a line of ``path`` and ``file`` alone is a restore too)."""
    return [
        key
        for key, value in item.items()
        if key not in _NOT_COMPARED and (key not in exported or _json(value) != _json(exported[key]))
    ]


def _json(value: Any) -> str:
    # As export writes it (str() for dates and the like), so a value compares equal after the round trip.
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def clashes(
    mem: Memory, restore: Restore, existing: Mapping[str, str], seen_paths: dict[str, int], seen_ids: dict[str, int]
) -> list[FieldProblem]:
    """A restore's path or id taken: by an earlier line, or here with other text (the same file byte for
    byte is skipped before this, as an exact duplicate)."""
    problems = []
    path, line, memory_id = restore.path, restore.line, restore.record.frontmatter.get("id")
    if path in seen_paths:
        problems.append(FieldProblem("path", f"{path!r} is used again (first on line {seen_paths[path]})", line=line))
    elif (mem.root / path).exists():
        why = (
            f"{path!r} already exists in this repository with other text, and a restore never overwrites a file: "
            f"move that file away first, or {DROP_FILE_HINT}"
        )
        if restore.include:  # the file is there, but no pattern makes it a memory any more
            why = (
                f"{path!r} already exists in this repository, but is no memory: adding store.include "
                f"{restore.include!r} makes it one again"
            )
        problems.append(FieldProblem("path", why, line=line))
    seen_paths.setdefault(path, line)
    if isinstance(memory_id, str) and memory_id:
        if memory_id in seen_ids:
            problems.append(
                FieldProblem("id", f"{memory_id!r} is used again (first on line {seen_ids[memory_id]})", line=line)
            )
        elif memory_id in existing:
            why = (
                f"{memory_id!r} already exists ({existing[memory_id]}) with other text, and a restore never "
                f"replaces a memory: {DROP_FILE_HINT} (it then gets an id of its own)"
            )
            problems.append(FieldProblem("id", why, line=line))
        seen_ids.setdefault(memory_id, line)
    return problems
