"""Characters beyond the BMP (emoji) in YAML frontmatter.

PyYAML escapes them inside double quotes even with ``allow_unicode`` ("\\U0001F680"), which people
and the original's line reader read literally. The dumper is given private-use stand-ins instead
(printable, so emitted as themselves), and the text gets the real characters back.
"""

from __future__ import annotations

from typing import Any


def astral_chars(value: Any) -> set[str]:
    if isinstance(value, str):
        return {c for c in value if ord(c) > 0xFFFF}
    if isinstance(value, dict):
        return set().union(*(astral_chars(k) | astral_chars(v) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return set().union(*(astral_chars(v) for v in value))
    return set()


def stand_ins(astral: set[str], value: Any) -> dict[str, str]:
    """A private-use character for each of ``astral`` that ``value`` does not hold."""
    used = _all_chars(value)
    free = (chr(c) for c in range(0xF8FF, 0xDFFF, -1) if chr(c) not in used)
    return {a: next(free) for a in sorted(astral)}


def _all_chars(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(value)
    if isinstance(value, dict):
        return set().union(*(_all_chars(k) | _all_chars(v) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return set().union(*(_all_chars(v) for v in value))
    return set()


def swap(value: Any, table: dict[int, str], quoted: type[str]) -> Any:
    if isinstance(value, quoted):  # keeps its type: the dumper quotes it
        return quoted(str(value).translate(table))
    if isinstance(value, str):
        return value.translate(table)
    if isinstance(value, dict):
        return {swap(k, table, quoted): swap(v, table, quoted) for k, v in value.items()}
    if isinstance(value, list):
        return [swap(v, table, quoted) for v in value]
    if isinstance(value, tuple):
        return tuple(swap(v, table, quoted) for v in value)
    return value
