"""Supersession keys for the everyday ways a team states a value that may change later
(:func:`said_value_key`, asked by :mod:`.keys` when no "X is VALUE" form fits):

- the tool used for something: "We use Jenkins for CI", "Our CI is Jenkins", "We moved CI from Jenkins
  to GitHub Actions", "We switched to GitHub Actions for CI" → ``ci`` / ``tool``; for a purpose that may
  have several tools, each its own: "We use React for the frontend" → ``frontend`` / ``tool-react`` =
  ``in use``, retired only by a replacement naming it ("We switched the frontend from React to Vue" →
  ``tool-react`` = ``replaced by Vue``), never by another tool ("We use Tailwind for the frontend");
- a runtime's version: "We run Node 18", "We upgraded Node from 18 to 20", "Node 20 now" → ``node`` /
  ``version``; where it runs, "We run Node 18 on the build agents" → ``build-agents`` / ``node-version``;
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
IN_USE = "in use"
"""A tool's own attribute's value while it serves a purpose that may have several (``tool-react``)."""
# Said as a replacement ("… now", "… instead"): for a purpose a team names the tool for ("monitoring") the
# tool said is its ``tool`` from then on.
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
# A runtime and its version as a team says it: "We run Node 18", "We're on Python 3.11", "We upgraded Node
# from 18 to 20", "We upgraded to Node 20", "Node 20 now" → ``node`` / ``version`` (as "Our Node version is
# 20" keys). A name with a capital ("Node", "iOS", "C#"), a version of at most four digits before a dot.
_RUNTIME = r"(?P<name>(?=[\w.+#-]*[A-Z])[A-Za-z][\w+#-]*(?:\.[A-Za-z][\w+#-]*)?)"
_VERSION = r"v?(?P<version>\d{1,4}(?:\.\d+){0,3})"
_CHANGED = r"(?:upgraded|downgraded|moved|migrated|switched|bumped|updated)"
_RUNS_VERSION_RE = re.compile(
    rf"^{_WE}(?:\s+{_SOFT}(?:run|use|are\s+(?:on|using|running))|['’]re\s+{_SOFT}(?:on|using|running))\s+"
    rf"{_RUNTIME}\s+{_VERSION}{_END}"
)
_CHANGED_TO_VERSION_RE = re.compile(
    rf"^{_WE}\s+{_SOFT}{_CHANGED}\s+(?:from\s+(?P<old>[A-Za-z][\w.+#-]*)\s+v?\d[\d.]*\s+)?to\s+{_RUNTIME}\s+"
    rf"{_VERSION}{_END}"
)
_CHANGED_VERSION_RE = re.compile(
    rf"^{_WE}\s+{_SOFT}{_CHANGED}\s+{_RUNTIME}\s+(?:from\s+v?\d[\d.]*\s+)?to\s+{_VERSION}{_END}"
)
NAMED_VERSION_RE = re.compile(r"^([A-Z][\w+#-]*(?:\.[Jj][Ss])?)\s+v?\d+(?:\.\d+){0,3}$")
"""A runtime named with its version ("Python 3.11", "Node 20", "Node.js 18"); group 1 is the runtime."""


def runtime_name(name: str) -> str:
    """The runtime a name says, for its key: "Node.js" is Node ("Node.js 18" and "Node 20" are versions of one)."""
    return re.sub(r"\.js$", "", name, flags=re.I)


def version_attribute(name: str) -> str:
    """The attribute a named runtime's version is kept under ("python-version"): a thing runs on several
    (Python 3.11 and Ubuntu 22.04), and only a new version of the same one replaces it."""
    return key_part(f"{runtime_name(name)} version")


# "We run Node 18 on the build agents": where a runtime's version runs, the key "The build agents run on
# Node 18" and "We upgraded the build agents to Node 20" have. A named version only: "We use Docker on our
# laptops" says where a tool is used, not what serves a purpose.
_RUNS_ON_RE = re.compile(
    rf"^{_WE}\s+{_SOFT}(?:use|run|are\s+(?:using|running))\s+(?P<value>{_NAME})\s+on\s+(?:the|our|all)\s+"
    rf"(?P<thing>{_THING}){_END}",
)
# "Node 20 now": the version said as the one now, nothing else ("Node 20." alone may answer any question).
_VERSION_NOW_RE = re.compile(rf"^{_RUNTIME}\s+{_VERSION}\s+now\s*[.!]?$")
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
        if match and _named_tool(match):
            named = NAMED_VERSION_RE.match(match.group("value"))
            if named and key_part(match.group("thing")) not in ONE_TOOL_PURPOSES:
                # "We use Python 3.11 for the API": what "The API runs on Python 3.11" says
                return key_part(match.group("thing")), {version_attribute(named.group(1)): match.group("value")}
            said = _tool_attributes(match, replacing=pattern is not _USE_RE or bool(_REPLACING_RE.search(text)))
            if said:
                return key_part(match.group("thing")), said
    match = _RUNS_ON_RE.match(text)
    named = NAMED_VERSION_RE.match(match.group("value")) if match and _named_tool(match) else None
    if match and named:
        return key_part(match.group("thing")), {version_attribute(named.group(1)): match.group("value")}
    runtime = runtime_version(text)
    if runtime:
        return key_part(runtime_name(runtime[0])), {"version": runtime[1]}
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


def runtime_version(sentence: str) -> tuple[str, str] | None:
    """``(runtime, version)`` for a runtime's version as a team says it (the forms above), else None. Only the
    version alone: "We run Node 18 for the legacy service" or "… and Python 3.11" says more than that."""
    text = sentence.strip()
    for pattern in (_RUNS_VERSION_RE, _CHANGED_TO_VERSION_RE, _CHANGED_VERSION_RE, _VERSION_NOW_RE):
        match = pattern.match(text)
        if not match or match.group("name").lower() in _NOT_VALUES:
            continue
        old = match.groupdict().get("old")
        if old and old.lower() != match.group("name").lower():
            return None  # "from Node 18 to Deno 2": another runtime, not a version of this one
        return match.group("name"), match.group("version")
    return None


def _named_tool(match: re.Match[str]) -> bool:
    """A named tool for a purpose: the value (and the one it replaced) is a name, not a weekday, a person's
    pronoun or a number; the purpose is a thing ("it", "everything" are none)."""
    value, thing = match.group("value"), match.group("thing")
    old = match.groupdict().get("old")
    if value.split()[0].lower() in _NOT_VALUES or (old and old.split()[0].lower() in _NOT_VALUES):
        return False
    return thing.split()[0].lower() not in _NOT_THINGS and not re.search(r"\d", value.split()[0])


def _tool_attributes(match: re.Match[str], *, replacing: bool) -> dict[str, str]:
    """``tool``: the one tool for a purpose a team serves with one at a time (any statement), or names the
    tool for (said as a replacement). Any other purpose may have several ("the frontend": React and
    Tailwind), so each tool has its own attribute, ``tool-react`` = ``in use``; a replacement naming the old
    one says ``tool-react`` = ``replaced by Vue``, which retires exactly that tool's statement (and not
    ``tool-vue``: "We use Vue for the frontend" said before it would be a second memory of that value)."""
    value, purpose = match.group("value"), key_part(match.group("thing"))
    old = match.groupdict().get("old")
    said: dict[str, str] = {}
    if purpose in ONE_TOOL_PURPOSES or (replacing and purpose in TOOL_PURPOSES):
        said["tool"] = value
    if purpose in ONE_TOOL_PURPOSES:
        return said
    if match.re is _MOVED_RE and not old and not said:
        return {}  # "We moved the office to Berlin": moved where, not a tool taken up
    if old:
        said[_tool_attribute(old)] = f"replaced by {value}"
    else:
        said[_tool_attribute(value)] = IN_USE
    return said


def _tool_attribute(tool: str) -> str:
    """The attribute saying whether one tool serves a purpose that may have several ("tool-react")."""
    return key_part(f"tool {tool}")


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
