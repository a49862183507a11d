"""The query side: dates and ranges a query names, as BM25 date terms and, where unambiguous, a window."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import date, timedelta

from .forms import scan
from .joined import Joined, half_joined, opened_at
from .read import inside, read
from .spans import DateSpan

_ASKS_WHEN_RE = re.compile(
    r"\bwhen\b|\bhow\s+long\b|\bwhat\s+(?:year|month|date|day|time|week)\b|\bwhich\s+(?:year|month|day|date|week)\b"
    r"|\bhow\s+many\s+(?:days|weeks|months|years)\b|\bsince\s+when\b|\bwhat\s+age\b",
    re.IGNORECASE,
)
YEARLESS = ("md", "dm", "rel_month", "season")
"""Kinds that name a month, day or season without its year ("in May", "16 August", "in summer"): resolved
against today's date they would be a guess, so they scope nothing and add no date terms."""
_RELATIVE_WORD = re.compile(r"(?:last|this|next|previous|coming|past)\b", re.IGNORECASE)
WINDOW_MAX_DAYS = 1100
"""The longest range (about three years) that sets a window: one that long keeps most of a store and
hides what it leaves out on a reading of the query alone; a longer one is searched by its date terms."""


def shown_yearless(span: DateSpan) -> bool:
    """Shown as "(no year: searched as words)": a month or day or season named without a year ("this
    March" names this year's)."""
    return span.kind in YEARLESS and not _RELATIVE_WORD.match(span.text)


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
    """Time relations the query names that no date could be found for ("before the trip"), and dates it
    names that cannot be resolved ("February 29, 2023 (no such day)")."""
    relation: str = ""
    """``before``/``after``/``since``/``until``/``prior to`` when the window is open on one side."""
    too_long: tuple[int, int] | None = None
    """(days, the most a window spans) when the one date named is too long a range for a window."""

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
        parts = [
            f"'{s.text}' (no year: searched as words)" if shown_yearless(s) else f"'{s.text}' → {s.label()}"
            for s in self.spans
        ]
        if self.relation and self.window is not None and len(self.spans) == 1:
            # An open window is what the query means by "before May 2023", not the month itself.
            said = self.spans[0].text
            said = said if said.lower().startswith(self.relation) else f"{self.relation} {said}"
            parts = [f"'{said}' → {_open(self.window)}"]
        if window is not None:
            parts.append(f"filter {_open(window)}")
        elif filter_off and self.window is not None:
            parts.append("no filter (recall.dateFilter is off)")
        elif self.too_long is not None:
            days, most = self.too_long
            parts.append(f"no filter (too long for a filter: {days} days > {most})")
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


def _relation(text: str, s: DateSpan) -> str:
    """``before``/``after``/… when the query sets it right before ``s`` ("before May 2023", "since 2021")."""
    word = ""
    for rel in _BEFORE_AFTER_RE.finditer(text[: s.stop]):
        if rel.start() <= s.offset <= rel.end():
            word = re.sub(r"\s+", " ", rel.group("rel").lower())
    return word


def query_dates(text: str, now: date, *, window_max_days: int = WINDOW_MAX_DAYS) -> QueryDates:
    """Dates and ranges named in a query, resolved against ``now`` (the recall's clock).

    A window is set when the query names exactly one date, range or list of adjoining dates ("from
    March to May 2023", "in 2022 or 2023") that carries its year or is relative to ``now``, optionally
    after ``before``/``after``/``since``/``until``, and spans at most ``window_max_days``. A month, day
    or season without a year is a term only; a date that cannot be resolved, or a range or list part
    of which is no date ("May 2023 or June", "on Monday and Tuesday"), leaves the window off (never a
    window on part of what was asked) and is shown as unresolved.
    """
    out = QueryDates(asks_when=bool(_ASKS_WHEN_RE.search(text)))
    got = read(text, now)
    spans = got.spans
    out.spans = spans
    out.unresolved = got.unresolved
    named = [s for s in spans if s.kind not in YEARLESS]
    out.unresolved += _open_notes(text, got.groups, named)
    if len(named) == 1 and named[0].kind != "range" and not out.unresolved:
        half = half_joined(text, named[0])
        out.unresolved += [half] if half else []
    if len(named) == 1 and len(spans) == 1 and not out.unresolved:
        s = named[0]
        if s.days > window_max_days:
            out.too_long = (s.days, window_max_days)
        else:
            out.window, out.relation = _window(text, s)
    offsets = sorted(sp.offset for sp in [*got.found, *spans])
    regions = [(g.start, g.stop) for g in got.groups]
    starts = [g.start for g in got.groups]
    for m in _BEFORE_AFTER_RE.finditer(text):
        what = m.group("what").strip()
        # "before 2023" is one span; "from 2021 until 2023" one range
        i = bisect_left(offsets, m.start())
        named_here = (i < len(offsets) and offsets[i] < m.end()) or inside(m.start(), regions, starts)
        if not named_here and not scan(what, now)[0]:
            out.unresolved.append(f"{m.group('rel').lower()} {what}")
    terms: list[str] = []
    if out.window is None or (out.window[0] != date.min and out.window[1] != date.max):  # open: a filter, no terms
        for s in named:
            terms += s.tokens()
    out.terms = list(dict.fromkeys(terms))
    return out


def _window(text: str, s: DateSpan) -> tuple[tuple[date, date], str]:
    """The window of the one date a query names, open on one side after "before", "since", … (and that word)."""
    word = _relation(text, s)
    if word in ("before", "prior to", "until"):
        return (date.min, s.start - timedelta(days=1) if word != "until" else s.end), word
    if word in ("after", "since"):
        return (s.end + timedelta(days=1) if word == "after" else s.start, date.max), word
    return (s.start, s.end), word


def _open_notes(text: str, groups: list[Joined], named: list[DateSpan]) -> list[str]:
    """The phrase of each range or list that is no one span but holds a date resolved alone ("May 2023
    or June", "on Monday and Tuesday", "from 2021 to March"): a window on that date would hold only
    part of what was asked."""
    stops = [s.stop for s in named]  # the spans never overlap: their stops are in order too
    out = []
    for g in groups:
        if g.outcome != "open":
            continue
        i = bisect_right(stops, g.start)
        inner = []
        while i < len(named) and named[i].offset < g.stop:
            inner.append(named[i])
            i += 1
        if inner:
            lo = opened_at(text, min(g.start, inner[0].offset))  # "from last Monday to Wednesday"
            out.append(text[lo : max(g.stop, inner[-1].stop)].strip())
    return out
