"""File-name slugs made of a memory's first words, in whatever script it is written."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from .fold import fold

__all__ = ["RESERVED_NAMES", "make_slug"]

RESERVED_NAMES = frozenset(["con", "prn", "aux", "nul", *(f"{d}{n}" for d in ("com", "lpt") for n in range(10))])
"""Windows device names: no file may be called ``con.md`` there (git for Windows refuses to check one out)."""

_ASCII_WORD_RE = re.compile(r"[a-z0-9]+")
NATIVE_MAX = 30
"""A slug holding other scripts' words is shorter: each of their characters is several bytes of a path."""


def _ascii_words(text: str) -> list[str]:
    # Folded as entity ids are (Ødegaard → odegaard, not "degaard"), then any other accent dropped.
    return _ASCII_WORD_RE.findall(unicodedata.normalize("NFKD", fold(text)).encode("ascii", "ignore").decode().lower())


def _words(text: str) -> Iterator[str]:
    """Runs of letters and digits with their combining marks: a Devanagari or Thai vowel sign is a mark,
    not ``\\w``, and splitting at it would leave single consonants (दिल्ली → द-ल-ल)."""
    word: list[str] = []
    for ch in text:
        if ch.isalnum() or (word and unicodedata.category(ch)[0] == "M"):
            word.append(ch)
        elif word:
            yield "".join(word)
            word = []
    if word:
        yield "".join(word)


def _latin(word: str) -> bool:
    """Whether ``word`` is written in Latin letters (and digits): its ASCII folding loses no letter."""
    return "".join(c for c in unicodedata.normalize("NFKD", fold(word)) if not unicodedata.combining(c)).isascii()


def _pieces(text: str, max_len: int) -> tuple[list[str], bool]:
    """The slug's words of ``text`` from its start (enough of them for ``max_len``), and whether any is
    written in another script; a Latin word is its ASCII folding."""
    pieces: list[str] = []
    native, size = False, 0
    for word in _words(unicodedata.normalize("NFC", text)):
        if _latin(word):
            pieces += _ascii_words(word)
        else:
            pieces.append(word.lower())
            native = True
        size += len(word) + 1
        if size > max_len * 2:
            break
    return pieces, native


def make_slug(text: str, max_len: int = 60) -> str:
    """The first words of ``text`` joined by ``-``, at most ``max_len`` characters: Latin words folded to
    ASCII (José → jose), other scripts' words kept (a Russian, Hindi or Japanese memory, or a speaker's
    name in one, is named by them, not by its one number); never a Windows device name."""
    if text.isascii():
        words = _ASCII_WORD_RE.findall(text.lower())
    else:
        words, native = _pieces(text, max_len)
        if not native:
            words = _ascii_words(text)  # Latin text: the whole text folded, as it always was
        else:
            max_len = min(max_len, NATIVE_MAX)
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            break
        slug = candidate
    slug = slug or (words[0][:max_len] if words else "memory")
    return f"{slug}-1" if slug in RESERVED_NAMES else slug
