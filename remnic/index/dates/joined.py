"""Dates joined into ranges and lists ("from March to May 2023", "2021-2023", "in 2022, 2023 or 2024",
"between December 30, 2023 and January 2, 2024"), each read as one span covering all it names (pure).

The text is read once, left to right: every word that can name a date (a year, a month, a season, a
day, a weekday, "now") is an *item*, and consecutive items whose gap is a join ("to", "-", "until",
"through"; "and" after "between"; "and", "or", "&" or commas in a list) form a *chain*. A chain is
read as a whole, so a list that goes on ("in 2023 and 2024 and 2025", "from 2021 to 2023 and 2024")
is one span over all of it, or, when that cannot be, none (never part of it):

- An end without a year takes its neighbour's ("March" of "from March to May 2023"; "spring" of
  "spring and summer of 2023"), placed before it when it comes later in the calendar ("from November
  to February 2024": November 2023); a bare day takes its neighbour's month ("August 11-15, 2023",
  "between 1 and 20 September 2026").
- Bare years ("2021-2023", "2020 and 2022") are also how numbers are written ("room 2021-2022",
  "pages 2021-2023", "between 2020 and 2022 requests per second"). A chain of bare years is read as
  dates only with date context on both sides: opened by "from"/"between" or right after a date
  preposition ("in 2021-2023", "during 2022 or 2023", "the years 2021 to 2023"), and not followed by
  a word the numbers count or measure ("units", "dollars", "percent", "kb", …) or a plural that is a
  rate ("requests per second"). A plain plural after them is the sentence going on: "from 2019 to
  2021 sales doubled" and "in 2019 and 2020 people travelled less" are dates.
- A chain that cannot be one span (an item without a year or month to borrow, a weekday, a bare
  ordinal: "May 2023 or June", "on Monday and Tuesday", "on the 2nd and 3rd") is *open*: the query
  side shows it unresolved and sets no window when it holds a date that was resolved alone.

Items in a list whose gaps leave holes ("in 2019 or 2023") stay separate spans. A date next to a
range or list word whose other side is no item at all ("between the launch and May 2023") is
reported by :func:`half_joined`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date
from itertools import pairwise

from .spans import (
    MONTH_NAMES,
    MONTHS,
    SEASON_NAMES,
    SEASONS,
    WEEKDAYS,
    DateSpan,
    month_span,
    numeric_day,
    safe_date,
    season_span,
)

_M = r"(?:" + MONTH_NAMES + r")\b\.?"
_D = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b"
_Y = r"(?:19|20)\d\d\b"
_S = r"(?:" + SEASON_NAMES + r")\b"
_ITEM_RE = re.compile(  # grouped by the first character: the scan tries only the branches that can start there
    r"\b(?=[0-9adfjmnopstw])(?:"
    r"(?=\d)(?:(?P<iso>(?:19|20)\d\d-\d\d-\d\d\b)"
    r"|(?P<numeric>\d{1,2}/\d{1,2}/(?:19|20)\d\d\b)"
    rf"|(?P<dm>{_D}\s+(?:of\s+)?{_M}(?:,?\s+{_Y})?)"
    rf"|(?P<year>{_Y})"
    rf"|(?P<day>{_D}(?:,?\s+{_Y})?))"
    rf"|(?P<md>{_M}\s+{_D}(?:,?\s+{_Y})?)"
    rf"|(?P<month>{_M}(?:,?\s+(?:of\s+)?{_Y})?)"
    rf"|(?P<season>(?:the\s+)?{_S}(?:,?\s+(?:of\s+)?{_Y})?)"
    rf"|the\s+(?:(?P<the_dm>{_D}\s+(?:of\s+)?{_M}(?:,?\s+{_Y})?)|(?P<the_day>{_D}(?:,?\s+{_Y})?))"
    r"|(?P<weekday>(?:" + "|".join(WEEKDAYS) + r")\b)"
    r"|(?P<now>(?:now|today|(?:the\s+)?present)\b))(?![/\w])",
    re.IGNORECASE,
)
"""One item: a word or phrase that can name a date, or one end of a range."""
_GAP_MAX = 32  # a join is a few characters: a longer gap is no join (and never scanned twice)
_RANGE_JOIN = re.compile(r"\s*(?:(?:to|until|till|through|thru)\b|[-\u2013\u2014])\s*", re.IGNORECASE)
_LIST_JOIN = re.compile(
    r"\s*,?\s*(?:(?:and|or)\b|&)\s*(?:(?:in|on|during|around)\s+)?|\s*,\s*(?:(?:in|on|during|around)\s+)?",
    re.IGNORECASE,
)
_OPENER = re.compile(r"\b(?P<kw>between|from)\s+$", re.IGNORECASE)
_YEAR_CONTEXT = re.compile(
    r"\b(?:in|during|of|for|from|around|by|between|throughout|since|until|years?)\s+$", re.IGNORECASE
)
"""Date context right before a chain of bare years ("in 2021-2023", "the years 2021 to 2023")."""
_NEXT_WORD = re.compile(r"\s*(?P<w>%|[^\W\d_]+)")
_COUNT_WORDS = frozenset(
    ("per", "percent", "pct", "%", "x", "times", "units", "items", "pieces", "copies", "kelvin")
    + ("dollars", "euros", "pounds", "yen", "cents", "bytes", "words", "lines", "rows", "votes")
    + ("hz", "kb", "mb", "gb", "tb", "km", "kg", "ms", "usd", "eur", "gbp", "k", "m")
)
"""Words after a number that make it a count or a measure."""
_RATE_WORDS = frozenset(("per", "a", "an", "each", "every"))
"""After a plural, these make it a rate of a count ("2020 and 2022 requests per second"). A plural alone
does not: "from 2019 to 2021 sales doubled", "in 2019 and 2020 people travelled less" are dates."""
_NOT_PLURAL = frozenset(("as", "was", "has", "whereas", "does", "goes", "yes", "its", "perhaps", "always"))
_YEAR_IN = re.compile(r"(?:19|20)\d\d")
_CONTEXT = 40
"""Characters looked at before a chain for its opener or date context (bounded: linear on long text)."""

_WHICH_WINTER = "which winter: the one ending in that year or the one starting in it?"
_FIELD_FORMS: dict[str, str] = {
    "iso": r"(?P<y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)",
    "numeric": r"(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})",
    "md": rf"(?P<m>{MONTH_NAMES})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?",
    "dm": rf"(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{MONTH_NAMES})\.?"
    rf"(?:,?\s+(?P<y>\d{{4}}))?",
    "season": rf"(?:the\s+)?(?P<s>{SEASON_NAMES})(?:,?\s+(?:of\s+)?(?P<y>\d{{4}}))?",
    "month": rf"(?P<m>{MONTH_NAMES})\.?(?:,?\s+(?:of\s+)?(?P<y>\d{{4}}))?",
    "year": r"(?P<y>\d{4})",
    "day": r"(?:the\s+)?(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{4}))?",
}
"""The parts each item form names, compiled on first use (:func:`_field_form`): a text naming no date needs none."""


@functools.cache
def _field_form(kind: str) -> re.Pattern[str]:
    return re.compile(_FIELD_FORMS[kind], re.IGNORECASE)


@dataclass
class _End:
    """One item as written: the parts it names (None: not named)."""

    y: int | None = None
    m: int | None = None
    d: int | None = None
    season: int | None = None
    """The season's first month (winter: 12)."""
    now: bool = False
    weekday: bool = False

    def named(self) -> bool:
        """Whether it names a month or season (a day names its month)."""
        return self.m is not None or self.season is not None

    def bare_day(self) -> bool:
        return self.d is not None and self.m is None

    def key(self) -> tuple[int, int]:
        return (self.m or self.season or 1, self.d or 1)

    def span(self) -> tuple[date, date] | str | None:
        """The days it names; a reason when there are none; None when it lacks a year or month."""
        if self.y is None or self.weekday or self.bare_day():
            return None
        if self.d is not None:
            assert self.m is not None
            d = safe_date(self.y, self.m, self.d)
            return (d, d) if d else "no such day"
        if self.m is not None:
            return month_span(self.y, self.m)
        if self.season is not None:
            return season_span(self.y, self.season)
        return date(self.y, 1, 1), date(self.y, 12, 31)


