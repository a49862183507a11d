"""The forms a date is written in, and each resolved to a calendar span (pure; no clock, no I/O).

Absolute forms ("May 3, 2023", "12/31/2023", "Q3 2023", "summer of 2023", "early 2023") resolve
alone; relative ones ("yesterday", "last week", "in the last 3 days", "next summer") against a base
date: the day the memory was written, or the recall's clock. A form that names a date which cannot
be resolved ("February 29, 2023", "03/04/2023": day or month first?) is reported by :func:`scan`
with the reason, never guessed.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from datetime import date, timedelta
from typing import NamedTuple

from .spans import (
    MONTH_NAMES,
    MONTHS,
    NUMBERS,
    SEASON_NAMES,
    SEASONS,
    WEEKDAYS,
    DateSpan,
    add_months,
    last_weekend,
    month_span,
    nearest_year,
    number,
    numeric_day,
    part_of,
    safe_date,
    season_span,
    week_of,
)

_MONTH = r"(?P<{n}>" + MONTH_NAMES + r")\.?"
_NUM = r"(?P<n>\d{1,2}|" + "|".join(sorted((re.escape(k) for k in NUMBERS), key=len, reverse=True)) + ")"
_DAY = r"(?P<{n}>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<{n}>(?:19|20)\d\d)"
_UNIT = r"(?P<unit>day|week|weekend|month|year)s?"
_WEEKDAY = r"(?P<wd>" + "|".join(WEEKDAYS) + ")"
_SEASON = r"(?P<season>" + SEASON_NAMES + ")"
_QUARTERS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}


def _p(pattern: str) -> str:
    """A pattern of :data:`PATTERNS`, compiled on first use (:func:`_compiled`): most texts need few."""
    return pattern


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Month names of German, French, Spanish, Italian, Portuguese and Dutch, read only in a whole date (day,
# month and year: "3. April 2027", "28. März 2026", "3 de abril de 2027"): alone, "Mars" and "Mai" are
# as often a planet or a name as a month.
_EU_MONTH_LISTS = (
    "januar jänner janvier enero gennaio janeiro januari",
    "februar février fevrier febrero febbraio fevereiro februari",
    "märz marz mars marzo março marco maart",
    "april avril abril aprile",
    "mai mayo maggio maio mei",
    "juni juin junio giugno junho",
    "juli juillet julio luglio julho",
    "august août aout agosto augustus",
    "september septembre septiembre setiembre settembre setembro",
    "oktober octobre octubre ottobre outubro",
    "november novembre noviembre novembro",
    "dezember décembre decembre diciembre dicembre dezembro december",
)
EU_MONTHS = {name: i for i, names in enumerate(_EU_MONTH_LISTS, 1) for name in names.split()}
_EU_SPELLINGS = sorted({*EU_MONTHS, *(unicodedata.normalize("NFD", n) for n in EU_MONTHS)}, key=len, reverse=True)
_EU_STEMS = frozenset(n[:3] for n in _EU_SPELLINGS)


# Each pattern's name picks its resolver; the list is tried in order and the first match at a
# position wins (longer, more specific forms first).
PATTERNS: list[tuple[str, str]] = [
    ("iso", _p(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>0[1-9]|1[0-2])-(?P<d>[0-2]\d|3[01])\b")),
    # 12/31/2023; 03/04/2023 is reported unresolved (month or day first?)
    ("numeric", _p(r"(?<![\d/.])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>(?:19|20)\d\d)\b(?!/)")),
    (
        "quarter",
        _p(
            r"\b(?:(?:in|during)\s+)?(?:(?:Q(?P<q>[1-4])|(?P<qw>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter)"
            r"(?:\s+of|,)?\s+(?P<y>(?:19|20)\d\d)|(?P<y2>(?:19|20)\d\d)[\s-]?Q(?P<q2>[1-4]))\b"
        ),
    ),
    (
        "part",
        _p(
            r"\b(?P<part>early|mid|late)(?:\s+|-)(?:(?P<m>" + MONTH_NAMES + r")\.?,?\s+)?" + _YEAR.format(n="y") + r"\b"
        ),
    ),
    (
        "season_year",
        _p(
            r"\b(?:(?:in|during)\s+)?(?:the\s+)?"
            + _SEASON
            + r",?\s+(?:of\s+)?"
            + _YEAR.format(n="y")
            + r"(?:\s*[-/\u2013]\s*(?P<y2>(?:19|20)?\d\d))?\b"
        ),
    ),
    # 28.11.2026: day first, as everywhere dots are written between a date's numbers
    ("dotted", _p(r"(?<![\w.])(?P<d>[12]\d|3[01]|0?[1-9])\.(?P<m>1[0-2]|0?[1-9])\.(?P<y>(?:19|20)\d\d)\b(?!\.\d)")),
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
    (
        "dmy_eu",
        _p(
            r"\b(?P<d>[12]\d|3[01]|0?[1-9])(?:\.|º|er)?\s+(?:de\s+)?(?P<m>"
            + "|".join(_EU_SPELLINGS)
            + r")\.?,?\s+(?:de\s+|del\s+)?"
            + _YEAR.format(n="y")
            + r"\b"
        ),
    ),
    ("my", _p(r"\b" + _MONTH.format(n="m") + r",?\s+(?:of\s+)?" + _YEAR.format(n="y") + r"\b")),
    # "Aug '23": the century comes from the base date (see _short_year)
    ("my_short", _p(r"\b" + _MONTH.format(n="m") + r",?\s+['\u2018\u2019](?P<yy>\d\d)\b")),
    ("md", _p(r"\b" + _MONTH.format(n="m") + r"\s+" + _DAY.format(n="d") + r"\b(?!\s*(?:%|percent|am|pm|:))")),
    ("dm", _p(r"\b" + _DAY.format(n="d") + r"\s+(?:of\s+)?" + _MONTH.format(n="m") + r"\b")),
    # "in the last 3 days", "over the past two weeks": from that long before the base date up to it
    (
        "last_n",
        _p(r"\b(?:(?:in|over|during|within)\s+)?the\s+(?:last|past|previous)\s+" + _NUM + r"\s+" + _UNIT + r"\b"),
    ),
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
    # not "in Aug. 2023", "in May of 2023" or "in Aug '23": those are the month of that year (my, my_short)
    (
        "rel_month",
        _p(
            r"\b(?P<rel>last|this|next|in|since|until|by)\s+(?P<m>"
            + MONTH_NAMES
            + r")\b(?!\.?,?\s+(?:of\s+)?['\u2018\u2019]?\d)"
        ),
    ),
    # not "the 7th of May 2023": that names its month (dm, dmy)
    (
        "ordinal",
        _p(
            r"\b(?:on\s+)?the\s+(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:" + MONTH_NAMES + r")\b)"
        ),
    ),
    (
        "year",
        _p(r"\b(?P<pre>in|since|of|from|until|by|before|after|during|year|back\s+in)\s+" + _YEAR.format(n="y") + r"\b"),
    ),
]

Resolved = tuple[date, date, bool] | str | None
"""(start, end, relative); a reason when the text names a date that cannot be resolved; None when it
names none after all (or needs a base date and has none)."""


def _absolute(kind: str, g: dict[str, str]) -> Resolved:
    """The forms that carry their year (None for the others)."""
    if kind == "iso":
        d = safe_date(int(g["y"]), int(g["m"]), int(g["d"]))
        return (d, d, False) if d else "no such day"
    if kind == "numeric":
        got = numeric_day(int(g["a"]), int(g["b"]), int(g["y"]))
        return got if isinstance(got, str) else (got, got, False)
    if kind == "dotted":
        d = safe_date(int(g["y"]), int(g["m"]), int(g["d"]))
        return (d, d, False) if d else "no such day"
    if kind == "dmy_eu":
        d = safe_date(int(g["y"]), EU_MONTHS[unicodedata.normalize("NFC", g["m"]).lower()], int(g["d"]))
        return (d, d, False) if d else "no such day"
    if kind in ("mdy", "dmy"):
        d = safe_date(int(g["y"]), MONTHS[g["m"].lower()], int(g["d"]))
        return (d, d, False) if d else "no such day"
    if kind == "my":
        s, e = month_span(int(g["y"]), MONTHS[g["m"].lower()])
        return s, e, False
    if kind == "quarter":
        q = int(g["q"]) if "q" in g else int(g["q2"]) if "q2" in g else _QUARTERS[g["qw"].lower()]
        y = int(g.get("y") or g["y2"])
        return date(y, 3 * q - 2, 1), month_span(y, 3 * q)[1], False
    if kind == "part":
        s, e = part_of(int(g["y"]), MONTHS[g["m"].lower()] if "m" in g else None, g["part"].lower())
        return s, e, False
    if kind == "season_year":
        return _season_year(g)
    if kind == "year" and g.get("pre", "").lower() != "year":
        y = int(g["y"])
        return date(y, 1, 1), date(y, 12, 31), False
    return None


def _season_year(g: dict[str, str]) -> Resolved:
    """``summer 2023``; ``winter 2023-24`` (December 2023 to February 2024). A winter with one year could
    be the one it ends or the one it starts: a reason, not a guess."""
    y, start_month = int(g["y"]), SEASONS[g["season"].lower()]
    if "y2" in g:
        y2 = int(g["y2"]) if len(g["y2"]) == 4 else y // 100 * 100 + int(g["y2"])
        if start_month != 12 or y2 != y + 1:
            return "which year?"
    elif start_month == 12:
        return f"the winter ending in {y} or the one starting in it?"
    s, e = season_span(y, start_month)
    return s, e, False


_ABSOLUTE = frozenset(
    ["iso", "numeric", "dotted", "mdy", "dmy", "dmy_eu", "my", "quarter", "part", "season_year", "year"]
)
_KIND_AS = {"dotted": "numeric", "dmy_eu": "dmy"}
"""What the other forms of a date are to the code that reads spans by kind."""


def _resolve(kind: str, g: dict[str, str], base: date | None) -> Resolved:
    """The span of one match (see :data:`Resolved`)."""
    got = _absolute(kind, g)
    if got is not None or kind in _ABSOLUTE:
        return got
    if base is None:
        return None
    if kind == "my_short":
        s, e = month_span(short_year(int(g["yy"]), base), MONTHS[g["m"].lower()])
        return s, e, False
    if kind in ("md", "dm"):
        m, day = MONTHS[g["m"].lower()], int(g["d"])
        d = safe_date(nearest_year(base, m, day), m, day)
        return (d, d, True) if d else None
    fixed = {"yesterday": -1, "day_before": -2, "today": 0, "tomorrow": 1, "day_after": 2}
    if kind in fixed:
        d = base + timedelta(days=fixed[kind])
        return d, d, True
    if kind == "other_day":
        return base - timedelta(days=5), base - timedelta(days=1), True
    if kind in ("ago", "in_n", "for_n", "last_n"):
        n = number(g["n"])
        if n is None or n <= 0 or n > 100:
            return None
        if kind == "last_n":
            return _last_n(base, g["unit"].lower(), n)
        sign = 1 if kind == "in_n" else -1
        return _unit_offset(base, g["unit"].lower(), sign * n, fuzzy=g["n"].lower() in ("a few", "few", "several"))
    if kind == "rel_unit":
        rel = re.sub(r"\s+", " ", g["rel"].lower())
        step = {"last": -1, "past": -1, "this past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[rel]
        unit = g["unit"].lower()
        if unit == "weekend" and step < 0:
            s, e = last_weekend(base)
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
        return _rel_season(re.sub(r"\s+", " ", g["rel"].lower()), SEASONS[g["season"].lower()], base)
    if kind == "rel_month":
        return _rel_month(g["rel"].lower(), MONTHS[g["m"].lower()], base)
    if kind == "ordinal":
        day = int(g["d"])
        y, m = (base.year, base.month) if day <= base.day else add_months(base.year, base.month, -1)
        d = safe_date(y, m, day)
        return (d, d, True) if d else None
    return None


def short_year(yy: int, base: date) -> int:
    """``'23``: the year in the century that puts it at most ten years after ``base`` (as the query side
    reads it against the recall's clock: :func:`remnic.recall.dates.full_years`)."""
    year = 2000 + yy
    return year - 100 if year > base.year + 10 else year


