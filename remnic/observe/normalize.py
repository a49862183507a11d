"""A sentence made to stand alone: who "I" is, what "yesterday" was, no chat filler around it.

Pure string rules: leading discourse markers go ("So,", "Btw", "Actually,"), chat contractions
are spelt out ("gonna" → "going to"), the speaker's first person becomes their name with the verb
agreeing ("I love painting" → "Caroline loves painting", "my sister" → "Caroline's sister"),
relative dates become absolute (:mod:`.dates`), and the result is one capitalised sentence ending
in a full stop.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from .cues import SUBJECTLESS_RE, TRAILING_REQUEST_RE, words
from .dates import resolve_relative_dates

_MARKER_RE = re.compile(
    r"^(?:(?:so|well|also|and|but|plus|oh|ah|btw|by the way|fyi|anyway|anyways|okay|ok|yeah|yes|yep|hey|hmm|um|uh"
    r"|actually|honestly|basically|alright|just so you know|for the record|heads up|note|remember|important"
    r"|correction|no|nope|wait|oops|sorry|ps|p\.s\.|lol|haha|ugh|argh|meh|phew)\b[\s,:;!.—–-]*)+",
    re.I,
)
_SAFE_WITHOUT_COMMA = re.compile(r"^(so|and|but|also|plus|btw|by the way|fyi|anyway)\s", re.I)
_CHAT_WORDS = {
    "gonna": "going to",
    "wanna": "want to",
    "gotta": "have to",
    "kinda": "kind of",
    "sorta": "sort of",
    "lemme": "let me",
    "dunno": "do not know",
    "cuz": "because",
    "'cause": "because",
}
_CHAT_RE = re.compile(r"(?<![\w'])(" + "|".join(re.escape(w) for w in _CHAT_WORDS) + r")\b", re.I)
_WE_RE = [
    (re.compile(r"\blet's\b", re.I), "we will"),
    (re.compile(r"\bwe'll\b", re.I), "we will"),
    (re.compile(r"\bwe're\b", re.I), "we are"),
    (re.compile(r"\bwe've\b", re.I), "we have"),
    (re.compile(r"\bwe'd\b", re.I), "we would"),
]
ADVERBS = words("""really also just still always never usually often sometimes actually definitely absolutely totally
    honestly only even already rarely mostly generally recently finally personally truly seriously
    literally probably certainly mainly normally typically occasionally frequently basically""")
PAST_OR_MODAL = words("""can could will would shall should may might must did had was used went got made took saw came found
    gave told felt left thought bought brought ran began wrote met knew became kept held sent spent built
    lost won paid said sat stood understood taught caught fought slept drove rode swam sang drank ate fell
    grew threw flew drew chose spoke broke woke wore forgot forgave hid led lit meant heard read put set cut
    hit let quit shut spread cost hurt bet fit split""")
_IRREGULAR_PRESENT = {"am": "is", "have": "has", "do": "does", "go": "goes", "'m": "is", "'ve": "has"}
# "I" contractions and negations handled before the general rule.
_FIRST_PERSON_FIXED = [
    (re.compile(r"\bI'm\b|\bI am\b"), "{n} is"),
    (re.compile(r"\bI've\b|\bI have\b(?! to\b)"), "{n} has"),
    (re.compile(r"\bI have to\b"), "{n} has to"),
    (re.compile(r"\bI'd\b"), "{n} would"),
    (re.compile(r"\bI'll\b"), "{n} will"),
    (re.compile(r"\bI don't\b|\bI dont\b"), "{n} doesn't"),
    (re.compile(r"\bI do not\b"), "{n} does not"),
    (re.compile(r"\bI haven't\b"), "{n} hasn't"),
    (re.compile(r"\bI was\b"), "{n} was"),
]
_I_VERB_RE = re.compile(r"\bI\b((?:\s+(?:" + "|".join(sorted(ADVERBS)) + r"))*)\s+([A-Za-z']+)")
_ME_RE = re.compile(r"\bme\b", re.I)
_MY_RE = re.compile(r"\bmy\b", re.I)
_MINE_RE = re.compile(r"\bmine\b", re.I)
_MYSELF_RE = re.compile(r"\bmyself\b", re.I)
_LONE_I_RE = re.compile(r"\bI\b")
_EMOJI_RE = re.compile(r"[\u2600-\u27bf\U0001F000-\U0001FAFF\uFE0F\u200d]+")
_SPACES_RE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+([,.;:!?])")


# A greeting or name said to the listener: "Hey Caroline, I …", "Yeah Mel, we …", "Caroline, my …".
_VOCATIVE_RE = re.compile(
    r"^(?:(?:hey|hi|hello|thanks|thank you|yeah|yes|yep|wow|oh|ok|okay|so|well|absolutely|totally|aw+)[\s,!]+)?"
    r"[A-Z][a-z]+[,!]\s+(?=(?:I|I'm|I've|I'd|I'll|we|We|my|My|our|Our|you|You|since|Since|so|So)\b)"
)


# A short lead-in ending in a colon: "Quick context before we start:", "FYI:", "Note to self:".
_LEAD_IN_RE = re.compile(r"^(?:[A-Za-z']+\s+){0,5}[A-Za-z']+:\s+(?=\S)")


def strip_markers(sentence: str) -> str:
    """The sentence without leading discourse markers ("So,", "Btw", "Actually,", "Oh well,"), a
    name said to the listener ("Hey Caroline, …") or a short lead-in ("Quick context:")."""
    text = _VOCATIVE_RE.sub("", sentence.strip(), count=1)
    if not re.match(r"^(correction|actually|note|important|remember)\s*:", text, re.I):
        text = _LEAD_IN_RE.sub("", text, count=1)
    while True:
        match = _MARKER_RE.match(text)
        if not match or match.end() == 0:
            return text
        piece = match.group(0)
        # A marker with no punctuation after it is only safe to drop for a few words ("no way").
        if not re.search(r"[,:;!.—–-]", piece) and not _SAFE_WITHOUT_COMMA.match(text):
            return text
        rest = text[match.end() :].lstrip()
        if not rest:
            return text
        text = rest


def third_person(verb: str) -> str:
    """The verb agreeing with a third-person subject: love → loves, try → tries, watch → watches."""
    lower = verb.lower()
    if lower in PAST_OR_MODAL or lower.endswith("ed") or "'" in lower:
        return verb
    if lower in _IRREGULAR_PRESENT:
        return _IRREGULAR_PRESENT[lower]
    if re.search(r"(s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("'s") else f"{name}'s"


def replace_first_person(sentence: str, name: str) -> str:
    """The speaker's "I", "me", "my", "mine" and "myself" as ``name``, verbs agreeing."""
    text = sentence
    for pattern, template in _FIRST_PERSON_FIXED:
        text = pattern.sub(template.format(n=name), text)

    def agree(match: re.Match[str]) -> str:
        return f"{name}{match.group(1)} {third_person(match.group(2))}"

    text = _I_VERB_RE.sub(agree, text)
    text = _LONE_I_RE.sub(name, text)
    # "I'm Bo, I joined …" said by Bo: the introduction says nothing once "I" is "Bo".
    text = re.sub(rf"^{re.escape(name)} is {re.escape(name)}\b[,.;]?\s*(?=\S)", "", text)
    text = _MYSELF_RE.sub("themself", text)
    # The name once is enough: later "my"/"me" read as "their"/"them".
    named = name in text

    def mine(match: re.Match[str]) -> str:
        return "theirs" if named else possessive(name)

    def my(match: re.Match[str]) -> str:
        nonlocal named
        out = "their" if named else possessive(name)
        named = True
        return out

    def me(match: re.Match[str]) -> str:
        nonlocal named
        out = "them" if named else name
        named = True
        return out

    text = _MINE_RE.sub(mine, text)
    text = _MY_RE.sub(my, text)
    return _ME_RE.sub(me, text)


