"""Connectors: remnic's hooks in an agent host's own config, installed, removed and checked.

Claude Code reads hooks from ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``), Codex from
``~/.codex/hooks.json`` (``$CODEX_HOME``); both use one shape::

    {"hooks": {"SessionStart": [{"matcher": "…", "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}

remnic's handlers run its scripts in ``hooks/<host>/`` and are recognised by that path, so
install replaces them in place (a newer Python or memory directory) and leaves every other
hook, key and group alone; remove takes only them out. A file is rewritten only when it
changes, atomically, after a timestamped copy (``<file>.remnic-backup-<time>``) is kept.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remnic.errors import UsageError, ValidationError
from remnic.fsio import write_atomic
from remnic.service.githooks import hooks_source_dir

EVENTS = {"SessionStart": "session-start", "Stop": "stop", "PreCompact": "pre-compact", "SessionEnd": "session-end"}
TIMEOUT_S = 60
OURS = re.compile(r"hooks/(?:claude-code|codex)/(?:session-start|stop|pre-compact|session-end)\.sh")


@dataclass(frozen=True)
class Host:
    id: str
    name: str
    session_matcher: str
    """Which session starts the SessionStart hook runs on (the host's ``source`` values)."""
    events: tuple[str, ...] = ("SessionStart", "Stop", "PreCompact")
    """The host events remnic hooks into (Codex has no SessionEnd)."""

    def config_path(self, env: Mapping[str, str] | None = None) -> Path:
        env = os.environ if env is None else env
        home = Path(env.get("HOME") or Path.home())
        if self.id == "claude-code":
            base = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
            return base / "settings.json"
        base = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return base / "hooks.json"


HOSTS = {
    "claude-code": Host("claude-code", "Claude Code", "startup|resume|clear|compact", (*EVENTS,)),
    "codex": Host("codex", "Codex", "startup|resume|clear"),
}
ALIASES = {"codex-cli": "codex"}


def host_events(name: str) -> dict[str, str]:
    """Host event → remnic's hook name, for the events ``name`` has."""
    return {event: EVENTS[event] for event in host(name).events}


def host(name: str) -> Host:
    key = ALIASES.get(name, name)
    if key not in HOSTS:
        raise ValidationError.single("host", f"unknown host {name!r}", options=tuple(HOSTS))
    return HOSTS[key]


def command_for(h: Host, event: str, *, python: str, memory_dir: Path) -> str:
    script = hooks_source_dir() / h.id / f"{EVENTS[event]}.sh"
    return (
        f"REMNIC_MEMORY_DIR={shlex.quote(str(memory_dir))} REMNIC_PYTHON={shlex.quote(python)} "
        f"{shlex.quote(str(script))}"
    )


def is_ours(handler: Any) -> bool:
    return (
        isinstance(handler, dict) and isinstance(handler.get("command"), str) and bool(OURS.search(handler["command"]))
    )


# --- the config file ---


def read_config(path: Path) -> dict[str, Any]:
    """The host's config ({} when the file does not exist); a broken one is a UsageError naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix it first, remnic will not overwrite it"
        ) from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: must hold a JSON object; remnic will not overwrite it")
    if "hooks" in data and not isinstance(data["hooks"], dict):
        raise UsageError(f'{path}: "hooks" must be an object of events; remnic will not overwrite it')
    return data


def write_config(path: Path, data: Mapping[str, Any]) -> str | None:
    """Write ``data`` (2-space JSON) after copying the old file aside; the backup's path, if any."""
    backup = None
    if path.exists():
        backup = f"{path}.remnic-backup-{time.strftime('%Y%m%dT%H%M%S')}"
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=mode)
    return backup


def installed(data: Mapping[str, Any], h: Host) -> dict[str, str | None]:
    """Event → remnic's command in it (None when the event has no remnic hook)."""
    out: dict[str, str | None] = {}
    raw = data.get("hooks")
    hooks: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for event in h.events:
        found = None
        for group in hooks.get(event) or []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if is_ours(handler):
                    found = handler["command"]
        out[event] = found
    return out


def with_hooks(data: Mapping[str, Any], commands: Mapping[str, str], h: Host) -> tuple[dict[str, Any], list[str]]:
    """``data`` with remnic's handler for each event (replaced in place, or added as a group of its
    own); what changed, per event."""
    out = json.loads(json.dumps(data))
    hooks = out.setdefault("hooks", {})
    changes = []
    for event, command in commands.items():
        groups = hooks.setdefault(event, [])
        handler = {"type": "command", "command": command, "timeout": TIMEOUT_S}
        placed = False
        for group in groups:
            handlers: list[Any] = group.get("hooks") or [] if isinstance(group, dict) else []
            for i, existing in enumerate(handlers):
                if is_ours(existing):
                    if placed:
                        handlers[i] = None  # a second copy of ours: dropped below
                    elif existing != handler:
                        handlers[i] = handler
                        changes.append(f"{event}: updated")
                    placed = True
            if handlers is not None and None in handlers:
                group["hooks"] = [x for x in handlers if x is not None]
        if not placed:
            group = {"hooks": [handler]}
            if event == "SessionStart":
                group = {"matcher": h.session_matcher, **group}
            groups.append(group)
            changes.append(f"{event}: added")
        hooks[event] = [g for g in groups if not isinstance(g, dict) or g.get("hooks") != []]
    return out, changes


