"""Rules extraction: a turn's sentences become standalone :class:`~.records.ExtractedFact` candidates.

Per sentence: noise goes first (questions, greetings and acknowledgements, exclamations, the
assistant narrating its work, requests about the task at hand, remarks addressed to the listener),
then the first category cue in Remnic's priority order names the category (:mod:`.cues`); a
sentence with no cue is a ``fact`` only when it is a first-person statement, or a statement with
specifics (a number, a name, an identifier). The kept sentence is rewritten to stand alone
(:mod:`.normalize`), tagged from its names and keywords, and given an entity/attribute key when
it states a value ("the staging DB port is now 5433" → ``staging-db`` / ``port`` = ``5433``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from remnic.config import ObserveSettings
from remnic.index.text import normal_form

from . import cues
from .commitments import commitment_key, completion_said
from .confidence import confidence_for
from .cues import words
from .dates import names_a_date
from .keys import split_value_statement, value_key
from .letters import LOWER, wide_re
from .normalize import standalone, strip_markers, without_vocative
from .records import ExtractedFact, Turn
from .secrets import redact_secrets
from .text import sentence_units, sentences_of
from .transient import after_chatter

# What the assistant may tell us: decisions and rules it states, and specifics about the system.
_ASSISTANT_CATEGORIES = frozenset({"decision", "principle", "rule", "entity", "procedure", "fact"})
# A request about the task at hand is still kept when it states a lasting rule or choice.
_DURABLE_REQUEST_CATEGORIES = frozenset({"principle", "preference", "correction", "decision"})
_TO_LISTENER_CATEGORIES = frozenset({"principle", "correction"})
# What a general remark about "us" may be classed as by its words alone ("let's keep …" reads as a decision).
_REMARK_CATEGORIES = frozenset({"fact", "decision", "moment"})
# What a statement of nothing but function words may be classed as ("I love it" names nothing it loves).
_WORDLESS_CATEGORIES = frozenset({"fact", "moment", "preference"})
# Words that do not make a remark to the listener say anything more ("I'm glad …", "… for you").
_LISTENER_FILLER = words("you your you're yours yourself you've you'll you'd glad happy here")
_NAMED_RE = wide_re(r"\b[A-Z][a-z]+")
_VOCATIVE_NAME_RE = wide_re(r"^\W*\w+|\b[A-Z][\w'-]*(?=\s*(?:[,;:!.?]|$))")
_WHEN_RE = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|next|last|ago|week|weekend|month|year|monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday|morning|evening|soon|later)\b",
    re.I,
)
_SPECULATION_RE = re.compile(r"\b(would|could|might|may|should|probably|maybe|perhaps|likely)\b", re.I)

STOPWORDS = words("""a an the and or but if then so of to in on at by for with from as is are was were be been being am do does
    did have has had having it its this that these those there here i me my mine we our ours us you your yours he him
    his she her hers they them their what which who whom whose when where why how all any both each few more most
    other some such no nor not only own same than too very can will just should now also really about into over
    after before again further once would could might must shall may get got going go went gonna like one two
    user assistant themself thing things lot lots much many well still even back way make made every always never
    prefer prefers preferred like likes love loves think thinks decided decide will going want wants need needs
    feel feels felt given pretty keen really great good nice some something anything everything sure stuff""")
_NON_TAG_NAMES = words("""monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december i the a an we our it this that""")
_WORD_RE = wide_re(r"[A-Za-z][\w.+#-]*[\w+#]|[A-Za-z]")
_PROPER_RE = wide_re(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*)")
MAX_TAGS = 5


# "Thankfully, they enjoyed it": a sentence adverb before the subject says how the speaker takes it.
_SENTENCE_ADVERB_RE = re.compile(r"^[A-Za-z]+ly,\s+")
# "The kids loved it", "These trails are steep": a definite description, like a pronoun, names what
# was already said ("the" + a plain noun; "The Wolves", a name, is not one).
_DEFINITE_SUBJECT_RE = re.compile(
    r"^(?:[Tt]he|[Tt]hese|[Tt]hose)\s+(?:[a-z][\w'-]*\s+){0,2}?[a-z][\w'-]*\s+(?:is|are|was|were|has|have|had|did|does|do|can|could|will|would|[a-z]+ed|[a-z]+s)\b"
)

# A lowercase name of one or two words (not a handle such as "olga_k" or "dev42").
_LOWER_NAME_RE = re.compile(rf"^[{LOWER}][{LOWER}'-]+(?: [{LOWER}][{LOWER}'-]+)?$")
# A reply that asks back without its "?" ("how is the users table laid out"), or tells the other
# speaker what to do ("not yet, first fix the lint errors"): no answer to their question.
_INTERROGATIVE_RE = re.compile(
    r"^(?:(?:how|what|why|where|when|who|which)(?:'s|'re|\s+(?:is|are|was|were|do|does|did|can|could|should|would"
    r"|will|has|have|about)\b)|(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have|isn't|aren't"
    r"|don't|doesn't|didn't|can't|won't)\s+(?:i|you|we|they|he|she|it|there|this|that|these|those|the|my|our|a|an)\b)",
    re.I,
)
_LEADING_REPLY_RE = re.compile(r"^(?:(?:yes|yeah|yep|no|nope|nah|not yet|ok|okay|sure)\b[\s,.!;:—–-]*)+", re.I)

# Something the speaker alone has to do, said plainly: a task, not a fact (a group's "we need to" is its plan).
_TASK_TO_DO_RE = re.compile(
    r"^I\s+(?:(?:really|still|just|also|now|first)\s+)*(?:need|have|'ve got|have got)\s+to\b", re.I
)
# A quotation of several words: someone else's words.
_QUOTED_WORDS_RE = re.compile(r'"[^"\n]*\s[^"\n]*"|“[^”\n]*\s[^”\n]*”')

NO_CUE = "no durable cue"
CONTINUATION = "continues the sentence before"


@dataclass(frozen=True)
class Candidate:
    """A fact candidate with what the importance scorer and the judge need to know about it."""

    fact: ExtractedFact
    turn: Turn
    sentence: str
    cue: str
    hedged: bool
    dates: tuple[str, ...]
    asked: str | None = None
    """The question this fact answers, when its content carries it."""
    asked_turn: str | None = None
    """The turn that asked it (``asked`` is set): a source of the fact too, since its content quotes it."""
    item: int | None = None
    """The list item the sentence is part of (None outside a list): each item is a statement of its own."""
    doubt: str | None = None
    """Why its speaker is in doubt (the judge defers it), or None."""


def speaker_name(turn: Turn, settings: ObserveSettings) -> str:
    """Whom the turn's "I" is: its speaker, else the configured user or assistant name."""
    if turn.speaker:
        # A handle written in lowercase ("olga") stands in for "I": a name, so capitalised.
        return turn.speaker.title() if _LOWER_NAME_RE.match(turn.speaker) else turn.speaker
    if turn.role == "assistant":
        return settings.assistant_name or "the assistant"
    if settings.user_name:
        # "Hi, I am Jonas from Acme Logistics" with no speaker: the configured user is only assumed to be
        # who is talking, and this person says who they are ("Dana is Jonas" would be false).
        introduced = cues.introduced_name(turn.text)
        if introduced and introduced.lower() != settings.user_name.lower():
            return introduced
    return settings.user_name or "the user"


