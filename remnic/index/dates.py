"""Dates named in text, resolved to calendar spans (pure; no clock, no I/O).

A memory's text often says *when* relative to the moment it was written
("yesterday", "last week", "two weekends ago", "next month"). Resolved against
the memory's ``observedAt``/``created`` these become absolute spans that are
indexed as a derived field (never written into the file), so a question naming
the date finds them; absolute dates ("May 3, 2023", "January 2022") are
normalised the same way. The query side (:func:`query_dates`) turns dates named
in a query into the same tokens and, where the date is unambiguous, a window.

Spans become index tokens that no word can collide with: ``d20230503`` (a day),
``m202305`` (a month), ``y2023`` (a year). A span of up to two weeks lists its
days, up to about a season its months, up to three years its years. Whether a
memory states a time at all is kept too: a question asking *when* prefers those.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
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
_MONTH = r"(?P<{n}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<n>\d{1,2}|" + "|".join(sorted((re.escape(k) for k in NUMBERS), key=len, reverse=True)) + ")"
_DAY = r"(?P<{n}>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<{n}>(?:19|20)\d\d)"
_UNIT = r"(?P<unit>day|week|weekend|month|year)s?"
_WEEKDAY = r"(?P<wd>" + "|".join(WEEKDAYS) + ")"
_SEASON = r"(?P<season>" + "|".join(SEASONS) + ")"


def _p(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Each pattern's name picks its resolver; the list is tried in order and the first match at a
# position wins (longer, more specific forms first).
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", _p(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>0[1-9]|1[0-2])-(?P<d>[0-2]\d|3[01])\b")),
    ("mdy", _p(r"\b" + _MONTH.format(n="m") + r"\s+" + _DAY.format(n="d") + r",?\s+" + _YEAR.format(n="y") + r"\b")),
    (
        "dmy",
        _p(
            r"\b"
            + _DAY.format(n="d")
            + r"\s+(?:of\s+)?"
            + _MONTH.format(n="m")
            + r",?\s+"
            + _YEAR.format(n="y")
            + r"\b"
        ),
    ),
    ("my", _p(r"\b" + _MONTH.format(n="m") + r",?\s+(?:of\s+)?" + _YEAR.format(n="y") + r"\b")),
    ("md", _p(r"\b" + _MONTH.format(n="m") + r"\s+" + _DAY.format(n="d") + r"\b(?!\s*(?:%|percent|am|pm|:))")),
    ("dm", _p(r"\b" + _DAY.format(n="d") + r"\s+(?:of\s+)?" + _MONTH.format(n="m") + r"\b")),
    ("ago", _p(r"\b" + _NUM + r"\s+" + _UNIT + r"\s+(?:ago|back|earlier)\b")),
    ("in_n", _p(r"\bin\s+" + _NUM + r"\s+" + _UNIT + r"\b(?!\s+(?:ago|back))")),
    ("for_n", _p(r"\bfor\s+(?:the\s+(?:past|last)\s+)?" + _NUM + r"\s+" + _UNIT + r"\b")),
    ("day_before", _p(r"\bthe\s+day\s+before\s+yesterday\b")),
    ("day_after", _p(r"\bthe\s+day\s+after\s+tomorrow\b")),
    ("yesterday", _p(r"\b(?:yesterday|last\s+night)\b")),
    ("today", _p(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b")),
    ("tomorrow", _p(r"\btomorrow\b")),
    ("other_day", _p(r"\bthe\s+other\s+day\b")),
    ("rel_unit", _p(r"\b(?P<rel>last|past|this\s+past|this|next|coming|previous)\s+" + _UNIT + r"\b")),
    ("rel_weekday", _p(r"\b(?P<rel>last|this|next|on|this\s+past|past)\s+" + _WEEKDAY + r"\b")),
    ("rel_season", _p(r"\b(?P<rel>last|this|next|this\s+past|past|in\s+the|in)\s+" + _SEASON + r"\b")),
    ("rel_month", _p(r"\b(?P<rel>last|this|next|in|since|until|by)\s+" + _MONTH.format(n="m") + r"\b(?!\s+\d)")),
    ("ordinal", _p(r"\b(?:on\s+)?the\s+(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b")),
    (
        "year",
        _p(r"\b(?P<pre>in|since|of|from|until|by|before|after|during|year|back\s+in)\s+" + _YEAR.format(n="y") + r"\b"),
    ),
]


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
    """Which form it was written in (``mdy``, ``yesterday``, ``rel_unit``, …)."""

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

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


def base_date(ts: float | None) -> date | None:
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, tz=UTC).date()
    except (OverflowError, OSError, ValueError):
        return None


# --------------------------------------------------------------------------- calendar helpers


def _month_span(y: int, m: int) -> tuple[date, date]:
    first = date(y, m, 1)
    nxt = date(y + (m == 12), 1 if m == 12 else m + 1, 1)
    return first, nxt - timedelta(days=1)


def _add_months(y: int, m: int, n: int) -> tuple[int, int]:
    k = y * 12 + (m - 1) + n
    return k // 12, k % 12 + 1


def _week(d: date) -> tuple[date, date]:
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=6)


def _last_weekend(base: date) -> tuple[date, date]:
    """The most recent Saturday–Sunday before ``base`` (said on a Sunday: the one that just ended)."""
    back = (base.weekday() + 2) % 7 or 7
    saturday = base - timedelta(days=back)
    return saturday, saturday + timedelta(days=1)


def _season(y: int, start_month: int) -> tuple[date, date]:
    first = date(y, start_month, 1)
    ey, em = _add_months(y, start_month, 2)
    return first, _month_span(ey, em)[1]


def _safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _number(text: str) -> int | None:
    t = re.sub(r"\s+", " ", text.strip().lower())
    if t.isdigit():
        return int(t)
    return NUMBERS.get(t)


def _nearest_year(base: date, m: int, d: int = 1) -> int:
    """The year that puts month ``m`` (day ``d``) nearest to ``base`` (within six months either way)."""
    return min((base.year - 1, base.year, base.year + 1), key=lambda y: abs((date(y, m, min(d, 28)) - base).days))


# --------------------------------------------------------------------------- resolvers


def _resolve(kind: str, g: dict[str, str], base: date | None) -> tuple[date, date, bool] | None:
    """(start, end, relative) for one match; None when it needs a base date and has none, or is nonsense."""
    if kind == "iso":
        d = _safe_date(int(g["y"]), int(g["m"]), int(g["d"]))
        return (d, d, False) if d else None
    if kind in ("mdy", "dmy"):
        d = _safe_date(int(g["y"]), MONTHS[g["m"].lower()], int(g["d"]))
        return (d, d, False) if d else None
    if kind == "my":
        s, e = _month_span(int(g["y"]), MONTHS[g["m"].lower()])
        return s, e, False
    if kind == "year" and g.get("pre", "").lower() != "year":
        y = int(g["y"])
        return date(y, 1, 1), date(y, 12, 31), False
    if base is None:
        return None
    if kind in ("md", "dm"):
        m, day = MONTHS[g["m"].lower()], int(g["d"])
        d = _safe_date(_nearest_year(base, m, day), m, day)
        return (d, d, True) if d else None
    if kind == "yesterday":
        d = base - timedelta(days=1)
        return d, d, True
    if kind == "day_before":
        d = base - timedelta(days=2)
        return d, d, True
    if kind == "today":
        return base, base, True
    if kind == "tomorrow":
        d = base + timedelta(days=1)
        return d, d, True
    if kind == "day_after":
        d = base + timedelta(days=2)
        return d, d, True
    if kind == "other_day":
        return base - timedelta(days=5), base - timedelta(days=1), True
    if kind in ("ago", "in_n", "for_n"):
        n = _number(g["n"])
        if n is None or n <= 0 or n > 100:
            return None
        sign = 1 if kind == "in_n" else -1
        return _unit_offset(base, g["unit"].lower(), sign * n, fuzzy=g["n"].lower() in ("a few", "few", "several"))
    if kind == "rel_unit":
        rel = re.sub(r"\s+", " ", g["rel"].lower())
        step = {"last": -1, "past": -1, "this past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[rel]
        unit = g["unit"].lower()
        if unit == "weekend" and step < 0:
            s, e = _last_weekend(base)
            return s, e, True
        return _unit_offset(base, unit, step)
    if kind == "rel_weekday":
        rel = re.sub(r"\s+", " ", g["rel"].lower())
        wd = WEEKDAYS[g["wd"].lower()]
        if rel == "next":
            d = base + timedelta(days=(wd - base.weekday()) % 7 or 7)
        elif rel == "this":
            d = base + timedelta(days=wd - base.weekday())
        else:  # last, on, past: the most recent one before the base date
            d = base - timedelta(days=(base.weekday() - wd) % 7 or 7)
        return d, d, True
    if kind == "rel_season":
        rel = re.sub(r"\s+", " ", g["rel"].lower())
        start_month = SEASONS[g["season"].lower()]
        # The season's start in the base year, moved to the most recent one that has begun (or the next).
        y = base.year if start_month != 12 or base.month == 12 else base.year - 1
        s, e = _season(y, start_month)
        if rel in ("last", "past", "this past") and e >= base:  # not over yet: the one before
            s, e = _season(y - 1, start_month)
        elif rel == "next" and s <= base:
            s, e = _season(y + 1, start_month)
        return s, e, True
    if kind == "rel_month":
        rel = g["rel"].lower()
        m = MONTHS[g["m"].lower()]
        if m == 5 and rel not in ("last", "next"):
            return None  # "this may", "in may", … are far more often the verb than the month
        if rel == "last":
            y = base.year if m < base.month else base.year - 1
        elif rel == "next":
            y = base.year if m > base.month else base.year + 1
        elif rel == "this":
            y = base.year
        else:
            y = _nearest_year(base, m)
        s, e = _month_span(y, m)
        return s, e, True
    if kind == "ordinal":
        day = int(g["d"])
        y, m = (base.year, base.month) if day <= base.day else _add_months(base.year, base.month, -1)
        d = _safe_date(y, m, day)
        return (d, d, True) if d else None
    return None


def _unit_offset(base: date, unit: str, n: int, *, fuzzy: bool = False) -> tuple[date, date, bool] | None:
    """The day, week, weekend, month or year ``n`` units from ``base`` (negative: before it)."""
    try:
        if unit == "day":
            d = base + timedelta(days=n)
            if fuzzy:
                return d - timedelta(days=2), d + timedelta(days=1), True
            return d, d, True
        if unit == "week":
            s, e = _week(base + timedelta(weeks=n))
            return s, e, True
        if unit == "weekend":
            s, e = _last_weekend(base) if n < 0 else _last_weekend(base + timedelta(days=7))
            shift = timedelta(weeks=(n + 1) if n < 0 else (n - 1))
            return s + shift, e + shift, True
        if unit == "month":
            y, m = _add_months(base.year, base.month, n)
            s, e = _month_span(y, m)
            return s, e, True
        if unit == "year":
            y = base.year + n
            return date(y, 1, 1), date(y, 12, 31), True
    except (OverflowError, ValueError):
        return None
    return None


_MONTH_STEMS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_UNITS = ("day", "week", "month", "year")  # "weekend" holds "week"
_DIGIT = re.compile(r"\d")


def _possible(text: str) -> frozenset[str]:
    """The kinds of pattern that can match ``text`` at all: each needs some words or digits (necessary
    conditions, checked as plain substrings of the case-folded text), and most notes name no date, so
    most of the patterns need not scan them."""
    t = text.casefold()
    digit = _DIGIT.search(t) is not None
    century = "19" in t or "20" in t
    month = any(m in t for m in _MONTH_STEMS)
    unit = any(u in t for u in _UNITS)
    ok = {
        "iso": century and "-" in t,
        "mdy": century and month,
        "dmy": century and month,
        "my": century and month,
        "md": digit and month,
        "dm": digit and month,
        "ago": unit and ("ago" in t or "back" in t or "earlier" in t),
        "in_n": unit and "in" in t,
        "for_n": unit and "for" in t,
        "day_before": "yesterday" in t,
        "day_after": "tomorrow" in t,
        "yesterday": "yesterday" in t or "night" in t,
        "today": any(w in t for w in ("today", "tonight", "morning", "afternoon", "evening")),
        "tomorrow": "tomorrow" in t,
        "other_day": "other" in t and "day" in t,
        "rel_unit": unit,
        "rel_weekday": "day" in t,
        "rel_season": any(w in t for w in SEASONS),
        "rel_month": month,
        "ordinal": digit and any(w in t for w in ("st", "nd", "rd", "th")),
        "year": century,
    }
    return frozenset(kind for kind, can in ok.items() if can)


def _matches(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    """Non-overlapping matches, the earliest first; at one position the first pattern in order wins."""
    found: list[tuple[int, int, int, str, re.Match[str]]] = []
    possible = _possible(text)
    for order, (kind, pattern) in enumerate(_PATTERNS):
        if kind not in possible:
            continue
        for m in pattern.finditer(text):
            found.append((m.start(), order, -m.end(), kind, m))
    taken_until = -1
    for start, _order, neg_end, kind, m in sorted(found):
        if start < taken_until:
            continue
        taken_until = -neg_end
        yield kind, m


def find_dates(text: str, base: date | None) -> list[DateSpan]:
    """Every date expression in ``text`` resolved to a span (relative ones need ``base``)."""
    if not text:
        return []
    out = []
    for kind, m in _matches(text):
        got = _resolve(kind, {k: v for k, v in m.groupdict().items() if v is not None}, base)
        if got is None:
            continue
        start, end, relative = got
        if start.year < 1900 or end.year > 2199 or end < start:
            continue
        if kind == "rel_month" and m.group("rel").lower() in ("last", "next"):
            kind = "rel_month_named"  # "last May" names one month; "in May" could be any year's
        out.append(DateSpan(start, end, m.group(0).strip(), m.start(), relative, kind))
    return out


def month_keys(start: date, end: date, limit: int = 36) -> list[str]:
    """``2023-05``-style keys of the months a span touches (none for spans over ``limit`` months)."""
    n = (end.year - start.year) * 12 + end.month - start.month + 1
    if n > limit:
        return []
    return [f"{y:04d}-{m:02d}" for y, m in (_add_months(start.year, start.month, i) for i in range(n))]


def dated_field(spans: list[DateSpan]) -> str:
    """The derived, searchable date field of a memory: its spans' tokens."""
    tokens: list[str] = []
    for s in spans:
        tokens += s.tokens()
    return " ".join(dict.fromkeys(tokens))


