"""Writing keys into existing frontmatter text, line by line, so that what the user wrote stays.

``patch_yaml`` replaces a key's value where it stands (a one-line value, or a block
list or mapping spanning several lines, replaced by one line) and adds a key that
is not there (above a closing block of comment lines); ``drop_yaml`` takes a key out; comment lines, a
comment after the key, blank lines, unknown keys and the order of the keys are kept; a key may be
quoted (``"status": x``). ``patch_toml`` and ``drop_toml`` do the same for ``+++`` front matter (a
multi-line array or string is one value) and raise ``Refused``, naming the key and line, when they cannot.
``rewrite_yaml`` is the fallback when a value cannot be patched in place (it is
aliased elsewhere, or it cannot be written on one line): every key is written again
in the file's own order, YAML anchors and aliases are written out in full, and every
comment line is kept, above the key it preceded. The callers check the result by
parsing it again.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from .yamlio import HANDLER

_KEY_START = re.compile(r"^([^\s#\-'\"][^:]*?|'[^']*'|\"[^\"]*\")[ \t]*:(?:[ \t]|$)")
_SKIPPED_TOKENS = (yaml.StreamEndToken, yaml.BlockEndToken, yaml.DocumentEndToken)


def render_line(key: str, value: Any) -> str | None:
    """``key: value`` as one line, or None when the value needs several."""
    rendered = HANDLER.export({key: value})
    return None if "\n" in rendered else rendered


class Refused(ValueError):
    """A key that cannot be written line by line: why, and the 0-based frontmatter line it is on (if any)."""

    def __init__(self, key: str, reason: str, index: int | None = None) -> None:
        super().__init__(f"{key}: {reason}")
        self.key, self.reason, self.index = key, reason, index


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _key_pattern(key: str) -> re.Pattern[str]:
    """A top-level ``key:`` line, the key plain or quoted; group 1 is the key as written."""
    k = re.escape(key)
    return re.compile(rf"^({k}|'{k}'|\"{k}\")[ \t]*:(\s|$)")


def _text_lines(lines: list[str]) -> set[int]:
    """Indices of the lines that continue a scalar begun on an earlier line (a ``|``/``>`` block or a
    quoted string): text, even when it starts with '#'."""
    out: set[int] = set()
    try:
        for token in yaml.scan("".join(lines), Loader=yaml.SafeLoader):
            if isinstance(token, yaml.ScalarToken) and token.end_mark.line > token.start_mark.line:
                last = token.end_mark.line - (1 if token.end_mark.column == 0 else 0)
                out.update(range(token.start_mark.line + 1, last + 1))
    except yaml.YAMLError:
        pass
    return out


def _insert_at(lines: list[str], end: int) -> int:
    """Where a new key goes above ``end``: before a closing block of column-0 comment lines (and the
    blank lines among them) when a key stands above that block, else at ``end``."""
    i = end
    while i > 0 and (not lines[i - 1].strip() or lines[i - 1][:1] == "#"):
        i -= 1
    if i == 0 or not any(line[:1] == "#" for line in lines[i:end]):
        return end
    return i


def _after_value(line: str) -> tuple[str, str]:
    """(what follows the colon of a ``key: ...`` line up to a comment, the comment with the spaces
    before it); the comment is empty when the line does not scan as YAML on its own."""
    text = line.rstrip("\r\n")
    try:
        tokens = [t for t in yaml.scan(text, Loader=yaml.SafeLoader) if not isinstance(t, _SKIPPED_TOKENS)]
    except yaml.YAMLError:
        return text.partition(":")[2].strip(), ""
    value_at = next((t.end_mark.index for t in tokens if isinstance(t, yaml.ValueToken)), None)
    end = max((t.end_mark.index for t in tokens), default=len(text))
    rest = text[end:]
    comment = rest if rest.strip().startswith("#") else ""
    return (text[value_at:end].strip() if value_at is not None else ""), comment


def _extent(lines: list[str], i: int) -> int:
    """The index after the last line of the value that starts on line ``i`` (its key line)."""
    j = i + 1
    while j < len(lines) and (lines[j][:1] in (" ", "\t", "-") or not lines[j].strip() or _is_comment(lines[j])):
        j += 1
    while j > i + 1 and (not lines[j - 1].strip() or (_is_comment(lines[j - 1]) and lines[j - 1][:1] == "#")):
        j -= 1  # blank lines and column-0 comments at its end go with the key below
    return j


def patch_yaml(fm_lines: list[str], changes: Mapping[str, Any], nl: str) -> list[str] | None:
    """Replace or append ``key: value`` lines; None when a key cannot be written so (see the module)."""
    lines = list(fm_lines)
    for key, value in changes.items():
        rendered = render_line(key, value)
        if rendered is None:
            return None
        pattern = _key_pattern(key)
        hits = [(i, m) for i, line in enumerate(lines) if (m := pattern.match(line))]
        if len(hits) > 1:
            return None
        if not hits:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += nl
            lines.insert(_insert_at(lines, len(lines)), rendered + nl)
            continue
        i, match = hits[0]
        plain = rendered.split(":", 1)[0]
        if match.group(1) != key and plain == key:  # the key as the user wrote it ("status": x)
            rendered = match.group(1) + rendered[len(plain) :]
        end = _extent(lines, i)
        inline, comment = _after_value(lines[i])
        text = _text_lines(lines) if end > i + 1 else set()  # a one-line value has no text lines to keep
        kept: list[str] = []
        for j in range(i + 1, end):
            if j in text:
                continue  # a block scalar's or a quoted string's lines are its text, even those starting with '#'
            if _is_comment(lines[j]) or not lines[j].strip():
                kept.append(lines[j])
            elif after := _after_value(lines[j])[1]:  # `  - ops  # why`: the comment stays
                indent = lines[j][: len(lines[j]) - len(lines[j].lstrip())]
                kept.append(indent + after.strip() + nl)
        lines[i:end] = [rendered + comment + nl, *kept]
    return lines


def drop_yaml(fm_lines: list[str], keys: list[str]) -> list[str] | None:
    """``fm_lines`` without the lines of ``keys`` (comment lines among them kept); None when a key is
    not one top-level entry."""
    lines = list(fm_lines)
    for key in keys:
        pattern = _key_pattern(key)
        hits = [i for i, line in enumerate(lines) if pattern.match(line)]
        if len(hits) != 1:
            return None
        i = hits[0]
        end = _extent(lines, i)
        text = _text_lines(lines) if end > i + 1 else set()
        lines[i:end] = [lines[j] for j in range(i + 1, end) if j not in text and _is_comment(lines[j])]
    return lines


def _comment_owners(fm_lines: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Comment lines by the top-level key they precede (or sit inside), and those after the last key."""
    owners: dict[str, list[str]] = {}
    waiting: list[str] = []
    last: str | None = None
    text = _text_lines(fm_lines)
    for index, line in enumerate(fm_lines):
        if index in text:
            continue  # a block scalar's line is value text, even one starting with '#'
        match = _KEY_START.match(line)
        if match and line[:1] not in (" ", "\t"):
            last = match.group(1).strip("'\"")
            owners.setdefault(last, []).extend(waiting)
            waiting = []
        elif _is_comment(line):
            if line[:1] == "#" or last is None:
                waiting.append(line.strip())
            else:
                owners.setdefault(last, []).append(line.strip())  # inside its value: kept with it
    return owners, waiting


