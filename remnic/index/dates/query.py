"""The query side: dates and ranges a query names, as BM25 date terms and, where unambiguous, a window."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from .forms import scan
from .joined import half_joined, joined
from .spans import MONTH_NAMES, MONTHS, DateSpan, nearest_year, safe_date

_ASKS_WHEN_RE = re.compile(
    r"\bwhen\b|\bhow\s+long\b|\bwhat\s+(?:year|month|date|day|time|week)\b|\bwhich\s+(?:year|month|day|date|week)\b"
    r"|\bhow\s+many\s+(?:days|weeks|months|years)\b|\bsince\s+when\b|\bwhat\s+age\b",
    re.IGNORECASE,
)
YEARLESS = ("md", "dm", "rel_month", "season")
"""Kinds that name a month, day or season without its year ("in May", "16 August", "in summer"): resolved
against today's date they would be a guess, so they scope nothing and add no date terms."""
_RELATIVE_WORD = re.compile(r"(?:last|this|next|previous|coming|past)\b", re.IGNORECASE)
_DAY_RANGE_RE = re.compile(
    r"\b(?:between\s+|from\s+)?(?P<a>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s*(?:and|to|until|through|-|\u2013)\s*"
    r"(?P<b>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>" + MONTH_NAMES + r")\.?"
    r"(?:,?\s+(?P<y>(?:19|20)\d\d))?\b",
    re.IGNORECASE,
)
"""``between 1 and 20 September 2026``, ``1-20 Sept``: days of one month (the first day alone names no date)."""


def _day_ranges(text: str, now: date, spans: list[DateSpan]) -> list[DateSpan]:
    """``spans`` with each day range of one month in place of the single day its end names."""
    for m in _DAY_RANGE_RE.finditer(text):
        month, a, b = MONTHS[m.group("m").lower()], int(m.group("a")), int(m.group("b"))
        year = int(m.group("y")) if m.group("y") else nearest_year(now, month, a)
        lo, hi = safe_date(year, month, a), safe_date(year, month, b)
        if lo is None or hi is None or hi < lo:
            continue
        kind = "dmy" if m.group("y") else "dm"
        span = DateSpan(lo, hi, m.group(0).strip(), m.start(), not m.group("y"), kind)
        spans = [s for s in spans if not (m.start() <= s.offset < m.end())] + [span]
    return sorted(spans, key=lambda s: s.offset)


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


def query_dates(text: str, now: date, *, window_max_days: int = 1100) -> QueryDates:
    """Dates and ranges named in a query, resolved against ``now`` (the recall's clock).

    A window is set when the query names exactly one date, range or list of adjoining dates ("from
    March to May 2023", "in 2022 or 2023") that carries its year or is relative to ``now``, optionally
    after ``before``/``after``/``since``/``until``. A month, day or season without a year is a term
    only; a date that cannot be resolved, or a range one end of which is no date, leaves the window off
    (never a window on part of what was asked) and is shown as unresolved.
    """
    out = QueryDates(asks_when=bool(_ASKS_WHEN_RE.search(text)))
    found, bad = scan(text, now)
    spans = _day_ranges(text, now, found)
    groups = joined(text, now)
    failed = [g for g in groups if g.unresolved]  # its note names the dates in it that failed
    out.unresolved = [u.note for u in bad if not any(g.start <= u.offset < g.stop for g in failed)]
    out.unresolved += [f"{g.text} ({g.unresolved})" for g in failed]
    for g in groups:
        spans = [s for s in spans if not (g.start < s.stop and s.offset < g.stop)] + g.spans
    spans.sort(key=lambda s: s.offset)
    out.spans = spans
    named = [s for s in spans if s.kind not in YEARLESS]
    if len(named) == 1 and named[0].kind != "range" and not failed and not out.unresolved:
        half = half_joined(text, named[0])
        out.unresolved += [half] if half else []
    if len(named) == 1 and len(spans) == 1 and not out.unresolved and named[0].days <= window_max_days:
        s = named[0]
        word = _relation(text, s)
        out.relation = word
        if word in ("before", "prior to", "until"):
            out.window = (date.min, s.start - timedelta(days=1) if word != "until" else s.end)
        elif word in ("after", "since"):
            out.window = (s.end + timedelta(days=1) if word == "after" else s.start, date.max)
        else:
            out.window = (s.start, s.end)
    for m in _BEFORE_AFTER_RE.finditer(text):
        what = m.group("what").strip()
        # "before 2023" is one span; "from 2021 until 2023" one range
        named_here = any(m.start() <= sp.offset < m.end() for sp in [*found, *spans]) or any(
            g.start <= m.start() < g.stop for g in groups
        )
        if not named_here and not scan(what, now)[0]:
            out.unresolved.append(f"{m.group('rel').lower()} {what}")
    terms: list[str] = []
    if out.window is None or (out.window[0] != date.min and out.window[1] != date.max):  # open: a filter, no terms
        for s in named:
            terms += s.tokens()
    out.terms = list(dict.fromkeys(terms))
    return out