def _fields(kind: str, text: str) -> _End | str:
    """The parts one item names; a reason when it names an impossible or ambiguous date."""
    if kind == "now":
        return _End(now=True)
    if kind == "weekday":
        return _End(weekday=True)
    m = _field_form(kind).fullmatch(text.strip())
    assert m is not None, (kind, text)  # each item form has its field form
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    y = int(g["y"]) if "y" in g else None
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


@dataclass
class Joined:
    """A chain a text names: where it is written (with its "from"/"between") and how it reads."""

    start: int
    stop: int
    text: str
    spans: list[DateSpan]
    """One span covering it all; a list's items when they leave gaps (no single window then)."""
    unresolved: str = ""
    """Why it could not be resolved (an end names an impossible or ambiguous date)."""
    outcome: str = "date"
    """``date`` (read: :attr:`spans`), ``reason`` (:attr:`unresolved`), ``count`` (numbers, not years:
    no date inside it stands), ``words`` (a form read alone, as "winter 2023-24") or ``open`` (no one
    span: a date resolved inside it is only part of what it names)."""


@dataclass(slots=True)
class _Item:
    start: int
    stop: int
    kind: str

    def has_year(self, text: str) -> bool:
        return _YEAR_IN.search(text, self.start, self.stop) is not None

    def day_like(self) -> bool:
        return self.kind in ("md", "dm", "day")


