"""Tolerant readers for snapshot dicts: each takes any JSON-shaped value and never raises, so a
snapshot from another tool or an older version renders instead of failing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .jsfmt import is_number


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _num(value: Any) -> int | float | None:
    """A number (int or float, not bool), else None. NaN and ±inf are kept."""
    return value if is_number(value) else None


def _num_or(value: Any, default: int | float) -> int | float:
    n = _num(value)
    return default if n is None else n


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _str_or(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def _list(value: Any) -> list[Any] | None:
    return list(value) if isinstance(value, (list, tuple)) else None


def _str_list(value: Any) -> list[str]:
    return [x for x in _list(value) or () if isinstance(x, str)]


def _opt_str_list(value: Any) -> list[str] | None:
    items = _list(value)
    return None if items is None else [x for x in items if isinstance(x, str)]


def _opt_num_list(value: Any) -> list[float] | None:
    items = _list(value)
    return None if items is None else [x for x in items if is_number(x)]


def _plain(value: Any) -> Any:
    """A deep copy of a JSON-shaped value (mappings with string keys, lists, scalars)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        d[key] = value
