"""`remnic review list` pages the whole queue: its size, the next offset, and --offset, as `remnic list`."""

from __future__ import annotations

from conftest import run_cli

from remnic.service.memory import Memory
from remnic.service.review import queue_page


def _queue(memory: Memory, n: int) -> None:
    items = [{"content": f"Pending item {i} about kafka", "status": "pending_review"} for i in range(n)]
    items.append({"content": "An ordinary active memory about kafka"})
    memory.import_records(items)


def test_review_list_reports_the_queue_size_and_pages_through_it(memory: Memory) -> None:
    _queue(memory, 7)
    d = str(memory.root)
    first = run_cli("review", "list", "--limit", "3", "--json", "--memory-dir", d).json()
    assert (first["count"], first["total"], first["offset"], first["limit"], first["nextOffset"]) == (3, 7, 0, 3, 3)
    seen = [m["id"] for m in first["memories"]]
    offset = first["nextOffset"]
    while offset is not None:
        page = run_cli("review", "list", "--limit", "3", "--offset", str(offset), "--json", "--memory-dir", d).json()
        assert page["total"] == 7 and page["offset"] == offset
        seen += [m["id"] for m in page["memories"]]
        offset = page["nextOffset"]
    every = [r.id for r in queue_page(memory, limit=100)[0]]
    assert seen == every and len(set(seen)) == 7  # every queued memory once, in the unpaged order

    text = run_cli("review", "list", "--limit", "3", "--memory-dir", d)
    assert text.code == 0 and "1-3 of 7 waiting for review; 4 more: --offset 3" in text.out
    last = run_cli("review", "list", "--limit", "3", "--offset", "6", "--memory-dir", d).out
    assert "7-7 of 7 waiting for review" in last and "more" not in last
    past = run_cli("review", "list", "--offset", "50", "--memory-dir", d).out
    assert "nothing at --offset 50 (7 waiting for review)" in past
    whole = run_cli("review", "list", "--memory-dir", d).out
    assert "7 memories waiting for review" in whole and "--offset" not in whole


def test_review_list_offset_is_checked(memory: Memory) -> None:
    bad = run_cli("review", "list", "--offset", "-1", "--memory-dir", str(memory.root))
    assert bad.code == 2 and "--offset" in bad.err


def test_an_offset_past_any_queue_is_refused_not_answered_as_a_float(memory: Memory) -> None:
    """JSON numbers past 2**53 came back as 1e+23, which the MCP output schema says is an integer."""
    import pytest

    from remnic.errors import ValidationError
    from remnic.server import Api

    api = Api(memory)
    for name in ("review_queue_list", "memories_list"):
        with pytest.raises(ValidationError, match="offset: must be at most 2147483647") as refused:
            api.call(name, "alice", {"offset": 10**23})
        assert refused.value.http_status == 400
    assert api.call("review_queue_list", "alice", {"offset": 2**31 - 1}).body["memories"] == []
