"""The public API checks its arguments: a caller's wrong value is a ValidationError (or NotFoundError)
naming the argument, never a builtin error from deep inside, and never taken for a damaged index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from remnic import Memory
from remnic.errors import NotFoundError, ValidationError
from remnic.index.manifest import index_root, read_current

BAD = "x \udc80"  # what an undecodable byte (0x80) becomes under surrogateescape


def field_of(call: Callable[[], Any]) -> str:
    with pytest.raises(ValidationError) as exc:
        call()
    return exc.value.problems[0].field


def test_lone_surrogates_are_refused_naming_the_argument(memory: Memory) -> None:
    rec = memory.store("We deploy on Tuesdays", category="decision").record
    assert field_of(lambda: memory.recall(BAD)) == "query"
    assert field_of(lambda: memory.store("fine text", source=BAD)) == "source"
    assert field_of(lambda: memory.feedback(rec.id, "up", note=BAD)) == "note"
    assert field_of(lambda: memory.lcm_search(BAD)) == "query"


def test_a_bad_recall_argument_never_rebuilds_the_index(memory: Memory, caplog: pytest.LogCaptureFixture) -> None:
    memory.store("We deploy on Tuesdays", category="decision")
    memory.recall("deploy")
    build = read_current(index_root(memory.settings.state_dir))
    assert field_of(lambda: memory.recall(BAD)) == "query"
    assert field_of(lambda: memory.recall("deploy", as_of=1e300)) == "as_of"  # the keyword given (a request: asOf)
    assert read_current(index_root(memory.settings.state_dir)) == build
    assert "rebuilding" not in caplog.text


def test_an_error_a_rebuild_cannot_cure_is_raised_without_one(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    from remnic.service import recall as service_recall

    memory.store("We deploy on Tuesdays", category="decision")
    memory.recall("deploy")

    def unencodable(*_: Any) -> Any:
        return "\udc80".encode()

    rebuilt: list[str] = []
    monkeypatch.setattr(service_recall, "_indexed_recall", unencodable)
    monkeypatch.setattr(type(memory.index), "rebuild", lambda *a, **k: rebuilt.append("yes"))
    with pytest.raises(UnicodeEncodeError):
        memory.recall("deploy")
    assert rebuilt == []


def test_browse_filters_are_checked(memory: Memory) -> None:
    memory.store("We deploy on Tuesdays", category="decision", tags=["ops"])
    with pytest.raises(ValidationError) as exc:
        memory.list(category="bogus")
    assert exc.value.problems[0].field == "category" and "decision" in (exc.value.problems[0].options or ())
    assert field_of(lambda: memory.list(status="bogus")) == "status"
    assert field_of(lambda: memory.list(tag=5)) == "tag"  # type: ignore[arg-type]
    assert field_of(lambda: memory.search(category="bogus")) == "category"
    assert field_of(lambda: memory.search(limit=-1)) == "limit"
    assert field_of(lambda: memory.search(offset=-2)) == "offset"
    assert field_of(lambda: memory.review_queue(limit=-1)) == "limit"
    assert field_of(lambda: memory.audit_recent(-1)) == "limit"
    assert memory.search(limit=0) == ([], 1)
    assert field_of(lambda: memory.entities(limit=-5)) == "limit"
    assert field_of(lambda: memory.entities(offset=-1)) == "offset"
    assert field_of(lambda: memory.lcm_search("deploy", limit=-1)) == "limit"
    with pytest.raises(NotFoundError, match="wrote no memory"):
        _ = memory.import_records([]).id


def test_a_tag_filter_is_spelled_as_tags_are_stored(memory: Memory) -> None:
    rec = memory.store("We deploy on Tuesdays", category="decision", tags=["#hash", "Ops"]).record
    assert rec.tags == ["hash", "Ops"]
    for tag in ("#hash", "hash", " #hash ", "ops", "OPS"):
        assert [r.id for r in memory.list(tag=tag)] == [rec.id], tag
        assert memory.search(tag=tag)[1] == 1, tag
    assert memory.list(tag="other") == []


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda m, i: m.get(None), "memory_id"),
        (lambda m, i: m.forget(None), "memory_id"),
        (lambda m, i: m.versions(None), "id_or_path"),
        (lambda m, i: m.timeline(None), "memory_id"),
        (lambda m, i: m.version_text(i, None), "spec"),
        (lambda m, i: m.file_text(None), "path"),
        (lambda m, i: m.update(i, None), "changes"),
        (lambda m, i: m.store("x", source=None), "source"),
        (lambda m, i: m.import_records(5), "items"),
        (lambda m, i: m.import_records({"content": "x"}), "items"),
        (lambda m, i: m.import_records([{"content": "x"}], line_numbers=[10, 11]), "line_numbers"),
        (lambda m, i: m.get(""), "memory_id"),
    ],
)
def test_wrong_argument_types_name_the_argument(memory: Memory, call: Any, field: str) -> None:
    rec = memory.store("We deploy on Tuesdays", category="decision").record
    assert field_of(lambda: call(memory, rec.id)) == field


def test_file_text_of_a_missing_file_is_not_found(memory: Memory) -> None:
    with pytest.raises(NotFoundError):
        memory.file_text("facts/nope.md")


def test_open_and_init_check_their_path(tmp_path: Path) -> None:
    assert field_of(lambda: Memory.open(5)) == "path"  # type: ignore[arg-type]
    assert field_of(lambda: Memory.init(5)) == "path"  # type: ignore[arg-type]
    assert field_of(lambda: Memory.init("/proc/remnic-cannot-be-here")) == "path"


def test_every_write_takes_an_id_or_a_file_path(memory: Memory) -> None:
    rec = memory.store("We deploy on Tuesdays", category="decision").record
    other = memory.store("We deploy on Mondays", category="decision").record
    doubt = memory.store("We might deploy on Sundays", category="decision").record
    assert memory.get(rec.path).id == rec.id
    assert memory.update(rec.path, {"importanceScore": 0.9}).record.id == rec.id
    assert memory.review_disposition(doubt.path, "quarantined").record.status == "quarantined"
    memory.update(other.id, {"supersedes": rec.path})
    assert memory.get(other.id).frontmatter["supersedes"] == rec.id  # the file records the id, not the path
    assert memory.forget(other.path).record.status == "forgotten"
