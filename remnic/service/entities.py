"""Entity pages through the service: refreshed from the memories, listed, and looked up by name.

Pages live in ``entities/`` (``namespaces/<ns>/entities/`` in a namespace) as
``<type>-<slug>.md`` in the original Remnic's format, and are memories of category
``entity`` too, so recall and the X-ray's graph tier reach them. remnic rebuilds the pages
it made (``source: entities``) when they are read after the memories changed (HEAD moved
since the last build, or an older remnic made it), in one commit; pages a person or the
original Remnic wrote are read, never rewritten. A page of remnic's with uncommitted edits is
left as it is (not rewritten, not removed, not committed) and named in ``skipped``: it is rebuilt
once the edits are committed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from remnic.config import STATE_DIR
from remnic.fsio import write_atomic
from remnic.memfile.model import DEFAULT_NAMESPACE, MemoryRecord, category_dir, derived_fields, now_iso, serialize
from remnic.memfile.validate import check_text
from remnic.observe.entities import (
    ENTITY_TYPES,
    mentions,
    name_key,
    parse_page,
    render_page,
)
from remnic.observe.entities.build import (
    SOURCE,
    Entity,
    Source,
    carry_written,
    collect,
    is_ours,
    page_for,
    same_content,
    timeline_time,
    with_known_names,
)
from remnic.observe.entities.page import id_of_stem, merge_aliases
from remnic.repo.messages import trailers_for

if TYPE_CHECKING:
    from .memory import Memory

__all__ = ["ENTITY_TYPES", "get_entity", "is_page", "list_entities", "refresh"]

log = logging.getLogger("remnic.entities")

MANIFEST = "entities.json"
VERSION = 4
"""Bumped when a build's pages change for the same memories (2: ids fold accents, older pages are
renamed or merged; 3: a page with aliases records which are remnic's; 4: dated by when said, superseded
memories kept as history, role holders are people), so the first read after an upgrade rebuilds
although HEAD has not moved."""
BUILT = "builtAliases"
"""A page's frontmatter list of the ``## Aliases`` lines remnic wrote: any other line is a person's,
kept on every rebuild, and the name it gives leads to the page."""


def _manifest_path(mem: Memory) -> Any:
    return mem.root / STATE_DIR / MANIFEST


def _built_head(mem: Memory) -> str | None:
    try:
        data = json.loads(_manifest_path(mem).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("head") if isinstance(data, dict) and data.get("version") == VERSION else None


def is_page(record: MemoryRecord) -> bool:
    """A file in an entities folder written as an entity page (remnic's, a person's or the original's)."""
    folder = category_dir("entity", record.namespace)
    if not record.path.startswith(folder + "/"):
        return False
    return record.frontmatter.get("source") == SOURCE or record.content.startswith("# ")


def _page_path(namespace: str, eid: str) -> str:
    return f"{category_dir('entity', namespace)}/{eid}.md"


def _page_id(namespace: str, eid: str) -> str:
    return eid if namespace == DEFAULT_NAMESPACE else f"{namespace}:{eid}"


_HISTORY = frozenset({"active", "superseded"})
"""The memories pages are built from: the current ones and those a later one replaced (who owned the
billing service before Kofi is the entity's history). Pending, rejected, forgotten and archived ones
are not what the memories hold true."""


def _sources(
    mem: Memory, records: Sequence[MemoryRecord], progress: Callable[[int, int], None] | None = None
) -> list[Source]:
    """Every active or superseded memory (pages aside) with the entities it names by rules (the names
    the rules found anywhere not yet added: :func:`with_known_names`); ``progress(done, total)`` counts
    the memories read."""
    extra = mem.settings.entities.extra_tools
    out = []
    total = len(records)
    for done, r in enumerate(records, 1):
        if progress is not None and (done % 200 == 0 or done == total):
            progress(done, total)
        if r.status not in _HISTORY or is_page(r):
            continue
        found = mentions(r.frontmatter, r.content, extra)
        fm = r.frontmatter
        said = next((t for t in (timeline_time(fm.get("validAt")), timeline_time(fm.get("observedAt"))) if t), "")
        created = said or timeline_time(r.created) or timeline_time(r.updated)
        aliases = tuple(r.aliases)
        source = Source(r.id, r.namespace, created, r.category, r.content, r.importance, tuple(found))
        source = replace(source, superseded=r.status == "superseded")
        out.append(replace(source, aliases=aliases, titles=_titles(r)) if aliases else source)
    return out


def _entities(
    raw: Sequence[Source], pages: dict[str, MemoryRecord]
) -> tuple[dict[tuple[str, str], Entity], dict[str, list[str]], dict[tuple[str, str], list[MemoryRecord]]]:
    """The entities, the ``## Aliases`` lines a person added to each page (by path), and the pages
    of remnic's to fold into another (by that one's namespace and id): a page whose name a person
    listed as an alias of another page. A name a person listed on a page is that page's entity
    ("Priya Raman" on person-priya-shah.md: her memories go to that page), and one the memories did
    not name yet is found in their text as a known name."""
    texts = {s.id: s.content for s in raw}
    sources = [s for s in with_known_names(raw, texts) if s.mentions]
    entities = collect(sources)
    hand = {
        path: _hand_lines(r, _generated(entities.get((r.namespace, id_of_stem(_stem(path))))))
        for path, r in pages.items()
    }
    claimed, heads = _claims(pages, hand)
    if not claimed:
        return entities, hand, {}
    known: dict[str, dict[str, str]] = {}
    for (namespace, eid), names in heads.items():
        for name in names:
            known.setdefault(namespace, {})[name] = eid.split("-", 1)[0]
    sources = [s for s in with_known_names(raw, texts, known) if s.mentions]
    entities = collect(sources, claimed)
    folded: dict[tuple[str, str], list[MemoryRecord]] = {}
    for path, r in sorted(pages.items()):
        eid = id_of_stem(_stem(path))
        if r.frontmatter.get("source") != SOURCE or r.status != "active" or (r.namespace, eid) in entities:
            continue
        for key in (name_key(parse_page(r.body).name), name_key(_stem(path))):
            into = claimed.get((r.namespace, key))
            target = pages.get(_page_path(r.namespace, into or ""))
            if into and into != eid and (r.namespace, into) in entities and target is not None:
                if target.frontmatter.get("source") == SOURCE and target.status == "active":
                    folded.setdefault((r.namespace, into), []).append(r)
                break
    for (namespace, eid), names in heads.items():
        entity = entities.get((namespace, eid))
        page = pages.get(_page_path(namespace, eid))
        if entity is not None and page is not None and names and not entity.title:
            # A person named the page's entity: the page keeps its name, whatever the memories say most.
            entity.title = parse_page(page.body).name or entity.title
    return entities, hand, folded


def _generated(entity: Entity | None) -> list[str] | None:
    return entity.aliases if entity is not None else None


def _hand_lines(record: MemoryRecord, generated: Sequence[str] | None) -> list[str]:
    """The ``## Aliases`` lines a person added to a page of remnic's: those not in its ``builtAliases``
    (a page an older remnic built, without that record: those the memories do not give the entity,
    ``generated``; none when no memory names it)."""
    if record.frontmatter.get("source") != SOURCE or record.status != "active":
        return []
    built = record.frontmatter.get(BUILT)
    base = [a for a in built if isinstance(a, str)] if isinstance(built, list) else generated
    if base is None:
        return []
    page = parse_page(record.body)
    return merge_aliases(page.name, [a for a in page.aliases if name_key(a) not in {name_key(b) for b in base}])


def _is_id(name: str) -> bool:
    """An alias that is an id (``person-josé-núñez``, a page's former file name): a link, not a name."""
    return " " not in name and name.split("-", 1)[0] in ENTITY_TYPES and "-" in name


def _claims(
    pages: dict[str, MemoryRecord], hand: dict[str, list[str]]
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], list[str]]]:
    """Names a person gave a page (its added ``## Aliases`` lines, its frontmatter ``aliases``; every
    alias of a page remnic did not write), as (namespace, name key) → the page's entity id, and each
    page's such names. The first page (by path) to list a name has it; a page whose own name another
    page lists leads on to that one (both of a cycle to its first id)."""
    claimed: dict[tuple[str, str], str] = {}
    heads: dict[tuple[str, str], list[str]] = {}
    own: dict[tuple[str, str], str] = {}
    for path, r in sorted(pages.items()):
        stem = _stem(path)
        if r.status != "active" or stem.split("-", 1)[0] not in ENTITY_TYPES or "-" not in stem:
            continue
        eid = id_of_stem(stem)
        name = parse_page(r.body).name
        own[(r.namespace, eid)] = name_key(name)
        given = hand.get(path, []) + _aliases(r.frontmatter) if r.frontmatter.get("source") == SOURCE else r.aliases
        names = [n for n in merge_aliases(name, given) if not _is_id(n)]
        if names:
            heads[(r.namespace, eid)] = names
        for n in names:
            claimed.setdefault((r.namespace, name_key(n)), eid)

    def final(namespace: str, eid: str) -> str:
        seen = [eid]
        while True:
            key = own.get((namespace, seen[-1]))
            nxt = claimed.get((namespace, key)) if key else None
            if nxt is None or nxt == seen[-1]:
                return seen[-1]
            if nxt in seen:
                return min(seen[seen.index(nxt) :])
            seen.append(nxt)

    return {(ns, key): final(ns, eid) for (ns, key), eid in claimed.items()}, heads


