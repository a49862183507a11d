"""Whether two near-identical sentences still say different things. Embeddings and shared words
cannot tell "port 8080" from "port 8081", "prefers tabs" from "does not prefer tabs", "tabs over
spaces" from "spaces over tabs", "every Tuesday" from "every Thursday" or "reports to Priya" from
"reports to Dana"; these rules can, so such a pair is never one memory. Pure functions of the two
texts, so the in-flush fold, persistence and consolidation all decide alike."""

from __future__ import annotations

import re
from functools import lru_cache

from .cues import words
from .extract import STOPWORDS
from .keys import value_key
from .letters import wide_re

NUMBER_RE = re.compile(r"\d+(?:[.:,]\d+)*")
_NEGATION_RE = re.compile(
    r"\b(not|no|never|none|nobody|nothing|neither|nor|without|cannot|no longer|any more|anymore)\b|n['’]t\b",
    re.IGNORECASE,
)


_WORD_RE = re.compile(r"\w+", re.UNICODE)


def word_overlap(a: str, b: str) -> float:
    """Shared words (longer than two letters) over all words of the two texts: the lexical half of a
    near-duplicate, beside the embedding's cosine (persisting, dismissed facts and consolidation). A
    team's fact said by two of the team is compared without the names ("Priya Shah and others …")."""
    a, b = _as_group(a, b)
    wa = {w for w in _WORD_RE.findall(a.lower()) if len(w) > 2}
    wb = {w for w in _WORD_RE.findall(b.lower()) if len(w) > 2}
    return len(wa & wb) / max(1, len(wa | wb))


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
}
_CLOSED_CLASSES = tuple(
    (name, re.compile(rf"\b({'|'.join(members.split())})(?:s|ern)?\b", re.I if folded else 0))
    for name, (members, folded) in _CLOSED_SETS.items()
)
_UNITS = "one two three four five six seven eight nine"
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_UNIT_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth"
_ORDINALS = (
    "tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
    " thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth hundredth thousandth"
)
_FREQUENCIES = "hourly daily nightly weekly fortnightly monthly quarterly yearly annually"


def _any(members: str) -> str:
    return "|".join(members.split())


# Classes whose value is the whole phrase: "biweekly" is not "weekly", "twenty-first" not "twentieth" nor
# "twenty", "thirty-five" not "thirty"; "one" alone says too little ("one of them"), in "twenty-one" it counts.
_PHRASE_CLASSES = (
    (
        "frequency",
        re.compile(rf"\b(?:(?:bi|semi|tri|twice|thrice)[- ]?)?(?:{_any(_FREQUENCIES)})\b", re.I),
    ),
    ("times", re.compile(r"\b(?:once|twice|thrice)\b", re.I)),
    (
        "number word",
        re.compile(
            rf"\b(?:(?:{_any(_TENS)})(?:[- ](?:{_any(_UNITS)})\b|(?![- ](?:{_any(_UNIT_ORDINALS)})\b))"
            rf"|(?:{_any(_UNITS.removeprefix('one '))}|{_any(_TEENS)}|hundred|thousand)s?\b)",
            re.I,
        ),
    ),
    (
        "ordinal",
        re.compile(rf"\b(?:(?:{_any(_TENS)})[- ])?(?:{_any(_UNIT_ORDINALS)})\b|\b(?:{_any(_ORDINALS)})\b", re.I),
    ),
    # The tense of "to be": "Ana is the billing lead" / "Ana was …" / "Ana will be …" say different things.
    (
        "tense",
        re.compile(
            r"(?P<future>\b(?:will|shall)(?:\s+not)?\s+be|\bwon['’]t\s+be|\b(?:is|are|am)\s+going\s+to\s+be|['’]ll\s+be)\b"
            r"|\b(?P<past>was|were)\b|\b(?:is|are|am)\b|['’](?:re|m)\b"
            r"|\b(?:it|that|there|here|he|she|who|what)['’]s\b",
            re.I,
        ),
    ),
)
_CLOSED_WORDS = frozenset(
    w.lower()
    for members in (*(m for m, _ in _CLOSED_SETS.values()), _UNITS, _TEENS, _TENS, _UNIT_ORDINALS, _ORDINALS)
    for w in members.split()
)
_TOKEN_RE = wide_re(r"[A-Za-z][\w'’-]*")
_POSSESSIVE_RE = re.compile(r"['’]s$")


