"""The observation pipeline persisted: real repos, the real model, the real index, real processes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, run_remnic, snapshot_tree
from test_server_http import Env, make_env
from test_server_mcp import http_client, run, text

from remnic.config import settings_for
from remnic.errors import ValidationError
from remnic.observe.ledger import VERDICT_LEDGER, verdict_stats
from remnic.service import Memory

CHAT = """\
[2026-05-02T09:00:00Z] Ana: Hi team, good morning!
[2026-05-02T09:01:00Z] Ana: We decided to cut releases every Tuesday from now on.
[2026-05-02T09:02:00Z] Ben: I prefer tabs over spaces in the Python code.
[2026-05-02T09:03:00Z] Ana: The staging DB port is 5432.
[2026-05-02T09:04:00Z] Ben: What time is it?
"""
CORRECTION = """\
[2026-05-09T09:00:00Z] Ana: Update: the staging DB port is now 5433.
"""
MESSAGES = [
    {"role": "user", "speaker": "Ana", "content": "We decided to cut releases every Tuesday from now on.",
     "turnId": "t1", "timestamp": "2026-05-02T09:01:00Z"},
    {"role": "assistant", "content": [{"type": "text", "text": "Noted. I'll run the tests now."}],
     "turnId": "t2", "timestamp": "2026-05-02T09:01:30Z"},
    {"role": "user", "speaker": "Ana", "content": "The staging DB port is 5432.", "turnId": "t3",
     "timestamp": "2026-05-02T09:03:00Z"},
]  # fmt: skip


def active_contents(memory: Memory) -> list[str]:
    return sorted(r.content for r in memory.list(status="active"))


def test_a_flush_writes_standalone_facts_with_provenance_in_one_commit(memory: Memory) -> None:
    before = int(git(memory.root, "rev-list", "--count", "HEAD"))
    result = memory.observe_transcript("standup", CHAT, fmt="plain", flush=True)
    assert [f.reason for f in result.flushes] == ["explicit"]
    assert int(git(memory.root, "rev-list", "--count", "HEAD")) == before + 1
    message = git(memory.root, "log", "-1", "--format=%B")
    assert f"Remnic-Flush-Id: {result.flushes[0].flush_id}" in message and "Remnic-Created: 3" in message
    assert active_contents(memory) == [
        "Ben prefers tabs over spaces in the Python code.",
        "The staging DB port is 5432.",
        "We decided to cut releases every Tuesday from now on.",
    ]  # greetings and questions dropped; "I" became the speaker's name
    decision = next(r for r in memory.list(category="decision"))
    fm = decision.frontmatter
    assert fm["source"] == "extraction" and fm["sessionKey"] == "standup"
    assert fm["sourceTurnIds"] == ["L2"] and fm["observedAt"] == "2026-05-02T09:01:00.000Z"
    obs = next(o for o in result.observations if o.fact.category == "decision")
    assert obs.resulting_primitive_id == decision.id and obs.judge_accepted


def test_observing_the_same_transcript_again_adds_nothing_and_reinforces(memory: Memory) -> None:
    memory.observe_transcript("s1", CHAT, fmt="plain", flush=True)
    files_before = snapshot_tree(memory.root)
    again = memory.observe_transcript("s1", CHAT, fmt="plain", flush=True)  # same session: same turns
    assert again.buffered == 0 and not again.flushes and snapshot_tree(memory.root) == files_before
    other = memory.observe_transcript("s2", CHAT, fmt="plain", flush=True)  # another session says it again
    flush = other.flushes[0]
    assert flush.created == () and len(flush.reinforced) == 3
    assert len(memory.list(status="active")) == 3
    assert all(r.frontmatter["reinforcement_count"] == 1 for r in memory.list(status="active"))
    assert all("last_reinforced_at" in r.frontmatter for r in memory.list(status="active"))


def test_a_correction_supersedes_and_recall_returns_only_the_new_fact(memory: Memory) -> None:
    memory.observe_transcript("s1", CHAT, fmt="plain", flush=True)
    result = memory.observe_transcript("s2", CORRECTION, fmt="plain", flush=True)
    assert len(result.flushes[0].superseded) == 1
    old = memory.get(result.flushes[0].superseded[0])
    new = memory.get(result.flushes[0].created[0])
    assert old.status == "superseded" and old.frontmatter["supersededBy"] == new.id
    assert old.frontmatter["invalidAt"] == "2026-05-09T09:00:00.000Z" and new.frontmatter["supersedes"] == old.id
    hits = memory.recall("staging DB port")
    assert [h.id for h in hits if "staging" in h.content] == [new.id]
    stages = {s.name: s for s in hits.stages}
    assert any(s.rejected for name, s in stages.items() if "status" in name)  # the ladder counts it
    wider = memory.recall("staging DB port", statuses=["active", "superseded"])
    assert {new.id, old.id} <= {h.id for h in wider}


@pytest.mark.parametrize("stamp", ["", "[2026-05-02T09:00:00Z] "])
def test_a_correction_in_the_same_flush_supersedes_the_value_said_before_it(memory: Memory, stamp: str) -> None:
    # One flush's facts share their `created` (and here their turns' time, or none): the order they
    # were said in decides which one is current.
    said = f"{stamp}Ana: The staging DB port is 5432.\n{stamp}Ben: Actually, the staging DB port is 5433 now.\n"
    flush = memory.observe_transcript("s1", said, fmt="plain", flush=True).flushes[0]
    assert (len(flush.created), len(flush.superseded)) == (2, 1)
    old = memory.get(flush.superseded[0])
    assert old.content == "The staging DB port is 5432." and old.frontmatter["supersededBy"] == flush.created[1]
    assert active_contents(memory) == ["The staging DB port is 5433 now."]


def test_a_value_said_before_the_current_one_is_history_from_the_start(memory: Memory) -> None:
    # An older transcript observed late (or one observed again under another key) must not bring
    # back a replaced value as a second active one.
    memory.observe_transcript(
        "late", "[2026-05-10T10:00:00Z] Ana: The staging DB port is 5433.\n", fmt="plain", flush=True
    )
    early = "[2026-05-01T10:00:00Z] Ana: The staging DB port is 5432.\n"
    flush = memory.observe_transcript("early", early, fmt="plain", flush=True).flushes[0]
    assert len(flush.created) == 1 and flush.superseded == flush.created
    old = memory.get(flush.created[0])
    assert old.status == "superseded" and old.frontmatter["invalidAt"].startswith("2026-05-10T10:00:00")
    assert active_contents(memory) == ["The staging DB port is 5433."]
    message = git(memory.root, "log", "-1", "--format=%B")
    assert message.count("Remnic-Memory-Id:") == 1 and "Remnic-Superseded: 1" in message  # named once
    said_again = memory.observe_transcript("again", CHAT.splitlines()[3] + "\n", fmt="plain", flush=True)  # 2 May, 5432
    # Said before the replacement: the superseded memory it was, reinforced, never a copy (docs/observe.md).
    assert active_contents(memory) == ["The staging DB port is 5433."] and not said_again.flushes[0].created
    assert said_again.flushes[0].reinforced == (old.id,) and memory.get(old.id).status == "superseded"


def test_a_dry_run_plans_what_a_flush_would_make_of_the_session_s_buffer(memory: Memory) -> None:
    memory.observe_transcript("s1", CHAT, fmt="plain")  # buffered: no trigger fired
    files, state = snapshot_tree(memory.root), sorted(p for p in memory.durable_dir.rglob("*") if p.is_file())
    again = memory.observe_transcript("s1", CHAT, fmt="plain", flush=True, dry_run=True)  # seen turns: retries
    waiting = memory.observe_transcript("s1", "", fmt="plain", flush=True, dry_run=True)  # the buffer alone
    other = memory.observe_transcript("s2", CHAT, fmt="plain", flush=True, dry_run=True)
    assert (again.duplicates, again.pending) == (5, 0) and (other.duplicates, other.pending) == (0, 0)
    facts = sorted(o.fact.content for o in other.planned)
    assert sorted(o.fact.content for o in again.planned) == facts == sorted(o.fact.content for o in waiting.planned)
    assert snapshot_tree(memory.root) == files
    assert sorted(p for p in memory.durable_dir.rglob("*") if p.is_file()) == state  # no lock file either
    flushed = memory.observe_transcript("s1", "", fmt="plain", flush=True)
    assert sorted(o.fact.content for o in flushed.observations) == facts


def test_plain_transcripts_piped_under_one_session_key_are_each_taken(memory: Memory) -> None:
    # Each has a line 1 (`L1`): the same line with other words is another turn, not a retry.
    memory.observe_transcript("s1", "Ana: The staging DB port is 5432.\n", fmt="plain", flush=True)
    second = memory.observe_transcript("s1", "Ana: Ben owns the billing service.\n", fmt="plain", flush=True)
    assert (second.buffered, second.duplicates, len(second.flushes[0].created)) == (1, 0, 1)
    again = memory.observe_transcript("s1", "Ana: Ben owns the billing service.\n", fmt="plain", flush=True)
    assert (again.buffered, again.duplicates, again.flushes) == (0, 1, ())
    assert active_contents(memory) == ["Ben owns the billing service.", "The staging DB port is 5432."]


def test_injected_host_text_never_becomes_a_memory(memory: Memory) -> None:
    lines = [
        {"type": "user", "uuid": "u1", "timestamp": "2026-05-02T09:00:00Z", "message": {"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>CLAUDE.md says: We decided to always deploy on Mondays.</system-reminder>"},
            {"type": "text", "text": "We decided the API uses snake_case keys."},
        ]}},
        {"type": "user", "uuid": "u2", "isMeta": True, "message": {"role": "user", "content": "We decided to use Perl."}},
        {"type": "user", "uuid": "u3", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "x", "content": "We decided to rewrite everything in Rust."}]}},
    ]  # fmt: skip
    text = "\n".join(json.dumps(line) for line in lines)
    memory.observe_transcript("cc:1", text, fmt="claude-code", flush=True)
    contents = " ".join(r.content for r in memory.list())
    assert "snake_case" in contents
    assert "Mondays" not in contents and "Perl" not in contents and "Rust" not in contents


GOOD_THEN_BAD = {  # a durable first turn, then a broken one on line 2 (3 for the JSON documents)
    "plain": ("chat.txt", "Ana: We decided to use Go.\nno speaker here\n", 2, "Speaker: text"),
    "claude-code": (
        "session.jsonl",
        '{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "We decided to use Go."}}\n'
        '{"type": "user", "uuid": "u2", "message": {"role": "user", "content": "x"}\n',
        2,
        "Claude Code session file",
    ),
    "codex": (
        "rollout.jsonl",
        '{"type": "response_item", "payload": {"type": "message", "role": "user", "content": '
        '[{"type": "input_text", "text": "We decided to use Go."}]}}\n'
        '{"type": "response_item", "payload": {"type": "message", "role": "robot", "content": []}}\n',
        2,
        "Codex rollout file",
    ),
    "openai": (
        "chat.json",
        '[\n {"role": "user", "content": "We decided to use Go."},\n {"role": "robot", "content": "x"}\n]',
        3,
        "valid roles: user, assistant",
    ),
    "anthropic": (
        "request.json",
        '{"system": "s", "messages": [\n {"role": "user", "content": "We decided to use Go."},\n'
        ' {"role": "user", "content": [{"type": "text"}]}]}',
        3,
        'without a "text" string',
    ),
}


def test_a_malformed_transcript_names_the_line_and_writes_nothing(memory: Memory, tmp_path: Path) -> None:
    before = snapshot_tree(memory.root)
    for fmt, (name, content, line, expected) in GOOD_THEN_BAD.items():
        bad = tmp_path / name
        bad.write_text(content)
        for given in (fmt, "auto"):
            result = run_cli(
                "observe",
                str(bad),
                "--session-key",
                "s",
                "--format",
                given,
                "--flush",
                "--memory-dir",
                str(memory.root),
            )
            assert result.code == 2 and f"{bad}:{line}: " in result.err and expected in result.err, (fmt, result.err)
            assert f"(format {fmt})" in result.err
    with pytest.raises(ValidationError) as exc:
        memory.observe("s", [{"role": "robot", "content": "hi"}])
    assert "role" in exc.value.problems[0].field
    with pytest.raises(ValidationError) as exc:
        memory.observe("s", [{"role": "user", "content": [{"type": "text"}]}], flush=True)
    assert exc.value.problems[0].field == "messages[0].content" and "text" in exc.value.problems[0].message
    assert snapshot_tree(memory.root) == before
    assert not (memory.root / "state" / "observe-buffer").exists()


def test_turns_wait_in_the_buffer_until_a_trigger_flushes_them(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    settings = settings_for(root)
    settings.observe.buffer_max_turns = 4
    memory = Memory.init(root, settings=settings)
    first = memory.observe("s", MESSAGES[:2])
    assert first.pending == 2 and not first.flushes and not memory.list()
    second = memory.observe(
        "s",
        [{"role": "user", "speaker": "Ben", "content": f"Ben owns the billing service number {i}.", "turnId": f"b{i}"}
         for i in range(2)],
    )  # fmt: skip
    assert [f.reason for f in second.flushes] == ["turn-count"] and second.pending == 0
    assert any("cut releases" in r.content for r in memory.list())
    memory.close()


def test_a_session_key_reused_in_a_clone_persists_its_new_turns(memory: Memory, tmp_path: Path) -> None:
    """The buffer's journal is local state: a clone (or a lost state folder) numbers a reused session
    key's turns from 0 again. Its new turns are persisted, not taken for the flush already in git."""
    memory.observe_transcript("daily", CHAT, fmt="plain", flush=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(memory.root), str(clone)], check=True)
    with Memory.open(settings=settings_for(clone)) as other:
        said = CHAT.replace("tabs over spaces in the Python code", "dark roast coffee every morning")
        new = other.observe_transcript("daily", said, fmt="plain", flush=True)  # as many turns: same seq range
        assert [f.replayed for f in new.flushes] == [False]
        assert "Ben prefers dark roast coffee every morning." in active_contents(other)
        again = other.observe_transcript("daily-2", CHAT, fmt="plain", flush=True)  # what the origin said
        assert again.flushes[0].created == () and len(again.flushes[0].reinforced) == 3  # never a copy
        assert len(other.list(status="active")) == 4  # the origin's three and the clone's coffee


