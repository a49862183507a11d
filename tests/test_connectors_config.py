"""`remnic connectors` and the user's own config: other tools' hooks, the file's bytes, its symlink,
a shape remnic cannot read, hooks turned off, backups, and a doctor that notices a missing memory.

Real files in temporary folders, through the real CLI (in-process); doctor fires the real hook scripts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import copied_memory_root, run_cli

from remnic.drivers import connectors as C
from remnic.drivers.connectors import config as connector_config
from remnic.service.memory import Memory

THEIRS = {
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "node /opt/othertool/hooks/claude-code/stop.sh"}]}],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": "~/.claude/hooks/claude-code/session-start.sh --my-own"}],
            }
        ],
    }
}


def _install(host: str, path: Path, memory: Path, *more: str) -> dict:
    result = run_cli("connectors", "install", host, "--config", str(path), "--memory-dir", str(memory), "--json", *more)
    assert result.code == 0, result.err
    return result.json()


def _remove(host: str, path: Path) -> dict:
    result = run_cli("connectors", "remove", host, "--config", str(path), "--json")
    assert result.code == 0, result.err
    return result.json()


# --- whose hooks are whose ---


def test_other_tools_hooks_with_remnic_like_paths_stay_and_remnics_go_beside_them(
    memory: Memory, isolated_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "other.json"
    original = json.dumps(THEIRS, indent=2) + "\n"
    path.write_text(original)

    assert _remove("claude-code", path)["status"] == "not_found"
    assert path.read_text() == original and not list(tmp_path.glob("*.remnic-backup-*"))

    result = _install("claude-code", path, memory.root)
    assert sorted(result["changes"]) == sorted(f"{e}: added" for e in C.EVENTS)
    config = json.loads(path.read_text())
    for event in ("Stop", "SessionStart"):  # theirs first, untouched; remnic's in a group of its own
        assert config["hooks"][event][0] == THEIRS["hooks"][event][0]
        assert config["hooks"][event][1]["hooks"][0]["command"].endswith(f"claude-code/{C.EVENTS[event]}.sh")

    removed = _remove("claude-code", path)
    assert sorted(removed["changes"]) == sorted(f"{e}: removed" for e in C.EVENTS)
    assert path.read_text() == original

    settings = isolated_home / ".claude" / "settings.json"  # list judges the same way
    settings.parent.mkdir()
    settings.write_text(original)
    listed = run_cli("connectors", "list", "--json").json()["connectors"]
    assert next(c for c in listed if c["host"] == "claude-code")["events"] == dict.fromkeys(C.EVENTS)


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("node /opt/othertool/hooks/claude-code/stop.sh", False),
        ("~/.claude/hooks/claude-code/session-start.sh --my-own", False),
        ("/opt/othertool/hooks/claude-code/stop.sh", False),  # a path alone is no mark
        ("FOO=1 REMNIC_PYTHON=/usr/bin/python3 /opt/remnic/hooks/codex/stop.sh", False),
        ("REMNIC_PYTHON=/usr/bin/python3 /opt/remnic/hooks/codex/stop.sh --extra", False),
        ("REMNIC_PYTHON=/usr/bin/python3 /opt/x/scripts/codex/stop.sh", False),
        ("REMNIC_PYTHON=/usr/bin/python3 sh /opt/remnic/hooks/codex/stop.sh", False),
        # what an earlier remnic wrote from another install (connectors install, hooks agent-config)
        ("REMNIC_MEMORY_DIR=/old/mem REMNIC_PYTHON=/old/bin/python /old/site/remnic/_hooks/claude-code/stop.sh", True),
        ("REMNIC_PYTHON=/usr/bin/python3 '/opt/my remnic/hooks/codex/session-start.sh'", True),
    ],
)
def test_a_handler_is_remnics_only_when_its_whole_command_is(command: str, ours: bool) -> None:
    assert C.is_ours({"type": "command", "command": command}) is ours


def test_a_handler_of_this_remnics_hooks_folder_is_ours_whatever_it_sets(memory: Memory) -> None:
    command = C.command_for(C.host("codex"), "Stop", python="/usr/bin/python3", memory_dir=memory.root)
    script = command.rsplit(" ", 1)[1]
    assert C.is_ours({"type": "command", "command": command})
    assert C.is_ours({"type": "command", "command": f"TZ=UTC {script}"})
    assert not C.is_ours({"type": "command", "command": f"{script} --more"})


def test_an_earlier_remnics_handler_is_replaced_in_place(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    old = "REMNIC_MEMORY_DIR=/old/mem REMNIC_PYTHON=/old/bin/python /old/site/remnic/_hooks/codex/stop.sh"
    mine = {"type": "command", "command": "echo mine"}
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [mine, {"type": "command", "command": old}]}]}}))
    result = _install("codex", path, memory.root)
    assert "Stop: updated" in result["changes"] and "Stop: added" not in result["changes"]
    stop = json.loads(path.read_text())["hooks"]["Stop"]
    assert len(stop) == 1 and stop[0]["hooks"][0] == mine and str(memory.root) in stop[0]["hooks"][1]["command"]


# --- the file's own bytes ---

FOUR = """{
    "model": "opus",
    "limits": {"tokens": 1e5, "ratio": 0.50, "big": 12345678901234567890},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}],
        "Notification": []
    },
    "name": "caf\\u00e9"
}
"""


def test_install_and_remove_change_only_remnics_part_of_the_file(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(FOUR)
    _install("claude-code", path, memory.root)
    text = path.read_text()
    for line in FOUR.splitlines()[:4] + FOUR.splitlines()[6:]:  # numbers, inline objects, escapes as written
        assert line in text
    assert (
        '    "hooks": {\n        "Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}, {"hooks": [{'
        in text
    )
    assert (
        '\n        "SessionStart": [\n            {\n                "matcher": "startup|resume|clear|compact",' in text
    )
    assert _install("claude-code", path, memory.root)["status"] == "already_installed"
    _remove("claude-code", path)
    assert path.read_text() == FOUR


@pytest.mark.parametrize(
    ("indent", "newline", "end"),
    [(4, "\n", "\n"), ("\t", "\n", ""), (2, "\r\n", "\r\n"), (None, "", "\n")],
    ids=["4-spaces", "tabs", "crlf", "one-line"],
)
@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_install_writes_in_the_files_style_and_remove_gives_back_its_bytes(
    memory: Memory, tmp_path: Path, indent: int | str | None, newline: str, end: str, host: str
) -> None:
    path = tmp_path / "config.json"
    before = {"model": "opus", "n": [1, 2], "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}

    def dump(data: dict) -> str:
        return json.dumps(data, indent=indent, ensure_ascii=False).replace("\n", newline or "\n") + end

    path.write_bytes(dump(before).encode())
    _install(host, path, memory.root)
    text = path.read_bytes().decode()
    after = json.loads(text)
    assert after["hooks"]["Stop"][0] == before["hooks"]["Stop"][0] and after["model"] == "opus"
    assert text == dump(after)  # what a file written at its indent gets is written at that indent
    _remove(host, path)
    assert path.read_bytes() == dump(before).encode()


def test_a_minified_config_stays_minified(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    original = json.dumps({"model": "opus", "hooks": {}}, separators=(",", ":"))
    path.write_text(original)
    _install("codex", path, memory.root)
    text = path.read_text()
    assert text == json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    _remove("codex", path)
    assert path.read_text() == '{"model":"opus"}'  # the "hooks" remnic filled goes whole


def test_a_symlinked_config_is_written_through_and_stays_a_link(memory: Memory, tmp_path: Path) -> None:
    (tmp_path / "dotfiles").mkdir()
    target = tmp_path / "dotfiles" / "settings.json"
    target.write_text('{"model":"opus"}\n')
    link = tmp_path / "claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(target)

    result = _install("claude-code", link, memory.root)
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert json.loads(target.read_text())["hooks"]["Stop"] and json.loads(target.read_text())["model"] == "opus"
    assert Path(result["backup"]).parent == link.parent and Path(result["backup"]).read_text() == '{"model":"opus"}\n'
    assert not list(target.parent.glob(".*tmp*"))  # the atomic write's temp file went with the rename

    _remove("claude-code", link)
    assert link.is_symlink() and target.read_text() == '{"model":"opus"}\n'


def test_backups_in_one_second_never_overwrite_each_other(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connector_config, "_stamp", lambda: "20250101T000000")
    path = tmp_path / "hooks.json"
    path.write_text('{"model": "a"}\n')
    first = _install("codex", path, memory.root)["backup"]
    installed = path.read_text()
    second = _remove("codex", path)["backup"]
    third = _install("codex", path, memory.root)["backup"]
    assert len({first, second, third}) == 3
    assert Path(first).read_text() == '{"model": "a"}\n' and Path(second).read_text() == installed
    assert Path(third).read_text() == '{"model": "a"}\n'


# --- what remnic will not touch, and what it warns about ---


@pytest.mark.parametrize(
    ("hooks", "problem"),
    [
        ({"Stop": None}, "hooks.Stop must be a list of hook groups (got null)"),
        ({"Stop": {}}, "hooks.Stop must be a list of hook groups (got an object)"),
        ({"Stop": 5}, "hooks.Stop must be a list of hook groups (got a number)"),
        ({"Stop": "x"}, "hooks.Stop must be a list of hook groups (got a string)"),
        ({"Stop": ["x"]}, "hooks.Stop[0] must be a hook group object (got a string)"),
        ({"Stop": [{"hooks": {}}]}, "hooks.Stop[0].hooks must be a list of handlers (got an object)"),
        ({"Stop": [{"hooks": None}]}, "hooks.Stop[0].hooks must be a list of handlers (got null)"),
    ],
)
def test_a_wrongly_typed_hooks_value_is_refused_naming_it(
    memory: Memory, isolated_home: Path, hooks: dict, problem: str
) -> None:
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps({"hooks": hooks})
    path.write_text(original)
    for command in ("install", "remove"):
        result = run_cli("connectors", command, "claude-code", "--memory-dir", str(memory.root))
        assert result.code == 2 and f"settings.json: {problem}" in result.err, result.err
        assert "Traceback" not in result.err and path.read_text() == original
    doctor = run_cli("connectors", "doctor", "claude-code", "--json")
    assert doctor.code == 1
    assert problem in {c["name"]: c for c in doctor.json()["checks"]}["config file"]["detail"]
    listed = run_cli("connectors", "list")
    assert listed.code == 0 and "unreadable" in listed.out and problem in listed.out
    assert not list(path.parent.glob("*.remnic-backup-*"))


def test_disable_all_hooks_is_warned_at_install_and_fails_doctor(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"disableAllHooks": true}\n')
    result = _install("claude-code", path, memory.root)
    assert any("disableAllHooks" in w for w in result["warnings"])
    text = run_cli("connectors", "install", "claude-code", "--config", str(path), "--memory-dir", str(memory.root))
    assert "warning:" in text.out and "disableAllHooks" in text.out
    # whether the host runs hooks is its settings' say: nothing to fire for that
    doctor = run_cli("connectors", "doctor", "claude-code", "--config", str(path), "--no-fire", "--json")
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert doctor.code == 1 and not checks["claude-code hooks enabled"]["ok"]
    assert "disableAllHooks" in checks["claude-code hooks enabled"]["detail"]


def test_doctor_fails_naming_the_memory_repository_the_hooks_lost(memory_template: Path, tmp_path: Path) -> None:
    gone = copied_memory_root(memory_template, tmp_path / "mem3")
    path = tmp_path / "cc3.json"
    _install("claude-code", path, gone)
    # healthy before (the repository check passes; the hooks are fired once, below, after it went)
    assert run_cli("connectors", "doctor", "claude-code", "--config", str(path), "--no-fire").code == 0
    shutil.rmtree(gone)
    doctor = run_cli("connectors", "doctor", "claude-code", "--config", str(path), "--json")
    assert doctor.code == 1 and not doctor.json()["healthy"]
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert not checks["memory repository"]["ok"] and str(gone) in checks["memory repository"]["detail"]
    for event in C.EVENTS:
        fired = checks[f"{event} fires"]
        assert not fired["ok"] and str(gone) in fired["detail"] and "does not exist" in fired["detail"]
    text = run_cli("connectors", "doctor", "claude-code", "--config", str(path), "--no-fire")
    assert f"FAIL memory repository: {gone} does not exist" in text.out
