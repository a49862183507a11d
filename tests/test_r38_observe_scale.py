"""Round 38 (scale report 1, 2, 4, 5, 7): a team's chat observed over months. Everyday ways of saying a
value changed replace the old value ("Our primary region is now …", "We moved CI from Jenkins to …",
"Kofi owns the billing service now"); a regular past tense closes a commitment ("I fixed the login
bug"); a group chat's unrelated next line is no answer, status chatter and one-day absences are
transient; one team fact said by several people is one memory; an approved "I'm not sure but I think
X is V" replaces like "I think X is V"; recall's recency is when a memory was said."""

from __future__ import annotations

from typing import Any

import pytest

from remnic.config import ObserveSettings
from remnic.observe.commitments import commitment_key
from remnic.observe.keys import statement_key, value_key
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.service import Memory


def _observe(memory: Memory, session: str, when: str, *lines: str) -> Any:
    text = "".join(f"[{when}T09:{i:02d}:00Z] {line}\n" for i, line in enumerate(lines))
    return memory.observe_transcript(session, text, fmt="plain", flush=True).flushes[0]


def _status(memory: Memory, content: str) -> str:
    return next(r.status for r in memory.list() if r.content.strip() == content)


def _plan(*lines: str) -> list[MemoryObservation]:
    turns = []
    for i, line in enumerate(lines):
        who, text = line.split(": ", 1)
        turns.append(Turn("user", text, i, turn_id=f"L{i}", speaker=who, timestamp=f"2026-06-27T10:{i:02d}:00Z"))
    return plan_observations(turns, session_key="s", settings=ObserveSettings())


CHANGES = [
    ("Ana: Our primary region is eu-west-1.", "Ana: Our primary region is now eu-central-1.", "primary region"),
    ("Ana: The API runs on Python 3.11.", "Ana: We upgraded the API to Python 3.12.", "Python version of the API"),
    ("Ana: We use Jenkins for CI.", "Ana: Decision: we moved CI from Jenkins to GitHub Actions.", "what we use for CI"),
    ("Ben: Dana owns the billing service.", "Ben: Kofi owns the billing service now.", "who owns the billing service"),
    (
        "Ana: We cut releases every Wednesday.",
        "Ana: Decision: we cut releases every Thursday from now on.",
        "release day",
    ),
]


@pytest.mark.parametrize(("old", "new", "query"), CHANGES, ids=[c[2] for c in CHANGES])
def test_a_value_said_changed_replaces_the_old_one_and_recall_serves_the_new(
    memory: Memory, old: str, new: str, query: str
) -> None:
    _observe(memory, "a", "2026-06-01", old)
    flush = _observe(memory, "b", "2026-10-01", new)
    assert len(flush.superseded) == 1
    records = {r.status: r for r in memory.list()}
    assert set(records) == {"active", "superseded"}
    hits = list(memory.recall(query, top_k=3))
    assert hits[0].id == records["active"].id
    assert records["superseded"].id not in [h.id for h in hits]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Dana owns the billing service.", "Kofi also owns the billing service."),
        ("Dana owns the billing service.", "Dana and Kofi own the billing service."),
    ],
)
def test_a_second_owner_said_as_such_replaces_nobody(first: str, second: str) -> None:
    assert value_key(first, "Ben")[0] == "billing-service"
    assert value_key(second, "Ben") == (None, {})


def test_a_handed_over_thing_has_its_new_owner() -> None:
    assert value_key("Dana handed the billing service over to Kofi.", "Dana") == ("billing-service", {"owner": "Kofi"})


@pytest.mark.parametrize(
    "done",
    [
        "I fixed the login bug.",
        "Done: fixed the login bug.",
        "Finally fixed the login bug.",
        "I've fixed the login bug.",
    ],
)
def test_a_regular_past_tense_closes_the_commitment(done: str) -> None:
    opened = commitment_key("I'll fix the login bug by Friday.", "Kofi")
    assert opened == ("kofi-fix-login-bug", {"commitment": "open"})
    if done.startswith("Finally"):
        done = "I " + done[0].lower() + done[1:]
    from remnic.observe.commitments import completion_said

    assert commitment_key(completion_said(done), "Kofi") == ("kofi-fix-login-bug", {"commitment": "fulfilled"})


def test_a_phrasal_verb_is_no_task_done() -> None:
    assert commitment_key("I signed up for a pottery class.", "Mel") == (None, {})