_NEXT_SENTENCE_RE = re.compile(r"[.!?;]\s+\S")


def _phrase_value(name: str, found: re.Match[str]) -> str:
    # One word however it is spelt: "bi-weekly", "bi weekly" and "biweekly"; "twenty-one" and "twenty one".
    if name != "tense":
        return re.sub(r"[- ]+", "", found.group(0).lower())
    return "future" if found.group("future") else "past" if found.group("past") else "present"


_WORD_VALUES = dict(
    zip(
        f"{_UNITS} {_TEENS} {_TENS} hundred thousand".split(),
        [*range(1, 20), *range(20, 100, 10), 100, 1000],
        strict=True,
    )
)
_ORDINAL_VALUES = dict(
    zip(f"{_UNIT_ORDINALS} {_ORDINALS}".split(), [*range(1, 20), *range(20, 100, 10), 100, 1000], strict=True)
)
_TENS_PREFIX_RE = re.compile(rf"^({_any(_TENS)})(?=.)")
_DIGIT_ORDINAL_RE = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.I)


def _spelt_value(word: str, values: dict[str, int]) -> int | None:
    """The number a spelt-out word means ("twentyone" → 21, as :func:`_phrase_value` writes it); None
    for one that names no single number ("hundreds")."""
    tens = _TENS_PREFIX_RE.match(word)
    if tens and word[tens.end() :] in values and values[word[tens.end() :]] < 10:
        return _WORD_VALUES[tens.group(1)] + values[word[tens.end() :]]
    return values.get(word)


def _number_values(text: str, closed: dict[str, set[str]]) -> set[str]:
    """Every number the text says, in digits or in words: "five" and "5" are one value, "fifth" and
    "5th" another."""
    ordinal_digits = {m.group(1) for m in _DIGIT_ORDINAL_RE.finditer(text)}
    out = {n + ("th" if n in ordinal_digits else "") for n in numbers(text)}
    for name, values, suffix in (("number word", _WORD_VALUES, ""), ("ordinal", _ORDINAL_VALUES, "th")):
        for word in closed.get(name, ()):
            value = _spelt_value(word, values)
            out.add(word if value is None else f"{value}{suffix}")
    return out


@lru_cache(maxsize=4096)
def _closed_values(text: str) -> dict[str, set[str]]:
    """The closed-set and phrase values the text names, by class (cached: dedup and consolidation
    compare each memory with many others; callers only read the result)."""
    out: dict[str, set[str]] = {}
    for name, rx in _CLOSED_CLASSES:
        found = {m.group(1).lower() for m in rx.finditer(text)}
        if found:
            out[name] = found
    for name, rx in _PHRASE_CLASSES:
        found = {_phrase_value(name, m) for m in rx.finditer(text)}
        # Only one sentence in one tense has a tense to differ in: a story mixes them as it goes.
        if found and (name != "tense" or (len(found) == 1 and not _NEXT_SENTENCE_RE.search(text.strip()))):
            out[name] = found
    return out


_NUMBER_CLASSES = frozenset({"number word", "ordinal"})


def other_closed_value(a: str, b: str) -> bool:
    """Both name members of one closed set (weekdays, months …), and not the same ones."""
    ca, cb = _closed_values(a), _closed_values(b)
    return any(ca[k] != cb[k] for k in ca.keys() & cb.keys() - _NUMBER_CLASSES)


