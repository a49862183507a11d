"""Hand-written frontmatter through remnic's writes: comments, anchors and key order kept; duplicate keys
refused; a score remnic cannot read reads the same before and after a sync (real git repositories)."""

from __future__ import annotations

import pytest
from conftest import git, run_cli

from remnic.config import StoreSettings
from remnic.errors import MemoryFormatError
from remnic.memfile.model import parse_file
from remnic.memfile.normalize import render
from remnic.memfile.validate import check_text
from remnic.service.memory import Memory


def _write(memory: Memory, rel: str, text: str) -> None:
    (memory.root / rel).write_text(text)


def _adopted(memory: Memory, rel: str, text: str) -> str:
    _write(memory, rel, text)
    memory.sync()
    return (memory.root / rel).read_text()


def test_update_tags_replaces_a_block_list_in_place_and_keeps_comments(memory: Memory) -> None:
    text = _adopted(
        memory,
        "facts/cache-ttl.md",
        "---\n# reviewed by Ana 2026-03-01, keep\ntags:\n  - ops\n  # the cache one\n  - cache\n"
        "owner: ana  # on call\n---\nThe cache TTL is 300 seconds.\n",
    )
    record = parse_file(text, "facts/cache-ttl.md")

    memory.update(record.id, {"tags": ["ops", "ttl"]})

    after = (memory.root / "facts/cache-ttl.md").read_text()
    lines = after.splitlines()
    assert lines[1] == "# reviewed by Ana 2026-03-01, keep"
    assert lines[2] == 'tags: ["ops", "ttl"]'
    assert lines[3] == "  # the cache one"
    assert lines[4] == "owner: ana  # on call"
    assert "  - cache" not in lines
    assert after.endswith("---\nThe cache TTL is 300 seconds.\n")
    assert parse_file(after, "facts/cache-ttl.md").tags == ["ops", "ttl"]
    assert git(memory.root, "status", "--porcelain") == ""


def test_a_comment_after_a_replaced_value_is_kept(memory: Memory) -> None:
    text = _adopted(
        memory, "facts/prio.md", "---\nimportanceScore: 0.4   # bumped by hand\ntags: [a]  # mine\n---\nPrio.\n"
    )
    record = parse_file(text, "facts/prio.md")

    memory.update(record.id, {"importanceScore": 0.7, "tags": ["a", "b"]})

    after = (memory.root / "facts/prio.md").read_text()
    assert "importanceScore: 0.7   # bumped by hand\n" in after
    assert 'tags: ["a", "b"]  # mine\n' in after


def test_a_block_scalar_is_replaced_whole_even_lines_starting_with_hash() -> None:
    text = "---\nid: mem_x\n# about\ndescription: |\n  # not a comment\n  two\nowner: ana\n---\nBody\n"
    checked = check_text(text, "facts/d.md", StoreSettings())

    new_text, _meta = render(checked, {"description": "short"})

    assert new_text == "---\nid: mem_x\n# about\ndescription: short\nowner: ana\n---\nBody\n"


def test_an_aliased_value_is_rewritten_keeping_every_comment_and_the_key_order() -> None:
    text = (
        "---\n# top comment\nid: mem_x\nbase: &b\n  owner: ana\n# tags are shared\ntags: &t\n  - alpha\n"
        "  - beta\nmeta:\n  <<: *b\n  # inside meta\n  team: ops\nlabels: *t\n# closing remark\n---\nBody\n"
    )
    checked = check_text(text, "facts/a.md", StoreSettings())

    new_text, meta = render(checked, {"tags": ["gamma"]})

    again = parse_file(new_text, "facts/a.md")
    assert again.frontmatter == meta
    assert again.frontmatter["labels"] == ["alpha", "beta"]  # the alias keeps what it named
    assert again.frontmatter["meta"] == {"owner": "ana", "team": "ops"}
    assert list(again.frontmatter) == ["id", "base", "tags", "meta", "labels"]
    for comment in ("# top comment", "# tags are shared", "# inside meta", "# closing remark"):
        assert comment in new_text.splitlines()
    assert new_text.index("# tags are shared") < new_text.index("tags:")
    assert new_text.endswith("---\nBody\n")