def _rel_season(rel: str, start_month: int, base: date) -> Resolved:
    # The season's start in the base year, moved to the most recent one that has begun (or the next).
    y = base.year if start_month != 12 or base.month == 12 else base.year - 1
    s, e = season_span(y, start_month)
    if rel in ("last", "past", "this past") and e >= base:  # not over yet: the one before
        s, e = season_span(y - 1, start_month)
    elif rel == "next" and s <= base:
        s, e = season_span(y + 1, start_month)
    return s, e, True


def _rel_month(rel: str, m: int, base: date) -> Resolved:
    if m == 5 and rel not in ("last", "next"):
        return None  # "this may", "in may", … are far more often the verb than the month
    if rel == "last":
        y = base.year if m < base.month else base.year - 1
    elif rel == "next":
        y = base.year if m > base.month else base.year + 1
    elif rel == "this":
        y = base.year
    else:
        y = nearest_year(base, m)
    s, e = month_span(y, m)
    return s, e, True


def _last_n(base: date, unit: str, n: int) -> Resolved:
    """The last ``n`` days, weeks, weekends, months or years up to and including ``base``."""
    try:
        if unit == "day":
            return base - timedelta(days=n), base, True
        if unit in ("week", "weekend"):
            return base - timedelta(weeks=n), base, True
        if unit == "month":
            y, m = add_months(base.year, base.month, -n)
            return date(y, m, min(base.day, month_span(y, m)[1].day)), base, True
        return date(base.year - n, base.month, min(base.day, 28 if base.month == 2 else 31)), base, True
    except (OverflowError, ValueError):
        return None


