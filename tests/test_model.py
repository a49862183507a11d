"""The memory primitive: parsing, serialising, validation, tiers, slugs (pure functions)."""

from __future__ import annotations

import pytest

from remnic.errors import MemoryFormatError, ValidationError
from remnic.memfile.model import (
    CATEGORIES,
    STATUSES,
    category_for_path,
    check_relpath,
    confidence_tier,
    importance_level,
    namespace_for_path,
    parse_file,
    serialize,
    slugify,
    validate_frontmatter,
)

FULL = """---
id: mem_018f9a3b2c1d4e5f6a7b
category: decision
created: 2026-04-25T18:32:11Z
updated: 2026-04-25T18:32:11Z
source: extraction
confidence: 0.95
confidenceTier: explicit
tags: ["release-cadence", "ops"]
status: active
importanceScore: 0.85
importanceLevel: high
customKey: keep me
nested: {a: 1, b: [x, y]}
---
Cut releases every Tuesday.

---

A horizontal rule above is part of the body, and so is this.
"""


def test_parse_full_file_keeps_timestamps_as_written() -> None:
    rec = parse_file(FULL, "decisions/cut-releases.md")
    assert rec.id == "mem_018f9a3b2c1d4e5f6a7b"
    assert rec.category == "decision"
    assert rec.frontmatter["created"] == "2026-04-25T18:32:11Z"  # a string, not a datetime
    assert rec.tags == ["release-cadence", "ops"]
    assert rec.confidence == 0.95 and rec.importance == 0.85
    assert rec.content.startswith("Cut releases every Tuesday.")
    assert rec.content.endswith("so is this.")


def test_round_trip_preserves_body_bytes_unknown_keys_and_order() -> None:
    rec = parse_file(FULL, "decisions/x.md")
    meta = dict(rec.frontmatter)
    meta["status"] = "forgotten"
    text = serialize(meta, rec.body)
    again = parse_file(text, "decisions/x.md")
    assert again.body == rec.body  # byte for byte, including the '---' rule inside the body
    assert again.frontmatter["customKey"] == "keep me"
    assert again.frontmatter["nested"] == {"a": 1, "b": ["x", "y"]}
    assert list(again.frontmatter)[:3] == ["id", "category", "created"]
    assert list(again.frontmatter)[-2:] == ["customKey", "nested"]
    assert again.status == "forgotten"


def test_body_only_file_is_valid_with_derived_defaults() -> None:
    rec = parse_file("Just a note I typed.\n", "preferences/tabs.md")
    assert rec.frontmatter == {}
    assert rec.body == "Just a note I typed.\n"
    assert rec.category == "preference"  # from the folder
    assert rec.status == "active"
    assert rec.id.startswith("mem_p")
    assert rec.id == parse_file("other text", "preferences/tabs.md").id  # stable: derived from the path


@pytest.mark.parametrize(
    ("fm", "field", "fragment", "reads_as"),
    [
        ("confidence: high", "confidence", "number from 0 to 1", ("confidence", 0.85)),
        ("importanceScore: 7", "importanceScore", "from 0 to 1", ("importance", 0.7)),
        ("category: musing", "category", "unknown category", ("category", "fact")),
        ("status: deleted", "status", "unknown status", ("status", "forgotten")),
        ("tags: ops", "tags", "list of strings", ("tags", ["ops"])),
        ("created: yesterday", "created", "ISO 8601", ("created", "yesterday")),
        ("id: ../../etc/passwd", "id", "not a valid id", ("has_id", False)),
    ],
)
def test_foreign_values_are_read_in_files_and_refused_on_writes(
    fm: str, field: str, fragment: str, reads_as: tuple
) -> None:
    text = f"---\nsource: manual\n{fm}\n---\nbody\n"
    rec = parse_file(text, "facts/odd.md")  # a file's values are the user's: never malformed for them
    assert getattr(rec, reads_as[0]) == reads_as[1]
    assert rec.frontmatter[field] is not None  # kept as written
    fm_text = text.split("---\n")[1]
    problems = validate_frontmatter(rec.frontmatter, path="facts/odd.md", text=fm_text, first_line=2)
    problem = problems[0]  # remnic's own writes are held to its vocabulary, naming field and line
    assert problem.field == field
    assert fragment in problem.message
    assert problem.line == 3


def test_unknown_category_lists_valid_options_on_writes() -> None:
    problems = validate_frontmatter({"category": "musing"})
    assert "valid options" in problems[0].describe() and "reasoning_trace" in problems[0].describe()


def test_malformed_yaml_reports_line() -> None:
    text = "---\nid: mem_1\ntags: [unclosed\nstatus: active\n---\nbody\n"
    with pytest.raises(MemoryFormatError) as info:
        parse_file(text, "facts/broken.md")
    problem = info.value.problems[0]
    assert problem.field == "frontmatter" and "invalid YAML" in problem.message
    assert problem.line is not None and problem.line >= 3


def test_unclosed_frontmatter_is_reported() -> None:
    with pytest.raises(MemoryFormatError) as info:
        parse_file("---\nid: mem_1\nno closing line\n", "facts/open.md")
    assert "no closing" in info.value.problems[0].message


def test_frontmatter_must_be_a_mapping() -> None:
    with pytest.raises(MemoryFormatError):
        parse_file("---\n- a\n- b\n---\nbody\n", "facts/list.md")


@pytest.mark.parametrize(
    ("value", "tier"),
    [
        (1.0, "explicit"),
        (0.95, "explicit"),
        (0.94, "implied"),
        (0.70, "implied"),
        (0.5, "inferred"),
        (0.40, "inferred"),
        (0.39, "speculative"),
        (0.0, "speculative"),
    ],
)
def test_confidence_tiers_match_remnic(value: float, tier: str) -> None:
    assert confidence_tier(value) == tier


def test_importance_levels() -> None:
    assert [importance_level(x) for x in (0.95, 0.8, 0.5, 0.25, 0.1)] == [
        "critical",
        "high",
        "normal",
        "low",
        "trivial",
    ]


def test_vocabularies_match_design() -> None:
    assert len(CATEGORIES) == 13 and "reasoning_trace" in CATEGORIES
    assert STATUSES == ("active", "pending_review", "rejected", "quarantined", "superseded", "archived", "forgotten")


def test_slugs_are_readable_and_bounded() -> None:
    assert slugify("We cut releases every Tuesday!") == "we-cut-releases-every-tuesday"
    assert slugify("Café déjà vu") == "cafe-deja-vu"
    # Letters Unicode does not decompose fold as entity ids do, not dropped ("degaard", "odz").
    assert slugify("Ødegaard moved to Łódź, Straße") == "odegaard-moved-to-lodz-strasse"
    assert slugify("日本語だけ") == "日本語だけ"
    assert slugify("🙂 🎉") == "memory"
    assert len(slugify("word " * 100)) <= 60


def test_namespace_and_category_from_path() -> None:
    assert namespace_for_path("namespaces/work/facts/a.md") == "work"
    assert category_for_path("namespaces/work/decisions/a.md") == "decision"
    assert namespace_for_path("facts/a.md") == "default"
    assert category_for_path("notes/a.md") == "fact"


@pytest.mark.parametrize(
    "bad", ["../x.md", "/etc/passwd", "facts/../../x.md", ".git/config", ".remnic/x.md", "a//b.md", ""]
)
def test_path_traversal_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        check_relpath(bad)
