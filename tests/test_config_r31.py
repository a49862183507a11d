"""The original's `recallMmrEnabled`: false turns MMR off whatever `recallMmrLambda` says, a value that
is not a boolean is an error, and `config migrate` keeps the key; errors about the original's flat
keys name the key as the file spells it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import load_settings
from remnic.errors import ValidationError


def settle(tmp_path: Path, data: dict[str, Any]) -> Any:
    (tmp_path / "engram.config.json").write_text(json.dumps(data))
    return load_settings(cwd=tmp_path, env={"HOME": str(tmp_path / "home")})


@pytest.mark.parametrize(
    "data",
    [
        {"recallMmrEnabled": False, "recallMmrLambda": 0.7},
        {"recallMmrLambda": 0.7, "recallMmrEnabled": "false"},
        {"recallMmrEnabled": False, "remnic": {"recallMmrLambda": 0.7}},
        {"engram": {"recallMmrEnabled": "off"}, "remnic": {"recallMmrLambda": 0.7}},
    ],
)
def test_mmr_off_wins_over_the_lambda_and_says_so(tmp_path: Path, data: dict[str, Any]) -> None:
    s = settle(tmp_path, data)
    assert s.recall.mmr_lambda == 1.0
    assert s.origins["recall.mmrLambda"].endswith("as recallMmrEnabled")
    [warning] = [w for w in s.warnings if "recallMmrEnabled is false" in w]
    assert "recallMmrLambda (0.7)" in warning and "is not used" in warning


def test_mmr_on_keeps_the_lambda_with_no_warning(tmp_path: Path) -> None:
    s = settle(tmp_path, {"recallMmrEnabled": True, "recallMmrLambda": 0.7})
    assert s.recall.mmr_lambda == 0.7 and s.warnings == []


def test_remnics_own_lambda_beats_mmr_off_with_a_warning(tmp_path: Path) -> None:
    s = settle(tmp_path, {"recallMmrEnabled": False, "recall": {"mmrLambda": 0.6}})
    assert s.recall.mmr_lambda == 0.6
    assert any("wins over recallMmrEnabled: false" in w for w in s.warnings)


@pytest.mark.parametrize("value", ["maybe", 5, None, [], "tru"])
def test_a_value_that_is_not_a_boolean_is_an_error(tmp_path: Path, value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        settle(tmp_path, {"recallMmrEnabled": value})
    [problem] = caught.value.problems
    assert problem.field == "recallMmrEnabled (recall.mmrLambda)"
    assert problem.message == f"expected a boolean (true or false), got {json.dumps(value)}"
    assert "engram.config.json" in (problem.path or "")


def test_the_cli_exits_2_on_a_bad_mmr_switch(tmp_path: Path) -> None:
    (tmp_path / "engram.config.json").write_text('{"recallMmrEnabled": "maybe"}')
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2
    assert 'recallMmrEnabled (recall.mmrLambda): expected a boolean (true or false), got "maybe"' in result.err


@pytest.mark.parametrize(
    ("data", "kept", "lambda_"),
    [
        ({"recallMmrEnabled": False, "recallMmrLambda": 0.7}, {"recallMmrLambda": 0.7}, 1.0),
        ({"recallMmrEnabled": True, "recallMmrLambda": 0.7}, {"recallMmrEnabled": True}, 0.7),
        ({"recallMmrEnabled": "no", "recall": {"mmrLambda": 0.6}}, {"recallMmrEnabled": "no"}, 0.6),
    ],
)
def test_migrate_loses_neither_key(tmp_path: Path, data: dict[str, Any], kept: dict[str, Any], lambda_: float) -> None:
    path = tmp_path / "engram.config.json"
    path.write_text(json.dumps(data))
    before = load_settings(cwd=tmp_path, env={"HOME": str(tmp_path / "home")}).recall.mmr_lambda
    result = run_cli("config", "migrate", str(path), "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    migrated = json.loads(path.read_text())
    assert migrated["recall"]["mmrLambda"] == lambda_ == before
    assert migrated["_remnicOriginal"] == kept
    assert result.json()["files"][0]["kept"] == sorted(kept)
    after = load_settings(cwd=tmp_path, env={"HOME": str(tmp_path / "home")})
    assert after.recall.mmr_lambda == lambda_ and after.warnings == []


def test_migrate_names_the_translation_and_what_it_kept(tmp_path: Path) -> None:
    path = tmp_path / "engram.config.json"
    path.write_text('{"recallMmrEnabled": false, "recallMmrLambda": 0.7}')
    result = run_cli("config", "migrate", "--dry-run", str(path), cwd=tmp_path)
    assert result.code == 0, result.err
    assert "recallMmrEnabled -> recall.mmrLambda" in result.out
    assert "kept under _remnicOriginal: recallMmrLambda" in result.out


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"graphRecallEnabled": 7}, "graphRecallEnabled (recall.graph): expected a boolean (true or false), got 7"),
        ({"recallBudgetChars": "abc"}, 'recallBudgetChars (recall.budgetChars): expected an integer, got "abc"'),
        ({"remnic": {"recallMmrLambda": 3}}, "recallMmrLambda (recall.mmrLambda): must be from 0 to 1, got 3"),
        ({"server": {"writeRateLimitMaxRequests": "x"}}, "server.writeRateLimitMaxRequests (server.writeRateLimit)"),
    ],
)
def test_errors_name_the_originals_key_as_written_and_remnics(tmp_path: Path, data: dict, named: str) -> None:
    (tmp_path / "engram.config.json").write_text(json.dumps(data))
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2
    assert named in result.err and "engram.config.json" in result.err


def test_errors_about_remnics_own_keys_are_unchanged(tmp_path: Path) -> None:
    (tmp_path / "engram.config.json").write_text('{"recall": {"graph": 7}}')
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2 and ": recall.graph: expected a boolean (true or false), got 7" in result.err
