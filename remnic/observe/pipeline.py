"""The one pure entry point: a flush's turns → the ``MemoryObservation`` list to persist and log.

``plan_observations`` runs extraction, importance, the importance gate, in-flush de-duplication
and the judge. It writes nothing and reads no clock unless it must (``now`` stands in for turns
without a timestamp), so the same turns and settings always give the same observations, ids
included. Observations come in turn order: persisting them in that order lets a later fact
supersede an earlier one of the same flush (same ``entityRef``/attribute, another value).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from remnic.config import ObserveSettings
from remnic.memfile.model import IMPORTANCE_LEVELS, format_time, now_iso, parse_time

from .alike import contradicts, differs_concretely, replaceable
from .cues import CATEGORY_CUES, SPECIFIC_RE, people_named
from .extract import (
    IDENTITY_CUE,
    MAX_TAGS,
    TRAIT_CUE,
    VALUE_AFTER_KEY,
    Candidate,
    content_words,
    extract_turn,
    fragment,
    question_of,
    speaker_name,
)
from .importance import score_importance
from .judge import AMBIGUOUS_REFERENT, judge_candidate
from .letters import CAPITAL
from .normalize import name_the_group, strip_markers
from .records import ExtractedFact, Importance, JudgeVerdict, MemoryObservation, Turn
from .referents import resolve_correction, value_after
from .text import sentences_of

Embed = Callable[[Sequence[str]], Any]
LEVEL_RANK = {name: rank for rank, (_floor, name) in enumerate(reversed(IMPORTANCE_LEVELS))}
# A short sentence with its category's own cue is a fact, not filler ("I hate YAML.", "Never force-push.").
_SHORT_IS_NOT_TRIVIAL = frozenset({"preference", "decision", "principle", "rule", "correction", "commitment"})
_CATEGORY_CUES = frozenset(cue for _, cue, _ in CATEGORY_CUES)
_HASH_NORMALIZE_RE = re.compile(r"[^\w\s]+", re.UNICODE)
# A sentence that goes on about what the one before said, with a pronoun anywhere in it ("They made …",
# "I really like its matrix builds", "I love how simple it is"); "that" only as its subject, since "I
# prefer that we …" points back at nothing.
_LEANS_RE = re.compile(r"^(?:that|those)\b|\b(?:it|its|they|their|them|this|these|those|he|him|his|she|her)\b", re.I)
# A dummy "it" points at nothing: "I hate it when …", "I'd prefer it if …", "it seems …", "it turned out …".
# Taken as pointing back, it would join a fact into the preference after it, where its later "…, not OLD"
# could never replace it. Only these forms: in "I love that it is easy to use" or "I like using it if …"
# the "it" is the tool just named.
_DUMMY_IT_RE = re.compile(
    r"\b(?:love[sd]?|loving|hate[sd]?|hating|like[sd]?|liking|prefer(?:s|red)?|can(?:no|'|’)t\s+stand)"
    r"\s+it\s+(?:when|whenever|if)\b"
    r"|\bit\s+(?:seems|seemed|appears|appeared|turns\s+out|turned\s+out)\b",
    re.I,
)


def _leans(sentence: str) -> bool:
    """Whether ``sentence`` goes on about the one before it with a pronoun (a dummy "it" is none)."""
    return bool(_LEANS_RE.search(_DUMMY_IT_RE.sub(" ", sentence)))


# What a person says about themselves — what happened, how it felt, what they like, who is whose —
# joins into one fact across these categories; rules, decisions, plans and corrections stay apart.
DESCRIPTIVE_CATEGORIES = frozenset({"fact", "moment", "preference", "relationship"})
# A joined fact is of the category its first cue in the reference priority order names, as a sentence is.
_CATEGORY_RANK = {category: rank for rank, category in enumerate(dict.fromkeys(c for c, _, _ in CATEGORY_CUES))} | {
    "fact": len(CATEGORY_CUES)
}


@dataclass(frozen=True)
class _Planned:
    candidate: Candidate
    importance: Importance
    verdict: JudgeVerdict
    turn_ids: tuple[str, ...]
    sentences: int = 1
    """How many of the turn's sentences this fact joins."""


def dedup_key(content: str) -> str:
    """Content with case, punctuation and spacing folded (Unicode-aware): exact duplicates share it."""
    return " ".join(_HASH_NORMALIZE_RE.sub(" ", content.lower()).split())


