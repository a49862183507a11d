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
from .normalize import strip_markers
from .records import Importance, JudgeVerdict
from .secrets import SECRET_REASON, holds_secret
from .transient import DEBUGGING_DETAIL, LEAVING, TRANSIENT, WORK_IN_PROGRESS

AUTO_APPROVED_CATEGORIES = ("correction", "principle")
_SPEAKER_DOING_RE = re.compile(r"^(?:I'm|I am|I've|I have)\b")
SPEAKER_DOING = "What the speaker is doing these days (dated by when it was said)"
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
