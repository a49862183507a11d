"""A sentence made to stand alone: who "I" is, what "yesterday" was, no chat filler around it.

Pure string rules: leading discourse markers go ("So,", "Btw", "Actually,"), chat contractions
are spelt out ("gonna" → "going to"), the speaker's first person becomes their name with the verb
agreeing ("I love painting" → "Caroline loves painting", "my sister" → "Caroline's sister"),
relative dates become absolute (:mod:`.dates`), and the result is one capitalised sentence ending
in a full stop.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

from .cues import CHAT_ASIDE_RE, SUBJECTLESS_RE, TRAILING_REQUEST_RE, words
from .dates import resolve_relative_dates
from .letters import CAPITAL, SMALL, wide_re

_MARKER_RE = re.compile(
    r"^(?:(?:so|well|also|and|but|plus|oh|ah|btw|by the way|fyi|anyway|anyways|okay|ok|yeah|yes|yep|hey|hmm|um|uh"
    r"|actually|honestly|basically|alright|just so you know|for the record|heads up|note(?!\s+that\b)|remember(?!\s+that\b)|important"
    r"|correction|no|nope|wait|oops|sorry|ps|p\.s\.|lol|haha|ugh|argh|meh|phew|(?:just\s+)?for (?:context|reference)"
    # "No, that's wrong, the limit is 500": the denial only says that what follows corrects something.
    r"|that(?:'s|’s| is) (?:not right|not correct|not true|wrong|incorrect)|scratch that)\b[\s,:;!.—–-]*)+",
    re.I,
)
# "Actually the staging DB port is 5433": chat drops the comma, but before a subject the word still only
# says what follows corrects or goes on from something ("Oh my god" is not "my god", "Well water" keeps).
_SAFE_WITHOUT_COMMA = re.compile(
    r"^(so|and|but|also|plus|btw|by the way|fyi|anyway|(ok|okay)(?=\s+(so|we|i|let's|then|now|and|but|the|my|our)\b)"
    r"|(actually|well|sorry|correction)(?=\s+(the|our|my|we|i|i'm|it|it's|its)\s)"
    r"|oh(?=\s+(the|our|we|i|i'm|it|it's|its)\s))\s",
    re.I,
)
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
# Words that go between "I" and its verb and are never a verb themselves ("I now work" → "Ana now works",
# not "Ana nows work"). Words ending in -ly are adverbs unless a verb (_LY_VERBS); these are the others.
ADVERBS = words("""really also just still always never usually often sometimes actually definitely absolutely totally
    honestly only even already rarely mostly generally recently finally personally truly seriously
    literally probably certainly mainly normally typically occasionally frequently basically
    now soon seldom nowadays oftentimes sometime today tonight tomorrow yesterday again yet twice
    thus therefore hence instead anyway anyways somehow somewhat otherwise however indeed meanwhile
    nonetheless nevertheless quite rather much sure either neither alone""")
PAST_OR_MODAL = words("""can could will would shall should may might must did had was used went got made took saw came found
    gave told felt left thought bought brought ran began wrote met knew became kept held sent spent built
    lost won paid said sat stood understood taught caught fought slept drove rode swam sang drank ate fell
    grew threw flew drew chose spoke broke woke wore forgot forgave hid led lit meant heard read put set cut
    hit let quit shut spread cost hurt bet fit split were""")
_IRREGULAR_PRESENT = {"am": "is", "have": "has", "do": "does", "go": "goes", "'m": "is", "'ve": "has"}
# Present tenses that end like a past one: "I need" → "Ana needs".
_PRESENT_ED = words("need feed bleed breed proceed succeed exceed speed heed seed weed embed")
# Verbs ending in -ly, so not adverbs: "I rely on her", "I reapply it" ("simply", "deeply" end in -ply too).
_LY_VERBS = r"(?:re|mis|out|over|under)?(?:fly|rely|reply|apply|supply|multiply|comply|imply)|ally|bully|tally|rally|ply|sully|dally|sally"
# Words between "I" and its verb that are not the verb: "I no longer prefer", "I kind of like"; "last"
# before a past form only ("I last saw her in May"; "I last longer" is the verb).
_NOT_VERBS = (
    r"no longer|not|kind of|sort of|pretty much|right now|too|both|all|almost|ever|once again|first|then|once|later"
    rf"|last(?=\s+(?:{'|'.join(sorted(PAST_OR_MODAL))}|[a-z]+ed)\b)"
)
# A time phrase between "I" and its verb ("I last week started", "I every morning run", "I twice a month
# visit", "I two years ago moved"): its first word is never the verb. First in _ADVERB, so it is taken whole
# before "twice" or "once" alone is.
_TIME_NOUN = (
    r"(?:second|minute|hour|day|night|morning|afternoon|evening|weekend|weekday|week|fortnight|month|quarter"
    r"|semester|term|year|decade|season|summer|winter|spring|autumn|fall|time"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|june|july"
    r"|august|september|october|november|december)s?"
)
_TIME_PHRASE = (
    rf"(?:last|this|next|every|each|all|one|some)(?:\s+(?:other|single))?\s+{_TIME_NOUN}"
    rf"|(?:once|twice|three times|several times|a few times)\s+(?:a|an|per|every)\s+{_TIME_NOUN}"
    rf"|(?:a|an|one|two|three|four|five|six|a few|a couple of|several|\d+)\s+{_TIME_NOUN}\s+ago"
)
_ADVERB = rf"(?:{_TIME_PHRASE}|{'|'.join(sorted(ADVERBS))}|{_NOT_VERBS}|(?!(?:{_LY_VERBS})\b)[a-z]+ly)"
# A first-person word ends where a name or identifier would not go on: "I-95", "us-west-2",
# "us.example.com", "my-service", "me.json" are names, not the speaker.
_IN_TOKEN_BEFORE = r"(?<![\w./@-])"
_NOT_IN_TOKEN = r"(?![\w-]|\.\w|/)"
# Every form of the speaker's "I": fixed forms, "I'd" (had before a participle), "I" + adverbs + verb, a lone "I".
_I_FORM_RE = re.compile(
    r"(?<![\w./-])(?:(?P<fixed>I'm|I am|I've|I have to|I have(?! to\b)|I'll|I don't|I dont|I do not|I haven't|I was)\b"
    rf"|I'd(?P<had>(?:\s+{_ADVERB})*\s+(?:been|gone|done|seen|known|taken|given|(?!\w*eed\b)[a-z]+ed)\b)?"
    rf"|I(?P<adv>(?:\s+(?i:{_ADVERB}))*)\s+(?P<verb>[A-Za-z][A-Za-z']*)|I{_NOT_IN_TOKEN})"
)
_NEVER_VERB_RE = re.compile(_ADVERB, re.I)
# "I myself prefer Go": the emphasis goes with the "I" it stresses.
_I_MYSELF_RE = re.compile(r"\bI,?\s+myself,?(?=\s)")
# Spans in quotation marks are someone's own words: their "I" is theirs, not the speaker's.
# Code spans are identifiers, whatever words they hold ("`my-app`", "`we_sync`").
_QUOTED_RE = re.compile(r'"[^"\n]*"|“[^”\n]*”|`[^`\n]*`')
_NAMED_FORMS = {
    "I'm": "{n} is",
    "I am": "{n} is",
    "I've": "{n} has",
    "I have": "{n} has",
    "I have to": "{n} has to",
    "I'll": "{n} will",
    "I don't": "{n} doesn't",
    "I dont": "{n} doesn't",
    "I do not": "{n} does not",
    "I haven't": "{n} hasn't",
    "I was": "{n} was",
}
# "My brother and I are …", "Ana and I have …": "I" is half of a plural subject, so the verb stays as said
# ("Lee's brother and Lee are", not "… and Lee ares"). Only after a noun phrase opening the clause: in "I love
# hiking and I go every week" the "I" after "and" is a subject of its own.
_PLURAL_WITH_I_RE = wide_re(
    r"(?:^|[,;:—–]\s*|\b(?i:that|because|when|while|so|but|since|after|before|if|then|think|thinks|believe|guess"
    r"|know|hope|feel|said|say|says)\s+)"
    r"(?:(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[Tt]he|(?!(?:It|That|There|He|She|What|Here|Who|This)'s)[A-Z][\w-]*'s)"
    r"(?:\s+(?!(?:is|are|was|were|has|have|had|been|be|am|do|does|did|will|would|can|could)\b)[\w-]+){1,4}"
    r"|(?!I\b)[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+and\s+$"
)
_PLURAL_FORMS = {  # not "I'm", "I am" nor "I was": after "and", those open a clause of their own
    "I've": "{n} have",
    "I have": "{n} have",
    "I have to": "{n} have to",
    "I don't": "{n} don't",
    "I dont": "{n} don't",
    "I do not": "{n} do not",
    "I haven't": "{n} haven't",
}
_OWN_RE = re.compile(rf"{_IN_TOKEN_BEFORE}(?:mine|my|me){_NOT_IN_TOKEN}", re.I)
_MYSELF_RE = re.compile(rf"{_IN_TOKEN_BEFORE}myself{_NOT_IN_TOKEN}", re.I)
_EMOJI_RE = re.compile(r"[\u2600-\u27bf\U0001F000-\U0001FAFF\uFE0F\u200d]+")
_SPACES_RE = re.compile(r"\s+")
# A space before punctuation, not before a name that starts with a dot (".env", ".github").
_SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+([,.;:!?])(?![\w/])")


# Words that open a sentence with a comma after them and are not a name: "Yesterday, I …" keeps its date.
_NOT_NAMES = (
    r"(?:yesterday|today|tonight|tomorrow|now|then|later|lately|also|anyway|anyways|plus|besides|otherwise|however"
    r"|meanwhile|sometimes|again|still|instead|afterwards|overall|once|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december"
    r"|[a-z]+ly)\b"
)
_NAME = rf"(?!(?i:{_NOT_NAMES})){CAPITAL}{SMALL}+"
_GREETING_WORDS = (
    r"hey|hi|hello|thanks|thank you|yeah|yes|yep|wow|oh|ok|okay|so|well|absolutely|totally|aw+|congrats"
    r"|congratulations|sure|haha|omg|ooh|whoa|woah|man|sorry|yay|ah|nice|great|awesome|cool"
)
# A name said to the listener: "Hey Caroline, …", "Wow, Jon, …" (after a greeting, whatever follows),
# "Caroline, my …" (alone, before a pronoun or the like).
_VOCATIVE_RE = re.compile(
    rf"^(?:(?i:{_GREETING_WORDS})[\s,!]+{_NAME}[,!]\s+(?=\S)"
    rf"|{_NAME}[,!]\s+(?=(?:I|I'm|I've|I'd|I'll|we|We|my|My|our|Our|you|You|since|Since|so|So|they|They|it|It"
    r"|it's|It's|that|That|this|This|thanks|Thanks|glad|Glad)\b))"
)


# A short lead-in ending in a colon: "Quick context before we start:", "FYI:", "Note to self:" — not a
# statement of the speaker's ("I got ideas from everywhere: …", "My writing is going well: …").
# Nor who said what follows ("Ben said: "We use Postgres."": the quote is Ben's, not the speaker's).
_LEAD_IN_RE = wide_re(
    r"^(?!(?:[A-Za-z']+\s+){0,5}?(?:I|my|My|is|are|was|were|am|said|says|say|told|tells|wrote|writes|asked|asks"
    r"|replied|replies|added|adds|mentioned|explained|insisted|announced)\b|[^:]*'(?:s|m|re)\b)(?:[A-Za-z']+\s+){0,5}[A-Za-z']+:\s+(?=\S)"
)


# "Remember that …", "Keep in mind that …", "Please note that …": asking to keep what follows, which is the
# statement (how much it matters is read from the words as said).
_KEEP_THAT_RE = re.compile(
    r"^(?:please\s+)?(?:(?:just\s+|also\s+)?(?:remember|note)|keep\s+in\s+mind|bear\s+in\s+mind|be\s+aware"
    r"|don['’]t\s+forget|do\s+not\s+forget)\s+that\s+(?=\S)",
    re.I,
)


@functools.lru_cache(maxsize=4096)  # pure, and asked of one sentence by each rule in turn
def strip_markers(sentence: str) -> str:
    """The sentence without leading discourse markers ("So,", "Btw", "Actually,", "Oh well,"), a
    name said to the listener ("Hey Caroline, …") or a short lead-in ("Quick context:")."""
    text = _VOCATIVE_RE.sub("", sentence.strip(), count=1)
    if not re.match(r"^(correction|actually|note|important|remember)\s*:", text, re.I):
        text = _LEAD_IN_RE.sub("", text, count=1)
    while True:
        text = _KEEP_THAT_RE.sub("", text, count=1)
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
    if lower in PAST_OR_MODAL or (lower.endswith("ed") and lower not in _PRESENT_ED) or "'" in lower:
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
    # "I'm Bo, I joined …" or "My name is Bo and I run …" said by Bo: the introduction says nothing once "I"
    # is "Bo"; "I am Bo from Acme" says where Bo is from ("Bo is from Acme", not "From Acme").
    me = re.escape(name)
    text = re.sub(
        rf"^(?:I(?:'m| am)|My name(?:'s| is)) (?i:{me})(?:\s*[,.;:—–-]+\s*(?:and\s+)?|\s+and\s+)(?=\S)", "", sentence
    )
    text = re.sub(rf"^I(?:'m| am) ((?i:{me}))\s+(?=(?:from|at|with|of|here)\b)", r"\1 is ", text)
    text = _I_MYSELF_RE.sub("I", text)
    quoted = [m.span() for m in _QUOTED_RE.finditer(text)]

    def said_by_speaker(match: re.Match[str]) -> bool:
        return not any(start < match.start() < end for start, end in quoted)

    def person(match: re.Match[str]) -> str:
        if not said_by_speaker(match):
            return match.group(0)
        fixed = match.group("fixed")
        before = match.string[: match.start()]
        are = (match.group("verb") or "").lower() in ("are", "were") and bool(re.search(r"\band\s+$", before))
        plural = are or bool(_PLURAL_WITH_I_RE.search(before))
        if fixed:
            return (_PLURAL_FORMS if plural and fixed in _PLURAL_FORMS else _NAMED_FORMS)[fixed].format(n=name)
        if match.group(0).startswith("I'd"):
            return f"{name} {'had' if match.group('had') else 'would'}{match.group('had') or ''}"
        verb = match.group("verb")
        if verb and len(verb) > 1 and verb.isupper():
            verb = verb.lower()  # "I just LOVE YAML": emphasis, not an acronym
        if verb and (plural or _NEVER_VERB_RE.fullmatch(verb)):
            # no verb after it ("… than I ever."), or one agreeing with "X and I": nothing to change
            return f"{name}{match.group('adv')} {verb}"
        return f"{name}{match.group('adv')} {third_person(verb)}" if verb else name

    text = _I_FORM_RE.sub(person, text)
    quoted = [m.span() for m in _QUOTED_RE.finditer(text)]
    text = _MYSELF_RE.sub(lambda m: "themself" if said_by_speaker(m) else m.group(0), text)
    quoted = [m.span() for m in _QUOTED_RE.finditer(text)]
    # The name once is enough: a "my"/"me"/"mine" after it reads as "their"/"them"/"theirs". "After"
    # in the text, and as a word: "My sister and I" is "Sam's sister and Sam", and "Al" is not in "Albany".
    name_re = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    named = False

    def own(match: re.Match[str]) -> str:
        nonlocal named
        if not said_by_speaker(match):
            return match.group(0)
        named = named or bool(name_re.search(match.string, 0, match.start()))
        word = match.group(0).lower()
        if word == "mine":
            out = "theirs" if named else possessive(name)
        elif word == "my":
            out = "their" if named else possessive(name)
        else:
            out = "them" if named else name
        named = True
        return out

    return _OWN_RE.sub(own, text)


def _cased(replacement: str) -> Callable[[re.Match[str]], str]:
    """A replacement that keeps the capital of a sentence-initial match."""
    return lambda m: replacement.capitalize() if m.group(0)[0].isupper() else replacement


def spell_out(sentence: str) -> str:
    """Chat spellings and "we"/"let's" contractions written out."""
    text = _CHAT_RE.sub(lambda m: _CHAT_WORDS[m.group(1).lower()], CHAT_ASIDE_RE.sub("", sentence))
    for pattern, replacement in _WE_RE:
        text = pattern.sub(_cased(replacement), text)
    return text


def finish(sentence: str) -> str:
    """One tidy sentence: no emoji, single spaces, a capital first letter, a full stop at the end."""
    text = _EMOJI_RE.sub("", unicodedata.normalize("NFC", sentence))
    text = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", _SPACES_RE.sub(" ", text)).strip()
    text = text.rstrip(" ,;:-–—")
    if re.search(r"[.!?…][\"”’']$", text):  # a quotation that ends the sentence ends with its own stop
        return text[0].upper() + text[1:] if text[0].isalpha() else text
    text = re.sub(r"[!.…]+$", "", text).rstrip()
    if not text:
        return ""
    first = text.split(None, 1)[0]
    if re.search(r"[_./()\d]", first):  # an identifier keeps its spelling: test_checkout_flow, npm
        return text + "."
    return text[0].upper() + text[1:] + "."


_BE_LEAD_RE = re.compile(
    r"^((?:just|also|finally|recently|really|still)\s+)?(going|planning|hoping|trying|about|thinking|looking|working)\b",
    re.I,
)
_HAVE_LEAD_RE = re.compile(r"^((?:just|also|finally|recently|really|still)\s+)?been\b", re.I)


def supply_subject(sentence: str, name: str) -> str:
    """The speaker's name in front of a sentence that starts without its subject ("Been reading …")."""
    if not SUBJECTLESS_RE.match(sentence):
        return sentence
    phrase = sentence[0].lower() + sentence[1:]
    if _BE_LEAD_RE.match(sentence):
        return f"{name} is {phrase}"
    if _HAVE_LEAD_RE.match(sentence):
        return f"{name} has {phrase}"
    verb = re.match(r"(?:(?:just|also|finally|recently|really|still)\s+)?([A-Za-z]+)", phrase)
    if verb and verb.group(1).lower() in ("love", "adore", "appreciate"):
        phrase = phrase[: verb.start(1)] + third_person(verb.group(1)) + phrase[verb.end(1) :]
    return f"{name} {phrase}"


