"""Browsing memories without recall: filtered, paged, newest first (GET memories, the review queue)."""

from __future__ import annotations

from collections.abc import Iterable

from remnic.memfile.model import MemoryRecord, parse_time
from remnic.repo.files import MemoryStore

REVIEW_STATUSES = ("pending_review", "quarantined")


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
    terms = [t.casefold() for t in (query or "").split()]
    matches = []
    for record in files.scan().records:  # the scan memo makes repeated browsing cheap
        if (
            (category and record.category != category)
            or (status and record.status != status)
            or (tag and tag not in record.tags)
            or (namespace and record.namespace != namespace)
        ):
            continue
        if terms and not all(t in " ".join([record.content, record.id, *record.tags]).casefold() for t in terms):
            continue
        matches.append(record)
    matches.sort(key=newest_first)
    return matches[offset : offset + limit], len(matches)


def review_queue(records: Iterable[MemoryRecord], limit: int = 50) -> list[MemoryRecord]:
    queued = sorted((r for r in records if r.status in REVIEW_STATUSES), key=newest_first)
    return queued[:limit]
