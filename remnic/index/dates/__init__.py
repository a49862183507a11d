"""Dates named in text, resolved to calendar spans (pure; no clock, no I/O).

A memory's text often says *when* relative to the moment it was written
("yesterday", "last week", "two weekends ago", "next month"). Resolved against
the memory's ``observedAt``/``created`` (the writer's own day: the UTC offset the
stamp carries) these become absolute spans that are indexed as a derived field
(never written into the file), so a question naming the date finds them; absolute
dates ("May 3, 2023", "January 2022", "12/31/2023", "Q3 2023", "summer of 2023")
are normalised the same way (:mod:`.forms`). The query side (:func:`query_dates`,
:mod:`.query`) turns dates named in a query into the same tokens and, where the
date is unambiguous, a window; ranges and lists ("from March to May 2023", "in
2022 or 2023") are one span covering all they name (:mod:`.joined`), read the same
way in a memory's text as in a query (:mod:`.read`).

Spans become index tokens that no word can collide with: ``d20230503`` (a day),
``m202305`` (a month), ``y2023`` (a year). A span of up to two weeks lists its
days, up to about a season its months, up to three years its years
(:mod:`.spans`). Whether a memory states a time at all is kept too: a question
asking *when* prefers those.
"""

from __future__ import annotations

from .forms import scan
from .query import QueryDates, query_dates
from .read import find_dates
from .spans import (
    MONTHS,
    NUMBERS,
    SEASONS,
    WEEKDAYS,
    DateSpan,
    base_date,
    dated_field,
    day_number,
    from_day_number,
    month_keys,
    span_tokens,
)

__all__ = [
    "MONTHS",
    "NUMBERS",
    "SEASONS",
    "WEEKDAYS",
    "DateSpan",
    "QueryDates",
    "base_date",
    "dated_field",
    "day_number",
    "find_dates",
    "from_day_number",
    "month_keys",
    "query_dates",
    "scan",
    "span_tokens",
]