def rewrite_yaml(fm_lines: list[str], meta: Mapping[str, Any], nl: str) -> str:
    """Every key of ``meta`` written again in its order, each comment line kept next to its key."""
    owners, trailing = _comment_owners(fm_lines)
    out: list[str] = []
    for key, value in meta.items():
        out += owners.pop(str(key), [])
        out.append(HANDLER.export({key: value}))
    for rest in owners.values():  # a key that is gone (or a merge key): its comments stay
        out += rest
    out += trailing
    return "".join(line + "\n" for line in out).replace("\n", nl)


def _toml_scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        items = [_toml_scalar(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    return None


@dataclass(frozen=True)
class _Entry:
    key: str
    start: int  # its first line
    end: int  # the line after its value
    dotted: bool  # `a.b = 1`: one part of the table `a`


def _toml_loads(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except ValueError:  # TOMLDecodeError, or an integer past Python's digit limit
        return None


_TOML_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_TOML_KEY = re.compile(rf"\s*({_TOML_PART}(?:\s*\.\s*{_TOML_PART})*)\s*=")


def _toml_entries(lines: list[str]) -> tuple[list[_Entry], int]:
    """The top-level ``key = value`` entries (a value may span lines: an array, a triple-quoted string)
    and the index of the first ``[table]`` line (where top-level keys end)."""
    entries: list[_Entry] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if stripped.startswith("["):
            break
        match = _TOML_KEY.match(lines[i])
        named = _toml_loads(match.group(1) + " = 0") if match else None
        if named is None or len(named) != 1:
            raise Refused("frontmatter", "this line is not a TOML `key = value` remnic can read", i)
        key = next(iter(named))
        end = next((j for j in range(i + 1, len(lines) + 1) if _toml_loads("".join(lines[i:j])) is not None), None)
        if end is None:
            raise Refused(key, "its value does not end where remnic can find it", i)
        entries.append(_Entry(key, i, end, named[key] != 0))
        i = end
    return entries, i


def _toml_comment(lines: list[str], entry: _Entry) -> str:
    """The comment after an entry's value on its last line, with the spaces before it ('' if none)."""
    head = "".join(lines[entry.start : entry.end - 1])
    last = lines[entry.end - 1].rstrip("\r\n")
    for match in re.finditer("#", last):
        if _toml_loads(head + last[: match.start()]) is not None:
            return last[len(last[: match.start()].rstrip()) :]
    return ""


def _toml_inner_comments(lines: list[str], entry: _Entry) -> list[str]:
    """Comment lines inside a multi-line array (inside a multi-line string they are its text)."""
    if not lines[entry.start].partition("=")[2].lstrip().startswith("["):
        return []
    return [line for line in lines[entry.start + 1 : entry.end] if _is_comment(line)]


def _toml_one(lines: list[str], key: str) -> tuple[_Entry | None, int]:
    """The one top-level entry of ``key`` (None: not there) and the first table's line; Refused when the
    key is written as dotted keys or as a table."""
    entries, first_table = _toml_entries(lines)
    hits = [e for e in entries if e.key == key]
    if any(e.dotted for e in hits):
        where = ("lines " if len(hits) > 1 else "line ") + ", ".join(str(e.start + 2) for e in hits)
        raise Refused(key, f"is written as dotted keys (`{key}.… =`, {where}), not one line", hits[0].start)
    name = re.escape(key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key))
    table = re.compile(rf"^\s*\[\[?\s*{name}\s*[\].]")
    header = next((i for i in range(first_table, len(lines)) if table.match(lines[i])), None)
    if header is not None:
        raise Refused(key, "is a TOML [table], not one line", header)
    return (hits[0] if hits else None), first_table


def drop_toml(fm_lines: list[str], keys: list[str]) -> list[str]:
    """``fm_lines`` without the entries of ``keys`` (comment lines above and inside them kept)."""
    lines = list(fm_lines)
    for key in keys:
        entry, _ = _toml_one(lines, key)
        if entry is None:
            raise Refused(key, "is not a top-level `key = value` line")
        lines[entry.start : entry.end] = _toml_inner_comments(lines, entry)
    return lines


def patch_toml(fm_lines: list[str], changes: Mapping[str, Any], nl: str) -> list[str]:
    """Replace ``key = value`` entries where they stand (a multi-line array whole, a comment after it
    kept) or add them above the first ``[table]`` (where top-level keys live)."""
    lines = list(fm_lines)
    for key, value in changes.items():
        rendered = _toml_scalar(value)
        if rendered is None:
            raise Refused(key, f"its new value ({type(value).__name__}) cannot be written as one TOML line")
        name = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
        entry, first_table = _toml_one(lines, key)
        if entry is not None:
            written = _TOML_KEY.match(lines[entry.start])
            spelled = written.group(1) if written else name
            line = f"{spelled} = {rendered}{_toml_comment(lines, entry)}{nl}"
            lines[entry.start : entry.end] = [line, *_toml_inner_comments(lines, entry)]
        else:
            at = _insert_at(lines, first_table)
            if at and not lines[at - 1].endswith("\n"):
                lines[at - 1] += nl
            lines.insert(at, f"{name} = {rendered}{nl}")
    return lines
