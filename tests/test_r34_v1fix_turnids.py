"""Round 34 (v1 finding 1): a caller numbers its turns per conversation (``turnId`` 1, 2, … or "turn-1"), so
turn 1 of a new conversation saying a fact again reinforces it, and saying an earlier value again revives it.
Only a host's own ids (a Claude Code ``uuid``, a Codex ``payload.id``) name one turn across sessions: those
still make a forked session's copied turns no reconfirmation (tests/test_r34_observe_fork.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_server_http import Env, make_env

from remnic.observe.records import Turn
from remnic.observe.transcripts import parse_transcript, turns_from_messages
from remnic.service.memory import Memory

VIM = "My favourite editor is Vim."
EMACS = "My favourite editor is Emacs now."


def statuses(memory: Memory) -> dict[str, str]:
    # The memories themselves; the entity pages a server writes after a flush are not what is asked.
    return {r.content: r.status for r in memory.list(status=None) if r.category != "entity"}


def said(memory: Memory, session: str, text: str, turn_id: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": text, "turnId": turn_id}, {"role": "assistant", "content": "Got it."}]
    (flush,) = memory.observe(session, messages, flush=True).flushes
    return {"created": len(flush.created), "reinforced": len(flush.reinforced), "superseded": len(flush.superseded)}


@pytest.mark.parametrize("turn_id", [1, "1", "turn-1"], ids=["int-1", "str-1", "turn-1"])
def test_going_back_to_an_earlier_value_in_a_new_conversation_revives_it(memory: Memory, turn_id: Any) -> None:
    assert said(memory, "chat-0501", VIM, turn_id) == {"created": 1, "reinforced": 0, "superseded": 0}
    assert said(memory, "chat-0508", EMACS, turn_id) == {"created": 1, "reinforced": 0, "superseded": 1}
    assert said(memory, "chat-0515", VIM, turn_id) == {"created": 0, "reinforced": 1, "superseded": 1}
    assert statuses(memory) == {
        "The user's favourite editor is Vim.": "active",
        "The user's favourite editor is Emacs now.": "superseded",
    }
    vim = next(r for r in memory.list() if "Vim" in r.content)
    assert vim.frontmatter["reinforcement_count"] == 1


def test_a_fact_restated_in_a_new_conversation_under_the_same_turn_id_is_reinforced(memory: Memory) -> None:
    assert said(memory, "chat-a", "We deploy on Thursdays.", 1)["created"] == 1
    assert said(memory, "chat-b", "We deploy on Thursdays.", 1) == {"created": 0, "reinforced": 1, "superseded": 0}
    (record,) = memory.list()
    assert record.frontmatter["reinforcement_count"] == 1
    assert sorted(record.frontmatter["sessionKeys"]) == ["chat-a", "chat-b"]


def test_the_same_session_sending_its_turn_again_is_a_retry_not_a_reinforcement(memory: Memory) -> None:
    said(memory, "chat-a", "We deploy on Thursdays.", 1)
    again = memory.observe("chat-a", [{"role": "user", "content": "We deploy on Thursdays.", "turnId": 1}], flush=True)
    assert again.duplicates == 1 and again.flushes == ()
    (record,) = memory.list()
    assert "reinforcement_count" not in record.frontmatter


def test_only_host_transcript_ids_are_marked_as_naming_a_turn_beyond_its_session() -> None:
    claude = json.dumps(
        {"type": "user", "uuid": "11111111-aaaa-4bbb-8ccc-000000000001", "sessionId": "s",
         "timestamp": "2026-11-27T10:00:00Z", "message": {"role": "user", "content": VIM}}
    )  # fmt: skip
    codex = json.dumps(
        {"type": "response_item", "timestamp": "2026-11-27T10:00:00Z",
         "payload": {"type": "message", "role": "user", "id": "msg_1", "content": [{"type": "input_text", "text": VIM}]}}
    )  # fmt: skip
    openai = json.dumps(
        [{"role": "user", "turnId": 1, "content": VIM}, {"role": "user", "id": "turn-2", "content": VIM}]
    )
    anthropic = json.dumps({"messages": [{"role": "user", "id": "1", "content": VIM}]})
    assert [t.host_id for t in parse_transcript(claude + "\n", "claude-code").turns] == [True]
    assert [t.host_id for t in parse_transcript(codex + "\n", "codex").turns] == [True]
    assert [t.host_id for t in parse_transcript(openai, "openai").turns] == [False, False]
    assert [t.host_id for t in parse_transcript(anthropic, "anthropic").turns] == [False]
    assert [t.host_id for t in turns_from_messages([{"role": "user", "content": VIM, "turnId": 7}])] == [False]
    # The session buffer keeps the mark (its journal), the public shape of a turn does not show it.
    turn = parse_transcript(claude + "\n", "claude-code").turns[0]
    assert "hostId" not in turn.to_dict() and Turn.from_dict(turn.to_dict(journal=True)) == turn


def test_the_cli_with_openai_transcripts_numbered_per_conversation_revives_the_earlier_value(
    memory: Memory, tmp_path: Path
) -> None:
    """The tester's repro: `remnic observe t.json --format openai` in three conversations, each turnId "1"."""
    for day, text in (("day1", VIM), ("day2", EMACS), ("day3", VIM)):
        path = tmp_path / f"{day}.json"
        path.write_text(json.dumps([{"role": "user", "turnId": "1", "content": text}]))
        result = run_cli(
            "observe", str(path), "--session-key", day, "--format", "openai", "--flush", "--json", "-q",
            "--memory-dir", str(memory.root),
        )  # fmt: skip
        assert result.code == 0, result.err
        flush = result.json()["flushes"][0]
    assert (flush["created"], flush["reinforced"], flush["superseded"]) == (0, 1, 1)  # the CLI gives counts
    assert statuses(memory) == {
        "The user's favourite editor is Vim.": "active",
        "The user's favourite editor is Emacs now.": "superseded",
    }


@pytest.fixture
def plain_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def test_post_observe_with_integer_turn_ids_per_conversation_revives_the_earlier_value(plain_env: Env) -> None:
    def post(session: str, text: str) -> dict[str, Any]:
        body = {
            "sessionKey": session,
            "flush": True,
            "messages": [{"role": "user", "turnId": 1, "content": text}, {"role": "assistant", "turnId": 2, "content": "Got it."}],
        }  # fmt: skip
        reply = plain_env.call("POST", "/engram/v1/observe", body)
        assert reply.status == 202, reply.raw
        flush = reply.json()["flushes"][0]
        return {k: flush[k] for k in ("created", "reinforced", "superseded")}

    post("chat-0501", VIM)
    post("chat-0508", EMACS)
    assert post("chat-0515", VIM) == {"created": 0, "reinforced": 1, "superseded": 1}
    assert statuses(plain_env.memory) == {
        "The user's favourite editor is Vim.": "active",
        "The user's favourite editor is Emacs now.": "superseded",
    }
