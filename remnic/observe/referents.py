"""What a correction that does not name its subject is about, read from the keyed facts said before it.

"Actually, it is 5434 now.", "Actually the port is 5433, not 5432.", "Sorry, I meant 5433, not 5432." or
"No wait, it's 5433." said after "The staging DB port is 5432." corrects that fact: stored as said, it
would name no key, replace nothing and mean nothing alone. Resolved, it is stored standalone ("The
staging DB port is 5433, not 5432.") with the earlier fact's key, so it supersedes it. Only when the new
value is that thing's kind of value (:func:`fits`); anything else stays as it was said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from .cues import words
from .extract import PRONOUN_VALUE_RE, VALUE_AFTER_KEY, Candidate, names_nothing, tags_for
from .keys import subject_of, value_key, value_said
from .normalize import standalone, strip_markers
from .records import ExtractedFact
from .said_values import IN_USE

# "I meant 5433, not 5432", "it's 5433, not 5432", "make that 5433": the new value with no subject, and
# perhaps the old one it replaces.
_VALUE_ONLY_RE = re.compile(
    r"^(?:I\s+meant|I\s+mean|make\s+(?:it|that)|(?:it|that)(?:'s|’s|\s+is|\s+was|\s+should\s+be))\s+"
    r"(?P<new>[^,;]+?)(?:\s*,?\s*(?:not|instead\s+of|rather\s+than)\s+(?P<old>[^,;.]+?))?\s*[.!]?$",
    re.I,
)
# "the port is 5433, not 5432": a subject of up to three words that is the end of an earlier key's subject
# ("The staging DB port").
_SHORT_SUBJECT_RE = re.compile(
    r"^(?:the|our)\s+(?P<np>[A-Za-z][\w./-]*(?:\s+[A-Za-z][\w./-]*){0,2}?)\s+(?P<be>is|was|are)\s+"
    r"(?:now\s+|actually\s+|really\s+)*(?P<rest>\S.*)$",
    re.I,
)
_OLD_VALUE_RE = re.compile(r",?\s*(?:not|instead\s+of|rather\s+than)\s+(?P<old>[^,;.]+?)\s*[.!]?$", re.I)


def resolve_correction(
    candidate: Candidate,
    antecedent: ExtractedFact | None,
    stated: Sequence[tuple[str, ExtractedFact]],
    *,
    speaker: str,
    own: bool = True,
    who: str = "",
) -> Candidate:
    """``candidate`` about the thing an earlier keyed fact of the flush states, when it corrects that
    fact without naming it: "it is VALUE" (:func:`resolve_pronoun`), "I meant NEW[, not OLD]", "the
    ATTRIBUTE is NEW[, not OLD]". ``antecedent``: the one keyed fact of the turn before (see
    ``plan_observations``); ``stated``: the flush's keyed facts so far, oldest first, each with who said
    it. A value "not OLD" names which fact: the latest stating OLD. ``speaker``: whose "I" the words are;
    ``who``: the speaker as ``stated`` names them; ``own``: the antecedent is that speaker's own — "I
    meant" corrects only what the speaker said ("Ana: port 5432" / "Ben: Sorry, I meant 5433" is Ben's
    own slip, not Ana's). "the ATTRIBUTE" naming more than one earlier key names none."""
    fact = candidate.fact
    if fact.entity_ref:
        return candidate
    core = strip_markers(candidate.sentence)
    old = _OLD_VALUE_RE.search(core)
    if fact.category != "correction" and not old:
        return candidate
    resolved = resolve_pronoun(candidate, antecedent) if fact.category == "correction" else candidate
    if resolved is not candidate:
        return resolved
    if candidate.cue == VALUE_AFTER_KEY and antecedent is not None and (value := _bare_value(core)):
        subject = subject_of(antecedent.content)  # "8081 then.": the value, its subject the fact's
        return _resolved(candidate, antecedent, f"{subject} is {value}.", speaker) if subject else candidate
    bare = _VALUE_ONLY_RE.match(core)
    if bare and fact.category == "correction":
        new, said_old = bare.group("new").strip(), bare.group("old")
        meant = re.match(r"I\s+mean", core, re.I) is not None
        if meant:
            stated = [(by, f) for by, f in stated if by == who]
            antecedent = antecedent if own else None
        target = _stating(stated, said_old) if said_old else antecedent
        subject = subject_of(target.content) if target is not None else None
        if target is None or not subject:
            return candidate
        rest = f"{new}, not {said_old.strip()}" if said_old else new
        return _resolved(candidate, target, f"{subject} is {rest}.", speaker)
    short = _SHORT_SUBJECT_RE.match(core)
    if short is None:
        return candidate
    tail = short.group("np").lower().split()
    found: dict[tuple[str | None, frozenset[str]], tuple[ExtractedFact, str]] = {}
    for _by, target in reversed(stated):
        subject = subject_of(target.content)
        named = subject.lower().split() if subject else []
        if len(named) <= len(tail) + 1 or named[-len(tail) :] != tail:
            continue  # "The port" itself is no subject with a key; "The staging DB port" ends with "port"
        if old and not _states(target, old.group("old")):
            continue
        found.setdefault((target.entity_ref, frozenset(target.structured_attributes)), (target, subject or ""))
    if len(found) != 1:
        return candidate  # "the port" after the staging DB port and the Redis port: which one, only the speaker knows
    target, subject = next(iter(found.values()))
    return _resolved(candidate, target, f"{subject} {short.group('be')} {short.group('rest')}", speaker)


