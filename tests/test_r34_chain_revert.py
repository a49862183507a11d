"""A → B → C built by observing three corrections: reverting A to its first version would make it current
beside C, though its own successor B is only history. Refused, naming the chain's current memory; with
--force B's claim on A is dropped in the same commit and reported as alsoChanged."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli, snapshot_tree

from remnic.service import Memory

SAID = (
    "[2026-11-25T10:00:00Z] Ana: The staging DB port is 5432.\n",
    "[2026-11-25T11:00:00Z] Ana: Actually the staging DB port is 5433 now.\n",
    "[2026-11-25T12:00:00Z] Ana: The staging DB port changed to 5434.\n",
)


def observed_chain(tmp_path: Path) -> tuple[Path, dict[str, dict]]:
    """A (5432) superseded by B (5433), superseded by C (5434), as observe writes them; {A, B, C} → get --json."""
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    with Memory.open(root) as memory:
        for n, line in enumerate(SAID, 1):
            memory.observe_transcript(f"c{n}", line, fmt="plain", flush=True)
        by_port = {}
        for record in memory.list():
            for port, name in (("5432", "A"), ("5433", "B"), ("5434", "C")):
                if port in record.content:
                    by_port[name] = record
    found = {k: run_cli("get", r.id, "--json", "--memory-dir", str(root)).json() for k, r in by_port.items()}
    assert [found[k]["status"] for k in "ABC"] == ["superseded", "superseded", "active"], found
    assert found["A"]["frontmatter"]["supersededBy"] == found["B"]["id"]
    assert found["B"]["frontmatter"]["supersededBy"] == found["C"]["id"]
    return root, found


def test_revert_that_would_fork_a_chain_is_refused_naming_its_current_memory(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    d = ["--memory-dir", str(root)]
    files, head = snapshot_tree(root), git(root, "rev-parse", "HEAD")

    result = run_cli("versions", "revert", m["A"]["path"], "v1", *d)
    assert result.code == 2, result
    assert m["C"]["id"] in result.err and m["C"]["path"] in result.err, result.err  # the chain's current memory
    assert m["B"]["id"] in result.err and "--force" in result.err, result.err
    assert git(root, "rev-parse", "HEAD") == head and snapshot_tree(root) == files  # nothing written
    active = run_cli("list", "--status", "active", "--json", *d).json()["memories"]
    assert [r["id"] for r in active] == [m["C"]["id"]]

    # With C forgotten nothing current follows A (B is stranded): the revert forks nothing and goes through.
    assert run_cli("forget", m["C"]["id"], *d).code == 0
    result = run_cli("versions", "revert", m["A"]["path"], "v1", "--json", *d)
    assert result.code == 0 and result.json()["changed"] is True, result
    assert run_cli("get", m["A"]["id"], "--json", *d).json()["status"] == "active"


def test_revert_with_force_drops_the_first_links_claim_and_reports_it(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    d = ["--memory-dir", str(root)]
    head = git(root, "rev-parse", "HEAD").strip()

    result = run_cli("versions", "revert", m["A"]["path"], "v1", "--force", "--json", *d)
    assert result.code == 0, result
    assert result.json()["alsoChanged"] == [
        {"id": m["B"]["id"], "path": m["B"]["path"], "change": "supersedes-dropped"}
    ], result.json()
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert f"Also changed: {m['B']['id']}" in git(root, "log", "-1", "--format=%B")
    b = run_cli("get", m["B"]["id"], "--json", *d).json()
    assert "supersedes" not in b["frontmatter"] and b["frontmatter"]["supersededBy"] == m["C"]["id"]
    checks = {c["name"]: c for c in run_cli("doctor", "--json", *d).json()["checks"]}
    assert checks["supersession-links"]["status"] == "ok", checks["supersession-links"]
    assert git(root, "status", "--porcelain") == ""
