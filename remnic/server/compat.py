"""The original Remnic's request and response shapes, as pure helpers the operations use.

remnic answers in a superset of the original's shapes (its own fields stay), so a client
written for the original reads every key it expects: memory summaries (``created``,
``updated``, ``tags``, ``entityRef``, ``preview``), recall's ``context``/``memoryIds``,
``queued`` on writes, ``{found: false, namespace}`` for a missing memory. Request fields
the original accepts but remnic gives no meaning are accepted and named in the
response's ``warnings`` instead of being refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from remnic.memfile.model import format_time, parse_time
from remnic.memfile.values import nfc, tag_key

PREVIEW_CHARS = 180
"""A summary's ``preview``: the content with whitespace collapsed, cut to this many characters."""
SNIPPET_CHARS = 800
"""A memory_search result's ``snippet`` (the original's search result field)."""
DISCLOSURES = ("chunk", "section", "raw")
TAG_MATCHES = ("any", "all")
SORTS = ("updated_desc", "updated_asc", "created_desc", "created_asc")

_SPACE = re.compile(r"\s+")


def preview(content: str, limit: int = PREVIEW_CHARS) -> str:
    return _SPACE.sub(" ", content).strip()[:limit]


def summary_tags(frontmatter: Mapping[str, Any]) -> list[str]:
    """Tags as the original's summaries give them: trimmed, de-duplicated (as readers compare them), sorted."""
    tags = frontmatter.get("tags")
    if not isinstance(tags, list):
        return []
    kept: dict[str, str] = {}
    for tag in (str(t).strip() for t in tags):
        if tag:
            kept.setdefault(tag_key(tag), nfc(tag))  # one per spelling readers treat alike
    return sorted(kept.values())


def summary_time(value: Any) -> str | None:
    """A summary's ``created``/``updated``: the file's text as written; a number (epoch seconds or
    milliseconds, as the file may hold it) as its ISO time, else as written; None when there is none."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        epoch = parse_time(value)
        try:
            return format_time(epoch) if epoch is not None else str(value)
        except (OverflowError, OSError, ValueError):  # beyond the years a datetime holds
            return str(value)
    return None


def with_summary(item: dict[str, Any]) -> dict[str, Any]:
    """A memory or hit dict plus the original's summary keys (absent dates stay absent)."""
    fm = item.get("frontmatter") or {}
    out = dict(item)
    for key in ("created", "updated"):
        stamp = summary_time(fm.get(key))
        if stamp is not None:
            out[key] = stamp
    out["tags"] = summary_tags(fm)
    if isinstance(fm.get("entityRef"), str) and fm["entityRef"]:
        out["entityRef"] = fm["entityRef"]
    out["preview"] = preview(str(item.get("content") or ""))
    return out


def sort_key(sort: str) -> Any:
    """A key for ``sorted`` over MemoryRecords; reverse for the ``_desc`` orders."""
    field = sort.split("_")[0]

    def key(record: Any) -> tuple[float, str]:
        return (parse_time(record.frontmatter.get(field)) or 0.0, record.path)

    return key


def warning(field: str, message: str) -> dict[str, str]:
    return {"field": field, "message": message}