def test_two_processes_flushing_one_session_persist_it_once(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two hooks of one session at once: this process has begun the flush when another (a real CLI
    process) takes the same open plan and commits it. Found under the write lock, it is not persisted
    again — no second commit, no reinforcement of what the other just wrote."""
    memory.observe_transcript("s1", CHAT, fmt="plain")  # buffered, not flushed
    real = memory.committer.submit

    def meanwhile(*args: Any, **kwargs: Any) -> Any:  # the other process commits just before we take the lock
        other = run_remnic(
            "observe", "-", "--session-key", "s1", "--flush", "--json", "--memory-dir", str(memory.root), stdin=""
        )
        assert other.code == 0, other.err
        return real(*args, **kwargs)

    monkeypatch.setattr(memory.committer, "submit", meanwhile)
    result = memory.observe_transcript("s1", "", fmt="plain", flush=True)
    assert [f.replayed for f in result.flushes] == [True]
    assert len(git(memory.root, "log", "--format=%H", "--grep=Remnic-Flush-Id").split()) == 1
    assert all(not r.frontmatter.get("reinforcement_count") for r in memory.list(status="active"))
    assert len(memory.list(status="active")) == 3


def test_a_flush_s_primitives_share_one_created_so_their_episode_order_is_their_turns(memory: Memory) -> None:
    """One commit, one `created`: a primitive's neighbours in its episode (the context it is found by)
    follow the turns, not the millisecond each file was written in — which made recall differ run to run."""
    facts = [
        "I prefer green tea.",
        "The staging DB port is 5432.",
        "We decided to ship on Fridays.",
        "I love hiking in the Alps.",
        "My sister lives in Lisbon.",
        "I always review pull requests before lunch.",
    ]
    said = [{"role": "user", "speaker": "Ana", "content": f, "turnId": f"D1:{i}"} for i, f in enumerate(facts, 1)]
    memory.observe("s", said, flush=True)
    primitives = memory.list(status="active")
    assert len(primitives) == len(facts) and len({r.created for r in primitives}) == 1
    turns = sorted(int(r.frontmatter["sourceTurnId"].split(":")[1]) for r in primitives)
    assert turns == list(range(1, len(facts) + 1))


def test_facts_observed_from_an_agent_host_s_uuid_turns_share_their_session_as_episode(memory: Memory) -> None:
    """Claude Code and Codex name turns by uuids, which name no session: the observed facts' episode is
    their session, so each borrows its neighbours' context as LoCoMo's "D3:14" turns do (the pipeline
    track with uuid turn ids: R@10 0.721 without it)."""
    said = [
        ("I prefer green tea in the morning.", "3f2a9c1e-1b2c-4d5e-8f90-123456789abc", "2026-05-02T09:00:00Z"),
        ("My sister lives in Lisbon.", "0b1c2d3e-1b2c-4d5e-8f90-123456789abd", "2026-05-02T09:01:00Z"),
    ]
    memory.observe(
        "claude-code:42",
        [{"role": "user", "speaker": "Ana", "content": c, "turnId": t, "timestamp": at} for c, t, at in said],
        flush=True,
    )
    hits = memory.recall("tea sister Lisbon", top_k=3).hits
    assert len(hits) == 2
    context = {h.signals["contextCosine"] for h in hits}
    assert len(context) == 1 and all(h.signals["contextCosine"] != h.signals["chunkCosine"] for h in hits)


def test_memories_committed_elsewhere_and_not_indexed_yet_are_still_reinforced_and_superseded(tmp_path: Path) -> None:
    """Another process's writes that the index has not taken (a one-shot command leaves the index to the
    next recall; a commit made by hand) are compared directly, as exact duplicates already were."""
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    with Memory.open(root) as elsewhere:
        elsewhere.defer_index()
        elsewhere.observe_transcript("s1", CHAT, fmt="plain", flush=True)
    with Memory.open(root) as memory:
        assert memory.index.manifest().commit != memory.head()  # the index is behind those writes
        near = "[2026-05-03T09:00:00Z] Ben: I prefer tabs over spaces in all of the Python code.\n"
        result = memory.observe_transcript("s2", near + CORRECTION, fmt="plain", flush=True)
        flush = result.flushes[0]
        assert (len(flush.created), len(flush.reinforced), len(flush.superseded)) == (1, 1, 1)
        assert active_contents(memory) == [
            "Ben prefers tabs over spaces in the Python code.",
            "The staging DB port is now 5433.",
            "We decided to cut releases every Tuesday from now on.",
        ]
        old = next(r for r in memory.list(status="superseded"))
        assert old.content == "The staging DB port is 5432." and old.frontmatter["supersededBy"] == flush.created[0]


def test_a_new_flush_looks_for_its_commit_only_in_recent_history(memory: Memory) -> None:
    memory.observe_transcript("s1", CHAT, fmt="plain", flush=True)
    flush_id = git(memory.root, "log", "-1", "--format=%(trailers:key=Remnic-Flush-Id,valueonly)").strip()
    sha = git(memory.root, "rev-parse", "HEAD").strip()
    assert memory.ledger.commit_with_trailer("Flush-Id", flush_id) == sha
    assert memory.ledger.commit_with_trailer("Flush-Id", flush_id, since=time.time() - 3600) == sha
    assert memory.ledger.commit_with_trailer("Flush-Id", flush_id, since=time.time() + 86400) is None


@pytest.mark.parametrize("point", ["flush-begun", "journal-written", "head-moved", "flush-persisted"])
def test_kill_during_a_flush_loses_no_turn_and_never_persists_twice(tmp_path: Path, point: str) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT)
    killed = run_remnic(
        "observe", str(chat), "--session-key", "s1", "--flush", "--memory-dir", str(root),
        env={"REMNIC_CRASH_AT": point},
    )  # fmt: skip
    assert killed.code == -9
    # The next `remnic observe` finds what the killed process left: run here, as the same command line.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        resumed = run_cli("observe", "-", "--session-key", "s1", "--flush", "--json", "--memory-dir", str(root))
    assert resumed.code == 0, resumed.err
    with Memory.open(root) as memory:
        contents = active_contents(memory)
        kept_ids = {r.id for r in memory.list(status="active")}
    assert contents == [
        "Ben prefers tabs over spaces in the Python code.",
        "The staging DB port is 5432.",
        "We decided to cut releases every Tuesday from now on.",
    ]  # every acknowledged turn made it, once
    flush_commits = git(root, "log", "--format=%H", "--grep=Remnic-Flush-Id").split()
    assert len(flush_commits) == 1
    # Every verdict of the flush is in the ledger, counted once, pointing at the primitive it made,
    # wherever the process died (after the commit and before the ledger, too).
    lines = [json.loads(line) for line in (root / VERDICT_LEDGER).read_text().splitlines()]
    verdicts = {line["observationId"]: line for line in lines}
    assert {line["flushId"] for line in lines} == {resumed.json()["flushes"][0]["flushId"]}
    assert verdict_stats(root)["total"] == len(verdicts) == len(resumed.json()["observations"])
    assert {v["resultingPrimitiveId"] for v in verdicts.values() if v["verdictKind"] == "accept"} == kept_ids
    assert any(line.get("recovered") for line in lines) == (point == "head-moved")
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    subprocess.run(["git", "fsck", "--no-progress"], cwd=root, check=True, capture_output=True)


@pytest.fixture
def plain_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


def test_every_surface_gives_the_same_observations(plain_env: Env, tmp_path: Path) -> None:
    """Python, CLI, HTTP and MCP all reach one service call: the same input, the same observations."""
    env = plain_env
    python = [o.to_dict() for o in env.memory.observe("same", MESSAGES, flush=True, dry_run=True).observations]
    assert python and not env.memory.list()
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps(MESSAGES))
    cli = run_cli(
        "observe", str(messages), "--session-key", "same", "--format", "openai", "--flush", "--dry-run", "--json",
        "--memory-dir", str(env.root),
    )  # fmt: skip
    assert cli.code == 0, cli.err
    assert cli.json()["observations"] == python
    http = env.call(
        "POST", "/engram/v1/observe", {"sessionKey": "same", "messages": MESSAGES, "flush": True, "dryRun": True}
    )
    assert http.status == 202, http.raw
    assert http.json()["observations"] == python
    assert http.json()["lcmArchived"] is False and http.json()["extractionQueued"] is False  # nothing was

    async def go() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.call_tool(
                "remnic_observe", {"sessionKey": "same", "messages": MESSAGES, "flush": True, "dryRun": True}
            )

    mcp = run(go)
    assert not mcp.is_error, text(mcp)
    assert mcp.structured_content["observations"] == python
    assert not env.memory.list()  # a dry run writes nothing on any surface


def test_recall_cites_the_primitives_the_pipeline_wrote(plain_env: Env) -> None:
    env = plain_env
    env.memory.observe_transcript("standup-0509", CORRECTION, fmt="plain", flush=True)
    primitive = env.memory.list()[0]
    block = env.memory.citations(env.memory.recall("staging DB port").hits)
    lines = (env.root / primitive.path).read_text().splitlines()
    entry = next(line for line in block.splitlines() if line.startswith(primitive.path))
    start = int(entry.split(":")[1].split("-")[0])
    assert lines[start - 1] == primitive.content and "|note=[fact: " in entry
    assert block.startswith("<oai-mem-citation>\n<citation_entries>\n") and "\nstandup-0509\n" in block
    http = env.call("POST", "/engram/v1/recall", {"query": "staging DB port", "citations": True}).json()
    assert http["citations"] == block
    assert "citations" not in env.call("POST", "/engram/v1/recall", {"query": "staging DB port"}).json()


def test_cli_observe_reinforces_what_an_index_left_behind_does_not_hold(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.refresh_index()
    facts = [  # one-shot writes leave the index behind
        "Ben prefers tabs over spaces in the Python code.",
        "The staging DB port is 5432.",
        "We decided to cut releases every Tuesday from now on.",
    ]
    for fact in facts:
        stored = run_cli("store", fact, "--memory-dir", str(root))
        assert stored.code == 0, stored.err
    with Memory.open(root) as memory:
        assert memory.index.health(memory.ledger).state == "behind"
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT)
    observed = run_cli("observe", str(chat), "--session-key", "s1", "--flush", "--json", "--memory-dir", str(root))
    assert observed.code == 0, observed.err
    flush = observed.json()["flushes"][0]
    assert flush["created"] == 0 and flush["reinforced"] == 3


def test_an_observed_fact_is_dated_when_it_was_said_not_when_it_was_written(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root, recall={"date_filter": True})) as memory:
        said = {"role": "user", "speaker": "Ana", "content": "I adopted a grey cat named Bailey.", "turnId": "D1:1",
                "timestamp": "2023-05-08T13:56:00Z"}  # fmt: skip
        memory.observe("s1", [said], flush=True)
        memory.store("Ana adopted a brown dog named Rex.", category="fact")  # written and said now
        result = memory.recall("Which pet did Ana adopt in May 2023?", top_k=5)
        assert [h.content for h in result.hits] == ["Ana adopted a grey cat named Bailey."]
        scope = next(s for s in result.stages if s.name == "date-scope")
        assert "1 of 2 in scope" in scope.reason  # the one written now is out of May 2023's scope


def test_doctor_reports_the_flushes_throughput_and_verdicts_from_the_ledger(memory: Memory) -> None:
    empty = run_cli("doctor", "--json", "--memory-dir", str(memory.root)).json()
    check = next(c for c in empty["checks"] if c["name"] == "observations")
    assert check["detail"].startswith("no observations yet")
    memory.observe_transcript("standup", CHAT, fmt="plain", flush=True)
    ledger = memory.root / "state" / "observation-ledger" / "extraction-judge-verdicts.jsonl"
    lines = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(lines) == 3 and {line["flushTurns"] for line in lines} == {5}  # 5 turns, 3 facts
    doctor = run_cli("doctor", "--json", "--memory-dir", str(memory.root)).json()
    detail = next(c for c in doctor["checks"] if c["name"] == "observations")["detail"]
    assert "3 verdicts" in detail and "(3 accepted, 0 rejected, 0 deferred)" in detail
    assert "last observedAt 2026-05-02T09:03:00.000Z" in detail and "5 turns in 1 flush(es) at" in detail


def test_doctor_warns_of_turns_left_waiting_in_a_buffer_and_names_the_session(memory: Memory) -> None:
    from remnic.observe.buffer import SessionBuffer
    from remnic.observe.records import Turn

    def buffers() -> dict[str, Any]:
        checks = run_cli("doctor", "--json", "--memory-dir", str(memory.root)).json()["checks"]
        return next(c for c in checks if c["name"] == "buffers")

    assert buffers()["status"] == "ok" and buffers()["detail"].startswith("no observed turns waiting")
    memory.observe_transcript("fresh", CHAT, fmt="plain")  # a session under way: waiting is normal
    check = buffers()
    assert check["status"] == "ok" and check["detail"].startswith("5 observed turn(s) wait in 1 session buffer(s)")
    old = SessionBuffer(memory.durable_dir, "left", "default")
    old.append([Turn("user", "Ana: I prefer green tea.", 0)], now="2026-01-01T09:00:00.000Z")  # long ago
    old.begin_flush("explicit")  # … and a flush of it begun, never finished (a crash)
    check = buffers()
    assert check["status"] == "warn" and "6 observed turn(s) wait in 2 session buffer(s)" in check["detail"]
    assert "1 flush(es) interrupted" in check["detail"] and "--session-key KEY --flush" in check["detail"]
    assert check["problems"] == ["left (default): 1 turn(s)"]
    memory.observe_transcript("left", "", fmt="plain", flush=True)  # the next call finishes it
    assert buffers()["problems"] == []


def test_every_surface_persists_the_same_observations(plain_env: Env, tmp_path: Path) -> None:
    """Not only planned: flushed through each surface (one namespace each, so each writes its own
    primitives), the observations are the same, ids included, and each resulted in a primitive."""
    env = plain_env
    python = [o.to_dict() for o in env.memory.observe("same", MESSAGES, namespace="py", flush=True).observations]
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps(MESSAGES))
    cli = run_cli(
        "observe", str(messages), "--session-key", "same", "--format", "openai", "--flush", "--json",
        "--namespace", "cli", "--memory-dir", str(env.root),
    )  # fmt: skip
    assert cli.code == 0, cli.err
    body = {"sessionKey": "same", "messages": MESSAGES, "flush": True}
    http = env.call("POST", "/engram/v1/observe", {**body, "namespace": "http"})
    assert http.status == 202, http.raw

    async def go() -> Any:
        async with http_client(env, env.alice) as client:
            return await client.call_tool("remnic_observe", {**body, "namespace": "mcp"})

    mcp = run(go)
    assert not mcp.is_error, text(mcp)
    surfaces = {
        "cli": cli.json()["observations"],
        "http": http.json()["observations"],
        "mcp": mcp.structured_content["observations"],
    }

    def without_primitive(observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in o.items() if k != "resultingPrimitiveId"} for o in observations]

    kept = [o for o in python if o["judgeAccepted"]]
    assert kept and all(o["resultingPrimitiveId"] for o in kept)
    for name, observations in surfaces.items():
        assert without_primitive(observations) == without_primitive(python), name
        ns_ids = {r.id for r in env.memory.list(namespace=name)}
        assert {o["resultingPrimitiveId"] for o in observations if o["judgeAccepted"]} == ns_ids, name
