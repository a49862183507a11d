"""The entity pages a set of memories calls for (pure): which entities, their pages' content,
and how a page already on disk is merged (what a person wrote there is kept).

A page remnic builds carries ``source: entities`` in its frontmatter. Its Timeline,
Connected to and Aliases sections are rebuilt from the memories every time (the Timeline and
Aliases lines a person added are kept: the service adds those back); its Synthesis
too, unless a person rewrote it (the ``synthesisHash`` remnic recorded no longer matches),
and any other section or free line a person added is kept as it is.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from remnic.memfile.times import format_time, is_iso, parse_time

from .page import ENTITY_TYPES, EntityPage, TimelineEntry, entity_id, name_key, parse_page, render_page
from .rules import Mention, known_mentions, prose

SOURCE = "entities"
"""The frontmatter ``source`` of pages remnic builds (pages without it are never touched)."""
TIMELINE_SOURCE = "entity_extraction"
PREVIEW_CHARS = 240
_PLURAL = {"memory": "memories", "reasoning_trace": "reasoning traces"}
_OURS = re.compile(rf"^(?:\[[^\]]*\]\s*)*\[source={TIMELINE_SOURCE}\]")
"""A Timeline line remnic wrote, even behind extra ``[…]`` (a foreign date an older build kept as a
person's line and stamped again)."""
_HASHTAG = re.compile(r"(?<![\w&#/`])#[\w/-]*[^\W\d][\w/-]*")
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")


def timeline_time(value: object) -> str:
    """A memory's time as a Timeline stamp: remnic's ISO spelling kept, any other spelling people
    write (``Jan 5, 2024``, ``05.01.2024``, epoch numbers) as the ISO day (or ISO time when it has
    one); "" when unreadable."""
    if value is None:
        return ""
    text = str(value).strip()
    if is_iso(text):
        return text
    epoch = parse_time(value)
    if epoch is None:
        return ""
    return format_time(epoch)[:10] if epoch % 86400 == 0 else format_time(epoch)


def _when(stamp: str) -> float:
    """A stamp's place in time (unreadable ones first)."""
    epoch = parse_time(stamp)
    return epoch if epoch is not None else float("-inf")


def quote(text: str) -> str:
    """A memory's text as a page quotes it: one line, at most PREVIEW_CHARS, its ``#tags`` in code
    spans so they stay the memory's tags, not the page's."""
    preview = " ".join(text.split())[:PREVIEW_CHARS]
    if preview.count("`") % 2:  # a code span the cut left open would swallow what follows
        preview = preview.replace("`", "")
    parts = _CODE_SPAN.split(preview)
    return "".join(p if i % 2 else _HASHTAG.sub(lambda m: f"`{m.group()}`", p) for i, p in enumerate(parts))


@dataclass(frozen=True)
class Source:
    """One memory, as far as entity pages care."""

    id: str
    namespace: str
    created: str
    """When the memory's fact was said (its ``validAt``, else ``observedAt``, else ``created``): the
    Timeline's date, not the day an import or a late observe wrote the file."""
    category: str
    content: str
    importance: float
    mentions: tuple[Mention, ...]
    aliases: tuple[str, ...] = ()
    """The note's own other names (its ``aliases``)."""
    titles: tuple[str, ...] = ()
    """The names the note goes by as a page (title, heading, file name): with ``aliases``, the
    entity it names by one of these is the one its aliases name."""
    superseded: bool = False
    """Replaced by a later memory: still history (who owned what, and until when), marked so on the page."""


@dataclass
class Entity:
    namespace: str
    id: str
    type: str
    spellings: Counter[str] = field(default_factory=Counter)
    sources: list[Source] = field(default_factory=list)
    connected: Counter[str] = field(default_factory=Counter)
    title: str = ""
    """The title of the entity's own note (a vault's ``People/Robert Smith.md``): its name."""
    note_aliases: set[str] = field(default_factory=set)
    written: Counter[str] = field(default_factory=Counter)
    """How often a memory writes each spelling (the others were read back from an id: ``person-tomas-ortega``)."""

    @property
    def name(self) -> str:
        """The own note's title, else the name written most (spellings equal without case or accents
        counted together; ties go to the one named most, then with more capitals, then the first),
        spelt as written, with its accents ("Tomás", not the "Tomas" an id or a hurried note spells)."""
        if self.title:
            return self.title
        groups: dict[str, list[str]] = {}
        for s in self.spellings:
            groups.setdefault(name_key(s), []).append(s)
        best = max(
            groups.values(),
            key=lambda g: (
                sum(self.written[s] for s in g),
                sum(self.spellings[s] for s in g),
                max(sum(c.isupper() for c in s) for s in g),
            ),
        )
        return max(
            best,
            key=lambda s: (
                self.written[s] > 0,
                sum(not c.isascii() for c in s),
                self.written[s],
                self.spellings[s],
                sum(c.isupper() for c in s),
            ),
        )

    @property
    def aliases(self) -> list[str]:
        """Other names, not other spellings of the name: "Tomas Ortega" is not an alias of Tomás Ortega."""
        name = name_key(self.name)
        seen: dict[str, str] = {}
        for s in [*self.spellings, *sorted(self.note_aliases)]:
            if name_key(s) != name:
                seen.setdefault(name_key(s), s)
        return sorted(seen.values())


def with_known_names(
    sources: Sequence[Source], texts: Mapping[str, str], names: Mapping[str, Mapping[str, str]] | None = None
) -> list[Source]:
    """Each source plus the names known from every source (per namespace) that its text spells out:
    ``texts`` maps a source's id to the text to look in. A note's aliases are names of what it is
    about, so they are known names too, as are ``names`` (namespace → name → type: the aliases a
    person gave a page)."""
    sources = _people_stay_people(sources)
    known: dict[str, dict[str, str]] = {}
    for s in sources:
        for m in s.mentions:
            known.setdefault(s.namespace, {}).setdefault(m.name, m.type)
    for namespace, given in (names or {}).items():
        for name, kind in given.items():
            known.setdefault(namespace, {}).setdefault(name, kind)
    for s in sources:
        own = _own_mention(s)
        if own is not None:
            for alias in s.aliases:
                known.setdefault(s.namespace, {}).setdefault(alias, own.type)
    out = []
    for s in sources:
        have = {name_key(m.name) for m in s.mentions}
        more = [
            m
            for m in known_mentions(prose(texts.get(s.id, "")), known.get(s.namespace, {}))
            if name_key(m.name) not in have
        ]
        out.append(replace(s, mentions=s.mentions + tuple(more)) if more else s)
    return out


def _people_stay_people(sources: Sequence[Source]) -> list[Source]:
    """A name another memory says is a person's is that person where a technical verb's *with* alone made
    it a tool ("Ana deployed the app with Ben" beside "Ben said …")."""
    people = {(s.namespace, name_key(m.name)) for s in sources for m in s.mentions if m.type == "person"}

    def person(s: Source, m: Mention) -> bool:
        return m.how == "means" and (s.namespace, name_key(m.name)) in people

    return [
        replace(s, mentions=tuple(Mention("person", m.name, "text") if person(s, m) else m for m in s.mentions))
        if any(person(s, m) for m in s.mentions)
        else s
        for s in sources
    ]


def _own_mention(source: Source) -> Mention | None:
    """The entity a note with aliases is the page of: the one it names by its title or an alias."""
    if not source.aliases:
        return None
    names = {name_key(n) for n in (*source.titles, *source.aliases)}
    return next((m for m in source.mentions if name_key(m.name) in names), None)


def _plain_id(m: Mention) -> str:
    return entity_id(m.type if m.type in ENTITY_TYPES else "other", m.name)


def collect(
    sources: Iterable[Source], claimed: Mapping[tuple[str, str], str] | None = None
) -> dict[tuple[str, str], Entity]:
    """Entities by (namespace, id). ``claimed`` maps (namespace, :func:`name_key`) to the id of the
    page a person listed that name on (its ``## Aliases``): the name is that entity, first of all.
    A note's aliases name the entity the note names by its title
    (or an alias). A one-word person name that starts exactly one longer person name in its
    namespace ("Priya" and "Priya Raman") is that person; one that starts two is neither. Names
    are compared without case or accents: "Tomás Ortega" and "Tomas Ortega" are one person."""
    claimed = claimed or {}
    sources = sorted(sources, key=lambda s: (_when(s.created), s.created, s.id))
    owned: dict[tuple[str, str], tuple[str, Source]] = {}
    for s in sources:
        own = _own_mention(s)
        if own is not None:
            for alias in (own.name, *s.aliases):
                owned.setdefault((s.namespace, name_key(alias)), (_plain_id(own), s))

    def resolve(namespace: str, m: Mention) -> str:
        if (namespace, name_key(m.name)) in claimed:
            return claimed[(namespace, name_key(m.name))]
        hit = owned.get((namespace, name_key(m.name)))
        return hit[0] if hit is not None else _plain_id(m)

    full_names: dict[tuple[str, str], set[str]] = {}
    for s in sources:
        for m in s.mentions:
            if m.type == "person" and " " in m.name.strip():
                first = name_key(m.name.split()[0])
                full_names.setdefault((s.namespace, first), set()).add(resolve(s.namespace, m))
    out: dict[tuple[str, str], Entity] = {}
    for s in sources:
        ids_here: list[str] = []
        for m in s.mentions:
            eid = resolve(s.namespace, m)
            key = name_key(m.name)
            mine = (s.namespace, key) in owned or (s.namespace, key) in claimed
            if m.type == "person" and " " not in m.name.strip() and not mine:
                candidates = full_names.get((s.namespace, key), set())
                if len(candidates) == 1:
                    eid = next(iter(candidates))
                elif len(candidates) > 1:
                    continue  # "Ana" beside Ana Silva and Ana Costa: neither, and no third person
            if eid.endswith("-") or eid in ids_here:
                continue
            entity = out.setdefault((s.namespace, eid), Entity(s.namespace, eid, eid.split("-", 1)[0]))
            entity.spellings[m.name] += 1
            if m.how != "id":
                entity.written[m.name] += 1
            entity.sources.append(s)
            ids_here.append(eid)
        for eid in ids_here:
            for other in ids_here:
                if other != eid:
                    out[(s.namespace, eid)].connected[other] += 1
    for (namespace, _), (eid, note) in owned.items():
        named = out.get((namespace, eid))
        if named is not None:
            named.note_aliases.update(note.aliases)
            spellings = {name_key(n) for n in named.spellings}
            named.title = named.title or next((t for t in note.titles if name_key(t) in spellings), "")
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
    top = max(entity.sources, key=lambda s: (not s.superseded, s.importance, _when(s.created)))
    preview = quote(top.content)
    replaced = sum(s.superseded for s in entity.sources)
    since = f", {replaced} of them since superseded" if replaced else ""
    return (
        f"{entity.name} is a {entity.type} named in {n} {'memory' if n == 1 else 'memories'} "
        f"({_count_words([s.category for s in entity.sources])}{since}), {when}. "
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
    page.timeline = [TimelineEntry(s.created, _line(s), TIMELINE_SOURCE) for s in shown]
    if old is not None:  # a line a person wrote in the Timeline is theirs: kept, in time order
        theirs = [e for e in old.timeline if not is_ours(e)]
        page.timeline = sorted([*page.timeline, *theirs], key=lambda e: _when(e.timestamp))
    page.relationships = [
        (target, f"named together in {n} {'memory' if n == 1 else 'memories'}")
        for target, n in sorted(entity.connected.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    page.aliases = entity.aliases
    return page, recorded


def _line(source: Source) -> str:
    return f"{quote(source.content)} [[{source.id}]]" + (" (superseded)" if source.superseded else "")


def is_ours(entry: TimelineEntry) -> bool:
    """Whether remnic wrote a Timeline line (rebuilt each time), whatever its date looks like."""
    return entry.source == TIMELINE_SOURCE or bool(_OURS.match(entry.text))


def same_content(a: EntityPage, b: EntityPage) -> bool:
    """Whether two pages say the same thing (the ``updated`` stamp aside)."""
    return render_page(_unstamped(a)) == render_page(_unstamped(b))


def _unstamped(page: EntityPage) -> EntityPage:
    copy = EntityPage(**{**page.__dict__})
    copy.updated = ""
    return copy


def carry_written(
    into: EntityPage, into_hash: object, other: EntityPage, other_hash: object, label: str
) -> tuple[EntityPage, str]:
    """``into`` with what a person wrote on ``other``, a second page of the same entity that is
    merged away (an older build's ``person-tomás-ortega`` beside ``person-tomas-ortega``), and the
    ``synthesisHash`` the merged page records. Carried: free lines before the first section, added
    sections, a rewritten Synthesis, a person's Timeline lines and Activity. Nothing is dropped: where
    both pages hold a person's text under one heading, the other's follows under the heading plus
    ``(from <label>)``. What remnic wrote on ``other`` is rebuilt, so it is not carried."""
    out = EntityPage(**{**into.__dict__})
    out.pre_section, out.extra_sections = list(into.pre_section), list(into.extra_sections)
    out.timeline, out.activity = list(into.timeline), list(into.activity)
    recorded = str(into_hash or "")
    mine = bool(into.synthesis) and digest(into.synthesis) != into_hash
    theirs = bool(other.synthesis) and digest(other.synthesis) != other_hash
    if theirs and not mine:
        out.synthesis, recorded = other.synthesis, str(other_hash or "")  # still reads as a person's
    elif theirs and other.synthesis.strip() != into.synthesis.strip():
        out.extra_sections.append((f"Synthesis (from {label})", other.synthesis))
    if other.pre_section and other.pre_section != into.pre_section:
        if into.pre_section:
            out.extra_sections.append((f"From {label}", "\n".join(other.pre_section)))
        else:
            out.pre_section = list(other.pre_section)
    for title, text in other.extra_sections:
        if (title, text) in out.extra_sections:
            continue
        taken = any(t.lower() == title.lower() for t, _ in out.extra_sections)
        out.extra_sections.append((f"{title} (from {label})" if taken else title, text))
    have = {(e.timestamp, e.text) for e in out.timeline}
    out.timeline += [e for e in other.timeline if not is_ours(e) and (e.timestamp, e.text) not in have]
    out.activity += [a for a in other.activity if a not in out.activity]
    return out, recorded
