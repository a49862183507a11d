"""Frontmatter the original Remnic wrote, read its way.

The original writes its frontmatter line by line, not as YAML, and reads it back the
same way: every line split at its first colon, the value kept raw. Free text it
writes unquoted (``intentGoal: fix issue #570 before launch``, ``intentActionType:
yes``, ``sourceTurnId: 0123``) is therefore either invalid YAML (``ship: the
release``) or valid YAML with another value (a comment cut off, a YAML 1.1 bool,
octal, sexagesimal or null). A file the original wrote (its ``id`` has the
original's shape, or it is one of its entity pages) is read as the original reads
it: when YAML reads a one-line plain value other than as its text, the text is the
value. The keys the original itself reads as numbers keep YAML's number. The file
is never rewritten for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from .entity import is_entity_file
from .yamlio import Loader

_ORIGINAL_ID = r"[a-z_]+-\d{10,}-[0-9a-z]{4}"
"""The original's ids: ``<category>-<ms>-<4 base36>`` (``fact-1778750467412-q7kd``)."""
_ORIGINAL_ID_LINE = re.compile(rf"^id:[ \t]*{_ORIGINAL_ID}[ \t]*\r?$", re.MULTILINE)
DEFAULT_CONFIDENCE = 0.8
"""The confidence the original reads when a file has none (``parseFloat(fm.confidence ?? "0.8")``)."""
_KEY_LINE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(.*)$")
_TOP_KEY = re.compile(r"^['\"]?([A-Za-z_][\w.-]*)['\"]?[ \t]*:", re.MULTILINE)

NUMBER_KEYS = frozenset(
    {
        "confidence",
        "importanceScore",
        "accessCount",
        "decayScore",
        "heatScore",
        "mw_success",
        "mw_fail",
        "chunkIndex",
        "chunkTotal",
        "reinforcement_count",
    }
)
"""Keys the original parses as numbers (``parseFloat``/``parseInt``): YAML's number is kept."""

_NOT_PLAIN = ('"', "'", "[", "{", "|", ">")
"""How a value that is not a plain scalar opens: quoted, flow, or block text (YAML reads it as written)."""
_DECIMAL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
"""A float spelled as JavaScript's ``parseFloat`` reads it (``12:30.5``, ``1_0.5`` and ``.inf`` are not)."""


def has_original_id(meta: Mapping[str, Any]) -> bool:
    """Whether the frontmatter's ``id`` has the original's shape."""
    value = meta.get("id")
    return isinstance(value, str) and re.fullmatch(_ORIGINAL_ID, value.strip()) is not None


def written_by_original(fm_text: str, path: str) -> bool:
    """Whether the frontmatter is the original's: an ``id`` of its shape, or an entity page of its format
    (in ``entities/`` with no ``id`` line, or with ``synthesis_*`` keys: remnic's own entity memories
    carry an id and are YAML)."""
    if _ORIGINAL_ID_LINE.search(fm_text):
        return True
    return is_entity_file(path, dict.fromkeys(m.group(1) for m in _TOP_KEY.finditer(fm_text)))


def as_original(key: str, raw: str, value: Any) -> Any:
    """``value`` (YAML's reading of the one-line ``raw``) as the original reads it: ``raw`` where YAML
    reads a plain value otherwise (a ``#`` comment cut, ``yes`` → true, ``0123`` → 83, ``12:30`` → 750,
    ``null`` → null); YAML's value where it reads the text as written, or for a number key."""
    if not raw or raw.startswith(_NOT_PLAIN) or key in NUMBER_KEYS:
        return value
    if isinstance(value, str):
        return value if value == raw else raw
    if isinstance(value, bool):
        return value if raw in ("true", "false") else raw
    if isinstance(value, int):
        return value if str(value) == raw else raw
    if isinstance(value, float):
        return value if _DECIMAL.fullmatch(raw) else raw
    return raw  # null, and anything else a single plain line became (an anchor, a tag)


def read_like_original(fm_text: str, loaded: dict[Any, Any]) -> dict[Any, Any]:
    """``loaded`` (the frontmatter as YAML read it) with each one-line plain value of a top-level key
    read as the original reads it (see :func:`as_original`); other values as YAML read them."""
    try:
        root = yaml.compose(fm_text, Loader=Loader)
    except yaml.YAMLError:
        return loaded
    if not isinstance(root, yaml.MappingNode):
        return loaded
    lines = fm_text.split("\n")
    out = dict(loaded)
    for key, value in root.value:
        if not (isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode)):
            continue
        if key.style or value.style or key.value not in out:
            continue  # a quoted key or value is read as written (a plain one's style is None, or '' from libyaml)
        row = key.start_mark.line
        if not (row == value.start_mark.line == value.end_mark.line and row < len(lines)):
            continue  # text continued on the next lines: YAML's reading
        line = lines[row].rstrip("\r")
        if line[key.start_mark.column : key.end_mark.column] != key.value:
            continue
        colon = line.find(":", key.end_mark.column)
        out[key.value] = as_original(key.value, line[colon + 1 :].strip(), out[key.value])
    return out


def _scalar(key: str, raw: str) -> Any:
    try:
        value = yaml.load(raw, Loader=Loader) if raw else None
    except yaml.YAMLError:
        return raw
    if isinstance(value, dict) and not raw.startswith("{"):
        return raw
    return as_original(key, raw, value)


def load_original_lines(fm_text: str) -> dict[str, Any] | None:
    """Frontmatter read as the original Remnic reads it: one ``key: value`` per line, split at the first
    colon (indented lines below a key, such as ``links`` objects, read as YAML); None if it is not that."""
    out: dict[str, Any] = {}
    lines = fm_text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        m = _KEY_LINE.match(lines[i])
        if m is None:
            return None
        j = i + 1
        while j < len(lines) and lines[j][:1] in (" ", "\t"):
            j += 1
        raw = m.group(2).strip()
        if j > i + 1:
            try:
                out[m.group(1)] = yaml.load("\n".join(lines[i:j]), Loader=Loader)[m.group(1)]
            except (yaml.YAMLError, TypeError, KeyError):
                out[m.group(1)] = "\n".join(line.strip() for line in lines[i:j])[len(m.group(1)) + 1 :].strip()
        else:
            out[m.group(1)] = _scalar(m.group(1), raw)
        i = j
    return out
