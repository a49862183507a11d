"""The Python API holds its arguments to the CLI's rules and imports as `remnic import` does: a
top_k past the CLI's ceiling, an empty query or category, a string for a list, a trailer key git
cannot parse, an unknown operation, integer tags, a review status no review gives, and a re-imported
export (its files here are skipped, the lost ones restored) — and it exports every type it returns."""

from __future__ import annotations

import json
import subprocess
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, snapshot_tree

import remnic
from remnic import Memory
from remnic.errors import ValidationError


def refusal(call: Callable[[], Any]) -> ValidationError:
    with pytest.raises(ValidationError) as exc:
        call()
    return exc.value


def head(memory: Memory) -> str:
    return git(memory.root, "rev-parse", "HEAD").strip()


# --- recall: the CLI's top_k ceiling, an empty query, a string for a list ---


def test_top_k_outside_1_to_10000_is_refused_naming_it_before_tantivy_sees_it(memory: Memory) -> None:
    memory.store("We cut releases every Tuesday", category="decision")
    for call in (
        lambda: memory.recall("release", top_k=10_001),
        lambda: memory.recall_xray("release", top_k=10_001),
        lambda: memory.recall("release", top_k=10**9),  # aborted the interpreter inside tantivy
        lambda: memory.recall_xray("release", top_k=10**9),
        lambda: memory.recall("release", top_k=0),
    ):
        error = refusal(call)
        assert error.problems[0].field == "top_k" and "from 1 to 10000" in str(error)
    assert len(memory.recall("release", top_k=10_000).hits) == 1


def test_an_empty_query_is_a_validation_error_naming_query(memory: Memory) -> None:
    for call in (lambda: memory.recall(""), lambda: memory.recall("   "), lambda: memory.recall_xray("")):
        error = refusal(call)
        assert error.problems[0].field == "query" and "empty" in str(error)


def test_a_string_for_a_list_argument_is_refused_not_read_character_by_character(
    memory: Memory, tmp_path: Path
) -> None:
    memory.store("We cut releases every Tuesday", category="decision")
    error = refusal(lambda: memory.recall("release", statuses="active"))
    assert error.problems[0].field == "statuses" and "['active']" in str(error)
    assert refusal(lambda: memory.recall("release", tags="ops")).problems[0].field == "tags"
    assert refusal(lambda: memory.observe_citations([], rollout_ids="abc")).problems[0].field == "rollout_ids"
    assert refusal(lambda: memory.lcm_search("x", namespaces="default")).problems[0].field == "namespaces"
    assert refusal(lambda: memory.citations("abc")).problems[0].field == "hits"  # was an AttributeError
    assert refusal(lambda: Memory.init(tmp_path / "other", adopt="notes/**")).problems[0].field == "adopt"
    assert not (tmp_path / "other").exists()
    assert len(memory.recall("release", statuses=["active"]).hits) == 1
    assert memory.store("Tagged by a comma list", tags="a,b").record.tags == ["a", "b"]  # store's own rule


# --- store and update: the CLI's category rule, git trailer tokens, known operations, string tags ---


def test_an_empty_category_is_refused_like_the_cli_with_the_valid_ones(memory: Memory) -> None:
    before = head(memory)
    error = refusal(lambda: memory.store("x3", category=""))
    assert error.problems[0].field == "category" and "fact" in (error.problems[0].options or ())
    assert head(memory) == before and not (memory.root / "facts" / "x3.md").exists()
    assert run_cli("store", "cli x3", "--category", "", "--memory-dir", str(memory.root)).code == 2


@pytest.mark.parametrize("key", ["Foo Bar", "Bad\nKey", "-lead", "Operation", "memory-id", ""])
def test_an_extra_trailer_key_git_cannot_parse_or_a_standard_one_is_refused(memory: Memory, key: str) -> None:
    mid = memory.store("Base memory").id
    before = head(memory)
    error = refusal(lambda: memory.update(mid, {"tags": ["x"]}, extra_trailers={key: "v"}))
    assert error.problems[0].field == "extra_trailers" and repr(key) in str(error)
    assert head(memory) == before


