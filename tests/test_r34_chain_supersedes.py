"""`store`/`update --supersedes X` where X is already superseded: refused, naming X's chain's current memory
(`--supersedes HEAD`), never redirected and never overwriting X's `supersededBy` (the chain would fork
into two current values) — unless X's value is stranded (no current memory follows it): then the new
memory takes the link over (tests/test_r34_v2fix_stranded.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli, snapshot_tree
from test_r34_chain_revert import observed_chain

from remnic.errors import ValidationError
from remnic.service import Memory


def test_store_superseding_a_superseded_memory_is_refused_naming_the_chain_head(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    d = ["--memory-dir", str(root)]
    files, head = snapshot_tree(root), git(root, "rev-parse", "HEAD")

    result = run_cli("store", "The staging DB port is 6000.", "--supersedes", m["B"]["path"], *d)
    assert result.code == 2, result
    assert "--supersedes" in result.err and f"already superseded by {m['C']['id']}" in result.err, result.err
    assert f"`--supersedes {m['C']['id']}`" in result.err and m["C"]["path"] in result.err, result.err
    assert git(root, "rev-parse", "HEAD") == head and snapshot_tree(root) == files

    # Named as the error says, the write replaces the current value: one chain, one current memory.
    ok = run_cli("store", "The staging DB port is 6000.", "--supersedes", m["C"]["id"], "--json", *d)
    assert ok.code == 0, ok
    active = run_cli("list", "--status", "active", "--json", *d).json()["memories"]
    assert [r["id"] for r in active] == [ok.json()["id"]]
    assert run_cli("get", m["B"]["id"], "--json", *d).json()["frontmatter"]["supersededBy"] == m["C"]["id"]
    checks = {c["name"]: c for c in run_cli("doctor", "--json", *d).json()["checks"]}
    assert checks["supersession-links"]["status"] == "ok", checks["supersession-links"]


def test_update_and_the_api_refuse_it_too_and_a_relink_to_the_same_successor_is_no_change(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    d = ["--memory-dir", str(root)]
    other = run_cli("store", "The staging cache port is 7000.", "--json", *d).json()["id"]
    head = git(root, "rev-parse", "HEAD")
    result = run_cli("update", other, "--supersedes", m["A"]["id"], *d)
    assert result.code == 2 and f"`--supersedes {m['C']['id']}`" in result.err, result
    with Memory.open(root) as memory, pytest.raises(ValidationError) as caught:
        memory.store("The staging DB port is 6001.", extra={"supersedes": m["B"]["id"]})
    assert caught.value.problems[0].field == "supersedes" and m["C"]["id"] in str(caught.value)
    assert git(root, "rev-parse", "HEAD") == head

    # B already names C as its successor: saying so again is allowed and changes nothing.
    again = run_cli("update", m["C"]["id"], "--supersedes", m["B"]["id"], "--json", *d)
    assert again.code == 0 and again.json()["changed"] is False, again


def test_a_stranded_value_is_superseded_in_one_step(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    d = ["--memory-dir", str(root)]
    assert run_cli("forget", m["C"]["id"], *d).code == 0  # B's successor is gone: no current memory follows
    ok = run_cli("store", "The staging DB port is 6000.", "--supersedes", m["B"]["id"], "--json", *d)
    assert ok.code == 0, ok
    b = run_cli("get", m["B"]["id"], "--json", *d).json()
    assert b["status"] == "superseded" and b["frontmatter"]["supersededBy"] == ok.json()["id"]
