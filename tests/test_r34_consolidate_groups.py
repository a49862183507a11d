"""Consolidation of three or more near-duplicates: every merged memory goes into its group's oldest,
never into one that is merged itself, whatever the files are named; the survivor adds up the
counts, tags, turns and sessions as they stand inside the transaction, and citations name every session."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.memfile.model import parse_file
from remnic.service import Memory

A, B, C = "mem_aaaaaaaaaaaaaaaaaaaa", "mem_bbbbbbbbbbbbbbbbbbbb", "mem_cccccccccccccccccccc"
# id, days ago, tag, session, turns, reinforcement_count, text: A oldest, C newest (as after a pull of
# two clones' flushes, which no flush could compare with each other).
MEMORIES = [
    (A, 3, "dark", "sess-a", ["L1", "L5"], 2, "Ana prefers dark mode in her code editor."),
    (B, 2, "theme", "sess-b", ["m3"], 3, "Ana prefers dark mode in the code editor."),
    (C, 1, "ui", "sess-c", ["L9", "L1"], 1, "Ana prefers the dark mode in the code editor."),
]
# Changed by every merge whatever the order (times): left out of the comparison of two runs.
CLOCK_KEYS = {"last_reinforced_at", "archivedAt"}
NOW = time.time()  # one clock for both runs, so their `created` times match


def _iso(days_ago: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(NOW - days_ago * 86400))


def _write(root: Path, names: dict[str, str]) -> None:
    for mid, days, tag, session, turns, count, text in MEMORIES:
        when = _iso(days)
        (root / "preferences" / names[mid]).write_text(
            f"---\nid: {mid}\ncategory: preference\ncreated: {when}\nupdated: {when}\nsource: extraction\n"
            f'confidence: 0.9\ntags: ["editor", "{tag}"]\nstatus: active\nsessionKey: {session}\n'
            f"sourceTurnIds: {json.dumps(turns)}\nreinforcement_count: {count}\n---\n\n{text}\n",
            encoding="utf-8",
        )


@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One new repository per module, copied for each case (it stores no absolute path)."""
    root = tmp_path_factory.mktemp("blank") / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    return root


def _consolidated(blank: Path, root: Path, names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Three near-duplicates under these file names, committed by a sync, then `remnic consolidate`."""
    shutil.copytree(blank, root, symlinks=True)
    _write(root, names)
    assert run_cli("sync", "run", "--quiet", "--memory-dir", str(root)).code == 0
    before = git(root, "rev-list", "--count", "HEAD")
    out = run_cli("consolidate", "--json", "--memory-dir", str(root))
    assert out.code == 0, out.err
    assert sorted((m["id"], m["into"]) for m in out.json()["merged"]) == [(B, A), (C, A)]
    assert int(git(root, "rev-list", "--count", "HEAD")) == int(before) + 1  # one commit for the pass
    assert git(root, "log", "-1", "--format=%s").startswith("remnic consolidate: 2 near-duplicate(s) merged")
    remaps = (root / "state" / "observation-ledger" / "primitive-remaps.jsonl").read_text().splitlines()
    assert sorted((r["from"], r["to"]) for r in map(json.loads, remaps)) == [(B, A), (C, A)]
    return {
        mid: parse_file((root / "preferences" / name).read_text(encoding="utf-8"), name).frontmatter
        for mid, name in names.items()
    }


def test_three_near_duplicates_merge_into_the_oldest_whatever_the_file_names(blank: Path, tmp_path: Path) -> None:
    newest_first = {C: "1c.md", B: "2b.md", A: "3a.md"}  # C scanned first: it built C → B → A before
    oldest_first = {A: "1a.md", B: "2b.md", C: "3c.md"}
    runs = [
        _consolidated(blank, tmp_path / "newest-first", newest_first),
        _consolidated(blank, tmp_path / "oldest-first", oldest_first),
    ]
    for fm in runs:
        survivor = fm[A]
        assert survivor["status"] == "active" and "mergedInto" not in survivor
        assert survivor["reinforcement_count"] == 2 + (1 + 3) + (1 + 1)  # every merge's count, none lost
        assert survivor["derived_from"] == [B, C]
        assert survivor["tags"] == ["editor", "dark", "theme", "ui"]
        assert survivor["sourceTurnIds"] == ["L1", "L5", "m3", "L9"]  # the merged ones' turns, once each, in order
        assert survivor["sessionKey"] == "sess-a" and survivor["sessionKeys"] == ["sess-a", "sess-b", "sess-c"]
        for merged in (B, C):
            assert fm[merged]["status"] == "archived" and fm[merged]["mergedInto"] == A  # never an archived one
            assert (
                "derived_from" not in fm[merged]
                and fm[merged]["reinforcement_count"] == dict((m[0], m[5]) for m in MEMORIES)[merged]
            )  # a merged memory is not reinforced first
    plain = [{mid: {k: v for k, v in fm.items() if k not in CLOCK_KEYS} for mid, fm in run.items()} for run in runs]
    assert plain[0] == plain[1]


def test_a_second_consolidate_merges_nothing_and_citations_name_every_session(blank: Path, tmp_path: Path) -> None:
    root = tmp_path / "mem"
    _consolidated(blank, root, {C: "1c.md", B: "2b.md", A: "3a.md"})
    head = git(root, "rev-parse", "HEAD")
    again = run_cli("consolidate", "--json", "--memory-dir", str(root))
    assert again.code == 0, again.err
    assert again.json()["merged"] == [] and again.json()["commit"] is None
    assert git(root, "rev-parse", "HEAD") == head
    out = run_cli("query", "dark mode in the code editor", "--citations", "--quiet", "--memory-dir", str(root))
    assert out.code == 0, out.err
    rollouts = out.out.split("<rollout_ids>\n", 1)[1].split("\n</rollout_ids>", 1)[0].splitlines()
    assert rollouts == ["sess-a", "sess-b", "sess-c"]


BRIDGED = [  # B is a near-duplicate of each; A and C name another editor, so they must never merge
    (A, 3, "Ana prefers dark mode in VSCode and in the terminal for late night coding sessions."),
    (B, 2, "Ana prefers dark mode in the editor and in the terminal for late night coding sessions."),
    (C, 1, "Ana prefers dark mode in Vim and in the terminal for late night coding sessions."),
]


def test_a_memory_bridged_in_by_another_is_not_merged_into_one_it_contradicts(blank: Path, tmp_path: Path) -> None:
    for order in ("abc", "cba"):
        root = tmp_path / order
        shutil.copytree(blank, root, symlinks=True)
        for rank, (mid, days, text) in enumerate(BRIDGED):
            when = _iso(days)
            name = f"{order.index('abc'[rank]) + 1}{'abc'[rank]}.md"
            (root / "preferences" / name).write_text(
                f"---\nid: {mid}\ncategory: preference\ncreated: {when}\nupdated: {when}\nsource: extraction\n"
                f"status: active\nsessionKey: s-{'abc'[rank]}\n---\n\n{text}\n",
                encoding="utf-8",
            )
        assert run_cli("sync", "run", "--quiet", "--memory-dir", str(root)).code == 0
        out = run_cli("consolidate", "--json", "--memory-dir", str(root))
        assert out.code == 0, out.err
        assert [(m["id"], m["into"]) for m in out.json()["merged"]] == [(B, A)], order
        with Memory.open(settings=settings_for(root)) as memory:
            assert memory.get(C).status == "active" and "mergedInto" not in memory.get(C).frontmatter
            assert memory.get(A).frontmatter["derived_from"] == [B]
