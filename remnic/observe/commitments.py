"""A commitment's state as a supersession key: "I'll send the report by Friday" keys
``ana-send-report`` / ``commitment`` = ``open``, and "I sent the report" (or "Done: sent the report")
keys the same thing ``fulfilled`` (the original's commitment states: open, fulfilled, cancelled,
expired), so the completion said later supersedes the open commitment: it leaves recall as current,
closed by the fact that says it was done.

Only an action on a named thing keys ("the report", "my taxes", "Marta"): "I'll do it" names nothing
that a later statement could be matched against.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .letters import wide
from .records import key_part

_SUBJECT = wide(
    r"(?P<subj>I|[Ww]e|(?!(?:The|This|That|These|Those|It|There|He|She|They|You|My|Our|Your)\b)[A-Z][a-z]+)"
)
_THING = wide(
    r"(?P<obj>(?:(?i:the|an?|my|our|your|his|her|their|this|that)\s+)?"
    r"(?:[a-z][\w-]*|[A-Z][\w-]*)(?:\s+[a-z][\w-]*){0,3}?)"
)
# What ends the thing: where it goes, for whom, when ("to Marta", "by Friday", "tomorrow").
_TAIL = (
    r"(?P<tail>\s+(?:to|for|with|at|on|by|before|until|in|tomorrow|tonight|today|later|next|this|first|asap|soon)"
    r"\b[^.!?]*)?"
)
# The complement that is part of the object ("for the billing service", "on iOS", "to Acme"), up to when it
# is due; a time after the preposition ("on Friday", "in an hour", "at noon") is when, not what.
_COMPLEMENT_RE = re.compile(
    r"^\s+(?P<prep>to|for|with|at|on|in)\s+(?P<what>[^,;:—–()]+?)(?=\s+(?:by|before|until|tomorrow|tonight|today"
    r"|later|next|this|asap|soon|first|on|at|in|and|but|so|because|since|as|when|if|or)\b|\s*(?:[,;:—–()]|-\s|$))"
)
_TIME_RE = re.compile(
    r"^(?:(?:the|this|next|a|an|\d+|one|two|three|a\s+few|a\s+couple\s+of)\s+)*(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|^(?:(?:the|this|next|a|an|\d+|one|two|three|a\s+few|a\s+couple\s+of)\s+)*(?:minutes?|hours?|days?|weeks?|months?"
    r"|morning|afternoon|evening|night|weekend|end\b|noon|midnight|time|moment|meantime|meanwhile)"
    r"|^\d|^(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|^(?:eod|eow|cob|asap)\b",
    re.I,
)
_PARTICLE = r"(?:\s+(?P<particle>up|off|out|over|down|back)(?=\s+(?!(?:for|to|with|on|at|in)\b)))?"
_OPEN_RE = re.compile(
    rf"^{_SUBJECT}\s*(?:will|'ll|’ll|(?:am|'m|’m|are|'re|’re|is)\s+going\s+to|promise\s+to|promised\s+to)\s+"
    rf"(?:(?:also|definitely|still|just|try\s+to)\s+)*(?P<verb>[a-z]+){_PARTICLE}\s+{_THING}{_TAIL}\s*[.!]?$"
)
_DONE_RE = re.compile(
    rf"^{_SUBJECT}\s*(?:(?:have|has|'ve|’ve|just|already|finally|also)\s+)*(?P<verb>[a-z]+){_PARTICLE}\s+"
    rf"{_THING}{_TAIL}\s*[.!]?$"
)
# "Done: sent the report." / "Finished — booked the venue.": a completion said without its subject.
_DONE_LEAD_RE = re.compile(r"^(?i:done|finished|completed)\s*(?::|-|–|—)\s*(?=[a-z]+ed\b|[a-z]+\b)")
_IRREGULAR = {
    "sent": "send",
    "wrote": "write",
    "paid": "pay",
    "made": "make",
    "bought": "buy",
    "gave": "give",
    "took": "take",
    "did": "do",
    "told": "tell",
    "got": "get",
    "brought": "bring",
    "built": "build",
    "met": "meet",
    "ran": "run",
    "left": "leave",
    "found": "find",
    "sold": "sell",
    "kept": "keep",
    "spoke": "speak",
    "drove": "drive",
    "flew": "fly",
    "taught": "teach",
    "caught": "catch",
    "chose": "choose",
    "drew": "draw",
    "rang": "ring",
    "sang": "sing",
    "won": "win",
    "lent": "lend",
    "shipped": "ship",
}


def _stem(verb: str) -> str:
    """One spelling for a verb's base and its past ("update"/"updated", "submit"/"submitted", "carry"/"carried")."""
    if verb.endswith("ied"):
        verb = verb[:-3] + "y"
    elif verb.endswith("ed"):
        verb = verb[:-2]
    verb = verb.rstrip("e")
    if len(verb) > 3 and verb[-1] == verb[-2] and verb[-1] not in "aeiou":
        verb = verb[:-1]
    return verb


