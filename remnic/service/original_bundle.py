"""The original Remnic's export bundle (``remnic export --format json`` there), read as import lines.

The original writes a directory holding ``manifest.json`` and ``bundle.json``; the bundle is one
JSON object, ``{"manifest": {"format": "openclaw-engram-export", "schemaVersion": 1 or 2, ...},
"records": [{"path", "content"}, ...]}``, where each record is one file of its memory directory
(``content`` its whole text, ``path`` relative to that directory). Every file of the directory is a
record, memories or not (``state/``, ``profile.md``, an optional ``workspace/IDENTITY.md``).

Each record at a memory path here becomes a restoring line (``{"path", "file"}``), so it goes through
the one check every restore takes (:mod:`.restoring`: a memory path, a valid memory file, nothing here
overwritten), and import writes the files exactly as the original wrote them, as ``remnic init`` of a
copy of the directory would adopt them. A record at a path outside the repository is refused, naming
it; the other records (not memories here) are left out and named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, json_kind
from remnic.memfile.schema import NAMESPACES_DIR

from .restoring import path_problem

if TYPE_CHECKING:
    from .memory import Memory

FORMAT = "openclaw-engram-export"
"""The ``manifest.format`` of the original's export."""
BUNDLE_FILE = "bundle.json"
KNOWN_VERSIONS = (1, 2)
"""The ``manifest.schemaVersion`` values this reader was written for (the original's ``types.ts``)."""


def is_bundle(data: Any) -> bool:
    """Whether a parsed JSON value is meant as the original's export bundle: an object with a ``manifest``
    or a ``records`` list and no ``content`` (no import line). One whose manifest is missing or names
    another format is read as a bundle too, so the refusal says that (see :func:`bundle_lines`)."""
    if not isinstance(data, Mapping) or "content" in data:
        return False
    return "manifest" in data or isinstance(data.get("records"), list)


def _manifest_problem(manifest: Any) -> FieldProblem | None:
    if manifest is None:
        shape = f'{{"manifest": {{"format": "{FORMAT}", …}}, "records": […]}}'
        return FieldProblem("manifest", f"is missing: the original Remnic's export bundle is {shape}")
    if not isinstance(manifest, Mapping):
        return FieldProblem("manifest", f"must be an object holding format: {FORMAT}, got {json_kind(manifest)}")
    found = manifest.get("format")
    if found != FORMAT:
        said = "missing" if found is None else repr(found) if isinstance(found, str) else json_kind(found)
        return FieldProblem("manifest.format", f"is {said}, expected {FORMAT}")
    return None


@dataclass
class BundleLines:
    """A bundle's records as import lines: one per memory record, numbered by its record (from 1, as
    lines are; every message says ``records[i]``, from 0: see :func:`records_said`)."""

    items: list[dict[str, str]] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    problems: list[FieldProblem] = field(default_factory=list)
    """Each naming ``records[i]`` (from 0, as the JSON is indexed) and the field."""
    left_out: list[str] = field(default_factory=list)
    """The paths of the records that are not memories here (never written)."""
    schema_version: Any = None
    warning: FieldProblem | None = None
    """A schemaVersion this reader does not know: read all the same (records are still ``{path, content}``
    files, each checked), and said."""


