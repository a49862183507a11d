"""What `remnic import` says about what it changed and refused, and what a new memory's line takes.

- A line whose `supersedes` names a memory here rewrites that memory in the import's commit: the
  output names it (text, and --json alsoChanged as `versions revert` has it), and the line takes its
  category, tags and importance unless it gives them (as `store --supersedes`).
- A restored superseded file whose successor is in neither the repository nor the import is a warning.
- Refusals say the real reason (a column, a BOM, a path, a clash); archived lines get archivedAt.
- Ctrl-C while indexing says the import is committed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.service.memory import Memory

SUPERSEDED_FILE = """\
---
id: mem_0000stranded
category: decision
created: 2026-01-01T00:00:00.000Z
updated: 2026-01-01T00:00:00.000Z
status: superseded
supersededBy: {successor}
---

Deploys happened on Tuesdays
"""
PLAIN_FILE = "---\nid: {id}\ncategory: fact\ncreated: 2026-01-01T00:00:00.000Z\n---\n\n{text}\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A repository holding one decision (tags ops, importance 0.9), built once: (root, its fields)."""
    root = tmp_path_factory.mktemp("imports") / "mem"
    assert run_cli("init", str(root)).code == 0
    with Memory.open(root) as memory:
        memory.defer_index(build_missing=False)
        record = memory.store("Deploys happen on Mondays", category="decision", tags=["ops"], importance=0.9).record
    return root, {"id": record.id, "path": record.path}


