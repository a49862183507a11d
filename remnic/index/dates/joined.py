"""Dates a query joins: ranges ("from March to May 2023", "2021-2023", "between December 30, 2023 and
January 2, 2024") and lists ("in 2022 or 2023"), each one span that covers all it names (pure).

An end without a year takes the other end's ("March" of "from March to May 2023"), placed before it
when it comes later in the calendar ("from November to February 2024": November 2023). Ends with no
year at all are no range: their words are searched as written, as for "in May". A date next to a
range or list word whose other side is no date ("between the launch and May 2023") is reported by
:func:`half_joined`, so the caller can leave the window off rather than scope to part of what was asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from .spans import (
    MONTH_NAMES,
    MONTHS,
    SEASON_NAMES,
    SEASONS,
    DateSpan,
    month_span,
    numeric_day,
    safe_date,
    season_span,
)

_M = r"(?:" + MONTH_NAMES + r")\.?"
_D = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b"
_Y = r"(?:19|20)\d\d\b"
_S = r"(?:" + SEASON_NAMES + r")"
_END = (
    r"(?:(?:19|20)\d\d-\d\d-\d\d\b"
    r"|\d{1,2}/\d{1,2}/(?:19|20)\d\d\b"
    rf"|{_M}\s+{_D}(?:,?\s+{_Y})?"
    rf"|(?:the\s+)?{_D}\s+(?:of\s+)?{_M}(?:,?\s+{_Y})?"
    rf"|(?:the\s+)?{_S}(?:,?\s+(?:of\s+)?{_Y})?"
    rf"|{_M}(?:,?\s+(?:of\s+)?{_Y})?"
    rf"|{_Y}"
    r"|now\b|today\b|(?:the\s+)?present\b)"
)
"""One end of a range or item of a list (no groups: :func:`_fields` reads it)."""
_LAST_END = rf"(?:{_END}|{_D}(?:,?\s+{_Y})?)"  # "August 11-15, 2023": the second end may be a bare day
_JOIN = r"\s*(?P<join>\b(?:and|to|until|till|through|thru)\b|-|\u2013|\u2014)\s*"
_RANGE_RE = re.compile(rf"\b(?:(?P<kw>between|from)\s+)?(?P<a>{_END}){_JOIN}(?P<b>{_LAST_END})(?![\w/])", re.IGNORECASE)
_LIST_RE = re.compile(
    rf"\b(?P<a>{_END})(?P<mid>(?:\s*,\s*{_END})*)\s*,?\s*(?:\b(?:or|and)\b|&)\s*(?P<b>{_END})(?![\w/])",
    re.IGNORECASE,
)
_ITEM_RE = re.compile(_END, re.IGNORECASE)
_YEAR_ONLY = re.compile(_Y)
_PREPOSITION_BEFORE = re.compile(r"\b(?:in|during|of|for|from|around|by)\s+$", re.IGNORECASE)

_WHICH_WINTER = "which winter: the one ending in that year or the one starting in it?"
_FIELD_FORMS: list[tuple[str, re.Pattern[str]]] = [
    (k, re.compile(p, re.IGNORECASE))
    for k, p in [
        ("iso", r"(?P<y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)"),
        ("numeric", r"(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})"),
        ("md", rf"(?P<m>{MONTH_NAMES})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?"),
        (
            "dm",
            rf"(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{MONTH_NAMES})\.?(?:,?\s+(?P<y>\d{{4}}))?",
        ),
        ("season", rf"(?:the\s+)?(?P<s>{SEASON_NAMES})(?:,?\s+(?:of\s+)?(?P<y>\d{{4}}))?"),
        ("month", rf"(?P<m>{MONTH_NAMES})\.?(?:,?\s+(?:of\s+)?(?P<y>\d{{4}}))?"),
        ("year", r"(?P<y>\d{4})"),
        ("day", r"(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{4}))?"),
        ("now", r"now|today|(?:the\s+)?present"),
    ]
]


@dataclass
class _End:
    """One end of a range as written: the parts it names (None: not named)."""

    y: int | None = None
    m: int | None = None
    d: int | None = None
    season: int | None = None
    """The season's first month (winter: 12)."""
    now: bool = False

    def named(self) -> bool:
        """Whether it names a month or season (a day names its month)."""
        return self.m is not None or self.season is not None

    def key(self) -> tuple[int, int]:
        return (self.m or self.season or 1, self.d or 1)

    def span(self) -> tuple[date, date] | str:
        """The days it names, once it has its year; a reason when there are none."""
        assert self.y is not None
        if self.d is not None:
            assert self.m is not None
            d = safe_date(self.y, self.m, self.d)
            return (d, d) if d else "no such day"
        if self.m is not None:
            return month_span(self.y, self.m)
        if self.season is not None:
            return season_span(self.y, self.season)
        return date(self.y, 1, 1), date(self.y, 12, 31)


