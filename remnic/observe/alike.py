"""Whether two near-identical sentences still say different things. Embeddings and shared words
cannot tell "port 8080" from "port 8081", "prefers tabs" from "does not prefer tabs", "tabs over
spaces" from "spaces over tabs", "every Tuesday" from "every Thursday" or "reports to Priya" from
"reports to Dana"; these rules can, so such a pair is never one memory. Pure functions of the two
texts, so the in-flush fold, persistence and consolidation all decide alike."""

from __future__ import annotations

import re

from .extract import STOPWORDS
from .keys import value_key

NUMBER_RE = re.compile(r"\d+(?:[.:,]\d+)*")
_NEGATION_RE = re.compile(
    r"\b(not|no|never|none|nobody|nothing|neither|nor|without|cannot|no longer|any more|anymore)\b|n['’]t\b",
    re.IGNORECASE,
)


def numbers(text: str) -> set[str]:
    return set(NUMBER_RE.findall(text))


def negated(text: str) -> bool:
    """Whether the sentence denies something (an odd number of negations: "not unlike" is not one)."""
    return len(_NEGATION_RE.findall(text)) % 2 == 1


# Closed sets whose members name mutually exclusive values of one slot: another member is another
# value ("every Tuesday" / "every Thursday"). Months only capitalised ("may", "march" are verbs too).
_CLOSED_SETS = {
    "weekday": ("monday tuesday wednesday thursday friday saturday sunday", True),
    "month": ("January February March April May June July August September October November December", False),
    "part of day": ("morning afternoon evening night", True),
    "season": ("summer winter autumn", True),
    "compass point": ("north south east west", True),
    "frequency": ("hourly daily nightly weekly fortnightly monthly quarterly yearly annually", True),
    "number word": (
        "two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred",
        True,
    ),
}
_CLOSED_CLASSES = tuple(
    (name, re.compile(rf"\b({'|'.join(members.split())})(?:s|ern)?\b", re.I if folded else 0))
    for name, (members, folded) in _CLOSED_SETS.items()
)
_CLOSED_WORDS = frozenset(w.lower() for members, _ in _CLOSED_SETS.values() for w in members.split())
_TOKEN_RE = re.compile(r"[A-Za-z][\w'’-]*")
_POSSESSIVE_RE = re.compile(r"['’]s$")


def _closed_values(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, rx in _CLOSED_CLASSES:
        found = {m.group(1).lower() for m in rx.finditer(text)}
        if found:
            out[name] = found
    return out


def other_closed_value(a: str, b: str) -> bool:
    """Both name members of one closed set (weekdays, months …), and not the same ones."""
    ca, cb = _closed_values(a), _closed_values(b)
    return any(ca[k] != cb[k] for k in ca.keys() & cb.keys())


def _tokens(text: str) -> list[str]:
    return [_POSSESSIVE_RE.sub("", t) for t in _TOKEN_RE.findall(text)]


def _names(tokens: list[str]) -> set[str]:
    """Capitalised words that are not function words nor closed-set values: names, as said."""
    return {t for t in tokens if t[0].isupper() and t.lower() not in STOPWORDS and t.lower() not in _CLOSED_WORDS}


def other_name(a: str, b: str) -> bool:
    """Each names someone or something the other never mentions ("reports to Priya" / "reports to
    Dana"); a name only one of them adds ("… with Ben") is more detail, not another value."""
    ta, tb = _tokens(a), _tokens(b)
    words_a, words_b = {t.lower() for t in ta}, {t.lower() for t in tb}
    return any(n.lower() not in words_b for n in _names(ta)) and any(n.lower() not in words_a for n in _names(tb))


def other_stated_value(a: str, b: str) -> bool:
    """Both state a value of the same thing ("the prod region is X"), and not the same value."""
    ea, va = value_key(a, "")
    eb, vb = value_key(b, "")
    if not ea or ea != eb:
        return False
    return any(va[k].strip().lower() != vb[k].strip().lower() for k in va.keys() & vb.keys())


def swapped(a: str, b: str) -> bool:
    """Two of the same content words trade places, each taking the other's role ("tabs over spaces" /
    "spaces over tabs", "Ana reports to Priya" / "Priya reports to Ana"). A word that moves with the
    word before it keeps its role ("to Berlin from Paris" / "from Paris to Berlin"), so that is no swap."""
    ta, tb = [t.lower() for t in _tokens(a)], [t.lower() for t in _tokens(b)]
    once = {w for w in set(ta) & set(tb) if ta.count(w) == 1 and tb.count(w) == 1}
    content = {w for w in once if len(w) > 2 and w not in STOPWORDS}
    seq_a, seq_b = [w for w in ta if w in content], [w for w in tb if w in content]
    moved = [i for i, (x, y) in enumerate(zip(seq_a, seq_b, strict=True)) if x != y]
    if len(moved) != 2 or seq_a[moved[0]] != seq_b[moved[1]] or seq_a[moved[1]] != seq_b[moved[0]]:
        return False

    def before(tokens: list[str], word: str) -> str:
        i = tokens.index(word)
        return tokens[i - 1] if i else ""

    return any(before(ta, seq_a[i]) != before(tb, seq_a[i]) for i in moved)


def differs_concretely(a: str, b: str) -> bool:
    """Another number, a denial, two words trading roles, another member of a closed set (weekday,
    month …), another name, or another value stated for the same thing."""
    return (
        numbers(a) != numbers(b)
        or negated(a) != negated(b)
        or other_closed_value(a, b)
        or swapped(a, b)
        or other_name(a, b)
        or other_stated_value(a, b)
    )


def denies(a: str, b: str) -> bool:
    """One says what the other says and denies it: the same numbers, one negation more."""
    return numbers(a) == numbers(b) and negated(a) != negated(b)


def contradicts(a: str, b: str) -> bool:
    """Both cannot hold: one denies the other, or two of its words trade roles. Said later, it replaces
    the other (another number, name or weekday may hold beside it, so those are kept beside it)."""
    return denies(a, b) or swapped(a, b)


RESTATED_CATEGORIES = frozenset(
    {
        "fact",
        "preference",
        "decision",
        "principle",
        "rule",
        "commitment",
        "correction",
        "relationship",
        "entity",
        "skill",
    }
)
"""Categories that say how things are: said again with another number or denied, the later statement
supersedes the earlier. A moment ("I ran 5 km today") is one more event, kept beside the other."""
