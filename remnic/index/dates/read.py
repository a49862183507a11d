"""A text's dates as both sides read them: a memory's text at index time, a query at recall (pure).

One reading for both, so a memory that says "From 2019 to 2021 I lived in Berlin" is dated as the
query "where did I live from 2019 to 2021" reads it: each date form alone (:mod:`.forms`), then day
ranges of one month ("between 1 and 20 September 2026"), then ranges and lists (:mod:`.joined`), which
take the place of the dates inside them. Linear in the text's length: every pass is one regex scan,
and the dates a range or list replaces are found by bisection, not by comparing each pair.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import date

from .forms import scan
from .joined import Joined, joined
from .spans import MONTH_NAMES, MONTHS, DateSpan, nearest_year, safe_date

_DAY_RANGE_RE = re.compile(
    r"\b(?:between\s+|from\s+)?(?P<a>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s*(?:and|to|until|through|-|\u2013)\s*"
    r"(?P<b>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>" + MONTH_NAMES + r")\.?"
    r"(?:,?\s+(?P<y>(?:19|20)\d\d))?\b",
    re.IGNORECASE,
)
"""``between 1 and 20 September 2026``, ``1-20 Sept``: days of one month (the first day alone names no date)."""
_YEAR_IN = re.compile(r"(?:19|20)\d\d")


@dataclass
class Reading:
    """The dates a text names, read once."""

    spans: list[DateSpan] = field(default_factory=list)
    """Every date resolved, a range or list in place of the dates inside it (in order of offset)."""
    found: list[DateSpan] = field(default_factory=list)
    """Each form's own spans, before ranges and lists took their place."""
    groups: list[Joined] = field(default_factory=list)
    """The ranges and lists read (:mod:`.joined`), in order."""
    unresolved: list[str] = field(default_factory=list)
    """Dates named that cannot be resolved, each with why ("February 29, 2023 (no such day)")."""


def outside(spans: list[DateSpan], regions: list[tuple[int, int]]) -> list[DateSpan]:
    """The spans overlapping none of ``regions`` (sorted, non-overlapping ``(start, stop)``)."""
    stops = [stop for _, stop in regions]
    out = []
    for s in spans:
        i = bisect_right(stops, s.offset)  # the first region ending after the span starts
        if i < len(regions) and regions[i][0] < s.stop:
            continue
        out.append(s)
    return out


def inside(offset: int, regions: list[tuple[int, int]], starts: list[int] | None = None) -> bool:
    """Whether ``offset`` falls in one of ``regions`` (sorted, non-overlapping; ``starts``: their
    starts, when asked many times)."""
    i = bisect_right([start for start, _ in regions] if starts is None else starts, offset) - 1
    return i >= 0 and offset < regions[i][1]


def _day_ranges(text: str, base: date | None, spans: list[DateSpan]) -> list[DateSpan]:
    """``spans`` with each day range of one month in place of the dates it overlaps (the single day its
    end names; a range without its year needs ``base``)."""
    ranges: list[DateSpan] = []
    for m in _DAY_RANGE_RE.finditer(text):
        month, a, b = MONTHS[m.group("m").lower()], int(m.group("a")), int(m.group("b"))
        if m.group("y"):
            year = int(m.group("y"))
        elif base is not None:
            year = nearest_year(base, month, a)
        else:
            continue
        lo, hi = safe_date(year, month, a), safe_date(year, month, b)
        if lo is None or hi is None or hi < lo:
            continue
        kind = "dmy" if m.group("y") else "dm"
        ranges.append(DateSpan(lo, hi, m.group(0).strip(), m.start(), not m.group("y"), kind))
    if not ranges:
        return spans
    return sorted(outside(spans, [(r.offset, r.stop) for r in ranges]) + ranges, key=lambda s: s.offset)


def read(text: str, base: date | None, *, every_chain: bool = True) -> Reading:
    """The dates ``text`` names, relative ones resolved against ``base`` (None: only absolute ones).
    ``every_chain`` False reads ranges and lists only in a text naming a year (none can resolve
    without one; what a memory is dated by needs no more)."""
    if not text:
        return Reading()
    found, bad = scan(text, base)
    spans = found
    if any(s.kind in ("dm", "dmy") for s in found):  # a day range's second end is one
        spans = _day_ranges(text, base, found)
    groups = joined(text, base, dated_only=not every_chain) if every_chain or _YEAR_IN.search(text) else []
    taken = [(g.start, g.stop) for g in groups if g.outcome in ("date", "reason", "count")]
    failed = [(g.start, g.stop) for g in groups if g.outcome in ("reason", "count")]
    spans = outside(spans, taken)
    spans += [s for g in groups if g.outcome == "date" for s in g.spans]
    spans.sort(key=lambda s: s.offset)
    starts = [start for start, _ in failed]
    notes = [u.note for u in bad if not inside(u.offset, failed, starts)]
    notes += [f"{g.text} ({g.unresolved})" for g in groups if g.outcome == "reason"]
    return Reading(spans, found, groups, notes)


def find_dates(text: str, base: date | None) -> list[DateSpan]:
    """Every date expression in ``text`` resolved to a span (relative ones need ``base``), a range or
    list ("From 2019 to 2021", "spring and summer of 2023") as one span over all it names."""
    return read(text, base, every_chain=False).spans
