"""A host's config file: read and checked, then written back as spliced text, with a backup.

A file remnic cannot read as the hosts' hooks shape is refused (a UsageError naming the file and
what is wrong) and never written. A symlinked config (a dotfiles repository) is written through
to its target, so the link stays a link. Each change first keeps the old bytes in
``<file>.remnic-backup-<time>`` (``-2``, ``-3``, … when that name is taken: one never replaces another).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remnic.errors import RemnicError, UsageError
from remnic.fsio import write_atomic

from . import jsonedit
from .jsonedit import Node, Style

_EMPTY = "{}\n"  # what a missing or blank file is taken to hold


@dataclass
class Config:
    """A host's config as read: its text (``{}`` for a missing or blank file), parsed and checked."""

    path: Path
    text: str
    data: dict[str, Any]
    root: Node
    style: Style
    exists: bool
    raw: bytes | None
    """The file's bytes as read (None: no file), kept as the backup."""


def read_config(path: Path) -> Config:
    """The host's config; a broken one is a UsageError naming it (remnic will not overwrite it)."""
    try:
        raw: bytes | None = path.read_bytes()
    except FileNotFoundError:
        raw = None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8") if raw is not None else ""
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}); remnic will not overwrite it") from None
    if not text.strip():
        text = _EMPTY
    try:
        data = json.loads(text)
        root = jsonedit.parse(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix it first, remnic will not overwrite it"
        ) from None
    except RecursionError:
        raise UsageError(f"{path}: nested too deeply to read; remnic will not overwrite it") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: must hold a JSON object; remnic will not overwrite it")
    problem = hooks_problem(data)
    if problem:
        raise UsageError(f"{path}: {problem}; fix it first, remnic will not overwrite it")
    twice = _duplicate_key(root)
    if twice:
        raise UsageError(f"{path}: {twice}; remnic will not guess which one the host reads, nor overwrite it")
    return Config(path, text, data, root, jsonedit.detect_style(text, root), raw is not None, raw)


def hooks_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with the shape of ``data``'s hooks (the hosts' shape: an object of events, each a
    list of group objects whose ``hooks`` is a list), or None."""
    if "hooks" not in data:
        return None
    hooks = data["hooks"]
    if not isinstance(hooks, dict):
        return f'"hooks" must be an object of events (got {json_type(hooks)})'
    for event, groups in hooks.items():
        where = f"hooks.{event}"
        if not isinstance(groups, list):
            return f"{where} must be a list of hook groups (got {json_type(groups)})"
        for i, group in enumerate(groups):
            if not isinstance(group, dict):
                return f"{where}[{i}] must be a hook group object (got {json_type(group)})"
            if "hooks" in group and not isinstance(group["hooks"], list):
                return f"{where}[{i}].hooks must be a list of handlers (got {json_type(group['hooks'])})"
    return None


def _duplicate_key(root: Node) -> str | None:
    """A key written twice in one object where remnic edits (``hooks`` and everything in it)."""
    if root.keys.count("hooks") > 1:
        return 'the key "hooks" appears twice'
    stack = [(root.get("hooks"), "hooks")]
    while stack:
        node, where = stack.pop()
        if node is None:
            continue
        seen: set[str] = set()
        for key in node.keys:
            if key in seen:
                return f"{where} has the key {key!r} twice"
            seen.add(key)
        labels = (
            [f"{where}.{k}" for k in node.keys]
            if node.kind == "object"
            else [f"{where}[{i}]" for i in range(len(node.children))]
        )
        stack += list(zip(node.children, labels, strict=True))
    return None


def json_type(value: Any) -> str:
    """How a JSON value is named in a message: null, true, a number, a string, a list, an object."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


class ConfigWriteError(RemnicError):
    """The host's config could not be written (a read-only file system or folder …): exit 1, the file unchanged."""

    code = "config_not_written"


def write_config(config: Config, text: str) -> str | None:
    """Write ``text`` over the config (atomically, through a symlink to its target) after keeping the
    old bytes aside; the backup's path, if there was a file. A ConfigWriteError naming the file and the
    system's reason when it cannot be written (the file is then as it was, and no backup is left)."""
    path = config.path
    target = Path(os.path.realpath(path))  # a dotfiles symlink keeps pointing at the file it named
    backup: str | None = None
    try:
        backup = _backup(path, config.raw, target) if config.raw is not None else None
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
        write_atomic(target, text, mode=mode)
    except OSError as exc:
        if backup is not None:
            Path(backup).unlink(missing_ok=True)  # the file was not changed: its copy is not needed
        raise ConfigWriteError(_write_problem(path, exc)) from None
    return backup


def _write_problem(path: Path, exc: OSError) -> str:
    reason = (exc.strerror or str(exc)).lower()
    other = Path(os.fspath(exc.filename)) if exc.filename else None
    if other is not None and other in path.parents:
        reason = f"cannot create its folder {other}: {reason}"
    elif other is not None and ".remnic-backup-" in other.name:
        reason = f"cannot keep its backup {other}: {reason}"
    elif other is not None and other != path:
        reason = f"{reason} ({other})"
    return f"cannot write {path}: {reason}; nothing was changed"


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%S")


def _backup(path: Path, raw: bytes, target: Path) -> str:
    """``raw`` in a new ``<path>.remnic-backup-<time>[-n]`` beside the named path, never over an earlier backup."""
    stem = f"{path}.remnic-backup-{_stamp()}"
    for n in range(1, 10_000):
        name = stem if n == 1 else f"{stem}-{n}"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # exclusive: a taken name is skipped
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        if target.exists():
            shutil.copymode(target, name)
        return name
    raise UsageError(f"cannot name a backup of {path}: {stem}-* all exist; remove some")
