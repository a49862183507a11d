"""Entity pages in the original Remnic's format: parse (both of its layouts) and render (the newer).

A page is ``entities/<type>-<slug>.md``::

    # Priya Raman

    **Type:** person
    **Updated:** 2026-05-10T08:00:00.000Z

    ## Synthesis

    Priya leads Project Atlas.

    ## Timeline

    - [2026-03-02T15:04:11.120Z] [source=entity_extraction] Priya joined the Atlas team. [[mem_01…]]

    ## Connected to

    - [[project-atlas]] — mentioned together in 2 memories

    ## Aliases

    - P. Raman

(the Aliases lines remnic wrote are the ones its frontmatter ``builtAliases`` lists; any other is a
person's, kept on rebuilds). The older layout's ``## Summary`` reads as the synthesis and ``## Facts`` bullets as
facts; section names match case-insensitively; unknown sections and free lines before
the first section are kept verbatim. Parsing and rendering are pure.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from remnic.memfile.fold import fold
from remnic.memfile.times import parse_time

ENTITY_TYPES = ("person", "project", "tool", "place", "company", "topic", "other")
MANAGED_SOURCES = frozenset(
    [
        "artifact",
        "chunking",
        "cli-migrate",
        "compounding-promotion",
        "consolidation",
        "contradiction-detection",
        "entity_extraction",
        "explicit",
        "explicit-inline",
        "explicit-inline-review",
        "explicit-review",
        "extraction",
        "extraction-shared-promotion",
        "manual",
        "migration",
        "migration-rechunk",
        "proactive",
        "replay",
        "semantic-consolidation",
        "unknown",
    ]
)
_KNOWN_SECTIONS = {"synthesis", "summary", "timeline", "facts", "connected to", "activity", "aliases"}
_TOKEN = re.compile(
    r"\[(?P<key>source|source_meta|session|sessionKey|principal|origin)=(?P<value>(?:\\.|[^\]\\])*)\]\s*"
)
_TS = re.compile(r"^\[(?P<ts>\d{4}-\d{2}-\d{2}[^\]]*)\]\s*")
_BRACKET = re.compile(r"^\[(?P<ts>[^\]\[=\n]{0,40})\]\s*")
"""A leading ``[…]`` that is a date as people write it (``[Jan 5, 2024]``), or that a ``[source=…]``
follows: the line's time too."""
_CONNECTED = re.compile(r"^\[\[(?P<target>[^\]]+)\]\]\s*(?:[—–-]\s*(?P<label>.*))?$")
_ACTIVITY = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2}):\s*(?P<note>.*)$")
WIKILINK = re.compile(r"\[\[([^\[\]|#\n]{1,200})(?:[#|][^\[\]\n]*)?\]\]")


@dataclass
class TimelineEntry:
    timestamp: str
    text: str
    source: str | None = None
    session: str | None = None
    principal: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"timestamp": self.timestamp, "text": self.text}
        for key in ("source", "session", "principal"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


@dataclass
class EntityPage:
    name: str
    type: str = "other"
    updated: str = ""
    synthesis: str = ""
    timeline: list[TimelineEntry] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    """The older layout's ``## Facts`` bullets (read only; written as the timeline)."""
    relationships: list[tuple[str, str]] = field(default_factory=list)
    activity: list[tuple[str, str]] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    pre_section: list[str] = field(default_factory=list)
    extra_sections: list[tuple[str, str]] = field(default_factory=list)
    """Unknown ``## Title`` sections as (title, raw text), kept verbatim."""

    def to_dict(self) -> dict[str, Any]:
        """The original's EntityFile JSON (``summary`` and ``facts`` kept for older clients)."""
        facts = [e.text for e in self.timeline] or list(self.facts)
        return {
            "name": self.name,
            "type": self.type,
            "updated": self.updated,
            "summary": self.synthesis,
            "synthesis": self.synthesis,
            "facts": facts,
            "timeline": [e.to_dict() for e in self.timeline],
            "relationships": [{"target": t, "label": label} for t, label in self.relationships],
            "activity": [{"date": d, "note": n} for d, n in self.activity],
            "aliases": list(self.aliases),
            "extraSections": [{"title": t, "body": b} for t, b in self.extra_sections],
        }


MAX_ID = 100
"""An entity id's longest spelling (remnic's ids allow 128, a namespace prefix included)."""


def name_key(name: str) -> str:
    """What two spellings of one name share: "Tomás Ortega" and "tomas ortega" are one name."""
    return " ".join(fold(name).lower().split())


def slugify(name: str) -> str:
    """An id's slug from a name: accents folded to ASCII (as memory file names are), lowercase,
    every run of characters that is not a letter, mark or number → ``-``; a part in another script
    as its IDNA-style punycode (``иван`` → ``xn--80adrw``), so the slug is a valid id."""
    text = fold(name).lower().strip()
    out = []
    dash = False
    for ch in text:
        if unicodedata.category(ch)[0] in "LMN":
            out.append(ch)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    slug = "".join(out).strip("-")
    if slug.isascii():
        return slug
    return "-".join(p if p.isascii() else "xn--" + p.encode("punycode").decode("ascii") for p in slug.split("-"))


def entity_id(entity_type: str, name: str) -> str:
    """``<type>-<slug>``; a name already starting with ``<type>-`` is not prefixed twice. A valid
    remnic id (ASCII, at most :data:`MAX_ID` characters: a longer one ends in a hash of the whole)."""
    slug = slugify(name)
    prefix = f"{entity_type}-"
    out = slug if slug.startswith(prefix) else prefix + slug
    if len(out) > MAX_ID:
        out = out[: MAX_ID - 9].rstrip("-") + "-" + hashlib.sha1(out.encode("ascii")).hexdigest()[:8]
    return out


def id_of_stem(stem: str) -> str:
    """The id a page's file name stands for today: an older build's ``person-josé-núñez`` is
    ``person-jose-nunez`` (earlier builds kept accents, which remnic's ids do not allow)."""
    return entity_id(stem.split("-", 1)[0], stem)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m.group(1), m.group(1)), value)