# "Please always write commit messages in English": the politeness is not part of the rule.
# A "please" that is the object ("Our kids must always say please") stays.
_PLEASE_RE = re.compile(
    r"^please\b(?!\s+(?:is|was|and|or)\b)[,\s]*(?=\S)|,\s*please(?=[\s.!]*$)"
    r"|(?<!\bsay)(?<!\bsays)(?<!\bsaid)(?<!\bsaying)(?<!\bword)(?<!\bwrite)(?<!\bwrote)(?<!\btype)(?<!\bask)"
    r"(?<!\basked)(?<!\badd)(?<!\bto)\s+please(?=[\s.!]*$)",
    re.I,
)

_SHOW_RE = re.compile(r"^(?:here'?s|here is|here are|check out)\s+", re.I)


# Emphasis that adds no fact ("really loves", "totally hooked", "very happy"); kept where it is the
# whole predicate's head ("thank you very much" keeps "much").
_INTENSIFIER_RE = re.compile(r"\b(?:really|totally|truly|literally|seriously|very)\s+(?=[a-z])(?!much\b)", re.I)
# Fillers that carry no fact wherever they stand ("it's definitely changed them", "super busy").
_FILLER_RE = re.compile(r"\b(?:definitely|absolutely|honestly|basically|(?-i:super))\s+(?=[a-z])", re.I)


