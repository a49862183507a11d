"""The durable state folder and the searchable transcript archive (LCM).

Real git repositories, the real tantivy index, the CLI in-process and as a subprocess.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, run_cli
from test_server_agents import tool as _tool
from test_server_http import Env, make_env
from test_server_mcp import text

from remnic.config import settings_for
from remnic.errors import NotFoundError
from remnic.service.memory import Memory

CHAT = [
    {"role": "user", "content": "Let's rename the billing service to ledger-api before the March freeze."},
    {"role": "assistant", "content": "Agreed. I will update the deploy manifests and the alerts."},
]


@pytest.fixture
def server_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    """A real HTTP + MCP server on 127.0.0.1 over a fresh repository."""
    yield from make_env(tmp_path, monkeypatch)


def test_observed_turns_are_numbered_per_session_and_searchable(memory: Memory) -> None:
    first = memory.observe("s1", CHAT)
    second = memory.observe("s1", [{"role": "user", "content": "Also the quick brown fox needs a home."}])
    other = memory.observe("s2", [{"role": "user", "content": "Nothing about billing here, only tea."}])
    assert first.archive_path == "state/transcripts/default/s1.jsonl"
    assert (first.first_turn_index, second.first_turn_index, other.first_turn_index) == (0, 2, 0)

    hits = memory.lcm_search("rename the billing service to ledger-api")
    assert hits[0]["sessionId"] == "s1" and hits[0]["turnIndex"] == 0 and hits[0]["role"] == "user"
    assert "ledger-api" in hits[0]["content"]
    assert [h["turnIndex"] for h in memory.lcm_search("quick brown fox")] == [2]
    assert {h["sessionKey"] for h in memory.lcm_search("billing", session_key="s2")} == {"s2"}
    assert memory.lcm_search("billing", session_prefix="s1")[0]["sessionKey"] == "s1"
    assert memory.lcm_search("billing", session_prefix="zz") == []
    assert memory.lcm_search("billing", namespaces=["other"]) == []
    status = memory.lcm_status()
    assert status["enabled"] and status["archiveAvailable"]
    assert status["stats"] == {"totalTurns": 4, "sessions": 2}


def test_a_long_turn_comes_back_as_an_excerpt_around_the_match(memory: Memory) -> None:
    long = "filler words " * 300 + "the secret handshake is three knocks " + "more filler " * 300
    memory.observe("s", [{"role": "user", "content": long}])
    hit = memory.lcm_search("secret handshake")[0]
    assert "secret handshake is three knocks" in hit["content"]
    assert len(hit["content"]) <= memory.settings.state.lcm_excerpt_chars + 2
    assert hit["content"].startswith("…") and hit["content"].endswith("…")


def test_deleting_the_cache_and_reindexing_loses_no_turn_and_no_audit_entry(memory: Memory) -> None:
    root = memory.root
    memory.store("We cut releases every Tuesday", category="decision")
    memory.observe("claude-code:abc", CHAT)
    audit_id = memory.recall("when do we release").audit_id
    assert audit_id and (root / "state" / "audit").is_dir()
    memory.close()

    shutil.rmtree(root / ".remnic")
    assert run_cli("reindex", "--memory-dir", str(root)).code == 0
    found = run_cli("lcm", "search", "rename the billing service", "--memory-dir", str(root), "--json")
    assert found.code == 0, found.err
    assert found.json()["results"][0]["sessionKey"] == "claude-code:abc"
    shown = run_cli("audit", "show", audit_id, "--memory-dir", str(root), "--json")
    assert shown.code == 0 and audit_id in shown.out
    assert run_cli("lcm", "status", "--memory-dir", str(root), "--json").json()["stats"]["totalTurns"] == 2


def test_the_archive_and_audit_ledger_move_out_of_the_cache_on_open(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    old = root / ".remnic" / "observe" / "default"
    for day, turns in (("2026-01-02", ["second day"]), ("2026-01-01", ["first", "day one again"])):
        (old / day).mkdir(parents=True)
        lines = [
            json.dumps(
                {
                    "ts": f"{day}T10:00:00.000Z",
                    "sessionKey": "s",
                    "namespace": "default",
                    "turnIndex": i,
                    "role": "user",
                    "content": text,
                    "source": "api",
                }
            )
            for i, text in enumerate(turns)
        ]
        (old / day / "s.jsonl").write_text("\n".join(lines) + "\n")
    audit = root / ".remnic" / "audit"
    audit.mkdir(parents=True)
    (audit / "recall-20260101.jsonl").write_text('{"id": "audit-20260101-aaaaaaaaaaaa", "query": "q"}\n')
    (root / ".remnic" / "agent-hooks.json").write_text('{"claude-code:x": 3}\n')

    memory = Memory.open(root, settings=settings_for(root))
    try:
        assert not (root / ".remnic" / "observe").exists() and not audit.exists()
        archived = [json.loads(x) for x in (root / "state/transcripts/default/s.jsonl").read_text().splitlines()]
        assert [(t["content"], t["turnIndex"], t["ts"][:10]) for t in archived] == [
            ("first", 0, "2026-01-01"),
            ("day one again", 1, "2026-01-01"),
            ("second day", 2, "2026-01-02"),
        ]
        assert memory.audit_show("audit-20260101-aaaaaaaaaaaa")["query"] == "q"
        assert json.loads((root / "state" / "agent-hooks.json").read_text()) == {"claude-code:x": 3}
        assert memory.lcm_search("second day")[0]["turnIndex"] == 2
    finally:
        memory.close()


def test_state_is_ignored_by_default_and_committed_with_state_commit(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    memory.observe("s", CHAT)
    assert git(root, "status", "--porcelain") == ""  # nothing of state/ shows up
    assert "state/" in (root / ".gitignore").read_text()
    assert memory.lcm_flush("s")["flushed"] is True and "stateCommit" not in memory.lcm_flush("s")
    memory.close()

    committed = Memory.open(root, settings=settings_for(root, state={"commit": True}))
    try:
        flushed = committed.lcm_flush("s")
        assert flushed["archivedTurns"] == 2 and flushed["stateCommit"]
        tracked = git(root, "ls-files", "state").split()
        assert "state/transcripts/default/s.jsonl" in tracked
        assert "Remnic-Operation: state" in git(root, "log", "-1", "--format=%B")
        assert committed.lcm_flush("s").get("stateCommit") is None  # nothing changed since
        committed.observe("s", [{"role": "user", "content": "one more"}])
        committed.lcm_record("s", 9000, 1200)
        assert committed.lcm_flush("s")["stateCommit"]
        shown = git(root, "show", "--stat", "--format=", "HEAD")
        assert "state/transcripts/default/s.jsonl" in shown and "state/lcm-compactions.jsonl" in shown
    finally:
        committed.close()


def test_compaction_record_appends_to_the_ledger(memory: Memory) -> None:
    memory.observe("s", CHAT)
    out = memory.lcm_record("s", 12000, 3000)
    assert out == {"enabled": True, "recorded": True, "sessionKey": "s", "namespace": "default", "turnsArchived": 2}
    event = json.loads((memory.root / "state" / "lcm-compactions.jsonl").read_text())
    assert (event["tokensBefore"], event["tokensAfter"], event["turnsArchived"]) == (12000, 3000, 2)


def test_lcm_cli_search_and_status(memory: Memory) -> None:
    memory.observe("s1", CHAT)
    root = str(memory.root)
    out = run_cli("lcm", "search", "deploy manifests", "--memory-dir", root)
    assert out.code == 0 and "s1 #1 assistant" in out.out
    assert "2 turns in 1 session" in run_cli("lcm", "status", "--memory-dir", root).out
    bad = run_cli("lcm", "search", "x", "--limit", "101", "--memory-dir", root)
    assert bad.code == 2 and "limit" in bad.err
    flushed = run_cli("lcm", "flush", "s1", "--memory-dir", root).out
    assert flushed.startswith("2 turns of s1 archived") and "is the key right" not in flushed


def test_flushing_a_session_with_no_archived_turn_is_not_found(memory: Memory) -> None:
    memory.observe("s1", CHAT)
    root = str(memory.root)
    with pytest.raises(NotFoundError, match="no session 'nosuch' in namespace 'default'"):
        memory.lcm_flush("nosuch")
    with pytest.raises(NotFoundError, match="no session 's1' in namespace 'other'"):
        memory.lcm_flush("s1", "other")
    missing = run_cli("lcm", "flush", "nosuch", "--memory-dir", root)
    assert missing.code == 1 and missing.out == ""
    assert "no session 'nosuch' in namespace 'default'" in missing.err
    as_json = run_cli("lcm", "flush", "nosuch", "--json", "--memory-dir", root)
    assert as_json.code == 1 and as_json.out == ""
    assert run_cli("lcm", "flush", "s1", "--memory-dir", root).code == 0


def test_flushing_an_unknown_session_is_a_404_over_http_and_an_error_over_mcp(server_env: Env) -> None:
    env = server_env
    assert env.call("POST", "/engram/v1/observe", {"sessionKey": "s1", "messages": CHAT}).status == 202
    r = env.call("POST", "/remnic/v1/lcm/compaction/flush", {"sessionKey": "nosuch"})
    assert r.status == 404 and r.json()["code"] == "not_found", r.raw
    assert "no session 'nosuch'" in r.json()["error"]
    result = _tool(env, "remnic_lcm_compaction_flush", {"sessionKey": "nosuch"})
    assert result.is_error and "not_found" in text(result) and "no session 'nosuch'" in text(result)
    assert env.call("POST", "/remnic/v1/lcm/compaction/flush", {"sessionKey": "s1"}).status == 200


def test_a_speaker_sent_over_http_comes_back_from_lcm_search_over_http_and_mcp(server_env: Env) -> None:
    env = server_env
    said = [{"role": "user", "content": "The quarterly review moved to Thursday.", "speaker": "Priya"}]
    assert env.call("POST", "/engram/v1/observe", {"sessionKey": "s", "messages": said}).status == 202
    body = env.call("POST", "/engram/v1/lcm/search", {"query": "Priya"}).json()
    assert [(h["speaker"], h["content"]) for h in body["results"]] == [("Priya", said[0]["content"])]
    result = _tool(env, "remnic_lcm_search", {"query": "Priya"})
    assert not result.is_error and result.structured_content["results"][0]["speaker"] == "Priya"


def test_a_plain_transcripts_speakers_are_archived_and_searchable(memory: Memory, tmp_path: Path) -> None:
    chat = tmp_path / "chat.txt"
    chat.write_text("[2023-05-08T13:56:00Z] Alice: I prefer tabs over spaces.\nBob: We decided to ship on Fridays.\n")
    root = str(memory.root)
    observed = run_cli("observe", str(chat), "--session-key", "s1", "--flush", "--memory-dir", root)
    assert observed.code == 0, observed.err
    lines = [json.loads(x) for x in (memory.root / "state/transcripts/default/s1.jsonl").read_text().splitlines()]
    assert [(t["speaker"], t["turnId"], t["content"]) for t in lines] == [
        ("Alice", "L1", "I prefer tabs over spaces."),
        ("Bob", "L2", "We decided to ship on Fridays."),
    ]
    assert lines[0]["timestamp"] == "2023-05-08T13:56:00Z" and "timestamp" not in lines[1]

    found = run_cli("lcm", "search", "Alice", "--memory-dir", root, "--json")
    assert found.code == 0, found.err
    hits = found.json()["results"]
    assert [(h["speaker"], h["turnIndex"], h["turnId"]) for h in hits] == [("Alice", 0, "L1")]
    assert hits[0]["timestamp"] == "2023-05-08T13:56:00Z"
    shown = run_cli("lcm", "search", "Bob", "--memory-dir", root)
    assert shown.code == 0 and "s1 #1 user (Bob)" in shown.out and "ship on Fridays" in shown.out
    # the name and words of what was said: both match the one turn, which ranks first
    assert [h["speaker"] for h in memory.lcm_search("Bob spaces Fridays")][:1] == ["Bob"]


def test_messages_keep_their_speaker_and_interim_flag_in_the_archive(memory: Memory) -> None:
    messages = [
        {"role": "user", "content": "The staging database moved to port 5433.", "speaker": "Ana", "turnId": "u1"},
        {"role": "assistant", "content": "Noted, updating the config.", "timestamp": "2026-01-02T10:00:00Z"},
    ]
    memory.observe("s", messages)
    archived = [json.loads(x) for x in (memory.root / "state/transcripts/default/s.jsonl").read_text().splitlines()]
    assert archived[0]["speaker"] == "Ana" and archived[0]["turnId"] == "u1"
    assert "speaker" not in archived[1] and archived[1]["timestamp"] == "2026-01-02T10:00:00Z"
    assert memory.lcm_search("Ana")[0]["speaker"] == "Ana"


def test_archive_lines_from_before_speakers_and_an_old_index_still_read(memory: Memory) -> None:
    old = memory.root / "state" / "transcripts" / "default" / "old.jsonl"
    old.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"ts": "2025-01-01T00:00:00.000Z", "sessionKey": "old", "namespace": "default", "turnIndex": 0,
         "role": "user", "content": "The kettle descaler lives under the sink.", "source": "api"},
        {"ts": "2025-01-01T00:00:01.000Z", "sessionKey": "old", "namespace": "default", "turnIndex": 1,
         "role": "user", "content": "Carol says the vacuum bags are in the hall.", "source": "api", "name": "Carol"},
    ]  # fmt: skip
    old.write_text("".join(json.dumps(x) + "\n" for x in lines))
    hit = memory.lcm_search("kettle descaler")[0]
    assert hit["sessionKey"] == "old" and hit["turnIndex"] == 0
    assert not {"speaker", "turnId", "timestamp"} & set(hit)
    assert memory.lcm_search("Carol")[0]["speaker"] == "Carol"  # an OpenAI message's name is its speaker
    # an index built before speakers were indexed (manifest version 1) is rebuilt, not trusted
    manifest = memory.root / ".remnic" / "lcm" / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "version": 1}))
    status = memory.lcm_status()
    assert status["index"]["rebuilt"] is True and status["stats"]["totalTurns"] == 2
    memory.observe("new", [{"role": "user", "content": "Dan fixed the kettle.", "speaker": "Dan"}])
    assert {h["sessionKey"] for h in memory.lcm_search("kettle")} == {"old", "new"}