def _chains(text: str) -> list[tuple[list[_Item], list[str]]]:
    """Runs of items joined by range or list words: (items, joins), ``joins[i]`` before ``items[i + 1]``
    (``range``, ``and``, ``or``, ``comma``). One pass over the text; each gap is read once."""
    out: list[tuple[list[_Item], list[str]]] = []
    items: list[_Item] = []
    joins: list[str] = []

    def close() -> None:
        while joins and joins[-1] == "comma":  # "May 3, 2023, 12 people": commas alone join no list
            joins.pop()
            items.pop()
        if joins:
            out.append((items[:], joins[:]))
        items.clear()
        joins.clear()

    for m in _ITEM_RE.finditer(text):
        kind = m.lastgroup or ""
        item = _Item(m.start(), m.end(), kind[4:] if kind.startswith("the_") else kind)
        join = _join(text, items[-1], item) if items else None
        if join is None:
            close()
        else:
            joins.append(join)
        items.append(item)
    close()
    return out


def _join(text: str, prev: _Item, item: _Item) -> str | None:
    """How ``item`` is joined to the item before it (None: it is not)."""
    if item.start - prev.stop > _GAP_MAX:
        return None
    gap = text[prev.stop : item.start]
    if _RANGE_JOIN.fullmatch(gap):
        return "range"
    if not _LIST_JOIN.fullmatch(gap):
        return None
    if item.kind == "day" and not (prev.day_like() and not prev.has_year(text)):
        return None  # "in May 2023 and 5 friends": a number; "May 3 and 4, 2023", "the 2nd and 3rd": days
    if text[item.start : item.stop] == "may":
        return None  # "in March 2023 and may ship again": the verb (as forms read "in may")
    words = gap.lower()
    return "or" if re.search(r"\bor\b", words) else "and" if re.search(r"\band\b|&", words) else "comma"


def _counts(text: str, stop: int) -> bool:
    """Whether the word after ``stop`` is a noun the numbers before it count ("2020 and 2022 requests")."""
    m = _NEXT_WORD.match(text, stop)
    if m is None:
        return False
    word = m.group("w")
    low = word.lower()
    if low in _COUNT_WORDS:
        return True
    plural = word.islower() and low.endswith("s") and not low.endswith(("ss", "us", "is")) and low not in _NOT_PLURAL
    after = _NEXT_WORD.match(text, m.end()) if plural else None
    return after is not None and after.group("w").lower() in _RATE_WORDS


