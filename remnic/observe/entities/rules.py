"""Which entities a memory is about, by rules (pure): people, projects, tools and places.

From the frontmatter (trusted, typed):

- ``entityRef: person-priya-raman`` (a ``<type>-<slug>`` id) or a list of them; a plain
  name (``entityRef: Priya``) is typed by the text rules, else ``other``;
- ``project: atlas`` (what a coding context writes), and ``people``, ``projects``, ``tools``,
  ``places`` lists;
- tags spelt ``person:ana``, ``project:atlas``, ``tool:docker``, ``place:lisbon``.

From the text, only where a cue makes the type plain (precision over recall):

- **tools**: a known tool's name (``docker``, ``postgres``, ``vim`` …, plus ``extra_tools``),
  or a capitalised or code-like name after *using*, *switched to*, *migrated to*, *installed*,
  after a technical verb's *with* ("We deploy staging with Flux"), or set against a tool ("Flux,
  not ArgoCD", "replaced ArgoCD with Flux"): found before the people, so *with* makes no person of it.
  A name of more words stays whole ("We use Argo CD", "GitHub Actions"). A plain capitalised name there
  that is a common first name, a person cue's elsewhere in the text, or beside a word of people (a
  babysitter, a tutor) is a person: "we switched to Tom", "deployed the app with Ben";
- **places**: a capitalised name after *lives/moved/based/located/office/trip/visited … in|to|at|from*;
- **projects**: a capitalised or code-like name (``ledger-api``) before or after *project*,
  or before *service*; any name before *repo*, *repository*, *codebase* (``the webapp repo``);
- **people**: a capitalised name before a verb people do (*prefers*, *said*, *leads*,
  *approved* …), a possessive of a relation (*Ana's manager*), or after *my friend/manager/
  wife …*, *with*, *asked*, *told*, *thanks*; a role held ("Kofi is the billing service owner",
  "Our team lead is Ewa", "Kofi replaced Dana as …"), a role attribute's value (``owner: Kofi``),
  the observer's "Ana and others" (a speaker's "we"). All-capital words of two to four letters (*CEO*,
  *QA*, *API*) are roles or acronyms, not people (a ``person:`` tag still makes one).

Words that are never names (days, months, pronouns, sentence openers) are refused. Once a
name is known from one memory, every other memory that spells it out names it too
(:func:`known_mentions`): "Priya Raman is on call" needs no cue once "Priya Raman approved …"
made her a person.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .lexicon import COMMON_FIRST_NAMES, KNOWN_TOOLS
from .lexicon import GENERIC as _GENERIC
from .lexicon import GROUP_WORDS as _GROUP_WORDS
from .lexicon import NEVER_NAMES as _NEVER_NAMES
from .lexicon import VENDORS as _VENDORS
from .lexicon import words as _words
from .page import ENTITY_TYPES, fold, name_key

_UPPER = [i for r in (range(0x3000), range(0xA640, 0xA800), range(0xFF00, 0xFFF0)) for i in r if chr(i).isupper()]
"""Every uppercase letter of the cased scripts (Latin, Greek, Cyrillic, Armenian, Georgian …):
Python's ``re`` has no ``\\p{Lu}``."""


def _char_class(points: list[int]) -> str:
    """A character class of sorted code points with runs as ranges: it appears dozens of times in the
    name patterns, and parsing 1,169 single letters each time cost ~0.1 s of every command's start-up."""
    parts, start = [], 0
    for i in range(1, len(points) + 1):
        if i == len(points) or points[i] != points[i - 1] + 1:
            first, last = re.escape(chr(points[start])), re.escape(chr(points[i - 1]))
            parts.append(first if i - start == 1 else f"{first}{last}" if i - start == 2 else f"{first}-{last}")
            start = i
    return f"[{''.join(parts)}]"


