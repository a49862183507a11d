"""Agents' surface (r31): Codex IDE context preambles, unstat-able cwds, Codex's SessionEnd timeout,
and tools/call without params."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_connectors import CLIS, model_api, seeded  # noqa: F401 - fixtures of the real-CLI runs

from remnic.drivers.hooks import observe_transcript, session_context
from remnic.observe.injected import strip_injected
from remnic.server import Api
from remnic.server.mcp import McpServer, McpSession
from remnic.service.memory import Memory

SELECTION = "Our vendor Globex requires invoices to be sent by the 3rd of each month."
IDE_FIX = (
    "# Context from my IDE setup:\n\n## Active file: docs/vendor-notes.md\n\n"
    f"## Active selection of the file:\n{SELECTION}\n\n"
    "## Open tabs:\n- vendor-notes.md: docs/vendor-notes.md\n- payroll.py: src/payroll.py\n\n"
    "## My request for Codex:\nfix the typo in this paragraph\n"
)
FILES_SUMMARY = (
    "# Files mentioned by the user:\n\n## payroll-2026.xlsx: /home/me/private/payroll-2026.xlsx\n\n"
    "## My request for Codex:\nsummarise this file"
)
ONLY_CONTEXT = (
    "# Context from my IDE setup:\n\n## Active file: src/payroll.py\n\n## Open tabs:\n- payroll.py: src/payroll.py\n"
)
T = "2026-11-27T10:00:00.000Z"


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": T, "type": kind, "payload": payload}


def _msg(role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return _line("response_item", {"type": "message", "role": role, "content": list(blocks)})


def _text(text: str, kind: str = "input_text") -> dict[str, Any]:
    return {"type": kind, "text": text}


# A Codex IDE-extension rollout (0.171): instructions, environment, IDE context blocks, mirrored
# event_msg lines, reasoning and tool traffic. Line numbers are the turns' indexes.
CODEX_IDE_ROLLOUT: list[dict[str, Any]] = [
    _line(
        "session_meta",
        {
            "id": "ide-1",
            "timestamp": T,
            "cwd": "/home/me/app",
            "originator": "codex_vscode",
            "cli_version": "0.171.0",
            "source": "vscode",
        },
    ),  # 1
    _msg(
        "developer",
        _text("<permissions instructions>\nFilesystem sandboxing: workspace-write\n</permissions instructions>"),
    ),  # 2
    _msg("user", _text("# AGENTS.md instructions for /home/me/app\n\n<INSTRUCTIONS>\nUse pnpm.\n</INSTRUCTIONS>")),  # 3
    _msg(
        "user", _text("<environment_context>\n  <cwd>/home/me/app</cwd>\n  <shell>zsh</shell>\n</environment_context>")
    ),  # 4
    _line("turn_context", {"cwd": "/home/me/app", "approval_policy": "on-request", "model": "gpt-5-codex"}),  # 5
    _msg("user", _text(IDE_FIX)),  # 6
    _line("event_msg", {"type": "user_message", "message": IDE_FIX, "images": []}),  # 7
    _line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"}),  # 8
    _line(
        "response_item",
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "c1",
            "arguments": '{"command":["cat","docs/vendor-notes.md"]}',
        },
    ),  # 9
    _line("response_item", {"type": "function_call_output", "call_id": "c1", "output": SELECTION}),  # 10
    _msg("assistant", _text("Fixed the typo.", "output_text")),  # 11
]
CODEX_IDE_ROLLOUT_MORE: list[dict[str, Any]] = [
    _line("event_msg", {"type": "agent_message", "message": "Fixed the typo."}),  # 12
    _msg("user", _text(FILES_SUMMARY), {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}),  # 13
    _msg("assistant", _text("Here is a summary.", "output_text")),  # 14
    _msg("user", _text(ONLY_CONTEXT)),  # 15: the context alone, no request: no turn
    _msg("user", _text(ONLY_CONTEXT + "\n## My request for Codex:\nrename the helper"),
         _text("also update the tests")),  # 16
]  # fmt: skip


def _archived(memory: Memory) -> list[dict[str, Any]]:
    rows = [
        json.loads(line)
        for f in sorted((memory.root / "state" / "transcripts").rglob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    return sorted(rows, key=lambda r: r["turnIndex"])


def test_a_codex_ide_rollout_keeps_only_the_request_after_the_context_preamble(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in CODEX_IDE_ROLLOUT))
    payload = {"session_id": "ide-1", "transcript_path": str(path), "hook_event_name": "Stop"}
    assert observe_transcript(memory, payload, "codex", "stop")["observed"] == 2
    with path.open("a") as fh:
        fh.write("".join(json.dumps(x) + "\n" for x in CODEX_IDE_ROLLOUT_MORE))
    end = observe_transcript(
        memory, {**payload, "hook_event_name": "SessionEnd", "reason": "other"}, "codex", "session-end"
    )
    assert end["observed"] == 3 and end["flushes"]
    assert [(r["turnId"], r["role"], r["content"]) for r in _archived(memory)] == [
        ("L6", "user", "fix the typo in this paragraph"),
        ("L11", "assistant", "Fixed the typo."),
        ("L13", "user", "summarise this file"),
        ("L14", "assistant", "Here is a summary."),
        ("L16", "user", "rename the helper\n\nalso update the tests"),
    ]
    archive = "".join(f.read_text() for f in (memory.root / "state" / "transcripts").rglob("*.jsonl"))
    assert "Globex" not in archive and "payroll-2026" not in archive and "Open tabs" not in archive
    assert not [r.content for r in memory.list() if "Globex" in r.content]  # no file text became a fact


def test_a_codex_ide_preamble_sent_through_observe_is_cut_too(memory: Memory) -> None:
    result = memory.observe(
        "ide-2", [{"role": "user", "content": FILES_SUMMARY}, {"role": "user", "content": ONLY_CONTEXT}]
    )
    assert result.buffered == 1
    assert [r["content"] for r in _archived_any(memory)] == ["summarise this file"]
    assert strip_injected("  " + IDE_FIX) == "fix the typo in this paragraph"


def _archived_any(memory: Memory) -> list[dict[str, Any]]:
    return [
        json.loads(x)
        for f in (memory.root / "state" / "transcripts").rglob("*.jsonl")
        for x in f.read_text().splitlines()
    ]


LONG_CWD = "/" + "y" * 256  # one path component over NAME_MAX (255 bytes): stat says ENAMETOOLONG


def test_a_cwd_the_os_cannot_stat_is_no_repository_and_the_session_still_gets_its_pinned_rules(
    memory: Memory,
) -> None:
    memory.store("Never force-push to main", category="rule", importance=0.95)
    project = memory.project_context(cwd=LONG_CWD)
    assert project is not None and project.root_path == LONG_CWD and project.project_id.startswith("root:")
    context = session_context(memory, {"session_id": "s", "cwd": LONG_CWD, "source": "startup"})
    assert "Never force-push to main" in context


def test_mcp_tools_given_a_cwd_the_os_cannot_stat_answer_instead_of_an_internal_error(memory: Memory) -> None:
    memory.store("The billing service deploys through Argo", category="fact")
    server = McpServer(Api(memory))
    session = McpSession(stateless=True)
    for name, args in (
        ("remnic_recall", {"query": "billing", "cwd": LONG_CWD}),
        ("remnic_memory_store", {"content": "The staging cluster is in Frankfurt", "cwd": LONG_CWD}),
    ):
        reply = server.handle(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}},
            "local",
            session,
        )
        assert reply is not None and "result" in reply, reply
        assert reply["result"].get("isError") is not True, reply["result"]["content"][0]["text"]


def test_tools_call_without_params_says_params_name_is_required(memory: Memory) -> None:
    server = McpServer(Api(memory))
    reply = server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/call"}, "local", McpSession(stateless=True))
    assert reply is not None
    message = reply["error"]["message"]
    assert reply["error"]["code"] == -32602 and message.startswith("params.name is required")
    assert "None" not in message and "remnic_recall" in message


def _install(host: str, path: Path, memory: Path) -> dict[str, Any]:
    result = run_cli("connectors", "install", host, "--config", str(path), "--memory-dir", str(memory), "--json")
    assert result.code == 0, result.err
    return result.json()


def _timeouts(path: Path) -> dict[str, list[Any]]:
    hooks = json.loads(path.read_text())["hooks"]
    return {event: [h["timeout"] for g in groups for h in g["hooks"]] for event, groups in hooks.items()}


def test_codex_session_end_gets_a_timeout_codex_does_not_clamp_and_a_reinstall_rewrites_an_old_one(
    memory: Memory, tmp_path: Path
) -> None:
    codex = tmp_path / "codex" / "hooks.json"
    codex.parent.mkdir()  # --config names a file in a folder that exists (a typo must not make one)
    (tmp_path / "claude").mkdir()
    _install("codex", codex, memory.root)
    assert _timeouts(codex) == {"SessionStart": [60], "Stop": [60], "PreCompact": [60], "SessionEnd": [3]}
    claude = tmp_path / "claude" / "settings.json"
    _install("claude-code", claude, memory.root)
    assert _timeouts(claude)["SessionEnd"] == [60]  # Claude Code allows it
    # What an earlier remnic wrote: 60 s, which Codex clamps with a warning on every run.
    codex.write_text(codex.read_text().replace('"timeout": 3', '"timeout": 60'))
    again = _install("codex", codex, memory.root)
    assert again["status"] == "installed" and again["changes"] == ["SessionEnd: updated"]
    assert _timeouts(codex)["SessionEnd"] == [3]
    assert _install("codex", codex, memory.root)["status"] == "already_installed"


@pytest.mark.skipif(CLIS is None, reason="set REMNIC_HOST_CLIS to a folder holding the claude and codex CLIs")
def test_real_codex_runs_the_installed_hooks_without_clamping_a_timeout(
    seeded: Memory,  # noqa: F811 - the fixture imported above
    isolated_home: Path,
    tmp_path: Path,
    model_api: tuple[int, Path],  # noqa: F811
) -> None:
    port, _ = model_api
    assert CLIS is not None
    assert run_cli("connectors", "install", "codex", "--memory-dir", str(seeded.root)).code == 0
    (isolated_home / ".codex" / "config.toml").write_text(
        'model = "test"\nmodel_provider = "local"\n[model_providers.local]\nname = "local"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
    )
    folder = tmp_path / "work"
    folder.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(isolated_home), "OPENAI_API_KEY": "sk-test"}
    command = [str(CLIS / "codex"), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "Hello there."]
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "clamping" not in proc.stderr and "timeout" not in proc.stderr, proc.stderr[-2000:]
