"""A hedge said inside the value with no comma ("… is 5433 maybe", "… 5433 I think", "… Friday or so",
"… is probably 5433") is not part of the keyed value, as observed and on approval; a name holding a
hedge word stays whole ("Maybe Tomorrow"), and a value that is only a hedge keys nothing."""

from __future__ import annotations

import pytest
import test_r36_f1_api_names as api_names

from remnic.observe.keys import statement_key, value_key
from remnic.service.memory import Memory

memory = api_names.memory  # one repository fixture for the r36 f1 modules (each module its own)

PORT = ("staging-db", {"port": "5433"})


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("The staging DB port is 5433 maybe", PORT),
        ("The staging DB port is 5433 maybe?", PORT),
        ("The staging DB port is 5433 I think", PORT),
        ("the staging DB port is 5433 i guess", PORT),
        ("The staging DB port is 5433 probably", PORT),
        ("The staging DB port is 5433 not sure", PORT),
        ("The staging DB port is 5433 I think maybe", PORT),
        ("The staging DB port is probably 5433", PORT),
        ("We switched the staging DB to port 5433 perhaps", PORT),
        ("The staging DB runs on port 5433 probably", PORT),
        ("The launch deadline is Friday or so", ("launch", {"deadline": "Friday"})),
        ("The billing service is owned by Dana I think", ("billing-service", {"owner": "Dana"})),
        # A name with a hedge word in it is a value, not a hedge.
        ("Our band name is Maybe Tomorrow", ("band", {"name": "Maybe Tomorrow"})),
        ("Our band name is Definitely Maybe", ("band", {"name": "Definitely Maybe"})),
        ("Caroline's favourite album is What I Think", ("caroline", {"favourite-album": "What I Think"})),
        # Only a hedge: no value at all.
        ("The staging DB port is maybe", (None, {})),
        ("The staging DB port is I think", (None, {})),
    ],
)
def test_a_hedge_inside_the_value_is_set_aside(sentence: str, key: tuple[str | None, dict[str, str]]) -> None:
    assert value_key(sentence, "") == key
    assert statement_key(sentence) == key  # what an approval keys


def test_an_observed_fact_keys_the_value_without_its_trailing_hedge(memory: Memory) -> None:
    turns = [
        {"role": "user", "content": "The staging DB port is 5433 maybe"},
        {"role": "assistant", "content": "Noted."},
    ]
    result = memory.observe("hedge", turns, flush=True, dry_run=True)
    (observation,) = result.observations
    fact = observation.fact
    assert (fact.entity_ref, dict(fact.structured_attributes)) == PORT
    assert observation.proposed_status == "pending_review"  # still hedged: queued for a person