def test_a_valid_trailer_key_keeps_the_trailer_block_and_the_operation(memory: Memory) -> None:
    mid = memory.store("Base memory").id
    result = memory.update(mid, {"tags": ["x"]}, extra_trailers={"Ticket-Ref": "OPS-1\nsecond line"})
    message = git(memory.root, "log", "-1", "--format=%B", result.commit or "")
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True, check=True
    ).stdout
    assert "Remnic-Operation: update" in parsed and "Remnic-Ticket-Ref: OPS-1" in parsed
    assert memory.versions(mid)[-1].operation == "update"


def test_an_unknown_operation_is_refused_listing_the_known_ones(memory: Memory) -> None:
    mid = memory.store("Base memory").id
    before = head(memory)
    error = refusal(lambda: memory.update(mid, {"tags": ["y"]}, operation="bogus op"))
    assert error.problems[0].field == "operation"
    assert {"update", "forget", "review"} <= set(error.problems[0].options or ())
    assert head(memory) == before
    assert memory.update(mid, {"tags": ["y"]}, operation="review").operation == "review"


def test_update_turns_tags_into_strings_as_store_and_import_do(memory: Memory) -> None:
    mid = memory.store("We cut releases every Tuesday").id
    memory.update(mid, {"tags": [1, 2, 2, " ops "]})
    record = memory.get(mid)
    assert record.frontmatter["tags"] == ["1", "2", "ops"]
    assert "tags: [1, 2" not in (memory.root / record.path).read_text(encoding="utf-8")
    assert memory.update(mid, {"tags": "a, b"}).record.tags == ["a", "b"]
    assert refusal(lambda: memory.update(mid, {"tags": [1.5]})).problems[0].field == "tags"
    assert not [c for c in memory.doctor() if c["status"] != "ok" and record.path in str(c.get("detail", ""))]


# --- review: only a review's decisions, a one-line reason ---


@pytest.mark.parametrize("status", ["archived", "pending_review", "superseded"])
def test_review_disposition_takes_only_a_reviews_decisions(memory: Memory, status: str) -> None:
    pending = memory.store("Maybe the port is 5434", extra={"status": "pending_review"}).record
    before = head(memory)
    error = refusal(lambda: memory.review_disposition(pending.id, status))
    assert error.problems[0].field == "status"
    assert set(error.problems[0].options or ()) == {"active", "rejected", "quarantined"}
    assert head(memory) == before and memory.get(pending.id).status == "pending_review"


def test_a_reason_code_with_a_newline_or_control_character_is_refused(memory: Memory) -> None:
    pending = memory.store("Maybe the port is 5434", extra={"status": "pending_review"}).record
    for reason in ("has spaces\nand newline", "tab\there", "bell\x07"):
        assert (
            refusal(lambda r=reason: memory.review_disposition(pending.id, "active", reason_code=r)).problems[0].field
            == "reason_code"  # the keyword the caller gave (HTTP and MCP: reasonCode)
        )
    assert memory.get(pending.id).status == "pending_review"
    done = memory.review_disposition(pending.id, "active", reason_code="confirmed by ops")
    assert done.record.frontmatter["reviewReasonCode"] == "confirmed by ops"


# --- import: one path for the API and the CLI, so an export imports again ---


def export_lines(memory: Memory) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(item)) for item in memory.export().items]


def test_reimporting_an_export_through_the_api_skips_the_files_here(memory: Memory) -> None:
    one = memory.store("Deploys happen on Tuesdays", category="decision").record
    two = memory.store("Ana prefers tabs", category="preference").record
    items = export_lines(memory)
    tree, before = snapshot_tree(memory.root), head(memory)

    result = memory.import_records(items)  # was: ValidationError "path already exists"
    assert result.records == () and result.commit is None and not result.changed
    assert {(s.id, s.path, s.reason) for s in result.skipped} == {
        (one.id, one.path, "file"),
        (two.id, two.path, "file"),
    }
    assert sorted(result.duplicates) == sorted([one.id, two.id])
    assert result.to_dict()["duplicates"] == 2 and len(result.to_dict()["skipped"]) == 2
    assert snapshot_tree(memory.root) == tree and head(memory) == before
    assert memory.check_import(items) == []