def test_duplicate_key_is_malformed_naming_line_and_key(memory: Memory) -> None:
    _write(memory, "facts/dup.md", "---\ntags: [a]\ntags: [b]\n---\nDup keys body.\n")

    with pytest.raises(MemoryFormatError) as caught:
        parse_file((memory.root / "facts/dup.md").read_text(), "facts/dup.md")
    [problem] = caught.value.problems
    assert (problem.path, problem.line, problem.field) == ("facts/dup.md", 3, "tags")
    assert "duplicate key" in problem.message and "line 2" in problem.message

    report = memory.sync()
    assert report.malformed_paths == ["facts/dup.md"]
    assert (memory.root / "facts/dup.md").read_text() == "---\ntags: [a]\ntags: [b]\n---\nDup keys body.\n"
    result = run_cli("--memory-dir", str(memory.root), "get", "facts/dup.md")
    assert result.code == 1
    assert "facts/dup.md:3: tags: duplicate key" in result.err
    doctor = run_cli("--memory-dir", str(memory.root), "doctor")
    assert "facts/dup.md:3: tags: duplicate key" in doctor.out


def test_nested_duplicate_key_is_malformed_but_a_merge_override_is_not() -> None:
    with pytest.raises(MemoryFormatError) as caught:
        parse_file("---\nid: mem_x\nmeta:\n  a: 1\n  a: 2\n---\nB\n", "facts/n.md")
    assert (caught.value.problems[0].line, caught.value.problems[0].field) == (5, "a")
    record = parse_file("---\nbase: &b {a: 1}\nmeta:\n  <<: *b\n  a: 2\n---\nB\n", "facts/m.md")
    assert record.frontmatter["meta"] == {"a": 2}


@pytest.mark.parametrize(
    ("frontmatter", "key"),
    [
        ("confidence: [0.5]", "confidence"),
        ("importanceScore: [0.5]", "importance"),
        ("confidenceTier: inferred", "confidence"),
    ],
)
def test_a_value_remnic_reads_its_own_way_reads_the_same_after_sync(memory: Memory, frontmatter: str, key: str) -> None:
    _write(memory, "facts/odd.md", f"---\n{frontmatter}\n---\nOdd score note.\n")
    before = getattr(parse_file((memory.root / "facts/odd.md").read_text(), "facts/odd.md"), key)

    memory.sync()

    after = parse_file((memory.root / "facts/odd.md").read_text(), "facts/odd.md")
    assert "id" in after.frontmatter  # adopted
    assert getattr(after, key) == before
    assert getattr(memory.get(after.id), key) == before


def test_removing_a_key_keeps_comments_and_the_order_of_the_others(memory: Memory) -> None:
    text = _adopted(
        memory,
        "facts/rm.md",
        "---\n# mine\nowner: ana\nreview:\n  # why\n  - q3\n# about the source\nsource: hand\n---\nRemove.\n",
    )
    record = parse_file(text, "facts/rm.md")

    memory.update(record.id, {"review": None, "source": "notes"})

    after = (memory.root / "facts/rm.md").read_text()
    lines = after.split("\n---\n")[0].splitlines()
    assert lines[:5] == ["---", "# mine", "owner: ana", "  # why", "# about the source"]
    assert lines[5] == "source: notes"
    assert "review" not in parse_file(after, "facts/rm.md").frontmatter
    assert after.endswith("---\nRemove.\n")


def test_removing_a_key_keeps_the_users_keys_whose_value_is_null(memory: Memory) -> None:
    # `owner:` and `reviewedBy: null` were dropped by any write that removed a key (archive, then active)
    text = _adopted(
        memory, "facts/n.md", "---\nstatus: active\nowner:\nreviewedBy: null # nobody yet\n---\nNull keys.\n"
    )
    record = parse_file(text, "facts/n.md")

    memory.update(record.id, {"status": "archived"})
    memory.update(record.id, {"status": "active"})

    after = (memory.root / "facts/n.md").read_text()
    assert "\nowner:\n" in after and "\nreviewedBy: null # nobody yet\n" in after, after
    assert "archivedAt" not in after
