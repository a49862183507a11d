"""Capital and small letters beyond ASCII, as regular-expression classes: Python's ``re`` has no
``\\p{Lu}``, and ``[A-Z]`` alone misses *Şükrü*, *Élodie*, *Αθηνά* or *Юрий*, so a sentence about them
was dropped where the same sentence about *Sukru* was kept. The classes cover the cased letters of
Latin, Greek, Cyrillic and Armenian by block; in the Latin Extended, Greek Extended and Cyrillic
Supplement blocks capitals and small letters alternate letter by letter, so those blocks count as both
(a class of every letter one by one costs milliseconds to compile, and the patterns here number
dozens). Scripts without case (CJK, Arabic, Hebrew) have no capital to find a name by."""

from __future__ import annotations

import re

_BOTH = "\u0100-\u024f\u0460-\u052f\u1e00-\u1fff"
UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0386\u0388-\u03ab\u0400-\u042f\u0531-\u0556" + _BOTH
"""``A-Z`` and the capitals of the scripts above, as a class body."""
LOWER = "a-z\u00df-\u00f6\u00f8-\u00ff\u03ac-\u03ce\u0430-\u045f\u0561-\u0587" + _BOTH
"""``a-z`` and the small letters of the scripts above, as a class body."""
CAPITAL = f"[{UPPER}]"
SMALL = f"[{LOWER}]"
LETTER = r"[^\W\d_]"
"""Any letter, of any script (cased or not)."""


def wide(pattern: str) -> str:
    """``pattern`` with its ASCII letter classes widened: ``[A-Z]`` to :data:`CAPITAL`, ``[a-z]`` to
    :data:`SMALL` and ``[A-Za-z]`` to :data:`LETTER`; ASCII text matches as before."""
    return pattern.replace("[A-Za-z]", LETTER).replace("[A-Z]", CAPITAL).replace("[a-z]", SMALL)


def wide_re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """:func:`re.compile` of :func:`wide` ``(pattern)``."""
    return re.compile(wide(pattern), flags)
