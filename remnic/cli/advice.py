"""``remnic action-confidence``: ask, draft, act, refuse or escalate? The advice POST action-confidence
and the action_confidence tool give, from flags. Read-only: no memory repository is opened."""

from __future__ import annotations

import argparse
from typing import Any

from remnic.config import action_confidence as knobs

from ._common import add_command, choice_list, emit, safe, unit_float

EPILOG = f"""\
The advice weighs how sure the agent is, how risky the action is and how much context it
has (interruption budgeting: spend the user's attention only where it buys something):
a `never` or `do-not-use-outside-this-context` rule refuses, a `requires-escalation` rule
or risk `restricted` escalates, no context, an `ask-before` rule or risk `irreversible`
asks; otherwise the risk and the adjusted confidence decide between act, draft and ask
(the table is in docs/agents.md). Nothing is read or written; the same flags always get
the same advice. For retrieved memories' provenance use POST action-confidence or the
action_confidence tool.

risk: {", ".join(knobs.RISKS)} (default {knobs.DEFAULT_RISK})
context: {", ".join(knobs.CONTEXT_READINESS)} (default none)
rule: {", ".join(knobs.RULE_KINDS)}

examples:
  remnic action-confidence --confidence 0.9 --risk low --context sufficient
  remnic action-confidence --confidence 0.9 --risk high --context sufficient --action "merge the PR"
  remnic action-confidence --rule ask-before --json
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "action-confidence",
        "advice before acting: ask, draft, act, refuse or escalate (read-only)",
        epilog=EPILOG,
    )
    p.add_argument(
        "--confidence",
        metavar="N",
        type=unit_float("--confidence"),
        help=f"how sure the agent is, 0-1 (default {knobs.UNSTATED_CONFIDENCE}, as for a confidence not stated)",
    )
    p.add_argument(
        "--risk",
        type=choice_list("--risk", knobs.RISKS),
        metavar="|".join(knobs.RISKS),
        help=f"what a mistake costs (default {knobs.DEFAULT_RISK})",
    )
    p.add_argument(
        "--context",
        type=choice_list("--context", knobs.CONTEXT_READINESS),
        metavar="|".join(knobs.CONTEXT_READINESS),
        help="how much of the needed context the agent has (default none)",
    )
    p.add_argument("--action", metavar="TEXT", help="the action being considered (echoed back)")
    p.add_argument(
        "--rule",
        action="append",
        type=choice_list("--rule", knobs.RULE_KINDS),
        metavar="KIND",
        help="a user rule that matched (repeatable)",
    )
    p.set_defaults(handler=cmd_action_confidence)


def cmd_action_confidence(args: argparse.Namespace) -> int:
    from remnic.service.action_confidence import action_confidence

    request: dict[str, Any] = {
        "intendedAction": args.action,
        "confidence": args.confidence,
        "risk": args.risk,
        "contextReadiness": args.context,
        "userRules": [{"kind": kind} for kind in args.rule] if args.rule else None,
    }
    advice = action_confidence({k: v for k, v in request.items() if v is not None})

    def text() -> str:
        lines = [f"{advice['decision']} (confidence {advice['confidence']:.2f})"]
        if advice.get("intendedAction"):
            lines.append(f"action: {safe(advice['intendedAction'])}")
        lines.append(f"risk: {advice['risk']}; context: {advice['contextReadiness']}")
        lines.append(f"policy: {advice['attentionPolicy']} ({advice['principle']})")
        for title, key in (("blockers", "blockers"), ("reasons", "reasons")):
            if advice[key]:
                lines += [f"{title}:", *(f"  - {safe(line)}" for line in advice[key])]
        lines.append("factors:")
        for f in advice["factors"]:
            delta = f" {f['delta']:+.2f}" if f["delta"] else ""
            lines.append(f"  - {f['name']} ({f['status']}{delta}): {f['message']}")
        return "\n".join(lines)

    emit(args, advice, text)
    return 0
