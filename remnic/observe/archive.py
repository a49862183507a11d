"""Observation intake: conversation messages handed to remnic by agents and hooks.

The trace → observation → primitive pipeline starts here. Today messages are
validated and archived under ``.remnic/observe/<namespace>/<date>/<session>.jsonl``
(git-ignored); extraction into memories is not built yet, so callers are told
``extractionQueued: false``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from remnic.config import STATE_DIR
from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.model import now_iso
from remnic.memfile.validate import check_namespace

ROLES = ("user", "assistant")


def check_messages(session_key: Any, messages: Any, namespace: str) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    if not isinstance(session_key, str) or not session_key.strip() or len(session_key) > 256:
        problems.append(FieldProblem("sessionKey", "must be a non-empty string of at most 256 characters"))
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


def archive_name(session_key: str) -> str:
    """A readable file name that cannot escape its directory; a hash keeps distinct keys distinct."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", session_key)[:80].strip("_") or "session"
    if safe != session_key:
        safe += "-" + hashlib.sha256(session_key.encode("utf-8")).hexdigest()[:8]
    return safe


def archive(
    root: Path, session_key: str, messages: Sequence[Mapping[str, Any]], namespace: str, source: str = "api"
) -> dict[str, Any]:
    """Validate and append the messages as one write under an exclusive flock (observers never interleave)."""
    problems = check_messages(session_key, messages, namespace)
    if problems:
        raise ValidationError(
            problems[0].describe() if len(problems) == 1 else "invalid observation", problems=problems
        )
    day = time.strftime("%Y-%m-%d", time.gmtime())
    rel = f"{STATE_DIR}/observe/{namespace}/{day}/{archive_name(session_key)}.jsonl"
    now = now_iso()
    lines = []
    for i, msg in enumerate(messages):
        entry = {
            "ts": now,
            "sessionKey": session_key,
            "namespace": namespace,
            "turnIndex": i,
            "role": msg["role"],
            "content": msg["content"],
            "source": source,
        }
        for key in ("sourceFormat", "parts"):
            if key in msg:
                entry[key] = msg[key]
        lines.append(json.dumps(entry, ensure_ascii=False, default=str))
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, ("\n".join(lines) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return {
        "accepted": len(lines),
        "sessionKey": session_key,
        "namespace": namespace,
        "lcmArchived": True,
        "extractionQueued": False,
        "archivePath": rel,
    }