def _unit_offset(base: date, unit: str, n: int, *, fuzzy: bool = False) -> Resolved:
    """The day, week, weekend, month or year ``n`` units from ``base`` (negative: before it)."""
    try:
        if unit == "day":
            d = base + timedelta(days=n)
            if fuzzy:
                return d - timedelta(days=2), d + timedelta(days=1), True
            return d, d, True
        if unit == "week":
            s, e = week_of(base + timedelta(weeks=n))
            return s, e, True
        if unit == "weekend":
            s, e = last_weekend(base) if n < 0 else last_weekend(base + timedelta(days=7))
            shift = timedelta(weeks=(n + 1) if n < 0 else (n - 1))
            return s + shift, e + shift, True
        if unit == "month":
            y, m = add_months(base.year, base.month, n)
            s, e = month_span(y, m)
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
_QUARTER_HINT = re.compile(r"q[1-4]|quarter")


def _possible(text: str) -> frozenset[str]:
    """The kinds of pattern that can match ``text`` at all: each needs some words or digits (necessary
    conditions, checked as plain substrings of the case-folded text), and most notes name no date, so
    most of the patterns need not scan them."""
    t = text.casefold()
    digit = _DIGIT.search(t) is not None
    century = "19" in t or "20" in t
    month = any(m in t for m in _MONTH_STEMS)
    unit = any(u in t for u in _UNITS)
    season = any(w in t for w in SEASONS)
    ok = {
        "iso": century and "-" in t,
        "numeric": century and "/" in t,
        "dotted": century and "." in t,
        "dmy_eu": century and any(stem in t for stem in _EU_STEMS),
        "quarter": century and _QUARTER_HINT.search(t) is not None,
        "part": century and any(w in t for w in ("early", "mid", "late")),
        "season_year": century and season,
        "mdy": century and month,
        "dmy": century and month,
        "my": century and month,
        "my_short": month and ("'" in t or "\u2018" in t or "\u2019" in t),
        "md": digit and month,
        "dm": digit and month,
        "last_n": unit and "the" in t and any(w in t for w in ("last", "past", "previous")),
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
        "rel_season": season,
        "rel_month": month,
        "ordinal": digit and any(w in t for w in ("st", "nd", "rd", "th")),
        "year": century,
    }
    return frozenset(kind for kind, can in ok.items() if can)


