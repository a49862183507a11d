"""Accented Latin letters as ASCII: one folding for file names, entity ids and name matching."""

from __future__ import annotations

import unicodedata

__all__ = ["fold"]

_NOT_DECOMPOSED = {
    "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "ł": "l", "Ł": "L", "ı": "i", "ħ": "h",
    "Ħ": "H", "ŧ": "t", "Ŧ": "T", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ß": "ss", "ẞ": "SS",
    "þ": "th", "Þ": "TH",
}  # fmt: skip
"""Latin letters Unicode does not decompose into an ASCII letter and a mark (Ødegaard, Łódź)."""


def _fold_char(ch: str, same_length: bool) -> str:
    if ch.isascii():
        return ch
    base = _NOT_DECOMPOSED.get(ch)
    if base is None:
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        if not base.isascii():
            return ch  # another script's letter (Cyrillic й, Hangul, Greek ά) stays itself
    return base if not same_length or len(base) == 1 else ch


def fold(text: str, *, same_length: bool = False) -> str:
    """``text`` with its accented Latin letters as ASCII (José Núñez → Jose Nunez, Ødegaard →
    Odegaard), case kept, other scripts' letters as they are. ``same_length``: only letters that fold
    to one character (ß, æ stay), so a position in the result is the same position in ``text``."""
    text = unicodedata.normalize("NFC", text)
    if text.isascii():
        return text
    return "".join(_fold_char(ch, same_length) for ch in text)
