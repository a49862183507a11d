"""The user's registry of memory spaces: a JSON file of their own, never inside a memory repository.

A space is a memory repository (personal, project or team) known by a name::

    {"active": "team",
     "spaces": {"team": {"path": "/home/ana/memory/team", "kind": "team",
                         "remote": "git@example.com:acme/memory.git", "readOnly": false}}}

The file is ``$REMNIC_SPACES_PATH``, else ``$XDG_CONFIG_HOME/remnic/spaces.json``, else
``~/.config/remnic/spaces.json`` (also when only that one exists: :mod:`.paths`). It is written atomically with mode 0600; reading a missing
file gives an empty registry. ``remote`` is only a record of where the space was cloned
from or pushes to: git's own remote configuration is what push and pull use.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from remnic.errors import NotFoundError, UsageError, ValidationError

from .paths import SPACES_ENV, user_config_file

KINDS = ("personal", "project", "team")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class Space:
    """One registered space."""

    name: str
    path: Path
    kind: str = "personal"
    remote: str | None = None
    read_only: bool = False
    """Recalled alongside the active space; remnic's writes (store, update, share …) and push refuse it."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "kind": self.kind,
            "remote": self.remote,
            "readOnly": self.read_only,
        }


@dataclass(frozen=True)
class Registry:
    path: Path
    spaces: dict[str, Space] = field(default_factory=dict)
    active: str | None = None

    def get(self, name: str) -> Space:
        space = self.spaces.get(name)
        if space is None:
            options = sorted(self.spaces) or ["(none registered: `remnic space create NAME`)"]
            raise NotFoundError(f"no space named {name!r} in {self.path}; known spaces: {', '.join(options)}")
        return space

    def named_for(self, root: Path) -> Space | None:
        """The space registered at ``root`` (None when it is not a registered space)."""
        target = _same(root)
        return next((s for s in self.spaces.values() if _same(s.path) == target), None)

    def with_space(self, space: Space) -> Registry:
        return replace(self, spaces={**self.spaces, space.name: space})

    def without(self, name: str) -> Registry:
        rest = {k: v for k, v in self.spaces.items() if k != name}
        return replace(self, spaces=rest, active=None if self.active == name else self.active)

    def activate(self, name: str | None) -> Registry:
        if name is not None:
            self.get(name)
        return replace(self, active=name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "active": self.active,
            "spaces": {
                name: {k: v for k, v in space.to_dict().items() if k != "name"}
                for name, space in sorted(self.spaces.items())
            },
        }


def _same(path: Path) -> str:
    return os.path.realpath(os.path.abspath(path))


def registry_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(SPACES_ENV):
        return Path(env[SPACES_ENV]).expanduser()
    return user_config_file("spaces.json", env=env)


def check_name(name: str, field_name: str = "name") -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ValidationError.single(
            field_name, f"{name!r} is not a valid space name (lower-case letters, digits, '-' and '_', at most 64)"
        )
    return name


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValidationError.single("kind", f"unknown space kind {kind!r}", options=KINDS)
    return kind


def _space(name: str, raw: Any, where: Path) -> Space:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("path"), str):
        raise ValidationError.single(f"spaces.{name}", "must be an object with a path", path=str(where))
    kind = raw.get("kind", "personal")
    if kind not in KINDS:
        raise ValidationError.single(f"spaces.{name}.kind", f"unknown kind {kind!r}", path=str(where), options=KINDS)
    remote = raw.get("remote")
    return Space(
        name=name,
        path=Path(raw["path"]).expanduser(),
        kind=kind,
        remote=remote if isinstance(remote, str) and remote else None,
        read_only=raw.get("readOnly") is True,
    )


def load_registry(env: Mapping[str, str] | None = None) -> Registry:
    """The registry (empty when the file does not exist); a broken file is a ValidationError naming it."""
    path = registry_path(env)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Registry(path)
    except OSError as exc:
        raise ValidationError.single("spaces", f"cannot read: {exc.strerror}", path=str(path)) from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValidationError.single("spaces", f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("spaces", {}), Mapping):
        raise ValidationError.single("spaces", "must be an object with a 'spaces' object", path=str(path))
    spaces = {}
    for name, raw in data.get("spaces", {}).items():
        if not NAME_RE.match(str(name)):
            raise ValidationError.single(f"spaces.{name}", "is not a valid space name", path=str(path))
        spaces[name] = _space(name, raw, path)
    active = data.get("active")
    return Registry(path, spaces, active if isinstance(active, str) and active in spaces else None)


def save_registry(registry: Registry) -> None:
    """Write the registry atomically (a temp file renamed over it), readable by the user only."""
    registry.path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".spaces-", dir=registry.path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(registry.to_dict(), indent=2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, registry.path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def space_dir(name: str, registry: Registry | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The path ``--space NAME`` stands for (a usage error naming the known spaces when unknown)."""
    registry = registry or load_registry(env)
    if name not in registry.spaces:
        known = ", ".join(sorted(registry.spaces)) or "none (`remnic space create NAME`)"
        raise UsageError(f"--space {name}: no such space in {registry.path}; known spaces: {known}")
    return registry.spaces[name].path


def active_space(env: Mapping[str, str] | None = None) -> Space | None:
    """The space `remnic space switch` made active (None when none is, or the registry is unreadable)."""
    try:
        registry = load_registry(env)
    except ValidationError:
        return None
    return registry.spaces.get(registry.active) if registry.active else None
