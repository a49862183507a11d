"""Where the user's own remnic files live: ``$XDG_CONFIG_HOME/remnic``, else ``~/.config/remnic``.

The XDG base directory specification says a relative ``XDG_CONFIG_HOME`` is invalid and must be
ignored. A file the user already keeps under ``~/.config`` keeps working when ``XDG_CONFIG_HOME``
points elsewhere: readers fall back to it (:func:`user_config_files`), so setting the variable
never makes a config or a token file silently disappear.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())


def xdg_config_home(env: Mapping[str, str] | None = None) -> Path | None:
    """``$XDG_CONFIG_HOME`` when it is set to an absolute path, else None."""
    env = os.environ if env is None else env
    value = env.get("XDG_CONFIG_HOME") or ""
    return Path(value) if value and os.path.isabs(value) else None


def user_config_dir(app: str = "remnic", env: Mapping[str, str] | None = None) -> Path:
    """The folder new user files are written to."""
    return (xdg_config_home(env) or home_dir(env) / ".config") / app


def user_config_files(name: str, app: str = "remnic", env: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """Every place the user's ``name`` may be, lowest precedence first, with a label for messages:
    ``~/.config/<app>/<name>``, then ``$XDG_CONFIG_HOME/<app>/<name>`` when that is another folder."""
    legacy = home_dir(env) / ".config" / app / name
    found = [(legacy, f"~/.config/{app}/{name}")]
    xdg = xdg_config_home(env)
    if xdg is not None and os.path.abspath(xdg / app / name) != os.path.abspath(legacy):
        found.append((xdg / app / name, f"$XDG_CONFIG_HOME/{app}/{name}"))
    return found


def user_config_file(name: str, app: str = "remnic", env: Mapping[str, str] | None = None) -> Path:
    """The one file to read and write: the XDG one, unless only the ``~/.config`` one exists."""
    candidates = user_config_files(name, app, env)
    preferred = candidates[-1][0]
    if not preferred.exists() and candidates[0][0].exists():
        return candidates[0][0]
    return preferred