# --------------------------------------------------------------------------- the query side

_ASKS_WHEN_RE = re.compile(
    r"\bwhen\b|\bhow\s+long\b|\bwhat\s+(?:year|month|date|day|time|week)\b|\bwhich\s+(?:year|month|day|date|week)\b"
    r"|\bhow\s+many\s+(?:days|weeks|months|years)\b|\bsince\s+when\b|\bwhat\s+age\b",
    re.IGNORECASE,
)
_RANGE_RE = re.compile(
    r"\b(?:between|from)\s+(?P<a>.+?)\s+(?:and|to|until|through|-)\s+(?P<b>.+?)(?=[?.!,;]|$)", re.IGNORECASE
)
_YEARLESS = ("md", "dm", "rel_month")
_DAY_RANGE_RE = _p(
    r"\b(?:between\s+|from\s+)?"
    + _DAY.format(n="a")
    + r"\s*(?:and|to|until|through|-|\u2013)\s*"
    + _DAY.format(n="b")
    + r"\s+(?:of\s+)?"
    + _MONTH.format(n="m")
    + r"(?:,?\s+"
    + _YEAR.format(n="y")
    + r")?\b"
)
"""``between 1 and 20 September 2026``, ``1-20 Sept``: days of one month (the first day alone names no date)."""