def without_hooks(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    out = json.loads(json.dumps(data))
    hooks = out.get("hooks")
    changes: list[str] = []
    if not isinstance(hooks, dict):
        return out, changes
    for event in list(hooks):
        groups = hooks[event] if isinstance(hooks[event], list) else []
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [x for x in group["hooks"] if not is_ours(x)]
                if len(handlers) != len(group["hooks"]):
                    changes.append(f"{event}: removed")
                if not handlers:
                    continue
                group = {**group, "hooks": handlers}
            kept.append(group)
        if kept:
            hooks[event] = kept
        elif groups:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out, changes


# --- install, remove, list ---


def install(h: Host, path: Path, *, memory_dir: Path, python: str = sys.executable) -> dict[str, Any]:
    data = read_config(path)
    commands = {event: command_for(h, event, python=python, memory_dir=memory_dir) for event in h.events}
    new, changes = with_hooks(data, commands, h)
    backup = write_config(path, new) if changes else None
    return {
        "host": h.id,
        "status": "installed" if changes else "already_installed",
        "configPath": str(path),
        "changes": changes,
        "backup": backup,
        "events": installed(new, h),
        "memoryDir": str(memory_dir),
    }


def remove(h: Host, path: Path) -> dict[str, Any]:
    data = read_config(path)
    new, changes = without_hooks(data)
    backup = write_config(path, new) if changes else None
    return {
        "host": h.id,
        "status": "removed" if changes else "not_found",
        "configPath": str(path),
        "changes": changes,
        "backup": backup,
    }


def describe(h: Host, path: Path) -> dict[str, Any]:
    try:
        events = installed(read_config(path), h)
        problem = None
    except UsageError as exc:
        events, problem = dict.fromkeys(h.events), exc.message
    out = {
        "host": h.id,
        "name": h.name,
        "configPath": str(path),
        "configExists": path.exists(),
        "installed": all(events.values()),
        "events": events,
    }
    if problem:
        out["problem"] = problem
    return out


# --- doctor ---


def _check(name: str, ok: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "ok": ok, "detail": detail}


def codex_hooks_enabled(codex_home: Path) -> tuple[bool, str]:
    """Whether Codex's config turns hooks off (``[features] hooks = false``, or the older ``codex_hooks``)."""
    config = codex_home / "config.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return True, f"{config} does not exist: hooks are on by default"
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return False, f"cannot read {config}: {exc}"
    raw = data.get("features")
    features: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for key in ("hooks", "codex_hooks"):
        if features.get(key) is False:
            return False, f"{config} sets [features] {key} = false: Codex runs no hooks"
    return True, f"{config} does not turn hooks off"


def fire(command: str, payload: Mapping[str, Any], *, cwd: str, timeout: float = 60) -> tuple[int, str, str]:
    """Run a hook command the way the host does (``sh -c``, the payload as JSON on stdin); its exit
    code, stdout and what remnic logged (the scripts never fail a session, so the log tells)."""
    with tempfile.NamedTemporaryFile("r", suffix=".log", delete=False) as log:
        log_path = log.name
    try:
        proc = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env={**os.environ, "REMNIC_HOOK_LOG": log_path},
            check=False,
        )
        return proc.returncode, proc.stdout, Path(log_path).read_text(encoding="utf-8", errors="replace")
    except subprocess.TimeoutExpired:
        return -1, "", f"did not finish within {timeout:g}s"
    finally:
        os.unlink(log_path)


def doctor(h: Host, path: Path, *, cwd: str) -> dict[str, Any]:
    """Is remnic installed in the host's config, and do its hooks run: each command is fired with a
    sample payload and must exit 0, and remnic must say it ran (session start: valid output)."""
    checks: list[dict[str, Any]] = []
    try:
        data = read_config(path)
        checks.append(
            _check("config file", path.exists(), f"{path} {'is valid JSON' if path.exists() else 'does not exist'}")
        )
    except UsageError as exc:
        checks.append(_check("config file", False, exc.message))
        data = {}
    events = installed(data, h)
    for event, command in events.items():
        checks.append(_check(f"{event} hook", command is not None, command or f"no remnic hook for {event} in {path}"))
    if h.id == "codex":
        ok, detail = codex_hooks_enabled(path.parent)
        checks.append(_check("codex hooks enabled", ok, detail))
    for event, command in events.items():
        if command is None:
            continue
        script = OURS.search(command)
        try:
            words = shlex.split(command)
        except ValueError:
            words = []
        for word in words:
            if word.startswith("REMNIC_PYTHON="):
                exe = word.split("=", 1)[1]
                checks.append(_check(f"{event} python", os.access(exe, os.X_OK), exe))
            elif script and word.endswith(script.group(0)):
                checks.append(_check(f"{event} script", os.access(word, os.X_OK), word))
        payload = {"session_id": "remnic-doctor", "cwd": cwd, "hook_event_name": event}
        if event == "SessionStart":
            payload["source"] = "startup"
        code, out, log = fire(command, payload, cwd=cwd)
        checks.append(_fired(event, code, out, log))
    return {"host": h.id, "configPath": str(path), "checks": checks, "healthy": all(c["ok"] for c in checks)}


def _fired(event: str, code: int, out: str, log: str) -> dict[str, Any]:
    name = f"{event} fires"
    problems = [line for line in log.splitlines() if "error" in line.lower() or "Traceback" in line]
    if code != 0:
        return _check(name, False, f"exit {code}: {log.strip()[-300:]}")
    if problems:
        return _check(name, False, problems[-1][-300:])
    if event == "SessionStart":
        if not out.strip():
            return _check(name, True, "ran; nothing to inject (no memories yet)")
        try:
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            return _check(name, False, f"printed something that is not the host's hook JSON: {out[:200]!r}")
        return _check(name, True, f"ran; injects {len(context)} characters of memories")
    if f"remnic {EVENTS[event]}:" not in log:
        return _check(name, False, "exited 0 but remnic did not run (is REMNIC_PYTHON or remnic on PATH?)")
    return _check(name, True, "ran; " + log.strip().splitlines()[-1][:200])
