"""Action confidence: should an agent ask, draft, act, refuse or escalate? (pure, deterministic)

Interruption budgeting: the user's attention is spent only where it buys something. The caller
says how sure it is, how risky the action is, how much context it has, which of the user's rules
matched, and what the memories it recalled say about themselves (safety, staleness, corrections,
scopes); :func:`evaluate` weighs them with the fixed numbers of
:mod:`remnic.config.action_confidence` and answers with the decision and every reason for it.
Nothing is read or written: the same input always gets the same answer.

The rules, first match wins:

1. a blocker (a ``never`` or ``do-not-use-outside-this-context`` rule, a ``blocked`` memory): refuse;
2. a ``requires-escalation`` rule, or risk ``restricted``: escalate;
3. no context: ask;
4. an ``ask-before`` rule, or risk ``irreversible``: ask;
5. by risk and the adjusted confidence: ``high`` drafts at ≥ 0.85 with sufficient context, else asks;
   ``medium`` acts at ≥ 0.85 with sufficient context, drafts at ≥ 0.55, else asks; ``low`` acts at
   ≥ 0.70 with sufficient context, drafts at ≥ 0.45, else asks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from remnic.config import action_confidence as knobs
from remnic.memfile.values import confidence_of

from .provenance import context_scopes, correction_state

ATTENTION_POLICY = "interruption_budgeting"
PRINCIPLE = "Spend the user's attention carefully: interrupt only when an answer is worth the interruption."


@dataclass(frozen=True)
class UserRule:
    kind: str
    """One of ``RULE_KINDS``."""
    description: str | None = None
    matched: bool | None = None
    """False: the caller lists the rule but says it does not apply (it is then ignored)."""

    @property
    def label(self) -> str:
        return self.description or self.kind


@dataclass(frozen=True)
class RetrievedMemory:
    """What a recalled memory says about itself (a recall result as it is, or the X-ray's provenance)."""

    confidence: float = 0.0
    stale: bool = False
    corrected: bool = False
    correction_state: str = "none"
    safety: str = "safe"
    user_context_scopes: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        return self.safety == "safe"


@dataclass(frozen=True)
class Recalled:
    """What a POST recall result's ``frontmatter`` says that the X-ray's provenance would say of it."""

    confidence: float
    user_context_scopes: tuple[str, ...]
    correction_state: str


def recalled(frontmatter: Mapping[str, Any], status: str | None, category: str | None) -> Recalled:
    """A recall result read as :func:`remnic.recall.snapshot.provenance` reads the hit (its ``safety``
    is recall's own verdict, so a stale or unreviewed memory is already not ``safe``)."""
    status = status or _text(frontmatter.get("status")) or "active"
    category = category or _text(frontmatter.get("category")) or ""
    state = correction_state(frontmatter, status, category)
    return Recalled(
        confidence=min(1.0, max(0.0, confidence_of(frontmatter))),
        user_context_scopes=tuple(context_scopes(frontmatter)),
        correction_state=state if state in knobs.CORRECTION_STATES else "none",
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class ActionRequest:
    intended_action: str | None = None
    confidence: float | None = None
    """The caller's own confidence, 0-1; None: the usable memories' mean, else ``UNSTATED_CONFIDENCE``."""
    risk: str = knobs.DEFAULT_RISK
    context_readiness: str | None = None
    """None: inferred (partial with a usable, fresh memory, else none)."""
    current_context_scopes: tuple[str, ...] = ()
    user_rules: tuple[UserRule, ...] = ()
    retrieved_memories: tuple[RetrievedMemory, ...] = ()


@dataclass(frozen=True)
class Factor:
    name: str
    """provenance, context, staleness, correction or scope."""
    status: str
    """positive, negative or neutral."""
    message: str
    delta: float = 0.0
    """What this factor added to (or took off) the confidence."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "message": self.message, "delta": self.delta}


@dataclass(frozen=True)
class ActionAdvice:
    decision: str
    confidence: float
    risk: str
    context_readiness: str
    intended_action: str | None
    reasons: tuple[str, ...]
    blockers: tuple[str, ...]
    factors: tuple[Factor, ...]
    retrieved: int
    usable: int
    stale: int
    corrected: int
    scope_mismatches: int

    def to_dict(self) -> dict[str, Any]:
        """The original Remnic's result keys (plus each factor's ``delta``)."""
        out: dict[str, Any] = {
            "schemaVersion": 1,
            "decision": self.decision,
            "confidence": self.confidence,
            "risk": self.risk,
            "contextReadiness": self.context_readiness,
        }
        if self.intended_action:
            out["intendedAction"] = self.intended_action
        out.update(
            {
                "attentionPolicy": ATTENTION_POLICY,
                "principle": PRINCIPLE,
                "reasons": list(self.reasons),
                "blockers": list(self.blockers),
                "factors": [f.to_dict() for f in self.factors],
                "retrievedMemoryCount": self.retrieved,
                "usableMemoryCount": self.usable,
                "staleMemoryCount": self.stale,
                "correctedMemoryCount": self.corrected,
                "scopeMismatchCount": self.scope_mismatches,
                "safeToAct": self.decision == "act",
            }
        )
        return out


def scope_of(value: str) -> str | None:
    """A scope as ``USER_CONTEXT_SCOPES`` spells it, or None for one that is not a user-context scope."""
    token = "-".join(value.strip().lower().replace("_", " ").replace("-", " ").split())
    token = knobs.SCOPE_ALIASES.get(token, token)
    return token if token in knobs.USER_CONTEXT_SCOPES else None


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _capped(count: int, penalty: tuple[float, float]) -> float:
    each, most = penalty
    return min(most, count * each)


def _rounded(value: float) -> float:
    """Clamped to 0-1 and rounded to two places, halves up (as the original rounds)."""
    return math.floor(min(1.0, max(0.0, value)) * 100 + 0.5) / 100


def _mismatched(memory: RetrievedMemory, current: frozenset[str]) -> bool:
    """A memory limited to scopes of which none is current (no scopes on either side: no mismatch)."""
    scopes = {s for s in (scope_of(v) for v in memory.user_context_scopes) if s}
    return bool(scopes) and bool(current) and not scopes & current


def evaluate(request: ActionRequest) -> ActionAdvice:
    memories = request.retrieved_memories
    usable = [m for m in memories if m.usable]
    blocked = [m for m in memories if m.safety == "blocked"]
    stale = sum(1 for m in usable if m.stale)
    corrected = sum(1 for m in usable if m.corrected or m.correction_state != "none")
    # A scope that is no user-context scope is kept as written: it can only miss a memory's scopes.
    current = frozenset(scope_of(s) or s.strip() for s in request.current_context_scopes if s.strip())
    mismatched = sum(1 for m in memories if _mismatched(m, current))
    readiness = request.context_readiness or ("partial" if any(not m.stale for m in usable) else "none")
    rules = [r for r in request.user_rules if r.matched is not False]

    if request.confidence is not None:
        confidence = request.confidence
    elif usable:
        confidence = sum(m.confidence for m in usable) / len(usable)
    else:
        confidence = knobs.UNSTATED_CONFIDENCE

    factors: list[Factor] = []
    reasons: list[str] = []
    blockers: list[str] = []

    if usable:
        factors.append(
            Factor(
                "provenance",
                "positive",
                f"{_count(len(usable), 'retrieved memory is', 'retrieved memories are')} safe to use.",
            )
        )
        reasons.append("Recalled memory with usable provenance supports the action.")
    elif memories:
        factors.append(Factor("provenance", "negative", "Memories were supplied, but none is safe to use."))
    else:
        factors.append(Factor("provenance", "neutral", "No retrieved memories were supplied."))

    if readiness == "none":
        delta = -knobs.NO_CONTEXT_PENALTY
        factors.append(Factor("context", "negative", "There is no usable context for the action.", delta))
    elif readiness == "sufficient":
        delta = knobs.SUFFICIENT_CONTEXT_BONUS
        factors.append(Factor("context", "positive", "The caller says the context is sufficient.", delta))
    else:
        delta = 0.0
        factors.append(Factor("context", "neutral", "The context is partial."))
    confidence += delta

    for name, count, penalty, said in (
        ("staleness", stale, knobs.STALE_PENALTY, "stale"),
        ("correction", corrected, knobs.CORRECTED_PENALTY, "corrected before"),
        ("scope", mismatched, knobs.SCOPE_MISMATCH_PENALTY, "outside the current context scopes"),
    ):
        if count:
            delta = -_capped(count, penalty)
            confidence += delta
            memory = _count(count, "retrieved memory is", "retrieved memories are")
            factors.append(Factor(name, "negative", f"{memory} {said}.", round(delta, 4)))

    if blocked:
        blockers.append(
            f"{_count(len(blocked), 'retrieved memory is', 'retrieved memories are')} blocked (safety: blocked)."
        )
    for rule in rules:
        if rule.kind == "never":
            blockers.append(f"A user rule forbids this: {rule.label}.")
        elif rule.kind == "do-not-use-outside-this-context":
            blockers.append(f"A user rule keeps this out of the current context: {rule.label}.")
        elif rule.kind == "ask-before":
            reasons.append(f"A user rule asks to be asked first: {rule.label}.")
        else:
            reasons.append(f"A user rule requires escalation: {rule.label}.")

    confidence = _rounded(confidence)
    decision = _decide(request.risk, readiness, confidence, {r.kind for r in rules}, bool(blockers))
    reasons.append(_WHY[decision])
    return ActionAdvice(
        decision=decision,
        confidence=confidence,
        risk=request.risk,
        context_readiness=readiness,
        intended_action=request.intended_action,
        reasons=tuple(reasons),
        blockers=tuple(blockers),
        factors=tuple(factors),
        retrieved=len(memories),
        usable=len(usable),
        stale=stale,
        corrected=corrected,
        scope_mismatches=mismatched,
    )


_WHY = {
    "act": "Confidence, context, scope and risk are enough to act without interrupting the user.",
    "draft": "A draft keeps the work moving without an action the user would see.",
    "ask": "Asking is the cheapest way to settle missing context or a risky step.",
    "escalate": "The request is outside what an agent decides alone.",
    "refuse": "The action should not go ahead with this memory context.",
}


def _decide(risk: str, readiness: str, confidence: float, kinds: set[str], blocked: bool) -> str:
    if blocked:
        return "refuse"
    if "requires-escalation" in kinds or risk == "restricted":
        return "escalate"
    if readiness == "none" or "ask-before" in kinds or risk == "irreversible":
        return "ask"
    sufficient = readiness == "sufficient"
    if risk == "high":
        return "draft" if sufficient and confidence >= knobs.DRAFT_AT_HIGH_RISK else "ask"
    act, draft = (
        (knobs.ACT_AT_MEDIUM_RISK, knobs.DRAFT_AT_MEDIUM_RISK)
        if risk == "medium"
        else (knobs.ACT_AT_LOW_RISK, knobs.DRAFT_AT_LOW_RISK)
    )
    if sufficient and confidence >= act:
        return "act"
    return "draft" if confidence >= draft else "ask"