def _day_ranges(text: str, now: date, spans: list[DateSpan]) -> list[DateSpan]:
    """``spans`` with each day range of one month in place of the single day its end names."""
    for m in _DAY_RANGE_RE.finditer(text):
        month, a, b = MONTHS[m.group("m").lower()], int(m.group("a")), int(m.group("b"))
        year = int(m.group("y")) if m.group("y") else _nearest_year(now, month, a)
        lo, hi = _safe_date(year, month, a), _safe_date(year, month, b)
        if lo is None or hi is None or hi < lo:
            continue
        kind = "dmy" if m.group("y") else "dm"
        span = DateSpan(lo, hi, m.group(0).strip(), m.start(), not m.group("y"), kind)
        spans = [s for s in spans if not (m.start() <= s.offset < m.end())] + [span]
    return sorted(spans, key=lambda s: s.offset)


_BEFORE_AFTER_RE = re.compile(r"\b(?P<rel>before|after|since|until|prior\s+to)\s+(?P<what>[^?.!,;]+)", re.IGNORECASE)


@dataclass
class QueryDates:
    """What a query says about time: resolved spans, BM25 date terms and, where unambiguous, a window."""

    spans: list[DateSpan] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    """Index tokens the BM25 query adds (the named dates' days, months, years)."""
    window: tuple[date, date] | None = None
    """Only memories whose dates touch this inclusive window are recalled (None: no date filter)."""
    asks_when: bool = False
    unresolved: list[str] = field(default_factory=list)
    """Time relations the query names that no date could be found for ("before the trip")."""
    relation: str = ""
    """``before``/``after``/``since``/``until``/``prior to`` when the window is open on one side."""

    @property
    def any(self) -> bool:
        return bool(self.spans or self.asks_when or self.unresolved)

    def describe(
        self, *, window: tuple[date, date] | None = None, terms: list[str] | None = None, filter_off: bool = False
    ) -> str:
        """One line for the X-ray: the dates named, the filter (``window`` overrides this one's, e.g. with
        slack; ``filter_off``: the filter is switched off), unresolved relations, the when-question, and the
        date terms searched (``terms`` overrides)."""
        window = None if filter_off else self.window if window is None else window
        terms = self.terms if terms is None else terms
        parts = [f"'{s.text}' → {s.label()}" for s in self.spans]
        if self.relation and self.window is not None and len(self.spans) == 1:
            # An open window is what the query means by "before May 2023", not the month itself.
            said = self.spans[0].text
            said = said if said.lower().startswith(self.relation) else f"{self.relation} {said}"
            parts = [f"'{said}' → {_open(self.window)}"]
        if window is not None:
            parts.append(f"filter {_open(window)}")
        elif filter_off and self.window is not None:
            parts.append("no filter (recall.dateFilter is off)")
        elif self.spans:
            parts.append("no filter (ambiguous)")
        if self.unresolved:
            parts.append("unresolved: " + ", ".join(f"'{u}'" for u in self.unresolved))
        if self.asks_when:
            parts.append("asks when: memories that state a time get the date term")
        if terms:
            shown = terms if len(terms) <= 8 else [*terms[:8], f"+{len(terms) - 8}"]
            parts.append("date terms " + " ".join(shown))
        return "; ".join(parts)


