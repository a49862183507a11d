"""Where the user's own remnic files live: ``$XDG_CONFIG_HOME/remnic``, else ``~/.config/remnic``.

The XDG base directory specification says a relative ``XDG_CONFIG_HOME`` is invalid and must be
ignored. A file the user already keeps under ``~/.config`` keeps working when ``XDG_CONFIG_HOME``
points elsewhere: readers fall back to it (:func:`user_config_files`), so setting the variable
never makes a config or a token file silently disappear. config.json is read from both places
(layered); tokens.json and spaces.json are read from one, so a copy in each is reported
(:func:`ignored_copy`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TOKENS_ENV = "REMNIC_TOKENS_PATH"
"""Names the tokens file instead of the user's own ``tokens.json``."""
SPACES_ENV = "REMNIC_SPACES_PATH"
"""Names the space registry instead of the user's own ``spaces.json``."""
SINGLE_FILES: dict[str, tuple[str, str]] = {
    "tokens.json": (TOKENS_ENV, "the server does not accept its tokens"),
    "spaces.json": (SPACES_ENV, "the spaces it registers are not known"),
}
"""The user files read from one place only: the variable that names another file, and what an ignored
copy costs."""


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


def single_file(name: str, app: str = "remnic", env: Mapping[str, str] | None = None) -> Path:
    """The file a one-place user file (:data:`SINGLE_FILES`) is read from: its variable's, else
    :func:`user_config_file`."""
    env = os.environ if env is None else env
    variable = SINGLE_FILES[name][0]
    return Path(env[variable]).expanduser() if env.get(variable) else user_config_file(name, app, env)


def ignored_copy(name: str, app: str = "remnic", env: Mapping[str, str] | None = None) -> str | None:
    """A warning naming both files when the one-place file ``name`` (:data:`SINGLE_FILES`) is under
    ``~/.config`` and under ``$XDG_CONFIG_HOME`` (only the latter is read), else None."""
    env = os.environ if env is None else env
    variable, cost = SINGLE_FILES[name]
    candidates = user_config_files(name, app, env)
    if env.get(variable) or len(candidates) < 2:
        return None
    (legacy, legacy_label), (used, used_label) = candidates
    try:
        if not legacy.is_file() or not used.is_file() or os.path.samefile(legacy, used):
            return None
    except OSError:
        return None
    return (
        f"{name} is in two places: {used} ({used_label}) is read and {legacy} ({legacy_label}) is ignored, "
        f"so {cost}; copy its entries into {used} and delete {legacy}, or set ${variable} to the file to use"
    )