def other_number(a: str, b: str) -> bool:
    """Another number: in digits, or spelt out in both ("twenty" / "twenty-five"), unless the two say
    the same numbers once each is read in digits ("five" / "5"). A number only one of them spells out
    ("two cats" / "cats") is more detail, as a closed-set value is."""
    ca, cb = _closed_values(a), _closed_values(b)
    if numbers(a) == numbers(b) and not any(ca[k] != cb[k] for k in ca.keys() & cb.keys() & _NUMBER_CLASSES):
        return False
    return _number_values(a, ca) != _number_values(b, cb)


def _tokens(text: str) -> list[str]:
    return [_POSSESSIVE_RE.sub("", t) for t in _TOKEN_RE.findall(text)]


def _names(tokens: list[str]) -> set[str]:
    """Capitalised words that are not function words nor closed-set values: names, as said."""
    return {
        t
        for t in tokens
        if t[0].isupper() and t.lower() not in STOPWORDS and not set(t.lower().split("-")) <= _CLOSED_WORDS
    }


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
    month …), another name, or another value stated for the same thing. How things are for "us", said by
    two people ("Priya and others deploy with Argo CD" / "Ewa and others …"), is the group's one fact: its
    speaker's name is no other name. What happened to each of them ("Ana and others went camping") is not."""
    a, b = _as_group(a, b)
    return (
        other_number(a, b)
        or negated(a) != negated(b)
        or other_closed_value(a, b)
        or swapped(a, b)
        or other_name(a, b)
        or other_stated_value(a, b)
    )


def _as_group(a: str, b: str) -> tuple[str, str]:
    """Both texts with their "NAME and others" as "We" when both say how things are for a group."""
    if not (_GROUP_NAMED_RE.match(a) and _GROUP_NAMED_RE.match(b)) or _PAST_RE.search(a) or _PAST_RE.search(b):
        return a, b
    return _GROUP_NAMED_RE.sub("We", a, count=1), _GROUP_NAMED_RE.sub("We", b, count=1)


def group_fact(text: str) -> str | None:
    """What a group's present-tense fact says whoever of the group said it, its words lowercased and its
    "NAME and others" as "we": "Priya and others deploy with Argo CD." and "Ewa and others deploy with
    Argo CD." are both "we deploy with argo cd", one team fact (the names set their embeddings far apart,
    so this finds them). None for any other text, and for what happened to them ("Ana and others went
    camping" is each one's own event)."""
    text = text.strip()
    named = _GROUP_NAMED_RE.match(text)
    if named is None or _PAST_RE.search(text):
        return None
    return " ".join(["we", *_lower_words(text[named.end() :])])


def denies(a: str, b: str) -> bool:
    """One says what the other says and denies it: the same numbers, one negation more."""
    return not other_number(a, b) and negated(a) != negated(b)


def contradicts(a: str, b: str) -> bool:
    """Both cannot hold: one denies the other, or two of its words trade roles. Said later, it replaces
    the other (another number, name or weekday may hold beside it, so those are kept beside it)."""
    return denies(a, b) or swapped(a, b)