def _open(window: tuple[date, date]) -> str:
    """``2023-05-01..2023-05-31``, ``…..2023-04-30`` (open before), ``2023-06-01..…`` (open after)."""
    lo, hi = window
    return f"{'…' if lo == date.min else lo.isoformat()}..{'…' if hi == date.max else hi.isoformat()}"


def query_dates(text: str, now: date, *, window_max_days: int = 1100) -> QueryDates:
    """Dates and ranges named in a query, resolved against ``now`` (the recall's clock).

    A window is set when the query names exactly one date (or one ``between … and …``
    range) that carries its year or is relative to ``now``, optionally after
    ``before``/``after``/``since``/``until``; a month or day without a year is a term only.
    """
    out = QueryDates(asks_when=bool(_ASKS_WHEN_RE.search(text)))
    spans = _day_ranges(text, now, find_dates(text, now))
    # A month or day without a year, resolved against today's date, is a guess, not a date the user named.
    named = [s for s in spans if s.kind not in _YEARLESS]
    ambiguous = [s for s in spans if s.kind in _YEARLESS]
    rng = _RANGE_RE.search(text)
    if rng and len(named) + len(ambiguous) >= 2:
        a = find_dates(rng.group("a"), now)
        b = find_dates(rng.group("b"), now)
        if a and b:
            start, end = a[0], b[-1]
            if start.kind in ("md", "dm") and not end.relative:
                fixed = _safe_date(end.end.year, start.start.month, start.start.day)  # "August 11 … August 15 2023"
                start = DateSpan(fixed, fixed, start.text, start.offset, False, "mdy") if fixed else start
            if start.start <= end.end and not start.relative and not end.relative:
                out.spans = [DateSpan(start.start, end.end, rng.group(0).strip(), rng.start())]
                out.window = (start.start, end.end)
    if not out.spans:
        out.spans = named + ambiguous
        if len(named) == 1 and not ambiguous and named[0].days <= window_max_days:
            s = named[0]
            rel = _BEFORE_AFTER_RE.search(text[: s.offset + len(s.text)])
            word = rel.group("rel").lower() if rel and rel.end() >= s.offset else ""
            out.relation = word
            if word in ("before", "prior to", "until"):
                out.window = (date.min, s.start - timedelta(days=1) if word != "until" else s.end)
            elif word in ("after", "since"):
                out.window = (s.end + timedelta(days=1) if word == "after" else s.start, date.max)
            else:
                out.window = (s.start, s.end)
    for m in _BEFORE_AFTER_RE.finditer(text):
        what = m.group("what").strip()
        named_here = any(m.start() <= sp.offset < m.end() for sp in spans)  # "before 2023" is one span
        if not named_here and not find_dates(what, now):
            out.unresolved.append(f"{m.group('rel').lower()} {what}")
    terms: list[str] = []
    for s in out.spans if out.window is not None else named:
        if out.window is not None and (out.window[0] == date.min or out.window[1] == date.max):
            continue  # an open window is a filter, not a term
        terms += s.tokens()
    out.terms = list(dict.fromkeys(terms))
    return out
