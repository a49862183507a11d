"""Export and restore: every memory file out as JSONL (or one Markdown document), and back in exactly.

An exported JSONL line is an import line: ``content``, ``namespace``, ``category`` and the
file's frontmatter keys, so ``jq`` and other tools read it, plus ``path`` and ``file`` (the
file's exact text). ``remnic import`` of a line that carries ``file`` restores that file at
``path`` byte for byte: frontmatter, body, key order, comments and line endings as they were,
no defaults added, no duplicate folding, no supersession applied again. Without ``file`` a
line is an ordinary new memory built from ``content`` and the keys, at a path of its own: an
export's ``path`` says where the exported file lived, so it is dropped, never a frontmatter key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem
from remnic.memfile.model import MemoryRecord
from remnic.memfile.validate import check_text

if TYPE_CHECKING:
    from .memory import Memory

FORMATS = ("jsonl", "md")
RESERVED = ("content", "namespace", "path", "file")
"""Keys an export line sets itself; a frontmatter key of the same name is kept only in ``file``."""


def new_memory_fields(item: Any) -> Any:
    """An import line without ``file`` as a new memory's fields: the export-only ``path`` dropped
    (export leaves a frontmatter ``path`` only in ``file``, so the line's ``path`` is never one)."""
    if isinstance(item, Mapping) and "path" in item:
        return {k: v for k, v in item.items() if k != "path"}
    return item


@dataclass(frozen=True)
class Restore:
    """An import line that restores one exported file exactly."""

    path: str
    text: str
    record: MemoryRecord
    line: int


def export_lines(mem: Memory, *, namespace: str | None = None) -> Iterator[dict[str, Any]]:
    """One JSON-ready object per valid memory file, in path order (every status: nothing is left out)."""
    for record in mem.files.scan().records:
        if namespace and record.namespace != namespace:
            continue
        text = mem.files.read_text(record.path)
        line: dict[str, Any] = {"content": record.content, "namespace": record.namespace}
        line.update((k, v) for k, v in record.frontmatter.items() if k not in RESERVED)
        line.setdefault("category", record.category)
        line["path"] = record.path
        line["file"] = text
        yield line


def export_markdown(mem: Memory, *, namespace: str | None = None) -> Iterator[str]:
    """A readable Markdown document: one section per memory, its file shown as it is."""
    yield "# remnic export\n"
    for line in export_lines(mem, namespace=namespace):
        fence = "````" if "```" in line["file"] else "```"
        yield f"\n## {line['path']}\n\n{fence}markdown\n{line['file'].rstrip(chr(10))}\n{fence}\n"


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
    for offset, item in enumerate(items):
        if not isinstance(item, Mapping) or "file" not in item:
            continue
        offsets.append(offset)
        line = line_numbers[offset] if line_numbers else offset + 1
        found = _restore(mem, item, line)
        if isinstance(found, list):
            problems += found
            continue
        if existing is None:
            existing = mem.files.ids()
        problems += _clashes(mem, found, existing, seen_paths, seen_ids)
        restores.append(found)
    return restores, offsets, problems


def _restore(mem: Memory, item: Mapping[str, Any], line: int) -> Restore | list[FieldProblem]:
    text, path = item.get("file"), item.get("path")
    if not isinstance(text, str):
        return [FieldProblem("file", f"must be the file's text (a string), got {type(text).__name__}", line=line)]
    if not isinstance(path, str) or not path.strip():
        return [FieldProblem("path", "is required with file (where the file goes, e.g. facts/x.md)", line=line)]
    if path.startswith("/") or ".." in path.split("/") or not mem.files.paths.is_memory(path):
        return [
            FieldProblem(
                "path",
                f"{path!r} is not a memory path here (a category folder such as facts/ or decisions/, "
                "or a store.include pattern)",
                line=line,
            )
        ]
    checked = check_text(text, path, mem.settings.store)
    if checked.problems or checked.record is None:
        return [FieldProblem(p.field, p.message, line=line, options=p.options) for p in checked.problems] or [
            FieldProblem("file", "is not a memory file", line=line)
        ]
    if checked.empty:
        return [FieldProblem("file", "has no text (an empty body and no title or description)", line=line)]
    return Restore(path, text, checked.record, line)


def _clashes(
    mem: Memory, restore: Restore, existing: Mapping[str, str], seen_paths: dict[str, int], seen_ids: dict[str, int]
) -> list[FieldProblem]:
    problems = []
    path, line, memory_id = restore.path, restore.line, restore.record.frontmatter.get("id")
    if path in seen_paths:
        problems.append(FieldProblem("path", f"{path!r} is used again (first on line {seen_paths[path]})", line=line))
    elif (mem.root / path).exists():
        problems.append(FieldProblem("path", f"{path!r} already exists in this repository", line=line))
    seen_paths.setdefault(path, line)
    if isinstance(memory_id, str) and memory_id:
        if memory_id in seen_ids:
            problems.append(
                FieldProblem("id", f"{memory_id!r} is used again (first on line {seen_ids[memory_id]})", line=line)
            )
        elif memory_id in existing:
            problems.append(FieldProblem("id", f"{memory_id!r} already exists ({existing[memory_id]})", line=line))
        seen_ids.setdefault(memory_id, line)
    return problems