def _split_whole(said: str, role: str, settings: ObserveSettings) -> list[tuple[str, bool]]:
    """``said`` as its value and other statement, when each stands alone as a fact; else whole ("Kofi left
    early, and our account owner is Priya Shah now": split, the first half would be dropped). Each part
    with whether it may be keyed: one kept whole states more than its value, and the next owner would
    supersede "Kofi left early" with it. Chatter said first ("Brb, the staging DB port is 5433.") is left out
    when what follows it is a fact."""
    rest = after_chatter(strip_markers(said))
    if rest and not drop_reason(rest, role) and isinstance(classify(rest, role, settings.min_sentence_words), tuple):
        said = rest
    parts = split_value_statement(said, strip_markers(said))
    if len(parts) > 1 and any(
        drop_reason(p, role) or isinstance(classify(p, role, settings.min_sentence_words), str) for p in parts
    ):
        return [(said, False)]
    return [(part, True) for part in parts]


def _doubtful_introduction(sentence: str, turn: Turn, settings: ObserveSettings) -> str | None:
    """The X of "Hi, I'm Megan." or "I'm Greek and I love feta" in a user turn with no speaker, or None: a
    name or what the configured user is, no one can tell — stored, it might read "Dana is Megan", so the
    sentence is left out, and the turn's first-person sentences may be Megan's, not Dana's (deferred)."""
    if turn.role != "user" or turn.speaker or not settings.user_name:
        return None
    return cues.bare_introduction(sentence, settings.user_name)