_U = _char_class(_UPPER)
_L = rf"(?:(?!{_U})[^\W\d_])"
"""A letter that is not uppercase (lowercase, or of a script without case)."""
_PART = rf"(?:{_U}(?:['’]{_U})?{_L}+|{_U}{{2,}}{_L}*)"
_NAME = rf"(?<![\w-])(?<!\w['’]){_PART}(?:-{_PART})*(?![\w-])"
"""A capitalised word, its parts joined by hyphens ("Mary-Jane", "Kierkegaard-Holm", "Zoë"), an apostrophe
before a capital inside it ("O'Neil", "D’Angelo")."""
_FULL_NAME = rf"({_NAME}(?:[ \t]+{_NAME})?)"
"""One or two names on one line: a line break ends a name."""
_CODE_NAME = r"([A-Za-z0-9][\w.+#-]*[\w+#])"
_ACRONYM = re.compile(r"^[A-Z]{2,4}$")
"""CI, QA, CEO, CTO, HR, API: roles and acronyms, never a person by the text rules (a ``person:`` tag can say so)."""
_PERSON_VERBS = (
    "prefers|preferred|likes|liked|loves|loved|hates|hated|wants|wanted|needs|needed|said|says|told|asked|"
    "thinks|thought|owns|owned|leads|led|manages|managed|approved|reviewed|joined|left|works|worked|lives|lived|"
    "moved|mentioned|suggested|decided|agreed|recommended|wrote|writes|runs|ran|is allergic|enjoys|enjoyed|"
    "plays|played|studies|studied|teaches|taught|signed|promised|shipped|fixed|built|broke|pinged|emailed|"
    "called|met|visited|celebrated|adopted|started|finished|quit|prepared|cooked|painted|drives|drove|went|goes|"
    "gave|got|bought|saw|made|took|came|attended|received|shared|posted|sent|felt|feels|hopes|hoped|plans|planned"
)
_RELATIONS = (
    "friend|colleague|coworker|co-worker|manager|boss|wife|husband|partner|girlfriend|boyfriend|brother|sister|"
    "mother|father|mom|mum|dad|son|daughter|teammate|lead|mentor|cousin|uncle|aunt|neighbor|neighbour|client|"
    "roommate|grandmother|grandfather|grandma|grandpa"
)
_SAYING = "said|says|asked|told|wrote|writes|mentioned|suggested"


@functools.cache
def _name_patterns() -> tuple[tuple[re.Pattern[str], ...], re.Pattern[str]]:
    """The person patterns and the place pattern, compiled on first use: each holds the uppercase class
    sixteen times and costs ~15 ms to compile, which every command's start-up paid before."""
    persons = (
        # "Random thought: …" is a label, not a person thinking; "Priya said: …" is a person speaking.
        re.compile(rf"{_FULL_NAME}[ \t]+(?:(?:{_SAYING})\b|(?:{_PERSON_VERBS})\b(?!:))"),
        re.compile(rf"{_FULL_NAME}['’]s\s+(?:{_RELATIONS}|birthday|team|family|kids?|dog|cat|car|house|wedding)\b"),
        re.compile(rf"\b(?:my|our|his|her|their)\s+(?:{_RELATIONS})[ \t]+{_FULL_NAME}"),
        re.compile(rf"\b(?:with|asked|ask|told|tell|thanks|thank|ping|pinged|cc|emailed|called|met)[ \t]+{_FULL_NAME}"),
    )
    place = re.compile(
        r"\b(?:lives?|lived|living|moved|moving|relocat(?:ed|ing)|based|located|born|grew up|offices?|headquartered|"
        r"trip|travel(?:l?ed|l?ing)?|flew|fly(?:ing)?|visit(?:ed|ing)?|vacation(?:ed|ing)?|holiday)\s+"
        rf"(?:in|to|at|from|near)[ \t]+({_NAME}(?:[ \t]+{_NAME})?)"
    )
    return persons, place


