"""`remnic dedup --merge` groups as consolidation does: every merged memory is a near-duplicate of its
survivor itself (no chains A~B~C), a supersession chain's current memory is never archived, and a
revert of a merged memory says it was merged and, with --force, undoes the merge on the survivor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.service import Memory


def cli(root: Path, *args: str) -> Any:
    result = run_cli(*args, "--memory-dir", str(root), "--json")
    assert result.code == 0, result.err
    return result.json()


def _repo(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    cli(root, "import", str(jsonl))
    return root


def _by_text(root: Path) -> dict[str, dict[str, Any]]:
    with Memory.open(settings=settings_for(root)) as memory:
        return {r.content: {"id": r.id, "status": r.status, **r.frontmatter} for r in memory.files.scan().records}


def _fact(text: str, created: str, **more: Any) -> dict[str, Any]:
    return {"content": text, "category": "fact", "created": created, **more}


# A~B (0.93) and B~C (0.96), but A and C are not near-duplicates (0.91, under the 0.92 floor).
HELIX = [
    {
        **_fact("Ana prefers tabs over spaces and uses the Helix editor", "2026-01-01T00:00:00Z"),
        "category": "preference",
    },
    {
        **_fact("Ana prefers tabs over spaces and uses Helix as her main editor at work", "2026-02-01T00:00:00Z"),
        "category": "preference",
    },
    {
        **_fact(
            "Ana prefers tabs over spaces, using Helix as her main editor at work and Vim at home",
            "2026-03-01T00:00:00Z",
        ),
        "category": "preference",
    },
]


def test_a_memory_only_alike_to_another_member_is_not_merged_into_the_survivor(tmp_path: Path) -> None:
    root = _repo(tmp_path, HELIX)
    a, b, c = (_by_text(root)[line["content"]]["id"] for line in HELIX)
    found = cli(root, "dedup")
    floor = settings_for(root).observe.duplicate_similarity_floor
    assert [(g["survivor"]["id"], [d["id"] for d in g["duplicates"]]) for g in found["groups"]] == [(a, [b])]
    assert all(d["similarity"] >= floor for g in found["groups"] for d in g["duplicates"])
    assert [(m["id"], m["into"]) for m in cli(root, "dedup", "--merge")["merged"]] == [(b, a)]
    after = _by_text(root)
    assert after[HELIX[2]["content"]]["status"] == "active"  # "Vim at home" stays recallable
    assert after[HELIX[1]["content"]]["mergedInto"] == a
    hits = cli(root, "query", "which editor does Ana use at home?")["hits"]
    assert c in [h["id"] for h in hits]


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository for the chain tests: each works in a namespace of its own."""
    root = tmp_path_factory.mktemp("chains") / "mem"
    assert run_cli("init", str(root)).code == 0
    return root


def _superseded(root: Path, namespace: str) -> tuple[str, str, str]:
    """An old value, its successor (stored later with --supersedes) and an older near-duplicate of it."""
    jsonl = root.parent / f"{namespace}.jsonl"
    lines = [
        _fact("The staging cluster runs in eu-west-1", "2026-01-01T00:00:00Z", namespace=namespace),
        _fact("Staging cluster runs in us-east-2", "2025-01-01T00:00:00Z", namespace=namespace),
    ]
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    cli(root, "import", str(jsonl))
    ids = {r["content"]: r["id"] for r in cli(root, "list", "--namespace", namespace)["memories"]}
    old, twin = ids["Staging cluster runs in us-east-2"], ids["The staging cluster runs in eu-west-1"]
    new = cli(root, "store", "The staging cluster runs in eu-west-1 now", "--supersedes", old, "-n", namespace)["id"]
    return old, twin, new


