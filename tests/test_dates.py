"""Dates on both sides: relative dates in memories resolved at index time, dates in queries as terms and scope."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from remnic.config import settings_for
from remnic.index.dates import find_dates, query_dates, span_tokens
from remnic.service.memory import Memory

BASE = date(2023, 5, 8)  # a Monday


def _labels(text: str, base: date | None = BASE) -> list[str]:
    return [s.label() for s in find_dates(text, base)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday.", ["2023-05-07"]),
        ("watched it last night", ["2023-05-07"]),
        ("We went camping two weekends ago", ["2023-04-29..2023-04-30"]),
        ("the roadtrip this past weekend was wild", ["2023-05-06..2023-05-07"]),
        ("I ran a charity race last week", ["2023-05-01..2023-05-07"]),
        ("I'm starting a new job next month", ["2023-06-01..2023-06-30"]),
        ("I painted that sunrise last year", ["2022-01-01..2022-12-31"]),
        ("printed it last Friday", ["2023-05-05"]),
        ("I've had them for 3 years now", ["2020-01-01..2020-12-31"]),
        ("three days ago", ["2023-05-05"]),
        ("last summer", ["2022-06-01..2022-08-31"]),
        ("met my teammates on the 15th", ["2023-04-15"]),
        ("dinner on May 3, 2023 and again on 2023-05-20", ["2023-05-03", "2023-05-20"]),
        ("I finished it in January 2022", ["2022-01-01..2022-01-31"]),
        ("back in 2016 we met", ["2016-01-01..2016-12-31"]),
    ],
)
def test_relative_and_absolute_dates_resolve_against_the_base(text: str, expected: list[str]) -> None:
    assert _labels(text) == expected


def test_words_that_only_look_like_dates_are_left_alone() -> None:
    assert _labels("this may be hard, you may like it") == []
    assert _labels("we sold 2000 units") == []
    # Relative dates need a base; absolute ones do not.
    assert _labels("yesterday and May 3, 2023", None) == ["2023-05-03"]


def test_every_form_is_found_in_any_case_and_inside_a_long_text_that_names_no_other_date() -> None:
    # Each pattern only scans a text holding the words it needs (case-folded): none may be skipped wrongly.
    filler = "Notes about the harbour market and the ferry schedule. " * 200
    forms = {
        "YESTERDAY": "2023-05-07",
        "Last Night": "2023-05-07",
        "THE DAY BEFORE YESTERDAY": "2023-05-06",
        "Two Weekends Ago": "2023-04-29..2023-04-30",
        "SEPT 4, 2023": "2023-09-04",
        "4th of July 2022": "2022-07-04",
        "In Three Days": "2023-05-11",
        "This Morning": "2023-05-08",
        "LAST FRIDAY": "2023-05-05",
        "Last Autumn": "2022-09-01..2022-11-30",
        "On The 15TH": "2023-04-15",
        "BACK IN 2016": "2016-01-01..2016-12-31",
    }
    for form, label in forms.items():
        assert _labels(f"{filler}{form} we met.{filler}") == [label], form


def test_span_tokens_list_days_months_and_years() -> None:
    day = date(2023, 5, 3)
    assert span_tokens(day, day) == ["d20230503", "m202305", "y2023"]
    month = span_tokens(date(2023, 8, 1), date(2023, 8, 31))
    assert month == ["m202308", "y2023"]


def test_query_dates_give_terms_and_a_window_only_where_unambiguous() -> None:
    now = date(2026, 1, 10)
    q = query_dates("What did Caroline do in August 2023?", now)
    assert q.window == (date(2023, 8, 1), date(2023, 8, 31)) and "m202308" in q.terms
    rng = query_dates("Where was John between August 11 and August 15 2023?", now)
    assert rng.window == (date(2023, 8, 11), date(2023, 8, 15))
    assert query_dates("What did we decide last May?", now).window == (date(2025, 5, 1), date(2025, 5, 31))
    before = query_dates("What happened before May 2023?", now)
    assert before.window is not None and before.window[1] == date(2023, 4, 30) and before.terms == []
    event = query_dates("What did she buy before the trip?", now)
    assert event.window is None and event.unresolved == ["before the trip"]
    assert "unresolved: 'before the trip'" in event.describe()
    assert query_dates("When did Melanie paint a sunrise?", now).asks_when
    assert query_dates("How long has Nate had his turtles?", now).asks_when
    assert not query_dates("what does Ana prefer?", now).any


@pytest.fixture()
def diary(tmp_path: Path) -> Memory:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records(
        [
            {
                "content": "Ana: I went to the pottery workshop yesterday, so much clay!",
                "category": "moment",
                "created": "2023-05-08T10:00:00.000Z",
                "id": "mem_pottery",
            },
            {
                "content": "Ana: I went to the pottery workshop with my sister, so much clay!",
                "category": "moment",
                "created": "2023-09-02T10:00:00.000Z",
                "id": "mem_class",
            },
            {
                "content": "Ben: My garden is full of tomatoes and basil.",
                "category": "moment",
                "created": "2023-08-14T10:00:00.000Z",
                "id": "mem_garden",
            },
        ]
    )
    memory.settle_index()  # the index follows the commit on a worker thread
    yield memory
    memory.close()


def test_a_relative_date_is_searchable_as_the_day_it_means_and_the_file_is_untouched(diary: Memory) -> None:
    path = diary.root / diary.index.path_of("mem_pottery")
    before = path.read_bytes()
    result = diary.recall("what pottery happened on 7 May 2023?", top_k=2)
    assert result.hits[0].id == "mem_pottery"
    stage = next(s for s in result.stages if s.name == "date-scope")
    assert "'7 May 2023' → 2023-05-07" in stage.reason and "d20230507" in stage.reason
    assert "no filter" not in stage.reason or "filter" in stage.reason
    assert path.read_bytes() == before  # the resolved date is derived, never written into the file
    assert b"2023-05-07" not in before


def test_a_when_question_prefers_the_memory_that_states_a_time(diary: Memory) -> None:
    result = diary.recall("When did Ana go to the pottery workshop?", top_k=2)
    assert result.hits[0].id == "mem_pottery"
    assert result.hits[0].terms.date > 0 and result.hits[1].terms.date == 0
    plain = diary.recall("Did Ana go to the pottery workshop?", top_k=2)  # not asking when: no date term
    assert all(h.terms.date == 0 for h in plain.hits)
    assert result.hits[0].terms.to_dict()["date"] == pytest.approx(result.hits[0].terms.date, abs=1e-6)


def test_date_filter_scopes_the_recall_and_the_xray_shows_it(diary: Memory) -> None:
    with Memory.open(settings=settings_for(diary.root, recall={"date_filter": True})) as mem:
        result = mem.recall("what happened in August 2023?", top_k=3, xray=True)
        assert [h.id for h in result.hits] == ["mem_garden"]
        names = [s.name for s in result.stages]
        assert names[:2] == ["namespace-scope", "date-scope"]
        stage = result.stages[1]
        assert "filter 2023-07-31..2023-09-01" in stage.reason and "1 of 3 in scope" in stage.reason
        xray = result.xray
        assert xray is not None
        date_filter = next(f for f in xray.filters if f.name == "date-scope")
        assert "August 2023" in (date_filter.reason or "")
        # A window no memory falls in leaves the recall unscoped, and says so.
        empty = mem.recall("pottery in March 2021", top_k=3)
        assert empty.hits and "filter not applied" in empty.stages[1].reason