def _fields(text: str) -> _End | str | None:
    """The parts one end names; a reason when it names an impossible or ambiguous date."""
    text = text.strip()
    for kind, form in _FIELD_FORMS:
        m = form.fullmatch(text)
        if m is None:
            continue
        g = {k: v for k, v in m.groupdict().items() if v is not None}
        y = int(g["y"]) if "y" in g else None
        if kind == "now":
            return _End(now=True)
        if kind == "numeric":
            got = numeric_day(int(g["a"]), int(g["b"]), int(g["y"]))
            return got if isinstance(got, str) else _End(got.year, got.month, got.day)
        month = (int(g["m"]) if kind == "iso" else MONTHS[g["m"].lower()]) if "m" in g else None
        if kind == "iso" and (month is None or not 1 <= month <= 12):
            return "no such day"
        season = SEASONS[g["s"].lower()] if "s" in g else None
        if season == 12 and y is not None:
            return _WHICH_WINTER
        return _End(y, month, int(g["d"]) if "d" in g else None, season)
    return None


@dataclass
class Joined:
    """A range or list a query names: where it is written and the span(s) it resolves to."""

    start: int
    stop: int
    text: str
    spans: list[DateSpan]
    """One span covering it all; a list's items when they leave gaps (no single window then)."""
    unresolved: str = ""
    """Why it could not be resolved (an end names an impossible or ambiguous date)."""


def _next_year(a: _End | str | None, b: _End | str | None, join: str) -> bool:
    """``2023-24``: a year and the next one's last two digits (over 12: "2011-12" could be December)."""
    if not (isinstance(a, _End) and isinstance(b, _End) and a.y is not None and a.m is a.d is a.season is None):
        return False
    return join in "-\u2013" and b.d is not None and b.y is None and b.d > 12 and b.d == (a.y + 1) % 100


def _range(m: re.Match[str], text: str, now: date) -> Joined | None:
    """The span from the first day of one end to the last of the other (None: no range after all)."""
    a, b = _fields(m.group("a")), _fields(m.group("b"))
    kw, join = (m.group("kw") or "").lower(), m.group("join").lower()
    if join == "and" and kw != "between":
        return None  # "2022 and 2023" is a list
    if a is None or b is None or (isinstance(a, _End) and a.now):
        return None
    if _next_year(a, b, join):
        assert isinstance(a, _End) and a.y is not None
        b = _End(a.y + 1)  # "2023-24": a year and the next
    if isinstance(b, _End) and b.d is not None and b.m is None and not (isinstance(a, _End) and a.m and a.d):
        return None  # "winter 2023-24" (one season: see forms), "3-4 pm"
    if a == _WHICH_WINTER and isinstance(b, _End) and b.m is None and b.season is None:
        return None  # "winter 2023-2024": one season (forms)
    said = m.group(0).strip()
    for end in (a, b):
        if isinstance(end, str):
            return Joined(m.start(), m.end(), said, [], end)
    assert isinstance(a, _End) and isinstance(b, _End)
    if b.d is not None and b.m is None:  # "August 11-15": the day of the first end's month
        b.m = a.m
    if a.named() and b.named():  # a year is lent only between ends that name more than one ("2021 to March")
        if a.y is None and b.y is not None:
            a.y = b.y - 1 if a.key() > b.key() else b.y
        elif b.y is None and a.y is not None:
            b.y = a.y + 1 if b.key() < a.key() else a.y
    elif not kw and join == "to" and not _PREPOSITION_BEFORE.search(text[: m.start()]):
        return None  # "sold 2000 to 2020 units": numbers, not years
    if a.y is None or (b.y is None and not b.now):
        return None  # no year at all: searched as words
    first = a.span()
    last = (now, now) if b.now else b.span()
    if isinstance(first, str) or isinstance(last, str):
        return Joined(m.start(), m.end(), said, [], first if isinstance(first, str) else str(last))
    lo, hi = min(first[0], last[0]), max(first[1], last[1])
    return Joined(m.start(), m.end(), said, [DateSpan(lo, hi, said, m.start(), b.now, "range")])


