"""What `remnic import` reads: JSONL lines (one object a line, each bad line named), or the original
Remnic's export bundle (its directory or its bundle.json), whose records become restoring lines."""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, UsageError, ValidationError
from remnic.service.original_bundle import BUNDLE_FILE, FORMAT, BundleLines, bundle_lines, in_records, is_bundle

from ._common import not_utf8, plural, safe

if TYPE_CHECKING:
    from remnic.service.memory import Memory


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


@dataclass
class ImportInput:
    """What an import reads: its lines (or an original Remnic bundle's records as lines) and their problems."""

    name: str
    """The file the problems name (a bundle directory's bundle.json)."""
    items: list[Any] = field(default_factory=list)
    line_numbers: list[int] = field(default_factory=list)
    problems: list[FieldProblem] = field(default_factory=list)
    bundle: BundleLines | None = None
    records: int = 0
    pretty_line: int = 0
    """The first line past line 1 that opens a JSON object or array it does not close (0: none)."""

    def refused(self, problems: list[FieldProblem]) -> ValidationError:
        if self.bundle is None:
            hint = ""
            if self.pretty_line and any(p.line and p.line >= self.pretty_line for p in problems):
                # Later lines pretty-printed: one line saying how to fix the file, not only the line errors.
                hint = (
                    f"; from line {self.pretty_line} on, JSON is spread over several lines (pretty-printed), "
                    f"not one memory object a line: write each on one line with `jq -c . {_jq_files(self.name)}` "
                    "and import that"
                )
            return _in_file(self.name, problems, hint)
        problems = sorted(in_records(problems, self.name), key=_record_number)
        return ValidationError(f"{len(problems)} problem(s) in {self.name}; nothing was imported", problems=problems)


def read_input(memory: Memory, source: str) -> ImportInput:
    """The import's lines: JSONL (one object a line), or the original Remnic's export bundle (its
    directory, or its bundle.json, pretty-printed or not), whose memory records become restoring lines."""
    if source != "-" and Path(source).expanduser().is_dir():
        if not (Path(source).expanduser() / BUNDLE_FILE).is_file():
            raise UsageError(
                f"{source} is a directory: import reads a JSONL file (one JSON object a line, as `remnic export` "
                f"writes it), or the original Remnic's export directory (which holds {BUNDLE_FILE})"
            )
        source = str(Path(source) / BUNDLE_FILE)
    read = ImportInput(source)
    limit = memory.settings.store.max_content_chars
    lines: Iterator[tuple[int, bytes]] = _jsonl_lines(source)
    while (numbered := next(lines, None)) is not None:  # `lines` is replaced when line 1 reads on
        number, raw = numbered
        if len(raw) > _line_bound(limit):  # refused before it is decoded and parsed (gigabytes for a huge one)
            read.problems.append(FieldProblem("", _too_long(len(raw), limit), source, number))
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # every bad line is reported, with the offset in its line
            read.problems.append(FieldProblem("", not_utf8(exc, "the line"), path=source, line=number))
            continue
        if number == 1 and line.startswith("\ufeff"):  # a BOM, as Windows editors save UTF-8
            line = line[1:]
        if number == 1 and _opens_whole_value(line):  # one value over many lines: a bundle, or not JSONL
            rest = b"".join(r for _n, r in lines)
            whole = _whole_value(memory, read, line.encode("utf-8") + rest)
            if whole is not None:
                return whole
            # Not one JSON value either: each line is named, as in any JSONL file.
            lines = enumerate(io.BytesIO(rest), 2)  # split as the file was: at each \n
        if line.startswith("\ufeff"):
            why = "starts with a byte order mark (U+FEFF), which only the file's first line may have: remove it"
            read.problems.append(FieldProblem("", why + " (files joined with `cat` keep each one's)", source, number))
            continue
        if not line.strip():
            continue
        try:
            # Without its line end, so a line cut short is said at its last column, not a "line 2".
            read.items.append(json.loads(line.rstrip("\r\n"), object_pairs_hook=_unique_keys))
            read.line_numbers.append(number)
        except json.JSONDecodeError as exc:
            read.problems.append(FieldProblem("", f"invalid JSON: {exc.msg} (column {exc.colno})", source, number))
            if not read.pretty_line and number > 1 and _opens_whole_value(line):
                read.pretty_line = number
        except _DuplicateKey as exc:  # JSON would keep the last silently: which one was meant is unknown
            why = "the key appears twice in this line's object; keep one"
            read.problems.append(FieldProblem(exc.key, why, path=source, line=number))
        except ValueError:  # an integer past Python's digit limit: one bad line, not a traceback
            read.problems.append(FieldProblem("", _HUGE_NUMBER, source, number))
    if len(read.items) == 1 and not read.problems and is_bundle(read.items[0]):  # a bundle on one line
        return _as_bundle(memory, read, read.items[0])
    return read


