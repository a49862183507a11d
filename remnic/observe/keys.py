"""Supersession keys: ``(entityRef, {attribute: value})`` for a sentence that states a concrete value
of something, so a later statement of another value for the same key replaces it.

"X is VALUE" ("the staging DB port is now 5433" → ``staging-db`` / ``port`` = ``5433``), a change said
with its verb ("we switched the staging DB to port 6543", "the launch deadline moved to March 27",
"we upgraded the API to Python 3.13") and a new owner ("Dana owns the billing service now") give the
same key as the "X is VALUE" of the same thing. Synonyms ("DB"/"database") keep keys of their own:
telling them apart needs more than rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .cues import CHAT_ASIDE_RE, words
from .letters import CAPITAL, UPPER, wide, wide_re
from .records import key_part
from .said_values import NAMED_VERSION_RE, said_value_key, version_attribute
from .said_values import TOOL_PURPOSES as _TOOL_PURPOSES

_NP_SHORT = wide(r"[A-Za-z][\w./-]*(?:\s+[A-Za-z][\w./-]*){0,3}?")

# "the staging DB port is now 5433", "Caroline's favourite colour is blue", "my email is a@b.c"
_VALUE_RE = wide_re(
    r"^(?:(?P<det>(?i:the|our|my|your|this|that))\s+|(?P<owner>[A-Z][\w-]*(?:\s[A-Z][\w-]*)?)'s\s+)?"
    r"(?P<np>[A-Za-z][\w./-]*(?:\s+[A-Za-z][\w./-]*){0,4}?)\s+(?:is|are|was)\s+"
    r"(?:now\s+|still\s+|actually\s+|currently\s+|set to\s+|changed to\s+)*(?P<value>[^,;]+?)"
    r"(?:,?\s*(?:not|instead of)\s+(?P<old>[^,;.]+))?\s*[.!]?$"
)
_ATTRIBUTE_MODIFIERS = words(
    "favorite favourite preferred default primary main home work current max maximum min minimum base deploy release"
)
KNOWN_ATTRIBUTES = words("""port host hostname url endpoint version email phone address city town country name owner lead manager timeout
    ttl limit size day time date deadline budget price color colour language editor shell os database db region branch
    schedule cadence title role job team birthday age password-policy quota interval retention replicas threshold
    channel""")
# A pronoun or possessive pronoun ("Its API", "their API") names nothing: whose it is was said elsewhere.
_NOT_SUBJECT = words(
    "it its this that he his she her they their there what who which i you we one everything something"
)
# "Dana since the reorg" → "Dana": why or since when is not part of the value.
# "Ana and I live in Porto" → "Ana": a clause joined after the value is not part of it ("Ana and Ben" is).
_VALUE_QUALIFIER_RE = re.compile(
    r"\s+(?:since|because|after|when|until|as of|due to|now|again|too|these days)\b"
    r"|,?\s+(?:and|but|so|while|though|although|whereas)\s+(?=(?:i|we|he|she|they|it|you|my|our|his|her|their)\b)",
    re.I,
)
_CLAUSE_SPLIT_RE = re.compile(r"\s+and\s+(?=(?:the|our|my|your)\b)|;\s+", re.I)
# "From now on, the staging DB runs on port 5433": a lead-in saying it holds from now is not the subject.
_TIME_LEAD_RE = re.compile(
    r"^(?:from now on|going forward|moving forward|from here on(?: out)?|as of (?:now|today)"
    r"|starting (?:now|today)|these days|nowadays)\s*,\s*",
    re.I,
)
# "Alice said the ledger service is owned by team Orion": whose words they are is not the subject; the
# statement after it is ("…, Alice said" after it is a trailing clause already).
_REPORTED_LEAD_RE = wide_re(
    r"^(?:(?i:according to) [^,;]+,\s*|(?:[A-Z][\w-]*(?:\s[A-Z][\w-]*)?|I|we|he|she|they|the user)\s+"
    r"(?:(?:has|have|had|just|also)\s+)?(?:said|says|told\s+(?:me|us|him|her|them|everyone)|mentioned|wrote"
    r"|confirmed|announced|explained|noted|reported|pointed out|heard)\s+(?:that\s+)?)"
)
# Verbs of saying or thinking: a noun phrase holding one is a clause, never what a value is of.
_SAYING_WORDS = words("said says told tells thinks believes mentioned wrote heard confirmed")
# "The ledger service is owned by team Orion": its owner, the key "Dana owns the ledger service now" has.
_OWNED_BY_RE = re.compile(r"^owned\s+by\s+(?P<value>.+)$", re.I)
# "Starting next month, …", "… on port 6543 from next week": the value is not current yet, so it
# replaces nothing now.
_FUTURE_RE = re.compile(
    r"\b(?:(?:starting|as of|beginning|effective|commencing)\s+(?:on\s+|in\s+)?(?:tomorrow|next\s+\w+"
    r"|(?:this|the)\s+(?:coming\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+[A-Z][a-z]+|(?:january|february|march|april|may|june|july|august|september"
    r"|october|november|december)\b)|from\s+(?:tomorrow|next\s+\w+))",
    re.I,
)
# "…, when Ewa is on leave", "… 5433, but only on staging", "… unless the flag is off": the value holds
# only sometimes, so it does not replace the one that holds otherwise.
_LIMITING_RE = re.compile(
    r"[,;—–]\s*(?:when|whenever)\b"
    r"|(?:[,;—–]\s*|\s+)(?:unless|if|except|but only|only\s+(?:on|in|for|when|if|during|at|while|after|before|with"
    r"|between))\b"
    # "The DB port is 6000 on my laptop", "… locally": one person's machine, not the shared value
    r"|\s(?:on|in)\s+(?:my|your|his|her|their)\s+(?:own\s+)?(?:local\s+)?(?:laptop|machine|computer|desktop"
    r"|workstation|box|mac|pc|setup|environment|env|dev\s+(?:box|machine|environment|env))\b|\slocally\b",
    re.I,
)
# "… to 600 seconds, since 300 was too aggressive", "… is Ewa now, Tomasz moved to payments": a clause
# after a comma that says why or what else happened is not part of the value. Only a clause opener
# (a conjunction, or a subject and its verb), so a list ("Paris, London and Rome") stays whole.
_TRAILING_CLAUSE_RE = wide_re(
    r"\s*[,;—–]\s*(?:(?:since|because|as|so|but|which|though|although|while|after|when|until|unless|whereas"
    r"|and|or)\b|(?:[A-Z][\w-]*|i|we|he|she|they|it|you)\s+(?:[a-z]+ed|is|was|are|were|has|had|have|will|would"
    r"|can|could|did|does|do|left|went|took|got|said|told|became|came|quit|felt|thinks?|says?)\b"
    # "…, I always mix it up with Valentine's": a pronoun and a verb open a clause whatever the verb is.
    r"|(?:i|we|he|she|they|you)\s+(?:(?:always|never|usually|often|sometimes|just|still|also|really|only)\s+)?"
    r"(?!and\b|or\b)[a-z]+\b"
    r"|(?:[A-Z][\w-]*|it)\s+(?:always|never|usually|often|sometimes|just|still|also|really|only)\s+[a-z]+\b"
    r"|(?:his|her|their|its|my|our)\s+[a-z]+\s+(?:is|was|are|were)\b).*$"
)
# "The staging DB runs on port 5433", "the API listens on port 8080": the attribute named before its value.
_ATTRIBUTE_VALUE_RE = re.compile(
    rf"^(?P<det>(?i:the|our|my))\s+(?P<np>{_NP_SHORT})\s+(?:(?:now|still|currently)\s+)?"
    r"(?P<verb>runs|listens|is|sits|lives|serves|binds|is hosted|is served|is deployed|is exposed)\s+(?:on|at|in)\s+"
    r"(?P<attr>[A-Za-z][a-z]+)\s+(?P<value>[^,;]+?)\s*[.!]?$"
)
_VERSION_RE = re.compile(r"^v?\d+(?:\.\d+){1,3}$")
# "The build agents run on Node 18", "Our API runs Python 3.11 now": a runtime named with its version as what
# a thing runs (or uses), the key "We upgraded the build agents to Node 20" has.
_RUNS_RUNTIME_RE = re.compile(
    rf"^(?P<det>(?i:the|our|my))\s+(?P<np>{_NP_SHORT})\s+(?:(?:now|still|currently)\s+)?(?P<verb>runs?|uses?)\s+"
    r"(?:on\s+)?(?P<attr>[A-Z][\w+#-]*(?:\.[Jj][Ss])?)\s+(?P<value>v?\d+(?:\.\d+){0,3})(?:\s+now)?\s*[.!]?$"
)
# A major version alone ("Node 20", "Java 21") is a version after a runtime's name where a platform is
# said: "runs on Node 20", "upgraded the worker to Node 20" (not "is in Building 7").
_MAJOR_RE = re.compile(r"^v?\d{1,4}$")


# "Mia is visiting next Saturday": a verb going on, not a value ("the job is running" is one).
_VAGUE_VALUE_RE = re.compile(
    r"^(so|very|really|pretty|quite|too|such|a bit|kind of|sort of|not)\b|^[a-z]+ing\s+\w", re.I
)
# "The prod database is read-only on weekends", "… is down", "… is slow on Mondays": a state the thing is in
# (when, maybe), not a value of its last word — "The prod database is Postgres 16" must not retire it; the
# thing's next state does ("The staging DB is up"). Lower case only.
_STATE_VALUE_RE = re.compile(
    r"^(?:down|up|slow|fast|broken|flaky|offline|online|unavailable|available|unreachable|healthy|unhealthy"
    r"|degraded|overloaded|full|empty|busy|idle|stale|huge|large|small|big|tiny|deprecated|read-only|read only"
    r"|locked|frozen|stable|unstable|encrypted|public|private|shared)"
    r"(?:\s+(?:on|during|over|at|in|for|until|after|before|since|most|every|again)\b.*)?$"
)


_NP = wide(r"[A-Za-z][\w./-]*(?:\s+[A-Za-z][\w./-]*){0,4}?")

_CHANGE_VERBS = (
    r"switched|moved|changed|upgraded|downgraded|bumped|set|updated|migrated|raised|lowered|increased|decreased"
    r"|reduced|shifted|pushed|rescheduled|postponed|extended"
)
# "We switched the staging DB to port 6543", "The team has moved our standup to 10:30".
_CHANGED_BY_RE = wide_re(
    r"^(?:[A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*){0,2}?)\s+(?:(?:have|has|had|just|finally|now|recently|already)\s+)*"
    rf"(?P<verb>{_CHANGE_VERBS})\s+(?P<det>(?i:the|our|my|their|its))\s+(?P<np>{_NP})\s+"
    r"(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+(?P<value>[^,;]+?)\s*[.!]?$"
)
# "The launch deadline moved to March 27", "Our release day has been changed to Friday".
_CHANGED_RE = wide_re(
    rf"^(?:(?P<det>(?i:the|our|my|their))\s+|(?P<owner>[A-Z][\w-]*(?:\s[A-Z][\w-]*)?)'s\s+)(?P<np>{_NP})\s+"
    r"(?:(?:has|have|had|was|were|got|is|are|been|just|now|finally)\s+)*"
    rf"(?P<verb>{_CHANGE_VERBS}|went up|went down|dropped|rose|grew|slipped)\s+"
    r"(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+(?P<value>[^,;]+?)\s*[.!]?$"
)
# "Dana owns the billing service now", "Dana took over the billing service", "Dana is now the owner of …":
# a new owner said as such (a plain "Priya owns the billing service" may be one of several owners).
_NEW_OWNER_RE = wide_re(
    r"^(?P<value>[A-Z][\w-]*(?:\s[A-Z][\w-]*)?)\s+(?:(?:now\s+owns|owns)\s+(?P<np1>(?i:the|our)\s+[^,;]+?)\s+now"
    r"|now\s+owns\s+(?P<np2>(?i:the|our)\s+[^,;]+?)"
    r"|(?:has\s+)?(?:took|taken)\s+over\s+(?P<np3>(?i:the|our)\s+[^,;]+?)"
    r"|is\s+(?:now\s+)?the\s+new\s+owner\s+of\s+(?P<np4>(?i:the|our)\s+[^,;]+?)"
    r"|is\s+now\s+the\s+owner\s+of\s+(?P<np5>(?i:the|our)\s+[^,;]+?))"
    r"(?:\s+(?:since|as of|from)\b[^,;]*)?\s*[.!]?$"
)
# "Dana Kim is our account owner now": "Our account owner is Dana Kim now" in the other order. Only a role
# one person holds at a time ("Ana is my friend", "Argo is our deployment tool" name one of several).
_INVERTED_ROLE_RE = wide_re(
    r"^(?P<value>[A-Z][\w-]*(?:\s[A-Z][\w-]*)?)\s+is\s+(?:now\s+)?(?P<det>(?i:the|our|my))\s+(?:new\s+)?"
    r"(?P<np>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,3}?)(?:\s+(?:now|again|since\b[^,;]*|as of\b[^,;]*))?\s*[.!]?$"
)
_SOLE_ROLES = words("owner lead manager maintainer contact boss admin director")
# "Kofi replaced Priya Shah as our account owner", "Kofi took over as our account owner": the role's new
# holder, as "Our account owner is Kofi" says it (done, so not "takes over" nor "will replace").
_TOOK_OVER_AS_RE = wide_re(
    r"^(?P<value>[A-Z][\w-]*(?:\s[A-Z][\w-]*)?)\s+(?:(?:has|have|just|officially|recently)\s+)*"
    r"(?:replaced\s+(?:[A-Z][\w-]*(?:\s[A-Z][\w-]*)?|him|her|them)|took\s+over|taken\s+over|stepped\s+in)\s+as\s+"
    r"(?P<det>(?i:the|our|my))\s+(?:new\s+)?(?P<np>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,3}?)"
    r"(?:\s+(?:now|since\b[^,;]*|as of\b[^,;]*|last\s+\w+|this\s+\w+|in\s+[A-Z]\w+))?\s*[.!]?$"
)
_NOT_A_NAME = words("today tomorrow yesterday tonight now here there everyone nobody someone")
_UPGRADES = frozenset({"upgraded", "downgraded", "migrated"})
# A hedge before what is stated ("Ana thinks the staging DB port is 5434", "Maybe the deadline is May 2"):
# the statement after it has the key it would have said plainly.
_HEDGE_LEAD_RE = wide_re(
    r"^(?:(?:[A-Z][\w-]*(?:\s[A-Z][\w-]*)?|I|we|they|the user)\s+(?:think|thinks|believe|believes|guess|guesses"
    r"|suppose|supposes|reckon|reckons|assume|assumes|(?:am|is|are)\s+(?:pretty\s+|fairly\s+)?sure)\s+(?:that\s+)?"
    r"|(?:maybe|perhaps|possibly|probably|apparently)\s*,?\s+"
    # "I'm not sure but I think …", "Ben is not sure, but …": a doubt said first, then the statement.
    r"|(?:(?:[A-Z][\w-]*(?:\s[A-Z][\w-]*)?|I)\s*(?:am|is|'m|’m)\s+)?not\s+(?:(?:entirely|totally|100%|quite)\s+)?"
    r"(?:sure|certain)\s*(?:,\s*|\s+)(?:but\s+)?)",
    re.I,
)
# A hedge said inside the value with no comma ("… is probably 5433", "… is 5433 maybe", "… is 5433 I think",
# "… is Friday or so"): not part of it. Lower case only (a hedge word as said in passing), so a name holding
# one stays whole ("Maybe Tomorrow", "Definitely Maybe", "What I Think"); a value that is only a hedge ("the
# port is maybe") is none.
_HEDGES = (
    r"maybe|probably|perhaps|possibly|[Ii] (?:think|guess|believe|suppose|reckon)|[Ii]'?m (?:not sure|guessing)"
    r"|not (?:sure|certain)|iirc"
)
_HEDGE_IN_VALUE_RE = re.compile(
    rf"^(?:probably|maybe|perhaps|possibly|likely)\s+|\s+(?:{_HEDGES}|or (?:so|something))\s*\??$"
)
_ONLY_HEDGE_RE = re.compile(rf"^(?:{_HEDGES})\s*\??$")
# A hedge after what is stated, as a clause of its own after a comma ("… is 6543, maybe, not sure.", "… is
# 6543, Bob guesses.", "…, if I remember right."): a closed list, each a whole clause, so no value is cut.
_HEDGE_TAIL_RE = wide_re(
    r"(?:\s*,\s*(?:maybe|probably|perhaps|possibly|i think|i guess|i believe|i suppose|i reckon|i'?m guessing"
    r"|(?:i'?m\s+)?not (?:sure|certain|100%(?: sure)?)|(?:but\s+)?don'?t quote me(?: on (?:it|that))?"
    r"|if i (?:remember|recall) (?:right|rightly|correctly)|iirc|or (?:so|something)"
    r"|(?:[A-Z][\w-]*(?:\s[A-Z][\w-]*)?|he|she|they|we) (?:thinks|guesses|believes|supposes|reckons|assumes)"
    r"|(?:he|she|they|we) (?:think|guess|believe|suppose|reckon|assume))(?:\s+(?:though|anyway))?)+\s*[.!?]*$",
    re.I,
)
# A hedge in the verb ("the staging DB port might be 5434 now"): the statement is "… is 5434". Not
# "should be" nor "must be": those say what a thing is meant to be ("The port should be 5433 in prod"),
# a rule a setting may not follow yet, so approving one replaces no value said of the thing itself.
_HEDGED_VERB_RE = re.compile(r"\s(?:might|may|could)\s+(?:(?:now|still|well|actually|already)\s+)?be\s", re.I)


def change_key(sentence: str) -> tuple[str | None, Mapping[str, str]]:
    """The key of a change said with its verb, or of a new owner; ``(None, {})`` otherwise."""
    text = sentence.strip()
    owner = _NEW_OWNER_RE.match(text)
    if owner:
        value = owner.group("value")
        np = next(owner.group(g) for g in ("np1", "np2", "np3", "np4", "np5") if owner.group(g))
        thing = re.sub(r"^(?i:the|our)\s+", "", np)
        if value.lower() in _NOT_SUBJECT or value.split()[0].lower() in ("the", "our", "my"):
            return None, {}
        return key_part(thing), {"owner": value}
    match = _CHANGED_BY_RE.match(text) or _CHANGED_RE.match(text)
    if not match:
        return None, {}
    words_ = match.group("np").split()
    if any(w.lower() in ("and", "or", "because", "when", "if", "from", "over") for w in words_):
        return None, {}
    value = _value_of(match.group("value"))
    said = value.split(None, 1)
    owner_ = match.groupdict().get("owner")
    prefix = [owner_] if owner_ else []
    if len(said) == 2 and key_part(said[0]) in KNOWN_ATTRIBUTES:  # "to port 6543": the attribute is named
        entity, attribute, value = " ".join(prefix + words_), said[0], said[1]
    elif match.group("verb") in _UPGRADES:  # "upgraded the API to Python 3.13": its Python's version
        named = NAMED_VERSION_RE.match(value)
        was = NAMED_VERSION_RE.match(match.groupdict().get("old") or "")
        if not named and was and (_VERSION_RE.match(value) or _MAJOR_RE.match(value)):
            value = f"{was.group(1)} {value}"  # "from Python 3.11 to 3.12": the runtime named before
            named = NAMED_VERSION_RE.match(value)
        entity, attribute = " ".join(prefix + words_), version_attribute(named.group(1)) if named else "version"
    elif len(words_) >= 2 or prefix:
        split = len(words_) - 2 if len(words_) >= 2 and words_[-2].lower() in _ATTRIBUTE_MODIFIERS else len(words_) - 1
        entity, attribute = " ".join(prefix + words_[:split]), " ".join(words_[split:])
        if not entity:
            return None, {}
    else:
        return None, {}
    concrete = bool(re.search(rf"[\d@/:_]|{CAPITAL}", value)) or key_part(attribute.split()[-1]) in KNOWN_ATTRIBUTES
    if not value or not concrete or len(value.split()) > 6 or _VAGUE_VALUE_RE.match(value):
        return None, {}
    return key_part(entity), {key_part(attribute): value}


def statement_key(content: str) -> tuple[str | None, Mapping[str, str]]:
    """The key of a stored fact's text, its hedge aside ("Ana thinks the staging DB port is 5434", "The
    staging DB port might be 5434", "… is 5434, maybe, not sure"): what a person approving a doubted fact
    accepts is the statement itself. Only the review's approval asks: as observed, a hedged value keys
    nothing (it is queued)."""
    text = content.strip()
    while (bare := _HEDGE_LEAD_RE.sub("", text, count=1)) != text:  # "not sure but I think …": two leads
        text = bare
    text = _HEDGE_TAIL_RE.sub(".", text, count=1)
    text = _HEDGED_VERB_RE.sub(" is ", text, count=1)
    return value_key(text[:1].upper() + text[1:], "")  # a hedge inside the value: see _value_of


def value_key(sentence: str, speaker: str) -> tuple[str | None, Mapping[str, str]]:
    """``(entityRef, {attribute: value})`` when the sentence (or one of its clauses) states a concrete
    value of something."""
    sentence = _TIME_LEAD_RE.sub("", CHAT_ASIDE_RE.sub("", sentence.strip()), count=1)  # "… is 5433 btw"
    sentence = _REPORTED_LEAD_RE.sub("", sentence, count=1)
    if _FUTURE_RE.search(sentence) or _LIMITING_RE.search(sentence):
        return None, {}
    for clause in [sentence, *_CLAUSE_SPLIT_RE.split(sentence)]:
        clause = clause.strip().rstrip(".!") + "."
        found = _any_key(clause, speaker)
        if not found[0] and _TRAILING_CLAUSE_RE.search(clause):
            found = _any_key(_TRAILING_CLAUSE_RE.sub("", clause).rstrip(".!") + ".", speaker)
        if found[0]:
            return found
    return _role_after_clause(sentence, speaker)


# A clause of its own: a subject (a noun phrase, a name or a pronoun) and its verb — not a subordinate
# one ("If Ewa is out", "When …") nor a phrase ("In March").
_CLAUSE_RE = wide_re(
    r"^(?!(?:if|when|whenever|unless|while|until|after|before|since|because|although|though|once|as|during|except"
    r"|in|on|at|from|starting|by|for|with|without|and|or|but|so)\b)"
    r"(?:(?:i|we|you|he|she|they|it)\s+[a-z']+"
    r"|(?:(?:the|our|my|your|their|his|her|its)\s+(?:[\w'-]+\s+){1,3}?|[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?\s+)"
    r"(?:(?:also|now|still|just|already|finally|recently|always|usually)\s+)?"
    r"(?:is|are|was|were|has|have|had|will|can|left|went|took|got|quit|joined|moved|[a-z]+ed|[a-z]{2,}s(?=\s+\w)))\b",
    re.I,
)


def _role_after_clause(sentence: str, speaker: str) -> tuple[str | None, Mapping[str, str]]:
    """ "Tomasz moved to payments, my manager is Ewa now": the role one person holds said after a clause
    about what else happened has the key it has said first ("My manager is Ewa now, Tomasz moved …")."""
    head, *rest = re.split(r"\s*[,;—–]\s+", sentence.strip().rstrip(".!"))
    if not rest or not _CLAUSE_RE.match(head):
        return None, {}
    for clause in rest:
        clause = _TRAILING_CLAUSE_RE.sub("", clause + ".").rstrip(".!") + "."
        found = _clause_value_key(clause, speaker)
        found = found if found[0] else _inverted_role_key(clause, speaker)
        if found[0] and set(found[1]) <= _SOLE_ROLES:
            return found
    return None, {}


# Words that point back at something said before ("…, and I've read it twice", "…, and her team is in
# Berlin"): a clause with one says more about the value, so it stays with it.
_POINTS_BACK_RE = re.compile(
    r"\b(?:it|its|he|him|his|she|her|hers|they|them|their|theirs|this|that|these|those|there|which|who|one)\b", re.I
)
_COORDINATED_RE = re.compile(r",\s+and\s+|;\s+")


def split_value_statement(sentence: str, core: str) -> list[str]:
    """A sentence stating a value and, after ", and" or "; ", another statement of its own — in either
    order: "Our account owner is Priya Shah, and our contract renews on 1 June 2026", "Our contract renews
    on 1 June 2026, and our account owner is Priya Shah" — as two: stored whole under the value's key, the
    other statement would be superseded with the value (two values: each has its own key). ``core`` is
    the sentence without its lead-in markers; the parts keep them."""
    for match in _COORDINATED_RE.finditer(sentence):
        head, rest = sentence[: match.start()], sentence[match.end() :]
        if len(rest.split()) < 3 or not _CLAUSE_RE.match(rest) or _POINTS_BACK_RE.search(rest):
            continue
        said = core[: max(0, len(core) - len(sentence) + match.start())]
        if not said:
            continue
        # The value after the other statement: that one must be a clause of its own ("If Ewa is out, and
        # …" or "In March, and …" is no statement to keep apart).
        if value_key(said, "the speaker")[0] or (_CLAUSE_RE.match(said) and value_key(rest, "the speaker")[0]):
            return [head.rstrip() + ".", *split_value_statement(rest, rest)]
    return [sentence]


def _any_key(clause: str, speaker: str) -> tuple[str | None, Mapping[str, str]]:
    found = _clause_value_key(clause, speaker)
    found = found if found[0] else change_key(clause)
    found = found if found[0] else _inverted_role_key(clause, speaker)
    found = found if found[0] else _attribute_value_key(clause)
    return found if found[0] else said_value_key(clause)


def _inverted_role_key(sentence: str, speaker: str) -> tuple[str | None, Mapping[str, str]]:
    match = _INVERTED_ROLE_RE.match(sentence.strip()) or _TOOK_OVER_AS_RE.match(sentence.strip())
    if not match or match.group("np").split()[-1].lower() not in _SOLE_ROLES:
        return None, {}
    name = match.group("value")
    if name.split()[0].lower() in _NOT_SUBJECT | _NOT_A_NAME | {"the", "our", "my"}:
        return None, {}
    return _clause_value_key(f"{match.group('det').capitalize()} {match.group('np')} is {name}.", speaker)


def _team_attribute(det: str | None, np_words: list[str]) -> bool:
    """Whether "Our X is V" names a value of the team's own X: a known attribute ("Our primary region",
    "Our release day") or a tool's purpose ("Our CI"). Not "The X is V": a bare "The port is 5433" or
    "The default region is …" is some other thing's, named elsewhere."""
    if (det or "").lower() != "our" or len(np_words) > 2:
        return False
    return key_part(np_words[-1]) in KNOWN_ATTRIBUTES or key_part(" ".join(np_words)) in _TOOL_PURPOSES


