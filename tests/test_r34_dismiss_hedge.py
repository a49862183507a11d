"""A hedge in the verb ("the staging DB port might be 5434 now"): as observed the fact is queued with no
key, and approving it keys the statement without the hedge, so it replaces the value said before it.
"Should be" is no hedge: what a thing is meant to be replaces no value of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.observe.keys import statement_key, value_key
from remnic.service import Memory


def _queued(tmp_path: Path, hedged: str) -> tuple[Path, str, str]:
    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    with Memory.open(root) as memory:
        memory.observe_transcript("g1", "[2026-11-26T10:00:00Z] Ana: The staging DB port is 5432.\n", flush=True)
        memory.observe_transcript("g2", f"[2026-11-27T10:00:00Z] Ana: {hedged}\n", flush=True)
        [old] = memory.list(status="active")
        [queued] = memory.list(status="pending_review")
        assert "entityRef" not in queued.frontmatter  # hedged: it replaced nothing when it was observed
    return root, old.id, queued.id


@pytest.mark.parametrize(
    "hedged",
    [
        "I think the staging DB port might be 5434 now.",
        "I think the staging DB port may be 5434.",
        "I think the staging DB port could be 5434 now.",
    ],
)
def test_approving_a_value_hedged_in_its_verb_replaces_the_old_value(tmp_path: Path, hedged: str) -> None:
    root, old, queued = _queued(tmp_path, hedged)
    d = ["--memory-dir", str(root)]
    got = run_cli("review", "approve", queued, "--json", *d).json()
    assert got["status"] == "active" and got["frontmatter"]["entityRef"] == "staging-db", got["frontmatter"]
    assert got["frontmatter"]["structuredAttributes"] == {"port": "5434"}
    assert got["frontmatter"]["supersedes"] == old
    assert [(a["id"], a["change"]) for a in got["alsoChanged"]] == [(old, "superseded")]
    assert [m["id"] for m in run_cli("list", "--status", "active", "--json", *d).json()["memories"]] == [queued]
    assert f"Remnic-Also-Changed: {old} superseded by it" in git(root, "log", "-1", "--format=%B")


def test_only_the_hedge_is_set_aside_and_should_be_is_a_rule_not_a_hedged_value(tmp_path: Path) -> None:
    # Observed, "might be" is no value to replace another with; the approval sets the hedge aside.
    assert value_key("The staging DB port might be 5434 now.", "Ana") == (None, {})
    assert statement_key("The staging DB port might still be 5432.") == ("staging-db", {"port": "5432"})
    assert statement_key("The staging DB port might not be 5434.") == (None, {})  # a denial names no value
    assert statement_key("The staging DB port should be 5433 in prod.") == (None, {})
    assert statement_key("The staging DB port must be 5433.") == (None, {})
    root, old, queued = _queued(tmp_path, "I think the staging DB port should be 5433.")
    got = run_cli("review", "approve", queued, "--json", "--memory-dir", str(root)).json()
    assert got["status"] == "active" and "entityRef" not in got["frontmatter"] and got["alsoChanged"] == []
    assert run_cli("get", old, "--json", "--memory-dir", str(root)).json()["status"] == "active"
