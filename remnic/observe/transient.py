"""What makes a sentence transient (the judge's markers: work in progress, ephemeral state, debugging
detail, routine operations, steps of a one-time task, leaving, status chatter, a one-day absence), and
the chatter a sentence opens with before it states something of its own ("Brb, the staging DB port is
5433.", "Still flaky, but the CI runners are ARM machines.", "Rerunning the pipeline, our release
manager is Ewa now."): the statement is read without it, so the chatter neither rejects it nor stays
in its words."""

from __future__ import annotations

import re

from .letters import CAPITAL, SMALL

WORK_IN_PROGRESS = "Work in progress, stale within hours"
LEAVING = "Leaving the conversation"
DEBUGGING_DETAIL = "Debugging detail"
STATUS_CHATTER = "Status of the task at hand, said in passing"
ONE_DAY_ABSENCE = "A one-day absence, over by the next day"
EPHEMERAL_STATE = "Ephemeral state"
ROUTINE_OPERATION = "Routine operation"
# The rest of a sentence that said nothing more: a few words of the same clause ("… the job again now").
_ONLY_REST = r"(?![^,;:]*\b(?:since|because|so|and|but|while|as|after)\b)[^,;:—–]{0,30}$"
TRANSIENT: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (reason, re.compile(pattern, re.I))
    for reason, pattern in (
        (
            WORK_IN_PROGRESS,
            r"\b(currently|right now|at the moment|for now|just now|in progress|wip|so far|for the time being"
            r"|still (failing|broken|running|waiting|loading|building|investigating))\b",
        ),
        (
            EPHEMERAL_STATE,
            r"\b(is|are|was|were|keeps?) (running|building|failing|passing|broken|down|loading|stuck|hanging"
            r"|deploying|compiling|timing out|crashing|red|green)\b|\b(is|are) (now )?(ready for review|ready to merge"
            r"|merged|done|fixed|deployed|green|up for review)\b",
        ),
        (
            # "I will be offline for an hour", "I'm away this afternoon": where someone is for a while — not
            # a habit ("I'm always offline for an hour after lunch", "… every day at noon").
            EPHEMERAL_STATE,
            r"^(?!.*\b(always|usually|normally|typically|generally|often|every|each|daily|weekdays|most days"
            r"|on (mon|tues|wednes|thurs|fri|satur|sun)days)\b)"
            r".*\b(offline|away|afk|unavailable|unreachable|out of (the )?office|ooo|in a meeting)\s+(for\s+(an?|\d+"
            r"|a few|a couple of|the next)\s+(hours?|minutes?|mins?|while|bit)|(this|for the) (morning|afternoon"
            r"|evening|rest of the day)|today|tonight)\b",
        ),
        (
            DEBUGGING_DETAIL,
            r"\b(line \d+|stack ?trace|traceback|segfault|null pointer|undefined is not|errno|exit code|flaky|flakes?"
            r"|repro|reproduces?|breakpoint|debugging|the (test|tests|build|ci|pipeline|job) (fails?|failed|passes"
            r"|passed|is red|is green|timed out|times out)|fails? (on|in) ci|failing test|stub|fixture|race condition"
            r"|off-by-one|typo|hotfix|bisect|(?<!\bI )(?<!\bwe )failed|refused|crashed|timed out|connection reset)\b",
        ),
        (
            ROUTINE_OPERATION,
            r"\b(ran|run|reran|re-ran|installed|rebuilt|restarted|pushed|pulled|committed|merged|rebased|checked out)"
            r" (npm|pip|make|pytest|the tests?|it|the build|the server|git|yarn|pnpm|cargo|docker|the migration)\b",
        ),
        (
            "Step of a one-time task",
            r"\b(this (pr|branch|commit|ticket|task|session|diff|patch|function|file|test|error)"
            r"|the (pr|diff|patch|ticket) (is|was|has))\b",
        ),
        (
            LEAVING,
            r"\b(off to|heading (out|off)|gotta go|brb|be right back|signing off|logging off)\b",
        ),
        (
            # "retrying the job", "the tests pass locally", "looks like a network blip": how a task at hand
            # is going, said in passing.
            STATUS_CHATTER,
            # Only when that is all the sentence says: "Retrying the job, the build cache lives in …" states
            # a fact after it.
            r"^(?:(?:i'?m|i am|we'?re|we are|just|ok(?:ay)?,?|so,?)\s+)*(?:(?:retrying|re-?running|re-?starting"
            r"|rebooting|re-?deploying|re-?triggering|kicking off) (?:the |it\b|again\b|now\b)"
            r"|(?:the )?(?:tests?|builds?|it|everything|ci) (?:pass(?:es)?|work(?:s)?|fail(?:s)?|(?:is )?green"
            r"|(?:is )?red) (?:locally|on my (?:machine|laptop|box)|for me)\b"
            r"|(?:it |this |that )?looks like (?:a|an|some) (?:\w+ )?(?:blip|glitch|hiccup|flake|fluke)\b)"
            rf"{_ONLY_REST}",
        ),
        (
            # "I'm out tomorrow afternoon", "Ana is off on Friday": a one-day absence is over within a day
            # (not a habit: "I'm out every Friday afternoon"), said as the whole sentence: "I'm off on Friday
            # for my wedding" says more.
            ONE_DAY_ABSENCE,
            r"^(?:(?:fyi|heads up|btw|just so you know)[,:]?\s+)?"
            rf"(?:i'?m|i am|i'?ll be|i will be|we'?re|we are|he'?s|she'?s|they'?re|(?-i:{CAPITAL}{SMALL}+) (?:is|will be))"
            r" (?:out|off|away|offline|afk|ooo|out of (?:the )?office|on leave|off sick|out sick|unavailable)"
            r" (?:on |this |next )?(?:today|tomorrow|tonight|morning|afternoon|evening|monday|tuesday|wednesday|thursday|friday|saturday"
            r"|sunday)(?: (?:morning|afternoon|evening))?(?: (?:too|again|as well))?\s*[.!]*$",
        ),
    )
)