# Words whose speaker the stored fact names: "I …" as "Dana …", "we …" as "Dana and others …".
_SPEAKERS_WORDS_RE = re.compile(rf"{cues.FIRST_PERSON_SINGULAR_RE.pattern}|\b(?:[Ww]e|[Uu]s|[Oo]urselves)\b")


def drop_reason(sentence: str, role: str) -> str | None:
    """Why a sentence is noise before any cue is looked at, or None. Show-and-tell of the speaker's
    own things ("Here's a pic of my family camping at the beach") is not noise: it says what they have
    or did (a lead-in to what follows, "Here's what I get:", still is)."""
    if cues.QUESTION_RE.search(sentence):
        return "question"
    core = strip_markers(sentence)
    if cues.HYPOTHETICAL_RE.match(core):
        return "hypothetical"
    if not core or cues.FILLER_RE.match(sentence) or cues.FILLER_RE.match(core):
        return "greeting or acknowledgement"
    if cues.EXCLAMATION_RE.match(sentence) and len(core.split()) < 6:
        return "exclamation"
    shown_work = cues.SHOWN_WORK_RE.match(core)
    if (cues.CONVERSATIONAL_RE.match(sentence) or cues.CONVERSATIONAL_RE.match(core)) and not (
        # "Here's a screenshot — the on-call rotation is biweekly.": the statement is kept
        (shown_work and _states_more(core, role))
        or (
            cues.SHOW_OWN_RE.match(core)
            and len(core.split()) >= 5
            and not core.rstrip().endswith(":")
            and not shown_work
        )
    ):
        return "thanks or show-and-tell"
    if cues.SMALL_TALK_RE.match(core) and len(core.split()) <= 8:
        return "small talk"
    if cues.BARE_CORRECTION_RE.match(core):
        return "a correction naming nothing it corrects"
    if role == "assistant" and cues.ASSISTANT_CHATTER_RE.match(core):
        return "assistant task chatter"
    if role == "assistant" and cues.ASSISTANT_REPORTED_RE.match(core):
        return "assistant reporting what a file, log or command says"  # a person who says it vouches for it
    if cues.PUTTING_OFF_RE.match(core) and not _states_more(core, role):
        return "putting off an answer"
    return None


# Where a put-off or a show-and-tell opening ends and another clause begins: "Let me check with my team
# first, but we always use pnpm.", "Here are the logs from the outage; our on-call rotation is weekly."
_NEXT_CLAUSE_RE = re.compile(r"\s*(?:[,;:]|\s[—–-])\s*(?:(?:but|though|although|and|anyway)\s+)?|\s+but\s+", re.I)


def _states_more(core: str, role: str) -> bool:
    """Whether a clause after the sentence's opening says something of its own (a cue of its own, not
    more of the same: "Let me check, I'll get back to you." is all putting off)."""
    for found in _NEXT_CLAUSE_RE.finditer(core):
        rest = core[found.end() :].strip()
        if not rest or drop_reason(rest, role):
            continue
        if _PUTTING_OFF_TAIL_RE.match(rest):
            continue
        # "the on-call rotation is biweekly" has no cue alone, but said by whoever puts off it is theirs.
        if isinstance(classify(rest, role, 3), tuple) or _PLAIN_STATEMENT_RE.match(rest):
            return True
    return False


# "the X is Y" after a put-off or show-and-tell: a statement of what something is, not more putting off.
_PLAIN_STATEMENT_RE = re.compile(
    r"^(?:the|our|my|this|that|these|those|their|his|her|its)\s+(?:[\w'-]+\s+){0,4}?[\w'-]*[a-z][\w'-]*\s+"
    r"(?:is|are|was|were|will\s+be|has\s+been|have\s+been)\s+(?!(?:it|that|this)\b)\w[\w'-]*",
    re.I,
)


# What only goes on putting off: "I'll get back to you", "will let you know", "then I'll decide".
_PUTTING_OFF_TAIL_RE = re.compile(
    r"^(?:(?:and\s+|then\s+)?(?:i'?ll|i\s+will|we'?ll|we\s+will|will)\s+(?:get\s+back|let\s+you\s+know|decide"
    r"|circle\s+back|follow\s+up|come\s+back|report\s+back|confirm|update\s+you|ping\s+you|tell\s+you))\b",
    re.I,
)


