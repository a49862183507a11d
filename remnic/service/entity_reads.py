"""Entity pages as a read sees them (`remnic entities list|show`, GET entities, the MCP tools): the pages
on disk, with remnic's own pages as a build at HEAD would write them when the memories changed since the
last build — computed in memory, nothing written or committed, so a read never makes the next recall
index pages again. Pages are written by `remnic entities refresh` (see :mod:`.entities`). A page of
remnic's with uncommitted edits is shown as it is on disk, as a refresh would leave it.

A person's page also says whether they left (``left``): the latest of the memories on its timeline that
says they joined or left the team, the company or "here" ("Priya left the company"), when it says left."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from remnic.errors import LedgerError, NotFoundError, ValidationError
from remnic.memfile.model import MemoryRecord
from remnic.memfile.validate import check_namespace
from remnic.observe.entities import ENTITY_TYPES, EntityPage, cited_ids, entity_id, name_key, parse_page, slugify
from remnic.observe.entities.build import SOURCE
from remnic.observe.team_cues import MEMBERSHIP_RE
from remnic.repo.gitlog import literal

from .entities import _aliases, is_built, is_page, plan

if TYPE_CHECKING:
    from .memory import Memory

__all__ = ["current_pages", "get_entity", "left_of", "list_entities"]


def current_pages(mem: Memory) -> list[MemoryRecord]:
    """Every entity page, remnic's as a build at HEAD makes them (in memory: nothing is written)."""
    records = mem.files.scan().records
    pages = {r.path: r for r in records if is_page(r)}
    if not mem.settings.entities.enabled or is_built(mem):
        return list(pages.values())
    # Stamped with the newest memory's time, not the clock: two reads of one state show one page.
    stamp = max((str(r.frontmatter.get("updated") or "") for r in records if not is_page(r)), default="")
    build = plan(mem, records, now=stamp or None)
    if not build.writes and not build.removals:
        return list(pages.values())
    # A page a person is editing (uncommitted) stays as they left it, as a refresh leaves it.
    dirty = {path for _, path, _ in mem.ledger.status_porcelain()}
    for page in build.writes:
        if dirty.isdisjoint([*([page.current] if page.current else []), *page.gone]):
            for gone in page.gone:
                pages.pop(gone, None)
            pages[page.path] = page.record
    for path in build.removals:
        if path not in dirty:
            pages.pop(path, None)
    return list(pages.values())


_LINK = re.compile(r"\s*\[\[([^\[\]|#\n]{1,200})\]\]")
_JOINING = re.compile(r"\b(?:join|joins|joined|joining)\b", re.I)


def left_of(page: EntityPage) -> dict[str, str] | None:
    """For a person: when and how the memories say they left (the latest joining or leaving line of the
    timeline, when it is a leaving one), as ``{date, text, memoryId}``; None otherwise."""
    if page.type != "person":
        return None
    names = {name_key(page.name), name_key(page.name).split(" ", 1)[0]}
    found = None
    for entry in sorted(page.timeline, key=lambda e: e.timestamp):
        text = _LINK.sub("", entry.text).strip()
        said = MEMBERSHIP_RE.search(text)
        if said is None or name_key(said.group(0).split(" ", 1)[0]) not in names:
            continue
        ids = _LINK.findall(entry.text)
        joined = _JOINING.search(said.group(0)) is not None
        found = None if joined else {"date": entry.timestamp[:10], "text": text, "memoryId": ids[0] if ids else ""}
    return found


def _pages(mem: Memory, namespace: str | None) -> list[tuple[MemoryRecord, EntityPage]]:
    if namespace is not None:
        problems = check_namespace(namespace)
        if problems:
            raise ValidationError(problems[0].describe(), problems=problems)
    out = []
    for record in current_pages(mem):
        # Every status: a forgotten or archived page is history, not listed or shown, but a lookup says so.
        if is_page(record) and (namespace is None or record.namespace == namespace):
            page = parse_page(record.content, updated=str(record.frontmatter.get("updated") or ""))
            if not page.name:
                page.name = record.path.rsplit("/", 1)[-1].removesuffix(".md")
            out.append((record, page))
    return out


def _memory_count(record: MemoryRecord, page: EntityPage) -> int:
    """How many memories name the entity: remnic's count, else (a person's page) its timeline's lines."""
    count = record.frontmatter.get("memoryCount")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        return count
    return len(page.timeline) or len(page.facts)


def _summary(record: MemoryRecord, page: EntityPage) -> dict[str, Any]:
    return {
        "name": page.name,
        "type": page.type,
        "updated": page.updated,
        "summary": page.synthesis.split("\n\n", 1)[0] if page.synthesis else "",
        "aliases": list(page.aliases),
        "factCount": _memory_count(record, page),
        "id": record.id,
        "path": record.path,
        "namespace": record.namespace,
        "managed": record.frontmatter.get("source") == SOURCE,
        "left": left_of(page),
    }


