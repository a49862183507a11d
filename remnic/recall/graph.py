"""The graph tier's traversal: one or two hops from strong hits over the memories' own references.

Edges come from what the files already say, each with a confidence:

- ``links: [id, ...]`` in the frontmatter, or the original Remnic's ``links`` objects
  (``{targetId, linkType, strength}``) — an explicit link (``graphLinkConfidence``);
- ``[[target]]`` / ``[[target|label]]`` in the body or in a frontmatter value — a wikilink
  to an id, a path, a file name, a note's title or one of its ``aliases``
  (``graphWikilinkConfidence``); a file name that several notes share leads, as in Obsidian,
  to the one in the linking note's folder, else to the one with the shortest path, and the
  edge's kind says so;
- a shared ``entityRef`` — both memories are about the same entity (``graphEntityConfidence``);
- an entity page (``entities/<type>-<name>.md``): a memory's ``entityRef`` leads to the page of
  that id, and a memory leads to the pages whose timeline cites it as ``[[id]]``; the page's own
  ``[[…]]`` links lead on to the other memories about the entity (``graphEntityConfidence``).

A path's confidence is the product of its edges' confidences; paths below
``graphMinConfidence`` are not followed. The traversal is a pure function of
the seeds and a :class:`Lookup` (so it is tested without an index); the
pipeline provides a lookup over the catalog.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from remnic.memfile import values as _values

if TYPE_CHECKING:  # pragma: no cover
    from remnic.index.catalog import Catalog
    from remnic.index.vectors import Snapshot

WIKILINK_RE = re.compile(r"\[\[([^\[\]|#\n]{1,200})(?:[#|][^\[\]\n]*)?\]\]")
ENTITY_PAGE_RE = re.compile(r"(?:^|/)entities/((?:person|project|tool|place|company|topic|other)-[^/]+)\.md$")


def is_entity_page(path: str, memory_id: str) -> bool:
    """An entity page (agents.md: a memory of category ``entity`` at ``entities/<type>-<name>.md``,
    whose id is that file name; the caller checks the category): the graph tier walks through it,
    and recall does not return it unless asked for the entity category (its timeline repeats the
    memories it cites). A page whose own id remnic cannot read (an older build's
    ``person-josé-núñez``) reads as the id its path gives, and is a page all the same; a memory
    stored with ``--category entity`` has an id of its own and stays a memory."""
    m = ENTITY_PAGE_RE.search(path)
    if m is None:
        return False
    own = memory_id.rsplit(":", 1)[-1]
    return own == m.group(1) or memory_id == _values.provisional_id(path)


def entity_page_rows(snap: Snapshot) -> list[int]:
    """Rows of the index holding entity pages (category ``entity``, see :func:`is_entity_page`)."""
    rows = np.flatnonzero(snap.mask(categories=["entity"]))
    return [int(r) for r in rows if is_entity_page(snap.paths[r], snap.ids[r])]


@dataclass(frozen=True)
class Edge:
    target: int
    kind: str
    """link | wikilink | entityRef | entity-page; an ambiguous wikilink's kind adds which note it took"""
    confidence: float


@dataclass
class Reached:
    """The best path found to one memory."""

    row: int
    seed_row: int
    path_rows: list[int]
    """Seed first, this memory last."""
    confidences: list[float]
    """One per edge: ``len(path_rows) - 1``."""
    kinds: list[str] = field(default_factory=list)

    @property
    def confidence(self) -> float:
        out = 1.0
        for c in self.confidences:
            out *= c
        return out


class Lookup(Protocol):
    def fields(self, rows: Sequence[int]) -> dict[int, tuple[Mapping[str, Any], str]]: ...
    def row_of_ref(self, ref: str) -> int | None: ...
    def rows_with_entity(self, entity: str) -> list[int]: ...
    def pages_citing(self, memory_id: str) -> list[int]: ...


def entity_refs(fm: Mapping[str, Any]) -> list[str]:
    value = fm.get("entityRef")
    if isinstance(value, str):
        value = [value]
    return [str(v).strip() for v in value or () if str(v).strip()] if isinstance(value, list) else []