IDENTITY_CUE = "who the speaker is"
VALUE_AFTER_KEY = "a value right after a keyed fact"
TRAIT_CUE = "a named person's lasting trait"


# "Grafana lives in the monitoring namespace": where a named system runs is a fact however short.
_RUNS_IN_RE = re.compile(
    r"^(?:(?i:the|our)\s+)?[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?\s+(?i:lives|runs|sits|is\s+(?:deployed|hosted|installed|running))"
    r"\s+(?i:in|on)\s+(?:(?i:the|our|a)\s+)?[\w.-]+\s+(?i:namespace|cluster|region|account|server|host|vpc|zone|environment)\b"
)


def classify(
    sentence: str,
    role: str,
    min_words: int,
    *,
    answers: bool = False,
    listener_max_words: int = -1,
    people: Collection[str] = (),
) -> tuple[str, str] | str:
    """``(category, cue)`` for a kept sentence, or the reason it is not a fact. ``answers``: the
    sentence is the first statement of a person's reply to the other speaker's question, which states
    something whatever its words ("It's on Rua Augusta.", "Contemporary, mostly."); the assistant's
    answers are not memories of the user. ``people``: names known to be people's (a lasting trait is
    only a person's)."""
    core = strip_markers(sentence)
    words = len(core.split())
    found = _first_cue(sentence, core)
    if found is None:
        if role == "user" and cues.SHORT_IDENTITY_RE.match(core):
            found = ("fact", IDENTITY_CUE)
        elif role == "user" and (trait := cues.NAMED_TRAIT_RE.match(core)) and trait.group("name") in people:
            found = ("fact", TRAIT_CUE)
        elif words < min_words and not (answers and role == "user" and words >= 2):
            return "too short for a fact without a cue"
        elif words >= min_words and value_key(core, "the speaker")[0]:
            found = ("fact", "stated value")
        elif _RUNS_IN_RE.match(core):
            found = ("fact", "where a system runs")
        elif cues.SETTING_RE.match(core):
            found = ("fact", "a setting or a tool in use")
        elif role == "user" and (cues.FIRST_PERSON_RE.search(core) or cues.SUBJECTLESS_RE.match(core)):
            if _TASK_TO_DO_RE.match(core):  # "I need to rotate our AWS keys." (with a cue — "every 90 days" — it lasts)
                return "a task to do"
            found = ("fact", "first-person statement")
        elif cues.SPECIFIC_RE.search(core) and cues.FACT_VERB_RE.search(core):
            found = ("fact", "specific statement")
        elif cues.NAMING_RE.search(core):
            found = ("fact", "a name")
        elif role == "user" and names_a_date(core):
            found = ("fact", "dated statement")  # "Something exciting happened last Friday."
        elif answers and role == "user":
            found = ("fact", "answer to a question")
        elif (cues.SHOWN_WORK_RE.match(core) or cues.PUTTING_OFF_RE.match(core)) and _states_more(core, role):
            found = ("fact", "statement after filler")  # "Here's a screenshot — the rotation is biweekly."
        else:
            return NO_CUE
    category = found[0]
    if words < 2:
        return "too short"
    if category in ("fact", "commitment") and cues.TODAY_TASK_RE.match(core):
        return "a task to do"  # "Today we need to fix the rounding bug": done by tonight, then stale
    if (
        cues.TASK_REQUEST_RE.match(core)
        and category not in _DURABLE_REQUEST_CATEGORIES
        and not (cues.SHOW_OWN_RE.match(core) and words >= 5)
    ):
        return "request about the task at hand"
    if category not in _DURABLE_REQUEST_CATEGORIES:
        if cues.ASKING_RE.match(core):
            return "request about the task at hand"
        if cues.DEBUG_STATUS_RE.match(core):
            return "debugging status"
    if cues.SECOND_PERSON_RE.match(core) and category not in _TO_LISTENER_CATEGORIES:
        return "addressed to the listener"
    if category not in _DURABLE_REQUEST_CATEGORIES and _to_listener_only(core, listener_max_words):
        return "a remark to the listener"
    if category in _REMARK_CATEGORIES and general_remark(core):
        return "a general remark"
    if category in _WORDLESS_CATEGORIES and not answers and not content_words(core):
        # "I feel the same way!", "Yeah, I love to." (an answer says it of what was asked)
        return "nothing but function words"
    if role == "assistant":
        if _SPECULATION_RE.search(core):
            return "assistant speculation"
        if category not in _ASSISTANT_CATEGORIES:
            return f"assistant {category} (only the user's own {category} counts)"
        if cues.FIRST_PERSON_SINGULAR_RE.search(core):
            return "assistant talking about itself"
    return found


