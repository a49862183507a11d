"""Review decisions: approving a hedged fact the observer queued keys it by its statement without the hedge
(so "Maybe the staging DB port is 5434 now." replaces 5432), and every decision says what it did — the
status before, the reason, each other memory it changed — in its output, its --json and its commit."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli
from test_r34_chain_revert import observed_chain

from remnic.service import Memory


def _queued(tmp_path: Path, hedged: str) -> tuple[Path, str, str]:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    with Memory.open(root) as memory:
        memory.observe_transcript("g1", "[2026-11-26T10:00:00Z] Ana: The staging DB port is 5432.\n", flush=True)
        memory.observe_transcript("g2", f"[2026-11-27T10:00:00Z] Ana: {hedged}\n", flush=True)
        [old] = memory.list(status="active")
        [queued] = memory.list(status="pending_review")
    return root, old.id, queued.id


def test_approving_a_queued_maybe_keys_it_without_the_hedge_and_it_replaces_the_old_value(tmp_path: Path) -> None:
    root, old, queued = _queued(tmp_path, "Maybe the staging DB port is 5434 now.")
    d = ["--memory-dir", str(root)]
    result = run_cli("review", "approve", queued, "--json", *d)
    assert result.code == 0, result
    got = result.json()
    assert got["status"] == "active" and got["frontmatter"]["entityRef"] == "staging-db", got["frontmatter"]
    assert got["frontmatter"]["structuredAttributes"] == {"port": "5434"}
    assert got["frontmatter"]["supersedes"] == old
    assert got["alsoChanged"] == [{"id": old, "path": got["alsoChanged"][0]["path"], "change": "superseded"}]
    assert run_cli("get", old, "--json", *d).json()["status"] == "superseded"
    assert [r["id"] for r in run_cli("list", "--status", "active", "--json", *d).json()["memories"]] == [queued]
    assert f"Remnic-Also-Changed: {old} superseded by it" in git(root, "log", "-1", "--format=%B")


def test_should_be_inside_the_value_gives_no_key_and_replaces_nothing(tmp_path: Path) -> None:
    # "should be" says what it is meant to be, no hedged value (keys.statement_key; "might be": r34_dismiss).
    root, old, queued = _queued(tmp_path, "I think the staging DB port should be 5433.")
    got = run_cli("review", "approve", queued, "--json", "--memory-dir", str(root)).json()
    assert got["status"] == "active" and "entityRef" not in got["frontmatter"] and got["alsoChanged"] == []


def test_each_decision_names_the_status_before_the_reason_and_what_else_it_changed(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    d = ["--memory-dir", str(root)]
    b, c = m["B"], m["C"]

    flag = run_cli("review", "flag", c["path"], "--reason", "doubtful", "--json", *d).json()
    assert (flag["previousStatus"], flag["decision"], flag["reasonCode"], flag["alsoChanged"]) == (
        "active",
        "flagged",
        "doubtful",
        [],
    )
    body = git(root, "log", "-1", "--format=%B")
    assert "Remnic-Review-Decision: quarantined" in body and "Remnic-Review-Reason: doubtful" in body

    dismissed = run_cli("review", "dismiss", c["path"], "--reason", "wrong-value", *d)
    assert dismissed.code == 0, dismissed
    assert "dismissed (was quarantined" in dismissed.out and "), reason wrong-value" in dismissed.out, dismissed.out
    assert f"also changed: {b['id']} ({b['path']}) current again (no longer superseded by {c['id']})" in dismissed.out
    body = git(root, "log", "-1", "--format=%B")
    assert "Remnic-Review-Decision: rejected" in body and "Remnic-Review-Reason: wrong-value" in body
    assert f"Remnic-Also-Changed: {b['id']} current again" in body

    approved = run_cli("review", "approve", c["id"], "--json", *d).json()
    assert approved["previousStatus"] == "rejected" and approved["decision"] == "approved"
    assert approved["reasonCode"] is None
    assert approved["alsoChanged"] == [{"id": b["id"], "path": b["path"], "change": "superseded"}]
    assert f"Remnic-Also-Changed: {b['id']} superseded by it" in git(root, "log", "-1", "--format=%B")

    again = run_cli("review", "approve", c["id"], "--json", *d).json()  # a retry: no commit, nothing else changed
    assert again["changed"] is False and again["alsoChanged"] == [] and again["previousStatus"] == "active"
