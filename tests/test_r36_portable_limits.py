"""What `remnic import` refuses or says in one line, and how it numbers a bundle's records.

- A restored file (a line with `file`, a bundle record) is held to store.maxContentChars, as a new
  memory's `content` is; a line too long for any memory is refused before it is parsed.
- A pretty-printed JSON array or object gets one line saying how to make JSON Lines of it.
- Ctrl-C after the import's commit landed (before its indexing) says the import is committed.
- A bundle's problems, skips and warnings all say `records[i]` (from 0); an unknown schemaVersion is
  named in a warning; a `supersedes` naming a memory superseded already is named by its line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, snapshot_tree
from test_r36_portable_import import lines

from remnic.service import importing
from remnic.service.memory import Memory

FACT = "---\nid: fact-1778750467412-q7kd\ncategory: fact\ncreated: 2026-05-14T09:21:07.412Z\n---\n\n{text}\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A repository where mem A is superseded by B (built once): (root, {old, new})."""
    root = tmp_path_factory.mktemp("limits") / "mem"
    assert run_cli("init", str(root)).code == 0
    with Memory.open(root) as memory:
        memory.defer_index(build_missing=False)
        old = memory.store("Deploys happen on Mondays", category="decision").record
        new = memory.store("Deploys happen on Tuesdays", category="decision").record
        memory.update(new.id, {"supersedes": old.id})
    return root, {"old": old.id, "new": new.id}


@pytest.fixture
def repo(base: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "mem"
    shutil.copytree(base[0], root, symlinks=True)
    return root, base[1]


def bundle(folder: Path, records: list[dict[str, str]], version: int = 1) -> Path:
    manifest = {"format": "openclaw-engram-export", "schemaVersion": version, "files": []}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bundle.json").write_text(json.dumps({"manifest": manifest, "records": records}, indent=2) + "\n")
    return folder


def test_restored_files_are_held_to_max_content_chars(repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = repo
    d = ("--memory-dir", str(root))
    files, head = snapshot_tree(root), git(root, "rev-parse", "HEAD")
    body = "x" * 20_001  # one more than the default store.maxContentChars
    source = lines(
        tmp_path / "big.jsonl", {"content": "fine"}, {"path": "facts/big.md", "file": FACT.format(text=body)}
    )
    result = run_cli("import", source, *d)
    assert result.code == 2, result
    assert "big.jsonl:2: file: the memory's text (the body after the frontmatter) is 20001 characters" in result.err
    assert "the limit is 20000 (store.maxContentChars)" in result.err

    record = {"path": "facts/2026-05-14/fact-1778750467412-q7kd.md", "content": FACT.format(text=body)}
    result = run_cli("import", str(bundle(tmp_path / "b", [record])), *d)
    assert result.code == 2 and "bundle.json: records[0].content: the memory's text" in result.err, result
    assert "store.maxContentChars" in result.err

    # A line longer than any line holding such a memory can be is refused by its size, before parsing.
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"content": "ok"}\n{"content": "' + "y" * 5_000_000 + '"}\n', encoding="utf-8")
    result = run_cli("import", str(huge), *d)
    assert result.code == 2, result
    assert "huge.jsonl:2: the line is 5000016 bytes" in result.err and "store.maxContentChars" in result.err
    assert snapshot_tree(root) == files and git(root, "rev-parse", "HEAD") == head


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ([{"content": "a"}, {"content": "b", "tags": ["x"]}], "is one JSON array spread over several lines"),
        ({"content": "a", "tags": ["x"]}, "is one JSON object spread over several lines"),
    ],
)
def test_pretty_printed_json_gets_one_line_saying_how_to_convert_it(
    repo: tuple[Path, dict[str, str]], tmp_path: Path, value: Any, said: str
) -> None:
    root, _ = repo
    for name, text in (
        ("a.json", json.dumps(value, indent=2)),
        ("b.json", json.dumps(value).replace(", ", ",\n", 1)),  # line 1 `[{"content": "a"},`, another formatter
    ):
        path = tmp_path / name
        path.write_text(text + "\n", encoding="utf-8")
        result = run_cli("import", str(path), "--dry-run", "--memory-dir", str(root))
        assert result.code == 2 and result.err.count("\n") == 1, result
        assert said in result.err
        command = f"jq -c '.[]' {path} > {path.with_suffix('.jsonl')}" if isinstance(value, list) else "jq -c ."
        assert command in result.err