_TASKS = frozenset(
    [
        "send",
        "submit",
        "file",
        "pay",
        "book",
        "email",
        "mail",
        "fix",
        "ship",
        "deploy",
        "review",
        "renew",
        "return",
        "order",
        "schedule",
        "cancel",
        "deliver",
        "publish",
        "merge",
        "upload",
        "finish",
        "complete",
        "sign",
        "rotate",
        "migrate",
        "update",
        "write",
        "draft",
        "share",
        "invoice",
        "refund",
        "reply",
        "approve",
        "prepare",
        "install",
        "configure",
        "resolve",
        "release",
        "document",
    ]
)
"""Verbs of a task someone commits to and later reports done: "I made a bowl", "I ran a race" are moments."""
_TASK_STEMS = frozenset(_stem(verb) for verb in _TASKS)
_PHRASAL_TASKS = frozenset(
    (_stem(verb), particle)
    for verb, particle in (
        p.split()
        for p in (
            "set up",
            "sign off",
            "roll out",
            "write up",
            "clean up",
            "wrap up",
            "fill out",
            "send out",
            "hand over",
            "spin up",
            "tear down",
            "shut down",
            "back up",
            "sort out",
            "pay off",
            "print out",
        )
    )
)
"""Two-word tasks ("Marco will set up the payments sandbox" / "Marco set up the payments sandbox"); "signed
up for a class" or "made up a story" are none."""
# Pasts spelt as their base, read as a past only before their particle ("set up", not "I set the table").
_SAME_PAST = {"set": "set", "shut": "shut", "tore": "tear", "spun": "spin"}
_NOT_THINGS = frozenset(
    [
        "it",
        "that",
        "this",
        "them",
        "him",
        "her",
        "you",
        "me",
        "us",
        "there",
        "here",
        "something",
        "anything",
        "everything",
        # a particle: "signed up for a class", "finished up my writing" is another verb than the task's
        "up",
        "out",
        "off",
        "in",
        "on",
        "over",
        "down",
        "back",
        "for",
        "to",
        "into",
        "with",
    ]
)


def completion_said(sentence: str) -> str:
    """ "Done: sent the report." as the first-person statement it is ("I sent the report."); any other
    sentence as it is."""
    lead = _DONE_LEAD_RE.match(sentence)
    if lead is None:
        return sentence
    rest = sentence[lead.end() :]
    verb = rest.split(None, 1)[0] if rest.split() else ""
    return f"I {rest}" if verb in _IRREGULAR or verb in _SAME_PAST or verb.endswith("ed") else sentence


def commitment_key(sentence: str, speaker: str) -> tuple[str | None, Mapping[str, str]]:
    """``(entityRef, {"commitment": "open" | "fulfilled"})`` for a commitment to act on a named thing or
    the statement that it was done; ``(None, {})`` otherwise. ``speaker``: whom "I" is."""
    text = completion_said(sentence.strip())
    state, match = "open", _OPEN_RE.match(text)
    if match is None:
        state, match = "fulfilled", _DONE_RE.match(text)
        if match is None:
            return None, {}
        past, particle = match.group("verb"), match.group("particle")
        same = _SAME_PAST.get(past) if particle else None
        if past not in _IRREGULAR and not past.endswith("ed") and same is None:
            return None, {}
        verb = same or _IRREGULAR.get(past, past)
    else:
        verb = match.group("verb")
    particle = match.group("particle")
    obj = re.sub(r"^(?i:the|an?|my|our|your|his|her|their|this|that)\s+", "", match.group("obj"))
    # A regular past ("fixed", "migrated", "submitted") is checked as its stem, as every task's is.
    task = (_stem(verb), particle) in _PHRASAL_TASKS if particle else _stem(verb) in _TASK_STEMS
    if not task or obj.split()[0].lower() in _NOT_THINGS:
        return None, {}
    subject = match.group("subj")
    who = (speaker or "I") if subject == "I" else subject.lower() if subject.lower() == "we" else subject
    return key_part(f"{who} {_stem(verb)} {particle or ''} {obj} {_complement(match.group('tail'))}"), {
        "commitment": state
    }


def _complement(tail: str | None) -> str:
    """What follows the object and belongs to it ("for the billing service", "to Acme"), without the
    determiners; "" for a tail that only says when ("by Friday", "on Monday", "tomorrow")."""
    found = _COMPLEMENT_RE.match(tail or "")
    if found is None or _TIME_RE.match(found.group("what")) or len(found.group("what").split()) > 5:
        return ""
    if found.group("what").lower() in _NOT_THINGS:  # "with you", "to them": who, said any way
        return ""
    what = re.sub(r"\b(?i:the|an?|my|our|your|his|her|their)\s+", "", found.group("what"))
    return f"{found.group('prep')} {what}"
