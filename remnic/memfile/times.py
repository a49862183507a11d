"""Times in memory files: remnic's own spelling, the common ones people write, and keeping theirs.

remnic writes ``2026-04-20T17:30:00.000Z`` (what JavaScript's ``toISOString`` gives,
so the original Remnic reads it). People write ``2024-01-05``, ``Jan 5, 2024``,
``05.01.2024`` or epoch numbers; :func:`parse_time` reads those for ranking, and
:func:`format_like` writes a new time in the shape a file already uses, so a
stamp never changes the spelling of a user's ``updated``. A time without a zone
is read as UTC. Pure functions.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
"""remnic's strict rule for the timestamps it writes (and accepts on writes)."""

_MONTHS: tuple[str, ...] = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
)
_MONTHS += ("november", "december")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def now_iso() -> str:
    """UTC now as ``2026-04-20T17:30:00.000Z`` (the spelling JavaScript's toISOString uses)."""
    return format_time(time.time())


def format_time(epoch_s: float) -> str:
    dt = datetime.fromtimestamp(epoch_s, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


# --- shapes: one regex to recognise a spelling, one function to write a time the same way ---


@dataclass(frozen=True)
class _Shape:
    pattern: re.Pattern[str]
    parse: Callable[[re.Match[str]], datetime | None]
    render: Callable[[re.Match[str], datetime], str]


def _month(name: str) -> int | None:
    name = name.lower().rstrip(".")
    for i, full in enumerate(_MONTHS, 1):
        if len(name) >= 3 and full.startswith(name if name != "sept" else "sep"):
            return i
    return None


def _safe(make: Callable[[], datetime]) -> datetime | None:
    try:
        return make()
    except (ValueError, OverflowError):
        return None


def _pad(example: str, value: int) -> str:
    return f"{value:02d}" if len(example) == 2 else str(value)


def _month_name(example: str, month: int) -> str:
    full = _MONTHS[month - 1]
    name = full if len(example.rstrip(".")) > 4 or example.lower() == full else full[:3]
    if example[:1].isupper():
        name = name.capitalize()
    if example.isupper() and len(example) > 1:
        name = name.upper()
    return name + ("." if example.endswith(".") and len(name) == 3 else "")


def _weekday(example: str | None, dt: datetime) -> str:
    if not example:
        return ""
    full = _WEEKDAYS[dt.weekday()]
    name = full if len(example) > 3 else full[:3]
    return (name.capitalize() if example[:1].isupper() else name) + ", "


def _zone(text: str | None) -> timezone:
    if not text or text == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


_ISO = re.compile(
    r"^(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"
    r"(?:(?P<sep>[T ])(?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?P<frac>\.\d+)?)?(?P<zone>Z|[+-]\d{2}:?\d{2})?)?$"
)


def _iso_parse(m: re.Match[str]) -> datetime | None:
    frac = m["frac"] or ""
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    return _safe(
        lambda: datetime(
            int(m["y"]),
            int(m["m"]),
            int(m["d"]),
            int(m["H"] or 0),
            int(m["M"] or 0),
            int(m["S"] or 0),
            micro,
            tzinfo=_zone(m["zone"]),
        )
    )


def _iso_render(m: re.Match[str], dt: datetime) -> str:
    dt = dt.astimezone(_zone(m["zone"]))
    out = dt.strftime("%Y-%m-%d")
    if m["sep"] is None:
        return out
    out += m["sep"] + dt.strftime("%H:%M")
    if m["S"] is not None:
        out += dt.strftime(":%S")
        if m["frac"]:
            digits = len(m["frac"]) - 1
            out += "." + f"{dt.microsecond:06d}"[:digits].ljust(digits, "0")
    zone = m["zone"]
    if zone == "Z":
        out += "Z"
    elif zone:
        offset = dt.strftime("%z")
        out += offset[:3] + ":" + offset[3:] if ":" in zone else offset
    return out


_WORDY = re.compile(
    r"^(?:(?P<wd>[A-Za-z]{3,9}),?\s+)?(?P<mon>[A-Za-z]{3,9}\.?)\s+(?P<d>\d{1,2})(?P<comma>,?)\s+(?P<y>\d{4})$"
)
_WORDY_DMY = re.compile(
    r"^(?:(?P<wd>[A-Za-z]{3,9}),?\s+)?(?P<d>\d{1,2})\s+(?P<mon>[A-Za-z]{3,9}\.?)(?P<comma>,?)\s+(?P<y>\d{4})$"
)


def _wordy_parse(m: re.Match[str]) -> datetime | None:
    month = _month(m["mon"])
    if month is None or (m["wd"] and m["wd"].lower()[:3] not in {w[:3] for w in _WEEKDAYS}):
        return None
    return _safe(lambda: datetime(int(m["y"]), month, int(m["d"]), tzinfo=UTC))


def _wordy_render(m: re.Match[str], dt: datetime) -> str:
    return f"{_weekday(m['wd'], dt)}{_month_name(m['mon'], dt.month)} {_pad(m['d'], dt.day)}{m['comma']} {dt.year}"


def _wordy_dmy_render(m: re.Match[str], dt: datetime) -> str:
    return f"{_weekday(m['wd'], dt)}{_pad(m['d'], dt.day)} {_month_name(m['mon'], dt.month)}{m['comma']} {dt.year}"


_YMD = re.compile(r"^(?P<y>\d{4})(?P<s>[/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})$")
_NUMERIC = re.compile(r"^(?P<a>\d{1,2})(?P<s>[/.-])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4})$")


def _ymd_parse(m: re.Match[str]) -> datetime | None:
    return _safe(lambda: datetime(int(m["y"]), int(m["m"]), int(m["d"]), tzinfo=UTC))


def _ymd_render(m: re.Match[str], dt: datetime) -> str:
    return f"{dt.year}{m['s']}{_pad(m['m'], dt.month)}{m['s']}{_pad(m['d'], dt.day)}"


def _day_first(m: re.Match[str]) -> bool:
    # 05/01/2024 reads month-first (US) with slashes, day-first with dots or dashes; a first part
    # over 12 can only be a day.
    return int(m["a"]) > 12 or (m["s"] != "/" and int(m["b"]) <= 12)


def _numeric_parse(m: re.Match[str]) -> datetime | None:
    a, b = int(m["a"]), int(m["b"])
    day, month = (a, b) if _day_first(m) else (b, a)
    return _safe(lambda: datetime(int(m["y"]), month, day, tzinfo=UTC))


def _numeric_render(m: re.Match[str], dt: datetime) -> str:
    first, second = (dt.day, dt.month) if _day_first(m) else (dt.month, dt.day)
    return f"{_pad(m['a'], first)}{m['s']}{_pad(m['b'], second)}{m['s']}{dt.year}"


_SHAPES = (
    _Shape(_ISO, _iso_parse, _iso_render),
    _Shape(_WORDY, _wordy_parse, _wordy_render),
    _Shape(_WORDY_DMY, _wordy_parse, _wordy_dmy_render),
    _Shape(_YMD, _ymd_parse, _ymd_render),
    _Shape(_NUMERIC, _numeric_parse, _numeric_render),
)


def _epoch_of(value: float) -> float | None:
    """An epoch number in seconds, or in milliseconds when it is too large to be seconds."""
    if not math.isfinite(value):
        return None
    return value / 1000 if abs(value) >= 1e11 else value


def parse_time(value: Any) -> float | None:
    """Epoch seconds from a time as people write it (ISO 8601, ``Jan 5, 2024``, ``5 January 2024``,
    ``2024/01/05``, ``05.01.2024``, RFC 2822, epoch seconds or milliseconds), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _epoch_of(float(value))
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.strip().split())
    for shape in _SHAPES:
        m = shape.pattern.match(text)
        if m:
            dt = shape.parse(m)
            return dt.timestamp() if dt is not None else None
    if re.fullmatch(r"-?\d{9,13}(\.\d+)?", text):
        return _epoch_of(float(text))
    try:  # the rest of ISO 8601 (20240105, week dates, ...)
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
    except ValueError:
        pass
    try:
        dt = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def format_like(example: Any, epoch_s: float) -> Any:
    """``epoch_s`` written the way ``example`` is written (``Jan 5, 2024`` → ``Feb 9, 2026``), or None
    when the example's spelling is not one remnic can reproduce exactly."""
    if isinstance(example, bool):
        return None
    if isinstance(example, int):
        return int(epoch_s * 1000) if abs(example) >= 1e11 else int(epoch_s)
    if not isinstance(example, str):
        return None
    text = example.strip()
    dt = datetime.fromtimestamp(epoch_s, tz=UTC)
    for shape in _SHAPES:
        m = shape.pattern.match(text)
        if m and shape.parse(m) is not None:
            rendered = shape.render(m, dt)
            return rendered if shape.pattern.match(rendered) else None
    return None


def is_iso(value: Any) -> bool:
    """Whether ``value`` is a timestamp in remnic's strict ISO 8601 rule."""
    return isinstance(value, str) and bool(ISO_RE.match(value.strip())) and parse_time(value) is not None