def _list(m: re.Match[str], text: str) -> Joined | None:
    """One span over adjoining items ("in 2022 or 2023"), else the items (None: no list of dates)."""
    said = m.group(0).strip()
    items = [m.group("a"), *_ITEM_RE.findall(m.group("mid")), m.group("b")]
    ends = [_fields(i) for i in items]
    if any(e is None or (isinstance(e, _End) and (e.now or (e.d is not None and e.m is None))) for e in ends):
        return None
    bad = next((e for e in ends if isinstance(e, str)), None)
    if bad is not None:
        return Joined(m.start(), m.end(), said, [], bad)
    parts = [e for e in ends if isinstance(e, _End)]
    if all(_YEAR_ONLY.fullmatch(i.strip()) for i in items) and not _PREPOSITION_BEFORE.search(text[: m.start()]):
        return None  # "2000 and 2020 units": numbers, not years
    for i in range(len(parts) - 2, -1, -1):  # "March or April 2023": the year of the next item
        if parts[i].y is None and parts[i + 1].y is not None:
            nxt = parts[i + 1]
            assert nxt.y is not None
            parts[i].y = nxt.y - 1 if parts[i].key() > nxt.key() else nxt.y
    if any(p.y is None for p in parts):
        return None
    spans: list[DateSpan] = []
    for item, p in zip(items, parts, strict=True):
        got = p.span()
        if isinstance(got, str):
            return Joined(m.start(), m.end(), said, [], got)
        spans.append(DateSpan(got[0], got[1], item.strip(), m.start() + m.group(0).find(item), False, "list"))
    ordered = sorted(spans, key=lambda s: s.start)
    reach = ordered[0].end
    for s in ordered[1:]:
        if (s.start - reach).days > 1:
            return Joined(m.start(), m.end(), said, spans)  # "in 2019 or 2023": no one window holds just those
        reach = max(reach, s.end)
    return Joined(m.start(), m.end(), said, [DateSpan(ordered[0].start, reach, said, m.start(), False, "range")])


def joined(text: str, now: date) -> list[Joined]:
    """The ranges, then the lists, a query names (non-overlapping, in order of where they are written)."""
    out: list[Joined] = []
    for m in _RANGE_RE.finditer(text):
        got = _range(m, text, now)
        if got is not None:
            out.append(got)
    for m in _LIST_RE.finditer(text):
        if any(j.start < m.end() and m.start() < j.stop for j in out):
            continue
        got = _list(m, text)
        if got is not None:
            out.append(got)
    return sorted(out, key=lambda j: j.start)


_KW_BEFORE = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)
_JOIN_AFTER = re.compile(r"\s*(?:\b(?:and|to|until|till|through|thru)\b|[-\u2013\u2014])\s*(?=\S)", re.IGNORECASE)
_JOIN_BEFORE = re.compile(r"(?:\b(?:and|to|until|till|through|thru)|[-\u2013\u2014])\s*$", re.IGNORECASE)
_KW_IN_CLAUSE = re.compile(r"\b(?:between|from)\b[^?.!;]*$", re.IGNORECASE)
_OR_AFTER = re.compile(r"\s*,?\s*\bor\b(?!\s+not\b)\s*(?=\S)", re.IGNORECASE)
_OR_BEFORE = re.compile(r"\bor\s+(?:(?:in|on|during|around)\s+)?$", re.IGNORECASE)
_WORDS_AFTER = re.compile(r"[^\s?.!;,]+(?:\s+[^\s?.!;,]+){0,2}")
_WORDS_BEFORE = re.compile(r"(?:[^\s?.!;,]+\s+){1,3}$")
_DASH_NUMBER = re.compile(r"[-\u2013]\d+")  # "in 2023-25", "in 2011-12": a range or a month, not the year alone
_OPENS = re.compile(r"(?:between|from)\s", re.IGNORECASE)


def half_joined(text: str, span: DateSpan) -> str:
    """The phrase when ``span`` is one end of a range or one item of a list whose other side is no
    date read here ("between the launch and May 2023", "from March 2023 to the launch", "in May 2023
    or so"); '' when it stands alone."""
    before = text[: span.offset]
    dash = _DASH_NUMBER.match(text, span.stop)
    if dash is not None:
        return text[span.offset : dash.end()].strip()
    kw = _KW_BEFORE.search(before)
    opens = kw is not None or _OPENS.match(span.text) is not None
    join = (_JOIN_AFTER.match(text, span.stop) if opens else None) or _OR_AFTER.match(text, span.stop)
    if join is not None:
        more = _WORDS_AFTER.match(text, join.end())
        return text[kw.start() if kw else span.offset : more.end() if more else join.end()].strip()
    j = _JOIN_BEFORE.search(before)
    clause = _KW_IN_CLAUSE.search(before[: j.start()]) if j else None
    if clause is not None:
        return text[clause.start() : span.stop].strip()
    orb = _OR_BEFORE.search(before)
    if orb is not None:
        prev = _WORDS_BEFORE.search(before[: orb.start()])
        return text[prev.start() if prev else orb.start() : span.stop].strip()
    return ""