PROJECT_RES = (
    # (pattern, whether the name must look like a name: "project plan" and "billing service" are not projects)
    (re.compile(rf"\b(?:project|repo|repository|codebase)\s+{_CODE_NAME}"), True),
    (re.compile(rf"\b{_CODE_NAME}\s+(?:project|service)\b"), True),
    (re.compile(rf"\b{_CODE_NAME}\s+(?:repo|repository|codebase|monorepo)\b"), False),
)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*$.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_SENTENCE_START = re.compile(r"(?:^|[.!?][\"')\]]*[ \t]+|^[ \t]*(?:#{1,6}|[-*+>]|\d+[.)]|- \[.\])[ \t]+)$")
_LAST_NAME_WORD = rf"({_NAME})[ \t]+$"
"""Compiled on first use (:func:`_rx`): it holds the uppercase class, ~5 ms to compile."""
TOOL_RE = re.compile(
    r"\b(?:using|uses|use|used|switched(?: over)? to|switching(?: over)? to|switch(?: over)? to|migrated to|"
    rf"migrating to|migrate to|installed|adopted)\s+{_CODE_NAME}"
)
_TECH_VERBS = (
    "deploy|deploys|deployed|deploying|provision|provisions|provisioned|provisioning|orchestrate|orchestrates|"
    "orchestrated|containerize|containerized|containerise|containerised|compile|compiles|compiled|lint|lints|linted|"
    "monitor|monitors|monitored|monitoring|instrument|instruments|instrumented|benchmark|benchmarked|scaffold|"
    "scaffolded|bundle|bundles|bundled"
)
"""Verbs whose "… with X" names the means, not a companion ("We deploy staging with Flux"): X is a tool.
Verbs people also do together (*build*, *run*, *host*) are left out: "built a treehouse with Dad"."""
_CONTRASTS = r"(?:,?[ \t]*not|[ \t]+instead[ \t]+of|[ \t]+rather[ \t]+than|[ \t]+in[ \t]+place[ \t]+of)"
"""What sets one choice against another ("Flux, not ArgoCD", "Flux instead of ArgoCD"): both are of one kind."""
_ROLES = (
    "owner|owners|lead|leader|manager|maintainer|maintainers|head|director|contact|point of contact|approver|"
    "reviewer|boss|admin|administrator|architect|engineer|developer|designer|founder|co-founder|chair|champion|"
    "sponsor|on-call|coordinator|organizer|organiser|mentor|captain|pm|ceo|cto|cfo|coo|vp"
)
"""Roles a person holds ("Kofi is the billing service owner", "Our team lead is Ewa")."""
_ROLE_ATTRIBUTES = _words("owner lead manager maintainer contact boss admin director approver reviewer mentor assignee")
"""``structuredAttributes`` keys whose value is a person (the observer writes ``owner: Kofi``)."""
_ROLE_VALUE = re.compile(r"^[^\W\d_][\w'’-]*(?:[ \t]+[^\W\d_][\w'’-]*){0,2}$")


def _gate(*alternatives: str) -> frozenset[str]:
    return frozenset(w for a in alternatives for w in a.split("|"))