def _attribute_value_key(sentence: str) -> tuple[str | None, Mapping[str, str]]:
    match = _ATTRIBUTE_VALUE_RE.match(sentence.strip())
    if not match:
        runs = _RUNS_RUNTIME_RE.match(sentence.strip())
        if not runs or runs.group("np").split()[0].lower() in _NOT_SUBJECT:
            return None, {}
        attr = runs.group("attr")
        # A major version alone only as what a thing runs ("runs Node 20"; not "uses Room 5"), and never a
        # known attribute's number ("uses Port 8080": the port, not a version of it).
        used = runs.group("verb").startswith("use")
        if key_part(attr) in KNOWN_ATTRIBUTES or (used and not _VERSION_RE.match(runs.group("value"))):
            return None, {}
        return key_part(runs.group("np")), {version_attribute(attr): f"{attr} {runs.group('value')}"}
    words_ = match.group("np").split()
    value = _value_of(match.group("value"))
    if key_part(match.group("attr")) not in KNOWN_ATTRIBUTES:
        # "The API runs on Python 3.11": a named runtime and its version, the key "upgraded the API to
        # Python 3.12" has.
        major = match.group("verb") == "runs" and _MAJOR_RE.match(value)
        if not (match.group("attr")[:1].isupper() and (_VERSION_RE.match(value) or major)):
            return None, {}
        if words_[0].lower() in _NOT_SUBJECT:
            return None, {}
        return key_part(" ".join(words_)), {version_attribute(match.group("attr")): f"{match.group('attr')} {value}"}
    if words_[0].lower() in _NOT_SUBJECT or not value or len(value.split()) > 6 or _VAGUE_VALUE_RE.match(value):
        return None, {}
    return key_part(" ".join(words_)), {key_part(match.group("attr")): value}