def _unless_in_a_name(match: re.Match[str]) -> str:
    """ "" for a filler, but a capitalised one mid-sentence before a capitalised word is part of a name
    ("My favourite album is Definitely Maybe")."""
    said, rest = match.group(0), match.string[match.end() :]
    if said[:1].isupper() and rest[:1].isupper() and match.string[: match.start()].strip():
        return said
    return ""


# "so" and "pretty" as degree words after a verb of being ("it was so special", "is pretty exciting"),
# not "so much", "so far", "so that" or "a pretty dress".
_BE_SO_RE = re.compile(
    r"(\b(?:is|are|was|were|be|been|being|am|feel|feels|felt|look|looks|looked|seem|seems|seemed|sound|sounds"
    r"|sounded|get|gets|got|getting)|'s|'re|'m)\s+(?:so|pretty)\s+(?!much\b|many\b|far\b|that\b|long\b|on\b|to\b|as\b)(?=[a-z])",
    re.I,
)


# Case matters: "US" is a country, not "us".
_GROUP_RE = re.compile(rf"{_IN_TOKEN_BEFORE}(?:[Ww]e|[Uu]s){_NOT_IN_TOKEN}")
_GROUP_AGAIN_RE = re.compile(rf"{_IN_TOKEN_BEFORE}(?:[Ww]e|[Uu]s|[Oo]urs|[Oo]ur|[Oo]urselves){_NOT_IN_TOKEN}")
_THEY = {"we": "they", "us": "them", "our": "their", "ours": "theirs", "ourselves": "themselves"}


