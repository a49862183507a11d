"""Reading one config file: UTF-8 JSON holding an object, every key given once.

JSON itself lets a key appear twice and keeps the last value, so ``{"recall": {"topK": 5}, "recall": {...}}``
would drop a whole section without a word: such a file is refused, naming each key and its lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from remnic.errors import FieldProblem, ValidationError


def read_config_file(path: Path) -> dict[str, Any]:
    if path.exists() and not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file"
        raise ValidationError.single("config", f"is {kind}, not a config file: remove or rename it", path=str(path))
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValidationError.single("config", f"cannot read config file: {exc.strerror}", path=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (Notepad adds one) is not part of the JSON
    except UnicodeDecodeError as exc:
        utf16 = raw.startswith((b"\xff\xfe", b"\xfe\xff"))
        found = "UTF-16 text" if utf16 else f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        message = f"is {found}: save it as UTF-8"
        raise ValidationError.single("config", message, path=str(path)) from None
    twice: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items if not _ignored(k)]
        if len(set(keys)) != len(keys):
            twice.append(True)
        return dict(items)

    try:
        data = json.loads(text, object_pairs_hook=pairs) if text.strip() else {}
    except json.JSONDecodeError as exc:
        message = f"invalid JSON at column {exc.colno}: {exc.msg}"
        raise ValidationError.single("config", message, path=str(path), line=exc.lineno) from None
    except ValueError:  # an integer past Python's digit limit: json's own message says not where
        run = next((m for m in re.finditer(r"\d+", text) if len(m.group()) > 4300), None)
        line = text.count("\n", 0, run.start()) + 1 if run else None
        message = "invalid JSON: a number has more than 4,300 digits"
        raise ValidationError.single("config", message, path=str(path), line=line) from None
    if not isinstance(data, dict):
        raise ValidationError.single("config", "must be a JSON object", path=str(path))
    if twice:
        problems = [
            FieldProblem(
                key, f"given twice (first on line {first}): JSON keeps only the last; keep one", str(path), line
            )
            for key, line, first in duplicate_keys(text)
        ]
        message = problems[0].describe() if len(problems) == 1 else f"{path}: keys given twice (each listed below)"
        raise ValidationError(message, problems=problems)
    return data


def duplicate_keys(text: str) -> list[tuple[str, int, int]]:
    """(dotted key, its line, the line it was first given on) for each key given again in the same object of
    ``text``, which is valid JSON. ``a.b`` is key ``b`` of the object under ``a``; ``a[]`` an array's items."""
    found: list[tuple[str, int, int]] = []
    # One frame per open object (its keys → where first given) or array (None), with its dotted path.
    frames: list[tuple[dict[str, int] | None, str]] = []
    last_key = ""
    i, end = 0, len(text)
    while i < end:
        c = text[i]
        if c == '"':
            after = _string_end(text, i)
            value = json.loads(text[i:after])
            j = after
            while j < end and text[j] in " \t\r\n":
                j += 1
            keys = frames[-1][0] if frames else None
            if keys is not None and j < end and text[j] == ":":  # a key, not a string value
                last_key = f"{frames[-1][1]}.{value}" if frames[-1][1] else value
                if value in keys and not _ignored(value):
                    found.append((last_key, _line(text, i), _line(text, keys[value])))
                else:
                    keys[value] = i
            i = after
            continue
        if c in "{[":
            parent = frames[-1] if frames else None
            here = "" if parent is None else last_key if parent[0] is not None else f"{parent[1]}[]"
            frames.append(({} if c == "{" else None, here))
        elif c in "}]" and frames:
            frames.pop()
        i += 1
    return found


def _ignored(key: str) -> bool:
    """Keys the loader skips (``"_comment"``, ``"$schema"``): repeating one is how JSON files hold comments."""
    return key.startswith(("_", "$"))


def _string_end(text: str, start: int) -> int:
    """The offset just past the JSON string opening at ``start`` (valid JSON: it is closed)."""
    i = start + 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
