"""Whether turns are written in a language observe's extraction cannot read: its cues ("I prefer",
"we decided", "my manager is") are English, so a German, Spanish or French turn yields no fact, and the
caller is told so rather than left with an empty result."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .records import Turn

_FUNCTION_WORDS_EN = "the and is are was were i we you it to of for with that this not have has"
# Short words frequent in each language and rare in English text (not "a", "in", "die" or "man").
_FUNCTION_WORDS = {
    "German": "der das und ist nicht ich wir haben mit auf für ein eine sie auch noch wird sind zu von dass bei gestern",
    "Spanish": "el los las del que es por para una yo nosotros pero muy como más está también ayer hoy desde",
    "French": "le les des est et une je nous pour avec pas sur dans qui sont mais très aussi",
    "Italian": "il gli della che è una io noi sono anche molto più questo",
    "Portuguese": "os da que é para com uma eu nós não são também muito mais",
    "Dutch": "het een niet ik wij hebben met voor zijn ook maar dat",
}
_ENGLISH = frozenset(_FUNCTION_WORDS_EN.split())
_WORDS = {name: frozenset(words.split()) for name, words in _FUNCTION_WORDS.items()}
_WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# An identifier, a version or an address ("eu-west-1", "v1.2", "api.example.com", "snake_case", "a/b"):
# a name of a thing, whose pieces ("eu", "da") are no words of a language.
_TECHNICAL_RE = re.compile(r"\S*(?:\d|\w[-_./:@]\w)\S*")


def other_language(text: str) -> str | None:
    """The language ``text`` reads as when it is one of those above and not English: two of its function
    words, more than of English's, or one in a sentence of three words or more with none of English's.
    Identifiers and versions are no words ("eu-west-1, same as prod." has no "eu")."""
    words = [w.lower() for w in _WORD_RE.findall(_TECHNICAL_RE.sub(" ", text))]
    english = sum(w in _ENGLISH for w in words)
    best, count = None, 0
    for name, function_words in _WORDS.items():
        found = sum(w in function_words for w in words)
        if found > count:
            best, count = name, found
    return best if (count >= 2 and count > english) or (count and not english and len(words) >= 3) else None


def english_cues_warning(turns: Sequence[Turn]) -> str | None:
    """A warning for the caller when turns are in another language: observe extracts facts with English
    cues only, so those turns yield few facts or none (a known limit, docs/observe.md)."""
    found = [lang for t in turns if t.role == "user" and (lang := other_language(t.text))]
    if not found:
        return None
    names = sorted(set(found), key=found.index)
    return (
        f"{len(found)} of {len(turns)} turn(s) read as {', '.join(names)}: observe's extraction cues are English, "
        "so such turns yield few facts or none"
    )
