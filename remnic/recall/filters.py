"""The caller's filters, ``tags`` (any or all of them) and ``asOf`` (valid at a time), as ladder stages.

HTTP and MCP recall (and ``remnic query --tag/--as-of``) keep only the memories carrying the given
tags, or valid at the given time. Each filter is a stage of the ladder (``tag-match``, ``as-of``),
the first of the per-candidate gates, so the result limit, the budget, the X-ray and the audit entry
all describe the recall that was returned. A verdict reads a few frontmatter keys (:data:`KEYS`):
:func:`facts_of` turns them into :class:`Facts` and :meth:`RecallFilters.verdict` judges those
(both pure). The recall reads those keys for every memory once per index generation
(:func:`facts_table`), so that when the filters reject part of what the retrievers found it can
ask them again within the memories that pass, and still return up to top-k of them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.errors import UsageError
from remnic.memfile.model import format_time, parse_time
from remnic.memfile.values import frontmatter_tags, tag_key

from .ladder import FILTER_STAGES

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from remnic.index.catalog import Catalog

    from .pool import Pool

TAG_STAGE, AS_OF_STAGE = FILTER_STAGES
TAG_MATCHES = ("any", "all")
KEYS = ("tags", "validAt", "created", "invalidAt", "supersededAt")
"""The frontmatter keys the filters read."""


@dataclass(frozen=True)
class Facts:
    """What the filters know of one memory."""

    tags: frozenset[str] = frozenset()
    """Its tags as compared (:func:`tag_key`): trimmed, in NFC, case-folded."""
    start: float | None = None
    """When it became valid: ``validAt``, else ``created`` (epoch seconds)."""
    invalid: float | None = None
    superseded: float | None = None

    @property
    def end(self) -> float | None:
        """When it stopped being true: ``invalidAt`` (the end of its validity), else ``supersededAt``
        (when it was replaced, the only time known)."""
        return self.invalid if self.invalid is not None else self.superseded


NO_FACTS = Facts()
SUPERSEDED = "superseded"


def facts_of(frontmatter: Mapping[str, Any], tags: Sequence[str] | None = None) -> Facts:
    """``tags``: the memory's tags as remnic reads them (every frontmatter spelling — ``tags: a, b``,
    ``"#a #b"``, ``tag:`` — and the body's ``#tags``); else read from the frontmatter alone."""
    named = frontmatter_tags(frontmatter) if tags is None else tags
    folded = frozenset(k for k in map(tag_key, named) if k)
    start = parse_time(frontmatter.get("validAt"))
    return Facts(
        folded,
        start if start is not None else parse_time(frontmatter.get("created")),
        parse_time(frontmatter.get("invalidAt")),
        parse_time(frontmatter.get("supersededAt")),
    )


@dataclass(frozen=True)
class RecallFilters:
    """The filters of one recall; build them with :func:`make_filters`."""

    tags: tuple[str, ...] = ()
    """As compared (:func:`tag_key`); empty: no tag filter."""
    tag_match: str = "any"
    as_of: float | None = None
    """Epoch seconds; None: no time filter."""

    @property
    def stages(self) -> tuple[str, ...]:
        """The ladder stages these filters add, in ladder order."""
        return ((TAG_STAGE,) if self.tags else ()) + ((AS_OF_STAGE,) if self.as_of is not None else ())

    def verdict(self, facts: Facts) -> tuple[str, str] | None:
        """(stage, why) of the first filter that rejects a memory with these facts; None when every one admits it."""
        if self.tags:
            wanted = set(self.tags)
            ok = wanted <= facts.tags if self.tag_match == "all" else bool(wanted & facts.tags)
            if not ok:
                return TAG_STAGE, "other-tags" if facts.tags else "untagged"
        at = self.as_of
        if at is not None:
            if facts.start is not None and facts.start > at:
                return AS_OF_STAGE, "not-yet-valid"
            if facts.invalid is not None and facts.invalid <= at:
                return AS_OF_STAGE, "invalidated"
            if facts.invalid is None and facts.superseded is not None and facts.superseded <= at:
                return AS_OF_STAGE, "superseded"
        return None

    def status_at(self, status: str, facts: Facts) -> str:
        """The status a memory had at ``as_of``: a superseded one whose validity ended after then was
        current (``active``) at that time; any other status is its own (forgotten stays forgotten)."""
        at, end = self.as_of, facts.end
        if status == SUPERSEDED and at is not None and end is not None and end > at:
            return "active"
        return status

    def describe(self, stage: str) -> str:
        """What the stage asks: its reason in the ladder (what it rejected follows)."""
        if stage == TAG_STAGE:
            return f"{self.tag_match} of tags {', '.join(self.tags)}"
        return f"valid at {format_time(self.as_of or 0.0)}"


