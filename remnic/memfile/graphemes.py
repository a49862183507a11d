"""Cutting and measuring text as it is seen: by user-perceived characters, not code points.

Enough of Unicode's grapheme rules for subjects and tables (no new dependency): combining marks,
joiners (👨‍👩‍👧), variation selectors (❤️), skin tones, emoji tags and regional-indicator pairs
(🇵🇹) stay with the character before them; wide (CJK) characters take two columns.
"""

from __future__ import annotations

import unicodedata

__all__ = ["clip", "display_width"]

_ZWJ = "\u200d"


def _extends(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (never starts a grapheme of its own)."""
    o = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or ch == _ZWJ
        or 0xFE00 <= o <= 0xFE0F  # variation selectors
        or 0xE0100 <= o <= 0xE01EF
        or 0x1F3FB <= o <= 0x1F3FF  # skin tones
        or 0xE0020 <= o <= 0xE007F  # emoji tag characters (subdivision flags)
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _splits_flag(text: str, at: int) -> bool:
    """Whether a cut before ``text[at]`` leaves a regional indicator apart from its pair."""
    if not (_regional(text[at]) and _regional(text[at - 1])):
        return False
    run = 0
    while at - 1 - run >= 0 and _regional(text[at - 1 - run]):
        run += 1
    return run % 2 == 1


def clip(text: str, limit: int) -> str:
    """``text``'s first ``limit`` code points at most, cut where a character ends: never between a
    letter and its accent, inside an emoji sequence or between a flag's two halves. A first
    character longer than ``limit`` is cut as it is (nothing else would be shown)."""
    if len(text) <= limit:
        return text
    at = limit
    while at > 0 and (_extends(text[at]) or text[at - 1] == _ZWJ or _splits_flag(text, at)):
        at -= 1
    return text[:at] if at > 0 else text[:limit]


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes: wide and full-width characters two, spacing marks one, non-spacing
    combining marks, joiners, variation selectors and other zero-width characters none."""
    if text.isascii():
        return len(text)
    width, joined = 0, False
    for ch in text:
        spacing = unicodedata.category(ch) == "Mc"  # a Devanagari or Tamil vowel sign takes a column of its own
        if spacing or not (joined or _extends(ch) or unicodedata.category(ch) == "Cf"):
            width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        joined = ch == _ZWJ  # what a joiner joins is drawn as one with the character before it
    return width
