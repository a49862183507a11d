"""Browsing memories without recall: filtered, paged, newest first (GET memories, the review queue)."""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from remnic.errors import ValidationError
from remnic.memfile.model import CATEGORIES, STATUSES, MemoryRecord, parse_time
from remnic.memfile.validate import check_namespace
from remnic.memfile.values import fold_case
from remnic.repo.files import MemoryStore

from . import arguments as _check

if TYPE_CHECKING:
    from .memory import Memory

REVIEW_STATUSES = ("pending_review", "quarantined")


@dataclass(frozen=True)
class Filters:
    """The browse filters, checked once: a misspelt category or status must say so, not match nothing."""

    category: str | None = None
    status: str | None = None
    tag: str | None = None
    """As tags are compared (``tag_key``): no leading '#', NFC, case-folded."""
    namespace: str | None = None

    @classmethod
    def check(
        cls, *, category: object = None, status: object = None, tag: object = None, namespace: object = None
    ) -> Filters:
        problems = check_namespace(namespace)
        if problems:
            raise ValidationError(problems[0].describe(), problems=problems)
        return cls(
            _check.choice(category or None, "category", CATEGORIES),
            _check.choice(status or None, "status", STATUSES),
            _check.tag_filter(tag),
            namespace if isinstance(namespace, str) and namespace else None,
        )

    def admit(self, record: MemoryRecord) -> bool:
        # Each record property is derived on every access (tags most of all): ask only for a filter given.
        return (
            (self.namespace is None or record.namespace == self.namespace)
            and (self.status is None or record.status == self.status)
            and (self.category is None or record.category == self.category)
            and (self.tag is None or _check.has_tag(record.tags, self.tag))
        )


def listing(memory: Memory, **filters: object) -> tuple[list[MemoryRecord], list[str]]:
    """``remnic list``: the memories the filters admit, and the malformed files the scan left out (their
    paths), from one scan; a malformed file is said, not silently missing from the list."""
    admit = Filters.check(**filters).admit  # a misspelt filter is refused before anything is read
    records, problems = memory.check_files()
    return [r for r in records if admit(r)], sorted({p.path for p in problems if p.path})


def newest_first(record: MemoryRecord) -> tuple[float, str]:
    return (-(parse_time(record.updated) or 0.0), record.path)


def search(
    files: MemoryStore,
    query: str | None = None,
    *,
    category: str | None = None,
    status: str | None = None,
    tag: str | None = None,
    namespace: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[MemoryRecord], int]:
    """(page, total matches). ``query`` is a plain filter, not recall: every whitespace-separated term
    must appear (case-insensitively) in the content, a tag or the id, so paging with ``offset`` is stable."""
    filters = Filters.check(category=category, status=status, tag=tag, namespace=namespace)
    limit, offset = _check.count(limit, "limit"), _check.count(offset, "offset")
    terms = [fold_case(t) for t in (_check.optional_text(query, "query") or "").split()]
    matches = []
    for record in files.scan().records:  # the scan memo makes repeated browsing cheap
        if not filters.admit(record):
            continue
        # Compared in NFC and case-folded alike: a note saved decomposed (NFD) matches a typed query.
        if terms and not all(t in fold_case(" ".join([record.content, record.id, *record.tags])) for t in terms):
            continue
        matches.append(record)
    matches.sort(key=newest_first)
    return matches[offset : offset + limit], len(matches)


def unicode_twin(root: Path, rel: str) -> str | None:
    """The one file whose path is ``rel`` spelt in another Unicode form, when nothing is at ``rel`` itself:
    a name typed precomposed (NFC, ``Café``) for a file a Mac named decomposed (NFD), or the reverse.
    Linux compares names byte for byte, so the two never meet otherwise. None: no such file, or several."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts or os.path.lexists(root / rel):
        return None
    here, found = root, []
    for part in parts:
        if not os.path.lexists(here / part):
            want = unicodedata.normalize("NFC", part)
            try:
                names = [n for n in os.listdir(here) if unicodedata.normalize("NFC", n) == want]
            except OSError:
                return None
            if len(names) != 1:
                return None
            part = names[0]
        found.append(part)
        here = here / part
    return "/".join(found)


def as_on_disk(root: Path, rel: str) -> str:
    """``rel``, or the one file it names in another Unicode form (:func:`unicode_twin`) when nothing is at
    ``rel`` itself: how every command that takes a file path (get, update, versions, timeline) finds it."""
    return unicode_twin(root, rel) or rel
