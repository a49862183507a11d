"""Number, date, string and JSON formatting that prints what JavaScript prints (pure, standard library).

The Recall X-ray layouts come from a TypeScript original, and its consumers read
them byte for byte. Python's own formatting differs in small ways that show:

- ``f"{0.125:.2f}"`` is ``0.12`` (ties to even); JavaScript's ``toFixed`` gives ``0.13``
  (an exact binary tie rounds away from zero);
- ``str(1.0)`` is ``1.0`` and ``repr(1e20)`` is ``1e+20``; JavaScript prints ``1`` and
  ``100000000000000000000`` (exponents only from 1e21 and below 1e-6);
- ``datetime`` stops at year 9999; ``Date.prototype.toISOString`` goes on to ``+275760``;
- a string's length in JavaScript counts UTF-16 code units, and its ``\\s`` is its own set.

Everything here is a small function of its input, so the renderer stays deterministic.
"""

from __future__ import annotations

import decimal
import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "collapse_whitespace",
    "is_finite_number",
    "is_number",
    "iso_time",
    "js_dumps",
    "js_number",
    "js_string",
    "js_typeof",
    "lone_surrogates_replaced",
    "to_fixed",
    "truncate_utf16",
]

# JavaScript's WhiteSpace and LineTerminator code points: what `\s` and String.prototype.trim see.
JS_WHITESPACE = "\t\n\v\f\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_WS_RUN = re.compile(f"[{JS_WHITESPACE}]+")
_WS_EDGE = re.compile(f"^[{JS_WHITESPACE}]+|[{JS_WHITESPACE}]+$")
_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_SAFE_INTEGER = 2**53
MAX_TIME_MS = 8.64e15
"""The largest |epoch ms| a JavaScript Date holds; beyond it the Date is invalid."""


def is_number(value: Any) -> bool:
    """An int or a float, not a bool (JavaScript's ``typeof value === "number"``)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_float(value: int | float) -> float:
    if isinstance(value, float):
        return value
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_finite_number(value: Any) -> bool:
    """A number that is neither NaN nor ±Infinity once JavaScript holds it (huge ints overflow)."""
    return is_number(value) and math.isfinite(_as_float(value))


def js_number(value: int | float) -> str:
    """``String(value)`` for a JavaScript number: ``1``, ``0.5``, ``1e+21``, ``1.5e-7``, ``NaN``."""
    if isinstance(value, int) and abs(value) <= MAX_SAFE_INTEGER:
        return str(value)
    x = _as_float(value)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exponent = repr(abs(x)).partition("e")  # repr: the shortest digits that round-trip
    whole, _, fraction = mantissa.partition(".")
    raw = whole + fraction
    digits = raw.lstrip("0")
    point = len(whole) - (len(raw) - len(digits)) + (int(exponent) if exponent else 0)
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    e = point - 1
    tail = ("e+" if e >= 0 else "e-") + str(abs(e))
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + tail


def js_string(value: Any) -> str:
    """``String(value)`` / template-literal interpolation of a JSON-shaped value."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return js_number(value)
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]"


def js_typeof(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if is_number(value):
        return "number"
    return "undefined" if value is None else "object"


_FIXED = decimal.Context(prec=80)


def to_fixed(value: int | float, places: int) -> str:
    """``Number.prototype.toFixed``: exact binary value, ties away from zero, ``-`` kept on
    negatives that round to zero (``-0.00001`` → ``-0.0000``), plain ``String`` from 1e21."""
    x = _as_float(value)
    if math.isnan(x):
        return "NaN"
    if abs(x) >= 1e21:
        return js_number(x)
    negative = x < 0
    exact = decimal.Decimal(abs(x))
    rounded = exact.quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_UP, context=_FIXED)
    return ("-" if negative else "") + f"{rounded:.{places}f}"


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month, day) of a day count since 1970-01-01 (any year)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def iso_time(epoch_ms: Any) -> str | None:
    """``new Date(ms).toISOString()``, or None where it would throw (not a number, not finite,
    beyond the Date range). Fractional milliseconds are truncated; years past 9999 print
    as ``+010000``."""
    if not is_number(epoch_ms):
        return None
    x = _as_float(epoch_ms)
    if not math.isfinite(x) or abs(x) > MAX_TIME_MS:
        return None
    ms = int(epoch_ms) if isinstance(epoch_ms, int) else math.trunc(x)
    days, rest = divmod(ms, 86_400_000)
    year, month, day = _civil_from_days(days)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    y = f"{year:04d}" if 0 <= year <= 9999 else ("+" if year > 0 else "-") + f"{abs(year):06d}"
    return f"{y}-{month:02d}-{day:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


def collapse_whitespace(text: str) -> str:
    """``text.replace(/\\s+/g, " ").trim()`` with JavaScript's whitespace set."""
    return _WS_EDGE.sub("", _WS_RUN.sub(" ", text))


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def truncate_utf16(text: str, max_units: int, *, word_floor: float = 0.5, marker: str = "\u2026") -> str:
    """Cut ``text`` to ``max_units`` UTF-16 code units (JavaScript's ``length``), back to the
    last space when that space lies past ``word_floor`` of the way, and append ``marker``."""
    if _utf16_units(text) <= max_units:
        return text
    cut = text.encode("utf-16-le", "surrogatepass")[: 2 * max_units].decode("utf-16-le", "surrogatepass")
    space = cut.rfind(" ")
    if space >= 0 and _utf16_units(cut[:space]) > math.floor(max_units * word_floor):
        cut = cut[:space]
    return cut + marker


def lone_surrogates_replaced(text: str) -> str:
    """What Node writes for a string holding an unpaired surrogate: U+FFFD in its place."""
    return _SURROGATE.sub("\ufffd", text)


def _json_string(text: str) -> str:
    # JSON.stringify escapes like Python's encoder, and also writes lone surrogates as \uXXXX.
    out = json.encoder.encode_basestring(text)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def _dump(value: Any, indent: str, step: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_json_string(value))
    elif value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif is_number(value):
        number = value if isinstance(value, int) and abs(value) <= MAX_SAFE_INTEGER else _as_float(value)
        out.append(js_number(number) if not isinstance(number, float) or math.isfinite(number) else "null")
    elif isinstance(value, Mapping):
        if not value:
            out.append("{}")
            return
        inner = indent + step
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," if i else "") + "\n" + inner + _json_string(js_string(key)) + ": ")
            _dump(item, inner, step, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = indent + step
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + "\n" + inner)
            _dump(item, inner, step, out)
        out.append("\n" + indent + "]")
    else:
        raise TypeError(f"cannot serialise {type(value).__name__} as JSON")


def js_dumps(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)``: key order kept, UTF-8 as is, numbers as
    JavaScript prints them, NaN and ±Infinity as ``null``, no trailing newline."""
    out: list[str] = []
    _dump(value, "", " " * indent, out)
    return "".join(out)
