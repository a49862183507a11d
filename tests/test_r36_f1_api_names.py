"""A refused argument is named as the caller gave it: the Python keyword (``reason_code``, ``as_of``,
``tag_match``, ``memory_id``) from the Python API, the request's field (``reasonCode``, ``asOf``,
``memoryId``) over HTTP and MCP (both go through ``Api.call``), and the flag (``--reason``) on the CLI.
In-process: the Api object the server runs, without a socket."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.errors import ValidationError
from remnic.server.api import Api
from remnic.service.memory import Memory


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("names") / "mem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        mem = Memory.init(root, settings=settings_for(root))
        yield mem
        mem.close()


@pytest.fixture(scope="module")
def pending(memory: Memory) -> str:
    return memory.store("Maybe the port is 5434", extra={"status": "pending_review"}).record.id


def refused(call: Callable[[], Any]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        call()
    return caught.value


def test_the_python_api_names_its_own_keywords(memory: Memory, pending: str) -> None:
    error = refused(lambda: memory.review_disposition(pending, "active", reason_code="ok\nbut"))
    assert [p.field for p in error.problems] == ["reason_code"] and str(error).startswith(
        "reason_code: must be one line"
    )
    assert "reasonCode" not in str(error)
    error = refused(lambda: memory.recall("port", as_of="yesterday-ish"))
    assert error.problems[0].field == "as_of" and str(error).startswith("as_of: 'yesterday-ish' is not an ISO 8601")
    assert refused(lambda: memory.recall("port", tag_match="most")).problems[0].field == "tag_match"
    # The id is resolved by Memory.memory_id(id_or_path): the caller gave memory_id.
    assert refused(lambda: memory.review_disposition("", "active")).problems[0].field == "memory_id"
    assert memory.get(pending).status == "pending_review"


def test_http_and_mcp_still_name_the_request_fields(memory: Memory, pending: str) -> None:
    api = Api(memory)
    error = refused(
        lambda: api.call(
            "review_disposition", "local", {"memoryId": pending, "status": "active", "reasonCode": "ok\nbut"}
        )
    )
    assert [p.field for p in error.problems] == ["reasonCode"] and str(error).startswith("reasonCode: must be one line")
    error = refused(lambda: api.call("recall", "local", {"query": "port", "asOf": "yesterday-ish"}))
    assert error.problems[0].field == "asOf" and str(error).startswith("asOf: ")


def test_the_cli_still_names_its_flag(memory: Memory, pending: str) -> None:
    cli = run_cli("review", "approve", pending, "--reason", "ok\nbut", "--memory-dir", str(memory.root))
    assert cli.code == 2 and "error: --reason: must be one line" in cli.err and "reason_code" not in cli.err, cli


def test_keywords_spelled_unlike_their_request_field_are_named_as_given(memory: Memory) -> None:
    assert refused(lambda: memory.day_summary(day="2026-13-45")).problems[0].field == "day"
    assert refused(lambda: memory.promote("nosuch", to_space="")).problems[0].field == "to_space"


def test_memory_given_a_path_says_how_to_open_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match=r"use Memory\.open\(path\)"):
        Memory(str(tmp_path))  # type: ignore[arg-type]