# What a reply says when it only gives a value ("8081.", "8081 then."), or "it is VALUE" — after "Hmm,",
# "Yes,", "Ok so" and the like.
_REPLY_LEAD_RE = re.compile(
    r"^(?:(?:yes|yeah|yep|no|nope|nah|ok|okay|so|well|hmm+|um+|uh+|oh|ah+|right|sorry)\b[\s,.!;:—–-]*)+", re.I
)
_BARE_VALUE_RE = re.compile(r"^(?P<rest>[\w.:/@+#-]*\d[\w.:/@+#-]*(?:\s+[a-z]+){0,2})\s*[.!]?$")


def value_after(antecedent: ExtractedFact | None) -> Callable[[str], str | None] | None:
    """For a turn right after ``antecedent`` (the turn before's one keyed fact): why a sentence the rules
    would drop is kept for review — it gives only a value of that thing's kind ("Hmm, it is 8081.",
    "8081 then." after "The API port is 8082."): dropped, a correction would leave no trace, accepted,
    it might be no correction at all."""
    if antecedent is None or len(antecedent.structured_attributes) != 1:
        return None
    ((attribute, old),) = antecedent.structured_attributes.items()
    if old == IN_USE:
        return None  # "We use React for the frontend" says one tool in use, no value "It's Vue" replaces

    def keep(sentence: str) -> str | None:
        said = _bare_value(sentence)
        if said is None:
            # "Node 20 now." after "We run Node 18.": too short to be kept, but another value of that very key.
            entity_ref, attributes = value_key(strip_markers(sentence), "")
            said = attributes.get(attribute) if entity_ref == antecedent.entity_ref else None
            if said is None or said.strip().lower() == old.strip().lower():
                return None
        elif not fits(old, said, attribute) or said.lower() == old.strip().lower():
            return None
        return f'a value said right after "{antecedent.content}": whether it corrects it, only the speaker knows'

    return keep


def _bare_value(sentence: str) -> str | None:
    """The value a sentence says with no subject ("It's 8081 though." → "8081"), or None."""
    core = _REPLY_LEAD_RE.sub("", strip_markers(sentence)).strip()
    found = PRONOUN_VALUE_RE.match(core) or _BARE_VALUE_RE.match(core)
    return value_said(found.group("rest")) or None if found else None


def _stating(stated: Sequence[tuple[str, ExtractedFact]], value: str) -> ExtractedFact | None:
    """The latest of ``stated`` whose value is ``value``."""
    return next((f for _by, f in reversed(stated) if _states(f, value)), None)


def _states(fact: ExtractedFact, value: str) -> bool:
    said = value.strip().lower()
    return any(v.strip().lower() == said for v in fact.structured_attributes.values())


def _resolved(candidate: Candidate, target: ExtractedFact, said: str, speaker: str) -> Candidate:
    """The candidate as ``said`` (made standalone), when that states another value of ``target``'s key."""
    content, _ = standalone(said, speaker=speaker, timestamp=candidate.turn.timestamp)
    entity_ref, attributes = value_key(content, "")
    if entity_ref != target.entity_ref or set(attributes) != set(target.structured_attributes):
        return candidate
    if not all(fits(target.structured_attributes[k], v, k) for k, v in attributes.items()):
        return candidate
    fact = replace(
        candidate.fact, content=content, entity_ref=entity_ref, structured_attributes=attributes, tags=tags_for(content)
    )
    return replace(candidate, fact=fact, sentence=content)


