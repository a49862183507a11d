"""`remnic export` never drops a file silently, and `remnic import` reads back what it wrote.

Real repositories in temp dirs, driven through the CLI as a user would: malformed and unreadable
files in an export, --json, an unknown --namespace, a BOM, problems in line order, and restore
lines edited outside their `file`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, snapshot_tree

from remnic.service.memory import Memory

BROKEN = "---\nid: mem_broken000000000001\ncategory: [fact\n---\n\nImportant user text\n"


def commit_file(root: Path, rel: str, data: bytes) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)
    git(root, "add", rel)
    git(root, "commit", "-qm", f"hand edit {rel}")


def export(root: Path, *args: str) -> Any:
    return run_cli("export", "--memory-dir", str(root), *args)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    root = tmp_path / "fresh"
    assert run_cli("init", str(root)).code == 0
    return root


# --- 1. a malformed file is carried, named, and refused by import until fixed ---


def test_export_carries_a_malformed_file_byte_for_byte_and_names_it(memory: Memory, tmp_path: Path) -> None:
    memory.store("Ana prefers tabs", category="preference")
    commit_file(memory.root, "facts/broken.md", BROKEN.encode())
    out = tmp_path / "e.jsonl"
    result = export(memory.root, "-o", str(out))
    assert result.code == 0, result.err
    assert "1 memory and 1 malformed file" in result.out
    assert "facts/broken.md" in result.err and "invalid YAML" in result.err
    (broken,) = [line for line in lines_of(out) if line["path"] == "facts/broken.md"]
    assert broken["file"] == BROKEN and broken["malformed"][0]["field"] == "frontmatter"
    assert "content" not in broken  # nothing is read from a file that does not parse

    data = export(memory.root, "-o", str(out), "--json").json()
    assert data["memories"] == 1 and [m["path"] for m in data["malformed"]] == ["facts/broken.md"]
    assert data["skipped"] == []
    piped = export(memory.root, "--json")  # JSONL on stdout stays JSONL; the report goes to stderr
    assert len(piped.out.splitlines()) == 2 and json.loads(piped.err)["malformed"][0]["path"] == "facts/broken.md"

    md = export(memory.root, "-f", "md")
    assert md.code == 0 and "Important user text" in md.out and "## facts/broken.md" in md.out
    assert "not a valid memory file" in md.out and "facts/broken.md" in md.err


def test_import_refuses_a_malformed_line_naming_it_and_restores_it_once_fixed(
    memory: Memory, tmp_path: Path, fresh: Path
) -> None:
    memory.store("Ana prefers tabs", category="preference")
    commit_file(memory.root, "facts/broken.md", BROKEN.encode())
    out = tmp_path / "e.jsonl"
    assert export(memory.root, "-o", str(out)).code == 0
    before = snapshot_tree(fresh)
    refused = run_cli("import", str(out), "--memory-dir", str(fresh))
    assert refused.code == 2
    assert f"{out}:1: frontmatter: invalid YAML" in refused.err and "(line 3 of `file`)" in refused.err
    assert f"{out}:1: malformed:" in refused.err and "leave the line out" in refused.err
    assert snapshot_tree(fresh) == before

    lines = lines_of(out)
    lines[0]["file"] = BROKEN.replace("[fact", "fact")
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    restored = run_cli("import", str(out), "--memory-dir", str(fresh), "--json")
    assert restored.code == 0, restored.err
    assert (fresh / "facts" / "broken.md").read_text() == lines[0]["file"]


def test_export_of_a_file_that_is_not_text_exits_1_and_names_it(memory: Memory, tmp_path: Path) -> None:
    memory.store("Ana prefers tabs", category="preference")
    commit_file(memory.root, "facts/latin.md", "---\ncategory: fact\n---\n\nCaf\xe9 au lait\n".encode("latin-1"))
    out = tmp_path / "e.jsonl"
    result = export(memory.root, "-o", str(out))
    assert result.code == 1
    assert "facts/latin.md: left out of the export" in result.err and "not UTF-8" in result.err
    assert "the export is incomplete: 1 memory file could not be exported" in result.err
    assert [line["content"] for line in lines_of(out)] == ["Ana prefers tabs"]  # the rest is still written
    data = export(memory.root, "-o", str(out), "--json")
    assert data.code == 1 and [s["path"] for s in data.json()["skipped"]] == ["facts/latin.md"]
    md = export(memory.root, "-f", "md")
    assert md.code == 1 and "facts/latin.md" in md.err and "## facts/latin.md" in md.out


# --- 2. --json gives JSON ---


def test_export_md_with_json_is_a_json_object_holding_the_document(memory: Memory) -> None:
    memory.store("Ana prefers tabs", category="preference")
    result = export(memory.root, "-f", "md", "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["format"] == "md" and data["memories"] == 1
    assert data["markdown"].startswith("# remnic export\n") and "Ana prefers tabs" in data["markdown"]


# --- 3. an unknown namespace ---


def test_export_of_a_namespace_no_file_is_in_warns_and_lists_the_namespaces(memory: Memory) -> None:
    memory.store("Ana prefers tabs", category="preference")
    memory.store("Bo leads the platform team", namespace="team-a")
    result = export(memory.root, "--namespace", "nonexistent")
    assert result.code == 0 and result.out == ""
    assert "'nonexistent'" in result.err and "namespaces here: default, team-a" in result.err
    data = export(memory.root, "--namespace", "nonexistent", "-f", "md", "--json").json()
    assert [w["field"] for w in data["warnings"]] == ["namespace"] and data["memories"] == 0
    ok = export(memory.root, "--namespace", "team-a")
    assert ok.code == 0 and ok.err == "" and "Bo leads the platform team" in ok.out


# --- 4. import: BOM, the key actually written, line order ---


def test_import_accepts_a_file_that_starts_with_a_utf8_bom(memory: Memory, tmp_path: Path) -> None:
    batch = tmp_path / "bom.jsonl"
    batch.write_text(json.dumps({"content": "Saved by Notepad"}) + "\n", encoding="utf-8-sig")
    result = run_cli("import", str(batch), "--memory-dir", str(memory.root), "--json")
    assert result.code == 0, result.err
    assert result.json()["imported"] == 1


def test_import_problems_name_the_key_written_and_come_in_line_order(memory: Memory, tmp_path: Path) -> None:
    batch = tmp_path / "bad.jsonl"
    lines = [{"content": "one"}, {"content": "two", "importanceScore": "high"}, {"content": "three"}]
    batch.write_text("".join(json.dumps(line) + "\n" for line in lines) + "\n{not json\n")
    result = run_cli("import", str(batch), "--memory-dir", str(memory.root), "--json")
    assert result.code == 2
    details = json.loads(result.err)["details"]
    assert [(d["line"], d["field"]) for d in details] == [(2, "importanceScore"), (5, "")]
    batch.write_text(json.dumps({"content": "two", "importance": 7}) + "\n")
    named = run_cli("import", str(batch), "--memory-dir", str(memory.root), "--json")
    assert [d["field"] for d in json.loads(named.err)["details"]] == ["importance"]


# --- 5. a restore line edited outside its `file` ---


def test_import_refuses_a_restore_line_whose_keys_disagree_with_its_file(
    memory: Memory, tmp_path: Path, fresh: Path
) -> None:
    memory.store("Ana prefers tabs", category="preference", tags=["style"])
    memory.store("Bo likes spaces", category="preference")
    out = tmp_path / "e.jsonl"
    assert export(memory.root, "-o", str(out)).code == 0
    lines = lines_of(out)
    lines[0].update(content="Ana prefers spaces now", tags=["style", "edited"])
    lines[1]["id"] = "mem_my_own_id"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = snapshot_tree(fresh)
    result = run_cli("import", str(out), "--memory-dir", str(fresh))
    assert result.code == 2
    assert f"{out}:1: content, tags: differ from the file in this line's `file`" in result.err
    assert (
        f"{out}:2: id: differs" in result.err
        and "drop `file` and `id` to import the line as a new memory" in result.err
    )
    assert snapshot_tree(fresh) == before

    for line in lines:  # as the message says: without `file` the edited line is a new memory
        del line["file"]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run_cli("import", str(out), "--memory-dir", str(fresh)).code == 0
    shown = run_cli("get", "mem_my_own_id", "--memory-dir", str(fresh), "--json").json()
    assert shown["content"] == "Bo likes spaces"
    listed = run_cli("list", "--memory-dir", str(fresh), "--json").json()["memories"]
    assert "Ana prefers spaces now" in [m["content"] for m in listed]


def test_an_unedited_export_still_restores_every_file_exactly(memory: Memory, tmp_path: Path, fresh: Path) -> None:
    memory.store("Ana prefers tabs", category="preference", tags=["style"])
    hand = "---\r\ncategory: fact\r\ntags: [weather]   # hand-written\r\ncreated: 2024-01-02\r\n---\r\n\r\nSky.\r\n"
    commit_file(memory.root, "facts/sky.md", hand.encode())
    out = tmp_path / "e.jsonl"
    assert export(memory.root, "-o", str(out)).code == 0
    result = run_cli("import", str(out), "--memory-dir", str(fresh))
    assert result.code == 0, result.err
    assert (fresh / "facts" / "sky.md").read_bytes() == hand.encode()


def test_import_restoring_a_file_as_the_last_commit_has_it_says_nothing_was_committed(
    memory: Memory, tmp_path: Path
) -> None:
    memory.store("The staging DB is on port 5433")
    dump = tmp_path / "all.jsonl"
    assert run_cli("export", "--memory-dir", str(memory.root), "--out", str(dump)).code == 0
    git(memory.root, "rm", "-q", memory.list()[0].path)  # a staged deletion: the user's, left alone
    said = run_cli("import", str(dump), "--memory-dir", str(memory.root))
    assert said.code == 0, said.err
    assert "in one commit ()" not in said.out and "nothing was committed" in said.out
