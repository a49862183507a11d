"""Round 41 (observe): a project's setting and a tool a thing uses are durable facts, kept though they name
no thing a key could be of: "The default branch is main", "The default timeout is 30 seconds", "Our base
image is alpine", "The repo uses ruff for linting" were dropped as statements without a cue. A setting-like
sentence that says nothing durable ("The main problem is the tests", "The default is fine", "The team uses
it to ship") is not one."""

from __future__ import annotations

import pytest

from remnic.config import ObserveSettings
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn


def _kept(text: str) -> list[tuple[str, str, str]]:
    turn = Turn("user", text, 0, turn_id="L0", speaker="Ana", timestamp="2026-09-01T09:00:00Z")
    planned = plan_observations([turn], session_key="s", settings=ObserveSettings())
    return [(o.fact.content, o.fact.category, o.verdict.kind) for o in planned]


@pytest.mark.parametrize(
    "said",
    [
        "The default branch is main.",
        "The default timeout is 30 seconds.",
        "Our base image is alpine.",
        "The repo uses ruff for linting.",
        "The backend uses uv to manage dependencies.",
    ],
)
def test_a_setting_or_a_tool_in_use_is_kept(said: str) -> None:
    assert _kept(said) == [(said, "fact", "accept")]


@pytest.mark.parametrize(
    "said", ["The main problem is the tests.", "The default is fine.", "The team uses it to ship."]
)
def test_what_only_looks_like_one_is_not(said: str) -> None:
    assert _kept(said) == []
