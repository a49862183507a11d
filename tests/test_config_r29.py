"""Config files a memory repository shares, and config files that are wrong in ways JSON allows."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from conftest import run_cli, snapshot_tree

from remnic.config import CEILINGS, USER_ONLY, describe_settings, load_settings
from remnic.config.settings import USER_ONLY_IGNORED
from remnic.errors import ValidationError
from remnic.service.memory import Memory

SECRET = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789AB"


def _user_config(home: Path, data: dict) -> None:
    (home / ".config" / "remnic").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "remnic" / "config.json").write_text(json.dumps(data))


# --- every config file inside a memory repository is shared ---


def test_an_engram_config_in_the_repo_cannot_turn_off_the_secret_scan(memory: Memory) -> None:
    (memory.root / "engram.config.json").write_text('{"store": {"scanSecrets": false}}')
    before = snapshot_tree(memory.root)
    result = run_cli("config", cwd=memory.root)
    assert result.code == 2
    assert "store.scanSecrets: can only be set in your own config" in result.err
    assert "engram.config.json" in result.err
    stored = run_cli("store", f"ci token {SECRET}", "--category", "fact", cwd=memory.root)
    assert stored.code == 2 and "store.scanSecrets" in stored.err
    assert snapshot_tree(memory.root) == before


def test_an_engram_config_in_the_repo_cannot_outrank_the_users_access_settings(
    memory: Memory, isolated_home: Path
) -> None:
    _user_config(isolated_home, {"namespaces": {"enabled": True}})
    shared = memory.root / "engram.config.json"
    shared.write_text(json.dumps({"namespacesEnabled": False}))
    with pytest.raises(ValidationError, match=r"namespaces\.enabled: can only be set in your own config") as exc:
        load_settings(cwd=memory.root)
    assert str(shared) in str(exc.value)
    shared.write_text(json.dumps({"agentAccessHttp": {"host": "0.0.0.0", "port": 18123}}))
    with pytest.raises(ValidationError, match=r"server\.host: can only be set"):
        load_settings(cwd=memory.root)
    # what it may set still applies above the user's config; the user's own access settings stand
    shared.write_text(json.dumps({"agentAccessHttp": {"port": 18123}}))
    s = load_settings(cwd=memory.root)
    assert s.server.port == 18123 and s.namespaces.enabled is True and s.server.host == "127.0.0.1"
    assert "~/.config/remnic/config.json" in s.origins["namespaces.enabled"]


@pytest.mark.parametrize("name", ["remnic.config.json", "engram.config.json"])
def test_a_config_in_a_subfolder_of_the_repo_is_shared_too(memory: Memory, name: str) -> None:
    sub = memory.root / "facts" / "x"
    sub.mkdir(parents=True)
    (sub / name).write_text('{"store": {"scanSecrets": false}}')
    result = run_cli("config", cwd=sub)
    assert result.code == 2 and "store.scanSecrets: can only be set in your own config" in result.err
    assert str(sub / name) in result.err
    # the same file naming an ordinary setting applies, above the repository's root file
    (sub / name).write_text('{"recall": {"topK": 4}}')
    result = run_cli("config", "--json", cwd=sub)
    assert result.code == 0 and result.json()["settings"]["recall"]["topK"] == 4


def test_a_file_in_another_memory_repo_is_shared_whichever_repo_is_in_use(tmp_path: Path, memory: Memory) -> None:
    other = tmp_path / "other"
    Memory.init(other, settings=load_settings(other)).close()
    (other / "remnic.config.json").write_text('{"server": {"allowedHosts": ["evil.example"]}}')
    result = run_cli("config", "--memory-dir", str(memory.root), cwd=other)
    assert result.code == 2 and "server.allowedHosts: can only be set" in result.err


def test_user_only_settings_still_come_from_the_users_own_files(
    tmp_path: Path, memory: Memory, isolated_home: Path
) -> None:
    _user_config(isolated_home, {"store": {"scanSecrets": False}})
    assert load_settings(cwd=memory.root).store.scan_secrets is False
    project = tmp_path / "project"  # not a memory repository: the user's own folder
    project.mkdir()
    (project / "remnic.config.json").write_text('{"server": {"host": "0.0.0.0"}}')
    assert load_settings(memory.root, cwd=project).server.host == "0.0.0.0"
    named = tmp_path / "mine.json"
    named.write_text('{"namespaces": {"enabled": true}}')
    s = load_settings(cwd=memory.root, env={**os.environ, "REMNIC_CONFIG_PATH": str(named)})
    assert s.namespaces.enabled is True


# --- encodings and file kinds ---


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b'{"observe":{"userName":"Jos\xe9"}}', "is not UTF-8 text (byte 0xe9 at offset 27): save it as UTF-8"),
        ('{"recall":{"topK":5}}'.encode("utf-16"), "is UTF-16 text: save it as UTF-8"),
    ],
)
def test_a_config_that_is_not_utf8_is_named_not_a_traceback(memory: Memory, raw: bytes, fragment: str) -> None:
    (memory.root / "remnic.config.json").write_bytes(raw)
    result = run_cli("config", cwd=memory.root)
    assert result.code == 2 and fragment in result.err and "remnic.config.json" in result.err
    assert "Traceback" not in result.err
    doctor = run_cli("doctor", "--memory-dir", str(memory.root), "--json")
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert checks["config"]["status"] == "fail" and fragment in checks["config"]["detail"]
    assert checks["git"]["status"] == "ok"


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "remnic.config.json").write_bytes(b'\xef\xbb\xbf{"recall":{"topK":5}}')
    result = run_cli("config", "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    assert result.json()["settings"]["recall"]["topK"] == 5


def test_a_config_path_that_is_a_directory_is_reported(memory: Memory, isolated_home: Path) -> None:
    (memory.root / "remnic.config.json").unlink()
    (memory.root / "remnic.config.json").mkdir()
    result = run_cli("config", "--memory-dir", str(memory.root))
    assert result.code == 2 and "remnic.config.json" in result.err and "is a directory" in result.err
    doctor = run_cli("doctor", "--memory-dir", str(memory.root), "--json")
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert checks["config"]["status"] == "fail" and "is a directory" in checks["config"]["detail"]
    (memory.root / "remnic.config.json").rmdir()
    (isolated_home / ".config" / "remnic" / "config.json").mkdir(parents=True)
    result = run_cli("config", "--memory-dir", str(memory.root))
    home_cfg = isolated_home / ".config" / "remnic" / "config.json"
    assert result.code == 2 and str(home_cfg) in result.err and "is a directory" in result.err


# --- values JSON allows and remnic does not ---


@pytest.mark.parametrize(
    ("setting", "fragment"),
    [
        ({"store": {"include": [1]}}, "store.include[0]: expected a string, got 1"),
        ({"store": {"extensions": [".md", 5]}}, "store.extensions[1]: expected a string, got 5"),
        ({"entities": {"extraTools": ["x", None]}}, "entities.extraTools[1]: expected a string, got null"),
        ({"server": {"allowedHosts": [True]}}, "server.allowedHosts[0]: expected a string, got true"),
        ({"recall": {"candidates": 3_000_000_000}}, "recall.candidates: must be at most 10000, got 3000000000"),
        ({"recall": {"topK": 10**23}}, "recall.topK: must be at most 10000"),
        ({"spaces": {"networkTimeoutS": 1e300}}, "spaces.networkTimeoutS: must be at most 2147483647"),
        ({"observe": {"continuationMinWords": -2}}, "observe.continuationMinWords: must be at least -1, got -2"),
        ({"memoryDir": True}, "memoryDir: expected a string, got true"),
        ({"memoryDir": 5}, "memoryDir: expected a string, got 5"),
        ({"memoryDir": ["a"]}, 'memoryDir: expected a string, got ["a"]'),
        ({"git": {"splitIndex": 3}}, "git.splitIndex: expected a string, got 3 (valid options: auto, true, false)"),
    ],
)
def test_wrong_values_are_refused_by_name(tmp_path: Path, setting: dict, fragment: str) -> None:
    (tmp_path / "remnic.config.json").write_text(json.dumps(setting))
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2 and fragment in result.err and "remnic.config.json" in result.err, result.err


@pytest.mark.parametrize(
    ("setting", "read"),
    [
        ({"observe": {"continuationMinWords": -1}}, lambda s: s.observe.continuation_min_words == -1),
        ({"observe": {"listenerRemarkMaxWords": -1}}, lambda s: s.observe.listener_remark_max_words == -1),
        ({"recall": {"candidates": 10_000, "topK": 10_000}}, lambda s: s.recall.candidates == 10_000),
        ({"git": {"splitIndex": True}}, lambda s: s.git.split_index == "true"),
        ({"git": {"splitIndex": False}}, lambda s: s.git.split_index == "false"),
        ({"recall": {"_comment": "why 5", "$schema": "x", "topK": 5}}, lambda s: s.recall.top_k == 5),
        ({"server": {"_note": "loopback", "port": 4000}}, lambda s: s.server.port == 4000),
    ],
)
def test_documented_values_are_accepted(tmp_path: Path, setting: dict, read) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "remnic.config.json").write_text(json.dumps(setting))
    assert read(load_settings(tmp_path / "mem", cwd=tmp_path))


def test_every_ceiling_names_a_setting_and_passes_its_default() -> None:
    defaults = {r["key"]: r["default"] for r in describe_settings()}
    assert set(CEILINGS) <= set(defaults)
    assert all(defaults[k] <= v for k, v in CEILINGS.items())


# --- config migrate and config --defaults ---


def test_migrate_keeps_the_backup_as_private_as_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "sec.json"
    cfg.write_text('{"server": {"authToken": "s3cret-token"}, "recall": {"_why": "kept", "topK": 3}}')
    cfg.chmod(0o600)
    assert run_cli("config", "migrate", str(cfg), "-q").code == 0
    backup = tmp_path / "sec.json.bak"
    assert "s3cret-token" in backup.read_text()
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600 and stat.S_IMODE(cfg.stat().st_mode) == 0o600
    assert json.loads(cfg.read_text())["recall"] == {"_why": "kept", "topK": 3}


def test_config_defaults_marks_the_user_only_settings() -> None:
    text = run_cli("config", "--defaults").out
    marked = {line.split(" = ")[0] for line in text.splitlines() if line.endswith("(user only)")}
    assert marked == USER_ONLY | USER_ONLY_IGNORED
    rows = run_cli("config", "--defaults", "--json").json()
    assert {r["key"] for r in rows if r["userOnly"]} == USER_ONLY | USER_ONLY_IGNORED


def test_settings_say_what_they_do() -> None:
    docs = {r["key"]: r["doc"] for r in describe_settings()}
    assert "topK" in docs["recall.candidates"]
    assert "without a cue" in docs["observe.minSentenceWords"]
    assert "0 = none" in docs["recall.graphMaxHops"]


def test_sync_watch_takes_a_debounce_of_zero_as_the_config_does() -> None:
    from remnic.cli import build_parser

    assert build_parser().parse_args(["sync", "watch", "--debounce-ms", "0"]).debounce_ms == 0


def test_a_huge_top_k_flag_is_a_usage_error_not_an_overflow(memory: Memory) -> None:
    result = run_cli("query", "tea", "--top-k", "1" + "0" * 23, "--memory-dir", str(memory.root))
    assert result.code == 2 and "--top-k must be at most 10000" in result.err, result.err


def test_config_and_doctor_say_a_space_was_named_by_space(tmp_path: Path, spaces_file: Path) -> None:
    assert run_cli("space", "create", "team-b", "--path", str(tmp_path / "b")).code == 0
    shown = run_cli("config", "--space", "team-b")
    assert shown.code == 0 and "(--space team-b)" in shown.out and "--memory-dir" not in shown.out, shown.out
    doctor = run_cli("doctor", "--space", "team-b")
    assert "(from --space team-b)" in doctor.out, doctor.out
