"""The user's profile and the day's digest, compiled from the memories by rules (no LLM).

- :func:`profile`: the user's preferences, rules and principles, and identity facts (who
  the user is: name, role, home, family), most important first, plus ``profile.md`` when
  a person wrote one;
- :func:`day_summary`: the memories created or changed on one day, grouped by category,
  with decisions and commitments called out. Nothing is summarised or inferred, and the
  output says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from remnic.errors import ValidationError
from remnic.memfile.model import CATEGORIES, DEFAULT_NAMESPACE, NAMESPACES_DIR, MemoryRecord, parse_time
from remnic.memfile.validate import check_namespace

from .browse import newest_first

if TYPE_CHECKING:
    from .memory import Memory

SECTION_MAX = 25
"""At most this many memories per profile section (the most important first)."""
PREVIEW_CHARS = 300
NO_LLM = "Compiled by remnic's rules from the memories as written: nothing is summarised, inferred or invented (remnic uses no LLM)."
_IDENTITY_TAGS = {"identity", "profile", "about-me", "about-user", "user"}
_IDENTITY_RE = re.compile(
    r"\b(?:my name is|i am|i'm|i live|i work|i was born|i grew up|my (?:job|role|title|pronouns|wife|husband|"
    r"partner|kids?|children|son|daughter|birthday|home|team|company)|call me|the user(?:'s| is| has| lives| works)"
    r"|user's (?:name|role|pronouns|home))\b",
    re.IGNORECASE,
)
_PROFILE_CATEGORIES = {"preference": "preferences", "rule": "rules", "principle": "rules"}
_IDENTITY_CATEGORIES = ("fact", "relationship", "moment", "entity")


def _check_ns(namespace: str | None) -> None:
    if namespace is not None:
        problems = check_namespace(namespace)
        if problems:
            raise ValidationError(problems[0].describe(), problems=problems)


def _line(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "category": record.category,
        "content": " ".join(record.content.split())[:PREVIEW_CHARS],
        "importance": record.importance,
        "updated": record.updated,
    }


def is_identity(record: MemoryRecord, user_name: str = "") -> bool:
    """A fact about who the user is: tagged so, or worded so ("I live in …", "the user's role is …",
    or it starts with the user's name when ``observe.userName`` is set)."""
    if record.category not in _IDENTITY_CATEGORIES:
        return False
    if _IDENTITY_TAGS & {t.lower() for t in record.tags}:
        return True
    text = record.content
    if user_name and re.match(rf"{re.escape(user_name)}\b", text, re.IGNORECASE):
        return True
    return bool(_IDENTITY_RE.search(text))


def _ranked(records: Iterable[MemoryRecord]) -> list[MemoryRecord]:
    out = sorted(records, key=newest_first)
    out.sort(key=lambda r: -r.importance)  # stable: most important first, newest first within
    return out[:SECTION_MAX]


def profile(mem: Memory, *, namespace: str | None = None) -> dict[str, Any]:
    """``{profile, preferences, rules, identity, profileFile?, generatedBy, note}``: the profile as
    markdown and as lists (``rules`` holds rules and principles)."""
    _check_ns(namespace)
    ns = namespace or mem.settings.namespaces.default
    active = [
        r for r in mem.list(status="active", namespace=ns) if r.category != "entity" or not r.content.startswith("# ")
    ]
    sections: dict[str, list[MemoryRecord]] = {"preferences": [], "rules": [], "identity": []}
    user = mem.settings.observe.user_name
    for record in active:
        key = _PROFILE_CATEGORIES.get(record.category)
        if key is not None:
            sections[key].append(record)
        elif is_identity(record, user):
            sections["identity"].append(record)
    ranked = {k: _ranked(v) for k, v in sections.items()}
    root = mem.root if ns == DEFAULT_NAMESPACE else mem.root / NAMESPACES_DIR / ns
    try:
        written = (root / "profile.md").read_text(encoding="utf-8").strip()
    except OSError:
        written = ""
    lines = [f"# Profile ({ns})", ""]
    if written:
        lines += ["## profile.md", "", written, ""]
    for key, title in (
        ("identity", "About the user"),
        ("preferences", "Preferences"),
        ("rules", "Rules and principles"),
    ):
        lines += [f"## {title}", ""]
        lines += [f"- {' '.join(r.content.split())[:PREVIEW_CHARS]} ({r.id})" for r in ranked[key]] or ["- (none yet)"]
        lines.append("")
    lines.append(f"_{NO_LLM}_")
    out: dict[str, Any] = {
        "namespace": ns,
        "profile": "\n".join(lines) + "\n",
        "identity": [_line(r) for r in ranked["identity"]],
        "preferences": [_line(r) for r in ranked["preferences"]],
        "rules": [_line(r) for r in ranked["rules"]],
        "counts": {k: len(v) for k, v in sections.items()},
        "generatedBy": "rules",
        "note": NO_LLM,
    }
    if written:
        out["profileFile"] = written
    return out


_DIGEST_STATUSES = {"active", "forgotten", "superseded", "archived"}
"""What the day's digest may show: active memories, and retired ones as status changes."""
_CHANGED_KEYS = ("updated", "created", "forgottenAt", "supersededAt", "archivedAt")
"""A memory changed on a day if any of these falls in it (a forget leaves ``updated`` alone)."""

PIN_ORDER = {"rule": 0, "principle": 1, "preference": 2}


def pinned(mem: Memory, *, min_importance: float, namespace: str | None = None) -> list[MemoryRecord]:
    """What every session should start with, whatever its project: active rules and principles, and
    preferences with importance at least ``min_importance``; rules first, then principles, then
    preferences, the most important (then the newest) first within each."""
    _check_ns(namespace)
    out = [
        r
        for r in mem.list(status="active", namespace=namespace)
        if r.category in ("rule", "principle") or (r.category == "preference" and r.importance >= min_importance)
    ]
    out.sort(key=newest_first)
    out.sort(key=lambda r: (PIN_ORDER[r.category], -r.importance))
    return out


def _zone(name: str | None) -> Any:
    if not name:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError.single(
            "timeZone", f"unknown time zone {name!r} (an IANA name like Europe/Lisbon)"
        ) from None


def day_summary(
    mem: Memory, *, day: str | None = None, time_zone: str | None = None, namespace: str | None = None
) -> dict[str, Any]:
    """The memories created or changed on ``day`` (YYYY-MM-DD in ``time_zone``; default today),
    grouped by category, largest group first. Counts and the memories' own words only."""
    _check_ns(namespace)
    zone = _zone(time_zone)
    if day is None:
        when = datetime.now(zone).date()
    else:
        try:
            when = date.fromisoformat(day)
        except ValueError:
            raise ValidationError.single("date", f"{day!r} is not a date like 2026-05-14") from None
    try:
        start = datetime(when.year, when.month, when.day, tzinfo=zone).timestamp()
        # The next local midnight, not start + 24 h: DST days are 23 or 25 hours long.
        after = when + timedelta(days=1)
        end = datetime(after.year, after.month, after.day, tzinfo=zone).timestamp()
    except (OverflowError, ValueError):  # 9999-12-31 has no next day to end at
        raise ValidationError.single("date", f"{day!r} is outside the days a summary covers (to 9999-12-30)") from None
    ns = namespace or mem.settings.namespaces.default

    def on_day(value: Any) -> bool:
        t = parse_time(value)
        return t is not None and start <= t < end

    # The digest is agent context: only active memories read as new. Forgotten, superseded and
    # archived ones show as status changes; unvetted ones (quarantined, pending review, rejected)
    # never show, their text may be an injection.
    created, changed = [], []
    for record in mem.list(namespace=ns):
        if record.category == "entity" and record.content.startswith("# "):
            continue  # entity pages are compiled from the memories listed here
        if record.status not in _DIGEST_STATUSES:
            continue
        if record.status == "active" and on_day(record.frontmatter.get("created")):
            created.append(record)
        elif any(on_day(record.frontmatter.get(k)) for k in _CHANGED_KEYS):
            changed.append(record)
    groups: dict[str, list[MemoryRecord]] = {}
    for record in sorted(created, key=lambda r: (str(r.created), r.id)):
        groups.setdefault(record.category, []).append(record)
    order = sorted(groups, key=lambda c: (-len(groups[c]), CATEGORIES.index(c) if c in CATEGORIES else 99, c))
    sections: list[dict[str, Any]] = [
        {"category": c, "count": len(groups[c]), "memories": [_line(r) for r in groups[c]]} for c in order
    ]
    label = when.isoformat()
    text = [f"# {label}: {len(created)} new memor{'y' if len(created) == 1 else 'ies'}, {len(changed)} changed", ""]
    for section in sections:
        text += [f"## {section['category']} ({section['count']})", ""]
        text += [f"- {m['content']} ({m['id']})" for m in section["memories"]] + [""]
    if changed:
        text += (
            ["## changed", ""]
            + [f"- [{r.status}] {' '.join(r.content.split())[:PREVIEW_CHARS]} ({r.id})" for r in changed]
            + [""]
        )
    text.append(f"_{NO_LLM}_")
    return {
        "date": label,
        "timeZone": time_zone or "UTC",
        "namespace": ns,
        "total": len(created),
        "changedCount": len(changed),
        "counts": {c: len(groups[c]) for c in order},
        "sections": sections,
        "decisions": [_line(r) for r in groups.get("decision", [])],
        "commitments": [_line(r) for r in groups.get("commitment", [])],
        "changed": [{**_line(r), "status": r.status} for r in changed],
        "summary": "\n".join(text) + "\n",
        "generatedBy": "rules",
        "llm": False,
        "note": NO_LLM,
    }
