"""Calendar spans, the words that name them, and the index tokens they become (pure; no clock, no I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for m in names
}
WEEKDAYS = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 4,
}
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
SEASON_NAMES = "|".join(SEASONS)


@dataclass(frozen=True)
class DateSpan:
    """A date named in text, resolved to the inclusive calendar span [start, end]."""

    start: date
    end: date
    text: str
    offset: int = 0
    relative: bool = False
    """Resolved against a base date (the memory's time, or the recall's clock)."""
    kind: str = ""
    """Which form it was written in (``mdy``, ``yesterday``, ``rel_unit``, ``range``, …)."""

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def stop(self) -> int:
        """Where the text naming it ends (``offset`` + its length)."""
        return self.offset + len(self.text)

    def label(self) -> str:
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()}..{self.end.isoformat()}"

    def tokens(self) -> list[str]:
        return span_tokens(self.start, self.end)


def day_number(d: date) -> int:
    """Days since 1970-01-01 (what the index stores)."""
    return (d - date(1970, 1, 1)).days


def from_day_number(n: int) -> date:
    return date(1970, 1, 1) + timedelta(days=int(n))


def span_tokens(start: date, end: date) -> list[str]:
    """Index tokens of a span: its days (up to two weeks), months (up to ~a season), years (up to three)."""
    days = (end - start).days + 1
    out: list[str] = []
    if days <= 14:
        out += [f"d{(start + timedelta(days=i)).strftime('%Y%m%d')}" for i in range(days)]
    if days <= 100:
        y, m = start.year, start.month
        while (y, m) <= (end.year, end.month):
            out.append(f"m{y:04d}{m:02d}")
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    if end.year - start.year <= 2:
        out += [f"y{y:04d}" for y in range(start.year, end.year + 1)]
    return out


def base_date(ts: float | datetime | None) -> date | None:
    """The calendar day of a time: a ``datetime``'s own day (in the UTC offset it carries: the writer's
    day, see :func:`remnic.index.text.observed_time`), epoch seconds' UTC day."""
    if ts is None:
        return None
    if isinstance(ts, datetime):
        return ts.date()
    try:
        return datetime.fromtimestamp(ts, tz=UTC).date()
    except (OverflowError, OSError, ValueError):
        return None


def month_keys(start: date, end: date, limit: int = 36) -> list[str]:
    """``2023-05``-style keys of the months a span touches (none for spans over ``limit`` months)."""
    n = (end.year - start.year) * 12 + end.month - start.month + 1
    if n > limit:
        return []
    return [f"{y:04d}-{m:02d}" for y, m in (add_months(start.year, start.month, i) for i in range(n))]


def dated_field(spans: list[DateSpan]) -> str:
    """The derived, searchable date field of a memory: its spans' tokens."""
    tokens: list[str] = []
    for s in spans:
        tokens += s.tokens()
    return " ".join(dict.fromkeys(tokens))


# --------------------------------------------------------------------------- calendar helpers


def month_span(y: int, m: int) -> tuple[date, date]:
    first = date(y, m, 1)
    nxt = date(y + (m == 12), 1 if m == 12 else m + 1, 1)
    return first, nxt - timedelta(days=1)


def add_months(y: int, m: int, n: int) -> tuple[int, int]:
    k = y * 12 + (m - 1) + n
    return k // 12, k % 12 + 1


def week_of(d: date) -> tuple[date, date]:
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=6)


def last_weekend(base: date) -> tuple[date, date]:
    """The most recent Saturday–Sunday before ``base`` (said on a Sunday: the one that just ended)."""
    back = (base.weekday() + 2) % 7 or 7
    saturday = base - timedelta(days=back)
    return saturday, saturday + timedelta(days=1)


def season_span(y: int, start_month: int) -> tuple[date, date]:
    """The three months from ``start_month`` of year ``y`` (winter: December to February of the next year)."""
    first = date(y, start_month, 1)
    ey, em = add_months(y, start_month, 2)
    return first, month_span(ey, em)[1]


def safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def number(text: str) -> int | None:
    t = re.sub(r"\s+", " ", text.strip().lower())
    if t.isdigit():
        return int(t)
    return NUMBERS.get(t)


def nearest_year(base: date, m: int, d: int = 1) -> int:
    """The year that puts month ``m`` (day ``d``) nearest to ``base`` (within six months either way)."""
    return min((base.year - 1, base.year, base.year + 1), key=lambda y: abs((date(y, m, min(d, 28)) - base).days))


def numeric_day(a: int, b: int, y: int) -> date | str:
    """``12/31/2023`` (month first, as in the US) or ``31/12/2023`` (day first): whichever part is over 12
    is the day. Two parts both 12 or under (``03/04/2023``) could be either: a reason, not a guess."""
    if a > 12 and b > 12:
        return "no such date"
    if a <= 12 and b <= 12 and a != b:
        return "month or day first?"
    month, day = (b, a) if a > 12 else (a, b)
    return safe_date(y, month, day) or "no such day"


def part_of(y: int, m: int | None, part: str) -> tuple[date, date]:
    """``early``/``mid``/``late`` a year (``m`` None) or a month: its first half, middle half or second
    half. Generous on purpose: "early 2023" is January to June, so a window never holds only part of
    what a narrower reading means."""
    if m is None:
        first = {"early": 1, "mid": 4, "late": 7}[part]
        return date(y, first, 1), month_span(y, first + 5)[1]
    start, end = month_span(y, m)
    return {"early": (start, start.replace(day=15)), "mid": (start.replace(day=8), start.replace(day=23))}.get(
        part, (start.replace(day=16), end)
    )
