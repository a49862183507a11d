"""Connectors: remnic's hooks in an agent host's own config, installed, removed and checked.

Claude Code reads hooks from ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``), Codex from
``~/.codex/hooks.json`` (``$CODEX_HOME``); both use one shape::

    {"hooks": {"SessionStart": [{"matcher": "…", "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}

- :mod:`.hosts`: the hosts, the commands remnic writes, and which handlers are remnic's;
- :mod:`.config`: reading and checking the file, writing it back (through a symlink, with a backup);
- :mod:`.jsonedit`: edits spliced into the file's text, so the rest of it keeps its bytes;
- :mod:`.merge`: install's and remove's edits; :mod:`.doctor`: the checks;
- :mod:`.codextrust`: whether Codex trusts remnic's handlers (it skips untrusted ones silently).

A file is rewritten only when it changes, atomically, after a copy is kept.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from remnic.errors import UsageError

from . import jsonedit
from .codextrust import codex_trust
from .config import Config, read_config, write_config
from .doctor import codex_hooks_enabled, doctor, fire, hooks_enabled
from .hosts import (
    ALIASES,
    EVENTS,
    HOSTS,
    TIMEOUT_S,
    Host,
    Ours,
    command_for,
    handler_for,
    host,
    host_events,
    is_ours,
    ours,
)
from .merge import installed, plan_install, plan_remove

__all__ = [
    "ALIASES",
    "EVENTS",
    "HOSTS",
    "TIMEOUT_S",
    "Config",
    "Host",
    "Ours",
    "codex_hooks_enabled",
    "command_for",
    "describe",
    "doctor",
    "fire",
    "handler_for",
    "host",
    "host_events",
    "install",
    "installed",
    "is_ours",
    "ours",
    "read_config",
    "remove",
]


def install(h: Host, path: Path, *, memory_dir: Path, python: str = sys.executable) -> dict[str, Any]:
    config = read_config(path)
    commands = {event: command_for(h, event, python=python, memory_dir=memory_dir) for event in h.events}
    edits, changes = plan_install(config, commands, h)
    text = jsonedit.apply(config.text, edits)
    backup = write_config(config, text) if changes else None
    data = json.loads(text)
    enabled, why = hooks_enabled(h, path, data)
    out = {
        "host": h.id,
        "status": "installed" if changes else "already_installed",
        "configPath": str(path),
        "changes": changes,
        "backup": backup,
        "events": installed(data, h),
        "memoryDir": str(memory_dir),
        "warnings": [] if enabled else [why],
    }
    if h.id == "codex":  # a new or changed handler runs only once trusted (again) in Codex's /hooks
        out["codexTrust"] = {t.event: t.status for t in codex_trust(data, h, path)}
    return out


def remove(h: Host, path: Path) -> dict[str, Any]:
    config = read_config(path)
    edits, changes = plan_remove(config)
    backup = write_config(config, jsonedit.apply(config.text, edits)) if changes else None
    return {
        "host": h.id,
        "status": "removed" if changes else "not_found",
        "configPath": str(path),
        "changes": changes,
        "backup": backup,
    }


def describe(h: Host, path: Path) -> dict[str, Any]:
    try:
        events = installed(read_config(path).data, h)
        problem = None
    except UsageError as exc:
        events, problem = dict.fromkeys(h.events), exc.message
    if problem:
        state = "unreadable"
    else:
        state = "installed" if all(events.values()) else ("partly" if any(events.values()) else "not installed")
    out = {
        "host": h.id,
        "name": h.name,
        "configPath": str(path),
        "configExists": path.exists(),
        "state": state,
        "installed": all(events.values()),
        "events": events,
    }
    if problem:
        out["problem"] = problem
    return out
