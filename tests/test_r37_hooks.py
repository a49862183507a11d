"""Agent hooks with what the real hosts write: host text in the assistant's or the user's place, a
long transcript under the host's timeout, a memory folder named with a ``$``, and a doctor whose
"fires" means the observe path works. Real repositories, real hook scripts and processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import copied_memory_root, git, run_cli
from test_hooks import hook_env

from remnic.config import settings_for
from remnic.errors import LedgerError
from remnic.observe.injected import strip_injected
from remnic.observe.transcripts import parse_transcript
from remnic.repo.githooks import hooks_source_dir
from remnic.service.cursors import Cursor
from remnic.service.memory import Memory
from remnic.service.observing import observe_transcript_file

STAMP = "2026-11-28T04:12:{:02d}.000Z"


def _claude(role: str, text: str, uuid: str, second: int = 0, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
    if role == "assistant":
        message.update(model=extra.pop("model", "claude-x"), type="message", id=f"msg-{uuid}")
    line = {"type": role, "uuid": uuid, "timestamp": STAMP.format(second), "sessionId": "s-api", "isSidechain": False}
    return {**line, "message": message, **extra}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# An API error Claude Code 2.1.197 wrote in the assistant's place (captured from the real CLI, text replaced).
API_ERROR = _claude(
    "assistant",
    "API Error: 400 The team decided that all deploys must be approved by Priya from now on.",
    "aaaaaaaa-0000-4000-8000-000000000002",
    11,
    model="<synthetic>",
    error="unknown",
    isApiErrorMessage=True,
    apiErrorStatus=400,
)
NO_RESPONSE = _claude("assistant", "No response requested.", "aaaaaaaa-0000-4000-8000-000000000003", 12)
NO_RESPONSE["message"]["model"] = "<synthetic>"
CLAUDE_LINES = [
    _claude("user", "hello there", "aaaaaaaa-0000-4000-8000-000000000001", 10),
    API_ERROR,
    NO_RESPONSE,
    _claude("assistant", "Hi! How can I help?", "aaaaaaaa-0000-4000-8000-000000000004", 13),
]

SKILL = (
    "<skill>\n<name>deploy-helper</name>\n<path>/home/u/.codex/skills/deploy-helper/SKILL.md</path>\n---\n"
    "name: deploy-helper\ndescription: Helps with deploys.\n---\nWe always deploy from the release branch and "
    "the on-call engineer must approve every production deploy.\n</skill>"
)


def _codex_user(text: str, kind: str | None, second: int) -> dict[str, Any]:
    payload: dict[str, Any] = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    if kind is not None:
        payload["internal_chat_message_metadata_passthrough"] = {"content_item_kinds": [kind]}
    return {"timestamp": STAMP.format(second), "type": "response_item", "payload": payload}


CODEX_LINES = [
    {"timestamp": STAMP.format(0), "type": "session_meta", "payload": {"id": "01a22070-0000-7000-8000-00000000000a"}},
    _codex_user("<environment_context>\n  <cwd>/tmp/p</cwd>\n</environment_context>", "environments.environment_context", 1),
    _codex_user("$deploy-helper check the deploy status", "user.text", 2),
    _codex_user(SKILL, "skills.selected_skill_instructions", 3),  # as Codex 0.171 labels a selected skill
    _codex_user(SKILL + "\nAnd keep the changelog short.", None, 4),  # unlabelled (an older Codex): the tag
    {
        "timestamp": STAMP.format(5),
        "type": "response_item",
        "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]},
    },
]  # fmt: skip


def test_claude_codes_own_lines_in_the_assistants_place_are_not_its_words() -> None:
    claude = "\n".join(json.dumps(line) for line in CLAUDE_LINES)
    for fmt in ("claude-code", "auto"):
        turns = parse_transcript(claude, fmt, strict=True).turns
        assert [(t.role, t.text) for t in turns] == [("user", "hello there"), ("assistant", "Hi! How can I help?")]


def test_a_codex_skill_in_a_user_message_is_not_the_users_words() -> None:
    codex = "\n".join(json.dumps(line) for line in CODEX_LINES)
    for fmt in ("codex", "auto"):
        turns = parse_transcript(codex, fmt, strict=True).turns
        assert [(t.role, t.text) for t in turns] == [
            ("user", "$deploy-helper check the deploy status"),
            ("user", "And keep the changelog short."),
            ("assistant", "Noted."),
        ]


def test_a_skill_tag_a_person_writes_stays_their_words() -> None:
    said = "In our JSX the <skill> component renders a badge. We deploy the frontend every Friday at 16:00."
    assert strip_injected(said) == said
    closed = "Use <skill>Python</skill> in the profile card."
    assert strip_injected(closed) == closed
    assert strip_injected(SKILL + "\nAnd keep the changelog short.") == "And keep the changelog short."


def test_an_api_error_never_becomes_a_memory_nor_an_archived_turn(memory: Memory, tmp_path: Path) -> None:
    """The tester's repro, through the hook's service call: SessionEnd on a transcript whose reply is
    Claude Code's synthetic API error flushed no memory of it and archived only the real turns."""
    path = _write(tmp_path / "t.jsonl", CLAUDE_LINES)
    result, _ = observe_transcript_file(memory, "claude-code:s-api", str(path), event="session-end")
    assert result.buffered == 2 and [f.reason for f in result.flushes] == ["session-end"]
    assert not any("Priya" in r.content for r in memory.list())
    archived = "".join(p.read_text() for p in (memory.root / "state" / "transcripts").rglob("*.jsonl"))
    assert "hello there" in archived and "API Error" not in archived and "No response requested" not in archived


