"""Importance after extraction: ``importanceScore`` in [0, 1], its level, and the reasons.

The reference system's scorer is already free of any model; these are its rules, reimplemented:
a trivial short-circuit, then 0.5 plus the first critical marker (+0.20), the first high marker
(+0.12), minus hedging (−0.15), a category boost, a length bonus, a personal reference (+0.05),
specifics (+0.03) and important tags (+0.05 each), clamped and rounded to two decimals.

The markers are looked for in the speaker's own sentence (``quote``), where "I prefer" and "we
decided" still read as said; the length bonus is taken from the standalone content.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from remnic.index.text import normal_form
from remnic.memfile.model import importance_level

from .cues import words
from .letters import LOWER
from .records import Importance

TRIVIAL_SCORE = 0.1
TRIVIAL_REASON = "Trivial content (greeting, filler, or very short)"
_FILLER_RE = re.compile(
    r"^(hi|hello|hey|yo|sup|greetings|ok|okay|k|sure|yes|no|yep|nope|yeah|nah|thanks|thank you|thx|ty|cheers"
    r"|got it|understood|roger|copy|noted|bye|goodbye|later|see ya|ttyl|lol|haha|hehe|lmao|rofl"
    r"|hm+|uh+|ah+|er+|um+)[\s.!?,]*$",
    re.I,
)
_CRITICAL = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(critical|crucial|essential|must|always|never)\b",
        r"\b(important|remember this|don'?t forget)\b",
        r"\b(my name is|i am|i'm called)\b",
        r"\bmy (birthday|phone|email|address|ssn|password)\b",
        r"\bi (hate|love|despise|adore)\b",
        r"\b(absolutely|definitely|certainly) (not|must|should)\b",
        r"\b(actually|no,? that'?s wrong|correction:?|let me correct)\b",
        r"\b(i said|i meant|i was wrong)\b",
    )
)
_HIGH = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(decided|decision|chose|choosing|picked|selected)\b",
        r"\bwe('ll| will) (go with|use|implement)\b",
        r"\b(make sure|ensure|always|don'?t|do not|never|avoid)\b",
        r"\byou (should|must|need to)\b",
        r"\bby (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
        r"\b(deadline|due (date|by)|by (end of|next))\b",
        r"\b(tomorrow|next week|this week|today)\b",
        r"\bi (prefer|like|want|need|dislike)\b",
        r"\bmy (preference|style|approach|way)\b",
        r"\b(i('ll| will)|promise|commit|guarantee)\b",
        r"\b(scheduled|appointment|meeting|call)\b",
    )
)
_LOW = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(maybe|perhaps|possibly|might|could be)\b",
        r"\b(i think|i guess|not sure|uncertain)\b",
        r"\b(probably|likely|seems like)\b",
        r"\b(kind of|sort of|somewhat|a bit)\b",
        r"\b(in a way|to some extent)\b",
    )
)
CATEGORY_BOOST = {
    "correction": 0.15,
    "principle": 0.12,
    "rule": 0.11,
    "procedure": 0.10,
    "preference": 0.10,
    "commitment": 0.10,
    "reasoning_trace": 0.09,
    "decision": 0.08,
    "relationship": 0.05,
    "skill": 0.05,
    "moment": 0.03,
    "entity": 0.02,
    "fact": 0.0,
}
IMPORTANT_TAGS = ("important", "critical", "preference", "decision", "rule", "principle")
_PERSONAL_RE = re.compile(r"\b(my|mine|i|i'm|i've|i'd|i'll)\b", re.I)
_SPECIFIC_RE = re.compile(r"\d{2,}|\b(version|v\d|api|config)\b", re.I)
# A word in Latin letters, accented ones too ("läuft", "Łódź").
_LATIN_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]{2,}")
_TOKEN_RE = re.compile(rf"[{LOWER}][{LOWER}0-9'-]{{2,}}")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
KEYWORD_STOPWORDS = words(
    """the and for are but not you all any can had her was one our out has his how its may new now old see two who did
    get him let put say she too use that with have this will your from they been were said each which their what
    about would there when make like time just know take into year some could them than then look only come over
    also back after well even want because these give most user assistant"""
)


def informational_length(text: str) -> int:
    """Characters that carry words; CJK and Hangul characters weigh three."""
    letters = re.sub(r"[\s\W_]+", "", text)
    return len(letters) + 2 * len(_CJK_RE.findall(letters))


def keywords(text: str, limit: int = 5) -> tuple[str, ...]:
    """The most frequent lowercase words of three letters or more, stop words aside."""
    lower = normal_form(text).lower()  # "İstanbul" as "istanbul", not "i" and a combining dot
    counts = Counter(t for t in _TOKEN_RE.findall(lower) if t not in KEYWORD_STOPWORDS)
    return tuple(word for word, _n in sorted(counts.items(), key=lambda kv: (-kv[1], lower.find(kv[0])))[:limit])


def score_importance(
    content: str, category: str, tags: Sequence[str] = (), *, said: str | None = None, stated: bool = False
) -> Importance:
    """Importance of one fact. ``said`` is the speaker's own sentence (markers are read there).
    ``stated``: the sentence carries its category's own cue ("I hate YAML.", "I'm a nurse."), so being
    short does not make it trivial."""
    text = said or content
    if _FILLER_RE.match(text.strip()) or (not stated and 1 <= informational_length(text) <= 10):
        return Importance(TRIVIAL_SCORE, importance_level(TRIVIAL_SCORE), (TRIVIAL_REASON,), ())
    score, reasons = 0.5, []
    if not _LATIN_WORD_RE.search(text):
        reasons.append("Non-Latin script: keyword tiers not applicable; script-agnostic signals only")
    critical = next((p for p in _CRITICAL if p.search(text)), None)
    if critical is not None:
        score += 0.20
        reasons.append(f"Critical marker: {critical.pattern[:30]}")
    if any(p.search(text) for p in _HIGH):
        score += 0.12
        reasons.append("High importance marker detected")
    if any(p.search(text) for p in _LOW):
        score -= 0.15
        reasons.append("Uncertainty/hedging detected")
    boost = CATEGORY_BOOST.get(category, 0.0)
    if boost > 0:
        score += boost
        reasons.append(f"Category boost: {category}")
    length_bonus = min((len(content) - 200) / 1000, 0.1) if len(content) > 200 else 0.0
    score += length_bonus
    if length_bonus > 0.05:
        reasons.append("Substantial content length")
    if _PERSONAL_RE.search(text):
        score += 0.05
        reasons.append("Personal reference")
    if _SPECIFIC_RE.search(text):
        score += 0.03
        reasons.append("Contains specific details")
    important = [t for t in tags if t.lower() in IMPORTANT_TAGS]
    if important:
        score += 0.05 * len(important)
        reasons.append(f"Important tags: {', '.join(important)}")
    score = round(min(max(score, 0.0), 1.0), 2)
    return Importance(score, importance_level(score), tuple(reasons[:5]), keywords(content))
