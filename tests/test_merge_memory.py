"""The three-way merge of one memory file (memfile/merge.py): frontmatter key by key, the body by
git's own line merge (git merge-file, for real), a true conflict kept as two linked memories."""

from __future__ import annotations

from remnic.config import StoreSettings
from remnic.memfile.merge import (
    STATUS_PRECEDENCE,
    copy_id_for,
    merge_frontmatter,
    merge_list,
    merge_memory,
)
from remnic.memfile.model import content_hash, original_hash, parse_file
from remnic.memfile.validate import check_text
from remnic.repo.remote import line_merge

PATH = "facts/deploy.md"
NOW = "2026-05-01T10:00:00.000Z"


def memory_file(body: str, **meta: object) -> str:
    fm = {
        "id": "mem_0000000000aa11223344",
        "category": "fact",
        "created": "2026-04-01T09:00:00.000Z",
        "updated": "2026-04-01T09:00:00.000Z",
        "tags": ["ops"],
        "status": "active",
        "contentHash": original_hash(body.strip()),
    }
    fm.update(meta)
    lines = []
    for key, value in fm.items():
        if isinstance(value, list):
            lines.append(f"{key}: [{', '.join(chr(34) + str(v) + chr(34) for v in value)}]")
        else:
            lines.append(f"{key}: {value}")
    return "---\n" + "\n".join(lines) + "\n---\n\n" + body


def valid(text: str, path: str = PATH) -> None:
    checked = check_text(text, path, StoreSettings())
    assert checked.ok, checked.problems
    assert "<<<<<<<" not in text and ">>>>>>>" not in text


BASE_BODY = (
    "We deploy on Tuesdays.\n\nThe deploy is announced in the ops channel.\n\nThe window is two hours.\n\n"
    "Staging is refreshed the night before.\n\nRollback takes ten minutes.\n"
)


def test_tags_on_one_side_and_body_on_the_other_merge_cleanly() -> None:
    base = memory_file(BASE_BODY)
    ours = memory_file(BASE_BODY, tags=["ops", "release"], updated="2026-04-02T09:00:00.000Z")
    theirs_body = BASE_BODY.replace("Tuesdays", "Wednesdays")
    theirs = memory_file(theirs_body, updated="2026-04-03T09:00:00.000Z")
    out = merge_memory(base, ours, theirs, PATH, line_merge, now=NOW)
    assert not out.conflict and out.copy_path is None
    record = parse_file(out.text, PATH)
    assert record.body == "\n" + theirs_body
    assert record.frontmatter["tags"] == ["ops", "release"]
    assert record.frontmatter["updated"] == "2026-04-03T09:00:00.000Z"
    assert record.frontmatter["contentHash"] == original_hash(theirs_body.strip())
    valid(out.text)


def test_edits_to_different_lines_of_the_body_both_land() -> None:
    base = memory_file(BASE_BODY)
    ours = memory_file(BASE_BODY.replace("two hours", "three hours"))
    theirs = memory_file(BASE_BODY.replace("ten minutes", "five minutes"))
    out = merge_memory(base, ours, theirs, PATH, line_merge, now=NOW)
    assert not out.conflict
    body = parse_file(out.text, PATH).body
    assert "three hours" in body and "five minutes" in body
    valid(out.text)


def test_a_true_body_conflict_keeps_both_versions_linked_for_review() -> None:
    base = memory_file(BASE_BODY)
    ours_body = BASE_BODY.replace("Tuesdays", "Thursdays")
    theirs_body = BASE_BODY.replace("Tuesdays", "Fridays")
    out = merge_memory(base, memory_file(ours_body), memory_file(theirs_body), PATH, line_merge, now=NOW)
    assert out.conflict and out.copy_path and out.copy_text and out.copy_id
    mine, other = parse_file(out.text, PATH), parse_file(out.copy_text, out.copy_path)
    assert mine.body == "\n" + ours_body and other.body == "\n" + theirs_body
    assert mine.id == "mem_0000000000aa11223344" and other.id == out.copy_id != mine.id
    assert mine.status == other.status == "pending_review"
    assert mine.frontmatter["conflictsWith"] == [other.id] and other.frontmatter["conflictsWith"] == [mine.id]
    assert other.frontmatter["contentHash"] == original_hash(theirs_body.strip())
    assert out.copy_path.startswith("facts/deploy--conflict-") and out.copy_path.endswith(".md")
    valid(out.text)
    valid(out.copy_text, out.copy_path)
    # The same conflict resolved on another machine names the copy the same way.
    assert copy_id_for(mine.id, other.body) == out.copy_id


def test_forget_on_one_side_wins_over_an_edit_and_keeps_the_edited_text() -> None:
    base = memory_file(BASE_BODY)
    forgotten = memory_file(BASE_BODY, status="forgotten", forgottenAt="2026-04-05T09:00:00.000Z")
    edited_body = BASE_BODY.replace("two hours", "one hour")
    edited = memory_file(edited_body, status="pending_review", updated="2026-04-06T09:00:00.000Z")
    out = merge_memory(base, edited, forgotten, PATH, line_merge, now=NOW)
    record = parse_file(out.text, PATH)
    assert not out.conflict and record.status == "forgotten"
    assert record.frontmatter["forgottenAt"] == "2026-04-05T09:00:00.000Z"
    assert "one hour" in record.body
    valid(out.text)


