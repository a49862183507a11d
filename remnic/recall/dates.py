"""Dates on the query side: the date terms a query adds to BM25 and, where unambiguous, its date scope.

A query naming a date ("in August 2023", "on 1 May, 2022", "between August 11 and
August 15 2023", "last May") is resolved against the recall's clock
(:func:`remnic.index.dates.query_dates`). Its tokens (``m202308`` …) are searched
in the memories' ``when`` (created) and ``dated`` (dates their text names)
fields; a question asking *when* (or how long) gives memories whose text states
a time the ``date`` score term (``weightStatesTime``). Where the date is unambiguous the recall is scoped to memories dated
then — created then, or naming a date that overlaps — unless no memory in
scope is, in which case the scope is left alone and the stage says so. The
``date-scope`` stage carries all of it into the X-ray.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from remnic.config import RecallSettings
from remnic.index.dates import (
    MONTHS,
    DateSpan,
    QueryDates,
    base_date,
    day_number,
    find_dates,
    month_keys,
    query_dates,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from remnic.index.vectors import Snapshot

STAGE = "date-scope"
_SHORT_YEAR = re.compile(
    r"\b(?P<month>"
    + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r")(?P<sep>\.?,?\s+)['\u2018\u2019](?P<yy>\d\d)\b",
    re.IGNORECASE,
)
_RELATIVE_MONTH = re.compile(r"(?:last|this|next|previous|coming|past)\b", re.IGNORECASE)


def full_years(text: str, today: date) -> str:
    """``Aug '23`` → ``Aug 2023``: a month's apostrophe year, in the century that puts it at most ten
    years ahead of ``today`` (the date parser reads four-digit years only)."""

    def four(m: re.Match[str]) -> str:
        year = 2000 + int(m.group("yy"))
        year = year if year <= today.year + 10 else year - 100
        return f"{m.group('month')}{m.group('sep')}{year}"

    return _SHORT_YEAR.sub(four, text)


def yearless(span: DateSpan) -> bool:
    """A month or day named without a year ("16 August", "in May"): not resolved to a date."""
    if span.kind in ("md", "dm"):
        return True
    return span.kind == "rel_month" and not _RELATIVE_MONTH.match(span.text)


def describe(dates: QueryDates, **kwargs: Any) -> str:
    """:meth:`QueryDates.describe`, without a date for a month or day named without a year: the parser
    guesses this year for it, but the recall neither scopes nor searches by that guess, so the X-ray
    must not show one (its words are searched as written)."""
    text = dates.describe(**kwargs)
    for s in dates.spans:
        if yearless(s):
            text = text.replace(f"'{s.text}' → {s.label()}", f"'{s.text}' (no year: searched as words)", 1)
    return text


@dataclass
class DatePlan:
    """What one recall does with the dates in its query."""

    dates: QueryDates
    extra_terms: list[tuple[str, str, float]] = field(default_factory=list)
    """(field, token, boost) clauses added to the BM25 query."""
    window: tuple[int, int] | None = None
    """The filter window in day numbers, slack included (None: no filter)."""
    months: list[str] | None = None
    """The window's months, pushed into tantivy as a clause (None: filter after retrieval only)."""
    slack_days: int = 0

    @property
    def terms(self) -> list[str]:
        return list(dict.fromkeys(t for _, t, _ in self.extra_terms))

    def date_term(self, snap: Snapshot, row: int, weight: float) -> float:
        """The ``date`` score term: ``weight`` for a memory stating a time, when the query asks when."""
        return weight if self.dates.asks_when and snap.states_time(row) else 0.0


_YEAR_TOKEN = re.compile(r"(?:19|20|21)\d\d")


def when_clauses(
    text: str, terms: list[str], now_s: float, s: RecallSettings, language: str = "english"
) -> list[tuple[str, str, float]]:
    """The query's terms as (``when``, term, ``boostWhen``) clauses. A bare number ("Go 1.22", "k8s 1.31")
    is left out unless it is a year or part of a date the parser found ("1 September", "between 1 and
    20 September 2026"): otherwise it matches the day of the month of every memory created on that day."""
    if s.boost_when <= 0:
        return []
    from remnic.index.bm25 import analyze  # tantivy's analyser: the recall fallback runs without it

    numbers = [t for t in terms if t.isdigit()]
    allowed: set[str] = set()
    if numbers:
        today = base_date(now_s) or date.today()
        full = full_years(text, today)
        named = [sp.text for sp in find_dates(full, today)] + [sp.text for sp in query_dates(full, today).spans]
        allowed = {t for one in named for t in analyze(one, language=language) if t.isdigit()}
    return [
        ("when", t, s.boost_when)
        for t in terms
        if not t.isdigit() or t in allowed or (len(t) == 4 and _YEAR_TOKEN.fullmatch(t))
    ]


def when_note(terms: list[str], clauses: list[tuple[str, str, float]]) -> str:
    """``; number(s) …``: the X-ray's word on the numbers :func:`when_clauses` kept out of the created-date
    field ('' if none, or if that field is not searched at all)."""
    kept = {t for _, t, _ in clauses}
    left = [t for t in terms if t.isdigit() and t not in kept]
    return f"; number(s) {' '.join(left)} not matched to created dates (no date names them)" if left and kept else ""


def plan(text: str, now_s: float, s: RecallSettings) -> DatePlan | None:
    """The date plan of a query (None when dates are off or the query names none and does not ask when)."""
    if not s.dates:
        return None
    today = base_date(now_s) or date.today()
    qd = query_dates(full_years(text, today), today)
    if not qd.any:
        return None
    filtered = qd.window is not None and s.date_filter
    extra: list[tuple[str, str, float]] = []
    for token in qd.terms:
        if not filtered:
            # Inside a date scope every memory shares the window's tokens: as terms they would only
            # flatten the BM25 scores the scope leaves to tell memories apart.
            if s.boost_when > 0:
                extra.append(("when", token, s.boost_when))
            if s.boost_dated > 0:
                extra.append(("dated", token, s.boost_dated))
    out = DatePlan(qd, extra, slack_days=max(0, s.date_slack_days))
    if filtered:
        assert qd.window is not None
        lo, hi = qd.window
        slack = timedelta(days=max(0, s.date_slack_days))
        first = day_number(lo - slack) if lo != date.min else -(2**31) + 1
        last = day_number(hi + slack) if hi != date.max else 2**31 - 1
        out.window = (first, last)
        if lo != date.min and hi != date.max:
            out.months = month_keys(lo - slack, hi + slack) or None
    return out


def scope(p: DatePlan, snap: Snapshot, mask: np.ndarray) -> tuple[np.ndarray, str, list[str] | None]:
    """(narrowed mask, the stage's note, the months clause for tantivy) for a plan with a window."""
    if p.window is None:
        return mask, describe(p.dates, terms=p.terms, filter_off=True), None
    lo, hi = p.dates.window or (date.min, date.max)
    slack = timedelta(days=p.slack_days)
    widened = (lo - slack if lo != date.min else lo, hi + slack if hi != date.max else hi)
    described = describe(p.dates, window=widened, terms=p.terms)
    dated = snap.date_mask(*p.window)
    narrowed = mask & dated
    kept, before = int(narrowed.sum()), int(mask.sum())
    if kept == 0:
        return mask, f"{described}: no memory in scope is dated then, filter not applied", None
    return narrowed, f"{described}: {kept} of {before} in scope", p.months
