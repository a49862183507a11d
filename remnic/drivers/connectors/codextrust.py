"""Whether Codex will run remnic's handlers: it runs a hook of the user's ``hooks.json`` only once a
person trusted it in ``/hooks``, and skips an untrusted or changed one without a word.

Codex (0.171) records the trust in its ``config.toml``::

    [hooks.state."<hooks.json path>:<event>:<group index>:<handler index>"]
    trusted_hash = "sha256:…"
    enabled = false        # optional: turned off in /hooks

and runs the handler only while ``trusted_hash`` equals the hash of the handler as it is now
(``currentHash`` in ``codex app-server`` ``hooks/list``): sha256 of the compact JSON, keys sorted, of
``{"event_name": <event>, "matcher": <group matcher>, "hooks": [<the handler, normalised>]}``,
where the handler is ``type``, ``command``, ``timeout`` (as Codex runs it: absent 600, at least 1;
SessionEnd's clamped to 3 and, when absent, 1), ``async`` (false unless set) and ``statusMessage``
when set, and absent values are left out. A reinstall that changes the command (another Python,
another memory repository) therefore needs trusting again; a SessionEnd timeout raised above 3 does not.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .hosts import CODEX_SESSION_END_TIMEOUT_S, Host, ours

# Codex's label for each host event (``hook_event_key_label``), as it appears in the state key.
EVENT_LABELS = {
    "SessionStart": "session_start",
    "Stop": "stop",
    "PreCompact": "pre_compact",
    "SessionEnd": "session_end",
}
# Codex 0.171 ignores a Stop group's matcher in the hash; versions differ for other events, so
# a hash is accepted with and without the matcher where a version might have dropped it.
_MATCHER_DROPPED = {"Stop"}
_DEFAULT_TIMEOUT_S = 600
# Codex 0.171 hashes a SessionEnd handler's timeout after clamping it to 3 s (``timeoutSec`` in
# hooks/list), and gives it 1 s, not 600, when it has none; so a raised or removed timeout keeps its trust.
_SESSION_END_DEFAULT_TIMEOUT_S = 1
# Handler keys whose part in the hash is known; a handler with another key cannot be verified.
_KNOWN = {"type", "command", "commandWindows", "command_windows", "timeout", "async", "statusMessage"}
_OPTIONAL = ("additionalContextLimit",)  # in the hash in some Codex versions and not in others


@dataclass(frozen=True)
class Trust:
    """How Codex sees one of remnic's handlers."""

    event: str
    key: str
    status: str
    """``trusted``, ``untrusted`` (never trusted), ``modified`` (changed since it was trusted),
    ``disabled`` (turned off in /hooks) or ``unknown`` (remnic cannot compute Codex's hash)."""
    detail: str


def _hash(identity: Mapping[str, Any]) -> str:
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _codex_timeout(event: str, timeout: int | None) -> int:
    """The timeout Codex 0.171 runs (and hashes) ``event``'s handler with, given the one it holds."""
    if event == "SessionEnd":
        if timeout is None:
            return _SESSION_END_DEFAULT_TIMEOUT_S
        return min(max(1, timeout), CODEX_SESSION_END_TIMEOUT_S)
    return _DEFAULT_TIMEOUT_S if timeout is None else max(1, timeout)


def handler_hashes(event: str, matcher: Any, handler: Mapping[str, Any]) -> list[str] | None:
    """The hashes Codex may give ``handler`` in a group with ``matcher`` (the first: Codex 0.171's),
    or None when the handler holds something whose part in the hash remnic does not know."""
    if any(k not in _KNOWN and k not in _OPTIONAL for k in handler):
        return None
    command, timeout, run_async = handler.get("command"), handler.get("timeout"), handler.get("async", False)
    status = handler.get("statusMessage")
    if not isinstance(command, str) or not isinstance(run_async, bool) or not isinstance(status, str | None):
        return None
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0):
        return None
    if matcher is not None and not isinstance(matcher, str):
        return None
    normal: dict[str, Any] = {
        "type": "command",
        "command": command,
        "timeout": _codex_timeout(event, timeout),
        "async": run_async,
    }
    if status is not None:
        normal["statusMessage"] = status
    matchers = [None] if matcher is None else ([None, matcher] if event in _MATCHER_DROPPED else [matcher, None])
    variants = [normal] + [{**normal, k: handler[k]} for k in _OPTIONAL if handler.get(k) is not None]
    out: list[str] = []
    for m in matchers:
        for h in variants:
            identity = {"event_name": EVENT_LABELS[event], "hooks": [h], **({"matcher": m} if m is not None else {})}
            out.append(_hash(identity))
    return out


def hook_states(config_toml: Path) -> dict[str, dict[str, Any]]:
    """``[hooks.state]`` of Codex's ``config.toml`` by key (keys trimmed, as Codex reads them);
    {} when the file does not exist. Raises OSError/ValueError when it cannot be read."""
    try:
        data = tomllib.loads(config_toml.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return {}
    return {k.strip(): v for k, v in state.items() if isinstance(v, dict)}


def _keys(hooks_json: Path, label: str, group: int, index: int) -> list[str]:
    """The state keys Codex may use: it names the file by ``$CODEX_HOME`` resolved, or by
    ``$HOME/.codex`` as it is."""
    paths = dict.fromkeys([os.path.abspath(hooks_json), os.path.realpath(hooks_json)])
    return [f"{p}:{label}:{group}:{index}" for p in paths]


def _ours_in(data: Mapping[str, Any], h: Host) -> Iterator[tuple[str, int, int, Any, Mapping[str, Any]]]:
    """(event, group index, handler index, group matcher, handler) of each of remnic's handlers."""
    raw = data.get("hooks")
    hooks: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    for event in h.events:
        groups = hooks.get(event)
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for hi, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if ours(handler) is not None:
                    yield event, gi, hi, group.get("matcher"), handler


def codex_trust(data: Mapping[str, Any], h: Host, hooks_json: Path) -> list[Trust]:
    """How Codex sees each of remnic's handlers in ``hooks_json`` (its content ``data``), by the
    ``config.toml`` beside it."""
    config_toml = hooks_json.parent / "config.toml"
    try:
        states = hook_states(config_toml)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        reason = f"cannot read {config_toml}: {exc}"
        return [
            Trust(event, _keys(hooks_json, EVENT_LABELS[event], gi, hi)[0], "unknown", reason)
            for event, gi, hi, _, _ in _ours_in(data, h)
        ]
    out = []
    for event, gi, hi, matcher, handler in _ours_in(data, h):
        keys = _keys(hooks_json, EVENT_LABELS[event], gi, hi)
        key = next((k for k in keys if k in states), keys[0])
        state = states.get(key, {})
        trusted = state.get("trusted_hash")
        hashes = handler_hashes(event, matcher, handler)
        where = f'[hooks.state."{key}"] in {config_toml}'
        if state.get("enabled") is False:
            status, detail = "disabled", f"turned off in Codex's /hooks (enabled = false in {where})"
        elif not isinstance(trusted, str):
            status, detail = "untrusted", f"never trusted: no trusted_hash in {where}"
        elif hashes is not None and trusted in hashes:
            status, detail = "trusted", f"trusted ({where})"
        elif hashes is None:
            status, detail = "unknown", f"it holds keys remnic cannot hash as Codex does: {sorted(handler)}"
        else:
            status, detail = (
                "modified",
                f"changed since it was trusted (a reinstall with another Python or memory repository): "
                f"trusted_hash in {where} is {trusted}, the handler's is {hashes[0]}",
            )
        out.append(Trust(event, key, status, detail))
    return out
