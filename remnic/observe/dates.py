"""Relative dates become absolute ones, anchored on the turn's own timestamp (never the clock).

"yesterday" → "on 7 May 2023", "last week" → "in the week before 8 May 2023", "next Friday" →
"on Friday, 12 May 2023", "two months ago" → "in March 2023", "last summer" → "in the summer of
2022". Recurring expressions ("every Tuesday", "on Fridays") and bare weekdays are left alone:
they are schedules, not dates. Hand-written rules: see docs/observe.md for why not dateparser.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from remnic.memfile.model import format_time, parse_time

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11), "winter": (12, 2)}
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
}
# A preposition before the expression replaces the one we would add ("since yesterday" → "since 7 May").
# "the last month", "the next week": a stretch of time up to or from now, not a calendar one.
_PREPOSITION = r"(?P<prep>\b(?:since|until|till|from|by|before|after|on|in|of|during)\s+)?(?<!\bthe )"
_NUMBER = (
    r"(?P<n>\d{1,3}|a couple of|couple of|a couple|a few|several|" + "|".join(k for k in NUMBERS if " " not in k) + ")"
)
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(_PREPOSITION + r"\bthe day before yesterday\b", re.I), "day-2"),
    (re.compile(_PREPOSITION + r"\bthe day after tomorrow\b", re.I), "day+2"),
    (re.compile(_PREPOSITION + r"\b(?:yesterday|last night)\b", re.I), "day-1"),
    (re.compile(_PREPOSITION + r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I), "day+0"),
    (re.compile(_PREPOSITION + r"\btomorrow\b", re.I), "day+1"),
    (re.compile(_PREPOSITION + _NUMBER + r" (?P<unit>day|week|month|year)s? ago\b", re.I), "ago"),
    (re.compile(_PREPOSITION + r"\bin " + _NUMBER + r" (?P<unit>day|week|month|year)s?\b", re.I), "in"),
    (
        re.compile(_PREPOSITION + r"\b(?P<which>last|next|this past|this) (?P<wd>" + "|".join(WEEKDAYS) + r")\b", re.I),
        "weekday",
    ),
    (
        re.compile(_PREPOSITION + r"\b(?P<which>last|next|this past|this) (?P<unit>week|weekend|month|year)\b", re.I),
        "period",
    ),
    (
        re.compile(_PREPOSITION + r"\b(?P<which>last|this|next) (?P<season>spring|summer|fall|autumn|winter)\b", re.I),
        "season",
    ),
]

# A word every rule above needs (the "in N days" rule its "in … day|week|month|year"): a text
# without one is left as it is without running each rule over it.
_ANY_RULE_RE = re.compile(
    r"\b(?:yesterday|tomorrow|today|tonight|this|ago|last|next)\b|\bin .{1,16}?(?:day|week|month|year)", re.I
)


def anchor_date(timestamp: str | None) -> date | None:
    """The calendar day of a turn's timestamp, in the timestamp's own offset (None when unreadable)."""
    if not timestamp:
        return None
    text = timestamp.strip().replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(text).date()
    except ValueError:
        return None


def day_text(day: date, *, weekday: bool = False) -> str:
    text = f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    return f"{WEEKDAYS[day.weekday()].capitalize()}, {text}" if weekday else text


def month_text(year: int, month: int) -> str:
    return f"{MONTHS[month - 1]} {year}"


def _shift_months(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + (day.month - 1) + months
    return index // 12, index % 12 + 1


def _count(word: str) -> int | None:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return NUMBERS.get(word)


def _resolve(kind: str, match: re.Match[str], base: date) -> tuple[str, str] | None:
    """(preposition to use, absolute text) for one match, or None to leave it as it is."""
    groups = {k: v for k, v in match.groupdict().items() if v}
    if kind.startswith("day"):
        return "on", day_text(base + timedelta(days=int(kind[3:])))
    if kind in ("ago", "in"):
        count, unit, sign = _count(groups["n"]), groups["unit"].lower(), -1 if kind == "ago" else 1
        if count is None:  # "a few days ago": vague, so anchored rather than resolved
            return "", f"{groups['n']} {unit}s {'before' if sign < 0 else 'after'} {day_text(base)}"
        if unit == "day":
            return "on", day_text(base + timedelta(days=sign * count))
        if unit == "week":
            return "around", day_text(base + timedelta(weeks=sign * count))
        if unit == "month":
            return "in", month_text(*_shift_months(base, sign * count))
        return "in", str(base.year + sign * count)
    which = groups.get("which", "").lower()
    which = "last" if which == "this past" else which  # "this past weekend" is the last one
    if kind == "weekday":
        target = WEEKDAYS.index(groups["wd"].lower())
        delta = (target - base.weekday()) % 7
        if which == "last":
            delta = delta - 7 if delta else -7
        elif which == "next":
            delta = delta or 7
        return "on", day_text(base + timedelta(days=delta), weekday=True)
    if kind == "period":
        unit = groups["unit"].lower()
        if unit in ("week", "weekend"):
            if which == "this":
                saturday = base + timedelta(days=(5 - base.weekday()) % 7)
                return (
                    ("in", f"the week of {day_text(base)}")
                    if unit == "week"
                    else ("on", f"the weekend of {day_text(saturday)}")
                )
            side = "before" if which == "last" else "after"
            return ("in" if unit == "week" else "on"), f"the {unit} {side} {day_text(base)}"
        step = {"last": -1, "this": 0, "next": 1}[which]
        if unit == "month":
            return "in", month_text(*_shift_months(base, step))
        return "in", str(base.year + step)
    if kind == "season":
        season = groups["season"].lower()
        first, last = SEASONS[season]
        year = base.year
        ended_this_year = base.month > last and first <= last
        if which == "last":
            year = year if ended_this_year else year - 1
        elif which == "next":
            year = year + 1 if base.month >= first and first <= last else year
        return "in", f"the {season} of {year}"
    return None


# "Today is my last day", "… but yesterday was hectic": the date is the subject, so no preposition
# ("the party yesterday was fun" keeps its "on": the date there is not what the sentence is about).
_SUBJECT_AFTER_RE = re.compile(r"\s+(?:is|was|will be|would be|marks|marked)\b", re.I)
_SUBJECT_BEFORE_RE = re.compile(r"(?:^|[,;:—–]\s*|\b(?:that|and|but|so|because)\s+)$", re.I)


def _as_subject(match: re.Match[str]) -> bool:
    text = match.string
    return bool(_SUBJECT_AFTER_RE.match(text, match.end()) and _SUBJECT_BEFORE_RE.search(text[: match.start()]))


def resolve_relative_dates(text: str, timestamp: str | None) -> tuple[str, list[str]]:
    """``text`` with relative dates made absolute, and the absolute dates it now names.

    Without a readable timestamp the text is returned unchanged.
    """
    if not _ANY_RULE_RE.search(text):
        return text, []
    base = anchor_date(timestamp)
    if base is None:
        return text, []
    found: list[str] = []

    def replace(kind: str) -> object:
        def swap(match: re.Match[str]) -> str:
            if _in_a_name(match.string, match.start() + len(match.group("prep") or ""), match.end()):
                return match.group(0)
            resolved = _resolve(kind, match, base)
            if resolved is None:
                return match.group(0)
            preposition, absolute = resolved
            found.append(absolute)
            given = match.group("prep")
            lead = given if given and given.strip().lower() not in ("on", "in", "during") else ""
            possessive = match.string.startswith("'s", match.end())  # "tomorrow's opening": no preposition
            if not lead and preposition and not possessive and not _as_subject(match):
                lead = preposition + " "
            return lead + absolute

        return swap

    for pattern, kind in _RULES:
        text = pattern.sub(replace(kind), text)  # type: ignore[call-overload]
    return text, found


def _in_a_name(text: str, start: int, end: int) -> bool:
    """Whether the words ``text[start:end]`` are capitalised mid-sentence beside another capitalised word:
    part of a name ("Our band name is Maybe Tomorrow", "… is Tomorrow Never Dies"), not a date."""
    if not text[start : start + 1].isupper():
        return False
    before = text[:start].rstrip()
    if not before or before[-1] in ".!?:;\"'“‘([—–-":
        return False  # "Tomorrow we fly." opens its sentence
    prev = re.search(r"([^\W\d_][\w'’-]*)\W*$", before)
    after = re.match(r"\s+([^\W\d_][\w'’-]*)", text[end:])
    return any(w is not None and w.group(1)[:1].isupper() and w.group(1) != "I" for w in (prev, after))


def names_a_date(text: str) -> bool:
    """Whether the text says when, in words :func:`resolve_relative_dates` makes absolute ("yesterday",
    "last week", "this past weekend", "two months ago")."""
    return any(pattern.search(text) for pattern, _ in _RULES)


def message_time(value: Any) -> str | None:
    """An ISO timestamp from a time as people write it (ISO 8601, epoch seconds, ``8 May 2023``, …);
    None when absent or unreadable. ISO text is kept as written (its offset names the local day)."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    epoch = parse_time(value) if isinstance(value, (int, float, str)) else None
    if epoch is None:
        return None
    if isinstance(value, str):
        try:  # relative dates are resolved against this text, which must read as ISO
            datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return value.strip()
        except ValueError:
            pass
    try:
        stamp = format_time(epoch)
    except (OverflowError, OSError, ValueError):  # 1e20: past what a date can hold
        return None
    # Years before 1000 are no conversation's time, and strftime would write them with fewer than four digits.
    return stamp if len(stamp.split("-", 1)[0]) == 4 else None
