"""The cue tables: what makes a sentence noise, and what makes it a durable fact of which category.

Every table is a tuple of (name, pattern) so the extractor can say which cue fired. Patterns match
the speaker's own sentence (before it is rewritten to stand alone), case-insensitively.
"""

from __future__ import annotations

import re

from .letters import CAPITAL, wide, wide_re
from .team_cues import MEMBERSHIP_RE, RESPONSIBILITY_RE


def words(text: str) -> frozenset[str]:
    """A word list written as one string."""
    return frozenset(text.split())


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


# --- noise: a sentence matching one of these is never a fact ---

_GREETING = (
    r"(hi|hello|hey|heya|hiya|yo|sup|greetings|good (morning|afternoon|evening|night)|morning|evening"
    r"|(it'?s )?(good|great|nice|so good) to (see|hear from|meet|talk to) you( again| too)?|nice to meet you"
    r"|long time no (see|talk)|how are you( doing)?|how have you been|how'?s it going|what'?s up|welcome back"
    # wishes said to someone ("Happy birthday Ama!", "happy birthday to her"): a greeting, not their birthday
    r"|(happy|merry) (birthday|anniversary|new year|holidays|christmas|thanksgiving|easter|hanukkah|diwali|eid)"
    r"( to (you|her|him|them|you both|you all|the two of you))?)"
)
_ACK = (
    r"(ok|okay|k|kk|sure|yes|yeah|yep|yup|no|nope|nah|right|exactly|totally|absolutely|agreed|indeed|true"
    r"|got it|gotcha|makes sense|sounds (good|great|fun|amazing|like a plan|awesome|lovely)|perfect|great|awesome"
    r"|cool|nice|neat|wow|whoa|oh|ah|aw+|haha|hahaha|lol|lmao|omg|yay|hmm+|uh|um|noted|understood|roger|copy"
    r"|will do|done|lgtm|ship it|no problem|np|no worries|you'?re welcome|of course|for sure|same here|me too"
    r"|good (idea|point|catch|question|call|luck|job|work)|well done|congrats|congratulations|amazing|wonderful"
    r"|fantastic|incredible|brilliant|excellent|lovely|beautiful|sweet|fair enough|thanks?( a lot| so much)?"
    r"|i (totally |completely |fully |100% |so |really |absolutely )?(agree|get it|know|understand|hear you|see)( with you)?"
    r"|same|same here|i know,? right|you bet|bless you|good for you|glad to hear( that| it)?|happy for you"
    r"|thank you( so much| very much)?|thx|ty|cheers|much appreciated|appreciate it|i appreciate (it|that)"
    r"|(that|this|it)( is|'s)( (so|really|very|super|pretty))? (great|awesome|cool|amazing|wonderful|fantastic"
    r"|interesting|true|right|fair|good|nice|sweet|exciting|impressive|inspiring|lovely|beautiful|fun|incredible"
    r"|brilliant|perfect|huge|awesome news|great news|good news))"
)
_FAREWELL = (
    r"(bye|goodbye|bye bye|see (you|ya)( (soon|later|tomorrow))?|talk (to you )?(soon|later)|ttyl|take care"
    r"|have a (good|great|nice|lovely) (day|one|night|evening|weekend|time)|catch you later|later|good night)"
)
_VOCATIVE = wide(r"(,?\s+(?-i:[A-Z][a-z]+))?")
FILLER_RE = re.compile(
    rf"^\s*((({_GREETING}|{_ACK}|{_FAREWELL}){_VOCATIVE})[\s,.!?:;)(-]*)+$",
    re.I,
)
QUESTION_RE = _rx(r"\?[\s\"')\]]*$")
# Exclamations and compliments aimed at the other speaker: never facts about anyone.
EXCLAMATION_RE = _rx(r"^(wow|oh|aw+|haha|omg|yay|whoa|congrats|congratulations|ooh|ahh?)\b")
# "I've been great, busy but great": the answer to "how are you".
SMALL_TALK_RE = _rx(
    r"^(i've been|i'm|i am|doing|been|all|things are|everything's|everything is)\s+(so\s+|really\s+|pretty\s+|very\s+)?"
    r"(great|good|well|fine|ok|okay|alright|busy|swamped|hectic|crazy)"
    r"(\s*([,.!;-]|$)|\s+(but|thanks|thank you|and you|too|overall|lately|recently|as usual)\b)"
)
# Thanks and show-and-tell ("here's a pic", "take a look"): about the conversation, not the world.
CONVERSATIONAL_RE = _rx(
    r"^(thanks|thank you|thx|ty|cheers|here'?s|here is|here are|look at (this|that)|check (this|it|that) out"
    r"|take a look|see (this|attached)|attached is)\b"
)
# Show-and-tell of the speaker's own things: "Here's a pic of my family camping", "Here are the bowls I made",
# "Check out this piece I made!".
SHOW_OWN_RE = _rx(r"^(here'?s|here is|here are|check out)\b(?=.*\b(my|our|i|we|mine|ours)\b)")
# Showing a work artifact ("Here's a screenshot of our dashboard.", "Here are the logs from our CI run"):
# what it shows is in the picture or the paste, not in the words, so "The user shares a screenshot …"
# would say nothing lasting.
SHOWN_WORK_RE = _rx(
    r"^(here'?s|here is|here are|check out|attached is|see attached)\s+(?:(?:a|an|the|my|our|this|that|some)\s+)?"
    r"(?:(?:quick|full|latest|new|recent|partial)\s+)?(?:screenshots?|screen ?(?:shots?|grabs?|caps?|recordings?)"
    r"|captures?|logs?|outputs?|errors?|(?:stack ?)?traces?|tracebacks?|diffs?|patch(?:es)?|snippets?|dumps?"
    r"|config(?:uration)?s?|links?|files?|gifs?|recordings?|videos?)\b"
)
# The listener, anywhere in the sentence.
LISTENER_RE = _rx(r"\b(you|your|you'?re|you'?ve|you'd|you'?ll|yours|yourself)\b")
SECOND_PERSON_RE = _rx(r"^(you|your|you'?re|you'?ve|you'd|you'?ll|yours)\b")
FIRST_PERSON_RE = _rx(r"\b(i|i'?m|i'?ve|i'd|i'll|me|my|mine|myself|we|we're|we'?ve|we'll|our|ours|us|let's)\b")
# Who one is, said in three words ("I'm a nurse.", "I am an engineer.", "I'm vegetarian.", "I'm
# Brazilian."): short, but not small talk. A bare adjective only from a list of lasting traits or as a
# nationality's shape, so a passing state ("I'm tired.", "I'm done.", "I'm back.") is not one.
IDENTITY_TRAITS = (
    "vegetarian|vegan|pescatarian|diabetic|celiac|coeliac|epileptic|asthmatic|autistic|dyslexic|deaf|blind"
    "|colou?r-?blind|left-handed|right-handed|ambidextrous|bilingual|trilingual|multilingual|married|single"
    "|divorced|widowed|engaged|retired|pregnant|sober|gay|lesbian|bisexual|queer|transgender|trans|non-?binary"
    "|introverted|extroverted|an introvert|an extrovert|religious|atheist|agnostic|christian|catholic|muslim|jewish"
    "|hindu|buddhist|lactose[- ]intolerant|gluten[- ]intolerant|allergic to \\w+|self-employed|unemployed"
    "|freelance|half[- ][A-Za-z]+"
)
SHORT_IDENTITY_RE = re.compile(
    rf"^(?i:i am|i'm|i’m) (?:(?i:a|an) [a-z][a-z-]+|(?i:{IDENTITY_TRAITS})"
    r"|[A-Z][a-z]+(?:ian|an|ese|ish|i|ch|ic))[.!]?$"
)
# A named person's lasting trait, said by someone else ("Ana doesn't eat pork.", "Priya never drinks coffee.",
# "Ben is allergic to peanuts.", "Kofi is vegetarian."): no cue, no number, yet what a lunch order or an
# offsite needs. Only these: "Ana doesn't know yet" or "Ben won't come" say what holds today, and so do
# "won't" (a refusal), "yet", a time and a particular thing ("Ana won't eat the leftovers", "Ana can't
# drive us to the airport on Friday"). The name must be a person's (``plan_observations`` knows whose):
# "Waymo doesn't drive in snow" is a product's.
_TRAIT_VERBS = r"eat|drink|smoke|drive|fly|swim|cook|ride|eat meat|drink alcohol|do alcohol"
_ONE_OFF = (
    r"yet|today|tonight|tomorrow|yesterday|now|right now|at the moment|anymore|this|that|these|those|next|again"
    r"|for now|the|us|me|him|her|them|to|until|till|in the week|on \d|in (?:January|February|March|April|May|June"
    r"|July|August|September|October|November|December)|for (?:a|the|two|three|\d)"
)
NAMED_TRAIT_RE = wide_re(
    r"^(?!(?:The|Our|My|Your|This|That|These|Those|It|He|She|They|We|There|Here|What|Who|Any|Some|Every|No|Yes"
    r"|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)(?P<name>[A-Z][a-z]+)(?: [A-Z][a-z]+)?\s+"
    rf"(?:(?:doesn't|doesn’t|does not|never|no longer|can't|can’t|cannot)\s+(?:{_TRAIT_VERBS})s?\b"
    rf"|(?:is|'s|’s)\s+(?:(?i:allergic to \w+|{IDENTITY_TRAITS})\b))"
    rf"(?!.*\b(?i:{_ONE_OFF})\b)"
)
# A name said as a person's: "my colleague Ana", "Ana and I", "Ana said", "Ben told me" — whose trait
# "Ana doesn't eat pork" may be (with the speakers' own names).
_PERSON_NOUNS = (
    r"wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|brother|sister|mother|father|mom|mum|dad|son"
    r"|daughter|friend|colleague|coworker|co-worker|teammate|boss|manager|lead|roommate|neighbou?r|cousin|aunt"
    r"|uncle|grandma|grandpa|grandmother|grandfather|kid|child|baby|niece|nephew|doctor|dentist|intern|guest"
)
PERSON_NAMED_RE = wide_re(
    rf"\b(?i:my|our|his|her|their)\s+(?i:{_PERSON_NOUNS})s?,?\s+(?P<a>[A-Z][a-z]+)"
    r"|\b(?P<b>[A-Z][a-z]+)\s+and\s+(?:I|me)\b|\b(?:I|me)\s+and\s+(?P<c>[A-Z][a-z]+)"
    r"|\b(?P<d>[A-Z][a-z]+)\s+(?:said|says|told|tells|thinks|asked|mentioned|texted|called)\b"
    r"|\b(?P<e>[A-Z][a-z]+)(?:'s|’s)\s+(?i:wife|husband|partner|kids?|children|son|daughter|birthday|mom|dad|mother|father)\b"
)


