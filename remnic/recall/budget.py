"""Stage 8: fit the ranked hits into a character budget by trimming, not dropping (pure).

Greedy in rank order. A hit that fits is kept whole — a long one (it has
passages) only if it leaves the hits after it their fair share of the budget (or
their whole text, when shorter): one 8,000-character note must not take the room
of the nine hits below it. One that does not fit is trimmed: its best passage (ranked by :mod:`remnic.recall.passages`), then its
next best ones while they stay within a fair share of what is left (the budget
left divided by the hits still to place), kept in document order and joined by
an ellipsis line; if not even the best one fits, it is cut at a word boundary. A hit is dropped only when fewer than
``min_chars`` characters of budget are left — never the first hit, which is
trimmed to the whole budget however small, so a query with matches never comes
back empty because of length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SEPARATOR = "\n…\n"
ELLIPSIS = "…"


@dataclass(frozen=True)
class Fitted:
    """One kept hit: its position among the ranked hits and the text it carries."""

    index: int
    text: str
    trimmed: bool


def fit_budget(
    contents: Sequence[str],
    ranked_spans: Sequence[Sequence[tuple[int, int]]],
    budget: int,
    min_chars: int = 200,
) -> tuple[list[Fitted], int]:
    """(kept hits, characters used); ``ranked_spans[i]`` are hit i's passages, best first (may be empty).

    ``budget`` 0 means no limit.
    """
    if budget <= 0:
        return [Fitted(i, c, False) for i, c in enumerate(contents)], sum(len(c) for c in contents)
    kept: list[Fitted] = []
    used = 0
    fair = max(min_chars, budget // max(1, len(contents)))
    # What the hits after each one claim: their text, up to a fair share each.
    after = [0] * (len(contents) + 1)
    for i in range(len(contents) - 1, -1, -1):
        after[i] = after[i + 1] + min(len(contents[i]), fair)
    for i, content in enumerate(contents):
        left = budget - used
        spans = ranked_spans[i] if i < len(ranked_spans) else ()
        room = left - after[i + 1] if spans else left
        if len(content) <= room:
            kept.append(Fitted(i, content, False))
            used += len(content)
            continue
        if kept and left < max(1, min_chars):
            continue  # never the first hit: a query with matches does not come back empty
        # A trimmed hit keeps its best passage (if it fits) and more only up to a fair share of what is
        # left (or what the hits after it leave), so one long note does not crowd out the hits after it.
        share = max(min_chars, left // (len(contents) - i), room)
        text = trim(content, spans, left, share)
        if text:
            kept.append(Fitted(i, text, True))
            used += len(text)
    return kept, used


def trim(content: str, spans: Sequence[tuple[int, int]], limit: int, share: int | None = None) -> str:
    """At most ``limit`` characters of ``content``: its best span, then the next best ones while the total
    stays within ``share`` (default: ``limit``), in document order; a cut when not even the best one fits."""
    if limit <= 0:
        return ""
    share = limit if share is None else min(limit, share)
    chosen: list[tuple[int, int]] = []
    size = 0
    for start, end in spans:
        piece = end - start
        extra = piece + (len(SEPARATOR) if chosen else 0)
        if piece > 0 and size + extra <= (share if chosen else limit):
            chosen.append((start, end))
            size += extra
        elif not chosen and piece > 0:
            break  # the best passage is cut to fit, never replaced by lesser ones
    if chosen:
        chosen.sort()
        return SEPARATOR.join(content[a:b] for a, b in chosen)
    start, end = next(((a, b) for a, b in spans if b > a), (0, len(content)))
    return cut(content[start:end], limit)


def cut(text: str, limit: int) -> str:
    """``text`` shortened to at most ``limit`` characters at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return text[:limit]
    head = text[: limit - len(ELLIPSIS)]
    space = head.rfind(" ")
    if space > len(head) // 2:
        head = head[:space]
    return head.rstrip() + ELLIPSIS