def test_a_partial_restore_through_the_api_brings_back_only_the_lost_file(memory: Memory) -> None:
    memory.store("Deploys happen on Tuesdays", category="fact")
    lost = memory.store("The VPN needs a hardware key", category="fact").record
    items = export_lines(memory)
    original = (memory.root / lost.path).read_bytes()
    git(memory.root, "rm", "-q", lost.path)
    git(memory.root, "commit", "-qm", "lose a file")

    result = memory.import_records(items)
    assert [r.id for r in result.records] == [lost.id] and result.commit is not None
    assert [s.reason for s in result.skipped] == ["file"] and lost.id not in result.duplicates
    assert (memory.root / lost.path).read_bytes() == original
    assert git(memory.root, "status", "--porcelain").strip() == ""


def test_the_api_and_the_cli_skip_the_same_lines_for_the_same_reasons(memory: Memory, tmp_path: Path) -> None:
    memory.store("Deploys happen on Tuesdays", category="decision")
    items = [
        *export_lines(memory),
        {"content": "Deploys happen on Tuesdays", "category": "decision"},  # text here
        {"content": "Ana prefers tabs", "category": "preference"},
        {"content": "Ana prefers tabs", "category": "preference"},  # batch
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    twin = tmp_path / "twin"
    git(tmp_path, "clone", "-q", str(memory.root), str(twin))

    cli = run_cli("import", str(path), "--memory-dir", str(twin), "--json")
    assert cli.code == 0, cli.err
    api = memory.import_records(items)
    cli_data, api_data = cli.json(), api.to_dict()
    assert [(s["line"], s["reason"]) for s in api_data["skipped"]] == [(1, "file"), (2, "text"), (4, "batch")]
    assert [(s["line"], s["reason"]) for s in cli_data["skipped"]] == [(1, "file"), (2, "text"), (4, "batch")]
    assert api_data["imported"] == cli_data["imported"] == 1
    assert api_data["duplicates"] == cli_data["duplicates"] == 3
    written = api.records[0]
    assert written.content == "Ana prefers tabs" and written.id in api.duplicates  # line 4 duplicates line 3


def test_an_invalid_line_is_still_named_by_the_cli_with_its_file(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"content": "fine"}\n{"content": ""}\nnot json\n', encoding="utf-8")
    before = head(memory)
    result = run_cli("import", str(path), "--memory-dir", str(memory.root))
    assert result.code == 2 and "2 problem(s) in" in result.err
    assert f"{path}:2: content" in result.err and f"{path}:3: invalid JSON" in result.err
    single = tmp_path / "one.jsonl"
    single.write_text('{"content": "fine"}\n{"content": ""}\n', encoding="utf-8")
    result = run_cli("import", str(single), "--memory-dir", str(memory.root))
    assert result.code == 2 and f"{single}:2: content" in result.err and "nothing was imported" in result.err
    assert head(memory) == before


# --- the public types ---


def test_every_returned_type_and_raised_error_is_exported() -> None:
    from remnic import errors
    from remnic.recall.types import RecallHit, RecallResult

    wanted = {
        "RecallResult",
        "RecallHit",
        "RecallXraySnapshot",
        "Export",
        "Version",
        "ConsolidationResult",
        "DedupResult",
        "ImportResult",
        "ImportSkip",
        "FieldProblem",
        "RepoBusyError",
        "LedgerError",
        "RemoteUnreachableError",
        "PushRejectedError",
        "UncommittedChangesError",
        "RemoteMovedError",
    }
    assert wanted <= set(remnic.__all__)
    assert all(getattr(remnic, name) is not None for name in remnic.__all__)
    assert remnic.RepoBusyError is errors.RepoBusyError and remnic.RecallHit is RecallHit
    assert typing.get_type_hints(RecallResult.__iter__)["return"] == Iterator[RecallHit]
    for name, value in vars(errors).items():
        if isinstance(value, type) and issubclass(value, errors.RemnicError):
            assert name in remnic.__all__, name
