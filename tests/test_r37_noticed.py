"""Session 37: why a memory waits for review is said on every surface (GET review-queue, the review-disposition
route, their MCP tools, `remnic review`), a stopword-only `lcm search` warns over HTTP and MCP as the CLI
does, and docs/observe.md's table of the session buffer's retry rule is what the buffer does.

A real server on 127.0.0.1 (the official mcp SDK client over streamable HTTP, which checks each tool's
outputSchema), the CLI in-process, and real session buffers in a temp dir.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import run_cli
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_server_http import Env, make_shared_env

from remnic.observe.buffer import SessionBuffer
from remnic.observe.records import Turn

HEDGE_REASON = "Hedged: the speaker is not sure"
TURNS = [
    {"role": "user", "content": "I think we might move the standup to 10:00 maybe."},
    {"role": "user", "content": "We decided to cut releases every Tuesday."},
    {"role": "user", "content": "Our team lunch is every Friday."},
]
STOPWORDS = "the of and is to"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        for served in make_shared_env(tmp_path_factory.mktemp("r37")):
            served.memory.observe("s1", TURNS, flush=True)  # one hedged fact deferred, two accepted
            yield served


def mcp_call(env: Env, tool: str, arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {env.alice}"}, timeout=30)
        async with Client(streamable_http_client(env.url + "/mcp", http_client=http)) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(asyncio.wait_for(go(), timeout=60))


def cli(env: Env, *args: str) -> Any:
    r = run_cli(*args, "--json", "--memory-dir", str(env.root))
    assert r.code == 0, r.err
    return r.json()


def queue_reasons(env: Env) -> dict[str, Any]:
    """GET review-queue's queueReason by id, checked against the MCP tool's and `remnic review list --json`'s."""
    r = env.call("GET", "/remnic/v1/review-queue")
    assert r.status == 200, r.raw
    body = r.json()
    tool = mcp_call(env, "remnic_review_queue_list", {})
    assert not tool.is_error and tool.structured_content == body
    said = {m["id"]: m["queueReason"] for m in body["memories"]}
    assert {m["id"]: m["queueReason"] for m in cli(env, "review", "list")["memories"]} == said
    return said


def test_review_queue_and_decisions_say_why_a_memory_waited_on_every_surface(env: Env) -> None:
    memories = {m["content"]: m["id"] for m in cli(env, "list")["memories"]}
    hedged = next(i for c, i in memories.items() if "standup" in c)
    lunch = memories["Our team lunch is every Friday."]
    assert queue_reasons(env) == {hedged: HEDGE_REASON}

    # A flag over HTTP: the active memory waited for nothing; then the queue says a person flagged it.
    r = env.call(
        "POST", "/remnic/v1/review-disposition", {"memoryId": lunch, "status": "quarantined", "reasonCode": "stale"}
    )
    assert r.status == 200, r.raw
    flagged = r.json()
    assert (flagged["decision"], flagged["queueReason"], flagged["reasonCode"]) == ("flagged", None, "stale")
    assert flagged["alsoChanged"] == []
    assert queue_reasons(env) == {hedged: HEDGE_REASON, lunch: "flagged by a person (stale)"}

    # Decided over MCP and on the CLI, each decision carries the reason the memory waited for.
    tool = mcp_call(env, "remnic_review_disposition", {"memoryId": hedged, "status": "active", "reasonCode": "ok"})
    assert not tool.is_error, tool.content
    approved = tool.structured_content
    assert (approved["decision"], approved["queueReason"], approved["previousStatus"]) == (
        "approved",
        HEDGE_REASON,
        "pending_review",
    )
    dismissed = cli(env, "review", "dismiss", lunch, "--reason", "moved")
    assert (dismissed["decision"], dismissed["queueReason"]) == ("dismissed", "flagged by a person (stale)")
    text = run_cli("review", "flag", lunch, "--reason", "again", "--memory-dir", str(env.root))
    assert text.code == 0 and "(was rejected)" in text.out, text.out  # a dismissed memory waited for nothing
    assert queue_reasons(env) == {lunch: "flagged by a person (again)"}


def test_a_stopword_only_lcm_search_warns_over_http_and_mcp_as_the_cli_does(env: Env) -> None:
    said = cli(env, "lcm", "search", STOPWORDS)["warnings"]
    assert len(said) == 1 and "searched as a phrase" in said[0]
    r = env.call("POST", "/remnic/v1/lcm/search", {"query": STOPWORDS})
    assert r.status == 200, r.raw
    body = r.json()
    assert body["count"] == 0 and body["warnings"] == [{"field": "query", "message": said[0]}]
    tool = mcp_call(env, "remnic_lcm_search", {"query": STOPWORDS})
    assert not tool.is_error and tool.structured_content == body
    # Recall's warning for the same query is in the same field, shaped alike.
    recalled = env.call("POST", "/remnic/v1/recall", {"query": STOPWORDS}).json()
    assert [w["field"] for w in recalled["warnings"]] == ["query"]
    plain = env.call("POST", "/remnic/v1/lcm/search", {"query": "team lunch"}).json()
    assert plain["count"] >= 1 and "warnings" not in plain


