"""Git hooks for a memory repository and the agent host hooks' logic.

The hook files themselves live in the top-level ``hooks/`` folder: small POSIX
sh scripts that call ``remnic hooks run <hook>``, so all logic is here.

- ``pre-commit``: validate the *staged* memory files; non-zero (and a message
  naming path, line and field) when one is malformed.
- ``post-merge``, ``post-checkout``, ``post-rewrite``: an incremental index
  update (a sync that neither writes files nor commits).
- Agent hosts (Claude Code, Codex): ``session-start`` prints memories for the
  session's context; ``stop``/``pre-compact`` hand the transcript's new turns
  to :meth:`Memory.observe`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remnic.service.memory import Memory

AGENT_HOSTS = ("claude-code", "codex")
AGENT_EVENTS = ("session-start", "stop", "pre-compact")


# --- agent hosts ---


def transcript_messages(lines: Iterable[str]) -> list[dict[str, str]]:
    """User and assistant turns of a Claude Code or Codex JSONL transcript, host text and tool
    traffic left out (the rules live in :mod:`remnic.observe.transcripts`); unreadable lines, such
    as a line the host is still writing, are skipped."""
    from remnic.service.observing import parse_transcript  # the pipeline's rules load only when used

    text = "\n".join(line.rstrip("\r\n") for line in lines)
    parsed = parse_transcript(text, "auto", source="transcript", strict=False)
    return [{"role": turn.role, "content": turn.text} for turn in parsed.turns]


def observe_transcript(memory: Memory, payload: Mapping[str, Any], host: str, hook: str = "stop") -> dict[str, Any]:
    """Hand the transcript's new turns to the observation pipeline: ``stop`` ends the session's buffer
    (a flush), ``pre-compact`` flushes before the host forgets the turns."""
    transcript = payload.get("transcript_path")
    session = str(payload.get("session_id") or "").strip()
    if not transcript or not session:
        return {"observed": 0, "detail": "the hook input names no transcript_path/session_id"}
    try:
        text = Path(str(transcript)).expanduser().read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return {"observed": 0, "detail": f"cannot read the transcript: {exc.strerror}"}
    result = memory.observe_transcript(
        f"{host}:{session}",
        text,
        fmt="auto",  # each JSONL line read by its own shape: hosts mix line kinds across versions
        name=str(transcript),
        source=f"{host}-hook",
        event="compaction" if hook == "pre-compact" else "session-end",
        strict=False,
        only_new=True,
    )
    summary = result.to_dict()
    return {"observed": result.buffered, **{k: v for k, v in summary.items() if k != "observations"}}


def session_context(memory: Memory, payload: Mapping[str, Any]) -> str:
    """Memories for a new session: what recall finds for the project (its folder name, or
    $REMNIC_SESSION_QUERY). Without an index yet, the most important and most recent memories
    (a session start never waits for a full index build)."""
    from remnic.service.browse import newest_first

    cwd = str(payload.get("cwd") or os.getcwd())
    query = os.environ.get("REMNIC_SESSION_QUERY") or Path(cwd).name.replace("-", " ").replace("_", " ")
    settings = memory.settings.recall
    try:
        hits = list(memory.recall(query)) if query.strip() and memory.has_index() else None
    except Exception:  # noqa: BLE001 - no usable index or model: the plain fallback below
        hits = None
    if hits is None:
        records = sorted(memory.list(status="active"), key=newest_first)
        records.sort(key=lambda r: -r.importance)  # stable: most important first, newest first within
        items = [(r.category, r.content, r.id) for r in records[: settings.top_k]]
    else:
        items = [(h.category, h.content, h.id) for h in hits]
    lines: list[str] = []
    used = 0
    for category, content, memory_id in items:
        line = f"- [{category}] {' '.join(content.split())} ({memory_id})"
        if settings.budget_chars and used + len(line) > settings.budget_chars:
            break
        lines.append(line)
        used += len(line) + 1
    if not lines:
        return ""
    return (
        f"Memories from remnic ({memory.root}) for {query!r}; edit them as files there, "
        "or with `remnic store`/`remnic forget`:\n" + "\n".join(lines)
    )


def session_start_output(memory: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    context = session_context(memory, payload)
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