def make_filters(
    tags: Iterable[str] | None, tag_match: str = "any", as_of: float | None = None
) -> RecallFilters | None:
    """The filters for these options; None when they filter nothing (no tag, no time)."""
    if tag_match not in TAG_MATCHES:
        raise UsageError(f"tag_match must be one of {', '.join(TAG_MATCHES)}, got {tag_match!r}")
    folded = tuple(dict.fromkeys(k for k in map(tag_key, tags or ()) if k))
    if not folded and as_of is None:
        return None
    return RecallFilters(folded, tag_match, as_of)


def passing_rows(filters: RecallFilters, table: Mapping[str, Facts], paths: list[str], rows: np.ndarray) -> list[int]:
    """Those of ``rows`` (indices into ``paths``) whose memory every filter admits."""
    return [int(r) for r in rows if filters.verdict(table.get(paths[r], NO_FACTS)) is None]


def filter_scope(
    pool: Pool, filters: RecallFilters | None, mask: np.ndarray, *, within: bool = False
) -> tuple[list[str] | None, int]:
    """Narrow ``mask`` (in place) to the memories the caller's filters admit, and keep BM25 within them:
    (their paths, 0) when they are the fewer, else (None, how many the filters left out). ``within``:
    always their paths, ``mask`` already being narrower than BM25's own filters (a phrase's memories)."""
    if filters is None:
        return ([pool.snap.paths[r] for r in mask.nonzero()[0]] if within else None), 0
    scope = mask.nonzero()[0]
    keep = passing_rows(filters, pool.facts, pool.snap.paths, scope)
    mask[:] = False
    mask[keep] = True
    # Both cost BM25 a few µs per path (a term set) or per extra result read: take the smaller.
    if within or len(keep) <= len(scope) - len(keep):
        return [pool.snap.paths[r] for r in keep], 0
    return None, len(scope) - len(keep)


# --- the facts of every memory of an index build, kept current by generation ---

_MAX_BUILDS = 8
_lock = threading.Lock()
_tables: dict[str, tuple[int, dict[str, Facts]]] = {}


def facts_table(catalog: Catalog, gen: int) -> dict[str, Facts]:
    """path → :class:`Facts` for every memory of ``catalog``: read whole once, then only the rows
    written (and the tombstones left) since the generation last seen. Do not modify it."""
    key = str(catalog.path)
    with _lock:
        seen = _tables.get(key)
        if seen is not None and seen[0] == gen:
            return seen[1]
        if seen is None:
            table = {path: facts_of(fm, tags) for path, fm, tags in catalog.frontmatter_keys(KEYS)}
        else:
            table = dict(seen[1])
            table.update(
                (path, facts_of(fm, tags)) for path, fm, tags in catalog.frontmatter_keys(KEYS, since_gen=seen[0])
            )
            for path in catalog.tombstones_since(seen[0]):
                table.pop(path, None)
        _tables.pop(key, None)
        while len(_tables) >= _MAX_BUILDS:  # old builds (a rebuild makes a new catalog) are forgotten
            _tables.pop(next(iter(_tables)))
        _tables[key] = (gen, table)
        return table
