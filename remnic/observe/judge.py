"""The deterministic extraction judge: durable or transient → accept, reject or defer, with a reason.

The reference system asks a model whether a candidate will still be useful 30+ days from now and
across sessions; these rules implement its rubric. In order, after a credential (rejected) and a fact
whose speaker is in doubt (deferred whatever else it is: ``Candidate.doubt``):

1. corrections and principles are accepted without judging (as in the reference system), except a
   correction whose bare pronoun subject names nothing ("Actually, it is MySQL now."), which defers;
2. critical importance is accepted;
3. transient markers reject: work in progress (a person's own "I'm currently reading …" or "I'm off
   to do …" is accepted: what they are doing these days may last — not the task at hand, "I'm
   currently running the migration", nor an errand, "I'm off to lunch"), ephemeral state, debugging detail
   (not in a person's own stated preference about it: "I hate flaky tests"), routine operations, steps of a
   one-time task, someone leaving the conversation, status chatter ("retrying the job", "the tests pass
   locally"), a one-day absence ("I'm out tomorrow afternoon": over by the next day, so never stored);
4. unclear durability defers: a bare pronoun subject naming nothing (the referent is in another
   turn), a plan or commitment with no date, a hedged statement;
5. everything else is accepted as a durable fact of its category.

Deferred facts are proposed as ``pending_review`` memories; rejected ones are only logged.
"""

from __future__ import annotations

import re

from . import cues
from .extract import Candidate, leans_on_context, names_nothing
from .letters import CAPITAL, SMALL
from .normalize import strip_markers
from .records import Importance, JudgeVerdict
from .secrets import SECRET_REASON, holds_secret

AUTO_APPROVED_CATEGORIES = ("correction", "principle")
WORK_IN_PROGRESS = "Work in progress, stale within hours"
_SPEAKER_DOING_RE = re.compile(r"^(?:I'm|I am|I've|I have)\b")
LEAVING = "Leaving the conversation"
DEBUGGING_DETAIL = "Debugging detail"
SPEAKER_DOING = "What the speaker is doing these days (dated by when it was said)"
STATUS_CHATTER = "Status of the task at hand, said in passing"
ONE_DAY_ABSENCE = "A one-day absence, over by the next day"
# "I'm off to do some taekwondo", "I'm off to go swimming": leaving, but saying what they do — not an
# errand ("I'm off to lunch", "off to grab a coffee", "off to the standup").
_OFF_TO_DO_RE = re.compile(r"^(?:I'm|I am) off to (?:do|go|play|practi[cs]e|train)\b")
# What a person does these days lasts; the task at hand does not ("I'm currently running the
# migration", "refactoring the auth module", "waiting for the build").
_TASK_AT_HAND_RE = re.compile(
    r"\b(?:running|fixing|debugging|refactoring|deploying|migrating|building|compiling|installing|committing"
    r"|pushing|merging|rebasing|reverting|waiting|reviewing|investigating|implementing|testing)\b",
    re.I,
)
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
            "Ephemeral state",
            r"\b(is|are|was|were|keeps?) (running|building|failing|passing|broken|down|loading|stuck|hanging"
            r"|deploying|compiling|timing out|crashing|red|green)\b|\b(is|are) (now )?(ready for review|ready to merge"
            r"|merged|done|fixed|deployed|green|up for review)\b",
        ),
        (
            # "I will be offline for an hour", "I'm away this afternoon": where someone is for a while — not
            # a habit ("I'm always offline for an hour after lunch", "… every day at noon").
            "Ephemeral state",
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
            "Routine operation",
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
AMBIGUOUS_REFERENT = "Ambiguous referent: the subject is named in another turn"
# A person's own stated preference ("I hate flaky tests", "I prefer fixing flaky tests before adding
# features", "I dislike debugging in production") lasts whatever it is about: debugging as its topic is
# no debugging at hand. Not one that reports what just happened ("I hate that the build failed again").
_OWN_PREFERENCE_CUES = frozenset({"stated preference", "fan of", "favourite"})
_DEBUG_EVENT_RE = re.compile(
    r"\b(line \d+|errno|exit code|undefined is not|reproduces?|(fails?|failed|failing|passe[sd]|timed out|times out"
    r"|crashed|crashes|refused|is red|is green)\b|connection reset)",
    re.I,
)


def judge_candidate(candidate: Candidate, importance: Importance, *, enabled: bool = True) -> JudgeVerdict:
    """The verdict on one candidate (pure; the same candidate always gets the same verdict)."""
    category = candidate.fact.category
    if holds_secret(candidate.sentence):  # whatever the settings: a credential is never written
        return JudgeVerdict("reject", SECRET_REASON)
    if candidate.doubt:
        # Whose words they are is in doubt (a bare "Hi, I'm Megan." with a configured user): a person's
        # words stored as another's are false whatever is judged of them, so not even a correction passes.
        return JudgeVerdict("defer", candidate.doubt)
    if not enabled:
        return JudgeVerdict("accept", "Judge disabled (observe.judge is off)", "disabled")
    if category == "correction" and names_nothing(candidate.sentence) and not candidate.asked:
        # "Actually, it is 5434 now." names nothing it corrects (one resolved against the turn before
        # comes here with its subject): accepted as it is, it would replace nothing and mean nothing.
        return JudgeVerdict("defer", AMBIGUOUS_REFERENT)
    if category in AUTO_APPROVED_CATEGORIES:
        return JudgeVerdict("accept", f"Auto-approved: {category} category bypasses judge", "auto-approve")
    if importance.level == "critical":
        return JudgeVerdict("accept", "Auto-approved: critical importance", "auto-approve")
    said = candidate.sentence
    transient = [reason for reason, pattern in TRANSIENT if pattern.search(said)]
    own = strip_markers(said) if candidate.turn.role == "user" else ""
    if (transient == [WORK_IN_PROGRESS] and _SPEAKER_DOING_RE.match(own) and not _TASK_AT_HAND_RE.search(own)) or (
        transient == [LEAVING] and _OFF_TO_DO_RE.match(own)
    ):
        # "I'm currently reading The Name of the Wind", "I'm off to do some taekwondo": what a person is
        # doing may last.
        return JudgeVerdict("accept", SPEAKER_DOING)
    if (
        DEBUGGING_DETAIL in transient
        and category == "preference"
        and candidate.cue in _OWN_PREFERENCE_CUES
        and not _DEBUG_EVENT_RE.search(said)
    ):
        transient.remove(DEBUGGING_DETAIL)  # debugging is what the preference is about, not what is going on
    if transient:
        return JudgeVerdict("reject", transient[0])
    if leans_on_context(said) and not candidate.asked:  # an answer that carries its question names its subject
        return JudgeVerdict("defer", AMBIGUOUS_REFERENT)
    if category == "commitment" and not candidate.dates and not cues.TIME_RE.search(said):
        return JudgeVerdict("defer", "Plan or commitment with no date")
    if candidate.hedged:
        return JudgeVerdict("defer", "Hedged: the speaker is not sure")
    return JudgeVerdict("accept", f"Durable {category.replace('_', ' ')} ({candidate.cue})")