def observation_id(session_key: str, turn_ids: Sequence[str], category: str, content: str) -> str:
    """``obs_`` + a hash of where and what: stable for the same session, turns and fact."""
    raw = "\0".join([session_key, ",".join(turn_ids), category, content])
    return "obs_" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:20]


def plan_observations(
    turns: Sequence[Turn],
    *,
    session_key: str,
    settings: ObserveSettings,
    embed: Embed | None = None,
    now: str | None = None,
    prefetch: Callable[[Sequence[str]], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[MemoryObservation]:
    """Observations of a flush's turns (oldest first): accepted, deferred and rejected alike.

    ``embed(texts) -> unit vectors`` folds near-duplicates of one flush (cosine ≥
    ``observe.duplicateSimilarityFloor``, same category) into one observation citing every turn;
    without it only exact duplicates fold. ``prefetch(texts)`` hears each turn's facts as they are
    made, before ``embed`` is asked for them all (so they can be embedded meanwhile). Facts below
    ``observe.minImportanceLevel`` are dropped before the judge and never appear. ``progress(done,
    total)`` hears each turn extracted.
    """
    floor_rank = LEVEL_RANK[settings.min_importance_level]
    planned: list[_Planned] = []
    previous: Turn | None = None
    # What a bare "it" in a turn may stand for: the last turn's one keyed fact — the speaker's own, or
    # another speaker's when that turn stated one. A turn of the other speaker that only acknowledges
    # ("Got it — I'll use 5432 for staging.", "Noted.") leaves it as it was: in an agent's transcript the
    # assistant answers between the user's fact and its correction. One that asks something or states
    # another value ends it: the "it" that follows answers that ("How many replicas?" — "It is 3.").
    antecedent: ExtractedFact | None = None
    speakers: dict[str, str] = {}  # a speaker's name → the last other speaker before them (their listener)
    holder: Turn | None = None  # the turn that set ``antecedent``
    # Whose trait "Ana doesn't eat pork" can be: the speakers, and names said as people's in the flush.
    people = {speaker_name(t, settings) for t in turns} | {n for t in turns for n in people_named(t.text)}
    stated: list[tuple[str, ExtractedFact]] = []  # the flush's keyed facts so far, by who said them
    group = len({t.speaker for t in turns if t.speaker}) >= 3  # a group chat: the next line may answer no one
    for done, turn in enumerate(turns, 1):
        kept = []
        asked = question_of(previous, settings) if previous is not None and _other_speaker(previous, turn) else None
        if asked and group and not _replies_to(asked, turn, settings):
            asked = None
        if previous is not None and previous.speaker and turn.speaker and previous.speaker != turn.speaker:
            speakers[turn.speaker] = previous.speaker
        listener = speakers.get(turn.speaker) if turn.speaker else None
        asking = previous.source_id if asked and previous is not None else None
        previous = turn if not turn.interim else previous
        keep = value_after(antecedent) if not turn.interim else None
        said = extract_turn(turn, settings, question=asked, listener=listener, people=people, keep=keep)
        name = speaker_name(turn, settings)
        own = holder is not None and not _other_speaker(holder, turn)
        said = [resolve_correction(c, antecedent, stated, speaker=name, own=own, who=_who(turn)) for c in said]
        for candidate in said:
            if candidate.asked:
                candidate = replace(candidate, asked_turn=asking)
            item = _scored(candidate, settings)
            if LEVEL_RANK[item.importance.level] >= floor_rank:
                kept.append(item)
        if not turn.interim:
            keyed = [c.fact for c in said if c.fact.entity_ref]
            stated += [(_who(turn), fact) for fact in keyed]
            if keyed or not _other_speaker(turn, holder or turn) or _moves_on(turn, settings, antecedent):
                antecedent, holder = (keyed[0] if len(keyed) == 1 else None), turn
        joined = [_group_named(item, settings) for item in _join_turn(kept, settings)]
        planned += joined
        if prefetch is not None and joined:
            prefetch([item.candidate.fact.content for item in joined])
        if progress is not None:
            progress(done, len(turns))
    planned = _fold_duplicates(planned, embed, settings.duplicate_similarity_floor)
    if now is None and any(not item.candidate.turn.timestamp for item in planned):
        now = now_iso()
    observations = []
    for item in planned:
        candidate = item.candidate
        verdict = item.verdict
        said_at = _canonical_time(candidate.turn.timestamp)
        observed_at = said_at or now or ""
        observations.append(
            MemoryObservation(
                id=observation_id(session_key, item.turn_ids, candidate.fact.category, candidate.fact.content),
                session_id=session_key,
                observed_at=observed_at,
                fact=candidate.fact,
                importance=item.importance,
                verdict=verdict,
                source_turn_ids=item.turn_ids,
                proposed_status=_proposed_status(verdict.kind, candidate.fact.confidence, settings),
                valid_at=said_at,
            )
        )
    return observations


# A value stated in passing ("the README says the timeout is 30 seconds", "it's 30 seconds"): what a
# following "it" may name instead of the earlier fact.
_STATES_VALUE_RE = re.compile(r"\b(?:is|are|was|were|be|been)\b|\b(?:it|that|this)(?:'s|’s)\s", re.I)


_NUMBER_RE = re.compile(r"\d+(?:[.,:]\d+)*")
# "sets the retry count to", "defaults to", "bumped the workers to", "switched it to": a value of its own.
_SETS_VALUE_RE = re.compile(
    r"\b(?:sets?|setting|default(?:s|ed)?|bump(?:s|ed)?|chang(?:e|es|ed)|switch(?:es|ed)?|mov(?:e|es|ed)"
    r"|rais(?:e|es|ed)|lower(?:s|ed)?|increas(?:e|es|ed)|reduc(?:e|es|ed))\b[^.!?\n]{0,60}?\bto\b",
    re.I,
)


def _moves_on(turn: Turn, settings: ObserveSettings, antecedent: ExtractedFact | None = None) -> bool:
    """Whether the other speaker's turn asks a question or states a value of its own: after it a bare
    "it" no longer names the fact said before. Naming a number the fact did not say counts ("I bumped
    the workers to 12"); echoing the fact's own ("Got it, I'll use 5432") does not."""
    if (
        question_of(turn, settings) is not None
        or _STATES_VALUE_RE.search(turn.text)
        or _SETS_VALUE_RE.search(turn.text)
    ):
        return True
    known = set(_NUMBER_RE.findall(antecedent.content)) if antecedent is not None else set()
    return any(n not in known for n in _NUMBER_RE.findall(turn.text))


def _who(turn: Turn) -> str:
    return turn.speaker or turn.role


_GROUP_REPLY_MAX_WORDS = 8
_YES_NO_RE = re.compile(r"^(?:yes|yeah|yep|yup|no|nope|nah|sure|definitely|absolutely|not yet)\b", re.I)
_INFLECTION_RE = re.compile(r"(?:ing|ed|es|s)$")
# A number or a time said in words ("eight engineers", "half past nine", "around twenty thousand euros")
# is as concrete an answer as its digits.
_SPELLED_VALUE_RE = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand"
    r"|million|billion|dozen|half|quarter|noon|midnight|o'clock)\b",
    re.I,
)


def _replies_to(asked: str, turn: Turn, settings: ObserveSettings) -> bool:
    """Whether, in a group chat, a turn after someone else's question answers it: it shares a content
    word with the question, says yes or no, names something concrete (a number, an identifier, a name
    after its first word: "Lisbon, in May"), is a bare name ("Lisbon."), or is longer than a short reply
    (``_GROUP_REPLY_MAX_WORDS``). "Retrying the job" after "lunch anyone?" is someone else's thread, not
    an answer."""
    said = sentences_of(turn.text, settings.max_turn_chars)
    core = strip_markers(said[0]) if said else ""
    words = core.split()
    if not words or len(words) > _GROUP_REPLY_MAX_WORDS:
        return True

    def stems(text: str) -> set[str]:
        return {_INFLECTION_RE.sub("", w.lower()) or w.lower() for w in content_words(text)}

    if stems(asked) & stems(core) or _YES_NO_RE.match(said[0].strip()) or SPECIFIC_RE.search(core):
        return True
    if _SPELLED_VALUE_RE.search(core):  # "half past nine", "eight engineers"
        return True
    bare_name = len(words) <= 3 and words[0][:1].isupper() and not re.search(r"(?:ing|ed)\W*$", words[0])
    return bool(re.search(rf"\b{CAPITAL}", " ".join(words[1:]))) or (bare_name and fragment(core))


def _other_speaker(a: Turn, b: Turn) -> bool:
    """Whether two turns are said by different people (by speaker name, else by role)."""
    if a.speaker and b.speaker:
        return a.speaker != b.speaker
    return a.role != b.role


def _scored(candidate: Candidate, settings: ObserveSettings) -> _Planned:
    fact = candidate.fact
    stated = (fact.category in _SHORT_IS_NOT_TRIVIAL and candidate.cue in _CATEGORY_CUES) or candidate.cue in (
        IDENTITY_CUE,
        TRAIT_CUE,
        VALUE_AFTER_KEY,  # kept for review, never dropped as trivial: a correction may be in it
    )
    # "In October." answering "When is the baby due?": the question it carries says what it is about,
    # so a short answer is not trivial (a filler question is not carried, nor made a fact of).
    stated = stated or (candidate.cue == "answer to a question" and bool(candidate.asked))
    importance = score_importance(fact.content, fact.category, fact.tags, said=candidate.sentence, stated=stated)
    verdict = judge_candidate(candidate, importance, enabled=settings.judge)
    # An answer that quotes its question was drawn from the asking turn as well (after its own turn: the
    # first source is where the fact was said).
    asked = (candidate.asked_turn,) if candidate.asked and candidate.asked_turn else ()
    return _Planned(candidate, importance, verdict, (candidate.turn.source_id, *asked))


def _join_turn(items: list[_Planned], settings: ObserveSettings) -> list[_Planned]:
    """One fact per thing a turn says: a kept sentence joins the one before it in the same turn when
    both are of one category and would be stored alike, or when it leans on that sentence for its
    subject ("We went camping. It rained all weekend."). Sentences that state a value for an
    entity attribute, and corrections, stay facts of their own (supersession reads them one by one).
    A fact joins at most ``observe.joinMaxSentences`` sentences; list items and a sentence said again
    in the turn never join."""
    out: list[_Planned] = []
    seen: set[str] = set()
    for item in items:
        key = dedup_key(item.candidate.fact.content)
        if key in seen:
            continue  # said again in the same turn: the same fact, from the same turn
        seen.add(key)
        prev = out[-1] if out else None
        if prev is not None and _joins(prev, item, settings):
            out[-1] = _joined(prev, item, settings)
        else:
            out.append(item)
    return out


def _joins(prev: _Planned, item: _Planned, settings: ObserveSettings) -> bool:
    a, b = prev.candidate.fact, item.candidate.fact
    if a.structured_attributes or b.structured_attributes or "correction" in (a.category, b.category):
        return False
    if prev.verdict.kind == "reject" or item.verdict.kind == "reject":
        return False
    if prev.sentences >= settings.join_max_sentences or prev.candidate.item != item.candidate.item:
        return False  # a long turn says several things, and each list item is a statement of its own
    if item.verdict.reason == AMBIGUOUS_REFERENT:
        return True
    leans = _leans(item.candidate.sentence)
    if a.category != b.category and "preference" in (a.category, b.category) and not leans:
        # A fact joined into a preference could never be replaced by its later "…, not OLD" (that
        # compares a memory word for word), so it would stay current beside its correction. A sentence
        # that goes on about it ("That is from MinaLima. They made …", "Our CI runs on GitHub Actions. I
        # really like its matrix builds.") stays with it: alone, its pronoun would name nothing.
        fact = prev if a.category != "preference" else item
        if replaceable(fact.candidate.sentence):
            return False
    same_status = _proposed_status(prev.verdict.kind, a.confidence, settings) == _proposed_status(
        item.verdict.kind, b.confidence, settings
    )
    return same_status and (a.category == b.category or {a.category, b.category} <= DESCRIPTIVE_CATEGORIES)


def _joined(prev: _Planned, item: _Planned, settings: ObserveSettings) -> _Planned:
    a, b, first = prev.candidate.fact, item.candidate.fact, prev.candidate
    leans = item.verdict.reason == AMBIGUOUS_REFERENT
    fact = replace(
        a,
        category=min(a.category, b.category, key=_CATEGORY_RANK.__getitem__),
        content=f"{a.content} {b.content}",
        confidence=a.confidence if leans else min(a.confidence, b.confidence),
        tags=tuple(dict.fromkeys(a.tags + b.tags))[:MAX_TAGS],
        quote=f"{a.quote} {b.quote}".strip(),
    )
    candidate = replace(
        first,
        fact=fact,
        cue=first.cue if fact.category == a.category else item.candidate.cue,
        sentence=f"{first.sentence} {item.candidate.sentence}",
        hedged=first.hedged or (item.candidate.hedged and not leans),
        dates=tuple(dict.fromkeys(first.dates + item.candidate.dates)),
        doubt=first.doubt or item.candidate.doubt,
    )
    return replace(_scored(candidate, settings), sentences=prev.sentences + item.sentences)


def _group_named(item: _Planned, settings: ObserveSettings) -> _Planned:
    """A person's fact about "us" that never names them names them once ("John and others made pizza").
    Decisions, rules and commitments keep their "we": a team's "we decided" is not one person's."""
    fact, turn = item.candidate.fact, item.candidate.turn
    personal = turn.role == "user" and fact.category in DESCRIPTIVE_CATEGORIES
    content = name_the_group(fact.content, speaker_name(turn, settings)) if personal else fact.content
    if content == fact.content:
        return item
    return replace(item, candidate=replace(item.candidate, fact=replace(fact, content=content)))


def _canonical_time(timestamp: str | None) -> str | None:
    """An ISO timestamp in remnic's spelling (UTC, milliseconds, ``Z``)."""
    epoch = parse_time(timestamp)
    return format_time(epoch) if epoch is not None else None


def _proposed_status(kind: str, confidence: float, settings: ObserveSettings) -> str | None:
    if kind == "reject":
        return None
    if kind == "defer" or confidence < settings.review_below_confidence:
        return "pending_review"
    return "active"


def _other_value(a: ExtractedFact, b: ExtractedFact) -> bool:
    """Both state a value for one entity/attribute key, and not the same value."""
    if not a.entity_ref or a.entity_ref != b.entity_ref:
        return False
    shared = set(a.structured_attributes) & set(b.structured_attributes)
    return any(a.structured_attributes[k].lower() != b.structured_attributes[k].lower() for k in shared)


def _same_fact(a: ExtractedFact, b: ExtractedFact) -> bool:
    """Near-duplicates only when nothing concrete differs (:func:`.alike.differs_concretely`), in one
    category, with no other value for a shared key."""
    return a.category == b.category and not differs_concretely(a.content, b.content) and not _other_value(a, b)


def _fold_duplicates(planned: list[_Planned], embed: Embed | None, floor: float) -> list[_Planned]:
    """One entry per fact said more than once in the flush: the first, citing every turn — or, when
    something said in between replaced it (another value of its key, a denial, a reversal), the last,
    in its place and with its time: A, B, A again ends on A."""
    kept: list[_Planned | None] = []  # None: folded into a later entry
    by_key: dict[str, int] = {}
    vectors = None
    if embed is not None and len(planned) > 1:
        vectors = np.asarray(embed([p.candidate.fact.content for p in planned]), dtype=np.float32)
    kept_rows: list[int] = []
    for row, item in enumerate(planned):
        fact = item.candidate.fact
        match = by_key.get(dedup_key(fact.content))
        if match is None and vectors is not None and kept_rows:
            sims = vectors[kept_rows] @ vectors[row]
            for position in np.argsort(-sims):
                if sims[position] < floor:
                    break
                earlier = kept[int(position)]
                if earlier is not None and _same_fact(earlier.candidate.fact, fact):
                    match = int(position)
                    break
        if match is None:
            by_key[dedup_key(fact.content)] = len(kept)
            kept.append(item)
            kept_rows.append(row)
            continue
        first = kept[match]
        assert first is not None
        turn_ids = first.turn_ids + tuple(t for t in item.turn_ids if t not in first.turn_ids)
        if _overtaken(kept, match, item, kept_rows, vectors, floor):
            kept[match] = None
            by_key[dedup_key(first.candidate.fact.content)] = by_key[dedup_key(fact.content)] = len(kept)
            kept.append(replace(item, turn_ids=turn_ids))
            kept_rows.append(row)
            continue
        kept[match] = replace(first, turn_ids=turn_ids)
    return [k for k in kept if k is not None]


def _overtaken(
    kept: list[_Planned | None], match: int, again: _Planned, rows: list[int], vectors: Any, floor: float
) -> bool:
    """Whether a fact said after ``kept[match]`` and before ``again`` (its repeat) replaces it: another
    value of its key (or of the repeat's: "X owns Y" said again as "Y's owner is X"), or — as alike as
    a near-duplicate — a denial or a reversal of it."""
    first = kept[match]
    assert first is not None
    a = first.candidate.fact
    for i in range(match + 1, len(kept)):
        later = kept[i]
        if later is None:
            continue
        b = later.candidate.fact
        if _other_value(a, b) or _other_value(again.candidate.fact, b):
            return True
        if vectors is None or a.category != b.category or not contradicts(a.content, b.content):
            continue
        if float(vectors[rows[match]] @ vectors[rows[i]]) >= floor:
            return True
    return False