def link_refs(fm: Mapping[str, Any]) -> list[str]:
    return _values.link_refs(fm)


def wikilinks(content: str, fm: Mapping[str, Any] | None = None) -> list[str]:
    found = [m.group(1).strip() for m in WIKILINK_RE.finditer(content or "")]
    return list(dict.fromkeys(found + (_values.frontmatter_wikilinks(fm) if fm else [])))


def edges_of(
    row: int,
    fm: Mapping[str, Any],
    content: str,
    lookup: Lookup,
    *,
    link_conf: float,
    wikilink_conf: float,
    entity_conf: float,
) -> list[Edge]:
    """Outgoing edges of one memory, strongest kind kept per target, in a stable order."""
    best: dict[int, Edge] = {}

    def add(target: int | None, kind: str, conf: float) -> None:
        if target is None or target == row:
            return
        if target not in best or best[target].confidence < conf:
            best[target] = Edge(target, kind, conf)

    for ref in link_refs(fm):
        add(lookup.row_of_ref(ref), "link", link_conf)
    link_target = getattr(lookup, "link_target", None)
    for ref in wikilinks(content, fm):
        if link_target is None:
            add(lookup.row_of_ref(ref), "wikilink", wikilink_conf)
        else:
            target, note = link_target(ref, row)
            add(target, f"wikilink ({note})" if note else "wikilink", wikilink_conf)
    for entity in entity_refs(fm):
        for target in lookup.rows_with_entity(entity):
            add(target, "entityRef", entity_conf)
        add(lookup.row_of_ref(entity), "entity-page", entity_conf)
    citing = getattr(lookup, "pages_citing", None)
    if citing is not None and isinstance(fm.get("id"), str) and fm.get("category") != "entity":
        for target in citing(fm["id"]):
            add(target, "entity-page", entity_conf)
    return sorted(best.values(), key=lambda e: (-e.confidence, e.target))


# Nodes expanded per hop, strongest paths first. A hub (an entity named in hundreds of memories, or
# its page) would otherwise make every hop read the edges of all its neighbours: seconds per recall
# at 5k memories, for a tier that serves at most ``graphMaxNodes``. A module constant because the
# recall settings do not carry it; ordinary repos never reach it.
MAX_EXPAND_PER_HOP = 32