# "the port is 6543, not 5433", "with Flux, not ArgoCD", "Postgres instead of MySQL": the value said and
# the one it replaces (up to four words, before a clause that says why: "not 5432 as the docs say").
_REPLACED_RE = re.compile(
    r"(?P<new>[\w@/:+#-]+(?:\.[\w@/:+#-]+)*)\s*(?:,\s*not|,?\s+(?:instead of|rather than))\s+(?:the\s+|an?\s+)?"
    r"(?P<old>[\w@/:+#-]+(?:\.[\w@/:+#-]+)*(?:\s+[\w@/:+#-]+(?:\.[\w@/:+#-]+)*){0,3}?)"
    r"(?=\s*(?:[,;.!?]|$)|\s+(?:as|because|since|which|like|anymore|any more|now|either|any longer)\b)",
    re.I,
)
_WORD_RE = re.compile(r"[\w@/:+#-]+(?:\.[\w@/:+#-]+)*")
_QUOTE_RE = re.compile(r'"[^"\n]*"?|“[^”\n]*”?')
# After the old value: a clause saying why is not part of what is said ("not 5432 as the docs say"); the
# rest is ("Always use spaces, not tabs, for Python files").
_WHY_RE = re.compile(r"^\s*,?\s*(?:as|because|since|which|like|so|though|although|but)\b", re.I)
# Said before the clause (lead-ins saying it is a correction or holds from now), articles and fillers:
# no part of what the clause states. Verbs and prepositions stay, so the frame is compared word for word.
_LEAD_RE = re.compile(
    r"^(?:(?:actually|correction|no|nope|wait|sorry|so|well|oh|now|just to be clear|to be clear|from now on"
    r"|going forward|moving forward|as of (?:now|today)|these days|nowadays)\b[\s,:;!—–-]*)+",
    re.I,
)
# How a team says it chose ("We decided to deploy …", "We'll go with …", "Let's use …") is not what the
# choice is: read as the plain "we …" it chose.
_DECISION_LEAD_RE = re.compile(
    r"^(?:we|the team)\s+(?:(?:have|['’]ve|just|finally)\s+)*(?:decided|agreed|chose|opted)\s+"
    r"(?:to|that\s+we(?:['’]ll|\s+will|\s+would|['’]d)?|on)\s+"
    r"|^(?:we(?:['’]ll|\s+will|\s+shall|\s+are\s+going\s+to|['’]re\s+going\s+to)|let['’]s|let\s+us)\s+",
    re.I,
)
# "We go with ArgoCD for staging deploys": the choosing verb names no part of what is chosen for what.
_CHOICE_RE = re.compile(
    r"^we\s+(?:go\s+with|use|pick|choose|adopt|switch\s+to|move\s+to|stick\s+with|standardi[sz]e\s+on"
    r"|migrate\s+to)\s+",
    re.I,
)
_CHOICE_WORDS = words("use pick choose adopt switch move stick standardize standardise migrate")
# In the memory too: what follows from it or why ("…with ArgoCD, so the limiter config goes in the helm
# values") is not what it states, and goes with it.
_WHY_AFTER_RE = re.compile(r",\s*(?:so|because|since|as|which)\b[^.;!?]*", re.I)
_IGNORED = frozenset({"the", "a", "an", "now", "actually", "still", "currently", "anymore", "really", "also", "just"})
_GROUP_NAMED_RE = wide_re(r"\b[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)? and others\b")
_MAX_NEW_WORDS = 3


def replaced_value(text: str) -> tuple[str, str, str] | None:
    """``(what it is about, new value, old value)`` when the text says a value replaces another
    ("The staging DB port is 6543, not 5433." → ``("The staging DB port is", "6543", "5433")``). Words
    in quotation marks are someone else's ("Ben said: "We use Postgres, not MySQL."") and say nothing."""
    match = _replacement(text)
    return None if match is None else (text[: match.start("new")], match.group("new"), match.group("old"))


def _replacement(text: str) -> re.Match[str] | None:
    quoted = [m.span() for m in _QUOTE_RE.finditer(text)]
    return next(
        (m for m in _REPLACED_RE.finditer(text) if not any(start <= m.start() < end for start, end in quoted)), None
    )


def _frame(text: str) -> list[str]:
    """The clause's words as compared: lowercased, its lead-in, articles and fillers gone, "Ana and
    others" as "we" (how a group's "we" is stored)."""
    text = _LEAD_RE.sub("", _GROUP_NAMED_RE.sub("we", text.strip()))
    text = _DECISION_LEAD_RE.sub("we ", text, count=1)
    text = re.sub(r"\bany (?:more|longer)\b", "", text, flags=re.I)
    return [w for w in _lower_words(text) if w not in _IGNORED]