def _matches(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    """Non-overlapping matches, the earliest first; at one position the first pattern in order wins."""
    found: list[tuple[int, int, int, str, re.Match[str]]] = []
    possible = _possible(text)
    for order, (kind, pattern) in enumerate(PATTERNS):
        if kind not in possible:
            continue
        for m in _compiled(pattern).finditer(text):
            found.append((m.start(), order, -m.end(), kind, m))
    taken_until = -1
    for start, _order, neg_end, kind, m in sorted(found):
        if start < taken_until:
            continue
        taken_until = -neg_end
        yield kind, m


class Unresolved(NamedTuple):
    """A date named in text that cannot be resolved: where, and what the X-ray says."""

    offset: int
    note: str
    """``February 29, 2023 (no such day)``: the text and why."""


def scan(text: str, base: date | None) -> tuple[list[DateSpan], list[Unresolved]]:
    """Every date expression in ``text`` resolved to a span (relative ones need ``base``), and the dates
    it names that cannot be resolved, each with why."""
    if not text:
        return [], []
    out: list[DateSpan] = []
    unresolved: list[Unresolved] = []
    for kind, m in _matches(text):
        got = _resolve(kind, {k: v for k, v in m.groupdict().items() if v is not None}, base)
        if isinstance(got, str):
            unresolved.append(Unresolved(m.start(), f"{m.group(0).strip()} ({got})"))
            continue
        if got is None:
            continue
        start, end, relative = got
        if start.year < 1900 or end.year > 2199 or end < start:
            continue
        if kind == "rel_month" and m.group("rel").lower() in ("last", "next"):
            kind = "rel_month_named"  # "last May" names one month; "in May" could be any year's
        elif kind == "rel_season" and m.group("rel").lower().startswith("in"):
            kind = "season"  # "in (the) summer": which year's is a guess, as with "in May"
        out.append(DateSpan(start, end, m.group(0).strip(), m.start(), relative, _KIND_AS.get(kind, kind)))
    return out, unresolved
