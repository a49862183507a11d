"""The user's own files follow $XDG_CONFIG_HOME (config.json, tokens.json, spaces.json alike), and a file
kept under ~/.config before the variable was set is still read."""

from __future__ import annotations

import json
from pathlib import Path

from remnic.config import load_settings, user_config_file
from remnic.config.spaces import registry_path
from remnic.server.auth import default_tokens_path


def _write(path: Path, data: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_config_json_is_read_from_xdg_config_home_as_the_users_own(tmp_path: Path) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    _write(xdg / "remnic" / "config.json", {"recall": {"topK": 7}, "server": {"host": "0.0.0.0"}})
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
    settings = load_settings(tmp_path / "mem", cwd=tmp_path, env=env)
    assert settings.recall.top_k == 7
    assert settings.origins["recall.topK"].startswith("$XDG_CONFIG_HOME/remnic/config.json")
    # A user-only key is accepted there: the file is the user's, not a project's.
    assert settings.server.host == "0.0.0.0"


def test_a_file_under_dot_config_still_counts_and_xdg_wins_over_it(tmp_path: Path) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    _write(home / ".config" / "remnic" / "config.json", {"recall": {"topK": 5, "budgetChars": 1234}})
    _write(xdg / "remnic" / "config.json", {"recall": {"topK": 9}})
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
    settings = load_settings(tmp_path / "mem", cwd=tmp_path, env=env)
    assert (settings.recall.top_k, settings.recall.budget_chars) == (9, 1234)


def test_a_relative_xdg_config_home_is_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_CONFIG_HOME": "relative/dir"}
    assert user_config_file("config.json", env=env) == home / ".config" / "remnic" / "config.json"
    assert registry_path(env) == home / ".config" / "remnic" / "spaces.json"


def test_tokens_follow_xdg_but_an_existing_legacy_file_keeps_working(tmp_path: Path) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
    assert default_tokens_path(env) == xdg / "remnic" / "tokens.json"
    legacy = home / ".config" / "remnic" / "tokens.json"
    _write(legacy, {"tokens": []})
    assert default_tokens_path(env) == legacy
    _write(xdg / "remnic" / "tokens.json", {"tokens": []})
    assert default_tokens_path(env) == xdg / "remnic" / "tokens.json"
    assert default_tokens_path({"HOME": str(home)}) == legacy
