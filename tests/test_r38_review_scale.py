"""Session 38, a repository after months of use: observe writes both sides of every supersession link (one
memory replacing several, an older statement observed after a newer one), a current value said again by
someone else reinforces its memory; several review decisions (ids, ``-``, ``--all-pending``) go in one
commit, an id that cannot be decided named without failing the others.

Real repositories in temp dirs, the real observer and the CLI in-process.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.service.chain_links import one_sided_links
from remnic.service.memory import Memory


def said(mem: Memory, key: str, *lines: str) -> None:
    mem.observe_transcript(key, "\n".join(lines) + "\n", fmt="plain", flush=True)


def by_text(mem: Memory) -> dict[str, dict[str, object]]:
    return {r.content: {"id": r.id, **r.frontmatter} for r in mem.list(status=None) if r.category != "entity"}


def doctor_links(mem: Memory) -> str:
    return {c["name"]: c["status"] for c in mem.doctor()}["supersession-links"]


def test_one_memory_replacing_two_names_both_and_a_repeat_reinforces(memory: Memory) -> None:
    said(memory, "k1", "[2026-07-01T09:00:00Z] Ana: The staging DB port is 5432.")
    said(memory, "k2", "[2026-07-06T09:00:00Z] Ana: Actually the staging DB port is now 5433, not 5432.")
    # The current value said again by someone else: the correction is reinforced, not a second current 5433.
    said(memory, "k3", "[2026-07-30T09:00:00Z] Marco: the staging DB port is now 5433.")
    current = [r for r in memory.list() if r.status == "active" and "5433" in r.content]
    assert len(current) == 1, [r.content for r in current]
    assert current[0].frontmatter.get("reinforcement_count") == 1
    # Two values of one key current at once (stored with their keys by an agent): a later value replaces both.
    for value in (300, 600):
        keys = {
            "entityRef": "cache",
            "structuredAttributes": {"ttl": f"{value} seconds"},
            "validAt": "2026-08-01T09:00:00Z",
        }
        memory.store(f"The cache TTL is {value} seconds.", category="fact", extra=keys)
    said(memory, "k6", "[2026-08-20T09:00:00Z] Ana: The cache TTL is now 900 seconds.")
    mems = by_text(memory)
    newest = next(v for k, v in mems.items() if "900" in k)
    olds = sorted(str(v["id"]) for k, v in mems.items() if "TTL" in k and "900" not in k)
    assert len(olds) == 2 and sorted(newest["supersedes"]) == olds  # type: ignore[arg-type]
    assert one_sided_links(memory.files.scan().records) == []
    assert doctor_links(memory) == "ok"


def test_an_older_statement_observed_late_is_named_by_the_newer_one(memory: Memory) -> None:
    said(memory, "n", "[2026-11-25T10:01:00Z] Kofi: The Kibana log retention is 15 days.")
    said(memory, "o", "[2026-11-25T09:01:00Z] Ana: The Kibana log retention is 14 days.")
    mems = by_text(memory)
    old, new = mems["The Kibana log retention is 14 days."], mems["The Kibana log retention is 15 days."]
    assert old["status"] == "superseded" and old["supersededBy"] == new["id"]
    assert new["status"] == "active" and new["supersedes"] == old["id"]
    assert doctor_links(memory) == "ok"


HEDGES = (
    "[2026-06-01T10:00:00Z] Ana: Maybe the staging DB port is 5434.",
    "[2026-06-01T10:01:00Z] Kofi: I think we might move standup to 10:00.",
    "[2026-06-01T10:02:00Z] Ben: Probably the backup retention is 30 days.",
)


def queued(mem: Memory) -> list[str]:
    return [r.id for r in mem.review_queue(limit=100)]


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def test_several_ids_are_decided_in_one_commit_and_a_bad_one_is_named(memory: Memory) -> None:
    said(memory, "h", *HEDGES)
    ids = queued(memory)
    assert len(ids) == 3
    before = commits(memory.root)
    r = run_cli(
        "review", "dismiss", ids[0], "mem_nope", ids[1], "--reason", "noise", "--json", "--memory-dir", str(memory.root)
    )
    assert r.code == 1, r.err
    out = r.json()
    assert (out["decided"], out["failed"], out["decision"]) == (2, 1, "dismissed")
    assert [x["ref"] for x in out["results"]] == [ids[0], ids[1], "mem_nope"]
    assert out["results"][2]["ok"] is False and "mem_nope" in out["results"][2]["error"]
    assert "not decided: mem_nope" in r.err
    assert commits(memory.root) == before + 1
    assert [memory.get(i).status for i in ids] == ["rejected", "rejected", "pending_review"]
    assert memory.get(ids[0]).frontmatter["reviewReasonCode"] == "noise"
    message = git(memory.root, "log", "-1", "--format=%B")
    assert message.count("Remnic-Memory-Id:") == 2 and "Remnic-Review-Decision: rejected" in message


def test_ids_on_standard_input_and_all_pending_with_a_filter(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    said(memory, "h", *HEDGES[:2])
    said(memory, "other", HEDGES[2])
    first = queued(memory)
    before = commits(memory.root)
    on_h = [r.id for r in memory.review_queue(limit=100) if r.frontmatter.get("sessionKey") == "h"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(on_h) + "\n"))
    r = run_cli("review", "approve", "-", "--memory-dir", str(memory.root))
    assert r.code == 0, r.err
    assert "2 memories approved in commit" in r.out
    assert commits(memory.root) == before + 1
    # Deciding the same again writes nothing.
    monkeypatch.setattr(sys, "stdin", io.StringIO(" ".join(on_h)))
    again = run_cli("review", "approve", "-", "--json", "--memory-dir", str(memory.root))
    assert again.code == 0 and json.loads(again.out)["unchanged"] == 2 and json.loads(again.out)["commit"] is None
    # Only what the filter names: the other session's hedge.
    none = run_cli("review", "dismiss", "--all-pending", "--session", "nope", "--memory-dir", str(memory.root))
    assert none.code == 0 and "nothing waiting for review matches" in none.out
    rest = run_cli(
        "review", "dismiss", "--all-pending", "--session", "other", "--json", "--memory-dir", str(memory.root)
    )
    assert rest.code == 0, rest.err
    assert [x["id"] for x in rest.json()["results"]] == [i for i in first if i not in on_h]
    assert queued(memory) == []
    bad = run_cli("review", "dismiss", "--session", "other", "--memory-dir", str(memory.root))
    assert bad.code == 2 and "--all-pending" in bad.err
