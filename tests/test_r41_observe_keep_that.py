"""Round 41 (observe): "Remember that …", "Keep in mind that …", "Please note that …", "Don't forget that …"
ask to keep what follows; the fact is what follows, with its key ("Note that the staging DB port is 5433"
keys as "The staging DB port is 5433" does). "Keep in mind that the API rate limit is 100 requests per
minute" was dropped, and "Btw, remember that Dana owns …" lost all but "that …"."""

from __future__ import annotations

import pytest

from remnic.config import ObserveSettings
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn


def _planned(text: str) -> list[tuple[str, str | None, dict[str, str], str]]:
    turn = Turn("user", text, 0, turn_id="L0", speaker="Ana", timestamp="2026-09-01T09:00:00Z")
    planned = plan_observations([turn], session_key="s", settings=ObserveSettings())
    return [(o.fact.content, o.fact.entity_ref, dict(o.fact.structured_attributes), o.verdict.kind) for o in planned]


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("Note that the staging DB port is 5433.", ("The staging DB port is 5433.", "staging-db", {"port": "5433"})),
        (
            "Keep in mind that the API rate limit is 100 requests per minute.",
            ("The API rate limit is 100 requests per minute.", "api-rate", {"limit": "100 requests per minute"}),
        ),
        (
            "Btw, remember that Dana owns the billing service.",
            ("Dana owns the billing service.", "billing-service", {"owner": "Dana"}),
        ),
        (
            "Please note that Dana owns the billing service.",
            ("Dana owns the billing service.", "billing-service", {"owner": "Dana"}),
        ),
        (
            "Remember that the CI cache is keyed on the lockfile hash.",
            ("The CI cache is keyed on the lockfile hash.", None, {}),
        ),
    ],
)
def test_a_request_to_remember_keeps_the_statement_that_follows(
    said: str, fact: tuple[str, str | None, dict[str, str]]
) -> None:
    assert _planned(said) == [(*fact, "accept")]


def test_remembering_something_is_not_asked_to_be_kept() -> None:
    assert [content for content, *_ in _planned("I remember that we used Jenkins back then.")] == [
        "Ana remembers that we used Jenkins back then."
    ]