def _lend(ends: list[_End], ranged: list[bool]) -> None:
    """Months to bare days, then years to ends without one, from their neighbours (in place)."""
    for i, e in enumerate(ends):  # "August 11-15", "May 3 and 4": the day before's month
        if e.bare_day() and i > 0 and ends[i - 1].m is not None and ends[i - 1].d is not None:
            e.m = ends[i - 1].m
    for i in range(len(ends) - 2, -1, -1):  # "between 1 and 20 September", "1, 2 and 3 May": the next's
        e, nxt = ends[i], ends[i + 1]
        if e.bare_day() and nxt.m is not None and nxt.d is not None:
            e.m = nxt.m
    for i in range(len(ends) - 2, -1, -1):  # "March or April 2023", "from March to May 2023": the next's
        e, nxt = ends[i], ends[i + 1]
        if e.y is None and nxt.y is not None and nxt.named() and e.named():  # "fall and 2023": no season
            e.y = nxt.y - 1 if e.key() > nxt.key() else nxt.y
    for i in range(1, len(ends)):  # "from March 2023 to May": a range's second end takes the first's
        e, prev = ends[i], ends[i - 1]
        if ranged[i - 1] and e.y is None and prev.y is not None and prev.named() and e.named():
            e.y = prev.y + 1 if e.key() < prev.key() else prev.y


def opened_at(text: str, pos: int) -> int:
    """Where the "from"/"between" opening a range at ``pos`` starts (``pos`` when none does)."""
    opener = _OPENER.search(text, max(0, pos - _CONTEXT), pos)
    return opener.start() if opener else pos


def _read(text: str, items: list[_Item], joins: list[str], now: date | None) -> Joined:
    """One chain read as a whole (see the module's rules)."""
    first, last = items[0], items[-1]
    opener = _OPENER.search(text, max(0, first.start - _CONTEXT), first.start)
    kw = opener.group("kw").lower() if opener else ""
    start = opener.start() if opener else first.start
    said = text[start : last.stop]

    def out(outcome: str, spans: list[DateSpan] | None = None, reason: str = "") -> Joined:
        return Joined(start, last.stop, said, spans or [], reason, outcome)

    # "between A and B": the first "and" is the range's; later ones join a list ("… and B or C")
    ranged = [j == "range" or (i == 0 and kw == "between" and j == "and") for i, j in enumerate(joins)]
    if any(a and b for a, b in pairwise(ranged)):
        return out("open")  # "from 2021 to 2023 to 2025"
    ends = [_fields(it.kind, text[it.start : it.stop]) for it in items]
    years = [it.kind == "year" for it in items]
    for i, r in enumerate(ranged):
        a, b = ends[i], ends[i + 1]
        if not (r and isinstance(a, _End) and isinstance(b, _End)):
            if r and a == _WHICH_WINTER and isinstance(b, _End) and b.m is b.season is None:
                return out("words")  # "winter 2023-24", "winter 2023-2024": one season (forms)
            continue
        if years[i] and _next_year(a, b, text, items[i + 1]):
            assert a.y is not None
            ends[i + 1], years[i + 1] = _End(a.y + 1), True  # "2023-24": a year and the next
    if all(years):
        context = kw or _YEAR_CONTEXT.search(text, max(0, first.start - _CONTEXT), first.start)
        if not context or _counts(text, last.stop):
            return out("count")  # "room 2021-2022", "between 2020 and 2022 requests": numbers
    reason = next((e for e in ends if isinstance(e, str)), None)
    if reason is not None:
        return out("reason", reason=reason)
    parts = [e for e in ends if isinstance(e, _End)]
    _lend(parts, ranged)
    spans: list[tuple[date, date]] = []
    relative = False
    i = 0
    while i < len(parts):
        a = parts[i]
        if i < len(ranged) and ranged[i]:
            b = parts[i + 1]
            lo = a.span()
            hi: tuple[date, date] | str | None = (now, now) if b.now and now is not None else b.span()
            relative = relative or b.now
            i += 2
        else:
            lo = hi = a.span()
            i += 1
        for got in (lo, hi):
            if isinstance(got, str):
                return out("reason", reason=got)
        if lo is None or hi is None:
            return out("open")  # an item without its year or month, a weekday, "now" in a list
        assert not isinstance(lo, str) and not isinstance(hi, str)
        spans.append((min(lo[0], hi[0]), max(lo[1], hi[1])))
    return out("date", _one_or_each(spans, items, ranged, text, said, start, relative))