def resolve_pronoun(candidate: Candidate, antecedent: ExtractedFact | None) -> Candidate:
    """A correction that says only "it is VALUE" ("Actually, it is 5434 now.") after a turn whose one
    keyed fact stated that thing's value ("The staging DB port is 5433."): "it" is that thing, so the
    correction is its new value under the same key. Anything else stays as it is (the judge defers a
    bare pronoun subject)."""
    fact = candidate.fact
    if antecedent is None or fact.category != "correction" or not names_nothing(candidate.sentence):
        return candidate
    subject = subject_of(antecedent.content)
    match = PRONOUN_VALUE_RE.match(strip_markers(fact.content))
    if not subject or not match:
        return candidate
    verb = "was" if match.group("be").strip() == "was" else "is"
    content = f"{subject[:1].upper()}{subject[1:]} {verb} {match.group('rest')}"
    entity_ref, attributes = value_key(content, "")
    if entity_ref != antecedent.entity_ref or set(attributes) != set(antecedent.structured_attributes):
        return candidate
    if not all(fits(antecedent.structured_attributes[k], v, k) for k, v in attributes.items()):
        return candidate  # "Actually, it was my idea to hire her": not a value of that thing at all
    resolved = replace(
        fact, content=content, entity_ref=entity_ref, structured_attributes=attributes, tags=tags_for(content)
    )
    return replace(candidate, fact=resolved, sentence=content)


# Words a value never has: a verb phrase or a clause ("my idea to hire her"), not a name or a number.
_CLAUSE_WORDS = words(
    "to my your his her our their its me him them us that which who because if when and or not is are was were"
    " be been have has had do does did will would can could should"
)
_UNIT_RE = re.compile(
    r"^(?:ms|s|sec|secs|seconds?|mins?|minutes?|hours?|hrs?|days?|weeks?|months?|years?|[kmgt]i?b|bytes?|percent"
    r"|%|requests?|per|a|an|x|times|v)$",
    re.I,
)


# Roles a person holds: a day, a month or a time is never one ("Actually it's Friday" is no account owner).
_PERSON_ROLES = words(
    "owner lead manager maintainer contact boss admin director assignee reviewer approver sponsor champion"
    " wife husband partner spouse girlfriend boyfriend fiance fiancee brother sister mother father mom dad mum"
    " son daughter friend colleague teammate coworker doctor dentist therapist lawyer accountant landlord"
)
_NOT_A_PERSON = words(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july"
    " august september october november december today tomorrow tonight yesterday weekend morning noon"
    " afternoon evening night midnight now later soon never always"
)


def _role(attribute: str) -> str:
    return attribute.lower().rsplit("-", 1)[-1]


def fits(old: str, new: str, attribute: str = "") -> bool:
    """Whether ``new`` is the same kind of value as ``old``: a number, version, duration or port for a
    numeric one (with no words but the old one's and units: "5434", "600 seconds", "Python 3.13"); a
    short name for a name. "a Postgres 16 instance" is no port. For ``attribute`` "port" a number 1–65535;
    for a person's role ("owner", "lead") no day, month or time ("Friday" is no account owner)."""
    said = new.split()
    if not said or len(said) > 3 or any(w.lower().strip(".,") in _CLAUSE_WORDS for w in said):
        return False
    if _role(attribute) == "port" and not (new.strip().isdigit() and 1 <= int(new.strip()) <= 65535):
        return False
    if _role(attribute) in _PERSON_ROLES and any(w.lower().strip(".,!") in _NOT_A_PERSON for w in said):
        return False
    if re.search(r"\d", old):
        known = {w.lower() for w in old.split()}
        other = [w for w in said if not re.search(r"\d", w) and w.lower() not in known and not _UNIT_RE.match(w)]
        return bool(re.search(r"\d", new)) and not other and not re.match(r"(?:a|an|the)\b", new, re.I)
    if re.match(r"(?:a|an|the)\s", new, re.I) and not re.match(r"(?:a|an|the)\s", old, re.I):
        return False
    return not old[:1].isupper() or all(w[:1].isupper() for w in said)
