"""The durable state folder and the searchable transcript archive (LCM).

Real git repositories, the real tantivy index, the CLI in-process and as a subprocess.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import git, run_cli

from remnic.config import settings_for
from remnic.service.memory import Memory

CHAT = [
    {"role": "user", "content": "Let's rename the billing service to ledger-api before the March freeze."},
    {"role": "assistant", "content": "Agreed. I will update the deploy manifests and the alerts."},
]


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
    assert "no session 's2' in namespace 'default'" in run_cli("lcm", "flush", "s2", "--memory-dir", root).out
