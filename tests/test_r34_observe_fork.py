"""Round 34: a forked Claude Code session (`claude --resume <id> --fork-session`) starts with a copy of its
parent's lines, uuids and timestamps kept. Its hooks observe only its new turns, and a copied turn never
reinforces the memory it made (the same utterance, not a reconfirmation)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_connectors import CLIS, model_api  # noqa: F401 - the fixture of the real-CLI runs
from test_hooks import hook_env, run_agent_hook

from remnic.observe.lcm.index import LcmIndex
from remnic.repo.githooks import hooks_source_dir
from remnic.service.memory import Memory
from remnic.service.observing import observe_transcript_file

PARENT = "9f3f64cc-0c1d-4d5e-9f00-1a2b3c4d5e6f"
FORK = "a2ebb82a-7e8f-4a1b-8c2d-3e4f5a6b7c8d"
# What a Claude Code 2.1 session file holds around the turns: queue operations and hook attachments.
SAID = [
    ("queue-operation", None, None),
    ("user", "11111111-aaaa-4bbb-8ccc-000000000001", "Our team standup is at 9:30 every weekday."),
    ("assistant", "11111111-aaaa-4bbb-8ccc-000000000002", "Noted."),
    ("user", "11111111-aaaa-4bbb-8ccc-000000000003", "We decided to deploy the billing service with Argo CD."),
    ("assistant", "11111111-aaaa-4bbb-8ccc-000000000004", "Got it."),
]
SAID_IN_FORK = [
    ("user", "22222222-aaaa-4bbb-8ccc-000000000001", "My manager is Priya Raman."),
    ("assistant", "22222222-aaaa-4bbb-8ccc-000000000002", "Noted."),
]


def claude_lines(session: str, said: Sequence[tuple[str, str | None, str | None]], minute: int = 0) -> list[dict]:
    out: list[dict[str, Any]] = []
    parent = None
    for i, (kind, uuid, text) in enumerate(said):
        stamp = f"2026-11-27T10:{minute + i:02d}:00.000Z"
        if uuid is None:
            out.append({"type": kind, "operation": "enqueue", "timestamp": stamp, "sessionId": session})
            continue
        content: Any = text if kind == "user" else [{"type": "text", "text": text}]
        out.append(
            {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/tmp/proj",
             "sessionId": session, "version": "2.1.197", "type": kind, "uuid": uuid, "timestamp": stamp,
             "message": {"role": kind, "content": content}}
        )  # fmt: skip
        parent = uuid
    return out


def forked(parent_lines: list[dict], session: str) -> list[dict]:
    """Claude Code's fork: the parent's lines with the new session id, uuids and timestamps kept."""
    return [{**line, "sessionId": session} for line in parent_lines]


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def run_hook(event: str, payload: dict, memory_dir: Path) -> None:
    env = hook_env(REMNIC_PYTHON=sys.executable, REMNIC_MEMORY_DIR=str(memory_dir))
    script = hooks_source_dir() / "claude-code" / f"{event}.sh"
    proc = subprocess.run(
        [str(script)], input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def end_session(memory_dir: Path, session: str, path: Path, *, scripts: bool = True) -> None:
    """A session's Stop and SessionEnd hooks, fired by their scripts (or, ``scripts=False``, run in this process)."""
    payload = {"session_id": session, "transcript_path": str(path), "cwd": "/tmp/proj"}
    stop, end = {**payload, "hook_event_name": "Stop"}, {**payload, "hook_event_name": "SessionEnd", "reason": "other"}
    if not scripts:
        assert run_agent_hook("claude-code", "stop", stop, memory_dir).code == 0
        assert run_agent_hook("claude-code", "session-end", end, memory_dir).code == 0
        return
    run_hook("stop", stop, memory_dir)
    run_hook("session-end", end, memory_dir)


def archived(root: Path, session_key: str) -> list[dict]:
    return [
        json.loads(line)
        for f in (root / "state" / "transcripts").rglob("*.jsonl")
        for line in f.read_text().splitlines()
        if json.loads(line)["sessionKey"] == session_key
    ]


def by_content(memory: Memory) -> dict[str, dict]:
    return {r.content: r.frontmatter for r in memory.list(status=None)}


def test_a_forked_session_observes_only_its_new_turns_through_the_hooks(memory: Memory, tmp_path: Path) -> None:
    parent = claude_lines(PARENT, SAID)
    end_session(memory.root, PARENT, write(tmp_path / f"{PARENT}.jsonl", parent), scripts=False)  # the setup
    before = by_content(memory)
    assert set(before) == {
        "Our team standup is at 9:30 every weekday.",
        "We decided to deploy the billing service with Argo CD.",
    }
    fork = forked(parent, FORK) + claude_lines(FORK, SAID_IN_FORK, minute=30)
    end_session(memory.root, FORK, write(tmp_path / f"{FORK}.jsonl", fork))

    after = by_content(memory)
    assert set(after) == {*before, "The user's manager is Priya Raman."}
    for content, fm in before.items():  # the copies said nothing again
        assert after[content] == fm and "reinforcement_count" not in after[content]
    new = after["The user's manager is Priya Raman."]
    assert new["sessionKey"] == f"claude-code:{FORK}" and new["sourceTurnIds"] == [SAID_IN_FORK[0][1]]
    # The fork's archive holds its own turns only: `lcm search` finds each of the parent's once.
    assert [a["turnId"] for a in archived(memory.root, f"claude-code:{FORK}")] == [u for _, u, _ in SAID_IN_FORK]
    assert len(archived(memory.root, f"claude-code:{PARENT}")) == 4
    hits = memory.lcm_search("standup 9:30")
    assert [h["sessionKey"] for h in hits] == [f"claude-code:{PARENT}"]
    subject = subprocess.run(
        ["git", "log", "-1", "--format=%s", "--grep=Remnic-Flush-Id"], cwd=memory.root, capture_output=True,
        text=True, check=True,
    ).stdout  # fmt: skip
    assert f"claude-code:{FORK[:28]}" in subject and "(1 new, 0 reinforced, 0 superseded)" in subject


