"""The near-miss key check (v2 finding 2) refuses a caller's slip, never a key that is no slip: a key the
memory's own file already holds (an adopted note's `Status:`), a key remnic reads (`tag`, `alias`, the time
keys), a key given beside the one it is close to, and every key of a line `remnic export` wrote (its
`contentHash` fits its text). A developer's `{"Status": "forgotten"}` on a memory without one is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, run_cli, snapshot_tree

from remnic import Memory, ValidationError

NOTE = (
    "---\ntag: meeting\nStatus: Done\nCreated: 2024-03-01\nTags: [q2, billing]\nContext: weekly sync\n---\n"
    "Met with Ana about the Q2 roadmap; she wants the billing rewrite first.\n"
)


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "meeting.md").write_text(NOTE, encoding="utf-8")
    assert run_cli("init", str(root), "--adopt", "notes/**").code == 0
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    return root


def _head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def test_update_changes_an_adopted_notes_own_keys_and_still_refuses_a_slip(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    with Memory.open(root) as memory:
        note = memory.get("notes/meeting.md")
        assert memory.update(note.id, {"tag": "meeting/weekly"}).changed  # remnic reads it as tags
        assert memory.update(note.id, {"Status": "In progress", "Tags": ["q3"], "Created": "2024-03-02"}).changed
        fm = memory.get(note.id).frontmatter
        assert (fm["tag"], fm["Status"], fm["Tags"], fm["Created"]) == (
            "meeting/weekly",
            "In progress",
            ["q3"],
            "2024-03-02",
        )
        assert fm["status"] == "active"
        assert "In progress" not in git(root, "status", "--porcelain")  # committed
        # A memory whose file has no `Status`: the developer's slip of h5 finding 1 is still refused.
        stored = memory.store("The staging DB port is 5432.")
        before, files = _head(root), snapshot_tree(root)
        with pytest.raises(ValidationError) as caught:
            memory.update(stored.id, {"Status": "forgotten"})
        assert [p.field for p in caught.value.problems] == ["Status"]
        assert "did you mean 'status'?" in str(caught.value)
        for slip in ("Tag", "Tags", "Created"):  # spellings remnic does not read, on a file without them
            with pytest.raises(ValidationError, match=f"^{slip}: is not a key remnic knows"):
                memory.update(stored.id, {slip: "x"})
        assert _head(root) == before and snapshot_tree(root) == files
        assert memory.get(stored.id).status == "active"
        # keys remnic reads are never a slip, on any write
        assert memory.update(stored.id, {"tag": "ops", "alias": "db port", "created_at": "2024-01-01"}).changed
        assert memory.store("Bo prefers spaces.", extra={"tag": "style", "alias": "Bo"}).changed


def test_an_export_of_an_adopted_note_imports_again_without_file_and_id(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    out = tmp_path / "exp.jsonl"
    assert run_cli("export", "--out", str(out), "--memory-dir", str(root)).code == 0
    [line] = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    new = {k: v for k, v in line.items() if k not in ("file", "id")}  # the documented recipe
    fresh = tmp_path / "fresh"
    assert run_cli("init", str(fresh)).code == 0
    lines = tmp_path / "new.jsonl"
    lines.write_text(json.dumps(new) + "\n", encoding="utf-8")
    result = run_cli("import", str(lines), "--memory-dir", str(fresh), "--json")
    assert result.code == 0, result
    [written] = list((fresh / "facts").glob("*.md"))
    text = written.read_text(encoding="utf-8")
    for said in ("tag: meeting", "Status: Done", "Created: 2024-03-01", "Context: weekly sync", "status: active"):
        assert said in text, text

    # Without its path or contentHash too, the keys beside their remnic twins still pass; `Tags` with no
    # `tags` beside it is then a caller's slip again.
    bare = {k: v for k, v in new.items() if k not in ("path", "storeInclude", "contentHash", "Tags")}
    bare["content"] = "Met with Bo about the Q3 roadmap."
    lines.write_text(json.dumps(bare) + "\n" + json.dumps({**bare, "content": "x", "Tags": ["a"]}) + "\n")
    before = _head(fresh)
    refused = run_cli("import", str(lines), "--memory-dir", str(fresh), "--json")
    assert refused.code == 2, refused
    assert [(d["field"], d["line"]) for d in json.loads(refused.err)["details"]] == [("Tags", 2)]
    assert _head(fresh) == before
    lines.write_text(json.dumps(bare) + "\n")
    assert run_cli("import", str(lines), "--memory-dir", str(fresh)).code == 0


def test_a_hand_typed_import_line_with_a_slip_is_still_refused(memory: Memory) -> None:
    before = _head(memory.root)
    with pytest.raises(ValidationError) as caught:
        memory.import_records(
            [
                {"content": "Ana prefers tabs", "Status": "forgotten"},
                {"content": "Bo prefers vim", "contentHash": "sha256:" + "0" * 64, "categroy": "preference"},
            ]
        )
    assert [(p.field, p.line) for p in caught.value.problems] == [("Status", 1), ("categroy", 2)]
    assert _head(memory.root) == before
    ok = memory.import_records([{"content": "Cy prefers emacs", "tag": "editors", "alias": "Cy"}])
    assert ok.changed and ok.records[0].frontmatter["tag"] == "editors"