def name_the_group(text: str, name: str) -> str:
    """A statement about "us" that does not name its speaker names them in its first "we" or "us" ("We
    made pizza." said by John → "John and others made pizza."), so it is found as something about them;
    the same group said again after that is "they" ("… it keeps us on track" → "it keeps them on
    track"). An "our" before it stays: "our invoices" may be a company's, not John's."""
    if re.search(rf"\b{re.escape(name)}\b", text):
        return text
    code = [m.span() for m in _QUOTED_RE.finditer(text)]  # a quoted "we" is the quoted person's
    first = next((m for m in _GROUP_RE.finditer(text) if not any(s < m.start() < e for s, e in code)), None)
    if first is None:
        return text

    def they(match: re.Match[str]) -> str:
        if any(s < first.end() + match.start() < e for s, e in code):
            return match.group(0)
        word = _THEY[match.group(0).lower()]
        return word.capitalize() if match.group(0)[0].isupper() else word

    named = name[:1].upper() + name[1:] if first.group(0)[0].isupper() else name  # "We …" → "The user and others …"
    return f"{text[: first.start()]}{named} and others{_GROUP_AGAIN_RE.sub(they, text[first.end() :])}"


def without_vocative(sentence: str, listener: str | None) -> str:
    """The sentence without the listener's name said to them ("It was great, Caroline!", "Oof, that's
    tough, Jon."): who was listening is not part of what was said."""
    if not listener:
        return sentence
    name = re.escape(listener)
    text = re.sub(rf"^(?:(?i:{_GREETING_WORDS})[\s,!]+)?{name}[,!]\s+(?=\S)", "", sentence)
    text = re.sub(rf",\s+{name}(?=\s*[.!?…]*\s*$)", "", text)
    return re.sub(rf",\s+{name},\s+", ", ", text)


def standalone(
    sentence: str, *, speaker: str, timestamp: str | None, listener: str | None = None
) -> tuple[str, list[str]]:
    """The sentence made to stand alone, and the absolute dates it names. ``listener``: whom the
    speaker addresses, whose name said to them is dropped."""
    text = TRAILING_REQUEST_RE.sub("", strip_markers(without_vocative(sentence, listener))) or sentence
    text = _PLEASE_RE.sub("", text) or text
    text = _INTENSIFIER_RE.sub("", text)
    text = _FILLER_RE.sub(_unless_in_a_name, text)
    text = _BE_SO_RE.sub(r"\1 ", text)
    text = _SHOW_RE.sub(f"{speaker} shares ", text, count=1)  # "Here's my X" → "Ana shares my X"
    text = supply_subject(spell_out(text), speaker)
    text = replace_first_person(text, speaker)
    text, dates = resolve_relative_dates(text, timestamp)
    return finish(text), dates