def test_ctrl_c_once_the_commit_landed_says_the_import_is_committed(
    repo: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = repo

    def interrupted(mem: Memory, written: Any) -> None:  # just after the commit, before indexing
        raise KeyboardInterrupt

    monkeypatch.setattr(importing, "_after_write", interrupted)
    head = git(root, "rev-parse", "HEAD").strip()
    result = run_cli("import", lines(tmp_path / "c.jsonl", {"content": "Cut short"}), "--memory-dir", str(root))
    assert result.code == 130, result
    commit = git(root, "rev-parse", "HEAD").strip()
    assert commit != head
    assert f"remnic: interrupted: the import is committed (1 memory, {commit[:8]})" in result.err
    assert "catches the index up" in result.err


def test_a_bundle_numbers_its_records_one_way(repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = repo
    d = ("--memory-dir", str(root))
    path = "facts/2026-05-14/fact-1778750467412-q7kd.md"
    twice = bundle(tmp_path / "twice", [{"path": path, "content": FACT.format(text="A")}] * 2)
    result = run_cli("import", str(twice), *d)
    assert result.code == 2, result
    assert f"records[1].path: '{path}' is used again (first at records[0])" in result.err
    assert "line" not in result.err.replace("JSON Lines", "")

    once = bundle(tmp_path / "once", [{"path": "profile.md", "content": "# Me\n"}, {"path": path, "content": FACT}])
    assert run_cli("import", str(once), *d).code == 0
    again = run_cli("import", str(once), *d)
    assert "  records[1]: is fact-1778750467412-q7kd" in again.out, again
    skipped = run_cli("import", str(once), "--dry-run", "--json", *d).json()["skipped"]
    assert skipped[0]["record"] == 1 and "line" not in skipped[0]


def test_an_unknown_schema_version_is_named_in_a_warning(repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = repo
    folder = bundle(tmp_path / "v3", [{"path": "facts/x.md", "content": FACT.format(text="B")}], version=3)
    result = run_cli("import", str(folder), "--dry-run", "--memory-dir", str(root))
    assert result.code == 0, result
    assert "warning: manifest.schemaVersion: is 3, which this reader does not know (it knows 1 and 2)" in result.err
    data = run_cli("import", str(folder), "--json", "--memory-dir", str(root)).json()
    assert data["imported"] == 1 and data["warnings"][0]["field"] == "manifest.schemaVersion"


def test_supersedes_naming_a_superseded_memory_is_named_by_its_line(
    repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, ids = repo
    source = lines(tmp_path / "s.jsonl", {"content": "filler"}, {"content": "Mondays again", "supersedes": ids["old"]})
    result = run_cli("import", source, "--memory-dir", str(root))
    assert result.code == 2, result
    assert f"s.jsonl:2: supersedes: {ids['old']}" in result.err and "already superseded" in result.err
    data = run_cli("import", source, "--json", "--memory-dir", str(root))
    assert json.loads(data.err)["details"][0]["line"] == 2


def test_later_lines_pretty_printed_get_the_jq_hint(repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = repo
    path = tmp_path / "mixed.jsonl"
    text = json.dumps({"content": "one line"}) + "\n" + json.dumps({"content": "pretty", "tags": ["x"]}, indent=2)
    path.write_text(text + "\n", encoding="utf-8")
    result = run_cli("import", str(path), "--dry-run", "--memory-dir", str(root))
    assert result.code == 2, result
    head = result.err.splitlines()[0]
    assert "from line 2 on, JSON is spread over several lines (pretty-printed)" in head
    # the output is never the input: `> mixed.jsonl` would empty the file before jq reads it
    assert f"`jq -c . {path} > {tmp_path / 'mixed.lines.jsonl'}`" in head
    assert "mixed.jsonl:2: invalid JSON" in result.err
    # a file whose bad lines are not pretty-printed JSON gets no such hint
    path.write_text(json.dumps({"content": "ok"}) + "\nnot json\n", encoding="utf-8")
    result = run_cli("import", str(path), "--dry-run", "--memory-dir", str(root))
    assert result.code == 2 and "pretty-printed" not in result.err, result
