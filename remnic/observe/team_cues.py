"""Cues for who is on a team and what a person answers for: said of a named person, with no other cue,
these are lasting facts a team needs ("Priya left the company.", "Ewa approves all production deploys.").
Only a capitalised name as the subject (not "Our", "The", a pronoun …) and only what is said of a team, a
company or "here": "Caroline left the party early" or "Ben joined a gym" say nothing of the sort."""

from __future__ import annotations

import re

from .letters import wide

_NAMED = wide(
    r"^(?-i:(?!(?:Our|My|The|Their|His|Her|Its|This|That|These|Those|Your|We|It|They|He|She|Any|Some|Every"
    r"|There|Here|What|Who|Everyone|Nobody|Someone)\b)[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)\s+"
)
_GROUP = (
    r"(?:(?:the|our|my|your|their|this)\s+(?:\w+\s+)?(?:company|team|org|organi[sz]ation|firm|startup|department"
    r"|squad|group|project|business)|us|here)\b"
    # the group itself, not "the group chat" or "the project page"
    r"(?=\s*(?:[,.;!]|$)|\s+(?:on|in|at|last|this|next|after|before|since|today|yesterday|tomorrow|for|to|and|but"
    r"|because|as|now|soon|recently)\b)"
)
# "Priya is leaving the company on Friday", "Priya left the team", "Priya no longer works here", "Kofi
# joined our team", "Dana was laid off".
MEMBERSHIP_RE = re.compile(
    _NAMED + r"(?:(?:has|have|had|just|recently|officially)\s+)*"
    r"(?:(?:is|'s|will\s+be)\s+(?:leaving|quitting|joining|retiring\s+from)|left|leaves|will\s+leave|quit|quits"
    r"|resigned\s+from|retired\s+from|joined|joins|will\s+join)\s+"
    + _GROUP
    + r"|"
    + _NAMED
    + r"(?:no\s+longer|doesn't|does\s+not|don't)\s+works?\s+(?:here|for\s+us|with\s+us|at\s+"
    r"(?:the|our)\s+company)\b"
    r"|" + _NAMED + r"(?:was|got|has\s+been)\s+(?:let\s+go|laid\s+off|fired)\b",
    re.I,
)
# "Ewa approves all production deploys", "Ben reviews every schema change", "Ana is responsible for the
# release notes", "Kofi is in charge of onboarding": what a person answers for, not what they did once.
RESPONSIBILITY_RE = re.compile(
    _NAMED + r"(?:approves|signs\s+off\s+on|reviews|handles|oversees|owns)\s+(?:all|every|each|any)\b"
    r"|" + _NAMED + r"is\s+(?:responsible\s+for|in\s+charge\s+of|accountable\s+for)\s+\w",
    re.I,
)