@pytest.fixture
def repo(base: tuple[Path, dict[str, Any]], tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "mem"
    shutil.copytree(base[0], root, symlinks=True)
    return root, base[1]


def lines(path: Path, *items: dict[str, Any]) -> str:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return str(path)


def test_a_superseding_line_names_the_memory_it_changed_and_takes_its_category(
    repo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    root, old = repo
    d = ("--memory-dir", str(root))
    result = run_cli(
        "import", lines(tmp_path / "a.jsonl", {"content": "Deploys happen on Wednesdays", "supersedes": old["id"]}), *d
    )
    assert result.code == 0, result
    with Memory.open(root) as memory:
        new = next(r for r in memory.list() if "Wednesdays" in r.content)
        assert memory.get(old["id"]).status == "superseded"
    assert f"also changed in that commit:\n  {old['id']} ({old['path']}) superseded by {new.id}" in result.out
    assert (new.category, new.tags, new.frontmatter.get("importanceScore")) == ("decision", ["ops"], 0.9)

    # A line that gives its category keeps it; --json names the memory it changed as alsoChanged.
    line = {"content": "Deploys happen on Fridays", "supersedes": new.id, "category": "fact", "tags": []}
    data = run_cli("import", lines(tmp_path / "b.jsonl", line), "--json", *d).json()
    with Memory.open(root) as memory:
        newest = memory.get(data["ids"][0])
        changed = memory.get(new.id)
    assert data["alsoChanged"] == [{"id": new.id, "path": changed.path, "change": "superseded", "by": newest.id}]
    assert (newest.category, newest.tags) == ("fact", [])
    assert git(root, "status", "--porcelain") == ""


def test_a_restored_superseded_file_without_its_successor_is_a_warning(
    repo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    root, _old = repo
    d = ("--memory-dir", str(root))
    stranded = {"path": "decisions/old-deploys.md", "file": SUPERSEDED_FILE.format(successor="mem_0000missing")}
    source = lines(tmp_path / "s.jsonl", stranded)

    dry = run_cli("import", source, "--dry-run", *d)
    assert dry.code == 0, dry
    assert "warning: line 1: supersededBy: decisions/old-deploys.md is restored as superseded" in dry.err
    assert "'mem_0000missing'" in dry.err and "remnic update mem_0000stranded --status active" in dry.err

    data = run_cli("import", source, "--json", *d).json()
    assert data["imported"] == 1
    assert [(w["field"], w["line"]) for w in data["warnings"]] == [("supersededBy", 1)]

    # Its successor in the same import: nothing to warn about.
    successor = {
        "path": "facts/new-deploys.md",
        "file": PLAIN_FILE.format(id="mem_0000missing", text="Deploys on Fridays"),
    }
    stranded["path"] = "decisions/old-deploys-2.md"
    stranded["file"] = stranded["file"].replace("mem_0000stranded", "mem_0000other")
    again = run_cli("import", lines(tmp_path / "t.jsonl", stranded, successor), "--dry-run", "--json", *d).json()
    assert again["wouldImport"] == 2 and again["warnings"] == []


def test_line_errors_give_the_real_column_and_say_what_a_bom_is(
    repo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    root, _old = repo
    path = tmp_path / "m.jsonl"
    path.write_text('{"content": "ok"}\n\ufeff{"content": "bom"}\n{"content": "bad"\n', encoding="utf-8")
    result = run_cli("import", str(path), "--memory-dir", str(root))
    assert result.code == 2, result
    assert f"{path}:3: invalid JSON: Expecting ',' delimiter (column 18)" in result.err, result.err
    assert f"{path}:2: starts with a byte order mark (U+FEFF)" in result.err
    assert "utf-8-sig" not in result.err


def test_restore_refusals_say_the_real_reason(repo: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, old = repo
    text = PLAIN_FILE.format(id="mem_0000fresh", text="Fresh")
    source = lines(
        tmp_path / "p.jsonl",
        {"path": "state/x.md", "file": text},
        {"path": "namespaces/../facts/y.md", "file": text.replace("fresh", "fresh2")},
        {"path": "facts/z.md", "namespace": "work", "file": text.replace("fresh", "fresh3")},
        {"path": old["path"], "file": text.replace("fresh", "fresh4")},
        {"path": "facts/w.md", "file": PLAIN_FILE.format(id=old["id"], text="Other text")},
    )
    result = run_cli("import", source, "--json", "--memory-dir", str(root))
    assert result.code == 2, result
    said = {p["line"]: p for p in json.loads(result.err)["details"]}
    assert "state/, where remnic (and the original Remnic) keep their own records" in said[1]["message"]
    assert "hidden" not in said[1]["message"]
    assert "give it from the repository root as 'facts/y.md'" in said[2]["message"]
    assert said[3]["field"] == "namespace" and "puts the file in namespace 'default'" in said[3]["message"]
    assert "already exists in this repository with other text" in said[4]["message"]
    assert "drop `file` and `id`" in said[4]["message"]
    assert said[5]["field"] == "id" and "with other text" in said[5]["message"]
    assert "drop `file` and `id`" in said[5]["message"]


def test_archived_and_forgotten_lines_get_their_times(repo: tuple[Path, dict[str, Any]]) -> None:
    root, _old = repo
    with Memory.open(root) as memory:
        memory.defer_index(build_missing=False)
        result = memory.import_records(
            [
                {"content": "Bob left Acme", "status": "archived"},
                {"content": "A dropped idea", "status": "forgotten"},
                {"content": "Kept its own", "status": "archived", "archivedAt": "2025-01-02T03:04:05.000Z"},
            ]
        )
        got = {r.content: r.frontmatter for r in result.records}
    assert got["Bob left Acme"]["archivedAt"] == got["A dropped idea"]["forgottenAt"]
    assert str(got["Kept its own"]["archivedAt"]).startswith("2025-01-02")


def test_ctrl_c_while_indexing_says_the_import_is_committed(
    repo: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _old = repo

    def interrupted(self: Memory, progress: Any = None) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(Memory, "refresh_index", interrupted)
    head = git(root, "rev-parse", "HEAD")
    result = run_cli("import", lines(tmp_path / "c.jsonl", {"content": "Cut short"}), "--memory-dir", str(root))
    assert result.code == 130, result
    commit = git(root, "rev-parse", "HEAD").strip()
    assert commit != head.strip()
    assert f"remnic: interrupted: the import is committed (1 memory, {commit[:8]})" in result.err
    assert "catches the index up" in result.err
    as_json = run_cli(
        "import", lines(tmp_path / "e.jsonl", {"content": "Cut again"}), "--json", "--memory-dir", str(root)
    )
    assert as_json.code == 130 and "the import is committed" in json.loads(as_json.err)["error"]