# An aside closing the value with no comma before it ("… is Ewa by the way", "… is 5433 btw"); only in
# lowercase: "Stop by the Way" is a title.
_TRAILING_ASIDE_RE = re.compile(r"\s+(?:by\s+the\s+way|btw|BTW)\s*$")


# When it changed or was said, closing the value ("… to port 6543 over the weekend", "… is 5433 as of last
# night", "… is 8081 after all", "it's 8081 actually"): not part of it. Lower case only (a title may end
# so), and only after a value: "The party was last night" keeps its value. A weekday only singular: "at
# 10:30 on Fridays" says when the value holds.
_DAYS = r"[Mm]onday|[Tt]uesday|[Ww]ednesday|[Tt]hursday|[Ff]riday|[Ss]aturday|[Ss]unday"
_WHEN_TAIL_RE = re.compile(
    r"\s+(?:over\s+the\s+weekend|(?:last|this|earlier\s+this)\s+(?:night|morning|afternoon|evening|week|weekend"
    rf"|month|year|{_DAYS})|(?:yesterday|today|tonight)(?:\s+(?:morning|afternoon|evening|night))?|earlier\s+today"
    rf"|on\s+(?:{_DAYS})|(?:a\s+(?:few|couple\s+of)|\d+|two|three)\s+(?:days|weeks|months)\s+ago|just\s+now"
    r"|recently|after\s+all|actually|instead|though|then)\s*$"
)