def _first_cue(sentence: str, core: str) -> tuple[str, str] | None:
    """The first category cue, in priority order, found in the sentence or its core (words quoted
    from someone else are theirs: `Dana said "I hate Python"` states no preference of the speaker)."""
    if '"' in sentence or "“" in sentence:
        sentence, core = _QUOTED_WORDS_RE.sub('""', sentence), _QUOTED_WORDS_RE.sub('""', core)
    if core == sentence:  # most sentences have no marker to strip: one search a cue
        for category, cue, rx in cues.CATEGORY_CUES:
            if rx.search(sentence):
                return category, cue
        return None
    for category, cue, rx in cues.CATEGORY_CUES:
        if rx.search(sentence) or rx.search(core):
            return category, cue
    return None


def content_words(text: str) -> list[str]:
    """The words of a text that say what it is about (three letters or more, not stopwords)."""
    return [w for w in _WORD_RE.findall(text) if len(w) > 2 and w.lower() not in STOPWORDS]


def general_remark(core: str) -> bool:
    """Encouragement or a remark about "us" in general, with nothing concrete in it ("By sharing our
    stories, we can build a community of hope", "Let's keep chasing our dreams!", "Music brings us
    together"): the speaker alone is not its subject, and it names no one, nothing specific and no
    time; "us" with no "we" doing anything says what is true of people, unless something happened."""
    about_us = bool(cues.US_IN_GENERAL_RE.search(core)) and not (
        cues.WE_SUBJECT_RE.search(core) or cues.PAST_TENSE_RE.search(core)
    )
    return (
        (bool(cues.GENERAL_REMARK_RE.search(core)) or about_us)
        and not cues.FIRST_PERSON_SINGULAR_RE.search(core)
        and not _NAMED_RE.search(core[1:])
        and not cues.SPECIFIC_RE.search(core)
        and not _WHEN_RE.search(core)
    )


def _to_listener_only(core: str, max_words: int) -> bool:
    """A remark about the listener with next to nothing else in it ("I'm here for you", "I appreciate
    your encouragement", "I'm so glad it worked for you"): support, not a fact about anyone."""
    if max_words < 0 or not cues.LISTENER_RE.search(core):
        return False
    # A name counts ("… this novel by Patrick Rothfuss"), but not first or where it is said to someone
    # ("Hey Tim, …", "… for you, Jon!").
    text = _VOCATIVE_NAME_RE.sub(" ", core)
    content = [
        w
        for w in _WORD_RE.findall(text)
        if len(w) > 2 and w.lower() not in STOPWORDS and w.lower() not in _LISTENER_FILLER
    ]
    return len(content) <= max_words


def question_of(turn: Turn, settings: ObserveSettings) -> str | None:
    """The last question the turn asks ("Where is it?"), markers and vocatives off, or None."""
    if turn.interim:
        return None
    asked = [s for s in sentences_of(turn.text, settings.max_turn_chars) if cues.QUESTION_RE.search(s)]
    return strip_markers(asked[-1]) or asked[-1] if asked else None