def traverse(
    seeds: Sequence[int],
    lookup: Lookup,
    *,
    max_hops: int,
    min_confidence: float,
    link_conf: float,
    wikilink_conf: float,
    entity_conf: float,
    max_nodes: int,
) -> list[Reached]:
    """Best-confidence paths (up to ``max_hops`` edges) from the seeds to memories that are not seeds.

    Work is bounded: each hop expands at most :data:`MAX_EXPAND_PER_HOP` nodes, each once (its best
    path), and skips a node when no path through it can beat the ``max_nodes`` already found (a
    longer path with equal confidence sorts after them), so a hub costs a few hops, not its degree
    squared."""
    keep = max(0, max_nodes)
    seed_set = set(seeds)
    best_edge = max(link_conf, wikilink_conf, entity_conf, 0.0)
    reached: dict[int, Reached] = {}
    frontier = [Reached(s, s, [s], []) for s in dict.fromkeys(seeds)]
    for _hop in range(max(0, max_hops)):
        if len(reached) >= keep:
            # Confidence of the weakest path that would still be returned: only a stronger one matters.
            bar = sorted((r.confidence for r in reached.values()), reverse=True)[keep - 1] if keep else 1.0
            frontier = [n for n in frontier if n.confidence * best_edge > bar + 1e-12]
        if len(frontier) > MAX_EXPAND_PER_HOP:
            strongest = sorted(frontier, key=lambda n: (-n.confidence, len(n.path_rows), n.row))
            chosen = {n.row for n in strongest[:MAX_EXPAND_PER_HOP]}
            frontier = [n for n in frontier if n.row in chosen]  # in order found: equal paths keep the first
        if not frontier:
            break
        fields = lookup.fields([r.row for r in frontier])
        nxt: dict[int, Reached] = {}
        for node in frontier:
            fm, content = fields.get(node.row, ({}, ""))
            for edge in edges_of(
                node.row, fm, content, lookup, link_conf=link_conf, wikilink_conf=wikilink_conf, entity_conf=entity_conf
            ):
                if edge.target in seed_set or edge.target in node.path_rows:
                    continue
                conf = node.confidence * edge.confidence
                if conf < min_confidence:
                    continue
                old = reached.get(edge.target)
                if old is None or conf > old.confidence + 1e-12:
                    path = Reached(
                        edge.target,
                        node.seed_row,
                        node.path_rows + [edge.target],
                        node.confidences + [edge.confidence],
                        node.kinds + [edge.kind],
                    )
                    reached[edge.target] = path
                    nxt.pop(edge.target, None)  # a stronger path replaces a weaker one: expand it once
                    nxt[edge.target] = path
        frontier = list(nxt.values())
    ordered = sorted(reached.values(), key=lambda r: (-r.confidence, len(r.path_rows), r.row))
    return ordered[:keep]


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def nearest_note(paths: Sequence[str], source: str | None) -> str:
    """Obsidian's pick among notes sharing a file name: the one in the linking note's folder, else
    the one with the shortest path (then the first by name, so the pick is stable)."""
    if source is not None:
        here = sorted(p for p in paths if _folder(p) == _folder(source))
        if here:
            return here[0]
    return min(paths, key=lambda p: (len(p), p))


class _Shared:
    """What the lookups derive from the whole catalog (names, file stems, entity mentions, page
    citations), kept per catalog and generation as paths: rebuilt after a write, not per recall."""

    def __init__(self) -> None:
        self.stems: dict[str, list[str]] | None = None
        self.names: dict[str, str] | None = None
        self.entities: dict[str, list[str]] = {}
        self.citing: dict[str, list[str]] | None = None


_shared: dict[str, tuple[int, _Shared]] = {}
_shared_lock = threading.Lock()
_MAX_SHARED = 4
_CITE_RE = re.compile(r"\[\[([^\[\]]*)\]\]")


def _shared_for(catalog: Catalog, gen: int) -> _Shared:
    key = str(getattr(catalog, "path", id(catalog)))
    with _shared_lock:
        seen = _shared.get(key)
        if seen is not None and seen[0] == gen:
            return seen[1]
        _shared.pop(key, None)
        while len(_shared) >= _MAX_SHARED:  # a rebuild makes a new catalog: forget old ones
            _shared.pop(next(iter(_shared)))
        fresh = _Shared()
        _shared[key] = (gen, fresh)
        return fresh


