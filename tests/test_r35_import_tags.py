"""Import as a new memory keeps the tags a file meant, and one tag rule holds on every path.

A hand-written note's tags (``tags`` or, without it, ``tag``; a string split as the reader splits it)
survive export, dropping ``file`` and ``id``, and import into another repository. A tag the rule
refuses (a comma, a newline, over 64 characters) is kept in a file that holds one, found by its
name and named by ``remnic doctor``; every write refuses it, naming the line, the field and the rule.

Real repositories in temp dirs, driven through the CLI and the service.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.errors import ValidationError
from remnic.memfile.model import parse_file
from remnic.service.memory import Memory

# file name → the frontmatter lines for its tags; each note's text is unique, to find it after import
NOTES = {
    "tag-only": "tag: ops",
    "tag-string": 'tag: "ops, release"',
    "tag-hashes": 'tag: "#ops #release"',
    "tag-list": "tag: [ops, deploy]",
    "tags-words": "tags: ops release",
    "tags-hash-list": 'tags: [ops, "#release"]',
    "tags-and-tag": "tags: [ops]\ntag: other",
}
RULE = "a tag is up to 64 characters with no comma or newline; a comma separates two tags"


def _dir(root: Path) -> tuple[str, str]:
    return ("--memory-dir", str(root))


def _as_new(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `export --help` recipe: drop `file` and `id` (and `path`) to import a line as a new memory."""
    return [{k: v for k, v in line.items() if k not in ("file", "id", "path")} for line in lines]