# --- docs/observe.md's retry table, row by row ---

DOC = Path(__file__).resolve().parent.parent / "docs" / "observe.md"


def _t(text: str, turn_id: str | None = None, *, host: bool = False, line: bool = False) -> Turn:
    return Turn("user", text, 0, turn_id=turn_id, host_id=host, positional=line)


def _said(result: Any) -> tuple[bool, bool]:
    """(was every turn a retry, was a turn id warned about)."""
    return (not result.turns and result.duplicates > 0, bool(result.reworded or result.reread))


def same_words(tmp: Path) -> tuple[bool, bool]:
    buffer = SessionBuffer(tmp, "same")
    buffer.append([_t("We deploy on Fridays.", "a1")], now="2026-04-01T10:00:00Z")
    by_id = _said(buffer.append([_t("We deploy on Fridays.", "a1")], now="2026-04-01T12:00:00Z"))
    buffer.append([_t("Hello there.")], now="2026-04-01T10:00:00Z")
    # Without an id, within observe.retryWindowS (600 s) of the last receipt, and not after it.
    assert _said(buffer.append([_t("Hello there.")], now="2026-04-01T10:09:00Z")) == (True, False)
    assert len(buffer.append([_t("Hello there.")], now="2026-04-01T10:19:01Z").turns) == 1
    return by_id


def an_older_bare_id(tmp: Path) -> tuple[bool, bool]:
    buffer = SessionBuffer(tmp, "bare")
    buffer.path.parent.mkdir(parents=True, exist_ok=True)
    buffer.path.write_text(json.dumps({"op": "base", "nextSeq": 3, "seenTurnIds": ["c7", "L2"]}) + "\n")
    assert _said(buffer.append([_t("Line two, whatever it said.", "L2", line=True)])) == (True, False)
    return _said(buffer.append([_t("Words never seen.", "c7")]))


def a_host_id_read_again(tmp: Path) -> tuple[bool, bool]:
    buffer = SessionBuffer(tmp, "host")
    buffer.append([_t("First words.", "u1", host=True)])
    said = _said(buffer.append([_t("Fir5t words.", "u1", host=True)]))
    assert _said(buffer.append([_t("Fir5t words.", "u1", host=True)])) == (True, False)  # warned once
    return said


def a_re_read_line_transcript(tmp: Path) -> tuple[bool, bool]:
    buffer = SessionBuffer(tmp, "lines")
    lines = ["We use Postgres.", "Ben owns billing.", "The port is 5432."]
    buffer.append([_t(text, f"L{i}", line=True) for i, text in enumerate(lines, 1)])
    again = [_t(text, f"L{i}", line=True) for i, text in enumerate([*lines[:2], "The port is 5433."], 1)]
    result = buffer.append(again)
    assert result.reread == ("L3",)
    assert _said(buffer.append(again)) == (True, False)  # warned once
    return _said(result)


def any_other_words(tmp: Path) -> tuple[bool, bool]:
    buffer = SessionBuffer(tmp, "other")
    buffer.append([_t("Our lunch is on Friday.", "1")])
    client = buffer.append([_t("My favourite database is SQLite.", "1")])
    assert (len(client.turns), client.reworded) == (1, ("1",))
    twice = buffer.append([_t("We host on Hetzner.", "h1", host=True), _t("I prefer Terraform.", "h1", host=True)])
    assert (len(twice.turns), twice.reworded) == (2, ("h1",))
    transcript = SessionBuffer(tmp, "two-files")
    transcript.append([_t(f"first file line {i}", f"L{i}", line=True) for i in (1, 2, 3)])
    other = transcript.append([_t(f"second file line {i}", f"L{i}", line=True) for i in (1, 2, 3)])
    assert (len(other.turns), other.duplicates, other.reworded, other.reread) == (3, 0, (), ())  # no warning
    return _said(client)


ROWS: dict[str, Callable[[Path], tuple[bool, bool]]] = {
    "same words": same_words,
    "an older bare id": an_older_bare_id,
    "a host id read again": a_host_id_read_again,
    "a re-read line transcript": a_re_read_line_transcript,
    "any other words": any_other_words,
}


def _table() -> dict[str, tuple[str, str]]:
    """docs/observe.md's retry table: its bold case → (is, warned)."""
    text = DOC.read_text(encoding="utf-8")
    head = text.index("| a turn sent again | is | warned |")
    rows = {}
    for line in text[head:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        case, is_, warned = (c.strip() for c in line.strip("|").split(" | "))
        label = re.match(r"\*\*(.+?)\*\*", case)
        assert label, line
        rows[label.group(1)] = (is_, warned)
    return rows


def test_the_observe_docs_retry_table_is_what_the_buffer_does(tmp_path: Path) -> None:
    table = _table()
    assert set(table) == set(ROWS)
    for case, scenario in ROWS.items():
        is_, warned = table[case]
        assert scenario(tmp_path) == (is_.startswith("a retry"), not warned.startswith("no")), case