def test_the_fixed_bug_closes_the_open_commitment_in_the_repository(memory: Memory) -> None:
    _observe(memory, "a", "2026-11-02", "Kofi: I'll fix the login bug by Friday.")
    flush = _observe(memory, "b", "2026-11-05", "Kofi: I fixed the login bug.")
    assert len(flush.superseded) == 1
    _observe(memory, "c", "2026-11-06", "Kofi: I'll migrate the billing tables by Monday, 6 July 2026.")
    flush = _observe(memory, "d", "2026-11-07", "Kofi: Done: migrated the billing tables.")
    assert len(flush.superseded) == 1
    assert [r.status for r in memory.list() if r.category == "commitment"] == ["superseded", "superseded"]


NOISE = (
    "Dana: lunch anyone?",
    "Marco: retrying the job",
    "Ben: what's the status of the migration?",
    "Ewa: the tests pass locally",
    "Kofi: I'm out tomorrow afternoon",
)


def test_group_chatter_is_no_answer_and_nothing_of_it_is_stored() -> None:
    obs = _plan(*NOISE)
    assert [o for o in obs if o.verdict.kind == "accept"] == []
    assert not any("asked" in o.fact.content for o in obs)


def test_in_a_group_chat_a_reply_sharing_the_question_s_words_still_answers_it() -> None:
    obs = _plan("Dana: where is the offsite this year?", "Marco: The offsite is in Lisbon.", "Ben: ok", "Ewa: hi")
    assert any("The offsite is in Lisbon" in o.fact.content for o in obs)
    from remnic.observe.pipeline import _replies_to

    settings = ObserveSettings()
    for asked, said in [("where is the offsite?", "Lisbon."), ("lunch anyone?", "Yes, count me in.")]:
        assert _replies_to(asked, Turn("user", said, 1, turn_id="x", speaker="Marco"), settings)
    assert not _replies_to("lunch anyone?", Turn("user", "Retrying the job.", 1, turn_id="x", speaker="M"), settings)


@pytest.mark.parametrize("said", ["I'm out tomorrow afternoon.", "Kofi is off on Friday.", "Retrying the job now."])
def test_one_day_absences_and_status_chatter_are_transient(said: str) -> None:
    assert all(o.verdict.kind == "reject" for o in _plan(f"Kofi: {said}"))


def test_a_habit_of_absence_is_kept() -> None:
    obs = _plan("Kofi: I'm out every Friday afternoon for school pickup.")
    assert all(o.verdict.kind != "reject" for o in obs)


def test_a_team_fact_said_by_three_people_is_one_reinforced_memory(memory: Memory) -> None:
    for session, (day, who) in enumerate([("2026-06-30", "Priya"), ("2026-07-30", "Ewa"), ("2026-08-30", "Kofi")]):
        _observe(memory, f"s{session}", day, f"{who}: We deploy with Argo CD.")
    (only,) = [r for r in memory.list() if r.status == "active"]
    # The first speaker's words: a first-person "we" names the speaker (the spec).
    assert only.content.strip() == "Priya and others deploy with Argo CD."
    assert only.frontmatter["reinforcement_count"] == 2


@pytest.mark.parametrize(
    "hedged",
    [
        "Ben is not sure but Ben thinks the VPN host is vpn2.atlas.internal.",
        "I'm not sure but I think the VPN host is vpn2.atlas.internal.",
        "Not sure, but the VPN host is vpn2.atlas.internal.",
    ],
)
def test_a_not_sure_hedge_approves_to_the_statement_s_key(hedged: str) -> None:
    assert statement_key(hedged) == ("vpn", {"host": "vpn2.atlas.internal"})


def test_approving_a_not_sure_hedge_supersedes_the_old_value(memory: Memory) -> None:
    _observe(memory, "v1", "2026-06-01", "Ana: The VPN host is vpn1.atlas.internal.")
    _observe(memory, "v2", "2026-07-01", "Ben: I'm not sure but I think the VPN host is vpn2.atlas.internal.")
    pending = [r for r in memory.list() if r.status == "pending_review"]
    assert len(pending) == 1
    memory.review_disposition(pending[0].id, "active")
    assert _status(memory, "The VPN host is vpn1.atlas.internal.") == "superseded"


def test_recency_is_when_a_memory_was_said() -> None:
    from remnic.recall import scoring

    fm = {"validAt": "2026-06-01T09:00:00.000Z", "observedAt": "2026-06-02T09:00:00.000Z"}
    assert scoring.said_ts(fm, 9e9) == scoring.said_ts({"validAt": fm["validAt"]}, 0.0) < 9e9
    assert scoring.said_ts({"observedAt": fm["observedAt"]}, 9e9) > scoring.said_ts(fm, 9e9)
    assert scoring.said_ts({}, 123.0) == 123.0
