"""Config files written for the original Remnic load: its flat keys as aliases, its file shapes and
names, its environment variables; its unknown keys warn; `remnic config migrate` rewrites a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import load_settings, translate
from remnic.service.memory import Memory

ORIGINAL_STANDALONE = {
    "remnic": {
        "memoryDir": "~/remnic-memory",
        "recallBudgetChars": 6000,
        "recallMmrLambda": 0.7,
        "recallMmrTopN": 40,
        "recallDirectAnswerEnabled": False,
        "recallDirectAnswerTokenOverlapFloor": 0.55,
        "recallDirectAnswerImportanceFloor": 0.7,
        "graphRecallEnabled": "false",
        "maxGraphTraversalSteps": 3,
        "graphTraversalConfidenceFloor": 0.2,
        "temporalBoostRecentDays": 7,
        "temporalBoostScore": 0.15,
        "procedural": {"enabled": True, "recallMaxProcedures": 2},
        "model": "gpt-5.5",
        "captureMode": "implicit",
        "qmdEnabled": True,
        "recencyWeight": 0.2,
    },
    "server": {
        "host": "127.0.0.1",
        "port": 4400,
        "authToken": "${REMNIC_AUTH_TOKEN}",
        "principal": "me",
        "maxBodyBytes": 65536,
        "writeRateLimitMaxRequests": 10,
        "writeRateLimitWindowMs": 30000,
    },
}


def user_config(home: Path, data: dict, name: str = "remnic") -> Path:
    path = home / ".config" / name / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_the_originals_standalone_config_loads_with_its_keys_as_aliases(tmp_path: Path, isolated_home: Path) -> None:
    user_config(isolated_home, ORIGINAL_STANDALONE)
    s = load_settings(cwd=tmp_path, env={"HOME": str(isolated_home)})
    assert s.memory_dir == isolated_home / "remnic-memory"
    assert (s.recall.budget_chars, s.recall.mmr_lambda, s.recall.mmr_pool) == (6000, 0.7, 40)
    assert s.recall.direct_answer is False and s.recall.graph is False  # "false" read as the original reads it
    assert (s.recall.direct_answer_min_overlap, s.recall.direct_answer_min_importance) == (0.55, 0.7)
    assert (s.recall.graph_max_hops, s.recall.graph_min_confidence) == (3, 0.2)
    assert (s.recall.recent_scan_window_days, s.recall.recent_scan_prior) == (7, 0.15)
    assert s.recall.procedural is True and s.recall.procedural_max == 2
    assert (s.server.port, s.server.max_body_bytes, s.server.write_rate_limit) == (4400, 65536, 10)
    assert s.server.write_rate_window_s == 30.0  # milliseconds there, seconds here
    assert s.origins["recall.budgetChars"].endswith("as recallBudgetChars")
    assert s.origins["server.writeRateWindowS"].endswith("as server.writeRateLimitWindowMs")
    assert "as " not in s.origins["server.port"]  # the same name in both
    unread = " ".join(s.warnings)
    for key in ("model", "captureMode", "qmdEnabled", "recencyWeight", "server.authToken", "server.principal"):
        assert f"{key} is not read" in unread, key


def test_flat_top_level_keys_and_an_engram_block_are_read_too(tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / "engram.config.json").write_text(
        json.dumps({"namespacesEnabled": True, "engram": {"defaultNamespace": "team", "qmdMaxResults": 8}})
    )
    s = load_settings(cwd=tmp_path, env={"HOME": str(isolated_home)})
    assert s.namespaces.enabled is True and s.namespaces.default == "team" and s.recall.top_k == 8
    assert "./engram.config.json" in s.origins["namespaces.default"]
    assert s.origins["recall.topK"].endswith("as qmdMaxResults")


def test_remnic_block_beats_flat_keys_and_nested_sections_beat_both(tmp_path: Path, isolated_home: Path) -> None:
    data = {"recallBudgetChars": 100, "remnic": {"recallBudgetChars": 200}}
    assert translate(data, "f").nested["recall"]["budgetChars"] == 200
    data["recall"] = {"budgetChars": 300}
    out = translate(data, "f")
    assert out.nested["recall"]["budgetChars"] == 300 and "recall.budgetChars" not in out.names


def test_namespace_policies_in_either_of_the_originals_shapes(tmp_path: Path) -> None:
    as_array = {"namespacePolicies": [{"name": "team", "readPrincipals": ["a", "b"], "writePrincipals": ["a"]}]}
    as_map = {"namespacePolicies": {"team": {"read": ["a", "b"], "write": ["a"]}}}
    want = {"team": {"readPrincipals": ["a", "b"], "writePrincipals": ["a"]}}
    assert translate(as_array, "f").nested["namespaces"]["policies"] == want
    assert translate(as_map, "f").nested["namespaces"]["policies"] == want


def test_engram_environment_variables_and_home_spellings(tmp_path: Path, isolated_home: Path) -> None:
    cfg = isolated_home / "legacy.json"
    cfg.write_text(json.dumps({"engram": {"recallBudgetChars": 1234}}))
    env = {"HOME": str(isolated_home), "ENGRAM_CONFIG_PATH": "${HOME}/legacy.json", "ENGRAM_MEMORY_DIR": "$HOME/m"}
    s = load_settings(cwd=tmp_path, env=env)
    assert s.recall.budget_chars == 1234 and "ENGRAM_CONFIG_PATH" in s.origins["recall.budgetChars"]
    assert s.memory_dir == isolated_home / "m" and s.origins["memoryDir"] == "env ENGRAM_MEMORY_DIR"
    # remnic's own variable wins over the original's twin
    env["REMNIC_MEMORY_DIR"] = str(tmp_path / "r")
    assert load_settings(cwd=tmp_path, env=env).memory_dir == tmp_path / "r"
    with pytest.raises(Exception, match="ENGRAM_CONFIG_PATH"):
        load_settings(cwd=tmp_path, env={"HOME": str(isolated_home), "ENGRAM_CONFIG_PATH": "/nope.json"})


def test_the_originals_user_config_under_engram_is_read_below_remnics(tmp_path: Path, isolated_home: Path) -> None:
    user_config(isolated_home, {"recallBudgetChars": 111, "recallMmrTopN": 20}, name="engram")
    user_config(isolated_home, {"recall": {"budgetChars": 222}})
    s = load_settings(cwd=tmp_path, env={"HOME": str(isolated_home)})
    assert s.recall.budget_chars == 222 and s.recall.mmr_pool == 20


def test_typos_in_remnics_own_sections_are_still_errors(tmp_path: Path) -> None:
    (tmp_path / "remnic.config.json").write_text(json.dumps({"recal": {"topK": 3}}))
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2 and "unknown config section" in result.err
    (tmp_path / "remnic.config.json").write_text(json.dumps({"recall": {"topKay": 3}}))
    assert run_cli("config", cwd=tmp_path).code == 2


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"bogus": 1}, "bogus: unknown config key: neither a section of remnic's settings nor one of the original"),
        ({"bogus": {"a": 1}}, "bogus: unknown config key"),
        ({"recal": 1}, "recal: unknown config key: neither a section of remnic's settings nor one of the original "
         "Remnic's keys; did you mean recall? (valid options: memoryDir, store,"),
        ({"recallBudgetChar": 5000}, "recallBudgetChar: unknown config key"),
        ({"recallBudgetChar": 5000}, "did you mean recallBudgetChars?"),
        ({"remnic": {"qmdEnabeld": True}}, "(remnic block): qmdEnabeld: unknown key: not one of the original Remnic's "
         "config keys; did you mean qmdEnabled?"),
        ({"engram": {"bogus": 1}}, "(engram block): bogus: unknown key"),
    ],
)  # fmt: skip
def test_an_unknown_top_level_key_is_a_typo_not_one_of_the_originals(tmp_path: Path, data: dict, fragment: str) -> None:
    (tmp_path / "remnic.config.json").write_text(json.dumps(data))
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2 and fragment in result.err, result.err
    assert "config migrate" not in result.err and "is not read" not in result.out


def test_only_the_originals_own_keys_are_warned_about_as_the_originals(tmp_path: Path, isolated_home: Path) -> None:
    from remnic.config.aliases import FLAT, original_keys

    assert {name.split(".")[0] for name in FLAT} <= original_keys()  # every alias is one of the original's keys
    assert {"model", "qmdEnabled", "captureMode", "openaiApiKey", "lcmEnabled", "agentAccessHttp"} <= original_keys()
    assert not {"bogus", "recall", "store"} & original_keys()
    original = {"model": "gpt-5.5", "lcmEnabled": True, "agentAccessHttp": {"enabled": True, "port": 4400}}
    (tmp_path / "remnic.config.json").write_text(json.dumps(original))
    s = load_settings(cwd=tmp_path, env={"HOME": str(isolated_home)})
    assert s.server.port == 4400
    unread = " ".join(s.warnings)
    assert "model is not read" in unread and "lcmEnabled is not read" in unread
    assert "agentAccessHttp.enabled is not read" in unread


def test_doctor_fails_on_a_typo_and_warns_only_about_the_originals_keys(tmp_path: Path, isolated_home: Path) -> None:
    repo = tmp_path / "mem"
    Memory.init(repo, settings=load_settings(repo)).close()
    user_config(isolated_home, {"bogus": 1})
    result = run_cli("doctor", "--json", "--memory-dir", str(repo))
    config = next(c for c in result.json()["checks"] if c["name"] == "config")
    assert result.code == 1 and config["status"] == "fail" and "bogus: unknown config key" in config["detail"]
    assert "original Remnic are not read" not in config["detail"]


def test_config_command_shows_the_name_used_and_the_warnings(tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / "remnic.config.json").write_text(json.dumps({"remnic": {"recallBudgetChars": 5000, "model": "x"}}))
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 0, result.err
    assert "recall.budgetChars = 5000" in result.out and "as recallBudgetChars" in result.out
    # The warnings on stderr: `remnic config 2>/dev/null | grep` reads the listing alone.
    assert "warning:" in result.err and "model is not read" in result.err and "warning" not in result.out
    json_run = run_cli("config", "--json", cwd=tmp_path)
    data = json_run.json()
    assert data["settings"]["recall"]["budgetChars"] == 5000 and data["warnings"] and not json_run.err


def test_config_migrate_rewrites_to_the_nested_form_with_a_backup(tmp_path: Path, isolated_home: Path) -> None:
    path = user_config(isolated_home, ORIGINAL_STANDALONE)
    before = path.read_bytes()
    dry = run_cli("config", "migrate", str(path), "--dry-run", cwd=tmp_path)
    assert dry.code == 0 and path.read_bytes() == before and "would become" in dry.out
    result = run_cli("config", "migrate", str(path), "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    entry = result.json()["files"][0]
    assert Path(entry["backup"]).read_bytes() == before
    migrated = json.loads(path.read_text())
    assert migrated["recall"]["budgetChars"] == 6000 and migrated["server"]["writeRateWindowS"] == 30.0
    assert migrated["memoryDir"] == "~/remnic-memory" and "remnic" not in migrated
    assert migrated["_remnicOriginal"]["model"] == "gpt-5.5"  # nothing the original had is lost
    # the migrated file loads to the same settings, with no warnings left
    s = load_settings(cwd=tmp_path, env={"HOME": str(isolated_home)})
    assert s.recall.budget_chars == 6000 and s.server.write_rate_window_s == 30.0 and not s.warnings
    again = run_cli("config", "migrate", cwd=tmp_path)
    assert again.code == 0 and "nothing to migrate" in again.out


def test_doctor_warns_about_unread_keys_and_still_passes(tmp_path: Path, isolated_home: Path) -> None:
    repo = tmp_path / "mem"
    Memory.init(repo, settings=load_settings(repo)).close()
    user_config(isolated_home, {"remnic": {"recallBudgetChars": 5000, "openaiApiKey": "sk-x"}})
    result = run_cli("doctor", "--json", "--memory-dir", str(repo))
    config = next(c for c in result.json()["checks"] if c["name"] == "config")
    assert config["status"] == "warn" and "config migrate" in config["detail"]
    assert any("openaiApiKey" in p for p in config["problems"])
