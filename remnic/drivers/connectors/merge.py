"""remnic's handlers merged into a host's hooks, and taken out, as edits of the config's text.

Both hosts read ``{"hooks": {"<Event>": [{"matcher": "…", "hooks": [<handler>, …]}, …]}}``.
Install replaces remnic's handler in place (a newer Python or memory directory), drops a second
copy, and otherwise appends a group of its own; remove deletes only remnic's handlers, and the
groups, events and ``hooks`` object that held nothing else. Nobody else's handler, group or
key is touched (see :mod:`.hosts` for what counts as remnic's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import jsonedit
from .config import Config
from .hosts import Host, handler_for, matcher_covers, ours
from .jsonedit import Edit, Node


def installed(data: Mapping[str, Any], h: Host) -> dict[str, str | None]:
    """Event → remnic's command in it (None when the event has no remnic hook)."""
    out: dict[str, str | None] = {}
    raw = data.get("hooks")
    hooks: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for event in h.events:
        found = None
        groups = hooks.get(event)
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                mine = ours(handler)
                if mine is not None and found is None:
                    found = mine.command
        out[event] = found
    return out


def session_matcher(data: Mapping[str, Any]) -> tuple[bool, Any]:
    """(found, matcher) of the SessionStart group holding remnic's handler (matcher None: the group has none)."""
    raw = data.get("hooks")
    groups = raw.get("SessionStart") if isinstance(raw, dict) else None
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if any(ours(x) is not None for x in (handlers if isinstance(handlers, list) else [])):
            return True, group.get("matcher")
    return False, None


def _handlers(group: Node) -> Node | None:
    found = group.get("hooks") if group.kind == "object" else None
    return found if found is not None and found.kind == "array" else None


def new_group(h: Host, event: str, command: str) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [handler_for(command, h.timeout(event))]}
    return {"matcher": h.session_matcher, **group} if event == "SessionStart" else group


def plan_install(config: Config, commands: Mapping[str, str], h: Host) -> tuple[list[Edit], list[str]]:
    """The edits that give each event remnic's handler for ``commands``, and what changed per event."""
    text, style, root = config.text, config.style, config.root
    hooks = root.get("hooks")
    edits: list[Edit] = []
    changes: list[str] = []
    missing: list[tuple[str, Any]] = []  # events the config does not have yet: added together
    for event, command in commands.items():
        groups = hooks.get(event) if hooks is not None else None
        if groups is None:
            missing.append((event, [new_group(h, event, command)]))
            changes.append(f"{event}: added")
            continue
        placed = False
        doomed_groups: set[int] = set()
        for gi, group in enumerate(groups.children):
            handlers = _handlers(group)
            doomed: set[int] = set()
            moved: set[int] = set()
            for hi, existing in enumerate(handlers.children if handlers is not None else []):
                if ours(existing.value) is None:
                    continue
                if placed:
                    doomed.add(hi)  # a second copy of remnic's: it would run twice
                    continue
                matcher = group.get("matcher") if event == "SessionStart" else None
                if matcher is not None and not matcher_covers(matcher.value, h.session_matcher):
                    if handlers is not None and all(ours(x.value) is not None for x in handlers.children):
                        # An older remnic's narrower matcher: its group is remnic's alone, so widen it.
                        edits.append(jsonedit.replace(text, style, matcher, h.session_matcher))
                        changes.append(f"{event}: matcher widened to {h.session_matcher}")
                    else:  # someone else's handler shares the group: leave its matcher, move ours out
                        moved.add(hi)
                        changes.append(f"{event}: moved out of a group with a narrower matcher")
                        continue
                placed = True
                wanted = handler_for(command, h.timeout(event))
                if existing.value != wanted:  # another command, or a timeout the host would clamp
                    edits.append(jsonedit.replace(text, style, existing, wanted))
                    changes.append(f"{event}: updated")
            if doomed:
                changes.append(f"{event}: duplicate removed")
            if handlers is not None and (doomed or moved):
                if len(doomed | moved) == len(handlers.children):
                    doomed_groups.add(gi)
                else:
                    edits += jsonedit.delete(handlers, doomed | moved)
        edits += jsonedit.delete(groups, doomed_groups) if doomed_groups else []
        if not placed:
            edits.append(jsonedit.append(text, style, groups, [new_group(h, event, command)]))
            changes.append(f"{event}: added")
    if missing and hooks is None:
        edits.append(jsonedit.append(text, style, root, [("hooks", dict(missing))]))
    elif missing and hooks is not None:
        edits.append(jsonedit.append(text, style, hooks, missing))
    return edits, changes


def plan_remove(config: Config) -> tuple[list[Edit], list[str]]:
    """The edits that take remnic's handlers out (and what held only them), and what changed per event."""
    root = config.root
    hooks = root.get("hooks")
    edits: list[Edit] = []
    changes: list[str] = []
    if hooks is None or hooks.kind != "object":
        return edits, changes
    doomed_events: set[int] = set()
    for ei, (event, groups) in enumerate(zip(hooks.keys, hooks.children, strict=True)):
        if groups.kind != "array":
            continue  # read_config refuses this; a caller with its own Config gets no edit
        doomed_groups: set[int] = set()
        for gi, group in enumerate(groups.children):
            handlers = _handlers(group)
            if handlers is None:
                continue
            mine = {hi for hi, x in enumerate(handlers.children) if ours(x.value) is not None}
            if not mine:
                continue
            changes.append(f"{event}: removed")
            if len(mine) == len(handlers.children):
                doomed_groups.add(gi)
            else:
                edits += jsonedit.delete(handlers, mine)
        if doomed_groups and len(doomed_groups) == len(groups.children):
            doomed_events.add(ei)
        elif doomed_groups:
            edits += jsonedit.delete(groups, doomed_groups)
    if doomed_events and len(doomed_events) == len(hooks.children):
        edits += jsonedit.delete(root, {_member_of(root, hooks)})
    elif doomed_events:
        edits += jsonedit.delete(hooks, doomed_events)
    return edits, changes


def _member_of(parent: Node, child: Node) -> int:
    return next(i for i, c in enumerate(parent.children) if c is child)