def test_frontmatter_rules_key_by_key() -> None:
    base = {"tags": ["a", "b"], "reinforcement_count": 1, "status": "active", "note": "x", "gone": 1}
    ours = {
        "tags": ["a", "c"],
        "reinforcement_count": 3,
        "status": "archived",
        "note": "ours",
        "updated": "2026-04-02T00:00:00Z",
        "mine": True,
    }
    theirs = {
        "tags": ["a", "b", "d"],
        "reinforcement_count": 2,
        "status": "superseded",
        "note": "theirs",
        "updated": "2026-04-03T00:00:00Z",
        "gone": 2,
    }
    merged = merge_frontmatter(base, ours, theirs)
    assert merged["tags"] == ["a", "c", "d"]  # b removed by ours, c and d added
    assert merged["reinforcement_count"] == 3
    assert merged["status"] == "superseded"  # superseded ranks before archived
    assert merged["note"] == "theirs"  # both changed a key remnic does not know: the later `updated` wins
    assert merged["updated"] == "2026-04-03T00:00:00Z"
    assert merged["mine"] is True  # added on one side only
    assert merged["gone"] == 2  # removed on one side, changed on the other: the change is kept
    assert STATUS_PRECEDENCE[:2] == ("forgotten", "superseded") and STATUS_PRECEDENCE[-1] == "active"
    assert merge_frontmatter(base, {**ours, "status": "weird"}, theirs)["status"] == "superseded"


def test_list_merge_honours_removals_and_keeps_additions() -> None:
    assert merge_list(["x", "y"], ["x"], ["x", "y", "z"]) == ["x", "z"]
    assert merge_list(None, ["b", "a"], ["a", "c"]) == ["b", "a", "c"]
    links = merge_list([], [{"to": "m1"}], [{"to": "m2"}, {"to": "m1"}])
    assert links == [{"to": "m1"}, {"to": "m2"}]


def test_same_memory_added_on_both_sides_resolves_by_content_hash() -> None:
    body = "Ana prefers tabs.\n"
    ours = memory_file(body, tags=["style"], reinforcement_count=1)
    theirs = memory_file(body, tags=["editor"], reinforcement_count=2, updated="2026-04-09T09:00:00.000Z")
    out = merge_memory(None, ours, theirs, PATH, line_merge, now=NOW)
    assert out.same_content and not out.conflict
    record = parse_file(out.text, PATH)
    assert record.frontmatter["tags"] == ["style", "editor"] and record.frontmatter["reinforcement_count"] == 2
    valid(out.text)
    different = memory_file("Ana prefers spaces.\n", id="mem_0000000000bb11223344")
    out = merge_memory(None, ours, different, PATH, line_merge, now=NOW)
    assert out.conflict and out.copy_id == "mem_0000000000bb11223344"
    assert parse_file(out.copy_text or "", out.copy_path or "").content == "Ana prefers spaces."


def test_only_the_changed_frontmatter_lines_are_rewritten() -> None:
    base = memory_file(BASE_BODY) + ""
    ours = base.replace("category: fact\n", "category: fact\n# a comment the user wrote\n")
    theirs = memory_file(BASE_BODY, status="archived")
    out = merge_memory(base, ours, theirs, PATH, line_merge, now=NOW)
    assert "# a comment the user wrote\n" in out.text and "status: archived\n" in out.text
    assert content_hash(parse_file(out.text, PATH).body) == content_hash("\n" + BASE_BODY)


def test_malformed_side_never_yields_markers() -> None:
    base = memory_file(BASE_BODY)
    broken = "---\nid: [unclosed\n---\n\nWe deploy on Mondays.\n"
    theirs = memory_file(BASE_BODY.replace("Tuesdays", "Sundays"))
    out = merge_memory(base, broken, theirs, PATH, line_merge, now=NOW)
    assert out.conflict and out.text == broken and out.copy_text == theirs
    assert "<<<<<<<" not in out.text


def test_same_text_stored_under_two_ids_keeps_one_memory_and_the_other_id_superseded() -> None:
    ours = memory_file("Ana prefers tabs.\n")
    theirs = memory_file("Ana prefers tabs.\n", id="mem_0000000000cc11223344")
    out = merge_memory(None, ours, theirs, PATH, line_merge, now=NOW)
    assert not out.conflict and out.same_content
    mine = parse_file(out.text, PATH)  # this side's memory, now naming the other in supersedes (both ways)
    assert mine.frontmatter == {**parse_file(ours, PATH).frontmatter, "supersedes": ["mem_0000000000cc11223344"]}
    assert mine.body == parse_file(ours, PATH).body
    other = parse_file(out.copy_text or "", out.copy_path or "")
    assert other.id == "mem_0000000000cc11223344" == out.copy_id
    assert other.status == "superseded" and other.frontmatter["supersededBy"] == "mem_0000000000aa11223344"
    valid(out.copy_text or "", out.copy_path or "")