class CatalogLookup:
    """Resolves references against the live index (read-only catalog queries; what spans the whole
    catalog is shared between recalls of the same index generation)."""

    def __init__(self, snap: Snapshot, catalog: Catalog, alive: Any) -> None:
        self.snap = snap
        self.catalog = catalog
        self.alive = alive
        self._fields: dict[int, tuple[Mapping[str, Any], str]] = {}
        self._shared = _shared_for(catalog, int(getattr(snap, "gen", -1)))

    def prime(self, rows_fields: Mapping[int, tuple[Mapping[str, Any], str]]) -> None:
        self._fields.update(rows_fields)

    def fields(self, rows: Sequence[int]) -> dict[int, tuple[Mapping[str, Any], str]]:
        missing = [r for r in rows if r not in self._fields]
        if missing:
            got = self.catalog.hit_fields([self.snap.paths[r] for r in missing])
            for r in missing:
                self._fields[r] = got.get(self.snap.paths[r], ({}, ""))
        return {r: self._fields[r] for r in rows}

    def _live(self, path: str | None) -> int | None:
        if path is None:
            return None
        r = self.snap.row_of.get(path)
        return r if r is not None and self.alive[r] else None

    def row_of_ref(self, ref: str) -> int | None:
        return self.link_target(ref, None)[0]

    def link_target(self, ref: str, source: int | None) -> tuple[int | None, str]:
        """The row ``ref`` names as seen from the memory at row ``source``, and a note when it is a file
        name several live notes share (which one it took, and the others)."""
        try:
            row = self._live(self.catalog.path_of(ref))
        except Exception:  # noqa: BLE001 - an unreadable reference is just not an edge
            row = None
        if row is not None:
            return row, ""
        for candidate in (ref, ref + ".md", ref + ".markdown"):
            row = self._live(candidate if candidate in self.snap.row_of else None)
            if row is not None:
                return row, ""
        shared = self._shared
        if shared.stems is None:
            # File names without folder or extension, for [[wikilinks]] by name.
            stems: dict[str, list[str]] = {}
            for path in self.snap.row_of:
                stems.setdefault(path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower(), []).append(path)
            shared.stems = stems
        paths = [p for p in shared.stems.get(ref.lower(), ()) if self._live(p) is not None]
        if paths:
            source_path = self.snap.paths[source] if source is not None else None
            chosen = nearest_note(paths, source_path)
            note = ""
            if len(paths) > 1:
                others = ", ".join(sorted(p for p in paths if p != chosen))
                note = f"[[{ref}]] names {len(paths)} notes: took {chosen}, not {others}"
            return self._live(chosen), note
        return self._live(self._names_map().get(ref.strip().lower())), ""

    def _names_map(self) -> dict[str, str]:
        """Titles and aliases → path, for ``[[Title]]`` and ``[[alias]]``; built when a link named
        no id, path or file."""
        shared = self._shared
        if shared.names is None:
            names: dict[str, str] = {}
            row_of = self.snap.row_of
            try:
                for path, title in self.catalog.conn.execute("SELECT path, title FROM docs"):
                    if title and path in row_of:
                        names.setdefault(str(title).strip().lower(), path)
                cur = self.catalog.conn.execute(
                    "SELECT path, frontmatter, content FROM docs WHERE frontmatter LIKE '%\"alias%' "
                    "OR path LIKE 'entities/%' OR path LIKE '%/entities/%'"
                )
                for path, fm, content in cur:
                    if path in row_of:
                        for alias in _values.aliases_of(json.loads(fm), content, path):
                            names.setdefault(alias.strip().lower(), path)
            except Exception:  # noqa: BLE001 - no name lookups rather than a failed recall
                pass
            shared.names = names
        return shared.names

    def rows_with_entity(self, entity: str) -> list[int]:
        paths = self._shared.entities.get(entity)
        if paths is None:
            paths = []
            try:
                cur = self.catalog.conn.execute(
                    "SELECT path, frontmatter FROM docs WHERE frontmatter LIKE ?", (f"%{entity}%",)
                )
                paths = [path for path, fm in cur if entity in entity_refs(json.loads(fm))]
            except Exception:  # noqa: BLE001 - no entity edges rather than a failed recall
                paths = []
            self._shared.entities[entity] = paths
        return sorted(r for r in map(self._live, paths) if r is not None)

    def pages_citing(self, memory_id: str) -> list[int]:
        """Entity pages whose text cites ``[[memory_id]]`` (their timeline lists the memory)."""
        shared = self._shared
        if shared.citing is None:
            citing: dict[str, list[str]] = {}
            try:
                cur = self.catalog.conn.execute("SELECT path, content FROM docs WHERE category = 'entity'")
                for path, content in cur:
                    for cited in dict.fromkeys(_CITE_RE.findall(content or "")):
                        citing.setdefault(cited, []).append(path)
            except Exception:  # noqa: BLE001 - no page edges rather than a failed recall
                citing = {}
            shared.citing = citing
        return sorted(r for r in map(self._live, shared.citing.get(memory_id, ())) if r is not None)


def ids_of(rows: Iterable[int], snap: Snapshot) -> list[str]:
    return [snap.ids[r] for r in rows]