def bundle_lines(mem: Memory, data: Mapping[str, Any]) -> BundleLines:
    """The import lines of a bundle (see the module): a record at a memory path restores its file there."""
    bad_manifest = _manifest_problem(data.get("manifest"))
    if bad_manifest is not None:  # not the original's export, or not one this reader knows: nothing is read
        return BundleLines(problems=[bad_manifest])
    out = BundleLines(schema_version=data["manifest"].get("schemaVersion"))
    if out.schema_version not in KNOWN_VERSIONS or isinstance(out.schema_version, bool):
        why = (
            f"is {out.schema_version!r}, which this reader does not know (it knows "
            f"{' and '.join(map(str, KNOWN_VERSIONS))}): its records are read as {{path, content}} files all "
            "the same, each checked as any restored file; check what was left out"
        )
        out.warning = FieldProblem("manifest.schemaVersion", why)
    records = data.get("records")
    if not isinstance(records, list):
        why = f"must be a list of {{path, content}} objects (one per file), got {json_kind(records)}"
        out.problems.append(FieldProblem("records", why))
        return out
    for i, record in enumerate(records):
        where = f"records[{i}]"
        if not isinstance(record, Mapping):
            out.problems.append(FieldProblem(where, f"must be a {{path, content}} object, got {json_kind(record)}"))
            continue
        path, content = record.get("path"), record.get("content")
        bad = [
            FieldProblem(f"{where}.{key}", f"must be a string, got {json_kind(value)}")
            for key, value in (("path", path), ("content", content))
            if not isinstance(value, str)
        ]
        if bad:
            out.problems += bad
            continue
        assert isinstance(path, str) and isinstance(content, str)
        refused = path_problem(path)
        if "\\" in path:  # the original refuses it too: its record paths use POSIX separators
            posix = path.replace("\\", "/")
            why = f"{path!r} uses '\\' as a separator (a Windows path): a record's path uses '/', as {posix!r}"
            out.problems.append(FieldProblem(f"{where}.path", why))
        elif refused is not None and not _plain(path):  # outside the repository, or spelled to look elsewhere
            out.problems.append(FieldProblem(f"{where}.path", refused + "; nothing is written outside it"))
        elif refused is not None or not mem.files.paths.is_memory(path):  # state/, hidden, not a memory
            out.left_out.append(path)
        else:
            out.items.append({"path": path, "file": content})
            out.numbers.append(i + 1)
    return out


def into_namespace(lines: BundleLines, namespace: str | None, default: str) -> None:
    """The original's ``import --namespace NS``: a bundle's records are relative to that namespace's root
    (as its export of one namespace writes them), so each memory record is restored under
    ``namespaces/NS/`` (the default namespace's root is the repository's). A record in a namespace folder
    already is refused, naming it: it would land in a namespace inside a namespace."""
    if not namespace or namespace == default:
        return
    for item, number in zip(lines.items, lines.numbers, strict=True):
        path = item["path"]
        if path.split("/", 1)[0] == NAMESPACES_DIR:
            why = (
                f"{path!r} is in a namespace folder already, and --namespace {namespace} would put it in "
                f"{NAMESPACES_DIR}/{namespace}/{path}: import this bundle without --namespace"
            )
            lines.problems.append(FieldProblem(f"records[{number - 1}].path", why))
        else:
            item["path"] = f"{NAMESPACES_DIR}/{namespace}/{path}"


def _plain(path: str) -> bool:
    """A relative path spelled plainly (no root, drive, ``..``, ``.`` or empty part): it names a place
    inside the repository, the one its text says."""
    parts = path.split("/")
    return not (re.match(r"/|[A-Za-z]:[\\/]", path) or any(p in ("..", ".", "") for p in parts))


_LINE = re.compile(r"\b(on |as )?line (\d+)\b(?! of `)")


def records_said(text: str) -> str:
    """A bundle's text about its lines said by record: its line N is ``records[N-1]`` (from 0, as the
    JSON is indexed), the one numbering every bundle message uses; ``line 3 of `file``` (a line of the
    record's text) is kept."""

    def record(m: re.Match[str]) -> str:
        return f"{'at ' if m.group(1) == 'on ' else m.group(1) or ''}records[{int(m.group(2)) - 1}]"

    return _LINE.sub(record, text)


def in_records(problems: list[FieldProblem], name: str) -> list[FieldProblem]:
    """The problems of a bundle's lines named by its record (``records[i].path``, ``records[i].content``)
    in the file ``name``, instead of by a line number (a bundle's lines are not its records)."""
    for p in problems:
        if p.line:
            key = "path" if p.field == "path" else "content"
            if p.field not in ("path", "file", "content", ""):  # a frontmatter key of the record's text
                p.message = f"{p.field}: {p.message}"
            p.field, p.line = f"records[{p.line - 1}].{key}", None
            p.message = records_said(p.message).replace(" of `file`)", " of `content`)")
        p.path = name
    return problems
