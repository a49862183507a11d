"""Approving a queued memory whose text states no value remnic keys supersedes nothing, and the result
says so (a warning, in the CLI's text and --json) with the command that replaces a memory by hand; an
approval that does supersede says what it replaced instead, with no such line."""

from __future__ import annotations

import pytest
import test_r36_f1_api_names as api_names
from conftest import run_cli

from remnic.service.memory import Memory
from remnic.service.review import NO_KEY_NOTE

memory = api_names.memory  # one repository fixture for the r36 f1 modules (each module its own)


@pytest.fixture(scope="module")
def current(memory: Memory) -> str:
    keyed = {"entityRef": "staging-db", "structuredAttributes": {"port": "5433"}}
    return memory.store("The staging DB port is 5433", extra=keyed).record.id


def test_an_approval_with_no_key_says_it_superseded_nothing(memory: Memory, current: str) -> None:
    queued = memory.store("Maybe the staging database listens on 5434 now", extra={"status": "pending_review"})
    pending = queued.record.id
    cli = run_cli("review", "approve", pending, "--memory-dir", str(memory.root), "--json")
    assert cli.code == 0, cli.err
    note = NO_KEY_NOTE.format(id=pending)
    assert cli.json()["warnings"] == [note] and cli.json()["alsoChanged"] == []
    assert note.startswith("nothing superseded") and f"remnic update {pending} --supersedes OTHER" in note
    assert memory.get(current).status == "active"


def test_the_text_says_it_too(memory: Memory, current: str) -> None:
    queued = memory.store("Maybe the staging database listens on 5435", extra={"status": "pending_review"})
    text = run_cli("review", "approve", queued.record.id, "--memory-dir", str(memory.root))
    assert text.code == 0 and text.out.splitlines()[-1] == NO_KEY_NOTE.format(id=queued.record.id), text.out
    assert memory.get(current).status == "active"


def test_an_approval_that_supersedes_has_no_such_note(memory: Memory, current: str) -> None:
    pending = memory.store("The staging DB port is 5436 maybe", extra={"status": "pending_review"}).record.id
    result = memory.review_disposition(pending, "active")
    assert [a.id for a in result.also_changed] == [current] and result.warnings == ()
    assert memory.get(current).status == "superseded"