def _opens_whole_value(line: str) -> bool:
    """Whether line 1 opens a JSON object or array it does not close (a pretty-printed file: ``{``,
    ``[``, ``[{"content": …},``); a line ending in its closing bracket is a JSON line, parsed as one."""
    text = line.strip()
    return text.startswith(("{", "[")) and not text.endswith(("}", "]"))


_HUGE_NUMBER = f"invalid JSON: a number of more than {sys.get_int_max_str_digits()} digits"


def _whole_value(memory: Memory, read: ImportInput, raw: bytes) -> ImportInput | None:
    """The file as one JSON value spread over lines: a bundle, or one error saying how to make JSON Lines
    of it; None when it is not one JSON value (then each line is checked as JSONL)."""
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except UnicodeDecodeError as exc:
        read.problems.append(FieldProblem("", not_utf8(exc, "the file"), read.name))
        return read
    except (json.JSONDecodeError, RecursionError):
        return None
    except _DuplicateKey as exc:
        read.problems.append(FieldProblem(exc.key, "the key appears twice in an object; keep one", read.name))
        return read
    except ValueError:  # a number past Python's digit limit: read line by line, where its line is named
        return None
    if is_bundle(data):
        return _as_bundle(memory, read, data)
    files = _jq_files(read.name)
    out = files.rsplit(" > ", 1)[1]
    if isinstance(data, list):
        raise UsageError(
            f"{read.name} is one JSON array spread over several lines, not JSON Lines (one memory object a line): "
            f"convert it with `jq -c '.[]' {files}` and import {out}"
        )
    raise UsageError(
        f"{read.name} is one JSON {'object' if isinstance(data, dict) else 'value'} spread over several lines, "
        f"not JSON Lines (one memory object a line) nor the original Remnic's export bundle: write it on one line "
        f"with `jq -c . {files}` and import {out}"
    )


def _jq_files(name: str) -> str:
    """``IN > OUT`` for the hint's jq command: OUT is never IN (``> x.jsonl`` would empty ``x.jsonl``
    before jq reads it)."""
    if name == "-":
        return "- > memories.jsonl"
    out = Path(name).with_suffix(".jsonl")
    if out == Path(name):
        out = out.with_name(out.stem + ".lines.jsonl")
    return f"{shlex.quote(name)} > {shlex.quote(str(out))}"


def _line_bound(limit: int) -> int:
    """The most bytes a line with a memory of at most ``limit`` characters can take: its text twice
    (``content`` and ``file``), each character at worst a 12-byte JSON escape, plus room for its keys."""
    return 24 * limit + (4 << 20)


def _too_long(size: int, limit: int) -> str:
    return (
        f"the line is {size} bytes, more than a line holding a memory of at most {limit} characters "
        "(store.maxContentChars) can be: split its text into smaller memories, or raise store.maxContentChars"
    )


def _as_bundle(memory: Memory, read: ImportInput, data: dict[str, Any]) -> ImportInput:
    lines = bundle_lines(memory, data)
    records = data.get("records")
    return ImportInput(
        read.name, lines.items, lines.numbers, lines.problems, lines, len(records) if isinstance(records, list) else 0
    )


def bundle_data(read: ImportInput) -> dict[str, Any]:
    assert read.bundle is not None
    return {
        "format": FORMAT,
        "schemaVersion": read.bundle.schema_version,
        "records": read.records,
        "leftOut": read.bundle.left_out,
    }


def bundle_text(read: ImportInput) -> str:
    """What a bundle held besides its memories: named, so no record is passed over unsaid."""
    if read.bundle is None:
        return ""
    left = read.bundle.left_out
    text = f"the original Remnic's export: {plural(read.records, 'record')}, {len(read.items)} at memory paths"
    if left:
        shown = ", ".join(safe(p) for p in left[:5]) + (f", … {len(left) - 5} more" if len(left) > 5 else "")
        text += (
            f"; left out {plural(len(left), 'file')} that {'is' if len(left) == 1 else 'are'} no memory here ({shown})"
        )
    return text + "\n"


def _record_number(problem: FieldProblem) -> int:
    """The record a bundle's problem names (``records[12].path`` → 12), so they are listed in order."""
    found = re.match(r"records\[(\d+)\]", problem.field)
    return int(found.group(1)) if found else -1


def _in_file(path: str, problems: list[FieldProblem], hint: str = "") -> ValidationError:
    """The import's problems, each named by the file and line, in file order (JSON and line checks
    are two passes)."""
    problems = sorted(problems, key=lambda p: p.line or 0)
    for p in problems:
        p.path = path
    return ValidationError(f"{len(problems)} problem(s) in {path}; nothing was imported{hint}", problems=problems)