def _titles(record: MemoryRecord) -> tuple[str, ...]:
    """What a note is called as a page: its ``title``, its leading ``# heading``, its file name."""
    out = []
    title = record.frontmatter.get("title")
    if isinstance(title, str) and title.strip():
        out.append(title.strip())
    first = record.body.lstrip().split("\n", 1)[0]
    if first.startswith("# "):
        out.append(first[2:].strip())
    out.append(record.path.rsplit("/", 1)[-1].removesuffix(".md"))
    return tuple(out)


@dataclass(frozen=True)
class PageWrite:
    """A page a build writes: its path, text and record, and the pages it replaces (moved or merged)."""

    path: str
    text: str
    record: MemoryRecord
    current: str | None
    """The page's file now (None: a new page); a person's uncommitted edit to it or ``gone`` holds it back."""
    gone: tuple[str, ...]


@dataclass(frozen=True)
class Build:
    """What a build of the pages from the memories changes (:func:`plan`), before anything is written."""

    pages: dict[str, MemoryRecord]
    """The page files there are now, by path."""
    entities: dict[tuple[str, str], Entity]
    writes: list[PageWrite]
    removals: list[str]
    """Pages of remnic's whose entity no memory names any more, nobody having edited them."""


def plan(
    mem: Memory,
    records: Sequence[MemoryRecord],
    progress: Callable[[int, int], None] | None = None,
    *,
    now: str | None = None,
) -> Build:
    """The pages a build from ``records`` (a scan) writes and removes, computed in memory: a refresh
    commits them, a read shows them without writing (:mod:`.entity_reads`; its ``now`` is a stamp of the
    memories, so two reads of one state show the same page)."""
    pages = {r.path: r for r in records if is_page(r)}
    entities, hand, folded = _entities(_sources(mem, records, progress), pages)
    earlier = _earlier_names(pages)
    now = now or now_iso()
    wanted: set[str] = set()
    writes: list[PageWrite] = []
    for (namespace, eid), entity in sorted(entities.items()):
        path = _page_path(namespace, eid)
        wanted.add(path)
        current = pages.get(path)
        renamed = None
        before = earlier.get((namespace, eid), [])
        if current is None and before:
            # The page under an older build's file name (person-josé-núñez.md) moves, with what a
            # person wrote in it, its status and its created date, in this commit.
            current = renamed = before[0]
        if current is not None and current.frontmatter.get("source") != SOURCE:
            continue  # a person's (or the original Remnic's) page: read, never rewritten
        if current is not None and current.status != "active":
            continue  # a person forgot or archived it: that stands, a rebuild must not revive it
        # Another older page of the entity (person-tomás-ortega.md beside person-tomas-ortega.md,
        # both from a build that kept accents) is merged into this one: what a person wrote
        # there is carried over, and it goes in the same commit.
        merged = [r for r in before if r is not renamed and r.frontmatter.get("source") == SOURCE]
        merged = [r for r in merged if r.status == "active"]
        # A page whose name a person listed among this page's aliases is folded in the same way.
        merged += [r for r in folded.get((namespace, eid), []) if current is not None and r is not current]
        gone = [r.path for r in ([renamed] if renamed is not None else []) + merged]
        wanted.update(gone)
        formerly = [_stem(r.path) for r in [*before, *merged] if _stem(r.path) != eid]
        theirs = [a for r in [current, *merged] if r is not None for a in hand.get(r.path, [])]
        text = _page_text(mem, entity, current, now, list(dict.fromkeys(formerly)), merged, theirs)
        if text is None:
            continue
        checked = check_text(text, path, mem.settings.store)
        if checked.problems or checked.record is None:
            continue  # e.g. a memory's secret-looking text quoted in the timeline: no page rather than a bad one
        writes.append(PageWrite(path, text, checked.record, current.path if current is not None else None, tuple(gone)))
    removals = [
        path
        for path, record in pages.items()
        if path not in wanted
        and record.frontmatter.get("source") == SOURCE
        and record.status == "active"  # a forgotten page stays, so the entity is not revived later
        and _unedited(record, hand.get(path, []))
    ]
    return Build(pages, entities, writes, removals)


