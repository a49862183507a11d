"""Consolidation merges a memory only into a survivor it is itself a near-duplicate of, and never
beside a member it differs concretely from: a drifting series keeps its detailed later notes active,
two members naming other editors never share one survivor (in one pass or over two), and a memory
others were merged into is never merged itself, so every ``mergedInto`` names an active memory."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.service import Memory

A, B, C, D, E = (f"mem_{c * 20}" for c in "abcde")
NOW = time.time()


def _write(root: Path, name: str, mid: str, days: int, text: str) -> None:
    when = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(NOW - days * 86400))
    (root / "preferences" / name).write_text(
        f"---\nid: {mid}\ncategory: preference\ncreated: {when}\nupdated: {when}\nsource: extraction\n"
        f"status: active\nsessionKey: s-{mid[-1]}\n---\n\n{text}\n",
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One new repository per module, copied for each case (it stores no absolute path)."""
    root = tmp_path_factory.mktemp("blank") / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    return root


def _consolidate(root: Path) -> list[tuple[str, str]]:
    assert run_cli("sync", "run", "--quiet", "--memory-dir", str(root)).code == 0
    out = run_cli("consolidate", "--json", "--memory-dir", str(root))
    assert out.code == 0, out.err
    return sorted((m["id"], m["into"]) for m in out.json()["merged"])


def _repo(blank: Path, root: Path, rows: list[tuple[str, int, str]], newest_first: bool) -> Path:
    """The rows as memory files, named so the scan meets them oldest first or newest first."""
    shutil.copytree(blank, root, symlinks=True)
    ranked = sorted(rows, key=lambda r: r[1], reverse=not newest_first)  # by days ago
    for rank, (mid, days, text) in enumerate(ranked):
        _write(root, f"{rank}-{mid[-1]}.md", mid, days, text)
    return root


def _query(root: Path, text: str) -> list[str]:
    out = run_cli("query", text, "-k", "3", "--json", "--memory-dir", str(root))
    assert out.code == 0, out.err
    return [hit["id"] for hit in out.json()["hits"]]


def _no_chain(root: Path) -> None:
    """Every merged memory names a survivor that is still active."""
    with Memory.open(settings=settings_for(root)) as memory:
        for record in memory.files.scan().records:
            into = record.frontmatter.get("mergedInto")
            if into:
                assert record.status == "archived" and memory.get(into).status == "active", record.id


DRIFT = [  # each adds a detail; A and E are not near-duplicates (cosine < the floor, few shared words)
    (A, 5, "Ana prefers dark mode in the editor."),
    (B, 4, "Ana prefers dark mode in her code editor."),
    (C, 3, "Ana prefers dark mode in her code editor and terminal."),
    (D, 2, "Ana prefers dark mode in her code editor and terminal on weekends."),
    (E, 1, "Ana prefers dark mode in her code editor, terminal and browser on weekends."),
]


def test_a_drifting_series_is_not_folded_into_its_first_member(blank: Path, tmp_path: Path) -> None:
    for newest_first in (True, False):
        root = _repo(blank, tmp_path / f"drift-{newest_first}", DRIFT, newest_first)
        # D and E are no near-duplicates of A: they merge into each other, not into A
        assert _consolidate(root) == [(B, A), (C, A), (E, D)], newest_first
        _no_chain(root)
        with Memory.open(settings=settings_for(root)) as memory:
            assert memory.get(D).status == "active" and memory.get(D).frontmatter["derived_from"] == [E]
            assert memory.get(A).frontmatter["derived_from"] == [B, C]
        assert _query(root, "dark mode in the browser on weekends")[0] == D  # the detail stays recalled
        assert _consolidate(root) == []  # a second pass merges nothing


EDITORS = [  # B and C are near-duplicates of A, but name two other editors
    (A, 3, "Ana prefers dark mode in the editor and in the terminal for late night coding sessions."),
    (B, 2, "Ana prefers dark mode in VSCode and in the terminal for late night coding sessions."),
    (C, 1, "Ana prefers dark mode in Vim and in the terminal for late night coding sessions."),
]


def test_two_members_that_differ_concretely_never_share_a_survivor(blank: Path, tmp_path: Path) -> None:
    for newest_first in (True, False):
        root = _repo(blank, tmp_path / f"editors-{newest_first}", EDITORS, newest_first)
        assert _consolidate(root) == [(B, A)], newest_first
        _no_chain(root)
        with Memory.open(settings=settings_for(root)) as memory:
            assert memory.get(C).status == "active" and "mergedInto" not in memory.get(C).frontmatter
        assert C in _query(root, "Which editor does Ana use, Vim?")
        assert _consolidate(root) == []


def test_a_later_pass_keeps_apart_what_an_earlier_pass_merged(blank: Path, tmp_path: Path) -> None:
    """Vim arrives after VSCode was merged into the generic note: it is not merged beside it."""
    root = _repo(blank, tmp_path / "later", EDITORS[:2], True)
    assert _consolidate(root) == [(B, A)]
    _write(root, "late-c.md", *EDITORS[2])
    assert _consolidate(root) == []
    with Memory.open(settings=settings_for(root)) as memory:
        assert memory.get(C).status == "active" and memory.get(A).frontmatter["derived_from"] == [B]


SAME = [
    (A, 3, "Ana prefers dark mode in her code editor."),
    (B, 2, "Ana prefers dark mode in the code editor."),
    (C, 1, "Ana prefers the dark mode in the code editor."),
]


def test_a_memory_others_were_merged_into_is_never_merged_itself(blank: Path, tmp_path: Path) -> None:
    """An older near-duplicate pulled in later finds B already a survivor: B stays active (and, held,
    takes A in), so C's ``mergedInto`` keeps naming an active memory (no chain across passes)."""
    root = _repo(blank, tmp_path / "pulled", SAME[1:], True)
    assert _consolidate(root) == [(C, B)]
    _write(root, "pulled-a.md", *SAME[0])
    assert _consolidate(root) == [(A, B)]
    _no_chain(root)
