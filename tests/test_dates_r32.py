"""Dates in queries and memory text (tester report r32: S2, S3, M4, M5).

Ranges and lists in a query are one window over all they name, or none (never part of it); a season
with its year is that season, one without is words; common spellings (comma ranges, "Aug. 2023",
"12/31/2023", "Q3 2023", "early 2023", "in the last 3 days") resolve or show as unresolved; and a
memory's relative dates and date words follow the day of its writer (the UTC offset its stamp carries).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from remnic.config import settings_for
from remnic.index import text as T
from remnic.index.dates import find_dates, query_dates, span_tokens
from remnic.index.rows import build_rows
from remnic.memfile.model import MemoryRecord
from remnic.recall import dates as recall_dates
from remnic.service.memory import Memory

NOW = date(2024, 3, 4)  # a Monday


def _window(q: str, now: date = NOW) -> tuple[str, str] | None:
    got = query_dates(q, now).window
    return None if got is None else (got[0].isoformat(), got[1].isoformat())


# --------------------------------------------------------------------------- S2: ranges and lists


@pytest.mark.parametrize(
    ("query", "window", "terms"),
    [
        (
            "where did we go hiking from March to May 2023",
            ("2023-03-01", "2023-05-31"),
            "m202303 m202304 m202305 y2023",
        ),
        ("hiking between March and May 2023", ("2023-03-01", "2023-05-31"), "m202303 m202304 m202305 y2023"),
        ("what happened from 2021 to 2023", ("2021-01-01", "2023-12-31"), "y2021 y2022 y2023"),
        ("what happened in 2021-2023", ("2021-01-01", "2023-12-31"), "y2021 y2022 y2023"),  # bare: see r32 v1 #2
        ("what happened in 2022 or 2023", ("2022-01-01", "2023-12-31"), "y2022 y2023"),
        ("what happened in March or April 2023", ("2023-03-01", "2023-04-30"), "m202303 m202304 y2023"),
        ("from November to February 2024", ("2023-11-01", "2024-02-29"), "y2023 y2024"),
        ("from 2021 until 2023", ("2021-01-01", "2023-12-31"), "y2021 y2022 y2023"),
        ("from May 2023 to now", ("2023-05-01", "2024-03-04"), "y2023 y2024"),
        ("what happened in 2023-24", ("2023-01-01", "2024-12-31"), "y2023 y2024"),
    ],
)
def test_a_range_or_list_is_one_window_over_all_it_names(query: str, window: tuple[str, str], terms: str) -> None:
    got = query_dates(query, NOW)
    assert _window(query) == window
    assert " ".join(got.terms) == terms  # the terms cover the whole range too (as span_tokens bounds them)
    assert len(got.spans) == 1 and got.spans[0].label() == "..".join(window) and not got.unresolved


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("what did we buy between the launch and May 2023", "between the launch and May 2023"),
        ("what changed from March 2023 to the launch", "from March 2023 to the launch"),
        ("did we launch in May 2023 or June", "May 2023 or June"),
        ("from 2021 to March", "from 2021 to March"),  # a year lent to a bare month would be a guess
        ("what happened in 2023-25", "in 2023-25"),
        ("what happened in 2011-12", "in 2011-12"),  # 2011 to 2012, or December 2011?
    ],
)
def test_a_range_one_end_of_which_is_no_date_sets_no_window(query: str, note: str) -> None:
    got = query_dates(query, NOW)
    assert got.window is None and got.unresolved == [note]
    assert f"unresolved: '{note}'" in got.describe()


def test_a_list_with_gaps_sets_no_window_but_searches_each_date() -> None:
    got = query_dates("what happened in 2019 or 2023", NOW)
    assert got.window is None and got.terms == ["y2019", "y2023"]
    assert [s.label() for s in got.spans] == ["2019-01-01..2019-12-31", "2023-01-01..2023-12-31"]


def test_numbers_and_yearless_ranges_are_no_window() -> None:
    assert not query_dates("we sold 2000 and 2020 units", NOW).any
    assert not query_dates("we sold 2000 to 2020 units", NOW).any
    assert not query_dates("where did we hike from March to May", NOW).any  # no year: words
    yearless = query_dates("between August 11 and August 15", NOW)
    assert yearless.window is None and yearless.terms == []
    # a relation inside a range is no open window; before a date it still is
    assert query_dates("what happened before May 2023", NOW).window == (date.min, date(2023, 4, 30))


def test_a_range_with_the_date_filter_keeps_every_month_of_it(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    trips = [("alps", "2023-03-10"), ("norway", "2023-04-20"), ("scotland", "2023-05-15"), ("wales", "2023-09-15")]
    memory.import_records(
        [
            {"content": f"We went hiking in {name}.", "category": "fact", "created": f"{day}T10:00:00Z", "id": name}
            for name, day in trips
        ]
    )
    memory.settle_index()
    memory.close()
    with Memory.open(settings=settings_for(root, recall={"date_filter": True})) as mem:
        for query in (
            "where did we go hiking from March to May 2023",
            "where did we go hiking between March and May 2023",
        ):
            result = mem.recall(query, top_k=5)
            assert sorted(h.id for h in result.hits) == ["alps", "norway", "scotland"], query
            stage = next(s for s in result.stages if s.name == "date-scope")
            assert "→ 2023-03-01..2023-05-31; filter 2023-02-28..2023-06-01: 3 of 4 in scope" in stage.reason


# --------------------------------------------------------------------------- S3: seasons


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("where did we travel in summer 2023", ("2023-06-01", "2023-08-31")),
        ("where did we travel in the summer of 2023", ("2023-06-01", "2023-08-31")),
        ("summer of 2023 trips", ("2023-06-01", "2023-08-31")),
        ("ski trip in spring 2022", ("2022-03-01", "2022-05-31")),
        ("in the fall of 2021", ("2021-09-01", "2021-11-30")),
        ("autumn 2020 leaves", ("2020-09-01", "2020-11-30")),
        ("the winter of 2023-24", ("2023-12-01", "2024-02-29")),
        ("what did we do last summer", ("2023-06-01", "2023-08-31")),
        ("what did we plan for next summer", ("2024-06-01", "2024-08-31")),
        ("what did we do last winter", ("2023-12-01", "2024-02-29")),  # said in March: the one just over
    ],
)
def test_a_season_with_its_year_is_that_season(query: str, window: tuple[str, str]) -> None:
    assert _window(query) == window
    start, end = (date.fromisoformat(d) for d in window)
    assert query_dates(query, NOW).terms == span_tokens(start, end)


@pytest.mark.parametrize("query", ["where did we travel in summer", "where did we travel in the summer", "in autumn"])
def test_a_season_without_a_year_is_searched_as_words(query: str) -> None:
    got = query_dates(query, NOW)
    assert got.window is None and got.terms == []
    said = got.spans[0].text
    assert recall_dates.describe(got, terms=got.terms).startswith(f"'{said}' (no year: searched as words);")
    assert "→" not in got.describe()


def test_a_winter_with_one_year_is_unresolved_not_guessed() -> None:
    got = query_dates("what happened in winter 2023", NOW)
    assert got.window is None and got.terms == [] and got.spans == []
    assert got.unresolved == ["in winter 2023 (the winter ending in 2023 or the one starting in it?)"]


def test_a_season_in_memory_text_takes_its_year_not_the_writers() -> None:
    written = date(2025, 6, 1)
    for text in ("In summer 2023 we went to Portugal.", "in the summer of 2023 we went to Portugal."):
        assert [s.label() for s in find_dates(text, written)] == ["2023-06-01..2023-08-31"]
    assert [s.label() for s in find_dates("Next summer we plan a trip to Japan.", date(2023, 10, 1))] == [
        "2024-06-01..2024-08-31"
    ]


# --------------------------------------------------------------------------- M4: spellings


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("what happened between August 11 and August 15, 2023", ("2023-08-11", "2023-08-15")),
        ("between December 30, 2023 and January 2, 2024", ("2023-12-30", "2024-01-02")),
        ("what happened August 11-15, 2023", ("2023-08-11", "2023-08-15")),
        ("what did we ship in Aug. 2023", ("2023-08-01", "2023-08-31")),
        ("what did we ship in Sept. 2023", ("2023-09-01", "2023-09-30")),
        ("what did Ana say in May of 2023", ("2023-05-01", "2023-05-31")),
        ("what happened on 12/31/2023", ("2023-12-31", "2023-12-31")),
        ("what happened on 31/12/2023", ("2023-12-31", "2023-12-31")),
        ("what happened on 04/04/2023", ("2023-04-04", "2023-04-04")),
        ("what happened in the last 3 days", ("2024-03-01", "2024-03-04")),
        ("what happened in the past two weeks", ("2024-02-19", "2024-03-04")),
        ("what happened in early 2023", ("2023-01-01", "2023-06-30")),
        ("mid-2023 plans", ("2023-04-01", "2023-09-30")),
        ("late March 2023 plans", ("2023-03-16", "2023-03-31")),
        ("revenue in Q3 2023", ("2023-07-01", "2023-09-30")),
        ("revenue in 2023 Q1", ("2023-01-01", "2023-03-31")),
    ],
)
def test_common_spellings_of_a_date_resolve(query: str, window: tuple[str, str]) -> None:
    assert _window(query) == window


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("what happened on February 29, 2023", "February 29, 2023 (no such day)"),
        ("what happened on 2023-02-29", "2023-02-29 (no such day)"),
        ("what happened on 03/04/2023", "03/04/2023 (month or day first?)"),
        ("between February 29, 2023 and March 3, 2023", "between February 29, 2023 and March 3, 2023 (no such day)"),
        ("from 12/30/2023 to 01/02/2024", "from 12/30/2023 to 01/02/2024 (month or day first?)"),
    ],
)
def test_a_date_that_cannot_be_resolved_is_shown_unresolved_and_sets_no_window(query: str, note: str) -> None:
    got = query_dates(query, NOW)
    assert got.window is None and got.unresolved == [note] and got.terms == []
    assert f"unresolved: '{note}'" in recall_dates.describe(got, terms=got.terms)


def test_an_abbreviated_month_with_a_dot_in_memory_text_keeps_its_year() -> None:
    written = date(2025, 6, 1)  # June 2025: "Aug." alone would be August 2025
    assert [s.label() for s in find_dates("We shipped the beta in Aug. 2023.", written)] == ["2023-08-01..2023-08-31"]
    assert [s.label() for s in find_dates("Paid on 12/31/2023, not on 03/04/2023.", written)] == ["2023-12-31"]
    assert [s.label() for s in find_dates("I ran every day in the last 3 days", written)] == ["2025-05-29..2025-06-01"]
    assert find_dates("The invoice says February 29, 2023.", written) == []
    assert find_dates("this may be hard, you may like it; 1.2/3/2023", written) == []


# --------------------------------------------------------------------------- M5: the writer's day


def _record(content: str, created: str) -> MemoryRecord:
    return MemoryRecord(
        path="facts/a.md", frontmatter={"id": "mem_a", "category": "fact", "created": created}, body=content
    )


def test_relative_dates_and_date_words_follow_the_offset_the_stamp_carries() -> None:
    billing = _record("Yesterday we shipped the billing release.", "2024-01-01T00:30:00+02:00")
    assert [s.label() for s in T.event_dates(billing)] == ["2023-12-31"]  # the UTC day would give 12-30
    said = T.observed_time(billing)
    assert said is not None and said.utcoffset() == timedelta(hours=2) and said.timestamp() == T.observed_ts(billing)
    fireworks = T.observed_time(_record("Fireworks at midnight.", "2023-12-31T23:30:00-05:00"))
    assert T.date_words(fireworks) == "31 December 2023 Sunday d20231231 m202312 y2023"
    # epoch seconds keep the UTC day; a stamp without an offset is read as UTC, as before
    assert T.date_words(1683504960.0) == "8 May 2023 Monday d20230508 m202305 y2023"
    naive = T.observed_time(_record("Yesterday we met.", "2024-01-01T00:30:00"))
    assert naive is not None and naive.tzinfo == UTC
    assert [s.label() for s in T.event_dates(_record("Yesterday we met.", "2024-01-01T00:30:00"))] == ["2023-12-31"]
    assert T.utc_offset("Mon, 01 Jan 2024 00:30:00 +0200") == timedelta(hours=2)
    assert T.utc_offset(datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=-3)))) == timedelta(hours=-3)
    assert T.utc_offset("Jan 5, 2024") is None and T.utc_offset(None) is None


def test_a_memory_is_found_by_the_day_its_writer_lived_not_the_utc_day(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records(
        [  # the same words but a name; one written late on New Year's Eve in New York (1 January in UTC)
            {
                "content": "We watched the fireworks with Ana.",
                "category": "fact",
                "created": "2023-12-31T23:30:00-05:00",
                "id": "eve",
            },
            {
                "content": "We watched the fireworks with Ben.",
                "category": "fact",
                "created": "2024-01-01T12:00:00Z",
                "id": "day",
            },
        ]
    )
    memory.settle_index()
    try:
        hits = {h.id: h for h in memory.recall("what did we watch on 31 December 2023", top_k=2).hits}
        assert hits["eve"].terms.bm25 > hits["day"].terms.bm25
        hits = {h.id: h for h in memory.recall("what did we watch on 1 January 2024", top_k=2).hits}
        assert hits["day"].terms.bm25 > hits["eve"].terms.bm25
    finally:
        memory.close()


def test_an_indexed_memory_carries_the_writers_day_and_both_months() -> None:
    eve = _record("Fireworks at midnight; yesterday we shipped.", "2023-12-31T23:30:00-05:00")
    _, docs, _ = build_rows([eve], {}, {}, T.TextRules(), lambda texts: (np.zeros((len(texts), 4), np.float32), 0))
    doc = docs["facts/a.md"]
    assert doc["when"] == "31 December 2023 Sunday d20231231 m202312 y2023"
    assert doc["dated"] == "d20231230 m202312 y2023"  # its "yesterday": 30 December where it was written
    # the date filter compares the UTC day of `created` (the snapshot's, 1 January here): the months pushed
    # into tantivy hold both, so that clause never drops a memory the filter keeps
    assert doc["months"] == ["2023-12", "2024-01"]


# --------------------------------------------------------------------------- r32 v1: verification follow-ups
# #2 bare year pairs, #3 lists that go on, #5 the memory side, #6 the too-long reason, #7 speed,
# #9 "in May", #10 an epoch-0 stamp.


@pytest.mark.parametrize(
    "text",
    [
        "is room 2021-2022 free",
        "which pages 2021-2023 of the manual",
        "ticket ids 1999 through 2001",
        "what is the rate limit between 2020 and 2022 requests per second",
        "what is in the 2023-24 budget",
        "what happened 2021-2023",  # no preposition: a year range needs one
        "we sold 2000 and 2020 units",
        "in 2021 and 2022 units",  # a preposition, but the numbers count units
        "from 2000 to 2020 dollars",
    ],
)
def test_bare_year_pairs_without_date_context_are_words_on_both_sides(text: str) -> None:
    got = query_dates(text, NOW)
    assert not got.any and got.window is None and got.terms == [], got.describe()
    assert find_dates(text, NOW) == []


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("what happened from 2021 to 2023", ("2021-01-01", "2023-12-31")),
        ("what happened in 2021-2023", ("2021-01-01", "2023-12-31")),
        ("what happened between 2021 and 2023", ("2021-01-01", "2023-12-31")),
        ("what happened during 2022 or 2023", ("2022-01-01", "2023-12-31")),
        ("the years 2021 to 2023", ("2021-01-01", "2023-12-31")),
        ("what happened in 2023-24", ("2023-01-01", "2024-12-31")),
        ("from 2021 to 2023, sales fell", ("2021-01-01", "2023-12-31")),  # a comma: no count
        ("from 2021 to 2023 revenue grew", ("2021-01-01", "2023-12-31")),  # not a plural
        ("from January 2021 to 2023 sales", ("2021-01-01", "2023-12-31")),  # a month: dates
        ("from 2019 to 2021 sales doubled", ("2019-01-01", "2021-12-31")),  # a plural alone: the sentence
        ("in 2019 and 2020 people travelled less", ("2019-01-01", "2020-12-31")),
    ],
)
def test_bare_year_pairs_with_date_context_stay_dates(query: str, window: tuple[str, str]) -> None:
    assert _window(query) == window


@pytest.mark.parametrize(
    ("query", "window", "terms"),
    [
        ("where was the offsite in 2023 and 2024 and 2025", ("2023-01-01", "2025-12-31"), "y2023 y2024 y2025"),
        ("where was the offsite in 2023, 2024 and 2025", ("2023-01-01", "2025-12-31"), "y2023 y2024 y2025"),
        ("what happened from 2022 to 2023 and 2024", ("2022-01-01", "2024-12-31"), "y2022 y2023 y2024"),
        ("what happened between 2023 and 2024 or 2025", ("2023-01-01", "2025-12-31"), "y2023 y2024 y2025"),
        ("what happened in 2022 or in 2023", ("2022-01-01", "2023-12-31"), "y2022 y2023"),
        ("what happened in Jan, Feb and March 2023", ("2023-01-01", "2023-03-31"), "m202301 m202302 m202303 y2023"),
        ("what happened on May 3 and 4, 2023", ("2023-05-03", "2023-05-04"), "d20230503 d20230504 m202305 y2023"),
    ],
)
def test_a_list_that_goes_on_is_one_window_over_all_of_it(query: str, window: tuple[str, str], terms: str) -> None:
    got = query_dates(query, NOW)
    assert _window(query) == window and " ".join(got.terms) == terms and not got.unresolved


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("what happened in March and April 2023 and 2024", "m202303 y2023 m202304 y2024"),
        ("what happened from March to May 2023 or 2024", "m202303 m202304 m202305 y2023 y2024"),
    ],
)
def test_a_list_that_goes_on_past_a_gap_sets_no_window_and_searches_all_of_it(query: str, terms: str) -> None:
    got = query_dates(query, NOW)
    assert got.window is None and " ".join(got.terms) == terms


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("what did we do on Monday and Tuesday", "on Monday and Tuesday"),
        ("what did we do on the 2nd and 3rd", "on the 2nd and 3rd"),
        ("what did we do last May and June", "last May and June"),
        ("what did we do from last Monday to Wednesday", "from last Monday to Wednesday"),
    ],
)
def test_a_list_part_of_which_cannot_be_resolved_sets_no_window(query: str, note: str) -> None:
    got = query_dates(query, NOW)
    assert got.window is None and got.unresolved == [note]
    assert f"unresolved: '{note}'" in got.describe()


def test_a_number_or_a_verb_after_a_date_and_a_comma_or_and_is_no_list_item() -> None:
    assert _window("what did we do in May 2023 and 5 friends joined") == ("2023-05-01", "2023-05-31")
    assert _window("we met on May 3, 2023, 12 people came") == ("2023-05-03", "2023-05-03")
    assert _window("what happened on March 3, 2023 and 4 people came") == ("2023-03-03", "2023-03-03")
    assert _window("we shipped in March 2023 and may ship again") == ("2023-03-01", "2023-03-31")
    assert find_dates("Prices fall and 2023 looks good.", NOW) == []  # a bare year lends no season its year


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("From 2019 to 2021 I lived in Berlin.", "2019-01-01..2021-12-31"),
        ("Between 2019 and 2021 I lived in Berlin.", "2019-01-01..2021-12-31"),
        ("We hiked from March to May 2023.", "2023-03-01..2023-05-31"),
        ("Between August 1 and August 10 2023 we migrated billing.", "2023-08-01..2023-08-10"),
        ("We shipped the beta in Aug '23.", "2023-08-01..2023-08-31"),
        ("In the spring and summer of 2023 we rebuilt the deck.", "2023-03-01..2023-08-31"),
        ("I lived in Berlin from March 2019 to June 2021.", "2019-03-01..2021-06-30"),
    ],
)
def test_memory_text_is_dated_as_a_query_reads_the_same_words(text: str, label: str) -> None:
    written = NOW  # 2024: the base year must lend nothing to a date that names its own
    assert [s.label() for s in find_dates(text, written)] == [label]
    query = query_dates(recall_dates.full_years(text, written), written)
    assert [s.label() for s in query.spans] == [label]


def test_an_apostrophe_year_in_memory_text_takes_the_century_of_the_day_it_was_written() -> None:
    assert [s.label() for s in find_dates("Shipped in Aug '99.", date(2003, 1, 1))] == ["1999-08-01..1999-08-31"]
    assert [s.label() for s in find_dates("Due Aug '30.", date(2024, 3, 4))] == ["2030-08-01..2030-08-31"]
    assert find_dates("Shipped in Aug '23.", None) == []  # no day written: no century


def test_dated_memories_are_found_by_what_their_text_names_and_numbers_hide_nothing(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records(
        [
            {
                "content": "Conference room 2021-2022 is free on Fridays.",
                "category": "fact",
                "created": "2024-02-01T10:00:00Z",
                "id": "room",
            },
            {
                "content": "The coffee machine on floor 2 was replaced.",
                "category": "fact",
                "created": "2022-06-01T10:00:00Z",
                "id": "coffee",
            },
            {
                "content": "From 2019 to 2021 I lived in Berlin.",
                "category": "fact",
                "created": "2024-02-01T10:00:00Z",
                "id": "berlin",
            },
        ]
    )
    memory.settle_index()
    memory.close()
    with Memory.open(settings=settings_for(root, recall={"date_filter": True})) as mem:
        room = mem.recall("is room 2021-2022 free", top_k=3)
        assert room.hits[0].id == "room"
        assert not any(s.name == "date-scope" for s in room.stages)  # no date named: no scope
        lived = mem.recall("where did I live in 2020", top_k=3)
        assert [h.id for h in lived.hits][:1] == ["berlin"]  # its text's range holds 2020
        stage = next(s for s in lived.stages if s.name == "date-scope")
        assert "1 of 3 in scope" in stage.reason


def test_a_range_too_long_for_a_filter_says_so_not_ambiguous() -> None:
    got = query_dates("what happened between 2019 and 2023", NOW)
    assert got.window is None and got.too_long == (1826, 1100)
    shown = recall_dates.describe(got, terms=got.terms)
    assert "no filter (too long for a filter: 1826 days > 1100)" in shown and "ambiguous" not in shown
    assert "no filter (ambiguous)" in query_dates("what happened in 2019 or 2023", NOW).describe()


def _pathological(n: int) -> list[str]:
    def fill(unit: str) -> str:
        return (unit * (n // len(unit) + 1))[:n]

    return [
        fill("2021, "),
        fill("January, ") + " 2023",
        "May" + " " * n + "2023",
        fill("December 30, "),
        fill("2023 and "),
        fill("from 2021 to "),
        fill("before 2021, "),
        fill("from 2021 to 2022 requests, before x. "),
        fill("1 and "),
        "a" * n + " or May 2023",
        fill("from ") + "March 2023 to the launch",
    ]


def test_query_dates_stay_linear_on_long_queries() -> None:
    import time

    def once(text: str) -> float:
        start = time.perf_counter()
        query_dates(recall_dates.full_years(text, NOW), NOW)
        find_dates(text, NOW)
        return time.perf_counter() - start

    def cost(n: int) -> list[float]:  # the best of three: a shared machine's pauses are no cost of the code
        return [min(once(text) for _ in range(3)) for text in _pathological(n)]

    short, long = cost(10_000), cost(20_000)
    for i, b in enumerate(long):
        assert b < 1.0, (i, b)  # the old code took 4-20 s on some of these at 12-20k characters
    assert sum(long) <= 3 * sum(short) + 0.1, (short, long)  # twice the length: at most ~3x the time


def test_a_recall_of_an_18000_character_query_reads_its_dates_quickly(tmp_path: Path) -> None:
    import time

    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records(
        [{"content": "We shipped the January release.", "category": "fact", "created": "2023-01-10T10:00:00Z"}]
    )
    memory.settle_index()
    memory.close()
    with Memory.open(settings=settings_for(root, recall={"max_query_chars": 18000})) as mem:
        for query in (("January, " * 2000)[:17990] + " 2023", ("2021, " * 3000)[:18000]):
            start = time.perf_counter()
            result = mem.recall(query, top_k=3)
            assert time.perf_counter() - start < 5.0  # the old date parsing alone took ~13 s (twice 6-7 s)
            assert not any("maxQueryChars" in n for n in result.notes)  # all 18000 characters were read


def test_may_without_its_year_names_no_date_while_other_months_are_yearless_words() -> None:
    assert not query_dates("what changed in May", NOW).any  # "May" is read as the verb
    for query in ("what changed in August", "what changed on 16 August", "in summer", "in the summer"):
        got = query_dates(query, NOW)
        assert got.spans and got.window is None and got.terms == []
        assert "(no year: searched as words)" in recall_dates.describe(got, terms=got.terms)


def test_an_epoch_zero_stamp_is_a_time_not_a_missing_one() -> None:
    record = _record("Yesterday we shipped the first release.", "1970-01-01T00:00:00Z")
    assert T.observed_ts(record) == 0.0 and T.created_ts(record) == 0.0 and T.updated_ts(record) == 0.0
    said = T.observed_time(record)
    assert said is not None and said.timestamp() == 0.0
    assert [s.label() for s in T.event_dates(record)] == ["1969-12-31"]
    assert T.date_words(said) == "1 January 1970 Thursday d19700101 m197001 y1970"


def test_an_ordinal_naming_its_month_is_that_day_not_one_of_the_month_before() -> None:
    assert _window("what did we do on the 7th of May 2023") == ("2023-05-07", "2023-05-07")
    assert [s.kind for s in find_dates("on the 21st May 2023 we met", NOW)] == ["dmy"]
    assert [s.start for s in find_dates("on the 7th we met", NOW)] == [date(2024, 2, 7)]  # alone: as before
