"""A fact candidate's confidence: its category's (or cue's) base, less for a hedge, a bare pronoun subject
naming nothing, or the assistant saying it."""

from __future__ import annotations

from . import cues
from .normalize import strip_markers

# Base confidence per (category, cue); the tier rubric: explicit ≥ 0.95, implied ≥ 0.70, inferred ≥ 0.40.
_CONFIDENCE = {
    "correction": 0.95,
    "principle": 0.9,
    "rule": 0.85,
    "preference": 0.95,
    "commitment": 0.9,
    "decision": 0.95,
    "relationship": 0.9,
    "entity": 0.85,
    "moment": 0.85,
    "skill": 0.85,
    "procedure": 0.8,
    "fact": 0.85,
}
_CUE_CONFIDENCE = {"prefers": 0.85, "plan": 0.75, "specific statement": 0.75, "felt": 0.8, "stated value": 0.9}
_HEDGE_FACTOR = 0.6
_ASSISTANT_CAP = 0.75
_PRONOUN_PENALTY = 0.2


def confidence_for(category: str, cue: str, sentence: str, role: str) -> tuple[float, bool]:
    """The fact's confidence and whether the speaker hedged."""
    confidence = _CUE_CONFIDENCE.get(cue, _CONFIDENCE[category])
    hedged = bool(cues.HEDGE_RE.search(sentence))
    if hedged:
        confidence *= _HEDGE_FACTOR
    core = strip_markers(sentence)
    if cues.PRONOUN_SUBJECT_RE.match(core) and not cues.SPECIFIC_RE.search(core):
        confidence -= _PRONOUN_PENALTY
    if role == "assistant":
        confidence = min(confidence, _ASSISTANT_CAP)
    return round(max(0.05, min(confidence, 1.0)), 2), hedged
