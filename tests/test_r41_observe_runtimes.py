"""Round 41 (observe): a runtime's version said of the thing it runs on has that thing's key, in every
form a team says it ("We run Node 18 on the build agents", "The build agents run on Node 18", "Our build
agents run Node 18"), so "We upgraded the build agents to Node 20" retires it. What is no runtime's version
("The kids use Room 5", "The API uses Port 8080") and another thing's or runtime's version keep their own.

Each case pairs what must change with what must not: a wrong supersession retires a fact still true."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from remnic.observe.keys import value_key
from remnic.service import Memory


def _retires(new: str, old: str) -> bool:
    """Whether ``new``'s key states another value for an attribute ``old``'s key states."""
    (e_new, a_new), (e_old, a_old) = value_key(new, "Ana"), value_key(old, "Ana")
    return bool(e_new) and e_new == e_old and _differ(a_new, a_old)


def _differ(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    return any(a[k].strip().lower() != b[k].strip().lower() for k in a.keys() & b.keys())


RETIRING = [
    ("We upgraded the build agents to Node 20.", "We run Node 18 on the build agents."),
    ("We upgraded the build agents to Node 20.", "We use Node 18 on our build agents."),
    ("We upgraded the build agents to Node 20.", "The build agents run on Node 18."),
    ("Our build agents run Node 20 now.", "Our build agents run Node 18."),
    ("The build agents currently run on Node 20.", "We run Node 18 on the build agents."),
    ("The API uses Python 3.12.", "The API runs on Python 3.11."),
    ("The API runs Python 3.12.", "We use Python 3.11 for the API."),
]
STILL_TRUE = [
    ("We run Node 20 on the build agents.", "We run Node 18 on the deploy agents."),
    ("The build agents run on Python 3.12.", "The build agents run on Node 18."),
    ("We use Podman on our laptops.", "We use Docker on our laptops."),
    ("The kids use Room 5.", "The kids use Room 4."),
    ("The API uses Port 8081.", "The API uses Port 8080."),
    ("The build agents use Node 20.", "The build agents run on Node 18."),  # "uses" a major alone: no key
    ("It runs Node 20.", "The build agents run on Node 18."),
]


def test_a_runtime_version_said_of_where_it_runs_is_retired_by_a_new_one_and_nothing_else() -> None:
    assert [pair for pair in RETIRING if not _retires(*pair)] == []
    assert [pair for pair in STILL_TRUE if _retires(*pair)] == []


@pytest.mark.parametrize(
    "old", ["We run Node 18 on the build agents.", "The build agents run on Node 18.", "Our build agents run Node 18."]
)
def test_the_old_runtime_memory_leaves_and_the_other_stays(memory: Memory, old: str) -> None:
    kept = "The API runs on Python 3.11."
    memory.observe(
        "a", [{"role": "user", "content": f"{old}\n{kept}", "timestamp": "2026-09-01T09:00:00Z"}], flush=True
    )
    new = "We upgraded the build agents to Node 20."
    memory.observe("b", [{"role": "user", "content": new, "timestamp": "2026-09-15T09:00:00Z"}], flush=True)
    records = memory.list()
    status = {r.content.strip(): r.status for r in records}
    (gone,) = [r for r in records if "Node 18" in r.content]
    (current,) = [r for r in records if "Node 20" in r.content]
    assert (gone.status, gone.frontmatter.get("supersededBy"), current.status) == ("superseded", current.id, "active")
    assert status[kept] == "active", status