_ROLE_GATE = _gate(_ROLES)
_REPLACING = "replace|replaces|replaced|replacing"
_ROLE_RES = (
    # (words one of which the text must hold, the pattern): each pattern holds the uppercase class, so it
    # is compiled only once a text could match it, and run only on such a text.
    # A role held: "Kofi is the billing service owner", "Our team lead is Ewa", "Kofi replaced Dana as …".
    (
        _ROLE_GATE,
        rf"{_FULL_NAME}[ \t]+(?:is|was|will be|became|becomes|remains|has been)[ \t]+(?:now[ \t]+|still[ \t]+)?"
        rf"(?i:the|our|my|their|his|her|its|a|an)[ \t]+(?:[\w-]+[ \t]+){{0,3}}?(?:{_ROLES})(?![\w-])"
        r"(?![ \t]+(?!(?:of|for|on|at|in|now|since|again|until|from|and|but|too|as|who|while)\b)[a-z])",
    ),
    (
        _ROLE_GATE,
        rf"\b(?i:the|our|my|their|his|her|its)[ \t]+(?:[\w-]+[ \t]+){{0,3}}?(?:{_ROLES})[ \t]+"
        rf"(?:is|was|will be|has been|became|remains)[ \t]+(?:now[ \t]+|still[ \t]+)?{_FULL_NAME}",
    ),
    (
        _gate(_REPLACING, "succeeded|succeeds|relieved|took over from|takes over from"),
        rf"{_FULL_NAME}[ \t]+(?:replaced|replaces|will replace|is replacing|succeeded|succeeds|relieved|"
        rf"took over from|takes over from)[ \t]+{_FULL_NAME}[ \t]+as\b",
    ),
    (
        _gate("stepped|steps|step|took over|takes over"),
        rf"{_FULL_NAME}[ \t]+(?:(?:stepped|steps|will step)[ \t]+(?:in|up|down)|took over|takes over)[ \t]+as\b",
    ),
    (
        _gate("leaving|joining|retiring|no longer works"),
        rf"{_FULL_NAME}[ \t]+(?:is|was)[ \t]+(?:leaving|joining|retiring)\b|{_FULL_NAME}[ \t]+no longer works\b",
    ),
    # The observer's rewrite of a speaker's "we" ("Ana and others deploy …"): Ana spoke.
    (_gate("and others"), rf"{_FULL_NAME}[ \t]+and[ \t]+others\b"),
)
_C = rf"\b{_CODE_NAME}"
_MEANS = (
    _gate(_TECH_VERBS),
    rf"\b(?i:(?P<verb>{_TECH_VERBS}))\b(?P<object>[^.;:!?\n]{{0,60}}?)\bwith[ \t]+(?P<name>{_FULL_NAME[1:-1]})",
)
"""A name after a technical verb's *with*: a tool ("We deploy staging with Flux") when what the verb acts on
is technical (:data:`_TECH_OBJECTS`, or named as code is), not a bake sale or a garden."""
_TECH_OBJECTS = _words(
    """
    staging prod production preview dev sandbox cluster clusters service services microservice microservices
    app apps api apis server servers backend backends frontend frontends build builds release releases code
    codebase repo repos monorepo infra infrastructure pipeline pipelines container containers pod pods node
    nodes database databases db dbs website websites webapp endpoint endpoints metrics logs traces latency
    uptime assets javascript js css typescript dependencies deps packages package modules module binary
    binaries image images vm vms instance instances environment environments workloads queues alerts
    dashboards tests suite stack deployments deployment changes branch branches
    """
)
_BARE_MEANS = frozenset(w for w in _TECH_VERBS.split("|") if not w.startswith(("monitor", "bundl", "benchmark")))
"""Verbs technical even with no object ("We deploy with Flux"); one monitors or bundles things of any kind."""
_CODE_WORD = re.compile(r"[a-z][A-Z]|\d|\w[./_]\w|\b[A-Z]{2,5}\b")
_PAIRS = (
    (_gate("not|instead of|rather than|in place of"), rf"{_C}{_CONTRASTS}[ \t]+{_CODE_NAME}"),
    (
        _gate(_REPLACING, "swap|swaps|swapped|swapping"),
        rf"\b(?:replac(?:e|es|ed|ing)|swap(?:s|ped|ping)?)[ \t]+{_CODE_NAME}[ \t]+(?:with|for|by)[ \t]+{_C}",
    ),
    (_gate(_REPLACING), rf"{_C}[ \t]+(?:replaced|replaces|will replace|is replacing)[ \t]+{_CODE_NAME}(?![ \t]+as\b)"),
    (_gate("from"), rf"\bfrom[ \t]+{_CODE_NAME}[ \t]+to[ \t]+{_C}"),
)
"""Pairs of which both are of one kind once one is a tool ("Flux, not ArgoCD", "replaced ArgoCD with Flux",
"from Jenkins to Buildkite")."""
_LOWER_WORDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


class _Gates:
    """A text's lowercase words and text, to test the gates of the patterns cheaply (a set lookup per word,
    where a case-blind alternation of dozens of words scans every position)."""

    def __init__(self, text: str) -> None:
        self.low = text.lower()
        self.words = frozenset(_LOWER_WORDS.findall(self.low))

    def finds(self, gated: tuple[frozenset[str], str], text: str) -> Iterator[re.Match[str]]:
        """The matches of a gated pattern: none, and the pattern not compiled, when the text fails its gate."""
        gate, pattern = gated
        passed = any(w in self.low if " " in w else w in self.words for w in gate)
        return _rx(pattern).finditer(text) if passed else iter(())


