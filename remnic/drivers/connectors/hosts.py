"""The agent hosts remnic hooks into, the commands it writes for them, and how it knows its own.

A handler is remnic's only when its whole command is remnic's: ``NAME=value`` assignments, then
one absolute path to ``hooks/<host>/<event>.sh`` with no arguments — in remnic's hooks folder,
or (what an earlier remnic or ``remnic hooks agent-config`` wrote from another install) carrying
the ``REMNIC_PYTHON=`` assignment remnic always writes, with no assignment other than REMNIC_*.
A tool of one's own that only has a similar path (``node /opt/x/hooks/claude-code/stop.sh``,
``~/hooks/codex/stop.sh --mine``) is never taken for remnic's.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remnic.errors import ValidationError
from remnic.service.githooks import hooks_source_dir

EVENTS = {"SessionStart": "session-start", "Stop": "stop", "PreCompact": "pre-compact", "SessionEnd": "session-end"}
TIMEOUT_S = 60
# Codex 0.171 clamps a SessionEnd handler's timeout to 3 s (and warns on every run when it is longer).
# A flush cut there loses nothing: its plan stays in the buffer and the next hook finishes it.
CODEX_SESSION_END_TIMEOUT_S = 3
SCRIPT = re.compile(r"/(claude-code|codex)/(session-start|stop|pre-compact|session-end)\.sh\Z")
_FOLDERS = ("hooks", "_hooks")  # what remnic's hooks folder is called: in a checkout, in the package
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


@dataclass(frozen=True)
class Host:
    id: str
    name: str
    session_matcher: str
    """Which session starts the SessionStart hook runs on (the host's ``source`` values)."""
    events: tuple[str, ...] = tuple(EVENTS)
    """The host events remnic hooks into."""
    timeouts: tuple[tuple[str, int], ...] = ()
    """(event, seconds) where the host allows less than :data:`TIMEOUT_S`."""

    def timeout(self, event: str) -> int:
        """The ``timeout`` remnic writes for ``event``'s handler: one the host accepts as it is."""
        return dict(self.timeouts).get(event, TIMEOUT_S)

    def config_path(self, env: Mapping[str, str] | None = None) -> Path:
        env = os.environ if env is None else env
        home = Path(env.get("HOME") or Path.home())
        if self.id == "claude-code":
            base = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
            return base / "settings.json"
        base = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return base / "hooks.json"


HOSTS = {
    "claude-code": Host("claude-code", "Claude Code", "startup|resume|clear|compact"),
    # Codex 0.171 added SessionEnd and the compact and fork sources; an older Codex never sends
    # them, so its sessions end by the idle sweep as before.
    "codex": Host(
        "codex",
        "Codex",
        "startup|resume|clear|compact|fork",
        timeouts=(("SessionEnd", CODEX_SESSION_END_TIMEOUT_S),),
    ),
}
ALIASES = {"codex-cli": "codex"}


def matcher_covers(matcher: Any, wanted: str) -> bool:
    """Whether a SessionStart group's ``matcher`` runs its hooks for every source in ``wanted`` (``a|b``):
    no matcher, ``""`` and ``"*"`` match them all; else each must match it whole (a regex, or a plain list)."""
    if matcher is None or matcher in ("", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    listed = matcher.split("|")
    try:
        pattern: re.Pattern[str] | None = re.compile(matcher)
    except re.error:
        pattern = None
    return all(s in listed or (pattern is not None and pattern.fullmatch(s)) for s in wanted.split("|"))


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


def handler_for(command: str, timeout: int = TIMEOUT_S) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": timeout}


@dataclass(frozen=True)
class Ours:
    """remnic's handler, read back from its command."""

    command: str
    script: str
    env: dict[str, str]

    @property
    def python(self) -> str | None:
        return self.env.get("REMNIC_PYTHON")

    @property
    def memory_dir(self) -> str | None:
        return self.env.get("REMNIC_MEMORY_DIR")


def ours(handler: Any) -> Ours | None:
    """``handler`` read as remnic's (see the module's docstring), or None when it is someone else's."""
    if not isinstance(handler, dict) or handler.get("type") != "command" or not isinstance(handler.get("command"), str):
        return None
    command = handler["command"]
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.fullmatch(words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    if len(words) != 1 or not os.path.isabs(words[0]) or not SCRIPT.search(words[0]):
        return None
    script = words[0]
    folder = os.path.dirname(os.path.dirname(script))
    in_our_folder = _same_dir(folder, hooks_source_dir())
    marked = (
        os.path.basename(folder) in _FOLDERS
        and "REMNIC_PYTHON" in env
        and all(name.startswith("REMNIC_") for name in env)
    )
    return Ours(command, script, env) if in_our_folder or marked else None


def is_ours(handler: Any) -> bool:
    return ours(handler) is not None


def _same_dir(a: str, b: Path) -> bool:
    """Whether two folders are one (remnic's hooks folder may be reached through a symlink)."""
    return os.path.normpath(a) == os.path.normpath(b) or os.path.realpath(a) == os.path.realpath(b)