def test_a_successor_survives_and_its_chain_keeps_naming_an_active_memory(chains: Path) -> None:
    root = chains
    old, twin, new = _superseded(root, "survives")
    (group,) = cli(root, "dedup", "-n", "survives")["groups"]
    assert group["survivor"]["id"] == new and [d["id"] for d in group["duplicates"]] == [twin]
    assert twin in group["note"] and f"it superseded {old}" in group["note"]
    text = run_cli("dedup", "-n", "survives", "--memory-dir", str(root)).out
    assert f"kept over the older {twin}" in text
    assert [(m["id"], m["into"]) for m in cli(root, "dedup", "--merge", "-n", "survives")["merged"]] == [(twin, new)]
    with Memory.open(settings=settings_for(root)) as memory:
        assert memory.get(old).frontmatter["supersededBy"] == new and memory.get(new).status == "active"
    query = ["query", "where does staging run", "--include-superseded", "-n", "survives"]
    hits = [h["id"] for h in cli(root, *query)["hits"]]
    assert hits.index(new) < hits.index(old)  # the successor still ranks above what it replaced


def test_two_chain_heads_that_duplicate_each_other_both_stay_active_and_are_reported(chains: Path) -> None:
    root = chains
    old, twin, new = _superseded(root, "heads")
    # The older twin becomes a chain's current memory too: neither may be archived.
    other = cli(root, "store", "Staging used to run in ap-south-1", "--category", "fact", "-n", "heads")["id"]
    cli(root, "update", twin, "--supersedes", other)
    found = cli(root, "dedup", "-n", "heads")
    assert found["groups"] == []
    (kept,) = found["keptActive"]
    assert (kept["id"], kept["duplicateOf"]) == (new, twin) and f"it superseded {old}" in kept["reason"]
    text = run_cli("dedup", "-n", "heads", "--memory-dir", str(root)).out
    assert f"left active: {new}" in text and "no duplicates to merge" in text
    assert cli(root, "dedup", "--merge", "-n", "heads")["merged"] == []


@pytest.fixture
def merged(tmp_path: Path) -> tuple[Path, str, str, str]:
    """Two near-duplicates merged by dedup; the survivor had one reinforcement of its own."""
    root = _repo(
        tmp_path,
        [
            _fact("The staging cluster runs in eu-west-1", "2026-01-01T00:00:00Z", reinforcement_count=1),
            _fact("The staging cluster is hosted in eu-west-1", "2026-02-01T00:00:00Z"),
        ],
    )
    ids = {text: m["id"] for text, m in _by_text(root).items()}
    keep, gone = ids["The staging cluster runs in eu-west-1"], ids["The staging cluster is hosted in eu-west-1"]
    assert [(m["id"], m["into"]) for m in cli(root, "dedup", "--merge")["merged"]] == [(gone, keep)]
    survivor = _by_text(root)["The staging cluster runs in eu-west-1"]
    assert survivor["derived_from"] == [gone] and survivor["reinforcement_count"] == 2
    return root, keep, gone, "facts/the-staging-cluster-is-hosted-in-eu-west-1.md"


def test_reverting_a_merged_memory_says_it_was_merged_and_force_undoes_the_merge(
    merged: tuple[Path, str, str, str],
) -> None:
    root, keep, gone, path = merged
    refused = run_cli("versions", "revert", path, "v1", "--memory-dir", str(root))
    assert refused.code == 2
    assert f"was merged into {keep}" in refused.err and "remnic dedup --merge" in refused.err
    assert "supersede" not in refused.err  # nothing superseded anything
    done = cli(root, "versions", "revert", path, "v1", "--force")
    assert done["alsoChanged"] == [
        {"id": keep, "path": "facts/the-staging-cluster-runs-in-eu-west-1.md", "change": "merge-undone"}
    ]
    after = _by_text(root)
    survivor = after["The staging cluster runs in eu-west-1"]
    assert "derived_from" not in survivor and "derived_via" not in survivor
    assert survivor["reinforcement_count"] == 1  # its own, not the merge's
    assert after["The staging cluster is hosted in eu-west-1"]["status"] == "active"