@functools.cache
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_TAG_TYPES = {"person": "person", "people": "person", "project": "project", "tool": "tool", "place": "place"}
_LIST_KEYS = {"people": "person", "persons": "person", "projects": "project", "tools": "tool", "places": "place"}
_TYPED_ID = re.compile(rf"^({'|'.join(ENTITY_TYPES)})-(.+)$")


@dataclass(frozen=True)
class Mention:
    type: str
    name: str
    """The name as written (display spelling)."""
    how: str
    """frontmatter | id (the name read back from a ``<type>-<slug>`` id: its spelling a guess) | text | known |
    means (a tool by where it stands, after a technical verb's *with*: a person if another memory says so)"""


def prose(text: str) -> str:
    """The text the rules read: NFC (a decomposed "José" is one word), fenced code blocks left out
    (code is not prose: ``python`` in a fence names no tool)."""
    return _FENCE.sub("\n", unicodedata.normalize("NFC", text))


def _clean(name: str) -> str | None:
    name = name.strip().strip(".,;:!?\"'()[]")
    words = name.split()
    if not words or len(name) > 80:
        return None
    if words[0].lower() in _NEVER_NAMES:
        words = words[1:]
    if not words or all(w.lower() in _NEVER_NAMES or w.lower() in _GROUP_WORDS for w in words):
        return None
    return " ".join(words)


def _group(name: str) -> bool:
    """Whether a capitalised phrase names a department, team or meeting (never a person)."""
    return any(part in _GROUP_WORDS for word in name.lower().split() for part in word.split("-"))


def _inside_longer_name(text: str, start: int) -> bool:
    """Whether the capitalised word at ``start`` follows another capitalised word on its line that is
    not a sentence's first word, a known tool or a maker: "Café Kafka", "Franz Kafka" (not "Apache
    Kafka", not "Use Postgres")."""
    line = text[text.rfind("\n", 0, start) + 1 : start]
    m = _rx(_LAST_NAME_WORD).search(line)
    if m is None:
        return False
    word = m.group(1).lower()
    if word in KNOWN_TOOLS or word in _VENDORS or word in _NEVER_NAMES:
        return False
    return not _SENTENCE_START.search(line[: m.start()])


def _code_like(name: str) -> bool:
    """A name a person would not write in prose unless it named something: Capitalised, or with a
    digit, '-', '_', '.' inside."""
    return name[:1].isupper() or bool(re.search(r"[\d_.-]", name.strip(".-_")))


def _from_ref(ref: str) -> Mention | None:
    m = _TYPED_ID.match(ref.strip())
    if m:
        name = " ".join(w[:1].upper() + w[1:] for w in m.group(2).split("-") if w)
        return Mention(m.group(1), name or ref, "id" if name else "frontmatter")
    cleaned = _clean(ref)
    return Mention("other", cleaned, "frontmatter") if cleaned else None


def _supersession_key(ref: str, fm: Mapping[str, Any]) -> bool:
    """Whether a plain ``entityRef`` is the key the observer (or a review's approval) made up so a later
    value replaces this one ("staging-db" with ``structuredAttributes``): slug-shaped, beside the
    attributes. It names no entity of its own: what it is about is named by the text rules or not at all
    ("Alice said the ledger …" is no entity)."""
    attributes = fm.get("structuredAttributes")
    slug = re.sub(r"[\s-]+", "-", ref.strip().lower()).strip("-")  # as ``observe.records.key_part`` makes it
    return isinstance(attributes, Mapping) and bool(attributes) and ref == slug and not _TYPED_ID.match(ref)


