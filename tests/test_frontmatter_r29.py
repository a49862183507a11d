"""Hand-written frontmatter through remnic's writes: comments, anchors and key order kept; duplicate keys
refused; a score remnic cannot read reads the same before and after a sync (real git repositories)."""

from __future__ import annotations

import pytest
from conftest import git, run_cli

from remnic.config import StoreSettings
from remnic.errors import MemoryFormatError, ValidationError
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


def test_removing_a_key_from_toml_front_matter_keeps_it_toml(memory: Memory) -> None:
    # taking `archivedAt` out went through the YAML serializer: `---` fences, comments and key order lost
    _adopted(
        memory,
        "facts/t.md",
        '+++\n# my TOML note\nid = "mem_toml00000000000001"\ncategory = "fact"\nstatus = "active"  # st\n+++\n\nT.\n',
    )

    memory.update("mem_toml00000000000001", {"status": "archived"})
    memory.update("mem_toml00000000000001", {"status": "active"})

    after = (memory.root / "facts/t.md").read_text()
    lines = after.split("+++\n")[1].splitlines()
    assert after.startswith("+++\n# my TOML note\n") and after.endswith("+++\n\nT.\n"), after
    assert lines[1:4] == ['id = "mem_toml00000000000001"', 'category = "fact"', 'status = "active"  # st']
    assert "archivedAt" not in after
    assert memory.get("mem_toml00000000000001").status == "active"


TOML_SPANNING = (
    '+++\nid = "mem_toml00000000000002"\ncategory = "fact"\ntags = [\n  "a",\n  # why b\n  "b",\n]  # arr\n'
    'status = "active"\nnotes = """\nstatus = "draft"\n"""\n# closing remark\n+++\n\nToml note two.\n'
)


def test_toml_multiline_array_and_string_do_not_block_writes(memory: Memory) -> None:
    # the `status = "draft"` line inside `notes` counted as a second status; the array lost only its first line
    _adopted(memory, "facts/t2.md", TOML_SPANNING)

    memory.update("mem_toml00000000000002", {"tags": ["x"]})
    memory.forget("mem_toml00000000000002")

    after = (memory.root / "facts/t2.md").read_text()
    record = parse_file(after, "facts/t2.md")
    assert (record.tags, record.status, record.frontmatter["notes"]) == (["x"], "forgotten", 'status = "draft"\n')
    assert 'tags = ["x"]  # arr\n  # why b\nstatus = "forgotten"\n' in after
    assert '"a",' not in after
    assert after.index("forgottenAt") < after.index("# closing remark")  # new keys go above the closing comment
    assert after.endswith("# closing remark\n+++\n\nToml note two.\n")


def test_a_toml_key_that_cannot_be_patched_is_refused_naming_key_and_line() -> None:
    text = '+++\nid = "mem_x"\nowner.name = "ana"\nowner.team = "ops"\n+++\nBody\n'
    checked = check_text(text, "facts/d.md", StoreSettings())

    with pytest.raises(ValidationError) as caught:
        render(checked, {"owner": "bob", "updated": "2026-01-01T00:00:00Z"})
    [problem] = caught.value.problems
    assert (problem.path, problem.line, problem.field) == ("facts/d.md", 3, "owner")
    assert "dotted keys" in problem.message and "updated" not in caught.value.message

    tabled = check_text('+++\nid = "mem_x"\n[extra]\na = 1\n+++\nBody\n', "facts/e.md", StoreSettings())
    with pytest.raises(ValidationError) as caught:
        render(tabled, {"extra": "flat"})
    assert (caught.value.problems[0].line, caught.value.problems[0].field) == (3, "extra")
    assert "[table]" in caught.value.problems[0].message


def test_the_rewrite_fallback_keeps_block_scalar_lines_as_text() -> None:
    # a `# Heading` line of a `|` block became a comment line of its own when the frontmatter was rewritten
    text = "---\nid: mem_x\ntags: &t\n  - a\nlabels: *t\nsteps: |\n  # Heading in the note\n  - step one\n---\nB\n"
    checked = check_text(text, "facts/b.md", StoreSettings())

    new_text, meta = render(checked, {"tags": ["z"]})

    assert parse_file(new_text, "facts/b.md").frontmatter == meta
    assert meta["steps"] == "# Heading in the note\n- step one\n"
    assert "# Heading in the note" not in [line.strip() for line in new_text.splitlines()]


def test_a_quoted_key_is_patched_and_dropped_in_place(memory: Memory) -> None:
    # `"importanceScore": 0.5` got a second, plain line appended; the duplicate forced a full rewrite
    text = _adopted(
        memory,
        "facts/q.md",
        "---\n\"importanceScore\": 0.5  # mine\n'category': fact # q\ntags :   [a, b]   # spaced\n"
        "notes: |\n  line one\n---\nQuoted keys.\n",
    )
    record = parse_file(text, "facts/q.md")

    memory.update(record.id, {"importanceScore": 0.9})
    memory.update(record.id, {"status": "archived"})
    memory.update(record.id, {"status": "active"})

    after = (memory.root / "facts/q.md").read_text()
    assert '"importanceScore": 0.9  # mine\n' in after
    assert after.count("importanceScore") == 1
    assert "'category': fact # q\n" in after and "tags :   [a, b]   # spaced\n" in after
    assert "notes: |\n  line one\n" in after
    assert "archivedAt" not in after
    assert parse_file(after, "facts/q.md").importance == 0.9


@pytest.mark.parametrize(
    ("frontmatter", "line", "first"),
    [("1: a\n01: b", 4, 3), ("~: x\nnull: y", 4, 3), ("yes: 1\ntrue: 2", 4, 3), ("true: 1\n1: 2", 4, 3)],
)
def test_keys_spelled_differently_that_load_as_one_key_are_duplicates(frontmatter: str, line: int, first: int) -> None:
    with pytest.raises(MemoryFormatError) as caught:
        parse_file(f"---\nid: mem_x\n{frontmatter}\n---\nB\n", "facts/d.md")
    [problem] = caught.value.problems
    assert problem.line == line and f"first on line {first}" in problem.message


def test_a_comment_after_a_list_item_stays_when_the_list_is_replaced() -> None:
    text = "---\nid: mem_x\ntags:\n  - ops    # item comment\n  - cache\n# closing\n---\nB\n"
    checked = check_text(text, "facts/l.md", StoreSettings())

    new_text, _meta = render(checked, {"tags": ["ttl"], "owner": "ana"})

    assert new_text == '---\nid: mem_x\ntags: ["ttl"]\n  # item comment\nowner: ana\n# closing\n---\nB\n'