def transient_reasons(text: str) -> list[str]:
    """Each transient marker's reason found in ``text``, in the table's order."""
    return [reason for reason, pattern in TRANSIENT if pattern.search(text)]


# Chatter said before a statement: the task at hand or the speaker's leaving. Never what qualifies the
# statement ("For now, …" holds it to now; "In this PR, …" is a step) or what the statement may explain
# ("Ben is away on Friday, his sister is getting married": an absence, a state of things).
_CHATTER = frozenset({LEAVING, DEBUGGING_DETAIL, STATUS_CHATTER, ROUTINE_OPERATION})
# The statement after it names its subject ("the CI runners are …", "we deploy …", "Ben owns …"); one that
# goes on with the chatter's subject ("The tests pass locally but fail on CI") is the chatter's.
_SUBJECT_RE = re.compile(
    rf"^(?:(?i:i|we|you|he|she|they|it|there|the|our|my|your|their|his|her|its|this|these|those)\b|{CAPITAL})"
)
# A short opening clause, then a comma, a semicolon or a dash ("but" too), then the rest. Not a colon: a
# lead-in ("Debugging notes: …") says what the rest is.
_OPENING_RE = re.compile(
    r"^(?P<head>[^,;:—–()\"“]{2,60}?)(?:\s*[,;]|\s+[—–-]|\s*[—–])\s*(?:(?:but|anyway|though)\b,?\s*)?"
    r"(?P<rest>\S.*)$|^(?P<head2>[^,;:—–()\"“]{2,60}?)\s+but\s+(?P<rest2>\S.*)$",
    re.I,
)
# A head that conditions the rest ("When it's flaky, we retry", "If the build is red, …"), and a rest that
# follows from the head ("…, so we deploy on Fridays"): one statement, not chatter beside another.
_CONDITION_RE = re.compile(
    r"^(?:if|when|whenever|while|until|unless|since|because|as|after|before|once|for|during|in|on|at|with"
    r"|without|from|by|so|and|or|then|which|that|otherwise|therefore|hence|thus|except)\b",
    re.I,
)
_MAX_HEAD_WORDS = 6


def after_chatter(sentence: str) -> str | None:
    """The statement after a short opening of transient chatter ("Brb, the staging DB port is 5433." →
    "The staging DB port is 5433."), or None when the sentence opens with none. Whether that statement is a
    fact is the caller's to decide."""
    match = _OPENING_RE.match(sentence.strip())
    if match is None:
        return None
    head, rest = match.group("head") or match.group("head2"), match.group("rest") or match.group("rest2")
    if len(head.split()) > _MAX_HEAD_WORDS or _CONDITION_RE.match(head) or _CONDITION_RE.match(rest):
        return None
    if not _CHATTER.intersection(transient_reasons(head)) or len(rest.split()) < 3 or not _SUBJECT_RE.match(rest):
        return None
    return rest[:1].upper() + rest[1:]