def frontmatter_mentions(fm: Mapping[str, Any]) -> list[Mention]:
    out: list[Mention] = []
    refs = fm.get("entityRef")
    for ref in refs if isinstance(refs, list) else [refs]:
        if isinstance(ref, str) and ref.strip() and not _supersession_key(ref, fm):
            found = _from_ref(ref)
            if found:
                out.append(found)
    project = fm.get("project")
    if isinstance(project, str) and project.strip():
        out.append(Mention("project", project.strip(), "frontmatter"))
    for key, kind in _LIST_KEYS.items():
        values = fm.get(key)
        for value in values if isinstance(values, list) else [values] if isinstance(values, str) else []:
            if isinstance(value, str) and _clean(value):
                out.append(Mention(kind, _clean(value) or value, "frontmatter"))
    for tag in fm.get("tags") or []:
        head, sep, value = str(tag).partition(":")
        if sep and head.lower() in _TAG_TYPES and value.strip():
            out.append(Mention(_TAG_TYPES[head.lower()], value.strip(), "frontmatter"))
    return out


def _role_holders(attributes: object) -> list[Mention]:
    """The people a fact's role attributes name (``owner: Kofi``, ``lead: Ewa``, as the observer keys
    "Kofi replaced Dana as the billing service owner"): a capitalised name of one to three words, not a
    team ("Team Orion"), a tool or an acronym."""
    if not isinstance(attributes, Mapping):
        return []
    out = []
    for key, value in attributes.items():
        if str(key).lower() not in _ROLE_ATTRIBUTES or not isinstance(value, str):
            continue
        name = _clean(value)
        if (
            name
            and _ROLE_VALUE.match(name)
            and all(w[:1].isupper() and not _ACRONYM.match(w) for w in name.split())
            and not _group(name)
            and name.lower() not in KNOWN_TOOLS
        ):
            out.append(Mention("person", name, "frontmatter"))
    return out


def text_mentions(text: str, extra_tools: Iterable[str] = ()) -> list[Mention]:
    text = prose(text)
    tools = KNOWN_TOOLS | {t.lower() for t in extra_tools}
    out: list[Mention] = []
    claimed: set[str] = set()

    def add(kind: str, raw: str) -> None:
        name = _clean(raw)
        if not name or name.lower() in claimed:
            return
        if kind != "tool" and name.lower() in tools:
            kind = "tool"
        claimed.add(name.lower())
        out.append(Mention(kind, name, "text"))

    for found in re.finditer(r"[A-Za-z][\w+#.-]*[\w+#]|[A-Za-z]", text):
        word = found.group()
        if word.lower() in tools and word.lower() not in claimed:
            if word[:1].isupper() and _inside_longer_name(text, found.start()):
                continue
            claimed.add(word.lower())
            out.append(Mention("tool", word, "text"))
    gates = _Gates(text)
    person_res, place_re = _name_patterns()
    cued = [m for rx in person_res for m in rx.finditer(text)]
    for m in TOOL_RE.finditer(text):
        start, end = m.start(1), m.end(1)
        while _code_like(text[start:end]):
            goes_on = _NAME_GOES_ON.match(text, end)  # it matches at least nothing
            more = [w.rstrip(".") for w in (goes_on.group() if goes_on else "").split()]
            while more and more[-1].lower() in _NEVER_NAMES:  # "switched to Postgres Monday"
                more.pop()
            name = " ".join([text[start:end], *more])
            add("person" if _a_persons(name, text, cued, tools) else "tool", name)
            # The list goes on: "We use Docker, Terraform and GitHub Actions".
            after = _LIST_NEXT.match(text, goes_on.end() if goes_on and more else end)
            if after is None or after.group(1).lower() in _NEVER_NAMES:
                break
            start, end = after.span(1)
    roles = [m for gated in _ROLE_RES for m in gates.finds(gated, text)]
    _tool_context(text, gates, tools, add, claimed, out, cued + roles)
    for m in place_re.finditer(text):
        add("place", m.group(1))
    for rx, strict in PROJECT_RES:
        for m in rx.finditer(text):
            name = m.group(1)
            if name.lower() in _NEVER_NAMES or name.lower() in _GENERIC or (strict and not _code_like(name)):
                continue
            add("project", name)
    for m in cued + roles:
        for found_name in (g for g in m.groups() if g):
            name = " ".join(w for w in found_name.split() if not _ACRONYM.match(w))
            if name and not _group(name):
                add("person", name)
    # A tool's name inside a person's ("Franz Kafka wrote") is the person's.
    in_names = {w.lower() for m in out if m.type == "person" for w in m.name.split()}
    return [m for m in out if m.type != "tool" or (m.name.lower() not in in_names and not _part_of_tool(m, out, text))]


