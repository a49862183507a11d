"""Two duplicate supersession-chain heads are left active by `remnic dedup` with the command that keeps
one of them (text and --json ``hint``), and that command does it cleanly: `update LATER --supersedes
EARLIER` on a memory that already replaces another keeps that link too (its ``supersedes`` lists both),
so doctor finds no link set on one side only and dedup has nothing left to report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.service.memory import Memory


def cli(root: Path, *args: str) -> Any:
    result = run_cli(*args, "--memory-dir", str(root), "--json")
    assert result.code == 0, result.err
    return result.json()


@pytest.fixture(scope="module")
def heads(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """old ← new and other ← twin: new and twin say the same thing, and each is its chain's current memory."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        root = tmp_path_factory.mktemp("heads") / "mem"
        assert run_cli("init", str(root)).code == 0
        lines = [
            {"content": "The staging cluster runs in eu-west-1", "category": "fact", "created": "2026-01-01T00:00:00Z"},
            {"content": "Staging cluster runs in us-east-2", "category": "fact", "created": "2025-01-01T00:00:00Z"},
        ]
        jsonl = root.parent / "in.jsonl"
        jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        cli(root, "import", str(jsonl))
        ids = {m["content"]: m["id"] for m in cli(root, "list")["memories"]}
        old, twin = ids["Staging cluster runs in us-east-2"], ids["The staging cluster runs in eu-west-1"]
        new = cli(root, "store", "The staging cluster runs in eu-west-1 now", "--supersedes", old)["id"]
        other = cli(root, "store", "Staging used to run in ap-south-1")["id"]
        cli(root, "update", twin, "--supersedes", other)
        yield root, {"old": old, "twin": twin, "new": new, "other": other}


def test_dedup_names_the_command_that_keeps_one_of_two_chain_heads(heads: tuple[Path, dict[str, str]]) -> None:
    root, m = heads
    hint = f"remnic update {m['new']} --supersedes {m['twin']}"  # the later one replaces the earlier
    for merge in ([], ["--merge"]):
        (kept,) = cli(root, "dedup", *merge)["keptActive"]
        assert (kept["id"], kept["duplicateOf"], kept["hint"]) == (m["new"], m["twin"], hint)
        text = run_cli("dedup", *merge, "--memory-dir", str(root)).out
        assert f"left active: {m['new']}" in text and f"to keep one: `{hint}`" in text, text


def test_following_the_hint_joins_the_chains_without_a_one_sided_link(heads: tuple[Path, dict[str, str]]) -> None:
    root, m = heads
    cli(root, "update", m["new"], "--supersedes", m["twin"])
    with Memory.open(settings=settings_for(root)) as memory:
        new = memory.get(m["new"])
        assert new.status == "active" and new.frontmatter["supersedes"] == [m["old"], m["twin"]]
        assert {memory.get(m[k]).frontmatter.get("supersededBy") for k in ("old", "twin")} == {m["new"]}
    found = cli(root, "dedup")
    assert found["keptActive"] == [] and found["groups"] == []
    checks = {c["name"]: c for c in cli(root, "doctor")["checks"]}
    assert checks["supersession-links"]["status"] == "ok", checks["supersession-links"]
    again = run_cli("update", m["new"], "--supersedes", m["twin"], "--memory-dir", str(root))
    assert again.code == 0 and "already says that" in again.out, again  # no commit, nothing dropped
