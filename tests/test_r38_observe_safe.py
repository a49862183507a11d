"""Round 38 (verification of the observe changes): a supersession key takes a fact out of recall, so
only a value that holds one at a time keys. A second tool for an open-ended purpose ("We use Redis for
the billing service" beside Postgres) and another runtime ("runs on Ubuntu 22.04" beside Python 3.11)
replace nothing; a past outing on a weekday is no schedule; a completion closes a commitment only for
the same object ("the PR for the search service" is not "the PR for the billing service"); a sentence
that states a fact beside chatter or an absence is kept; a group-chat answer said in words is one."""

from __future__ import annotations

from typing import Any

import pytest

from remnic.config import ObserveSettings
from remnic.observe.commitments import commitment_key
from remnic.observe.keys import value_key
from remnic.observe.pipeline import _replies_to, plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.service import Memory


def _observe(memory: Memory, session: str, when: str, *lines: str) -> Any:
    text = "".join(f"[{when}T09:{i:02d}:00Z] {line}\n" for i, line in enumerate(lines))
    return memory.observe_transcript(session, text, fmt="plain", flush=True).flushes[0]


def _plan(*lines: str) -> list[MemoryObservation]:
    turns = []
    for i, line in enumerate(lines):
        who, text = line.split(": ", 1)
        turns.append(Turn("user", text, i, turn_id=f"L{i}", speaker=who, timestamp=f"2026-09-02T09:{i:02d}:00Z"))
    return plan_observations(turns, session_key="s", settings=ObserveSettings())


def test_a_second_tool_or_runtime_retires_nothing(memory: Memory) -> None:
    _observe(
        memory,
        "a",
        "2026-09-01",
        "Ben: We use Postgres for the billing service.",
        "Priya: We use React for the frontend.",
        "Ben: We use Terraform for infrastructure.",
        "Ana: The API runs on Python 3.11.",
        "Ben: We use Python for scripting.",
    )
    flush = _observe(
        memory,
        "b",
        "2026-09-15",
        "Ben: We use Redis for the billing service.",
        "Ewa: We use TypeScript for the frontend.",
        "Ben: We use Ansible for infrastructure.",
        "Ben: The API runs on Ubuntu 22.04.",
        "Ewa: We use Bash for scripting.",
    )
    assert not flush.superseded
    assert {r.status for r in memory.list()} == {"active"}
    assert len(memory.list()) == 10


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Ana: The API runs on Python 3.11.", "Ana: The API runs on Python 3.12."),
        ("Ana: We use Jenkins for CI.", "Ana: We use GitLab CI for CI."),
        ("Ben: We use Jenkins for deploys.", "Ben: Decision: we switched to Argo CD for deploys."),
    ],
)
def test_the_same_runtime_or_a_one_tool_purpose_is_still_replaced(memory: Memory, old: str, new: str) -> None:
    _observe(memory, "a", "2026-09-01", old)
    assert len(_observe(memory, "b", "2026-09-15", new).superseded) == 1


def test_a_past_outing_on_a_weekday_retires_the_last_one_never(memory: Memory) -> None:
    _observe(memory, "a", "2026-09-01", "Ana: We went hiking on Saturday.", "Ana: We went to the pub on Friday.")
    flush = _observe(
        memory, "b", "2026-09-20", "Ana: We went hiking on Sunday.", "Ana: We went to the pub on Thursday."
    )
    assert not flush.superseded
    for said in ("We released on Thursday.", "We ran the load tests on Sunday.", "We deploy on Friday."):
        assert value_key(said, "Ana") == (None, {})
    assert value_key("We deploy on Fridays.", "Ana")[1] == {"day": "Friday"}


PAIRS = [
    ("Ewa: I'll review the PR for the billing service by Friday.", "Ewa: I reviewed the PR for the search service."),
    ("Ana: I'll fix the login bug on iOS by Thursday.", "Ana: I fixed the login bug on Android."),
    ("Ben: I'll update the docs for the billing API by Monday.", "Ben: I updated the docs for the search API."),
    ("Kofi: I'll send the invoice to Acme by Friday.", "Kofi: I sent the invoice to Globex."),
]


def test_a_completion_about_another_object_leaves_the_commitment_open(memory: Memory) -> None:
    _observe(memory, "a", "2026-09-01", *(p[0] for p in PAIRS))
    flush = _observe(memory, "b", "2026-09-03", *(p[1] for p in PAIRS))
    assert not flush.superseded
    commitments = [r for r in memory.list() if r.category == "commitment"]
    assert commitments and {r.status for r in commitments} == {"active"}
    assert commitment_key("I'll send the report for Q3.", "Ewa") != commitment_key("I sent the report for Q2.", "Ewa")
    assert (
        commitment_key("I'll write the tests today.", "Ewa")[0]
        != commitment_key("I wrote the tests for my side project.", "Ewa")[0]
    )


def test_a_completion_of_the_same_object_still_closes_it() -> None:
    for opened, done in [
        ("I'll review the PR for the billing service by Friday.", "I reviewed the PR for the billing service."),
        ("I'll send the report to Marta by Friday.", "I sent the report to Marta today."),
        ("I'll send the report on Monday.", "I sent the report."),
    ]:
        assert commitment_key(opened, "Ewa")[0] == commitment_key(done, "Ewa")[0] is not None


@pytest.mark.parametrize(
    "said",
    [
        "Looks like a network blip, the VPN host is vpn2.atlas.internal now.",
        "Retrying the job, the build cache lives in the S3 bucket atlas-cache.",
        "Retrying the job — the VPN host is vpn2 now.",
        "Everything works for me since we moved the staging DB to port 6543.",
        "I'm out tomorrow afternoon, so Ben will run the release.",
        "I'm off tomorrow and Kofi covers on-call.",
        "I'm off on Friday for my wedding.",
        "I'm away this Friday, my sister is getting married.",
        "I'm out on Monday 14 September.",
    ],
)
def test_a_fact_beside_chatter_or_an_absence_is_kept(said: str) -> None:
    obs = _plan(f"Kofi: {said}")
    assert obs and all(o.verdict.kind != "reject" for o in obs)


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("What's the budget for the offsite?", "around twenty thousand euros"),
        ("what time is the standup tomorrow?", "half past nine"),
        ("how big is the team in Lisbon?", "eight engineers"),
    ],
)
def test_a_group_chat_answer_said_in_words_answers(asked: str, said: str) -> None:
    assert _replies_to(asked, Turn("user", said, 1, turn_id="x", speaker="Ben"), ObserveSettings())