def is_built(mem: Memory) -> bool:
    """Whether the pages on disk were built at HEAD by this remnic's rules (nothing to rebuild)."""
    head = mem.head()
    return head is not None and _built_head(mem) == head


def refresh(
    mem: Memory, *, force: bool = False, source: str = "api", progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """Rebuild remnic's entity pages from the memories when HEAD moved since the last build, an
    older remnic made it (:data:`VERSION`), or ``force``: pages written, removed and unchanged, and
    the commit holding the changes, and the namespaces of the pages written or removed.
    ``progress(done, total)`` counts the memories read for their names (the long step)."""
    if not mem.settings.entities.enabled:
        return {"enabled": False, "refreshed": False, "written": [], "removed": [], "skipped": [], "commit": None}
    if not force and is_built(mem):
        return {"enabled": True, "refreshed": False, "written": [], "removed": [], "skipped": [], "commit": None}
    written: list[str] = []
    removed: list[str] = []
    skipped: list[str] = []
    mem.settle_index()
    with mem.committer.exclusive() as tx:
        build = plan(mem, mem.files.scan().records, progress)
        pages, entities = build.pages, build.entities
        for page in build.writes:
            if any(_edited_by_hand(mem, tx, p) for p in ([page.current] if page.current else []) + list(page.gone)):
                skipped.append(page.path)
                continue
            tx.put(page.path, page.text, page.record)
            written.append(page.path)
            for old_path in page.gone:
                tx.remove(old_path)
                removed.append(old_path)
        for path in build.removals:
            if _edited_by_hand(mem, tx, path):
                skipped.append(path)
                continue
            tx.remove(path)
            removed.append(path)
        outcome = None
        if tx.staged:
            namespaces = sorted({r.namespace for r in pages.values()} | {ns for ns, _ in entities}) or ["default"]
            ids = [_page_id(ns, eid) for ns, eid in entities if _page_path(ns, eid) in written]
            outcome = tx.commit(
                f"remnic entities: {len(written)} page(s) written, {len(removed)} removed",
                trailers_for("entities", ids[:50], ",".join(namespaces), source),
            )
    if outcome is not None and outcome.sha is not None:
        mem.indexer.submit(outcome)
    if skipped:
        log.info("entity pages with uncommitted edits left as they are: %s", ", ".join(skipped))
    write_atomic(_manifest_path(mem), json.dumps({"version": VERSION, "head": mem.head()}) + "\n")
    changed = {ns for ns, eid in entities if _page_path(ns, eid) in written}
    changed |= {pages[p].namespace for p in removed if p in pages}
    return {
        "enabled": True,
        "refreshed": True,
        "written": written,
        "removed": removed,
        "skipped": skipped,
        "commit": outcome.sha if outcome is not None else None,
        "namespaces": sorted(changed),
    }


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _earlier_names(pages: dict[str, MemoryRecord]) -> dict[tuple[str, str], list[MemoryRecord]]:
    """Pages whose file name is not the entity id it stands for now, by (namespace, that id): earlier
    builds kept accents (``person-josé-núñez.md`` is ``person-jose-nunez``). A person's page first:
    it stands, and remnic writes no second page beside it."""
    out: dict[tuple[str, str], list[MemoryRecord]] = {}
    for path, record in sorted(pages.items(), key=lambda kv: (kv[1].frontmatter.get("source") == SOURCE, kv[0])):
        if id_of_stem(_stem(path)) != _stem(path):
            out.setdefault((record.namespace, id_of_stem(_stem(path))), []).append(record)
    return out


def _edited_by_hand(mem: Memory, tx: Any, path: str) -> bool:
    """Whether the page on disk differs from HEAD's: a person's edit in progress. Rewriting it would
    commit their text (or drop it), so the page waits until they commit."""
    return tx.read_bytes(path) != mem.ledger.committed_bytes(path)


def _aliases(meta: dict[str, Any]) -> list[str]:
    raw = meta.get("aliases")
    return [raw] if isinstance(raw, str) else [a for a in raw if isinstance(a, str)] if isinstance(raw, list) else []


def _unedited(record: MemoryRecord, hand: Sequence[str] = ()) -> bool:
    """Whether a page holds nothing a person wrote (added sections, lines, aliases or Timeline lines, a
    rewritten Synthesis), so it may go once no memory names its entity."""
    page = parse_page(record.content)
    from remnic.observe.entities.build import digest

    return (
        not page.extra_sections
        and not page.pre_section
        and not hand
        and all(is_ours(e) for e in page.timeline)
        and digest(page.synthesis) == record.frontmatter.get("synthesisHash")
    )


def _page_text(
    mem: Memory,
    entity: Entity,
    current: MemoryRecord | None,
    now: str,
    formerly: Sequence[str] = (),
    merged: Sequence[MemoryRecord] = (),
    theirs: Sequence[str] = (),
) -> str | None:
    """The page's new file text, or None when what it says would not change. ``formerly``: the
    entity's ids under older builds, kept as ``aliases`` so links to them still lead to the page.
    ``merged``: other pages of the entity that go, what a person wrote on them carried into this one.
    ``theirs``: the ``## Aliases`` lines a person added to this page and those, kept after the ones
    the memories give (which ``builtAliases`` records)."""
    meta: dict[str, Any] = dict(current.frontmatter) if current is not None else {}
    body = current.body if current is not None else ""
    kept = _aliases(meta)
    if current is not None and merged:
        into, recorded = parse_page(body), meta.get("synthesisHash")
        for other in merged:
            into, recorded = carry_written(
                into, recorded, parse_page(other.body), other.frontmatter.get("synthesisHash"), _stem(other.path)
            )
            kept += [a for a in _aliases(other.frontmatter) if a not in kept]
        meta["synthesisHash"], body = recorded, render_page(into)
    existing = (meta, body) if current is not None else None
    page, synthesis_hash = page_for(entity, existing, mem.settings.entities.timeline_max)
    page.aliases = merge_aliases(page.name, page.aliases, theirs)
    person = {name_key(a) for a in theirs}
    built = [a for a in page.aliases if name_key(a) not in person]
    if page.aliases:
        meta[BUILT] = built
    else:
        meta.pop(BUILT, None)
    recorded = current is None or current.frontmatter.get(BUILT) == meta.get(BUILT)
    old = parse_page(body) if current is not None else None
    new_id = _page_id(entity.namespace, entity.id)
    former = meta.get("id")
    names = [*formerly, *([former.rsplit(":", 1)[-1]] if isinstance(former, str) and former != new_id else [])]
    missing = [n for n in dict.fromkeys(names) if n not in kept and n != entity.id]
    if missing or kept != _aliases(meta):  # [[person-josé-núñez]] in a memory still leads to the page
        meta["aliases"] = [*kept, *missing]
    counted = current is not None and current.frontmatter.get("memoryCount") == len(entity.sources)
    unchanged = old is not None and counted and recorded and same_content(page, old)
    if unchanged and former == new_id and not missing and not merged:
        return None
    page.updated = now
    body = "\n" + render_page(page)
    synthesis_changed = old is None or old.synthesis.strip() != page.synthesis.strip()
    meta.update(
        {
            "id": new_id,
            "category": "entity",
            "created": meta.get("created") or now,
            "updated": now,
            "source": SOURCE,
            "tags": [entity.type],
            "status": "active",
            "synthesis_updated_at": now if synthesis_changed else meta.get("synthesis_updated_at") or now,
            "synthesis_timeline_count": len(page.timeline),
            # The timeline shows the latest entities.timelineMax: the count says how many name it.
            "memoryCount": len(entity.sources),
            "synthesis_version": int(meta.get("synthesis_version") or 0) + (1 if synthesis_changed else 0) or 1,
            "synthesisHash": synthesis_hash,
        }
    )
    meta.update(derived_fields(meta, body))
    return serialize(meta, body)


# --- reading: entity_reads (pages as a build would write them, nothing written) ---


def list_entities(mem: Memory, **kwargs: Any) -> tuple[list[dict[str, Any]], int]:
    """:func:`.entity_reads.list_entities` (kept here: callers name this module)."""
    from .entity_reads import list_entities as _list

    return _list(mem, **kwargs)


def get_entity(mem: Memory, name: str, *, namespace: str | None = None) -> dict[str, Any]:
    """:func:`.entity_reads.get_entity` (kept here: callers name this module)."""
    from .entity_reads import get_entity as _get

    return _get(mem, name, namespace=namespace)
