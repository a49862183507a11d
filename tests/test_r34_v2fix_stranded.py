"""A stranded value (v2 finding 3): A was replaced by B, B was forgotten, rejected or deleted, so no current
memory follows A. `store/update --supersedes A` (and an import line naming A) is allowed again: the new
memory takes A's link over in its own commit, A's old value is never current in between, and doctor's
stranded warning clears. A chain that still has a current memory is refused, naming it, as before."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, run_cli

from remnic.service import Memory


def _stranded(tmp_path: Path) -> tuple[Path, list[str], dict, dict]:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    d = ["--memory-dir", str(root)]
    a = run_cli("store", "The staging DB port is 5432.", "--json", *d).json()
    b = run_cli("store", "The staging DB port is 6543.", "--supersedes", a["id"], "--json", *d).json()
    assert run_cli("forget", b["id"], "--reason", "wrong, never was 6543", *d).code == 0
    return root, d, a, b


def _check(root: Path) -> dict:
    checks = run_cli("doctor", "--json", "--memory-dir", str(root)).json()["checks"]
    return {c["name"]: c for c in checks}["superseded-by-rejected"]


def _fm(d: list[str], memory_id: str) -> dict:
    return run_cli("get", memory_id, "--json", *d).json()["frontmatter"]


def test_store_supersedes_a_stranded_value_in_one_commit(tmp_path: Path) -> None:
    root, d, a, b = _stranded(tmp_path)
    assert _check(root)["status"] == "warn"
    before = git(root, "rev-parse", "HEAD").strip()
    was = _fm(d, a["id"])
    c = run_cli("store", "The staging DB port is 7000.", "--supersedes", a["id"], "--json", *d)
    assert c.code == 0, c
    cid = c.json()["id"]
    after = _fm(d, a["id"])
    assert after["status"] == "superseded" and after["supersededBy"] == cid
    assert after["supersededAt"] != was["supersededAt"]
    # one commit, holding both files: A was never current in between
    assert git(root, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    changed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([a["path"], c.json()["path"]])
    assert _check(root)["status"] == "ok", _check(root)
    active = run_cli("list", "--status", "active", "--json", *d).json()["memories"]
    assert [r["id"] for r in active] == [cid]
    hits = run_cli("query", "what is the staging DB port", "--json", *d).json()["hits"]
    assert hits and hits[0]["id"] == cid and all(h["id"] != a["id"] for h in hits), hits
    assert git(root, "status", "--porcelain") == ""


def test_update_and_import_take_over_a_stranded_link_and_a_live_chain_is_still_refused(tmp_path: Path) -> None:
    root, d, a, _b = _stranded(tmp_path)
    other = run_cli("store", "The staging cache port is 7001.", "--json", *d).json()["id"]
    assert run_cli("update", other, "--supersedes", a["id"], *d).code == 0
    assert _fm(d, a["id"])["supersededBy"] == other
    # now the chain has a current memory: superseding A again is refused, naming it
    refused = run_cli("store", "The staging DB port is 7002.", "--supersedes", a["id"], *d)
    assert refused.code == 2 and f"`--supersedes {other}`" in refused.err, refused

    # a deleted successor strands the value too; an import line naming it takes the link over
    (root / run_cli("get", other, "--json", *d).json()["path"]).unlink()
    assert run_cli("sync", "run", *d).code == 0
    assert _check(root)["status"] == "warn"
    lines = tmp_path / "fix.jsonl"
    lines.write_text(json.dumps({"content": "The staging DB port is 7003.", "supersedes": a["id"]}) + "\n")
    imported = run_cli("import", str(lines), "--json", *d)
    assert imported.code == 0, imported
    with Memory.open(root) as memory:
        [new] = [r for r in memory.list() if "7003" in r.content]
        assert memory.get(a["id"]).frontmatter["supersededBy"] == new.id
    assert _check(root)["status"] == "ok"


def test_a_rejected_successor_strands_the_value_and_the_api_takes_it_over(tmp_path: Path) -> None:
    root, d, a, _b = _stranded(tmp_path)
    with Memory.open(root) as memory:
        c = memory.store("The staging DB port is 6000.", extra={"supersedes": a["id"]})
        path = root / c.record.path
        path.write_text(path.read_text(encoding="utf-8").replace("status: active", "status: rejected"), "utf-8")
        memory.sync()  # a person rejected C by hand: A's value now has no current memory
        assert memory.get(c.id).status == "rejected" and memory.get(a["id"]).frontmatter["supersededBy"] == c.id
        assert _check(root)["status"] == "warn"
        e = memory.store("The staging DB port is 6001.", extra={"supersedes": a["id"]})
        assert e.changed and memory.get(a["id"]).frontmatter["supersededBy"] == e.id
    assert _check(root)["status"] == "ok"
