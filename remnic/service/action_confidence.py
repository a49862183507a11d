"""The action-confidence advice as every surface asks for it: a request object (the HTTP body, the
tool's arguments, the CLI's flags) checked field by field, then :func:`remnic.recall.action_confidence.evaluate`.

Read-only: no memory is opened, nothing is written. Every problem is a :class:`ValidationError`
naming its field as the request spells it (``userRules[0].kind``) and the valid options.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from remnic.config import action_confidence as knobs
from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.validate import strings_problems
from remnic.recall.action_confidence import ActionRequest, Recalled, RetrievedMemory, UserRule, evaluate, recalled

REQUEST_FIELDS = (
    "intendedAction",
    "confidence",
    "risk",
    "contextReadiness",
    "currentContextScopes",
    "userRules",
    "retrievedMemories",
)
RULE_FIELDS = ("kind", "description", "matched")
MEMORY_FIELDS = (
    "source",
    "created",
    "updated",
    "scope",
    "userContextScopes",
    "retrievalReason",
    "confidence",
    "stale",
    "corrected",
    "correctionState",
    "safeToUse",
    "safety",
    "safetyReasons",
)
"""What the advice reads of a retrieved memory (the original's fields)."""
PROVENANCE_EXTRAS = (
    "namespace",
    "status",
    "lifecycleState",
    "verificationState",
    "policyClass",
    "sourceMemoryId",
    "sourceTurnId",
    "validAt",
    "invalidAt",
    "forgottenAt",
    "forgottenReason",
    "derivedFrom",
    "derivedVia",
    "space",
)
"""The rest of an X-ray result's ``provenance``: accepted, so one can be passed as it is, and not used
(``status`` is read with a recall result's ``frontmatter``)."""
RECALL_FIELDS = ("frontmatter", "category")
"""What the advice reads of a POST recall (or ``memory_search``) result besides ``safety``/``safeToUse``
and ``status``: the frontmatter's confidence, context scopes and correction history."""
RECALL_EXTRAS = (
    "id",
    "path",
    "score",
    "rank",
    "content",
    "tags",
    "entityRef",
    "preview",
    "disclosure",
    "snippet",
    "trimmed",
    "contentChars",
    "debug",
)
"""The rest of a recall result: accepted, so the results can be passed as they are, and not used."""
TEXT_LIMITS = {"intendedAction": 1000, "description": 2000, "retrievalReason": 2000, "scope": 512, "source": 256}
"""Characters a text field may hold (any other text field: 128)."""


class _Checker:
    """Collects every problem of one request, so one answer names them all."""

    def __init__(self) -> None:
        self.problems: list[FieldProblem] = []

    def refuse(self, name: str, message: str, options: tuple[str, ...] | None = None) -> None:
        self.problems.append(FieldProblem(name, message, options=options))

    def keys(self, obj: Mapping[str, Any], where: str, known: tuple[str, ...], extra: tuple[str, ...] = ()) -> None:
        for key in obj:
            if key not in known and key not in extra:
                self.refuse(f"{where}{key}", "unknown field", options=known)

    def text(self, obj: Mapping[str, Any], key: str, where: str) -> str | None:
        return self.string(obj.get(key), f"{where}{key}", TEXT_LIMITS.get(key, 128))

    def string(self, value: Any, name: str, limit: int) -> str | None:
        """``value`` trimmed, None when it is not given (or refused)."""
        if value is None:
            return None
        if not isinstance(value, str):
            self.refuse(name, f"must be a string, got {type(value).__name__}")
            return None
        value = value.strip()
        if not value:
            self.refuse(name, "must not be empty (leave it out instead)")
        elif len(value) > limit:
            self.refuse(name, f"has {len(value)} characters; the limit is {limit}")
        elif bad := strings_problems(value, name):
            self.problems += bad
        else:
            return value
        return None

    def choice(self, obj: Mapping[str, Any], key: str, where: str, options: tuple[str, ...]) -> str | None:
        value = obj.get(key)
        if value is None:
            return None
        if value not in options:
            self.refuse(f"{where}{key}", f"unknown value {value!r}"[:200], options=options)
            return None
        return str(value)

    def flag(self, obj: Mapping[str, Any], key: str, where: str) -> bool | None:
        value = obj.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.refuse(f"{where}{key}", f"must be true or false, got {type(value).__name__}")
        return None

    def unit(self, obj: Mapping[str, Any], key: str, where: str) -> float | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.refuse(f"{where}{key}", f"must be a number from 0 to 1, got {value!r}"[:200])
        elif not 0 <= value <= 1:
            self.refuse(f"{where}{key}", f"must be from 0 to 1, got {value!r}")
        else:
            return float(value)
        return None

    def items(self, obj: Mapping[str, Any], key: str, where: str, limit: int) -> list[Any]:
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.refuse(f"{where}{key}", f"must be an array, got {type(value).__name__}")
            return []
        if len(value) > limit:
            self.refuse(f"{where}{key}", f"has {len(value)} items; the limit is {limit}")
            return []
        return value

    def texts(self, obj: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        out = []
        for i, item in enumerate(self.items(obj, key, where, knobs.MAX_SCOPES)):
            name = f"{where}{key}[{i}]"
            if item is None:
                self.refuse(name, "must be a string, got null")
            elif (text := self.string(item, name, 128)) is not None:
                out.append(text)
        return tuple(out)

    def rule(self, item: Any, where: str) -> UserRule | None:
        if not isinstance(item, Mapping):
            self.refuse(
                where.rstrip("."), f"must be an object {{kind, description?, matched?}}, got {type(item).__name__}"
            )
            return None
        self.keys(item, where, RULE_FIELDS)
        kind = self.choice(item, "kind", where, knobs.RULE_KINDS)
        if item.get("kind") is None:
            self.refuse(f"{where}kind", "is required", options=knobs.RULE_KINDS)
        description, matched = self.text(item, "description", where), self.flag(item, "matched", where)
        return UserRule(kind, description, matched) if kind else None

    def memory(self, item: Any, where: str) -> RetrievedMemory | None:
        if not isinstance(item, Mapping):
            self.refuse(
                where.rstrip("."),
                f"must be an object (a recall result, or an X-ray result's provenance), got {type(item).__name__}",
            )
            return None
        self.keys(item, where, MEMORY_FIELDS, (*PROVENANCE_EXTRAS, *RECALL_FIELDS, *RECALL_EXTRAS))
        for key in ("source", "created", "updated", "scope", "retrievalReason"):
            self.text(item, key, where)
        self.texts(item, "safetyReasons", where)
        scopes = self.texts(item, "userContextScopes", where)
        confidence = self.unit(item, "confidence", where)
        stale, corrected = self.flag(item, "stale", where), self.flag(item, "corrected", where)
        safe_to_use = self.flag(item, "safeToUse", where)
        safety = self.choice(item, "safety", where, knobs.SAFETIES)
        state = self.choice(item, "correctionState", where, knobs.CORRECTION_STATES)
        said = self.recalled(item, where)
        if said is not None:  # what the provenance states wins over what the frontmatter implies
            confidence = said.confidence if item.get("confidence") is None else confidence
            scopes = said.user_context_scopes if item.get("userContextScopes") is None else scopes
            state = state or (None if item.get("corrected") is not None else said.correction_state)
        # As the original reads a summary: safeToUse false makes a "safe" (or unstated) safety requires-review.
        if safety is None or (safety == "safe" and safe_to_use is False):
            safety = "requires-review" if safe_to_use is False else "safe"
        state = state or ("correction" if corrected else "none")
        return RetrievedMemory(
            confidence=confidence or 0.0,
            stale=bool(stale),
            corrected=bool(corrected) or state != "none",
            correction_state=state,
            safety=safety,
            user_context_scopes=scopes,
        )

    def recalled(self, item: Mapping[str, Any], where: str) -> Recalled | None:
        """What a recall result's ``frontmatter`` says (None without one, or when it is refused)."""
        frontmatter = item.get("frontmatter")
        if frontmatter is None:
            return None
        status, category = item.get("status"), item.get("category")
        for key, value in (("status", status), ("category", category)):
            if value is not None and not isinstance(value, str):
                self.refuse(f"{where}{key}", f"must be a string, got {type(value).__name__}")
        if not isinstance(frontmatter, Mapping):
            self.refuse(
                f"{where}frontmatter", f"must be an object (a recall result's), got {type(frontmatter).__name__}"
            )
            return None
        return recalled(
            frontmatter, status if isinstance(status, str) else None, category if isinstance(category, str) else None
        )


def parse_request(request: Mapping[str, Any]) -> ActionRequest:
    """The request as the domain takes it, or a ValidationError naming every bad field."""
    if not isinstance(request, Mapping):
        raise ValidationError.single("", f"the request must be a JSON object, got {type(request).__name__}")
    check = _Checker()
    check.keys(request, "", REQUEST_FIELDS)
    action = check.text(request, "intendedAction", "")
    confidence = check.unit(request, "confidence", "")
    risk = check.choice(request, "risk", "", knobs.RISKS)
    readiness = check.choice(request, "contextReadiness", "", knobs.CONTEXT_READINESS)
    scopes = check.texts(request, "currentContextScopes", "")
    rules = [
        check.rule(item, f"userRules[{i}].")
        for i, item in enumerate(check.items(request, "userRules", "", knobs.MAX_RULES))
    ]
    memories = [
        check.memory(item, f"retrievedMemories[{i}].")
        for i, item in enumerate(check.items(request, "retrievedMemories", "", knobs.MAX_MEMORIES))
    ]
    if check.problems:
        problems = check.problems
        summary = (
            problems[0].describe() if len(problems) == 1 else f"request validation failed ({len(problems)} problems)"
        )
        raise ValidationError(summary, problems=problems)
    return ActionRequest(
        intended_action=action,
        confidence=confidence,
        risk=risk or knobs.DEFAULT_RISK,
        context_readiness=readiness,
        current_context_scopes=scopes,
        user_rules=tuple(r for r in rules if r is not None),
        retrieved_memories=tuple(m for m in memories if m is not None),
    )


def action_confidence(request: Mapping[str, Any]) -> dict[str, Any]:
    """The advice for one request: ``{decision, confidence, risk, contextReadiness, attentionPolicy,
    principle, reasons, blockers, factors, …Count, safeToAct}``; writes nothing."""
    return evaluate(parse_request(request)).to_dict()
