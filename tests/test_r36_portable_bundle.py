"""The original Remnic's export bundle imports; `export --format md` fences hold any text.

The original's `export --format json` writes a directory with manifest.json and bundle.json
(`{manifest: {format: "openclaw-engram-export", ...}, records: [{path, content}]}`, pretty-printed):
`remnic import DIR` restores each record at a memory path exactly, leaves the rest out by name, and
refuses a record outside the repository.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, snapshot_tree

from remnic.service.memory import Memory

FACT = (
    "---\nid: fact-1778750467412-q7kd\ncategory: fact\ncreated: 2026-05-14T09:21:07.412Z\n"
    "updated: 2026-05-14T09:21:07.412Z\nsource: extraction\nconfidence: 0.9\nconfidenceTier: explicit\n"
    'tags: ["db"]\n---\n\nThe team uses Postgres 15 for Atlas.\n'
)
DECISION = "---\nid: decision-1778750467999-ab12\ncategory: decision\n---\n\nWe ship on Tuesdays.\n"


def bundle(folder: Path, records: list[dict[str, str]], *, pretty: bool = True) -> Path:
    manifest = {
        "format": "openclaw-engram-export",
        "schemaVersion": 1,
        "createdAt": "2026-05-14T10:00:00.000Z",
        "pluginVersion": "9.0.0",
        "includesTranscripts": False,
        "files": [{"path": r["path"], "sha256": "0" * 64, "bytes": len(r["content"])} for r in records],
    }
    folder.mkdir(parents=True, exist_ok=True)
    indent = 2 if pretty else None
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=indent) + "\n")
    (folder / "bundle.json").write_text(json.dumps({"manifest": manifest, "records": records}, indent=indent) + "\n")
    return folder


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundles") / "mem"
    assert run_cli("init", str(root)).code == 0
    return root


@pytest.fixture
def repo(empty: Path, tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    shutil.copytree(empty, root, symlinks=True)
    return root


def test_the_originals_export_directory_imports_its_memories_exactly(repo: Path, tmp_path: Path) -> None:
    records = [
        {"path": "facts/2026-05-14/fact-1778750467412-q7kd.md", "content": FACT},
        {"path": "decisions/decision-1778750467999-ab12.md", "content": DECISION},
        {"path": "state/buffer.json", "content": "{}\n"},
        {"path": "profile.md", "content": "# Profile\n"},
        {"path": "workspace/IDENTITY.md", "content": "# Me\n"},
    ]
    folder = bundle(tmp_path / "orig-export", records)
    d = ("--memory-dir", str(repo))

    data = run_cli("import", str(folder), "--json", *d).json()
    assert data["imported"] == 2
    assert data["bundle"] == {
        "format": "openclaw-engram-export",
        "schemaVersion": 1,
        "records": 5,
        "leftOut": ["state/buffer.json", "profile.md", "workspace/IDENTITY.md"],
    }
    for record in records[:2]:
        assert (repo / record["path"]).read_text() == record["content"]  # byte for byte
    assert not (repo / "state" / "buffer.json").exists() and not (repo / "profile.md").exists()
    assert git(repo, "status", "--porcelain") == ""

    again = run_cli("import", str(folder / "bundle.json"), *d)  # its bundle.json, a second time
    assert again.code == 0, again
    assert "the original Remnic's export: 5 records, 2 at memory paths; left out 3 files" in again.out
    assert "records[0]: is fact-1778750467412-q7kd" in again.out and "nothing to import" in again.out


def test_a_one_line_bundle_imports_too(repo: Path, tmp_path: Path) -> None:
    folder = bundle(tmp_path / "compact", [{"path": "facts/x.md", "content": FACT}], pretty=False)
    result = run_cli("import", str(folder / "bundle.json"), "--dry-run", "--json", "--memory-dir", str(repo))
    assert result.code == 0 and result.json()["wouldImport"] == 1, result


def test_a_record_outside_the_repository_is_refused_and_nothing_is_written(repo: Path, tmp_path: Path) -> None:
    folder = bundle(
        tmp_path / "evil",
        [{"path": "facts/ok.md", "content": FACT}, {"path": "../outside.md", "content": DECISION}],
    )
    files, head = snapshot_tree(repo), git(repo, "rev-parse", "HEAD")
    result = run_cli("import", str(folder), "--memory-dir", str(repo))
    assert result.code == 2, result
    assert "bundle.json: records[1].path: '../outside.md' points outside the memory repository" in result.err
    assert snapshot_tree(repo) == files and git(repo, "rev-parse", "HEAD") == head
    assert not (repo.parent / "outside.md").exists()

    bad = bundle(tmp_path / "bad", [{"path": "facts/bad.md", "content": "---\nid: [\n---\n\nx\n"}])
    result = run_cli("import", str(bad), "--memory-dir", str(repo))
    assert result.code == 2 and "bundle.json: records[0].content:" in result.err, result


def test_other_json_and_directories_get_one_line_saying_what_import_reads(repo: Path, tmp_path: Path) -> None:
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps({"content": "x", "tags": ["a"]}, indent=2) + "\n")
    result = run_cli("import", str(pretty), "--memory-dir", str(repo))
    assert result.code == 2 and result.err.count("\n") == 1, result
    assert "not JSON Lines" in result.err

    folder = tmp_path / "plain-dir"
    folder.mkdir()
    result = run_cli("import", str(folder), "--memory-dir", str(repo))
    assert result.code == 2 and "is a directory" in result.err and "bundle.json" in result.err, result


def fenced(document: str, path: str) -> str:
    """The text of the fenced block under ``## path``, read the CommonMark way: the block ends at the
    first line of at least as many backticks as opened it (and nothing else)."""
    lines = document.split(f"\n## {path}\n", 1)[1].split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    fence = re.match(r"`+", lines[start])
    assert fence is not None
    end = next(
        i
        for i in range(start + 1, len(lines))
        if re.fullmatch(" {0,3}`{" + str(len(fence.group())) + r",}\s*", lines[i])
    )
    return "\n".join(lines[start + 1 : end])


@pytest.mark.parametrize(
    "body",
    ["Example:\n````\ncode with ``` inside\n````\nend", "Five `````: and ~~~ tildes\n~~~\nx\n~~~", "plain"],
)
def test_markdown_export_fences_hold_any_run_of_backticks(repo: Path, body: str) -> None:
    with Memory.open(repo) as memory:
        memory.defer_index(build_missing=False)
        record: Any = memory.store(body).record
        document = "".join(memory.export(fmt="md").items)
        text = memory.file_text(record.path)
    assert fenced(document, record.path) == text.rstrip("\n")