_LIST_NEXT = re.compile(rf"(?:[ \t]*,[ \t]*(?:and[ \t]+|or[ \t]+)?|[ \t]+(?:and|or|&)[ \t]+){_CODE_NAME}")
_NAME_GOES_ON = re.compile(r"(?:[ \t]+(?:[A-Z]{2,5}|[A-Z][a-z]*[A-Z][\w+#.-]*|[A-Z][a-z][\w+#.-]*)(?![\w'’-])){0,2}")
"""The rest of a tool's name of more words ("Argo CD", "GitHub Actions", "Google Cloud Run")."""
_PERSON_CONTEXT = re.compile(
    r"\b(?i:babysit\w*|sitter|nanny|tutor|coach|trainer|doctor|dentist|therapist|vet|plumber|cleaner|teacher"
    r"|pediatrician|paediatrician|accountant|lawyer|mechanic|hairdresser|barber|realtor|contractor|electrician"
    r"|caregiver|carer|housekeeper|landlord|nurse|midwife|instructor)\b"
)


def _a_persons(name: str, text: str, cued: list[re.Match[str]], tools: frozenset[str], at: int = -1) -> bool:
    """Whether a name a tool cue stands before ("we switched to Tom", "deployed the app with Ben") is a person's:
    a plain capitalised word, no known tool, that is a common first name, that a person cue names elsewhere
    in the text, or that a word of people (a babysitter, a tutor, "she") stands beside. A full name of such
    words is a person's when its first name is ("deployed with Ben Carter")."""
    parts = name.split()
    if len(parts) > 2 or not all(_rx(rf"{_U}{_L}+").fullmatch(p) for p in parts) or name.lower() in tools:
        return False
    if any(p.lower() in tools for p in parts):
        return False
    said = {g.lower() for p in cued for i, g in enumerate(p.groups(), 1) if g and p.start(i) != at}
    first = parts[0].lower()
    return first in COMMON_FIRST_NAMES or name.lower() in said or bool(_PERSON_CONTEXT.search(text))


def _part_of_tool(mention: Mention, out: list[Mention], text: str) -> bool:
    """Whether every time the text says the tool it says it inside a longer tool's name: "Argo" and "CD" in
    "Argo CD" are that one tool."""
    longer = [m.name for m in out if m.type == "tool" and len(m.name) > len(mention.name) and " " in m.name]
    if not longer:
        return False
    spans = [m.span() for n in longer for m in re.finditer(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)]
    own = [m.span() for m in re.finditer(rf"(?<![\w-]){re.escape(mention.name)}(?![\w-])", text)]
    return bool(own) and all(any(a <= s and e <= b for a, b in spans) for s, e in own)


def _means_tool(m: re.Match[str], people: list[re.Match[str]]) -> bool:
    """Whether the name after a technical verb's *with* is a tool: what the verb acts on is technical
    ("We deploy staging with Flux", "We deploy with Flux"; not "I monitored the bake sale with Zoe") and
    nothing else in the memory says the name is a person's ("… with Zoe. Zoe said …")."""
    obj = m.group("object").split()
    technical = (
        any(w.lower().strip(",'’\"()") in _TECH_OBJECTS for w in obj)
        or bool(_CODE_WORD.search(m.group("object")))
        or (not obj and m.group("verb").lower() in _BARE_MEANS)
    )
    name = m.group("name").lower()
    said = {g.lower() for p in people for i, g in enumerate(p.groups(), 1) if g and p.start(i) != m.start("name")}
    return technical and not any(name == g or name in g.split() or g in name.split() for g in said)


