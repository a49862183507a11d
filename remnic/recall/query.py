"""The query a recall searches: checked, and cut to ``recall.maxQueryChars`` with a note saying so."""

from __future__ import annotations

from typing import Any

from remnic.errors import UsageError


def check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise UsageError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise UsageError("query must not be empty")
    return query


def cut_query(query: str, max_chars: int) -> tuple[str, str | None]:
    """The part of ``query`` a recall analyses and embeds (its first ``max_chars`` characters, at
    least one) and, when that is not all of it, a note for the X-ray's ``namespace-scope`` reason
    and the result's ``notes``: the words past the cut were never searched for."""
    limit = max(1, max_chars)
    if len(query) <= limit:
        return query, None
    return query[:limit], f"query cut to {limit} of {len(query)} characters (recall.maxQueryChars)"
