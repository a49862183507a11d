"""Round 41 (observe): a state a thing is in ("The prod database is read-only on weekends", "The staging DB
is down") is no value of its last word: it is keyed as the whole thing's ``state``, so "The prod database is
Postgres 16" said after it leaves both current, while the thing's next state ("The staging DB is up again")
has its key. A value said so keys as before, lower case included ("Our editor is vim")."""

from __future__ import annotations

import pytest

from remnic.observe.keys import value_key
from remnic.service import Memory


@pytest.mark.parametrize(
    ("said", "key"),
    [
        ("The prod database is read-only on weekends.", ("prod-database", {"state": "read-only on weekends"})),
        ("The staging DB is slow on Mondays.", ("staging-db", {"state": "slow on Mondays"})),
        ("The staging DB is down.", ("staging-db", {"state": "down"})),
        ("The staging DB is up again.", ("staging-db", {"state": "up"})),
        ("Our team is small.", ("team", {"state": "small"})),
        ("My laptop is slow.", ("ana-laptop", {"state": "slow"})),
        # values
        ("The prod database is Postgres 16.", ("prod", {"database": "Postgres 16"})),
        ("Our database is postgres.", ("database", {"database": "postgres"})),
        ("Our editor is vim.", ("editor", {"editor": "vim"})),
        ("Our region is eu-west-1.", ("region", {"region": "eu-west-1"})),
        ("The staging DB port is 5432.", ("staging-db", {"port": "5432"})),
    ],
)
def test_a_state_is_the_whole_things_and_a_value_keeps_its_key(said: str, key: tuple[str, dict[str, str]]) -> None:
    assert value_key(said, "Ana") == key


def _observed(memory: Memory, *said: str) -> dict[str, str]:
    for day, text in enumerate(said, start=1):
        turn = {"role": "user", "content": text, "timestamp": f"2026-09-{day:02d}T09:00:00Z"}
        memory.observe(f"s{day}", [turn], flush=True)
    return {r.content.strip(): r.status for r in memory.list()}


def test_a_value_said_later_leaves_the_state_current(memory: Memory) -> None:
    state, value = "The prod database is read-only on weekends.", "The prod database is Postgres 16."
    assert _observed(memory, state, value) == {state: "active", value: "active"}
