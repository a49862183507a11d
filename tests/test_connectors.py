"""remnic's hooks in the agent hosts' configs, and the session start they give.

install/remove/doctor edit real files in a temporary HOME and fire the real hook scripts.
With the hosts' CLIs at hand ($REMNIC_HOST_CLIS: a folder holding `claude` and `codex`, e.g.
node_modules/.bin after `npm install @anthropic-ai/claude-code @openai/codex`), a session
of each runs against a model stand-in on 127.0.0.1 and the test reads what reached the model
and what the archive got.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from test_hooks import run_agent_hook
from test_r34_hooks_codex_trust import trust_codex_hooks

from remnic.repo.githooks import hooks_source_dir
from remnic.service.memory import Memory


@pytest.fixture
def seeded(memory: Memory) -> Memory:
    memory.store("Never force-push to main", category="rule", importance=0.95)
    memory.store("Ana prefers tabs over spaces", category="preference", importance=0.9)
    memory.store("Ana once liked a blue theme", category="preference", importance=0.2)
    memory.store("The cafeteria opens at eight", category="fact")
    return memory


def _config(home: Path, host: str) -> Path:
    return home / (".claude/settings.json" if host == "claude-code" else ".codex/hooks.json")


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_install_merges_idempotently_with_a_backup_and_remove_takes_only_ours(
    seeded: Memory, isolated_home: Path, host: str
) -> None:
    path = _config(isolated_home, host)
    path.parent.mkdir(parents=True)
    theirs = {"type": "command", "command": "echo mine"}
    path.write_text(json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [theirs]}]}}))
    root = str(seeded.root)

    first = run_cli("connectors", "install", host, "--memory-dir", root, "--json")
    assert first.code == 0, first.err
    result = first.json()
    assert result["status"] == "installed" and result["backup"] and Path(result["backup"]).is_file()
    config = json.loads(path.read_text())
    assert config["model"] == "opus" and config["hooks"]["Stop"][0]["hooks"] == [theirs]
    events = [("SessionStart", "session-start"), ("Stop", "stop"), ("PreCompact", "pre-compact")]
    events.append(("SessionEnd", "session-end"))  # Codex has it since 0.171
    assert sorted(result["events"]) == sorted(e for e, _ in events)
    for event, script in events:
        command = result["events"][event]
        assert f"REMNIC_MEMORY_DIR={root}" in command and command.endswith(f"hooks/{host}/{script}.sh")
    before = path.read_bytes()
    backups = sorted(path.parent.glob("*.remnic-backup-*"))

    again = run_cli("connectors", "install", host, "--memory-dir", root, "--json").json()
    assert again["status"] == "already_installed" and again["backup"] is None
    assert path.read_bytes() == before and sorted(path.parent.glob("*.remnic-backup-*")) == backups

    moved = json.loads(before)  # an install from elsewhere: remnic's entry is replaced in place, never doubled
    moved["hooks"]["Stop"][1]["hooks"][0]["command"] = moved["hooks"]["Stop"][1]["hooks"][0]["command"].replace(
        root, "/old/place"
    )
    path.write_text(json.dumps(moved))
    updated = run_cli("connectors", "install", host, "--memory-dir", root, "--json").json()
    assert updated["changes"] == ["Stop: updated"]
    assert sum("hooks/" in h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]) == 1

    listed = run_cli("connectors", "list", "--json").json()["connectors"]
    assert next(c for c in listed if c["host"] == host)["installed"] is True

    removed = run_cli("connectors", "remove", host, "--json").json()
    assert removed["status"] == "removed"
    assert json.loads(path.read_text()) == {"model": "opus", "hooks": {"Stop": [{"hooks": [theirs]}]}}
    assert run_cli("connectors", "remove", host, "--json").json()["status"] == "not_found"


def test_a_broken_host_config_is_refused_and_left_alone(memory: Memory, isolated_home: Path) -> None:
    path = _config(isolated_home, "claude-code")
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": [oops')
    result = run_cli("connectors", "install", "claude-code", "--memory-dir", str(memory.root))
    assert result.code == 2 and "settings.json:1" in result.err and "not valid JSON" in result.err
    assert path.read_text() == '{"hooks": [oops'
    assert run_cli("connectors", "install", "copilot", "--memory-dir", str(memory.root)).code == 2


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_doctor_fires_each_hook_and_says_what_is_missing(seeded: Memory, isolated_home: Path, host: str) -> None:
    bare = run_cli("connectors", "doctor", host, "--json")
    assert bare.code == 1 and not bare.json()["healthy"]
    run_cli("connectors", "install", host, "--memory-dir", str(seeded.root))
    if host == "codex":  # Codex runs only hooks a person trusted in /hooks: trust them as /hooks does
        trust_codex_hooks(isolated_home / ".codex")
    doctor = run_cli("connectors", "doctor", host, "--json")
    assert doctor.code == 0, doctor.out
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert "injects" in checks["SessionStart fires"]["detail"]
    assert "remnic stop:" in checks["Stop fires"]["detail"] and checks["PreCompact fires"]["ok"]
    assert checks["SessionEnd fires"]["ok"] and checks["SessionStart matcher"]["ok"]
    # fired in a folder holding a json.py, this remnic's hooks do not import it
    assert checks["project modules ignored"]["ok"] and checks["project modules ignored"]["status"] == "ok"
    assert doctor.json()["fired"] is True and doctor.json()["skipped"] == []
    if host == "codex":  # whether Codex runs hooks at all is its config's say: no need to fire them again
        (isolated_home / ".codex" / "config.toml").write_text("[features]\nhooks = false\n")
        off = run_cli("connectors", "doctor", host, "--no-fire", "--json").json()
        assert (
            not off["healthy"]
            and "hooks = false" in {c["name"]: c for c in off["checks"]}["codex hooks enabled"]["detail"]
        )


FIRES = [f"{event} fires" for event in ("SessionStart", "Stop", "PreCompact", "SessionEnd")]


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_doctor_no_fire_checks_the_config_runs_no_hook_and_never_reports_the_fires_as_passed(
    memory: Memory, isolated_home: Path, tmp_path: Path, host: str
) -> None:
    """--no-fire: every handler's command names a hooks folder whose runner only notes that it ran
    (and reports no run): no line is noted, the fire checks are named in `skipped`, absent from
    `checks`, shown as SKIP, and the closing line is not `healthy`. Fired, the same config fails."""
    folder = tmp_path / "noting" / "_hooks"
    shutil.copytree(hooks_source_dir(), folder)
    ran = tmp_path / "ran"
    (folder / "agent-hook.sh").write_text(f'#!/bin/sh\necho "$1" >> {ran}\nexit 0\n')
    assert run_cli("connectors", "install", host, "--memory-dir", str(memory.root)).code == 0
    if host == "codex":
        trust_codex_hooks(isolated_home / ".codex")
    path = _config(isolated_home, host)
    path.write_text(path.read_text().replace(str(hooks_source_dir()), str(folder)))
    if host == "codex":  # trusted as the handlers now read
        (isolated_home / ".codex" / "config.toml").write_text("")
        trust_codex_hooks(isolated_home / ".codex")

    quick = run_cli("connectors", "doctor", host, "--no-fire", "--json")
    assert quick.code == 0, quick.out
    result = quick.json()
    assert result["fired"] is False and result["skipped"] == [*FIRES, "project modules ignored"]
    names = [c["name"] for c in result["checks"]]
    assert not set(names) & set(result["skipped"]) and "memory repository" in names and "Stop hook" in names
    if host == "codex":
        assert {c["status"] for c in result["checks"] if c["name"].endswith("trusted by Codex")} == {"ok"}
    text = run_cli("connectors", "doctor", host, "--no-fire").out.splitlines()
    assert [line for line in text if line.startswith("SKIP ")] == [
        f"SKIP {name}: not fired (--no-fire)" for name in result["skipped"]
    ]
    assert text[-1] != "healthy" and "not fired" in text[-1] and f"remnic connectors doctor {host}`" in text[-1]
    assert not ran.exists()  # no hook ran

    fired = run_cli("connectors", "doctor", host, "--json")  # the same config, fired: each hook runs and fails
    assert fired.code == 1 and fired.json()["fired"] is True and fired.json()["skipped"] == []
    checks = {c["name"]: c for c in fired.json()["checks"]}
    assert all(not checks[name]["ok"] and "reported no run" in checks[name]["detail"] for name in FIRES)
    noted = ran.read_text().split()  # each handler, then one more in a folder holding a json.py
    assert len(noted) == 5 and set(noted) == {"session-start", "stop", "pre-compact", "session-end"}


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_session_start_in_a_folder_matching_nothing_still_injects_the_pinned_rules(
    seeded: Memory, tmp_path: Path, host: str
) -> None:
    folder = tmp_path / "zzqx-nothing"
    folder.mkdir()
    # What the hook injects (its scripts are test_hooks.py's), run in this process.
    result = run_agent_hook(
        host, "session-start", {"session_id": "s", "cwd": str(folder), "source": "startup"}, seeded.root
    )
    assert result.code == 0, result.err
    context = json.loads(result.out)["hookSpecificOutput"]["additionalContext"]
    pinned = context.split("Pinned (rules, principles, key preferences):\n", 1)[1].split("\n\n")[0].splitlines()
    assert pinned[0].startswith("- [rule] Never force-push to main")
    assert pinned[1].startswith("- [preference] Ana prefers tabs over spaces")
    assert "blue theme" not in "\n".join(pinned)  # a preference below hooks.pinnedMinImportance is not pinned


def test_session_start_recalls_for_the_repository_context(memory: Memory, tmp_path: Path) -> None:
    memory.store("The ledger-api retries payouts three times before paging", category="decision")
    memory.store("The cafeteria opens at eight", category="fact")
    repo = tmp_path / "billing"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "payout-retries"], check=True)
    (repo / "retry_policy.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "Tune payout retries in the ledger-api"], check=True)
    result = run_agent_hook("claude-code", "session-start", {"session_id": "s", "cwd": str(repo)}, memory.root)
    context = json.loads(result.out)["hookSpecificOutput"]["additionalContext"]
    relevant = context.split("Relevant to billing (branch payout-retries):\n", 1)[1]
    assert relevant.splitlines()[0].startswith("- [decision] The ledger-api retries payouts")


# --- the real hosts, when their CLIs are at hand ---

CLIS = Path(os.environ["REMNIC_HOST_CLIS"]) if os.environ.get("REMNIC_HOST_CLIS") else None


@pytest.fixture
def model_api(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    bodies = tmp_path / "bodies.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fake_model_api.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "FAKE_BODIES": str(bodies)},
    )
    try:
        assert proc.stdout is not None
        yield int(proc.stdout.readline()), bodies
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.skipif(CLIS is None, reason="set REMNIC_HOST_CLIS to a folder holding the claude and codex CLIs")
@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_real_host_session_gets_the_pinned_rules_and_archives_its_turns(
    seeded: Memory, isolated_home: Path, tmp_path: Path, model_api: tuple[int, Path], host: str
) -> None:
    port, bodies = model_api
    assert CLIS is not None
    assert run_cli("connectors", "install", host, "--memory-dir", str(seeded.root)).code == 0
    folder = tmp_path / "zzqx-nothing"
    folder.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(isolated_home)}
    prompt = "From now on the staging database is read-only on Fridays."
    if host == "claude-code":
        env |= {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}
        command = [str(CLIS / "claude"), "-p", prompt]
    else:
        (isolated_home / ".codex" / "config.toml").write_text(
            'model = "test"\nmodel_provider = "local"\n[model_providers.local]\nname = "local"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
        env |= {"OPENAI_API_KEY": "sk-test"}
        # Codex runs hooks only once a person trusted them (/hooks); this flag is that review, for a test.
        command = [str(CLIS / "codex"), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", prompt]
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Never force-push to main" in bodies.read_text()  # the pinned rule reached the model
    found = seeded.lcm_search("staging database is read-only on Fridays")
    assert found and found[0]["sessionKey"].startswith(f"{host}:") and found[0]["role"] == "user"
    rule = "From now on the staging database is read-only on Fridays."
    observed = lambda: [r.content for r in seeded.list() if r.frontmatter.get("source") == "extraction"]  # noqa: E731
    assert observed() == [rule]  # each host's SessionEnd flushed it (Codex has the event since 0.171)
    reasons = subprocess.run(
        ["git", "log", "--format=%(trailers:key=Remnic-Flush-Reason,valueonly)"],
        cwd=seeded.root, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert reasons == ["session-end"]  # not the idle sweep
