"""Routes clients of the original Remnic call that remnic answers in its own terms: the
action-confidence advice (``POST action-confidence``, the ``action_confidence`` tool) and the
maintenance summary (``GET maintenance``). Their declared inputs, output schema and handlers.

A mixin of :class:`~.api.Api`, so both run through ``Api.call`` (validation, namespace policy) and a
tool's result is byte for byte its route's body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.config import action_confidence as knobs
from remnic.service.action_confidence import PROVENANCE_EXTRAS, RECALL_EXTRAS, action_confidence

from .params import NAMESPACE, Operation, Param
from .reply import Reply
from .shapes import BOOLEAN, INTEGER, JSON, NUMBER, STRING, obj

if TYPE_CHECKING:
    from collections.abc import Callable

    from remnic.service.memory import Memory

    from .auth import NamespacePolicy

_TEXT: JSON = {"type": "string", "minLength": 1}
_UNIT: JSON = {"type": "number", "minimum": 0, "maximum": 1}
_TEXTS: JSON = {"type": "array", "items": _TEXT, "maxItems": knobs.MAX_SCOPES}
RULE_SHAPE: JSON = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": list(knobs.RULE_KINDS)},
        "description": {**_TEXT, "maxLength": 2000, "description": "the rule as the user said it"},
        "matched": {"type": "boolean", "description": "false: listed but not matched (ignored)"},
    },
    "required": ["kind"],
    "additionalProperties": False,
}
_MEMORY_PROPERTIES: dict[str, JSON] = {
    "source": _TEXT,
    "created": _TEXT,
    "updated": _TEXT,
    "scope": _TEXT,
    "userContextScopes": {
        **_TEXTS,
        "description": f"scopes the memory is limited to: {', '.join(knobs.USER_CONTEXT_SCOPES)}",
    },
    "retrievalReason": _TEXT,
    "confidence": {**_UNIT, "description": "the memory's confidence (missing: 0)"},
    "stale": BOOLEAN,
    "corrected": BOOLEAN,
    "correctionState": {"type": "string", "enum": list(knobs.CORRECTION_STATES)},
    "safeToUse": BOOLEAN,
    "safety": {"type": "string", "enum": list(knobs.SAFETIES), "description": "blocked refuses the action"},
    "safetyReasons": _TEXTS,
}
MEMORY_SHAPE: JSON = {
    "type": "object",
    "description": "a recalled memory: a POST recall result, or an X-ray result's provenance, as it is",
    "properties": {
        **_MEMORY_PROPERTIES,
        **{key: {"description": "accepted (an X-ray provenance key), not used"} for key in PROVENANCE_EXTRAS},
        "frontmatter": {"type": "object", "description": "a recall result's: its confidence, scopes, corrections"},
        "category": {"type": "string", "description": "a recall result's (a correction counts as corrected)"},
        **{key: {"description": "accepted (a recall result's key), not used"} for key in RECALL_EXTRAS},
    },
    "additionalProperties": False,
}

ACTION_CONFIDENCE = Operation(
    "action_confidence",
    "Advice before acting: ask, draft, act, refuse or escalate (interruption budgeting), from the caller's "
    "confidence, the risk, how much context it has, the user's matched rules and the recalled memories' safety. "
    "Read-only and deterministic; the reasons and each factor come with it. Same JSON as POST action-confidence.",
    (
        Param("intendedAction", "string", "the action being considered, echoed back", max_length=1000),
        Param("confidence", "number", "the caller's overall confidence, 0-1", minimum=0, maximum=1),
        Param("risk", "string", f"how much a mistake costs (default {knobs.DEFAULT_RISK})", options=knobs.RISKS),
        Param(
            "contextReadiness",
            "string",
            "how much of the needed context the caller has (default: partial with a usable memory, else none)",
            options=knobs.CONTEXT_READINESS,
        ),
        Param(
            "currentContextScopes",
            "array",
            "the scopes the user is in now (work, personal, repo, …)",
            items="string",
            max_length=knobs.MAX_SCOPES,
        ),
        Param(
            "userRules",
            "array",
            "the user's rules that matched: {kind, description?, matched?}",
            item_schema=RULE_SHAPE,
            max_length=knobs.MAX_RULES,
        ),
        Param(
            "retrievedMemories",
            "array",
            "the recalled memories: POST recall's results as they are, or the X-ray results' provenance",
            item_schema=MEMORY_SHAPE,
            max_length=knobs.MAX_MEMORIES,
        ),
    ),
)
MAINTENANCE = Operation(
    "maintenance",
    "Health plus what maintenance knows: the review queue's size, memories by status, the last consolidation.",
    (NAMESPACE,),
    tool=False,
)

ACTION_CONFIDENCE_OUTPUT: JSON = obj(
    {
        "schemaVersion": {"type": "integer", "enum": [1]},
        "decision": {"type": "string", "enum": list(knobs.DECISIONS)},
        "confidence": {**_UNIT, "description": "the confidence after every factor, two decimals"},
        "risk": {"type": "string", "enum": list(knobs.RISKS)},
        "contextReadiness": {"type": "string", "enum": list(knobs.CONTEXT_READINESS)},
        "attentionPolicy": {"type": "string", "enum": ["interruption_budgeting"]},
        "principle": STRING,
        "reasons": {"type": "array", "items": STRING},
        "blockers": {"type": "array", "items": STRING, "description": "why the action is refused; empty otherwise"},
        "factors": {
            "type": "array",
            "items": obj(
                {
                    "name": {"type": "string", "enum": ["provenance", "context", "staleness", "correction", "scope"]},
                    "status": {"type": "string", "enum": ["positive", "negative", "neutral"]},
                    "message": STRING,
                    "delta": {**NUMBER, "description": "what the factor added to the confidence"},
                }
            ),
        },
        "retrievedMemoryCount": INTEGER,
        "usableMemoryCount": INTEGER,
        "staleMemoryCount": INTEGER,
        "correctedMemoryCount": INTEGER,
        "scopeMismatchCount": INTEGER,
        "safeToAct": {**BOOLEAN, "description": "true exactly when the decision is act"},
    },
    {"intendedAction": STRING},
)


def original_operations() -> tuple[Operation, ...]:
    return (ACTION_CONFIDENCE, MAINTENANCE)


class OriginalApi:
    """Mixed into :class:`~.api.Api`, which sets these."""

    memory: Memory
    policy: NamespacePolicy
    op_health: Callable[[str, dict[str, Any]], Reply]
    _malformed: Callable[[str, str | None], dict[str, Any]]

    def op_action_confidence(self, principal: str, values: dict[str, Any]) -> Reply:
        return Reply(200, action_confidence({k: v for k, v in values.items() if not k.startswith("_")}))

    def op_maintenance(self, principal: str, values: dict[str, Any]) -> Reply:
        ns = self.policy.resolve(principal, values.get("namespace"), write=False)
        health = self.op_health(principal, values)
        if health.status != 200:
            return health  # the memory directory is gone: nothing else to say
        # Imported here: it brings in consolidation and the observe rules, which a server needs only when
        # it consolidates (or is asked this), not at every start (~0.15 CPU-s of a `remnic serve` start).
        from remnic.service.maintenance import maintenance_summary

        summary = maintenance_summary(
            self.memory,
            namespace=ns,
            readable=lambda name: self.policy.can_read(principal, name),
            whole_repository=not self.policy.enabled,
        )
        body = {
            "namespace": ns or self.policy.default,
            "health": health.body,
            **summary,
            # The original's governance run: remnic runs none, so there is never one to show.
            "latestGovernanceRun": {"found": False, "namespace": ns or self.policy.default},
        }
        return Reply(200, {**body, **self._malformed(principal, ns)})
