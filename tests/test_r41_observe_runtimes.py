"""Round 41 (observe): a runtime's version said of the thing it runs on has that thing's key, in every
form a team says it ("We run Node 18 on the build agents", "The build agents run on Node 18", "Our build
agents run Node 18"), so "We upgraded the build agents to Node 20" retires it. What is no runtime's version
("The kids use Room 5", "The API uses Port 8080") and another thing's or runtime's version keep their own.
"Node.js" is Node. A new version said alone right after the old one ("We run Node 18." … "Node 20 now.") waits for review as
its correction instead of being dropped as too short.

Each case pairs what must change with what must not: a wrong supersession retires a fact still true."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from remnic.config import ObserveSettings
from remnic.observe.keys import value_key
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn
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
    # "Node.js" is Node: a version of either replaces the other's.
    ("We run Node 20.", "We run Node.js 18."),
    ("We upgraded to Node.js 20.", "We run Node 18."),
    ("We upgraded the API to Node 20.", "The API runs on Node.js 18."),
    ("We use Node.js 20 for the API.", "The API runs on Node 18."),
]
STILL_TRUE = [
    ("We run Node 20 on the build agents.", "We run Node 18 on the deploy agents."),
    ("The build agents run on Python 3.12.", "The build agents run on Node 18."),
    ("We use Podman on our laptops.", "We use Docker on our laptops."),
    ("The kids use Room 5.", "The kids use Room 4."),
    ("The API uses Port 8081.", "The API uses Port 8080."),
    ("The build agents use Node 20.", "The build agents run on Node 18."),  # "uses" a major alone: no key
    ("It runs Node 20.", "The build agents run on Node 18."),
    ("We run Deno 2.", "We run Node.js 18."),
    ("The API runs on Next.js 14.", "The API runs on Node.js 18."),
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


def _said_after(first: str, later: str) -> list[tuple[str, str | None, dict[str, str], str | None]]:
    turns = [
        Turn("user", first, 0, turn_id="L0", speaker="Ana", timestamp="2026-09-01T09:00:00Z"),
        Turn("assistant", "Noted.", 1, turn_id="L1", speaker="Assistant", timestamp="2026-09-01T09:00:10Z"),
        Turn("user", later, 2, turn_id="L2", speaker="Ana", timestamp="2026-09-01T09:01:00Z"),
    ]
    planned = plan_observations(turns, session_key="s", settings=ObserveSettings())
    return [(o.fact.content, o.fact.entity_ref, dict(o.fact.structured_attributes), o.proposed_status) for o in planned]


def test_a_new_version_said_alone_right_after_the_old_one_waits_for_review_as_its_correction() -> None:
    # Too short to be kept on its own, but another value of the very key the turn before stated.
    assert _said_after("We run Node 18.", "Node 20 now.")[1:] == [
        ("Node 20 now.", "node", {"version": "20"}, "pending_review")
    ]
    assert _said_after("We run Node 18.", "Node 18 now.")[1:] == []  # the same value: nothing new
    assert _said_after("We run Node 18.", "Python 3.12 now.")[1:] == []  # another runtime's
    assert _said_after("The staging DB port is 5432.", "Node 20 now.")[1:] == []  # another thing's


def test_approving_the_new_version_supersedes_the_old(memory: Memory) -> None:
    text = (
        "[2026-11-27T09:00:00Z] Ana: We run Node 18.\n[2026-11-27T09:01:00Z] Assistant: Noted.\n"
        "[2026-11-27T09:02:00Z] Ana: Node 20 now.\n"
    )
    memory.observe_transcript("k", text, fmt="plain", flush=True)
    (waiting,) = [r for r in memory.list() if r.status == "pending_review"]
    memory.review_disposition(waiting.id, "active")
    (old,) = [r for r in memory.list() if "Node 18" in r.content]
    assert (old.status, old.frontmatter.get("supersededBy")) == ("superseded", waiting.id)
