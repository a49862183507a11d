"""A caller's key one slip from a key remnic acts on (``Status``, ``tag``, ``categroy``) is refused before
anything is written, naming the key meant; foreign keys that are not so close stay the user's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, run_remnic, snapshot_tree

from remnic import Memory, ValidationError

FOREIGN = [
    "aliases",
    "alias",
    "tag",
    "title",
    "date",
    "author",
    "authors",
    "source_url",
    "sourceUrl",
    "url",
    "type",
    "kind",
    "link",
    "sources",
    "categories",
    "description",
    "summary",
    "related",
    "context",
    "project",
    "priority",
    "state",
    "createdBy",
    "updatedBy",
    "created_at",
    "modified",
    "lastmod",
    "uid",
    "permalink",
    "cssclasses",
    "publish",
    "draft",
    "superseded",
    "archivedAt",
    "sourceTurnIds",
    "reviewedAt",
    "validUntil",
    "mood",
]
"""Keys a vault (Obsidian, Jekyll, Hugo…) or remnic itself often has: never a near miss."""


def _head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def test_update_with_a_case_variant_or_misspelt_key_is_refused_and_writes_nothing(memory: Memory) -> None:
    stored = memory.store("Otters hold hands while sleeping")
    before, files = _head(memory.root), snapshot_tree(memory.root)
    with pytest.raises(ValidationError) as caught:
        memory.update(stored.id, {"Status": "forgotten", "Tags": ["animals"]})
    by_field = {p.field: p.message for p in caught.value.problems}
    assert set(by_field) == {"Status", "Tags"}
    assert "did you mean 'status'?" in by_field["Status"] and "did you mean 'tags'?" in by_field["Tags"]
    assert _head(memory.root) == before and snapshot_tree(memory.root) == files
    assert memory.get(stored.id).status == "active"
    for key, meant in (("categroy", "category"), ("importanse", "importance"), ("confidence_tier", "confidenceTier")):
        with pytest.raises(ValidationError, match=f"did you mean '{meant}'"):
            memory.update(stored.id, {key: "decision"})
    with pytest.raises(ValidationError, match="the key is importanceScore"):  # the hint for an argument
        memory.update(stored.id, {"importanse": 0.9})
    assert _head(memory.root) == before


def test_foreign_keys_stay_accepted_on_update_import_and_store(memory: Memory) -> None:
    stored = memory.store("Release notes live in the wiki")
    result = memory.update(stored.id, {key: f"v-{i}" for i, key in enumerate(FOREIGN)})
    assert result.changed
    frontmatter = memory.get(stored.id).frontmatter
    assert all(frontmatter[key] == f"v-{i}" for i, key in enumerate(FOREIGN))
    imported = memory.import_records([{"content": "Ana prefers tabs", **{key: "x" for key in FOREIGN}}])
    assert imported.changed
    assert memory.store("Bo prefers spaces", extra={key: "y" for key in FOREIGN}).changed
    before = _head(memory.root)
    with pytest.raises(ValidationError) as caught:  # one near miss among them refuses the batch
        memory.import_records([{"content": "Cy prefers vim", "title": "editors"}, {"content": "x", "Tags": "y"}])
    assert [(p.field, p.line) for p in caught.value.problems] == [("Tags", 2)]
    assert _head(memory.root) == before


def test_a_near_miss_key_may_still_be_removed_and_hand_edits_are_untouched(memory: Memory) -> None:
    stored = memory.store("The cache TTL is five minutes")
    path = memory.root / stored.record.path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status: active", "status: active\ntag: legacy\nStatus: draft"), encoding="utf-8")
    git(memory.root, "commit", "-qam", "hand edit")  # a user's own file keeps its keys
    assert memory.get(stored.id).frontmatter["tag"] == "legacy"
    with pytest.raises(ValidationError, match="did you mean 'category'"):  # a key the file lacks: a typo
        memory.update(stored.id, {"Category": "decision"})
    assert memory.update(stored.id, {"Status": "review"}).changed  # the file's own key: no typo (v2 finding 2)
    memory.update(stored.id, {"tag": None, "Status": None})  # removing one is no typo
    frontmatter = memory.get(stored.id).frontmatter
    assert "tag" not in frontmatter and "Status" not in frontmatter and frontmatter["status"] == "active"


def test_store_extra_with_a_near_miss_key_is_refused(memory: Memory) -> None:
    before = _head(memory.root)
    with pytest.raises(ValidationError) as caught:
        memory.store("We deploy on Fridays", extra={"Category": "decision"})
    assert caught.value.problems[0].field == "extra.Category"
    assert "did you mean 'category'?" in caught.value.problems[0].message
    assert _head(memory.root) == before


def test_cli_import_of_a_misspelt_key_names_the_line_and_imports_nothing(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root).close()
    lines = tmp_path / "typo.jsonl"
    lines.write_text(
        '{"content":"Ana prefers tabs","category":"preference"}\n'
        '{"content":"We deploy on Fridays","categroy":"decision"}\n',
        encoding="utf-8",
    )
    before = _head(root)
    result = run_remnic("import", str(lines), "--memory-dir", str(root))
    assert result.code == 2, result.err
    assert "typo.jsonl:2: categroy:" in result.err and "did you mean 'category'?" in result.err
    assert _head(root) == before
    as_json = run_remnic("import", str(lines), "--memory-dir", str(root), "--json")
    detail = json.loads(as_json.err)["details"][0]
    assert as_json.code == 2 and detail["field"] == "categroy" and detail["line"] == 2
    lines.write_text('{"content":"We deploy on Fridays","category":"decision","aliases":["deploys"]}\n')
    assert run_remnic("import", str(lines), "--memory-dir", str(root)).code == 0
    assert list((root / "decisions").glob("*.md"))
    # the CLI's update and forget write remnic's own keys (forgottenAt, archivedAt…): never refused
    with Memory.open(root) as memory:
        stored = {"id": memory.store("Ana prefers spaces").id}
    updated = run_remnic("update", stored["id"], "--status", "archived", "--tags", "a,b", "--memory-dir", str(root))
    assert updated.code == 0, updated.err
    forgot = run_remnic("forget", stored["id"], "--reason", "obsolete", "--memory-dir", str(root))
    assert forgot.code == 0, forgot.err
