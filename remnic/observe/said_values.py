"""Supersession keys for the everyday ways a team states a value that may change later
(:func:`said_value_key`, asked by :mod:`.keys` when no "X is VALUE" form fits):

- the tool used for something: "We use Jenkins for CI", "Our CI is Jenkins", "We moved CI from Jenkins
  to GitHub Actions", "We switched to GitHub Actions for CI" → ``ci`` / ``tool``;
- the weekday something is done: "We cut releases every Wednesday", "We deploy on Fridays", "… every
  Thursday from now on" → ``cut-releases`` / ``day``;
- who owns a thing: "Dana owns the billing service", "Dana handed the billing service over to Kofi"
  → ``billing-service`` / ``owner``.

A plain "Dana owns the billing service" names the owner, so "Kofi owns the billing service" said later
replaces it; a second owner is said as one ("Kofi also owns …", "Dana and Kofi own …", "… co-owns …",
"… with Dana") and keys nothing, so both stay. Only a team's "we" keys a tool or a weekday: one person's
"I run every Monday" may be one habit of several.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .cues import words
from .letters import wide
from .records import key_part

TOOL_PURPOSES = words(
    "ci cd ci-cd cicd vcs monitoring alerting logging tracing metrics paging on-call chat hosting deploys deployment"
    " deployments builds orchestration issue-tracking ticketing docs wiki dashboards secrets feature-flags"
)
"""What a team names the tool for ("Our CI is Jenkins"): its ``tool``, not a value of "CI" itself."""
ONE_TOOL_PURPOSES = words(
    "ci cd ci-cd cicd continuous-integration vcs source-control version-control deploys deployment deployments"
    " paging on-call issue-tracking ticketing chat"
)
"""Purposes a team serves with one tool at a time: "We use GitLab for CI" retires Jenkins for CI, while
"We use Redis for the billing service" is one more tool beside Postgres."""
# Said as a replacement: a second tool for an open-ended purpose then retires the first one.
_REPLACING_RE = re.compile(
    r"\b(?:now|instead|no\s+longer|from\s+now\s+on|going\s+forward|moving\s+forward|anymore|any\s+more)\b", re.I
)

_WE = wide(r"(?:[Ww]e|[Tt]he\s+team|[Oo]ur\s+team|(?P<group>[A-Z][\w-]*(?:\s[A-Z][\w-]*)?\s+and\s+others))")
_SOFT = r"(?:(?:now|still|currently|mostly|usually|always|just|finally|already|officially|have|'ve)\s+)*"
_NAME = wide(r"[A-Z][\w+#-]*(?:\.[\w+#-]+)*(?:\s+[A-Z0-9][\w+#-]*(?:\.[\w+#-]+)*){0,2}")
_THING = r"[A-Za-z][\w/-]*(?:\s+(?!(?:now|instead|again|these|going|moving|from)\b)[a-z][\w/-]*){0,2}"
# Said after the value: when it starts holding, not part of it.
_FROM_NOW = r"(?:\s+(?:from\s+now\s+on|going\s+forward|moving\s+forward|now|again|instead|these\s+days))?"
_END = rf"{_FROM_NOW}\s*[.!]?$"
_USE_RE = re.compile(
    rf"^{_WE}\s+{_SOFT}(?:use|run|are\s+using|rely\s+on|went\s+with|go\s+with)\s+(?P<value>{_NAME})\s+for\s+"
    rf"(?:(?:the|our|all)\s+)?(?P<thing>{_THING}){_END}",
)
_MOVED_RE = re.compile(
    rf"^{_WE}\s+{_SOFT}(?:moved|switched|migrated|changed)\s+(?:(?:the|our)\s+)?(?P<thing>{_THING})\s+"
    rf"(?:from\s+(?P<old>{_NAME})\s+)?(?:over\s+)?to\s+(?P<value>{_NAME}){_END}",
)
_MOVED_FOR_RE = re.compile(
    rf"^{_WE}\s+{_SOFT}(?:moved|switched|migrated)\s+(?:from\s+(?P<old>{_NAME})\s+)?(?:over\s+)?to\s+"
    rf"(?P<value>{_NAME})\s+for\s+(?:(?:the|our|all)\s+)?(?P<thing>{_THING}){_END}",
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
_DAY = r"(?:[Mm]on|[Tt]ues|[Ww]ednes|[Tt]hurs|[Ff]ri|[Ss]atur|[Ss]un)days?"
_SCHEDULE_RE = re.compile(
    rf"^{_WE}\s+{_SOFT}(?P<act>[a-z]+(?:\s+(?:the\s+|our\s+)?[a-z][\w-]*){{0,3}}?)\s+(?P<when>every|each|on)\s+"
    rf"(?P<value>{_DAY}){_END}",
)
# A habit holds from now on; "We went hiking on Saturday" is one outing, and the next one retires nothing.
_HABIT_RE = re.compile(r"\b(?:from\s+now\s+on|going\s+forward|moving\s+forward)\b", re.I)
_PAST_ACTS = words(
    "went had did made ran met got took saw gave held began spent flew drove left came ate drank wrote sent"
    " shipped built were was"
)
_OWNS_RE = re.compile(
    rf"^(?P<value>{_NAME})\s+(?:now\s+)?owns\s+(?P<thing>(?:the|our)\s+[^,;]+?){_END}",
)
_HANDED_RE = re.compile(
    rf"^(?:{_NAME}|we|I)\s+(?:(?:has|have|just|officially)\s+)*handed\s+(?:over\s+)?(?P<thing>(?:the|our)\s+[^,;]+?)"
    rf"\s+(?:over\s+)?to\s+(?P<value>{_NAME}){_END}",
)
# A second one said as such, not a replacement.
_SHARED_RE = re.compile(r"\b(?:also|too|as\s+well|co-?owns?|jointly|together|along\s+with|with|and|both)\b", re.I)
_NOT_VALUES = words(
    "i we you he she they it the our my a an this that everyone nobody someone today tomorrow now"
    " january february march april may june july august september october november december " + _DAYS
)
_NOT_THINGS = words("it this that them us him her everything something work home")


def said_value_key(sentence: str) -> tuple[str | None, Mapping[str, str]]:
    """``(entityRef, {attribute: value})`` for a tool, a weekday or an owner said in one of the forms
    above; ``(None, {})`` otherwise."""
    text = sentence.strip()
    for pattern in (_USE_RE, _MOVED_FOR_RE, _MOVED_RE):
        match = pattern.match(text)
        one_tool = pattern is not _USE_RE or bool(_REPLACING_RE.search(text))
        if match and _tool_change(match, pattern is _MOVED_RE or not one_tool):
            return key_part(match.group("thing")), {"tool": match.group("value")}
    match = _SCHEDULE_RE.match(text)
    if match and not _habit(match, text):
        match = None
    if match and not _SHARED_RE.search(text[match.end("group") if match.group("group") else 0 :]):
        act = re.sub(r"\b(?:the|our)\s+", "", match.group("act"), flags=re.I)
        if act.split()[0].lower() not in ("are", "is", "were", "was", "have", "had", "meet", "met", "off", "out"):
            return key_part(act), {"day": _weekday(match.group("value"))}
    match = _HANDED_RE.match(text) or _OWNS_RE.match(text)
    if match and not (match.re is _OWNS_RE and _SHARED_RE.search(text)):
        owner, thing = match.group("value"), re.sub(r"^(?:the|our)\s+", "", match.group("thing"), flags=re.I)
        if owner.split()[0].lower() not in _NOT_VALUES and thing.split()[0].lower() not in _NOT_THINGS:
            return key_part(thing), {"owner": owner}
    return None, {}


def _tool_change(match: re.Match[str], bare_thing: bool) -> bool:
    """A named tool for a purpose: the value (and the one it replaced) is a name, not a weekday or a
    person's pronoun; a purpose said without "from X" must be one known to take a tool ("CI")."""
    value, thing = match.group("value"), match.group("thing")
    old = match.groupdict().get("old")
    if value.split()[0].lower() in _NOT_VALUES or (old and old.split()[0].lower() in _NOT_VALUES):
        return False
    if thing.split()[0].lower() in _NOT_THINGS or re.search(r"\d", value.split()[0]):
        return False
    if not bare_thing or old:
        return True
    purposes = TOOL_PURPOSES if match.re is _MOVED_RE else ONE_TOOL_PURPOSES
    return key_part(thing) in purposes


def _habit(match: re.Match[str], text: str) -> bool:
    """A weekday said as a habit: "every/each Friday", "on Fridays", or "on Friday from now on"; never in a
    past tense ("We went to the pub on Friday", "We released on Thursday")."""
    first = match.group("act").split()[0].lower()
    if first in _PAST_ACTS or (first.endswith("ed") and not first.endswith("eed")):
        return False
    return match.group("when") != "on" or match.group("value").lower().endswith("days") or bool(_HABIT_RE.search(text))


def _weekday(said: str) -> str:
    day = said.lower().rstrip("s") if said.lower().endswith("days") else said.lower()
    return day.capitalize()
