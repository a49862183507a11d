"""Observation intake: conversation messages handed to remnic by agents and hooks.

The trace → observation → primitive pipeline starts here: messages are validated and
archived, lossless, in the memory repository's durable ``state/transcripts/<namespace>/
<session>.jsonl`` (see :mod:`remnic.observe.lcm`), where ``remnic lcm search`` finds them
and reindex never deletes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.model import now_iso
from remnic.memfile.validate import check_namespace

from .lcm.store import append_turns, archive_name

ROLES = ("user", "assistant")
MAX_SESSION_KEY = 512

__all__ = ["MAX_SESSION_KEY", "ROLES", "archive", "archive_name", "check_messages"]


def check_messages(session_key: Any, messages: Any, namespace: str) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    if not isinstance(session_key, str) or not session_key.strip() or len(session_key) > MAX_SESSION_KEY:
        problems.append(
            FieldProblem("sessionKey", f"must be a non-empty string of at most {MAX_SESSION_KEY} characters")
        )
    problems += check_namespace(namespace)
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)) or not messages:
        return problems + [FieldProblem("messages", "must be a non-empty array of {role, content} objects")]
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            problems.append(FieldProblem(f"messages[{i}]", "must be an object with role and content"))
            continue
        if msg.get("role") not in ROLES:
            problems.append(FieldProblem(f"messages[{i}].role", f"unknown role {msg.get('role')!r}", options=ROLES))
        if not isinstance(msg.get("content"), str):
            problems.append(FieldProblem(f"messages[{i}].content", "must be a string"))
    return problems


def archive(
    root: Path, session_key: str, messages: Sequence[Mapping[str, Any]], namespace: str, source: str = "api"
) -> dict[str, Any]:
    """Validate and append the messages to the session's archive as one write under an exclusive
    flock (observers never interleave); each turn is numbered after the session's earlier ones."""
    problems = check_messages(session_key, messages, namespace)
    if problems:
        raise ValidationError(
            problems[0].describe() if len(problems) == 1 else "invalid observation", problems=problems
        )
    appended = append_turns(root, session_key, namespace, messages, source=source, now=now_iso())
    return {
        "accepted": appended.count,
        "sessionKey": session_key,
        "namespace": namespace,
        "lcmArchived": True,
        "extractionQueued": False,
        "archivePath": appended.path,
        "firstTurnIndex": appended.first_turn,
    }