def _lower_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def replaces(new: str, old: str) -> bool:
    """Whether ``new`` says "…NEW, not OLD" of exactly what ``old`` states with OLD: ``old`` with NEW
    in place of OLD says, word for word (articles, lead-ins and fillers aside), what ``new`` says
    without ", not OLD" ("Actually, we deploy staging with Flux, not ArgoCD." replaces "We deploy
    staging with ArgoCD.", whatever its key). A memory saying more or other ("The billing API runs on
    port 8080" for "The API runs on port 8081, not 8080"), another verb ("Ana maintains the Java SDK"
    for "Ana likes Python, not Java") or other roles ("Tomasz reports to Ana" for "Ana reports to Ewa,
    not Tomasz") is about something else, so nothing is replaced."""
    found = _replacement(new)
    if found is None or negated(old):
        return False
    rest = new[found.end() :]
    rest = "" if _WHY_RE.match(rest) else rest
    clause = _frame(new[: found.end("new")] + " " + rest)
    said_old, new_words = _frame(found.group("old")), _frame(found.group("new"))
    if not said_old or not new_words:
        return False
    words = _frame(_WHY_AFTER_RE.sub("", old, count=1))
    if new_words[-1] in words:
        return False  # the old memory has the new value already: "… with Flux and ArgoCD"
    if _chose_for_same(words, said_old, clause, new_words[-1]):
        return True
    for i in range(len(words) - len(said_old) + 1):
        if words[i : i + len(said_old)] != said_old:
            continue
        before, after = words[:i], words[i + len(said_old) :]
        middle = clause[len(before) : len(clause) - len(after)]
        if (
            len(before) + len(after) < len(clause)
            and clause[: len(before)] == before
            and clause[len(clause) - len(after) :] == after
            and 0 < len(middle) <= _MAX_NEW_WORDS
            and middle[-1] == new_words[-1]
            and not any(w in STOPWORDS and w != middle[-1] for w in middle)
        ):
            return True
    return False


def _chose_for_same(words: list[str], said_old: list[str], clause: list[str], new_value: str) -> bool:
    """ "We go with OLD for staging deploys" (as a team says a choice) replaced by a clause of the same
    subject saying the same of NEW — "we deploy staging with NEW": the choosing words aside, both name
    the same things (in any order, a plural as its singular), and at least one besides the value."""
    chose = _CHOICE_RE.match(" ".join(words))
    if chose is None or not clause or clause[0] != "we":
        return False
    rest = " ".join(words)[chose.end() :].split()
    if rest[: len(said_old)] != said_old or len(rest) == len(said_old):
        return False
    about = _named(rest[len(said_old) :])
    return bool(about) and about == _named(clause[1:]) - {_singular(new_value)}


def _named(words: list[str]) -> set[str]:
    return {_singular(w) for w in words if w not in STOPWORDS and w not in _CHOICE_WORDS and len(w) > 1}


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


# A system or value named as such: CamelCase ("ArgoCD"), an acronym ("AWS"; not a Roman numeral: "Warrior
# II"), a number or an identifier ("api.py", "us-east-1"; not initials: "J.K."). Past tense says what
# happened, not how things are.
_SYSTEM_RE = re.compile(
    r"\b(?:[A-Za-z]*[a-z][A-Z]\w*|(?![IVXLC]+\b)[A-Z]{2,}\w*|\w*\d\w*|\w*[a-z]\w*(?:[./_-]\w+)*[./_]\w+)\b"
)
_PAST_RE = re.compile(r"\b(?:was|were|had|did|went|got|made|took|came|saw|\w+ed)\b", re.I)


def replaceable(sentence: str) -> bool:
    """Whether a later "…NEW, not OLD" could replace the sentence whole (:func:`replaces` reads a memory
    word for word): how things are now, naming a system or value — "We deploy staging with ArgoCD",
    "The CI Redis port is 6390" — and denying nothing. "We went camping" (what happened) is not."""
    return bool(_SYSTEM_RE.search(sentence)) and not _PAST_RE.search(sentence) and not negated(sentence)


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
