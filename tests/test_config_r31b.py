"""`config migrate` loses nothing a file held (its comment keys, an earlier `_remnicOriginal`, a key
overruled in two places) and leaves a migrated file as it is; `recallMmrEnabled: false` wins over a
`recallMmrLambda` in another config file too, with a warning; a bad `recallMmrEnabled` names the setting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import load_settings


def migrate(tmp_path: Path, data: dict[str, Any], *extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
    path = tmp_path / "my.json"
    path.write_text(json.dumps(data))
    result = run_cli("config", "migrate", str(path), "--json", *extra, cwd=tmp_path)
    assert result.code == 0, result.err
    return json.loads(path.read_text()), result.json()["files"][0]


# --- 5. migrate keeps what the file held ---


def test_migrate_keeps_comment_keys_and_an_earlier_remnic_original(tmp_path: Path) -> None:
    data = {
        "$schema": "https://example.com/s.json",
        "recall": {"mmrLambda": 1.0},
        "_remnicOriginal": {"recallMmrLambda": 0.5, "qmdEnabled": True},
        "_note": "team settings",
        "recallBudgetChars": 4000,
        "qmdEnabled": False,
    }
    migrated, entry = migrate(tmp_path, data)
    assert migrated["_note"] == "team settings" and migrated["$schema"] == "https://example.com/s.json"
    assert migrated["recall"] == {"budgetChars": 4000, "mmrLambda": 1.0}
    # the earlier entries as they were; the same key with another value kept beside it, named by where
    assert migrated["_remnicOriginal"] == {
        "recallMmrLambda": 0.5,
        "qmdEnabled": True,
        "qmdEnabled (top level)": False,
    }
    assert entry["notRead"] == ["qmdEnabled (top level)"]


def test_migrating_a_migrated_file_changes_nothing(tmp_path: Path) -> None:
    data = {
        "recallMmrEnabled": False,
        "recallMmrLambda": 0.3,
        "remnic": {"recallMmrLambda": 0.7, "model": "x", "_why": "ours"},
        "_note": "kept",
    }
    once, _ = migrate(tmp_path, data)
    path = tmp_path / "my.json"
    before = path.read_bytes()
    result = run_cli("config", "migrate", str(path), "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    assert result.json()["files"][0]["changed"] is False and "backup" not in result.json()["files"][0]
    assert path.read_bytes() == before and not (tmp_path / "my.json.bak.1").exists()
    assert once["_note"] == "kept" and once["_remnicOriginal"]["_why"] == "ours"


def test_the_init_config_is_already_migrated(tmp_path: Path) -> None:
    assert run_cli("init", str(tmp_path / "m")).code == 0
    path = tmp_path / "m" / "remnic.config.json"
    data = json.loads(path.read_text())
    assert any(k.startswith("_") for k in data)  # what init writes: its `_about`
    result = run_cli("config", "migrate", str(path), "--dry-run", "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    entry = result.json()["files"][0]
    assert entry["changed"] is False and entry["migrated"] == data


def test_a_key_kept_from_two_places_keeps_both_values(tmp_path: Path) -> None:
    data = {"recallMmrLambda": 0.3, "remnic": {"recallMmrEnabled": False, "recallMmrLambda": 0.7}}
    migrated, entry = migrate(tmp_path, data)
    assert migrated["recall"] == {"mmrLambda": 1.0}
    assert migrated["_remnicOriginal"] == {"recallMmrLambda": 0.3, "recallMmrLambda (remnic block)": 0.7}
    assert entry["kept"] == ["recallMmrLambda", "recallMmrLambda (remnic block)"]
    after = load_settings(
        cwd=tmp_path, env={"HOME": str(tmp_path / "home"), "REMNIC_CONFIG_PATH": str(tmp_path / "my.json")}
    )
    assert after.recall.mmr_lambda == 1.0 and after.warnings == []


@pytest.mark.parametrize(
    ("data", "aside"),
    [
        ({"recallBudgetChars": 3000, "remnic": {"recallBudgetChars": 4000}}, {"recallBudgetChars": 3000}),
        ({"recallBudgetChars": 3000, "recall": {"budgetChars": 4000}}, {"recallBudgetChars": 3000}),
        (
            {"recallMmrEnabled": False, "remnic": {"recallMmrEnabled": True}},
            {"recallMmrEnabled": False, "recallMmrEnabled (remnic block)": True},
        ),
    ],
)
def test_an_overruled_key_is_kept(tmp_path: Path, data: dict[str, Any], aside: dict[str, Any]) -> None:
    migrated, _ = migrate(tmp_path, data)
    assert migrated["_remnicOriginal"] == aside


# --- 7. recallMmrEnabled: false across config files ---


def layered(tmp_path: Path, lower: dict[str, Any], upper: dict[str, Any]) -> Any:
    (tmp_path / "engram.config.json").write_text(json.dumps(lower))
    (tmp_path / "user.json").write_text(json.dumps(upper))
    env = {"HOME": str(tmp_path / "home"), "REMNIC_CONFIG_PATH": str(tmp_path / "user.json")}
    return load_settings(tmp_path / "m", cwd=tmp_path, env=env)


@pytest.mark.parametrize(
    ("lower", "upper", "off_in"),
    [
        ({"recallMmrEnabled": False}, {"recallMmrLambda": 0.6}, "engram.config.json"),
        ({"recallMmrLambda": 0.6}, {"recallMmrEnabled": "no"}, "REMNIC_CONFIG_PATH"),
        ({"remnic": {"recallMmrEnabled": False}}, {"engram": {"recallMmrLambda": 0.6}}, "engram.config.json"),
    ],
)
def test_mmr_off_in_one_file_wins_over_the_lambda_in_another(
    tmp_path: Path, lower: dict[str, Any], upper: dict[str, Any], off_in: str
) -> None:
    s = layered(tmp_path, lower, upper)
    assert s.recall.mmr_lambda == 1.0
    assert off_in in s.origins["recall.mmrLambda"] and s.origins["recall.mmrLambda"].endswith("as recallMmrEnabled")
    [warning] = [w for w in s.warnings if "recallMmrEnabled is false" in w]
    assert "recallMmrLambda (0.6) in " in warning and "is not used" in warning


@pytest.mark.parametrize(
    ("lower", "upper", "lambda_"),
    [
        ({"recallMmrEnabled": False}, {"recallMmrEnabled": True, "recallMmrLambda": 0.6}, 0.6),
        ({"recallMmrEnabled": False}, {"recall": {"mmrLambda": 0.6}}, 0.6),  # remnic's own key, a later file
        ({"recallMmrEnabled": True}, {"recallMmrLambda": 0.6}, 0.6),
    ],
)
def test_a_later_file_turning_mmr_on_or_remnics_own_key_still_wins(
    tmp_path: Path, lower: dict[str, Any], upper: dict[str, Any], lambda_: float
) -> None:
    s = layered(tmp_path, lower, upper)
    assert s.recall.mmr_lambda == lambda_
    assert not [w for w in s.warnings if "recallMmrEnabled is false" in w]


def test_the_cli_shows_the_cross_file_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "engram.config.json").write_text('{"recallMmrEnabled": false}')
    (tmp_path / "user.json").write_text('{"recallMmrLambda": 0.6}')
    monkeypatch.setenv("REMNIC_CONFIG_PATH", str(tmp_path / "user.json"))
    result = run_cli("config", "--json", "--memory-dir", str(tmp_path / "m"), cwd=tmp_path)
    assert result.code == 0, result.err
    assert result.json()["settings"]["recall"]["mmrLambda"] == 1.0
    assert any("recallMmrLambda (0.6) in REMNIC_CONFIG_PATH" in w for w in result.json()["warnings"])


# --- 8. a bad recallMmrEnabled names the setting it sets ---


def test_a_bad_mmr_switch_names_the_setting(tmp_path: Path) -> None:
    (tmp_path / "engram.config.json").write_text('{"remnic": {"recallMmrEnabled": "maybe"}}')
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2
    assert 'recallMmrEnabled (recall.mmrLambda): expected a boolean (true or false), got "maybe"' in result.err
