"""The entity pages a set of memories calls for (pure): which entities, their pages' content,
and how a page already on disk is merged (what a person wrote there is kept).

A page remnic builds carries ``source: entities`` in its frontmatter. Its Timeline,
Connected to and Aliases sections are rebuilt from the memories every time; its Synthesis
too, unless a person rewrote it (the ``synthesisHash`` remnic recorded no longer matches),
and any other section or free line a person added is kept as it is.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .page import ENTITY_TYPES, EntityPage, TimelineEntry, entity_id, parse_page, render_page
from .rules import Mention, known_mentions

SOURCE = "entities"
"""The frontmatter ``source`` of pages remnic builds (pages without it are never touched)."""
TIMELINE_SOURCE = "entity_extraction"
PREVIEW_CHARS = 240
_PLURAL = {"memory": "memories", "reasoning_trace": "reasoning traces"}


@dataclass(frozen=True)
class Source:
    """One memory, as far as entity pages care."""

    id: str
    namespace: str
    created: str
    category: str
    content: str
    importance: float
    mentions: tuple[Mention, ...]


@dataclass
class Entity:
    namespace: str
    id: str
    type: str
    spellings: Counter[str] = field(default_factory=Counter)
    sources: list[Source] = field(default_factory=list)
    connected: Counter[str] = field(default_factory=Counter)

    @property
    def name(self) -> str:
        """The spelling used most; ties go to the one with more capitals, then the first."""
        return max(self.spellings, key=lambda s: (self.spellings[s], sum(c.isupper() for c in s)))

    @property
    def aliases(self) -> list[str]:
        return sorted(s for s in self.spellings if s != self.name and s.lower() != self.name.lower())


def with_known_names(sources: Sequence[Source], texts: Mapping[str, str]) -> list[Source]:
    """Each source plus the names known from every source (per namespace) that its text spells out:
    ``texts`` maps a source's id to the text to look in."""
    known: dict[str, dict[str, str]] = {}
    for s in sources:
        for m in s.mentions:
            known.setdefault(s.namespace, {}).setdefault(m.name, m.type)
    out = []
    for s in sources:
        have = {m.name.lower() for m in s.mentions}
        more = [
            m for m in known_mentions(texts.get(s.id, ""), known.get(s.namespace, {})) if m.name.lower() not in have
        ]
        out.append(replace(s, mentions=s.mentions + tuple(more)) if more else s)
    return out


def collect(sources: Iterable[Source]) -> dict[tuple[str, str], Entity]:
    """Entities by (namespace, id). A one-word person name that starts exactly one longer person
    name in its namespace ("Priya" and "Priya Raman") is that person."""
    sources = sorted(sources, key=lambda s: (s.created, s.id))
    full_names: dict[tuple[str, str], set[str]] = {}
    for s in sources:
        for m in s.mentions:
            if m.type == "person" and " " in m.name.strip():
                first = m.name.split()[0].lower()
                full_names.setdefault((s.namespace, first), set()).add(entity_id("person", m.name))
    out: dict[tuple[str, str], Entity] = {}
    for s in sources:
        ids_here: list[str] = []
        for m in s.mentions:
            eid = entity_id(m.type if m.type in ENTITY_TYPES else "other", m.name)
            if m.type == "person" and " " not in m.name.strip():
                candidates = full_names.get((s.namespace, m.name.lower()), set())
                if len(candidates) == 1:
                    eid = next(iter(candidates))
            if eid.endswith("-") or eid in ids_here:
                continue
            entity = out.setdefault((s.namespace, eid), Entity(s.namespace, eid, eid.split("-", 1)[0]))
            entity.spellings[m.name] += 1
            entity.sources.append(s)
            ids_here.append(eid)
        for eid in ids_here:
            for other in ids_here:
                if other != eid:
                    out[(s.namespace, eid)].connected[other] += 1
    return out


def _count_words(categories: Sequence[str]) -> str:
    counts = Counter(categories)
    parts = []
    for category, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        word = category.replace("_", " ")
        parts.append(f"{n} {word if n == 1 else _PLURAL.get(category, word + 's')}")
    return ", ".join(parts)


def synthesis_for(entity: Entity) -> str:
    """What the memories say about the entity, in plain terms: how many, which kinds, when, and the
    most important one. Written by rules, and says so."""
    n = len(entity.sources)
    first, last = entity.sources[0].created[:10], entity.sources[-1].created[:10]
    when = f"on {first}" if first == last else f"from {first} to {last}"
    top = max(entity.sources, key=lambda s: (s.importance, s.created))
    preview = " ".join(top.content.split())[:PREVIEW_CHARS]
    return (
        f"{entity.name} is a {entity.type} named in {n} {'memory' if n == 1 else 'memories'} "
        f"({_count_words([s.category for s in entity.sources])}), {when}. "
        f"The most important: “{preview}” [[{top.id}]]\n\n"
        "_Compiled by remnic's entity rules from those memories (no LLM); rewrite this section "
        "and remnic keeps your text._"
    )


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


def page_for(
    entity: Entity, existing: tuple[dict[str, object], str] | None, timeline_max: int
) -> tuple[EntityPage, str]:
    """The page for ``entity`` (its ``updated`` left empty for the caller to stamp) and the digest of
    the synthesis remnic wrote. ``existing`` is (frontmatter, body) of the page on disk, if any."""
    old = parse_page(existing[1]) if existing is not None else None
    page = EntityPage(name=entity.name, type=entity.type)
    generated = synthesis_for(entity)
    page.synthesis = generated
    recorded = digest(generated)
    if old is not None:
        page.pre_section = list(old.pre_section)
        page.extra_sections = list(old.extra_sections)
        page.activity = list(old.activity)
        fm = existing[0] if existing is not None else {}
        if old.synthesis and digest(old.synthesis) != fm.get("synthesisHash"):
            page.synthesis = old.synthesis  # a person rewrote it: theirs stands
            recorded = str(fm.get("synthesisHash") or "")
    shown = entity.sources[-timeline_max:] if timeline_max > 0 else entity.sources
    page.timeline = [
        TimelineEntry(s.created, f"{' '.join(s.content.split())[:PREVIEW_CHARS]} [[{s.id}]]", TIMELINE_SOURCE)
        for s in shown
    ]
    if old is not None:  # a line a person wrote in the Timeline is theirs: kept, in time order
        theirs = [e for e in old.timeline if e.source != TIMELINE_SOURCE]
        page.timeline = sorted([*page.timeline, *theirs], key=lambda e: e.timestamp)
    page.relationships = [
        (target, f"named together in {n} {'memory' if n == 1 else 'memories'}")
        for target, n in sorted(entity.connected.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    page.aliases = entity.aliases
    return page, recorded


def same_content(a: EntityPage, b: EntityPage) -> bool:
    """Whether two pages say the same thing (the ``updated`` stamp aside)."""
    return render_page(_unstamped(a)) == render_page(_unstamped(b))


def _unstamped(page: EntityPage) -> EntityPage:
    copy = EntityPage(**{**page.__dict__})
    copy.updated = ""
    return copy