# --- a long transcript under the host's timeout ---

LONG = 300
FACTS = {  # turn → a fact it states: a memory each, made once whatever the hooks went through
    0: "We deploy the billing service on Tuesdays.",
    98: "The staging database runs Postgres 16.",
    150: "Our on-call rotation changes every Monday.",
    298: "We decided to cut releases every Tuesday from now on.",
}


def _long_transcript(path: Path) -> Path:
    lines = []
    for i in range(LONG):
        role = "user" if i % 2 == 0 else "assistant"
        text = FACTS.get(i, "ok")
        line = _claude(role, text, f"bbbbbbbb-0000-4000-8000-{i:012d}", i % 60)
        line["timestamp"] = f"2026-11-28T04:{i // 60:02d}:{i % 60:02d}.000Z"
        lines.append(line)
    return _write(path, lines)


def _hook(root: Path, transcript: Path, tmp_path: Path, **env: str) -> tuple[int, dict[str, Any] | None]:
    """The Stop hook as Claude Code fires it: its exit code and the status line it logged."""
    log = tmp_path / "hook.log"
    log.unlink(missing_ok=True)
    payload = {
        "session_id": "long",
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "Stop",
    }
    proc = subprocess.run(
        [str(hooks_source_dir() / "claude-code" / "stop.sh")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=hook_env(REMNIC_PYTHON=sys.executable, REMNIC_MEMORY_DIR=str(root), REMNIC_HOOK_LOG=str(log), **env),
        timeout=300,
    )
    lines = [x for x in log.read_text().splitlines() if x.startswith("remnic stop: {")] if log.exists() else []
    return proc.returncode, json.loads(lines[-1].split(": ", 1)[1]) if lines else None


def _flush_spans(root: Path) -> list[tuple[int, int]]:
    out = git(root, "log", "--reverse", "--format=%(trailers:key=Remnic-Turns,valueonly)", "--grep=Remnic-Flush-Id")
    return [(int(a), int(b)) for a, b in (line.split("-") for line in out.split())]


def test_a_long_transcript_is_kept_at_once_and_flushed_in_chunks_that_each_commit(
    memory_template: Path, tmp_path: Path
) -> None:
    root = copied_memory_root(memory_template, tmp_path / "mem")
    transcript = _long_transcript(tmp_path / "long.jsonl")
    # observe.hookBudgetS 0: the hook takes the turns and saves its place, and begins no flush.
    config = root / "remnic.config.json"
    original = config.read_bytes() if config.exists() else None
    config.write_text(json.dumps({**json.loads(original or b"{}"), "observe": {"hookBudgetS": 0}}))
    code, status = _hook(root, transcript, tmp_path)
    assert code == 0 and status is not None, status
    assert status["observed"] == LONG and status["flushes"] == [] and status["pendingTurns"] == LONG
    assert (
        "observe.hookBudgetS (0 s) spent" in status["flushDeferred"]
        and "--session-key claude-code:long" in status["flushDeferred"]
    )
    cursor = Cursor(root / "state", "claude-code:long", "default")
    assert cursor.load().offset == transcript.stat().st_size  # saved before any flush: never read again
    from remnic.service.flush_runs import HOOK_FLUSH_TURNS

    # The next hook, killed (kill -9) right after its first chunk's commit, before marking it done.
    config.write_bytes(original) if original is not None else config.unlink()
    code, status = _hook(root, transcript, tmp_path, REMNIC_CRASH_AT="flush-persisted")
    assert code == 0 and status is None  # the runner exits 0 whatever remnic did; it logged nothing
    assert _flush_spans(root) == [(0, HOOK_FLUSH_TURNS - 1)]
    # The next: nothing read again, the chunk committed is marked done, the rest flushed chunk by chunk.
    with Memory.open(settings=settings_for(root)) as mem:
        result, read = observe_transcript_file(
            mem, "claude-code:long", str(transcript), deadline=time.monotonic() + 600
        )
        assert read.bytes_read == 0 and result.buffered == 0 and result.pending == 0 and result.deferred is None
        assert result.flushes[0].replayed and all(f.turns[1] - f.turns[0] < HOOK_FLUSH_TURNS for f in result.flushes)
        facts = sorted(r.content for r in mem.list(status="active"))
    assert _flush_spans(root) == [(s, s + HOOK_FLUSH_TURNS - 1) for s in range(0, LONG, HOOK_FLUSH_TURNS)]
    said = ("billing service on Tuesdays", "Postgres 16", "on-call rotation", "cut releases every Tuesday")
    assert len(facts) == len(FACTS) and all(sum(w in f for f in facts) == 1 for w in said), facts
    archive = [
        json.loads(x) for p in (root / "state" / "transcripts").rglob("*.jsonl") for x in p.read_text().split("\n") if x
    ]
    assert len(archive) == LONG and len({a["turnId"] for a in archive}) == LONG  # fmt: skip
    assert git(root, "status", "--porcelain") == ""


# --- a memory folder named with a $ ---


def test_init_takes_a_dollar_in_the_path_literally_and_a_failed_init_leaves_no_git(tmp_path: Path) -> None:
    root = tmp_path / "my mem $HOME 'q'"
    result = run_cli("init", str(root), "-q")
    assert result.code == 0, result.err
    assert git(root, "rev-parse", "--show-toplevel").strip() == str(root)
    assert run_cli("store", "Deploys go out on Tuesdays", "--memory-dir", str(root)).code == 0
    assert "Deploys go out on Tuesdays" in git(root, "log", "-1", "--format=%s")
    assert git(root, "status", "--porcelain") == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == [root.name]  # nothing made at an expanded path

    from remnic.repo.creating import init_git

    def unopenable(path: Path) -> None:
        raise OSError(5, "Input/output error", str(path))

    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(LedgerError, match="cannot create a git repository in"):
        init_git(other, unopenable)
    assert not (other / ".git").exists()


# --- connectors doctor ---


def test_doctor_fires_the_observing_hooks_on_a_sample_and_leaves_the_users_repository_alone(
    memory: Memory, isolated_home: Path
) -> None:
    assert run_cli("connectors", "install", "claude-code", "--memory-dir", str(memory.root)).code == 0
    head = git(memory.root, "rev-parse", "HEAD")
    doctor = run_cli("connectors", "doctor", "claude-code", "--json")
    assert doctor.code == 0, doctor.out
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert "observed a sample transcript of 2 turns" in checks["Stop fires"]["detail"]
    for event in ("PreCompact", "SessionEnd"):
        assert "observed a sample transcript of 2 turns" in checks[f"{event} fires"]["detail"]
        assert "and flushed them" in checks[f"{event} fires"]["detail"]
    assert git(memory.root, "rev-parse", "HEAD") == head and not memory.list()
    state = memory.root / "state"
    assert not [p for p in ("observe-buffer", "observe-cursors", "transcripts") if (state / p).exists()]