def list_entities(
    mem: Memory,
    *,
    query: str | None = None,
    entity_type: str | None = None,
    namespace: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[dict[str, Any]], int]:
    """Entity summaries sorted by name (``query``: a case-insensitive substring of the name, type,
    summary, aliases or facts), and how many matched before paging."""
    if entity_type is not None and entity_type not in ENTITY_TYPES:
        raise ValidationError.single("type", f"unknown entity type {entity_type!r}", options=ENTITY_TYPES)
    needle = (query or "").strip().lower()
    rows = []
    for record, page in _pages(mem, namespace):
        if record.status != "active" or (entity_type is not None and page.type != entity_type):
            continue
        if needle:
            hay = " ".join(
                [page.name, page.type, page.synthesis, *page.aliases, *(e.text for e in page.timeline), *page.facts]
            )
            if needle not in hay.lower():
                continue
        rows.append(_summary(record, page))
    rows.sort(key=lambda r: (r["name"].lower(), r["type"], r["namespace"]))
    return rows[offset : offset + limit], len(rows)


def get_entity(mem: Memory, name: str, *, namespace: str | None = None) -> dict[str, Any]:
    """One entity page as the original's EntityFile JSON (plus id, path, namespace, created and the
    memories it cites), found by id (``person-priya-raman``), name, alias or first name,
    case-insensitively (the closest match first). A first name that starts more than one full name
    is a :class:`ValidationError` naming them. A forgotten or archived page is not shown: the
    :class:`NotFoundError` says so, when and in which commit (when no current page matches)."""
    if not isinstance(name, str) or not name.strip():
        raise ValidationError.single("name", "must be a non-empty string")
    wanted = name.strip().lower()
    key = name_key(name)  # accents folded: "tomas" finds Tomás
    slug = slugify(name)
    pages = _pages(mem, namespace)
    rank = {t: i for i, t in enumerate(ENTITY_TYPES)}

    def score(item: tuple[MemoryRecord, EntityPage]) -> int | None:
        record, page = item
        stem = record.path.rsplit("/", 1)[-1].removesuffix(".md").lower()
        if wanted in (record.id.lower(), stem):
            return 0
        if name_key(page.name) == key or stem == entity_id(page.type, name):
            return 1
        if slug and stem.split("-", 1)[-1] == slug:
            return 2
        if key in (name_key(a) for a in [*page.aliases, *_aliases(record.frontmatter)]):
            return 3
        if " " not in key and name_key(page.name).split(" ", 1)[0] == key:
            return 4  # "Priya" for "Priya Raman"
        return None

    ranked = sorted(
        ((s, rank.get(p.type, 99), r.path, r, p) for r, p in pages if (s := score((r, p))) is not None),
        key=lambda x: x[:3],
    )
    found = [x for x in ranked if x[3].status == "active"]
    if not found and ranked:
        raise _gone(mem, name, ranked[0][3])
    if not found:
        raise NotFoundError(f"no entity named {name[:100]!r}" + (f" in namespace {namespace}" if namespace else ""))
    best = [x for x in found if x[0] == found[0][0]]
    if found[0][0] == 4 and len({x[3].path for x in best}) > 1:
        # A first name is a person only when it starts exactly one known full name (as the build rules).
        names = ", ".join(sorted({x[4].name for x in best}))
        raise ValidationError.single("name", f"{name.strip()[:100]!r} is ambiguous: it could be {names}")
    record, page = found[0][3], found[0][4]
    return {
        **page.to_dict(),
        "id": record.id,
        "path": record.path,
        "namespace": record.namespace,
        "created": str(record.frontmatter.get("created") or ""),
        "memoryIds": cited_ids(page),
        "managed": record.frontmatter.get("source") == SOURCE,
        "left": left_of(page),
    }


def _gone(mem: Memory, name: str, record: MemoryRecord) -> NotFoundError:
    """The error for a name whose page a person forgot or archived: which page, since when, by which
    commit (the newest that set its status; none while that edit is uncommitted), and how to undo it."""
    status = record.status
    at = str(record.frontmatter.get(f"{status}At") or "")[:10]
    try:
        sha = mem.ledger.git(
            "log", "-n", "1", "--format=%H", f"-G^status:.*{status}", "--", *literal(record.path)
        ).strip()
    except LedgerError:
        sha = ""
    when = (f" on {at}" if at else "") + (f" in commit {sha[:8]}" if sha else "")
    return NotFoundError(
        f"no entity named {name.strip()[:100]!r}: its page {record.path} was {status}{when}; the file is kept, "
        f"out of lists and recall (`remnic update {record.path} --status active` brings it back)"
    )