def test_a_copied_turn_never_reinforces_the_memory_it_made(memory: Memory) -> None:
    """Without the archive's look-up (a transcript's text observed under the fork's key): the copies are
    archived again, but the memories they made are the same utterance, not reinforced."""
    parent = claude_lines(PARENT, SAID)
    text = "".join(json.dumps(x) + "\n" for x in parent)
    first = memory.observe_transcript(f"claude-code:{PARENT}", text, fmt="claude-code", flush=True)
    assert len(first.flushes[0].created) == 2
    said_again = [("user", "33333333-aaaa-4bbb-8ccc-000000000001", "Our team standup is at 9:30 every weekday.")]
    fork = forked(parent, FORK) + claude_lines(FORK, SAID_IN_FORK + said_again, minute=30)
    text = "".join(json.dumps(x) + "\n" for x in fork)
    flush = memory.observe_transcript(f"claude-code:{FORK}", text, fmt="claude-code", flush=True).flushes[0]
    assert len(flush.created) == 1  # the manager
    standup = by_content(memory)["Our team standup is at 9:30 every weekday."]
    # Only the fork's own new saying of it reinforces it, once; the copied turn adds nothing.
    assert flush.reinforced == (first.flushes[0].created[0],)
    assert standup["reinforcement_count"] == 1
    assert standup["sourceTurnIds"] == [SAID[1][1], said_again[0][1]]
    decision = by_content(memory)["We decided to deploy the billing service with Argo CD."]
    assert "reinforcement_count" not in decision and decision["sourceTurnIds"] == [SAID[3][1]]


def test_the_hook_path_without_the_archive_index_still_reinforces_nothing(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index is a cache: when it cannot answer, the fork's copies are observed, and still reinforce nothing."""
    parent = claude_lines(PARENT, SAID)
    observe_transcript_file(
        memory, f"claude-code:{PARENT}", str(write(tmp_path / "a.jsonl", parent)), event="session-end"
    )

    def broken(*args: Any, **kwargs: Any) -> set[str]:
        raise OSError("index unreadable")

    monkeypatch.setattr(LcmIndex, "turn_ids_elsewhere", broken)
    fork = forked(parent, FORK) + claude_lines(FORK, SAID_IN_FORK, minute=30)
    result, _ = observe_transcript_file(
        memory, f"claude-code:{FORK}", str(write(tmp_path / "b.jsonl", fork)), event="session-end"
    )
    assert result.buffered == 6  # nothing known to skip them by
    (flush,) = result.flushes
    assert len(flush.created) == 1 and flush.reinforced == ()
    assert all("reinforcement_count" not in fm for fm in by_content(memory).values())


def test_the_same_ids_under_another_host_or_namespace_are_not_skipped(memory: Memory, tmp_path: Path) -> None:
    """Only the same host's sessions in the same namespace count: ids of another host name other turns."""
    parent = claude_lines(PARENT, SAID)
    observe_transcript_file(memory, f"other-host:{PARENT}", str(write(tmp_path / "a.jsonl", parent)))
    result, _ = observe_transcript_file(memory, f"claude-code:{FORK}", str(write(tmp_path / "b.jsonl", parent)))
    assert result.buffered == 4 and result.duplicates == 0
    elsewhere = LcmIndex(memory.root).turn_ids_elsewhere(
        [str(SAID[1][1]), "no-such-id"], namespace="default", session_prefix="claude-code:", session_key="claude-code:x"
    )
    assert elsewhere == {SAID[1][1]}
    other_ns = LcmIndex(memory.root).turn_ids_elsewhere(
        [str(SAID[1][1])], namespace="work", session_prefix="claude-code:", session_key="claude-code:x"
    )
    assert other_ns == set()


@pytest.mark.skipif(CLIS is None, reason="set REMNIC_HOST_CLIS to a folder holding the claude and codex CLIs")
def test_a_real_claude_code_fork_observes_only_its_new_turns(
    memory: Memory,
    isolated_home: Path,
    tmp_path: Path,
    model_api: tuple[int, Path],  # noqa: F811 - the fixture imported above
) -> None:
    port, _ = model_api
    assert CLIS is not None
    assert run_cli("connectors", "install", "claude-code", "--memory-dir", str(memory.root)).code == 0
    folder = tmp_path / "proj"
    folder.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(isolated_home),
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }

    def claude(*args: str) -> None:
        proc = subprocess.run(
            [str(CLIS / "claude"), "-p", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=180
        )
        assert proc.returncode == 0, proc.stderr[-2000:]

    claude("Our team standup is at 9:30 every weekday.")
    (parent,) = (isolated_home / ".claude" / "projects").glob("*/*.jsonl")
    claude("-r", parent.stem, "--fork-session", "My manager is Priya Raman.")
    assert len(list(parent.parent.glob("*.jsonl"))) == 2  # the fork is a file of its own, the parent's lines copied
    memories = by_content(memory)
    standup = memories["Our team standup is at 9:30 every weekday."]
    assert standup["sessionKey"] == f"claude-code:{parent.stem}" and "reinforcement_count" not in standup
    manager = memories["The user's manager is Priya Raman."]
    assert manager["sessionKey"] not in (f"claude-code:{parent.stem}", None)
    assert [h["sessionKey"] for h in memory.lcm_search("standup 9:30 every weekday")] == [f"claude-code:{parent.stem}"]