def _next_year(a: _End, b: _End, text: str, item: _Item) -> bool:
    """``2023-24``: a year and the next one's last two digits (over 12: "2011-12" could be December)."""
    two = text[item.start : item.stop]
    return (
        item.kind == "day"
        and two.isdigit()
        and len(two) == 2
        and b.d is not None
        and b.d > 12
        and (b.d == (a.y or 0) % 100 + 1)
    )


def _one_or_each(
    spans: list[tuple[date, date]], items: list[_Item], ranged: list[bool], text: str, said: str, at: int, rel: bool
) -> list[DateSpan]:
    """One span over adjoining parts ("in 2022 or 2023"), else each part (a window holds no holes)."""
    ordered = sorted(spans)
    reach = ordered[0][1]
    for lo, hi in ordered[1:]:
        if (lo - reach).days > 1:
            break
        reach = max(reach, hi)
    else:
        return [DateSpan(ordered[0][0], reach, said, at, rel, "range")]
    out: list[DateSpan] = []
    i = 0
    for lo, hi in spans:  # in the order written: each part's own words (the first with its "from")
        n = 2 if i < len(ranged) and ranged[i] else 1
        begin, b = at if i == 0 else items[i].start, items[i + n - 1]
        out.append(DateSpan(lo, hi, text[begin : b.stop], begin, rel, "list"))
        i += n
    return out


def joined(text: str, now: date | None, *, dated_only: bool = False) -> list[Joined]:
    """The chains ``text`` names, each read (non-overlapping, in order of where they are written);
    ``now`` ends a range "to now" (None: such a range is open). ``dated_only``: only the chains
    naming a year (the others can only be open: they change no date read alone)."""
    return [
        _read(text, items, joins, now)
        for items, joins in _chains(text)
        if not dated_only or any(it.has_year(text) for it in items)
    ]


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
_REACH = 160
"""Characters before a date :func:`half_joined` reads (a clause; bounded: linear on long text)."""


def half_joined(text: str, span: DateSpan) -> str:
    """The phrase when ``span`` is one end of a range or one item of a list whose other side is no
    date read here ("between the launch and May 2023", "from March 2023 to the launch", "in May 2023
    or so"); '' when it stands alone."""
    lo = max(0, span.offset - _REACH)
    dash = _DASH_NUMBER.match(text, span.stop)
    if dash is not None:
        return text[span.offset : dash.end()].strip()
    kw = _KW_BEFORE.search(text, lo, span.offset)
    opens = kw is not None or _OPENS.match(span.text) is not None
    join = (_JOIN_AFTER.match(text, span.stop) if opens else None) or _OR_AFTER.match(text, span.stop)
    if join is not None:
        more = _WORDS_AFTER.match(text, join.end())
        return text[kw.start() if kw else span.offset : more.end() if more else join.end()].strip()
    j = _JOIN_BEFORE.search(text, lo, span.offset)
    clause = _KW_IN_CLAUSE.search(text, lo, j.start()) if j else None
    if clause is not None:
        return text[clause.start() : span.stop].strip()
    orb = _OR_BEFORE.search(text, lo, span.offset)
    if orb is not None:
        prev = _WORDS_BEFORE.search(text, lo, orb.start())
        return text[prev.start() if prev else orb.start() : span.stop].strip()
    return ""
