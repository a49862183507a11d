"""The vocabulary and thresholds of the action-confidence advice (``remnic action-confidence``,
``POST action-confidence``, the ``action_confidence`` tool): fixed numbers, not settings, so the
same request gets the same decision from every remnic and from the original Remnic.

How they are used: :mod:`remnic.recall.action_confidence`; the table in docs/agents.md.
"""

from __future__ import annotations

DECISIONS = ("ask", "draft", "act", "refuse", "escalate")
"""What the advice can say, from least to most unusual: ask the user, draft without acting, act,
refuse, hand the request to someone else."""
RISKS = ("low", "medium", "high", "irreversible", "restricted")
"""How much an action can hurt when it is wrong; ``restricted`` always escalates, ``irreversible``
always asks."""
DEFAULT_RISK = "medium"
"""The risk of a request that names none."""
CONTEXT_READINESS = ("none", "partial", "sufficient")
"""How much of the context the action needs the caller has; unnamed, it is ``partial`` when a usable,
fresh memory was supplied, else ``none``."""
RULE_KINDS = ("ask-before", "do-not-use-outside-this-context", "never", "requires-escalation")
"""A user rule matched by the caller: ``never`` and ``do-not-use-outside-this-context`` refuse,
``requires-escalation`` escalates, ``ask-before`` asks."""
SAFETIES = ("safe", "requires-review", "blocked")
"""A retrieved memory's safety, as recall reports it (``safety`` on each hit)."""
CORRECTION_STATES = ("none", "correction", "superseded", "disputed", "forgotten")
"""A retrieved memory's correction history, as the X-ray's provenance reports it."""
USER_CONTEXT_SCOPES = (
    "personal",
    "work",
    "client",
    "project",
    "repo",
    "team",
    "tool",
    "temporary",
    "private",
    "do-not-use-outside-this-context",
)
"""The user-context scopes a memory can be limited to; any other scope a memory names is ignored."""
SCOPE_ALIASES = {
    "repository": "repo",
    "client-work": "client",
    "do-not-use-outside": "do-not-use-outside-this-context",
    "dont-use-outside": "do-not-use-outside-this-context",
}
"""Other spellings of a scope (after lowercasing and turning spaces and ``_`` into ``-``)."""

UNSTATED_CONFIDENCE = 0.5
"""The starting confidence when the request gives none and no usable memory was supplied (with usable
memories it is their mean confidence; a memory that states none counts as 0)."""
NO_CONTEXT_PENALTY = 0.25
"""Taken off the confidence when the context readiness is ``none``."""
SUFFICIENT_CONTEXT_BONUS = 0.08
"""Added to the confidence when the caller says the context is ``sufficient``."""
STALE_PENALTY = (0.08, 0.25)
"""(per stale usable memory, at most in all) taken off the confidence."""
CORRECTED_PENALTY = (0.07, 0.20)
"""(per usable memory with correction history, at most in all) taken off the confidence."""
SCOPE_MISMATCH_PENALTY = (0.12, 0.35)
"""(per memory whose scopes miss every current context scope, at most in all) taken off the confidence."""

ACT_AT_LOW_RISK = 0.70
"""At ``low`` risk with ``sufficient`` context, act from this confidence on."""
DRAFT_AT_LOW_RISK = 0.45
"""At ``low`` risk, draft from this confidence on (below it: ask)."""
ACT_AT_MEDIUM_RISK = 0.85
"""At ``medium`` risk with ``sufficient`` context, act from this confidence on."""
DRAFT_AT_MEDIUM_RISK = 0.55
"""At ``medium`` risk, draft from this confidence on (below it: ask)."""
DRAFT_AT_HIGH_RISK = 0.85
"""At ``high`` risk with ``sufficient`` context, draft from this confidence on (else ask; never act)."""

MAX_SCOPES = 50
"""``currentContextScopes`` (and a memory's ``userContextScopes``/``safetyReasons``) hold at most this many."""
MAX_RULES = 100
"""``userRules`` holds at most this many rules."""
MAX_MEMORIES = 200
"""``retrievedMemories`` holds at most this many memories."""