def value_said(said: str) -> str:
    """A value as said after its subject, without why, when or a hedge (:func:`_value_of`)."""
    return _value_of(said)


def _value_of(said: str) -> str:
    """The value as said, without why or since when (``_VALUE_QUALIFIER_RE``) and without a hedge said
    inside it (``_HEDGE_IN_VALUE_RE``); empty when it is only a hedge."""
    value = _VALUE_QUALIFIER_RE.split(said.strip().rstrip(".!"), maxsplit=1)[0].strip()
    value = _TRAILING_ASIDE_RE.sub("", value)  # "Our team lead is Ewa by the way": the lead is "Ewa"
    while (bare := _WHEN_TAIL_RE.sub("", value, count=1)) != value:
        value = bare
    while (bare := _HEDGE_IN_VALUE_RE.sub("", value, count=1).strip()) != value:
        value = bare
    return "" if _ONLY_HEDGE_RE.match(value) else value


def subject_of(content: str) -> str | None:
    """The words naming what an "X is VALUE" statement is about ("The staging DB port is 5433." → "The
    staging DB port"), when it has a key: what a bare "it" answering it stands for."""
    text = _TIME_LEAD_RE.sub("", content.strip(), count=1)
    match = _VALUE_RE.match(_TRAILING_CLAUSE_RE.sub("", text.rstrip(".!")) + ".")
    if not match or not _clause_value_key(match.group(0), "")[0]:
        return None
    return text[: match.start("np")] + match.group("np")