def _cased(replacement: str) -> Callable[[re.Match[str]], str]:
    """A replacement that keeps the capital of a sentence-initial match."""
    return lambda m: replacement.capitalize() if m.group(0)[0].isupper() else replacement


def spell_out(sentence: str) -> str:
    """Chat spellings and "we"/"let's" contractions written out."""
    text = _CHAT_RE.sub(lambda m: _CHAT_WORDS[m.group(1).lower()], sentence)
    for pattern, replacement in _WE_RE:
        text = pattern.sub(_cased(replacement), text)
    return text


def finish(sentence: str) -> str:
    """One tidy sentence: no emoji, single spaces, a capital first letter, a full stop at the end."""
    text = _EMOJI_RE.sub("", unicodedata.normalize("NFC", sentence))
    text = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", _SPACES_RE.sub(" ", text)).strip()
    text = text.rstrip(" ,;:-–—")
    text = re.sub(r"[!.…]+$", "", text).rstrip()
    if not text:
        return ""
    first = text.split(None, 1)[0]
    if re.search(r"[_./()\d]", first):  # an identifier keeps its spelling: test_checkout_flow, npm
        return text + "."
    return text[0].upper() + text[1:] + "."


_BE_LEAD_RE = re.compile(
    r"^((?:just|also|finally|recently|really)\s+)?(going|planning|hoping|trying|about|thinking|looking)\b", re.I
)
_HAVE_LEAD_RE = re.compile(r"^((?:just|also|finally|recently|really)\s+)?been\b", re.I)


def supply_subject(sentence: str, name: str) -> str:
    """The speaker's name in front of a sentence that starts without its subject ("Been reading …")."""
    if not SUBJECTLESS_RE.match(sentence):
        return sentence
    phrase = sentence[0].lower() + sentence[1:]
    if _BE_LEAD_RE.match(sentence):
        return f"{name} is {phrase}"
    if _HAVE_LEAD_RE.match(sentence):
        return f"{name} has {phrase}"
    verb = re.match(r"(?:(?:just|also|finally|recently|really)\s+)?([A-Za-z]+)", phrase)
    if verb and verb.group(1).lower() in ("love", "adore"):
        phrase = phrase[: verb.start(1)] + third_person(verb.group(1)) + phrase[verb.end(1) :]
    return f"{name} {phrase}"


_SHOW_RE = re.compile(r"^(?:here'?s|here is|here are)\s+", re.I)


# Emphasis that adds no fact ("really loves", "totally hooked", "very happy"); kept where it is the
# whole predicate's head ("thank you very much" keeps "much").
_INTENSIFIER_RE = re.compile(r"\b(?:really|totally|truly|literally|seriously|very)\s+(?=[a-z])(?!much\b)", re.I)


def standalone(sentence: str, *, speaker: str, timestamp: str | None) -> tuple[str, list[str]]:
    """The sentence made to stand alone, and the absolute dates it names."""
    text = TRAILING_REQUEST_RE.sub("", strip_markers(sentence)) or sentence
    text = _INTENSIFIER_RE.sub("", text)
    text = _SHOW_RE.sub(f"{speaker} shares ", text, count=1)  # "Here's my X" → "Ana shares my X"
    text = supply_subject(spell_out(text), speaker)
    text = replace_first_person(text, speaker)
    text, dates = resolve_relative_dates(text, timestamp)
    return finish(text), dates