def _tool_context(
    text: str,
    gates: _Gates,
    tools: frozenset[str],
    add: Callable[[str, str], None],
    claimed: set[str],
    out: list[Mention],
    people: list[re.Match[str]],
) -> None:
    """Names that stand as tools where they stand: after a technical verb's *with* ("We deploy staging with
    Flux"), or set against a tool ("Flux, not ArgoCD"). Found before the person cues, so *with* does not
    make Flux a person."""
    for m in gates.finds(_MEANS, text):
        name = _clean(m.group("name"))
        if name and _means_tool(m, people) and name.lower() not in claimed and name.lower() not in tools:
            if _a_persons(name, text, people, tools, m.start("name")):
                continue  # "deployed the app with Ben": the person cue after it types Ben
            claimed.add(name.lower())
            out.append(Mention("tool", name, "means"))
    for _ in range(2):  # a pair can make a tool of a name the next pair sets against another
        before = len(out)
        for gated in _PAIRS:
            for m in gates.finds(gated, text):
                names = [_clean(g) or "" for g in m.groups()]
                is_tool = [
                    n.lower() in tools or any(x.type == "tool" and x.name.lower() == n.lower() for x in out)
                    for n in names
                ]
                for name, tool in zip(names, is_tool, strict=True):
                    if name and not tool and any(is_tool) and _code_like(name) and name.lower() not in claimed:
                        add("tool", name)
        if len(out) == before:
            break


def mentions(fm: Mapping[str, Any], text: str, extra_tools: Iterable[str] = ()) -> list[Mention]:
    """Every entity a memory names, frontmatter first; one mention per (type, name), names compared
    without case or accents ("Tomás" is "Tomas"). A name read back from an id takes the spelling
    the text writes ("person-tomas-ortega" beside "Tomás Ortega owns …" is Tomás Ortega)."""
    seen: set[tuple[str, str]] = set()
    out = []
    typed = frontmatter_mentions(fm) + _role_holders(fm.get("structuredAttributes"))
    by_text = text_mentions(text, extra_tools)
    written = {name_key(m.name): m for m in by_text}
    for m in typed:
        same = written.get(name_key(m.name))
        if same is not None and m.type == "other":
            m = Mention(same.type, m.name, m.how)
        if same is not None and m.how == "id" and same.type == m.type:
            m = Mention(m.type, same.name, "frontmatter")
        key = (m.type, name_key(m.name))
        if key not in seen:
            seen.add(key)
            out.append(m)
    for m in by_text:
        key = (m.type, name_key(m.name))
        if key not in seen and not any(k[1] == key[1] for k in seen):
            seen.add(key)
            out.append(m)
    return out


def known_mentions(text: str, known: Mapping[str, str]) -> list[Mention]:
    """Mentions of names already known (name → type): capitalised names as written, code-like and
    lowercase names of four or more characters in any case; whole words only; accents aside
    ("Tomas Ortega" known, "Tomás Ortega" written). A known tool's name inside a longer name
    ("Café Kafka") is not the tool, as in :func:`text_mentions`."""
    names = sorted((n for n in known if len(n) >= 3 and (n[:1].isupper() or len(n) >= 4)), key=len, reverse=True)
    if not names or not text:
        return []
    text = unicodedata.normalize("NFC", text)
    plain = fold(text, same_length=True)  # positions in ``plain`` are positions in ``text``
    out: list[Mention] = []
    seen: set[str] = set()
    forms = {fold(n, same_length=True): n for n in names}
    exact = [re.escape(f) for f in forms if f[:1].isupper()]
    folded = [re.escape(f) for f in forms if not f[:1].isupper()]
    patterns = []
    if exact:
        patterns.append(re.compile(r"(?<![\w-])(" + "|".join(exact) + r")(?![\w-])"))
    if folded:
        patterns.append(re.compile(r"(?<![\w-])(" + "|".join(folded) + r")(?![\w-])", re.IGNORECASE))
    lowered = {f.lower(): n for f, n in forms.items()}
    for rx in patterns:
        for m in rx.finditer(plain):
            name = lowered.get(m.group(1).lower(), m.group(1))
            spelt = text[m.start(1) : m.end(1)]
            kind = known.get(name, "other")
            if kind == "tool" and spelt[:1].isupper() and _inside_longer_name(text, m.start(1)):
                continue
            if name_key(name) not in seen:
                seen.add(name_key(name))
                out.append(Mention(kind, spelt, "known"))
    return out