def extract_turn(
    turn: Turn,
    settings: ObserveSettings,
    *,
    question: str | None = None,
    listener: str | None = None,
    people: Collection[str] = (),
    keep: Callable[[str], str | None] | None = None,
) -> list[Candidate]:
    """Every fact candidate of one turn, in sentence order (none from interim assistant commentary).

    ``question``: the turn replies to the other speaker's question, so its first statements
    (``observe.replyStatements``) are facts; the first one carries the question when it cannot
    stand without it (a bare answer, "Three times a week.", or a pronoun naming nothing, "It's on
    Rua Augusta."). ``listener``: the name of whom the turn is said to (the other speaker), left
    out of the facts where it is only said to them ("It was great, Caroline!"). ``keep(sentence)``:
    why a sentence these rules drop is kept for review instead, as a correction, or None.
    """
    if turn.interim:
        return []
    name = speaker_name(turn, settings)
    out: list[Candidate] = []
    replies = settings.reply_statements if question else 0
    first = True
    before: Candidate | None = None  # the fact the sentence before this one gave
    units = [
        (part, item, keyed)
        for said, item in sentence_units(turn.text, settings.max_turn_chars)
        for part, keyed in _split_whole(said, turn.role, settings)
    ]
    introduced = next(filter(None, (_doubtful_introduction(said, turn, settings) for said, _, _ in units)), None)
    # Whose "I" the turn's other sentences are is in doubt: kept for review, never the user's as said.
    doubt = f"the speaker introduced themselves as {introduced}: whose words?" if introduced else None
    for said, item, keyed in units:
        # The judge rejects a secret; its words never carry it. "Done: sent X" is the speaker's "I sent X".
        sentence = completion_said(redact_secrets(said)) if turn.role == "user" else redact_secrets(said)
        if drop_reason(sentence, turn.role) or _doubtful_introduction(sentence, turn, settings):
            before = None
            continue
        found = classify(
            sentence,
            turn.role,
            settings.min_sentence_words,
            answers=replies > 0 and declarative(sentence),
            listener_max_words=settings.listener_remark_max_words,
            people=people,
        )
        replies -= 1
        asked, first = question if first else None, False
        if found == NO_CUE and before is not None and continues(sentence, turn.role, settings.continuation_min_words):
            found = (before.fact.category, CONTINUATION)
        before = None
        held = keep(sentence) if isinstance(found, str) and keep is not None else None
        found = (("correction", VALUE_AFTER_KEY) if held else found) if isinstance(found, str) else found
        if isinstance(found, str):
            continue
        category, cue = found
        content, dates = standalone(sentence, speaker=name, timestamp=turn.timestamp, listener=listener)
        if not content:
            continue
        asked = without_vocative(asked, name) if asked else None
        if asked and turn.role == "user" and _needs_question(sentence, cue, settings):
            # The answer names its speaker already ("John had to …"), or the question does not say
            # what it asks about ("How's it going?"): nothing more to carry.
            who = "" if re.search(rf"\b{re.escape(name)}\b", content) else f"{name}, "
            content = f'{who}asked "{asked}": {content}' if not cues.FILLER_RE.match(asked) else content
            content = content[:1].upper() + content[1:]  # "the user, asked …" opens the sentence
            asked = asked if not cues.FILLER_RE.match(asked) else None
        else:
            asked = None
        confidence, hedged = confidence_for(category, cue, sentence, turn.role)
        entity_ref, attributes = value_key(strip_markers(sentence), name) if keyed else (None, {})
        if keyed and not entity_ref and category in ("commitment", "fact"):  # the statement it was done closes it
            entity_ref, attributes = commitment_key(strip_markers(sentence), name)
        fact = ExtractedFact(
            category=category,
            content=content,
            confidence=confidence,
            tags=tags_for(content, exclude=(name,)),
            entity_ref=entity_ref,
            structured_attributes=attributes,
            quote=sentence,
        )
        speakers = doubt if _SPEAKERS_WORDS_RE.search(strip_markers(sentence)) else held
        before = Candidate(fact, turn, sentence, cue, hedged, tuple(dates), asked, item=item, doubt=speakers)
        out.append(before)
    return out


def declarative(sentence: str) -> bool:
    """Whether a reply's sentence states something: not a question without its "?" nor an instruction."""
    core = _LEADING_REPLY_RE.sub("", strip_markers(sentence)).strip()
    return bool(core) and not _INTERROGATIVE_RE.match(core) and not cues.TASK_REQUEST_RE.match(core)


def continues(sentence: str, role: str, min_words: int) -> bool:
    """A person's statement that goes on about what the sentence before it named ("I made a cake. It's
    dairy-free vanilla with strawberry filling."): a pronoun subject, not said to the listener, with at
    least ``min_words`` content words (so "It was so much fun." is not one)."""
    if min_words < 0 or role != "user":
        return False
    core = _SENTENCE_ADVERB_RE.sub("", strip_markers(sentence), count=1)
    refers_back = cues.PRONOUN_SUBJECT_RE.match(core) or _DEFINITE_SUBJECT_RE.match(core)
    if not refers_back or cues.LISTENER_RE.search(core):
        return False
    return len(content_words(core)) >= min_words