def people_named(text: str) -> set[str]:
    """Names ``text`` says are people's ("my colleague Ana", "Ben and I", "Kofi said")."""
    return {n for m in PERSON_NAMED_RE.finditer(text) for n in m.groupdict().values() if n and n != "I"}


# Who a person says they are when introducing themselves, taken only on strong evidence of a name: a
# naming phrase ("My name is Jonas", "Call me Jonas", "This is Jonas from support" or "… speaking"), or
# "I'm X from/at/with" a capitalised organisation ("Hi, I am Jonas from Acme Logistics"). A bare "I'm X"
# ("Hi, I'm Megan.", "I'm Greek and I love feta") may be a name or what the person is, and no list of
# either is complete: it names no one and says nothing certain (see ``bare_introduction``). No name's
# shape says nationality ("Eric", "Naomi", "Brian" from Acme are names), so the rare "I'm Italian from
# Milan" names "Italian".
_NOT_NAMES = words("""Here Back Sorry Not So Sure Fine Good Great Okay Done Ready Glad Happy Free Busy Home Out Off
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday""")
_INTRO_NAME = wide(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?")
INTRODUCTION_RE = wide_re(
    r"^(?P<greeting>(?i:hi|hello|hey|hiya|good (?:morning|afternoon|evening))(?i: there| all| everyone| team)?"
    r"[\s,!.—–-]+)?"
    rf"(?:(?:I'm|I’m|I am)\s+(?P<name>{_INTRO_NAME})"
    r"(?:(?P<place>\s+(?:from|at|with)\s+(?:(?:the|our)\s+)?[A-Z])"
    r"|(?=\s*(?:[,.!;:—–-]|$)|\s+(?:from|at|with|and|here)\b))"
    rf"|(?i:this is)\s+(?P<this>{_INTRO_NAME})(?=\s+(?:from|speaking|calling|here)\b|\s+(?:at|with)\s+[A-Z])"
    rf"|(?i:my name is|my name's|the name's|call me|you can call me)\s+(?P<called>{_INTRO_NAME})\b)"
)


def _introduction(text: str) -> tuple[str | None, bool]:
    """The name ``text`` opens by introducing its speaker with on strong evidence, and whether it opens
    with an "I'm X" that may or may not be a name (then no name)."""
    match = INTRODUCTION_RE.match(text.lstrip()[:200])
    if not match:
        return None, False
    name = match.group("name") or match.group("this") or match.group("called")
    first = name.split()[0]
    if first in _NOT_NAMES:
        return None, False
    if not match.group("name") or match.group("place") is not None:
        return name, False
    return None, True


def introduced_name(text: str) -> str | None:
    """The name a turn opens by introducing its speaker with ("Hi, I am Jonas from Acme" → "Jonas"), or None."""
    return _introduction(text)[0]


def bare_introduction(sentence: str, user_name: str) -> str | None:
    """The X of an "I'm X" ``sentence`` opens with that may be a name or what the speaker is ("Hi, I'm
    Megan.", "I'm Greek and I love feta"), or None — also when it is ``user_name`` introducing themselves."""
    if not _introduction(sentence)[1]:
        return None
    match = INTRODUCTION_RE.match(sentence.lstrip()[:200])
    if match is None or match.group("name").lower() == user_name.lower():
        return None
    return str(match.group("name"))


FIRST_PERSON_SINGULAR_RE = re.compile(r"\b(I|I'm|I've|I'd|I'll|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b")
FIRST_PERSON_PLURAL_RE = _rx(r"\b(we|we're|we've|we'll|we'd|us|our|ours|ourselves|let's)\b")
# Encouragement and general remarks about "us" ("We can make a difference together!", "Let's keep going!"):
# "we can" (not "we can't"), and "let's" before anything but a choice ("let's use pnpm", "let's keep the
# old API" are decisions; "let's keep going", "let's keep it up" are not).
GENERAL_REMARK_RE = _rx(
    r"\bwe can(?!'t|not)\b|^let's\s+(?!(go with|use|switch|adopt|move|stick|standardi[sz]e|migrate|pick|choose|drop"
    r"|keep\s+(?!\w+in[g']|each other|it up|it going|at it|on\b)))"
)
# A truth about "us" in general: "us" or "ourselves" with no "we" doing anything ("Music brings us
# together", "Challenges help us grow", "Taking time for ourselves is vital").
US_IN_GENERAL_RE = _rx(r"\b(us|ourselves)\b")
WE_SUBJECT_RE = _rx(r"\b(we|we're|we've|we'll|we'd|let's)\b")
# A past event ("was", "went", "-ed"): something that happened, not a remark.
PAST_TENSE_RE = _rx(r"\b(was|were|had|did|went|got|made|took|saw|met|came|gave|\w+ed)\b")
# Requests to the assistant: an imperative about the task at hand.
TASK_VERBS = (
    "fix|add|run|check|show|make|update|remove|delete|create|write|plan|explain|tell|give|find|look|help|try|change"
    "|rename|move|refactor|implement|debug|investigate|open|read|print|list|build|test|install|commit|push|revert"
    "|undo|rerun|retry|continue|go ahead|summari[sz]e|draft|generate|convert|set up|setup|start|stop|restart|clean"
    "|search|grep|review|compare|describe|design|ping|call|email|send|ask|remind|let me know|split|keep|merge|ship"
    r"|deploy|bump|drop|skip|wire|hook up|port|profile|measure|benchmark|document|mock|stub|pin|loop (?:\w+ )?in"
    # putting the conversation off ("Let's circle back tomorrow"): about this conversation, not the world
    "|circle back|touch base|regroup|reconvene|sync up"
)
TASK_REQUEST_RE = _rx(
    rf"^((not yet|first|then|now|next|just|also|instead)[,\s]+)*(please\s+)?(let's\s+)?"
    rf"(can you|could you|would you|will you|{TASK_VERBS})\b"
)
# A request or question put as a statement ("I'd like you to add retries", "I was wondering if you
# could …", "What I'm asking is whether …"): about the conversation, not the world.
ASKING_RE = _rx(
    r"^(i'?d like you to|i would like you to|i want you to|i need you to|i'?d love (it )?if you|i'?d appreciate (it )?if you"
    r"|i was wondering (if|whether)|i'?m wondering (if|whether)|i wonder (if|whether)|what i'?m asking|i'?m asking"
    r"|my question is|the question is|i'?m trying to (figure out|understand|work out)|i'?d like to know|i want to know)\b"
)
# The speaker's own debugging status ("I'm getting a 502 from the gateway", "I see the same error on my
# machine", "I just pasted the error above"): true for minutes.
DEBUG_STATUS_RE = _rx(
    r"^i('m|\s+am)?\s+(also\s+|still\s+|now\s+|just\s+|keep\s+)*(get|getting|got|see|seeing|saw|hit|hitting|running into|ran into)\s+"
    r"(the\s+same\s+|a\s+|an\s+|the\s+|this\s+|that\s+|same\s+|another\s+)?([\w./-]+\s+){0,2}?"
    r"(\d{3}|error|errors|exception|warning|warnings|crash|failure|timeout|segfault|traceback|stack ?trace|bug|issue|problem)\b"
    r"|^i\s+(just\s+|also\s+)?(pasted|attached|posted|copied|included|dropped)\b"
    # "I'm getting this on every run", "I keep hitting it in CI": the error pasted before, named as "this"
    r"|^i('m|\s+am)?\s+(also\s+|still\s+|now\s+|just\s+|keep\s+)*(getting|seeing|hitting)\s+(this|that|it)"
    r"(\s+(same\s+)?(error|one))?(\s+again)?(\s+(when|whenever|every|each|since|after|locally|too|as well|now"
    r"|on (every|each|all|ci|main|master|staging|prod\w*|startup|boot|save|load|deploy|push|commit|my (machine|laptop))"
    r"|in (ci|prod\w*|staging|dev|the (logs?|console|terminal|browser|tests?)))\b|\W*$)"
)
# Putting off an answer ("Let me think about it.", "Let me check with my team first."): what the speaker will
# say is not said yet. Read as a fact it becomes "Let Lee think about it.".
PUTTING_OFF_RE = _rx(
    r"^let me (?:think|check|see|look|ask|find out|double[- ]check|confirm|get back to you|sleep on|mull|consider"
    r"|figure|have a (?:look|think)|take a look|dig|run it by|talk to|chat with|discuss)\b"
)
# A hypothetical is no fact: "If I were to use Postgres …", "Suppose I moved to Berlin", "Imagine we used
# MongoDB instead", "What if …", "Let's say …".
HYPOTHETICAL_RE = _rx(
    r"^(if (i|we|you|they|he|she) were\b|if (i|we) (had|did) (to )?\w+|suppose|supposing|imagine (if|that|we|i|you|they|a|an|the|having|being)\b"
    r"|what if|let'?s say|say (we|i)\b|hypothetically)"
)
# A correction that names nothing it corrects ("No, that is wrong.", "Scratch that."): what is right
# comes in another sentence, if at all.
BARE_CORRECTION_RE = _rx(
    r"^((that|this|it)('s|’s|\s+is|\s+was)|(i|we)\s+(was|were)|(you're|you are))\s+(totally\s+|completely\s+)?"
    r"(not right|not correct|not true|wrong|incorrect|a mistake|mistaken)\W*$|^scratch that\W*$"
)
# A task for today, not a fact: "Today we need to fix the invoice rounding bug", "This morning I have to
# rebase …", "We need to ship the hotfix this afternoon" — a one-off job said with the day it is done.
# Not a habit ("… sign every commit") nor a rule from today on ("…, starting today"), and a group's
# "we need to" with no such time is its plan.
_ONE_OFF_VERBS = (
    r"fix|finish|ship|deploy|release|merge|rebase|patch|debug|deliver|submit|send|file|call|email|reply|answer"
    r"|prepare|book|pay|buy|pick up|get|move|push|upload|restart|reboot|roll back|rollback|revert|cut|tag|clean up"
    r"|wrap up|sort out|update|install|upgrade|test|run|write|draft|check|review|meet|present|hand in|return|cancel"
)
_TODAY = r"today|tonight|this (?:morning|afternoon|evening)"
TODAY_TASK_RE = _rx(
    rf"^(?![^.]*\b(?:every|always|each|whenever|from now on|starting|as of|from today)\b)(?:"
    rf"(?:{_TODAY}|right now),?\s+(?:i|we)\s+(?:really\s+|still\s+|just\s+)*(?:need|have|'ve got|have got|must|gotta|got)"
    r"\s+to\b"
    r"|(?:i|we)\s+(?:really\s+|still\s+|just\s+)*(?:need|have|'ve got|have got|must|gotta|got)\s+to\s+"
    rf"(?:{_ONE_OFF_VERBS})\b[^.]*\b(?:{_TODAY}|right now)\W*$)"
)
# Chat asides that say nothing wherever they stand ("we use ruff btw", "it broke lol"); "by the way" only
# after a comma, before the end or another comma ("I hate YAML, by the way": not "… by the way of example").
CHAT_ASIDE_RE = _rx(
    r"(?:,\s*|\s+)\(?\b(?:btw|lol|lmao|rofl|haha+|fwiw|imo|imho|tbh)\b\)?(?=[\s,.!?;:]|$)"
    r"|,\s*by the way\s*,(?=\s)|,\s*by the way\b(?=\s*(?:[.!?;:]|$))"
)
# A trailing ", so do X" clause is an instruction for now, not part of the fact.
# So is a trailing ", so no pork at the offsite please": a request ending in "please".
TRAILING_REQUEST_RE = _rx(rf",\s+(so|and|then)\s+(please\b.*|(just\s+)?({TASK_VERBS})\b.*|[^,]*\bplease\W*)$")

# The assistant narrating its own work.
ASSISTANT_CHATTER_RE = _rx(
    r"^(i'll|i will|i'?m going to|i am going to|let me|let's|now i|next,? i|first,? i|then i|i'?ve|i have"
    r"|i (just |now )?(updated|added|fixed|ran|created|changed|removed|wrote|found|see|noticed|checked|looked"
    r"|searched|read|opened|renamed|moved|refactored|implemented|installed|tested|verified|confirmed|guarded)"
    r"|i'?m (now |currently )?(running|checking|looking|reading|searching|updating|adding|fixing|going)"
    r"|running|checking|looking|reading|searching|updating|adding|fixing|done|here'?s|here is|here are|sure"
    r"|great|okay|ok|got it|good|perfect|now|next|all (tests|checks) pass|tests pass|the tests? (pass|fail)"
    r"|that (should|will) (fix|do)|this (should|will) (fix|do)"
    # work narrated without its "I": "Added GET /health in app/routes.py", "Updated the README …"
    r"|(added|updated|fixed|created|changed|removed|deleted|renamed|moved|refactored|implemented|installed|tested"
    r"|verified|wrote|rewrote|ran|replaced|bumped|wired|hooked|extracted|split|merged|reverted|switched|cleaned"
    r"|simplified|adjusted|tweaked|converted|migrated|documented|pinned|dropped))\b"
)

# The assistant telling what a file, config, log, command or its output says ("The notes file mentions the
# Q3 budget is 40k", "The config says …", "According to the README, …"): the tool's result one step removed —
# the result itself is never a memory (injected.py), and the file, not a copy of it, says what is current.
# Only documents and outputs are sources: a page, an environment, a dashboard, an issue, test results or a
# report are things the assistant states facts about ("The pricing page has a 4% conversion rate").
_SOURCE_NOUN = (
    r"files?|config(?:uration)?s?|logs?|output|stdout|stderr|commands?|readme|docs|documentation|changelog"
    r"|manifest|lockfile|notes?|diff|spec(?:ification)?s?|traceback|stack ?traces?|errors?|error messages?"
    r"|listing|dump|trace|grep|headers|docstring"
)
# What a file assigns ("`config.yaml` sets the timeout to 30 seconds"), only when the source is a file.
_FILE_NOUN = r"files?|config(?:uration)?s?|manifest|lockfile"
# Last parts of a host name, not a file's extension: "api.acme.io has …", "acme.com …".
_TLDS = (
    r"com|org|net|io|dev|app|ai|co|edu|gov|info|biz|me|cloud|xyz|tech|site|online|uk|us|eu|de|fr|nl|es|it"
    r"|ca|au|jp|in|gg|tv|fm|ly|so|to"
)
# A file or path named as the source: notes.txt, `config.yaml`, src/app.py, /etc/hosts, .env, Makefile — not
# a host (acme.com, api.acme.io), a library named like a file (D3.js, next.js, Socket.io) or a version (v2.0).
_SOURCE_NAME = (
    r"`[^`\s]+`|(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]+)*|[\w.-]+(?:/[\w.-]+)*/[\w-]+\.(?-i:[a-z][a-z0-9]{0,7})\b"
    rf"|(?![\w-]+\.js\b)(?![\w.-]+\.(?:{_TLDS})\b)\.?[\w-]+(?:\.[\w-]+)*\.(?-i:[a-z][a-z0-9]{{0,7}})\b"
    r"|\.[a-z][\w-]*\b|makefile|dockerfile|procfile|justfile|gemfile"
)
_DETERMINER = r"(?:(?:the|this|that|these|those|your|my|our|its|their|each|both)\s+)?"
_SOURCE = (
    rf"{_DETERMINER}(?:(?:[\w.`'-]+\s+){{0,3}}?(?:{_SOURCE_NOUN})(?:\s+(?:of|from|in|for)\s+[^,;]{{1,40}}?)?"
    rf"|{_SOURCE_NAME})"
)
_FILE_SOURCE = rf"{_DETERMINER}(?:(?:[\w.`'-]+\s+){{0,3}}?(?:{_FILE_NOUN})|{_SOURCE_NAME})"
# Verbs of saying, never of having ("has", "includes", "records": the page has a conversion rate, the
# results include …) nor a present perfect ("has been migrated"). A participle before "in"/"by"/"above" is
# no report: "The files listed in the README are stale".
_REPORTS = (
    r"says?|said|mentions?|mentioned|shows?|showed|lists?|listed|contains?|contained|states?|stated|reads?"
    r"|indicates?|indicated|reports?|reported|returns?|returned|prints?|printed|outputs?|specif(?:y|ies|ied)"
    r"|notes?|noted|confirms?|confirmed|suggests?|suggested|defines?|defined|declares?|declared"
    r"|points? to|refers? to|tells?|told|describes?|described|documents?|documented|explains?|explained"
    r"|claims?|claimed|spells? out"
)
_NOT_PARTICIPLE = r"(?!(?<=ed)\s+(?:in|on|by|above|below|here|there|earlier|previously|under)\b)"
ASSISTANT_REPORTED_RE = _rx(
    rf"^(?:{_SOURCE})\s+(?:also\s+|still\s+|now\s+|clearly\s+|explicitly\s+)?(?:{_REPORTS})\b{_NOT_PARTICIPLE}"
    rf"|^(?:{_FILE_SOURCE})\s+(?:also\s+|still\s+|now\s+|explicitly\s+)?(?:sets?|pins?|pinned)\b{_NOT_PARTICIPLE}"
    rf"|^(?:it|this|that)\s+(?:says|said|shows|showed|mentions|mentioned|lists|listed|reads|contains|prints|returns|returned)\b"
    rf"|^(?:according to|per|based on|going by|judging by|looking at|from|in|reading|having read|checking|after reading)"
    rf"\s+(?:{_SOURCE})\s*[,:—–-]"
    rf"|^as\s+(?:{_SOURCE})\s+(?:{_REPORTS})\b"
    rf"|^as\s+(?:shown|stated|noted|listed|mentioned|described|documented|defined|specified)\s+(?:in|by)\s+(?:{_SOURCE})\b"
)

# --- category cues, in Remnic's priority order ---
# corrections > principles > rules > preferences > commitments > decisions > relationships
# > entities > moments > skills > facts

CATEGORY_CUES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "correction",
        "correction marker",
        _rx(
            r"^(actually|correction|scratch that|oops|sorry,? i meant|no,? wait\b|no,|wait,"
            r"|(sorry|hmm+|um+|uh+|er+|ah+)[,.]?\s+(no|nope)\b)\s*[,:]?\s*\w"
        ),
    ),
    (
        "correction",
        "self-correction",
        _rx(r"\b(i meant|i was wrong|we were wrong|that'?s (not right|wrong|incorrect)|let me correct)\b"),
    ),
    (
        "principle",
        "always/never rule",
        _rx(
            r"^([^,]{1,30},\s*)?(please\s+)?((remember|be sure) to\s+)?"
            r"(always|never|don'?t ever|do not ever|make sure (to|you|we)|avoid|do not|don'?t)\b"
        ),
    ),
    (
        "principle",
        "should/must",
        _rx(r"\b(we|you|everyone|the team|one|all \w+)\s+(should|must|need to)\s+(always|never|not)\b"),
    ),
    ("principle", "habitual rule", _rx(r"\b(we|you)\s+(always|never)\s+\w+")),
    # Deontic "must" only: "must have"/"must've" and "must be" before anything but a participle are
    # conjecture ("that must be amazing", "it must have been hard"); "must-have" is a noun.
    (
        "principle",
        "must",
        _rx(
            r"\bmust( not|n'?t)?\b(?!-|'ve\b|\s+have\b|\s+be\s+(?!\w+(ed|en)\b|kept|done|made|set|run|put|left|held|paid|sent|built|shut|cut)\w)"
        ),
    ),
    ("principle", "should be X, not Y", _rx(r"\bshould (be|use|stay|go|live)\b[^,]*,\s*not\b")),
    (
        "principle",
        "stated rule",
        _rx(r"\b(as a rule|the rule is|our rule|rule of thumb|principle|policy is|never ever)\b"),
    ),
    ("rule", "if/whenever … then", _rx(r"^(if|whenever)\b[^,]{3,},\s*(then\s+)?\w")),
    ("rule", "whenever", _rx(r"\bwhenever\b")),
    ("preference", "a must-see", _rx(r"\bmust-(see|visit|have|read|try|watch|do|go|hear|listen|buy|own|eat)\b")),
    (
        "preference",
        "stated preference",
        _rx(
            r"\b(i|we)\s+(really\s+|also\s+|still\s+|much\s+|generally\s+|usually\s+|definitely\s+|absolutely\s+|totally\s+)*"
            r"(prefer|like|love|enjoy|adore|hate|dislike|despise|can'?t stand|cannot stand|don'?t like|do not like"
            r"|would rather|'?d rather|favou?r)\b|\b(i|we)'d\s+(much\s+)?(rather|prefer)\b"
        ),
    ),
    (
        "preference",
        "fan of",
        _rx(
            r"\b(i'?m|i am|we're|we are)\s+(a\s+|such a\s+|a big\s+|a huge\s+|really\s+|so\s+)*(fan of|into|keen on|passionate about|obsessed with|crazy about)\b"
        ),
    ),
    ("preference", "favourite", _rx(r"\b(my|our)\s+(all-time\s+)?favou?rite\b")),
    ("preference", "X, not Y", _rx(r"^(use|prefer|pick|choose|go with|stick with)\b[^,]*,\s*(not|never)\b")),
    ("preference", "prefers", _rx(r"\b(prefers?|preferred|rather than|instead of)\b")),
    ("commitment", "promise", _rx(r"\b(i|we)\s+(promise|commit|committed|pledge)\b")),
    (
        "commitment",
        "deadline",
        _rx(r"\b(deadline|due (by|on|date)|no later than|by (end of|eod|eow)|before the end of)\b"),
    ),
    (
        "commitment",
        "future with a date",
        _rx(
            r"\b(i|we)('ll|\s+will|'m going to|\s+am going to|'re going to|\s+are going to|'m gonna|\s+am gonna|\s+have to|\s+need to"
            r"|'m planning to|\s+am planning to|\s+plan to|\s+intend to)\b.*\b(by|before|until|on|next|tomorrow|tonight|this|today"
            r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{1,2}(st|nd|rd|th)?|week|month)\b"
        ),
    ),
    (
        "commitment",
        "plan",
        _rx(
            r"\b(i'?m|i am|we're|we are)\s+(planning|going|gonna|hoping|about)\s+to\b|^(gonna|going to|planning to)\b|\b(i|we)\s+(plan|intend)\s+to\b"
        ),
    ),
    (
        "decision",
        "decided",
        _rx(
            r"\b(we|i|the team|they|team)\s+(have\s+|'ve\s+|finally\s+|just\s+)?(decided|agreed|chose|chosen|picked|settled on|went with|opted|voted)\b"
        ),
    ),
    ("decision", "decision", _rx(r"\b(decision|from now on|going forward|moving forward|from here on)\b")),
    (
        "decision",
        "we will",
        _rx(
            r"\b(we|let's)\s*('ll|will|are going to|'re going to)?\s*(go with|use|switch to|adopt|move to|stick with|standardi[sz]e on|migrate to|keep)\b"
        ),
    ),
    (
        "decision",
        "schedule",
        _rx(
            r"\b(we|i)('ll|\s+will)?\s+\w+.*\b(every|each)\s+(day|week|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|evening|sprint|quarter)\b"
        ),
    ),
    (
        "relationship",
        "family or colleague",
        _rx(
            r"\b(my|our)\s+(\w+\s+)?(wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse|sister|brother|sibling|mother|mom|mum"
            r"|father|dad|parents?|son|daughter|kids?|children|child|baby|friends?|best friend|boss|manager|colleague|coworker"
            r"|co-worker|teammate|team lead|tech lead|mentor|mentee|cousin|aunt|uncle|niece|nephew|grandmother|grandfather"
            r"|grandma|grandpa|grandparents?|grandson|granddaughter|grandkids?|roommate|neighbou?r|landlord|family)\b"
        ),
    ),
    (
        "relationship",
        "reports to",
        _rx(
            r"\b(reports to|married to|works (with|for|under)|is (my|our) (\w+\s+)?(manager|boss|lead|mentor|owner|maintainer))\b"
        ),
    ),
    # A name (capitalised: the pattern is otherwise case-blind; "Our CI" is no one) owning or running something
    # ("Priya owns the billing service") — not a system that runs somewhere ("Our CI runs on Buildkite").
    (
        "relationship",
        "owns",
        _rx(
            r"^(?-i:(?!(?:Our|My|The|Their|His|Her|Its|This|That|These|Those|Your|We|It|They|He|She|Any|Some|Every)\b)"
            rf"{CAPITAL}\w+(?: {CAPITAL}\w+)?) (owns|maintains|leads|runs|manages)\b"
            r"(?!\s+(?:on|in|at|every|each|for|from|out|into|with|smoothly|fine|well|late|daily|weekly|nightly|hourly)\b)"
        ),
    ),
    ("relationship", "standing responsibility", RESPONSIBILITY_RE),
    ("relationship", "membership change", MEMBERSHIP_RE),
    (
        "entity",
        "named thing",
        wide_re(
            r"^([A-Z][\w.-]+)( [A-Z][\w.-]+)* (is|are) (a|an|our|the|their) ([\w-]+\s+){0,3}(tool|service|library|framework"
            r"|database|db|team|company|project|app|repo|repository|platform|product|api|queue|cluster|server|bot|model"
            r"|language|editor|system|store|cache|pipeline|org|organi[sz]ation)\b"
        ),
    ),
    (
        "moment",
        "milestone",
        _rx(
            r"\b(got married|got engaged|graduated|passed away|was born|got promoted|(a|my) promotion|new job|first (day|time)|milestone"
            r"|anniversary|birthday|adopted|retired|broke up|had a baby|proposed|moved (in|to|into|out)|got (a|my) (first )?(dog|cat|puppy|kitten|house|job)"
            r"|came out|finished (my|the) \w+|started (my|a) (new )?\w+)\b"
        ),
    ),
    (
        "moment",
        "felt",
        _rx(
            r"\b(i|we)\b.*\b(so|really|very|super|incredibly)?\s*(powerful|amazing|incredible|special|proud|happy|sad|excited|thrilled"
            r"|grateful|thankful|emotional|unforgettable|memorable|life-changing|overwhelmed|heartbroken|devastated|blessed)\b"
        ),
    ),
    (
        "skill",
        "can do",
        _rx(
            r"\b(i'?m|i am)\s+(really\s+|pretty\s+|very\s+)?(good|great|skilled|experienced|fluent|proficient|an expert)\s+(at|in|with)\b"
            r"|\bi\s+(know how to|can (speak|code|play|cook|write|program|build|draw|paint|sing|dance|swim))\b|\byears of experience\b"
        ),
    ),
    (
        "procedure",
        "steps",
        _rx(
            r"^to \w+[^,]*,\s*(first\s+)?\w+.*\bthen\b|\b(steps are|follow these steps|the recipe for|the workflow is)\b"
        ),
    ),
)
# A fact needs a statement: a first-person clause, or a third-person one with specifics.
FACT_VERB_RE = _rx(
    r"(\b(i|we|you|they)'(m|re|ve|d)\b)|\b(am|is|are|was|were|has|have|had|runs|uses|used|lives|lived|listens|fires|takes|costs|holds|contains|points"
    r"|belongs|works|worked|owns|went|got|started|joined|moved|bought|made|painted|visited|live|work|use|own|run"
    r"|studied|study|teach|taught|volunteer|volunteered|play|played|read|wrote|write|built|build|deploys?|ships?"
    r"|need|needs|want|wants|feel|feels|felt|love|loved|learned|learnt|tried|try|think|know|knew|find|found|keep|kept"
    r"|plan|planned|hope|hoped|made|make|take|took|give|gave|do|does|did|can|could|will|would"
    # how systems relate: "the cart service calls the pricing API at port 8081"
    r"|calls|called|reads|writes|sends|sent|returns|stores|stored|connects|depends|requires|supports|exposes|serves"
    r"|handles|publishes|consumes|emits|triggers|talks|caches|queries|syncs|retries|migrates|migrated|replicates"
    r"|routes|validates|generates|wraps|mounts|binds|polls|pushes|pulls|fetches|loads|saves)\b"
)
SPECIFIC_RE = re.compile(r"\d|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\b|[\w-]+\.[a-z]{1,4}\b|/\w|@\w|\b[a-z]+_[a-z_]+\b")
HEDGE_RE = _rx(
    r"\b(i think|i guess|i believe|i feel like|i suppose|i wonder|maybe|perhaps|possibly|probably|might|not sure"
    r"|kind of|sort of|kinda|sorta|seems like|it seems|i'?m not sure|i'?m guessing|could be)\b"
)
# A bare pronoun subject with nothing named: the referent is in another turn ("This book …" names it).
PRONOUN_SUBJECT_RE = _rx(
    r"^((he|she|they|it|there)\b|(this|that|these|those)('s|'re|\s+(is|was|are|were|has|had|have|will|would|can|could"
    r"|should|might|must|does|did|do|really|just|also|made|makes|reminds|reminded|brings|brought|taught|teaches|showed"
    r"|shows|gave|gives|helps|helped|means|meant|felt|feels|looks|sounds|seems|got|took|keeps|kept)\b))"
)
# "The default branch is main", "Our base image is alpine": a setting, durable though it names no thing (and
# has no key: whose default it is was said elsewhere). "The repo uses ruff for linting": a tool a thing uses.
SETTING_RE = re.compile(
    r"^(?i:the|our)\s+(?:default|primary|base|preferred|max|maximum|min|minimum)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?"
    r"\s+(?:is|are)\s+\S"
    r"|^(?i:the|our)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+uses\s+(?!(?i:it|them|this|that|these|those)\b)[\w.+#/-]+(?:\s+[\w.+#/-]+)?\s+(?:for|to)\s+\w"
)
# Naming something: "Her name's Coco", "a cat named Bailey", "the band is called Sunfall".
NAMING_RE = wide_re(r"\b(?:[Nn]amed|(?:is|are|was|were|be) called|[Nn]ame(?:'s| is| was))\s+\"?[A-Z][\w'-]+")
# Chat drops the subject ("Been reading …", "Just got new shoes"): the speaker is the subject.
SUBJECTLESS_RE = _rx(
    r"^((just|also|finally|recently|really|still)\s+)?(been|gonna|going to|planning to|hoping to|trying to|about to"
    r"|thinking about|thinking of|looking forward to|working on|went|started|finished|got|had|spent|visited|tried"
    r"|took|bought|joined|signed up|love|loved|adore|appreciate|enjoyed|learned|learnt|painted|ran|read|saw|met|made)\b"
)
_MONTH = r"(january|february|march|april|(?-i:May)|june|july|august|september|october|november|december)"
# When: a date ("14 June", "June 14th", "1 June 2026"; "may" only capitalised or with a year: "I may 2 …" is
# none), a day, a deadline word.
TIME_RE = _rx(
    rf"\b(\d{{1,2}}(st|nd|rd|th)?( of)? {_MONTH}( \d{{4}})?|\d{{1,2}} may \d{{4}}|{_MONTH} \d{{1,2}}(st|nd|rd|th)?(?!\d)"
    r"|tomorrow|today|tonight|next|monday|tuesday|wednesday|thursday|friday|saturday|sunday|by|before|until"
    r"|deadline|due|\d{4}-\d{2}-\d{2}|week|month|year|eod|eow|every \d+ \w+)\b"
)
