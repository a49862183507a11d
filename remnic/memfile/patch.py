"""Writing keys into existing frontmatter text, line by line, so that what the user wrote stays.

``patch_yaml`` replaces a key's value where it stands (a one-line value, or a block
list or mapping spanning several lines, replaced by one line) and appends a key that
is not there; ``drop_yaml`` takes a key out; comment lines, a comment after the key, blank lines, unknown keys and
the order of the keys are kept. ``patch_toml`` does the same for ``+++`` front matter.
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
from collections.abc import Mapping
from typing import Any

import yaml

from .yamlio import HANDLER

_KEY_START = re.compile(r"^([^\s#\-'\"][^:]*?|'[^']*'|\"[^\"]*\")[ \t]*:(?:[ \t]|$)")
_SKIPPED_TOKENS = (yaml.StreamEndToken, yaml.BlockEndToken, yaml.DocumentEndToken)


def render_line(key: str, value: Any) -> str | None:
    """``key: value`` as one line, or None when the value needs several."""
    rendered = HANDLER.export({key: value})
    return None if "\n" in rendered else rendered


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


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
        pattern = re.compile(rf"^{re.escape(key)}[ \t]*:(\s|$)")
        hits = [i for i, line in enumerate(lines) if pattern.match(line)]
        if len(hits) > 1:
            return None
        if not hits:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += nl
            lines.append(rendered + nl)
            continue
        i = hits[0]
        end = _extent(lines, i)
        inline, comment = _after_value(lines[i])
        if end > i + 1 and inline[:1] in ("|", ">"):
            kept: list[str] = []  # a block scalar's lines are its text, even those starting with '#'
        else:
            kept = [line for line in lines[i + 1 : end] if _is_comment(line) or not line.strip()]
        lines[i:end] = [rendered + comment + nl, *kept]
    return lines


def drop_yaml(fm_lines: list[str], keys: list[str]) -> list[str] | None:
    """``fm_lines`` without the lines of ``keys`` (comment lines among them kept); None when a key is
    not one top-level entry."""
    lines = list(fm_lines)
    for key in keys:
        pattern = re.compile(rf"^{re.escape(key)}[ \t]*:(\s|$)")
        hits = [i for i, line in enumerate(lines) if pattern.match(line)]
        if len(hits) != 1:
            return None
        i = hits[0]
        end = _extent(lines, i)
        block_scalar = _after_value(lines[i])[0][:1] in ("|", ">")
        lines[i:end] = [] if block_scalar else [line for line in lines[i + 1 : end] if _is_comment(line)]
    return lines


def _comment_owners(fm_lines: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Comment lines by the top-level key they precede (or sit inside), and those after the last key."""
    owners: dict[str, list[str]] = {}
    waiting: list[str] = []
    last: str | None = None
    for line in fm_lines:
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


def patch_toml(fm_lines: list[str], changes: Mapping[str, Any], nl: str) -> list[str] | None:
    """Replace or add ``key = value`` lines above the first ``[table]`` (where top-level keys live)."""
    lines = list(fm_lines)
    first_table = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    for key, value in changes.items():
        rendered = _toml_scalar(value)
        if rendered is None:
            return None
        name = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
        pattern = re.compile(rf"^\s*{re.escape(name)}\s*=")
        hits = [i for i in range(first_table) if pattern.match(lines[i])]
        if len(hits) > 1:
            return None
        if hits:
            lines[hits[0]] = f"{name} = {rendered}{nl}"
        else:
            if first_table and not lines[first_table - 1].endswith("\n"):
                lines[first_table - 1] += nl
            lines.insert(first_table, f"{name} = {rendered}{nl}")
            first_table += 1
    return lines