def _needs_question(sentence: str, cue: str, settings: ObserveSettings) -> bool:
    """Whether a reply's first statement says what it says only with the question before it: a bare
    answer, a pronoun naming nothing, nothing but function words ("I love it!"), or a short statement
    (``observe.replyQuestionMaxWords``)."""
    core = strip_markers(sentence)
    short = len(core.split()) <= settings.reply_question_max_words
    return (
        cue == "answer to a question"
        or short
        or leans_on_context(sentence)
        or not content_words(core)
        or (fragment(core) and cue not in _CORRECTION_CUES)  # "Oops, sorry 'bout the accident!" answers nothing
    )


# A subject or a verb: what a clause has and a bare answer ("Next Friday at 3pm.", "eu-west-1, always.") has
# not. An "'s" may be a verb ("Guitar's mostly my thing"), so it counts as one.
_CLAUSE_WORD_RE = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|you|you're|he|he's|she|she's|they|they're|it|it's|that's|there's"
    r"|am|is|are|was|were|be|been|being|has|have|had|do|does|did|don't|doesn't|didn't|can|can't|could|will|won't"
    r"|would|should|may|might|must|let's)\b|\b[a-z]+ed\b|\w'(?:s|re|m|ve|d|ll)\b",
    re.I,
)


_FRAGMENT_MAX_WORDS = 5
_CORRECTION_CUES = frozenset(cue for category, cue, _ in cues.CATEGORY_CUES if category == "correction")


def fragment(core: str) -> bool:
    """A few words with no subject and no verb ("Next Friday at 3pm.", "Two years ago.", "eu-west-1,
    always."): said in reply, they say what they say only with the question ("When is the demo?")."""
    return (
        len(core.split()) <= _FRAGMENT_MAX_WORDS
        and not _CLAUSE_WORD_RE.search(core)
        and not cues.SUBJECTLESS_RE.match(core)  # "Appreciate the offer.": the speaker is its subject
        and not cues.FACT_VERB_RE.search(core)
    )


def leans_on_context(sentence: str) -> bool:
    """A bare pronoun subject naming nothing ("It was amazing."): the referent is in another turn."""
    core = strip_markers(sentence)
    return (
        bool(cues.PRONOUN_SUBJECT_RE.match(core))
        and not _NAMED_RE.search(core[1:])
        and not cues.SPECIFIC_RE.search(core)
    )


def names_nothing(sentence: str) -> bool:
    """A bare pronoun subject with no name or identifier: a number there is the value it states ("It is
    5434 now."), not what it is about."""
    core = strip_markers(sentence)
    if not cues.PRONOUN_SUBJECT_RE.match(core):
        return False
    if PRONOUN_VALUE_RE.match(core):  # "It is MySQL now": the name is the value, "it" the subject
        return True
    return not (_NAMED_RE.search(core[1:]) or cues.SPECIFIC_RE.search(_NUMBER_RE.sub("", core)))


_NUMBER_RE = re.compile(r"\d[\d.,:]*")
# "It is 5434 now", "It's 500 per minute", "That was Friday": a pronoun, a verb of being and the value.
PRONOUN_VALUE_RE = re.compile(r"^(?:it|that|this)(?P<be>'s|’s|\s+is|\s+was)\s+(?P<rest>\S.*)$", re.I)


def tags_for(content: str, *, exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Up to five tags: the names in the content first, then its keywords, as lowercase slugs."""
    skip = {e.lower() for e in exclude}
    tags: list[str] = []

    def add(raw: str) -> None:
        tag = re.sub(r"[^\w.+#-]+", "-", normal_form(raw).lower()).strip("-.")
        if tag and tag not in tags and tag not in skip and len(tag) <= 40 and tag not in STOPWORDS:
            tags.append(tag)

    body = content.rstrip(".")
    for match in _PROPER_RE.finditer(body):
        phrase = re.sub(r"'s$", "", match.group(1))
        words = [w for w in phrase.split() if w.lower() not in _NON_TAG_NAMES and w.lower() not in skip]
        if words and not any(ch.isdigit() for ch in "".join(words)):
            add("-".join(words))
    for word in _WORD_RE.findall(body):
        lower = word.lower()
        if len(lower) >= 4 and lower not in STOPWORDS and lower not in _NON_TAG_NAMES and not lower.endswith("'s"):
            add(lower)
        if len(tags) >= MAX_TAGS:
            break
    return tuple(tags[:MAX_TAGS])