def _escape(value: str) -> str:
    return (
        value.replace("\\", "\\\\").replace("]", "\\]").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )


def parse_timeline_bullet(text: str, default_ts: str) -> TimelineEntry:
    ts_match = _TS.match(text)
    if ts_match is None:
        loose = _BRACKET.match(text)
        if loose and (parse_time(loose.group("ts")) is not None or _TOKEN.match(text, loose.end())):
            ts_match = loose
    ts = ts_match.group("ts") if ts_match else default_ts
    rest = text[ts_match.end() :] if ts_match else text
    entry = TimelineEntry(ts, "")
    while True:
        m = _TOKEN.match(rest)
        if not m:
            break
        key, value = m.group("key"), _unescape(m.group("value"))
        if key in ("source", "source_meta"):
            entry.source = value
        elif key in ("session", "sessionKey"):
            entry.session = value
        elif key == "principal":
            entry.principal = value
        rest = rest[m.end() :]
    entry.text = rest.strip()
    return entry


def parse_page(body: str, *, updated: str = "") -> EntityPage:
    """A page's markdown body (without frontmatter) as an :class:`EntityPage`."""
    page = EntityPage(name="", updated=updated)
    section: str | None = None
    raw_title = ""
    buffer: list[str] = []

    def close() -> None:
        if section is None:
            return
        text = "\n".join(buffer).strip("\n")
        bullets = [line[2:].strip() for line in buffer if line.startswith(("- ", "* "))]
        if section in ("synthesis", "summary"):
            page.synthesis = text.strip()
        elif section == "timeline":
            page.timeline = [parse_timeline_bullet(b, page.updated) for b in bullets]
        elif section == "facts":
            page.facts = bullets
        elif section == "connected to":
            for b in bullets:
                m = _CONNECTED.match(b)
                if m:
                    page.relationships.append((m.group("target").strip(), (m.group("label") or "").strip()))
        elif section == "activity":
            for b in bullets:
                m = _ACTIVITY.match(b)
                if m:
                    page.activity.append((m.group("date"), m.group("note").strip()))
        elif section == "aliases":
            page.aliases = [b for b in bullets if b]
        else:
            page.extra_sections.append((raw_title, text))

    for line in body.splitlines():
        if line.startswith("# ") and not page.name and section is None:
            page.name = line[2:].strip()
            continue
        if line.startswith("## "):
            close()
            raw_title = line[3:].strip()
            section = raw_title.lower() if raw_title.lower() in _KNOWN_SECTIONS else "extra"
            buffer = []
            continue
        if section is None:
            if line.startswith("**Type:**"):
                page.type = line.removeprefix("**Type:**").strip().lower() or "other"
            elif line.startswith("**Updated:**"):
                page.updated = line.removeprefix("**Updated:**").strip() or page.updated
            elif line.strip():
                page.pre_section.append(line)
            continue
        buffer.append(line)
    close()
    return page


def render_page(page: EntityPage) -> str:
    """The page body in the newer layout (Synthesis, Timeline, Connected to, Activity, Aliases,
    then the unknown sections as they were); ends with one newline."""
    out = [f"# {page.name}", "", f"**Type:** {page.type}", f"**Updated:** {page.updated}", ""]
    if page.pre_section:
        out += [*page.pre_section, ""]
    out += ["## Synthesis", ""]
    if page.synthesis:
        out += [page.synthesis, ""]
    if page.timeline or not page.facts:
        out += ["## Timeline", ""]
        for e in page.timeline:
            tokens = [f"[{e.timestamp}]"]
            if e.source:
                key = "source" if e.source in MANAGED_SOURCES else "source_meta"
                tokens.append(f"[{key}={_escape(e.source)}]")
            if e.session:
                tokens.append(f"[session={_escape(e.session)}]")
            if e.principal:
                tokens.append(f"[principal={_escape(e.principal)}]")
            out.append("- " + " ".join(tokens) + " " + e.text)
        out.append("")
    else:
        out += ["## Facts", "", *(f"- {f}" for f in page.facts), ""]
    if page.relationships:
        out += ["## Connected to", "", *(f"- [[{t}]] — {label}".rstrip(" —") for t, label in page.relationships), ""]
    if page.activity:
        out += ["## Activity", "", *(f"- {d}: {n}" for d, n in page.activity), ""]
    if page.aliases:
        out += ["## Aliases", "", *(f"- {a}" for a in page.aliases), ""]
    for title, text in page.extra_sections:
        out += [f"## {title}", "", text, ""] if text else [f"## {title}", ""]
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def merge_aliases(name: str, *lists: Sequence[str]) -> list[str]:
    """The aliases of ``lists`` in order, each name once (spellings equal without case or accents
    are one name), the entity's own ``name`` left out."""
    seen = {name_key(name)}
    out = []
    for alias in (a.strip() for names in lists for a in names):
        if alias and name_key(alias) not in seen:
            seen.add(name_key(alias))
            out.append(alias)
    return out


def cited_ids(page: EntityPage) -> list[str]:
    """The memory ids the page's timeline cites as ``[[id]]``, in order."""
    out: list[str] = []
    for entry in page.timeline:
        for m in WIKILINK.finditer(entry.text):
            if m.group(1) not in out:
                out.append(m.group(1))
    return out