def _write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A source repository holding hand-written notes (and one comma tag) adopted by sync, its export,
    and a target repository the notes were imported into as new memories."""
    base = tmp_path_factory.mktemp("r35tags")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(base / "home"))
        blank, source, target = base / "blank", base / "source", base / "target"
        Memory.init(blank, settings=settings_for(blank)).close()
        for root in (source, target):  # a copy of one new repository: it stores no absolute path
            shutil.copytree(blank, root, symlinks=True)
        for name, tags in NOTES.items():
            text = f"---\ncategory: fact\n{tags}\n---\n\nNote {name} about the deploy pipeline\n"
            (source / "facts" / f"{name}.md").write_text(text, encoding="utf-8")
        comma = '---\ncategory: fact\ntags:\n  - "quoted, comma"\n  - plain\n---\n\nA note with a comma tag\n'
        (source / "facts" / "comma.md").write_text(comma, encoding="utf-8")
        assert run_cli("sync", "run", "--quiet", *_dir(source)).code == 0
        exported = run_cli("export", "--quiet", *_dir(source))
        assert exported.code == 0, exported.err
        lines = [json.loads(line) for line in exported.out.splitlines()]
        plain = [line for line in lines if "comma" not in line["content"]]
        imported = run_cli("import", str(_write_jsonl(base / "new.jsonl", _as_new(plain))), "--json", *_dir(target))
        assert imported.code == 0, imported.err
        yield {"source": source, "target": target, "lines": lines, "base": base}


def _tags_by_text(root: Path) -> dict[str, list[str]]:
    with Memory.open(root, settings=settings_for(root)) as mem:
        return {r.content: r.tags for r in mem.files.scan().records}


def test_an_imported_note_has_the_tags_its_file_was_read_as(repos: dict[str, Any]) -> None:
    source, target = _tags_by_text(repos["source"]), _tags_by_text(repos["target"])
    for name in NOTES:
        text = f"Note {name} about the deploy pipeline"
        assert target[text] == source[text], name
        assert source[text], name  # every note says a tag
    assert source["Note tag-only about the deploy pipeline"] == ["ops"]
    assert source["Note tags-words about the deploy pipeline"] == ["ops", "release"]


def test_tag_without_tags_is_written_as_tags_and_found_by_the_tag_filter(repos: dict[str, Any]) -> None:
    target = repos["target"]
    written = (target / "facts" / "note-tag-only-about-the-deploy-pipeline.md").read_text(encoding="utf-8")
    assert 'tags: ["ops"]' in written and "tag: ops" in written and "tags: []" not in written
    found = run_cli("list", "--tag", "ops", "--json", *_dir(target)).json()["memories"]
    assert "Note tag-only about the deploy pipeline" in {m["content"] for m in found}
    # a line with both keys keeps `tag` as written, and its tags are `tags`' (as the reader reads the file)
    both = (target / "facts" / "note-tags-and-tag-about-the-deploy-pipeline.md").read_text(encoding="utf-8")
    assert 'tags: ["ops"]' in both and "tag: other" in both


def test_a_hand_written_line_or_a_store_with_tag_keeps_its_tag(repos: dict[str, Any]) -> None:
    root = repos["target"]
    with Memory.open(root, settings=settings_for(root)) as mem:
        result = mem.import_records([{"content": "Hand-written line with tag key", "tag": "ops"}])
        assert [r.tags for r in result.records] == [["ops"]]
        assert (result.records[0].frontmatter["tags"], result.records[0].frontmatter["tag"]) == (["ops"], "ops")
        stored = mem.store("Bo prefers spaces over tabs.", extra={"tag": "style, editors"}).record
        assert stored.tags == ["style", "editors"] and stored.frontmatter["tag"] == "style, editors"


def test_a_comma_tag_in_a_file_is_kept_found_and_named_by_doctor(tmp_path: Path, repos: dict[str, Any]) -> None:
    source = repos["source"]
    found = run_cli("list", "--tag", "quoted, comma", "--json", *_dir(source)).json()["memories"]
    assert [m["content"] for m in found] == ["A note with a comma tag"]
    doctor = run_cli("doctor", "--json", *_dir(source))
    check = {c["name"]: c for c in doctor.json()["checks"]}["foreign-values"]
    assert check["status"] == "warn", check
    (line,) = [p for p in check["problems"] if p.startswith("facts/comma.md:")]
    assert "'quoted, comma' is not a valid tag" in line and RULE in line and "['quoted', 'comma']" in line
    assert "1 file(s) hold a tag remnic's writes refuse" in check["detail"]
    assert not [p for p in check["problems"] if "not a valid tag" in p and not p.startswith("facts/comma.md:")]
    # an import that restores the file (`file` kept) keeps it byte for byte, as sync does
    (comma,) = [line for line in repos["lines"] if line["content"] == "A note with a comma tag"]
    root = tmp_path / "mem"
    shutil.copytree(repos["base"] / "blank", root, symlinks=True)
    restored = run_cli("import", str(_write_jsonl(tmp_path / "r.jsonl", [comma])), *_dir(root))
    assert restored.code == 0, restored.err
    assert (root / "facts" / "comma.md").read_text(encoding="utf-8") == comma["file"]
    assert parse_file(comma["file"], "facts/comma.md").tags == ["quoted, comma", "plain"]


def test_importing_a_comma_tag_as_new_is_refused_naming_line_field_and_rule(repos: dict[str, Any]) -> None:
    base, target = repos["base"], repos["target"]
    (comma,) = [line for line in repos["lines"] if line["content"] == "A note with a comma tag"]
    path = _write_jsonl(base / "comma.jsonl", [{"content": "Another line"}, *_as_new([comma])])
    before = (target / ".git").joinpath("HEAD").read_text()
    refused = run_cli("import", str(path), *_dir(target))
    assert refused.code == 2
    assert f"{path}:2: tags: 'quoted, comma' is not a valid tag ({RULE})" in refused.err, refused.err
    assert "give them apart: ['quoted', 'comma']" in refused.err
    assert (target / ".git").joinpath("HEAD").read_text() == before
    # `tag` (no `tags`) is read, so it is held to the rule too, under its own name
    with Memory.open(target, settings=settings_for(target)) as mem, pytest.raises(ValidationError) as caught:
        mem.import_records([{"content": "Line with a list tag", "tag": ["x, y"]}])
    assert caught.value.problems[0].field == "tag" and RULE in caught.value.problems[0].message


@pytest.mark.parametrize("tags", [["quoted, comma"], ["x" * 65], ["two\nlines"]])
def test_store_and_update_refuse_a_tag_by_the_same_rule(repos: dict[str, Any], tags: list[str]) -> None:
    target = repos["target"]
    with Memory.open(target, settings=settings_for(target)) as mem:
        with pytest.raises(ValidationError) as stored:
            mem.store("A memory with a bad tag", tags=tags)
        some = mem.files.scan().records[0].id
        with pytest.raises(ValidationError) as updated:
            mem.update(some, {"tags": tags})
    for caught in (stored, updated):
        assert caught.value.problems[0].field == "tags" and RULE in caught.value.problems[0].message