def _clause_value_key(sentence: str, speaker: str) -> tuple[str | None, Mapping[str, str]]:
    match = _VALUE_RE.match(sentence.strip())
    if not match:
        return None, {}
    words = match.group("np").split()
    if words[0].lower() in _NOT_SUBJECT or any(
        w.lower() in ("and", "or", "because", "when", "if") or w.lower() in _SAYING_WORDS for w in words
    ):
        return None, {}
    owned = _OWNED_BY_RE.match(match.group("value").strip().rstrip(".!"))
    if owned and not match.group("owner"):
        by = _value_of(owned.group("value"))
        if re.search(rf"[{UPPER}\d]", by) and len(by.split()) <= 4 and by.split()[0].lower() not in _NOT_SUBJECT:
            return key_part(" ".join(words)), {"owner": by}
        return None, {}
    split = len(words) - 2 if len(words) >= 2 and words[-2].lower() in _ATTRIBUTE_MODIFIERS else len(words) - 1
    attribute, entity_words = " ".join(words[split:]), words[:split]
    owner = match.group("owner") or (speaker if (match.group("det") or "").lower() == "my" else None)
    if owner and owner.lower() in _NOT_SUBJECT:
        return None, {}
    if owner and not entity_words:
        entity = owner
    elif entity_words:
        entity = " ".join(([owner] if owner else []) + entity_words)
    elif _team_attribute(match.group("det"), words):
        # "Our primary region is eu-west-1", "Our CI is Jenkins": the team's own, named by the attribute.
        entity = " ".join(words)
        if key_part(entity) in _TOOL_PURPOSES:
            attribute = "tool"
    else:
        return None, {}
    value = _value_of(match.group("value"))
    if _STATE_VALUE_RE.match(value):  # the state of the whole thing, which its next state replaces
        return key_part(" ".join(([owner] if owner else []) + words)), {"state": value}
    concrete = bool(re.search(rf"[\d@/:_]|{CAPITAL}", value)) or key_part(attribute.split()[-1]) in KNOWN_ATTRIBUTES
    if not value or not concrete or len(value.split()) > 6 or _VAGUE_VALUE_RE.match(value):
        return None, {}
    return key_part(entity), {key_part(attribute): value}
