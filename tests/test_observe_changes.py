"""Changes said in conversation become the current truth: a reversal, another weekday or name, a value
changed with its verb, a value said again after another one, a restatement after a correction, and a
queued fact approved after it was overtaken."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run_cli

from remnic.config import ObserveSettings
from remnic.memfile.model import MemoryRecord
from remnic.observe.alike import contradicts, differs_concretely
from remnic.observe.keys import statement_key, value_key
from remnic.observe.normalize import name_the_group, standalone
from remnic.observe.pipeline import _same_fact, plan_observations
from remnic.observe.records import ExtractedFact, Turn
from remnic.service import Memory
from remnic.service.consolidate import _same

CHANGED = [
    ("Ana prefers tabs over spaces.", "Ana prefers spaces over tabs now."),
    ("Ana reports to Priya.", "Priya reports to Ana."),
    ("We ship releases every Tuesday afternoon.", "We ship releases every Thursday afternoon."),
    ("Ana reports to Priya.", "Ana reports to Dana."),
    ("The launch is in March.", "The launch is in June."),
    ("The prod region is us-west-2.", "The prod region is eu-west-1."),
]
RESTATED = [
    ("Ana really prefers tabs over spaces.", "Ana prefers tabs over spaces."),
    ("We ship every Tuesday.", "We ship releases every Tuesday."),
    ("Ana moved to Berlin from Paris.", "Ana moved from Paris to Berlin."),  # each word keeps its role
    ("Ana went hiking with Ben.", "Ana went hiking with Ben last week."),
]


@pytest.mark.parametrize(("a", "b"), CHANGED)
def test_two_near_identical_sentences_that_state_different_things_differ(a: str, b: str) -> None:
    assert differs_concretely(a, b) and differs_concretely(b, a)


@pytest.mark.parametrize(("a", "b"), RESTATED)
def test_paraphrases_and_restatements_do_not_differ(a: str, b: str) -> None:
    assert not differs_concretely(a, b) and not differs_concretely(b, a)


def test_a_reversal_contradicts_while_another_weekday_or_name_may_hold_beside_it() -> None:
    assert contradicts(*CHANGED[0]) and contradicts(*CHANGED[1])
    assert not contradicts(*CHANGED[2]) and not contradicts(*CHANGED[3])


def _record(content: str, category: str = "preference") -> MemoryRecord:
    return MemoryRecord(f"{category}/x.md", {"id": f"mem_{abs(hash(content))}", "category": category}, content)


@pytest.mark.parametrize(("a", "b"), CHANGED + RESTATED)
def test_the_fold_and_consolidation_decide_as_persistence_does(a: str, b: str) -> None:
    fold = _same_fact(ExtractedFact("preference", a, 0.9), ExtractedFact("preference", b, 0.9))
    assert fold == _same(_record(a), _record(b), 0.0) == (not differs_concretely(a, b))


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("The prod region is us-west-2.", "The prod region is us-west-2."),
        ("We host the docs at us.example.com.", "Ana and others host the docs at us.example.com."),
        ("I-95 was closed, so I took the back road.", "I-95 was closed, so Ana took the back road."),
        ("The repo my-service reads me.json at start.", "The repo my-service reads me.json at start."),
        ("Run `we-sync` daily, it keeps us on track.", "Run `we-sync` daily, it keeps Ana and others on track."),
        ("We moved to the US in 2020.", "Ana and others moved to the US in 2020."),
    ],
)
def test_us_we_i_and_my_inside_an_identifier_or_name_are_not_the_speaker(said: str, stored: str) -> None:
    content, _ = standalone(said, speaker="Ana", timestamp=None)
    assert name_the_group(content, "Ana") == stored


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("We switched the staging DB to port 6543.", ("staging-db", {"port": "6543"})),
        ("The launch deadline moved to March 27.", ("launch", {"deadline": "March 27"})),
        ("We upgraded the API to Python 3.13.", ("api", {"python-version": "Python 3.13"})),
        ("We bumped the redis cache TTL to 900 seconds.", ("redis-cache", {"ttl": "900 seconds"})),
        ("Dana owns the billing service now.", ("billing-service", {"owner": "Dana"})),
        # … the same keys as the "X is VALUE" of the same thing:
        ("The staging DB port is 5432.", ("staging-db", {"port": "5432"})),
        ("The launch deadline is March 20.", ("launch", {"deadline": "March 20"})),
        ("The redis cache TTL is 600 seconds.", ("redis-cache", {"ttl": "600 seconds"})),
        ("The billing service owner is Priya.", ("billing-service", {"owner": "Priya"})),
        # no clear subject or no value: no key
        ("Priya owns the billing service.", ("billing-service", {"owner": "Priya"})),
        ("Ana moved to Berlin.", (None, {})),
        ("We moved the meeting to Friday.", (None, {})),
    ],
)
def test_a_change_said_with_its_verb_is_keyed_like_the_value_it_changes(sentence: str, key: Any) -> None:
    assert value_key(sentence, "Ana") == key


def test_a_hedged_statement_has_the_key_it_would_have_said_plainly() -> None:
    assert statement_key("Ana thinks the staging DB port is 5434.") == ("staging-db", {"port": "5434"})
    assert statement_key("The staging DB port is probably 5434.") == ("staging-db", {"port": "5434"})


def _turns(*lines: tuple[str, str, str]) -> list[Turn]:
    return [
        Turn(index=i, role="user", text=text, speaker=speaker, timestamp=f"2026-05-05T{hour}:00:00Z", turn_id=f"L{i}")
        for i, (hour, speaker, text) in enumerate(lines)
    ]


def test_a_value_said_again_after_another_one_is_planned_last_with_its_time() -> None:
    turns = _turns(
        ("10", "Ana", "The prod API timeout is 30 seconds."),
        ("11", "Ben", "The prod API timeout is 60 seconds."),
        ("12", "Ana", "The prod API timeout is 30 seconds."),
    )
    planned = plan_observations(turns, session_key="s", settings=ObserveSettings())
    assert [o.fact.content for o in planned] == [
        "The prod API timeout is 60 seconds.",
        "The prod API timeout is 30 seconds.",
    ]
    assert planned[1].valid_at == "2026-05-05T12:00:00.000Z" and planned[1].source_turn_ids == ("L0", "L2")
    # Said twice with nothing in between, it stays where it was first said.
    again = plan_observations(turns[:1] + turns[2:], session_key="s", settings=ObserveSettings())
    assert [o.source_turn_ids for o in again] == [("L0", "L2")] and again[0].valid_at.startswith("2026-05-05T10")


def _say(memory: Memory, session: str, speaker: str, text: str, hour: str) -> Any:
    message = {"role": "user", "speaker": speaker, "content": text, "timestamp": f"2026-05-05T{hour}:00:00Z"}
    return memory.observe(session, [message], flush=True).flushes[0]


def _active(memory: Memory) -> list[str]:
    return sorted(r.content for r in memory.list(status="active"))


def test_a_reversed_preference_is_a_new_memory_that_replaces_the_old(memory: Memory) -> None:
    first = _say(memory, "s1", "Ana", "I prefer tabs over spaces.", "10")
    later = _say(memory, "s2", "Ana", "I prefer spaces over tabs now.", "11")
    assert later.reinforced == () and len(later.created) == 1 and later.superseded == first.created
    assert _active(memory) == ["Ana prefers spaces over tabs now."]


def test_another_weekday_is_not_a_repeat(memory: Memory) -> None:
    _say(memory, "s1", "Ana", "We ship releases every Tuesday afternoon.", "10")
    later = _say(memory, "s2", "Ana", "We ship releases every Thursday afternoon.", "11")
    assert later.reinforced == () and len(later.created) == 1


def test_a_value_said_again_after_another_ends_the_flush_current(memory: Memory) -> None:
    text = (
        "[2026-05-05T10:00:00Z] Ana: The prod API timeout is 30 seconds.\n"
        "[2026-05-05T11:00:00Z] Ben: The prod API timeout is 60 seconds.\n"
        "[2026-05-05T12:00:00Z] Ana: The prod API timeout is 30 seconds.\n"
    )
    memory.observe_transcript("s", text, fmt="plain", flush=True)
    assert _active(memory) == ["The prod API timeout is 30 seconds."]
    assert sorted(r.status for r in memory.list(status=None)) == ["active", "superseded"]


def test_a_keyed_restatement_that_reinforces_still_supersedes_the_other_value(memory: Memory) -> None:
    first = _say(memory, "s1", "Ana", "Priya owns the billing service.", "10")
    dana = _say(memory, "s2", "Ben", "The billing service owner is Dana.", "11")
    assert dana.superseded == first.created  # a plain "X owns" is keyed: a new owner replaces it
    again = _say(memory, "s3", "Ana", "The billing service owner is Priya again.", "12")
    assert again.superseded == dana.created
    assert _active(memory) == ["The billing service owner is Priya again."]
    # The restatement holds the key now: the next owner replaces it.
    _say(memory, "s4", "Ben", "Dana owns the billing service now.", "13")
    assert _active(memory) == ["Dana owns the billing service now."]


def test_a_preference_said_again_after_its_correction_is_current_again(memory: Memory) -> None:
    tabs = _say(memory, "s1", "Ana", "I prefer tabs over spaces.", "10")
    spaces = _say(memory, "s2", "Ana", "Actually, I prefer spaces, not tabs.", "11")
    assert spaces.superseded == tabs.created
    again = _say(memory, "s3", "Ana", "I prefer tabs over spaces.", "12")
    assert again.created == () and again.reinforced == tabs.created and again.superseded == spaces.created
    revived = memory.get(tabs.created[0])
    assert revived.status == "active" and revived.frontmatter["supersedes"] == spaces.created[0]
    assert not {"supersededBy", "invalidAt"} & set(revived.frontmatter)
    assert memory.get(spaces.created[0]).frontmatter["supersededBy"] == tabs.created[0]
    assert _active(memory) == ["Ana prefers tabs over spaces."]
    # Said once more, later: the correction is current again, still two memories.
    _say(memory, "s4", "Ana", "Actually, I prefer spaces, not tabs.", "13")
    assert _active(memory) == ["Ana prefers spaces, not tabs."] and len(memory.list(status=None)) == 2


def test_the_first_transcript_replayed_after_its_correction_only_reinforces(memory: Memory) -> None:
    tabs = _say(memory, "s1", "Ana", "I prefer tabs over spaces.", "10")
    _say(memory, "s2", "Ana", "Actually, I prefer spaces, not tabs.", "11")
    replay = _say(memory, "s3", "Ana", "I prefer tabs over spaces.", "10")  # said at 10:00, as before
    assert replay.reinforced == tabs.created and replay.superseded == ()
    assert _active(memory) == ["Ana prefers spaces, not tabs."]


def test_a_change_verb_supersedes_the_value_it_changes(memory: Memory) -> None:
    old = _say(memory, "s1", "Ana", "The staging DB port is 5432.", "10")
    new = _say(memory, "s2", "Ana", "We switched the staging DB to port 6543.", "11")
    assert new.superseded == old.created
    assert _active(memory) == ["Ana and others switched the staging DB to port 6543."]


def test_approving_a_queued_value_that_was_overtaken_approves_it_as_superseded(memory: Memory) -> None:
    hedged = _say(memory, "s1", "Ana", "I think the staging DB port is 5434.", "10")
    (queued,) = hedged.created
    assert memory.get(queued).status == "pending_review"
    newer = _say(memory, "s2", "Ben", "The staging DB port is 5435.", "11")
    said = run_cli("review", "approve", queued, "--memory-dir", str(memory.root))
    assert said.code == 0 and f"{queued} is now superseded" in said.out and "overtaken by" in said.out
    approved = memory.get(queued)
    assert approved.status == "superseded" and approved.frontmatter["supersededBy"] == newer.created[0]
    assert approved.frontmatter["entityRef"] == "staging-db"
    assert _active(memory) == ["The staging DB port is 5435."]


def test_approving_a_queued_value_newer_than_the_active_one_supersedes_it(memory: Memory) -> None:
    older = _say(memory, "s1", "Ben", "The staging DB port is 5433.", "10")
    (queued,) = _say(memory, "s2", "Ana", "I think the staging DB port is 5434.", "11").created
    memory.review_disposition(queued, "active", source="test")
    assert memory.get(queued).status == "active" and memory.get(older.created[0]).status == "superseded"


def test_a_transcript_of_changes_observed_again_under_another_key_ends_on_the_same_current_values(
    memory: Memory,
) -> None:
    text = (
        "Ana: I prefer tabs over spaces.\n"
        "Ben: The billing service owner is Dana.\n"
        "Ana: Actually, I prefer spaces, not tabs.\n"
        "Ben: The billing service owner is Priya.\n"
    )
    memory.observe_transcript("s1", text, fmt="plain", flush=True)
    current = _active(memory)
    assert current == ["Ana prefers spaces, not tabs.", "The billing service owner is Priya."]
    again = memory.observe_transcript("s2", text, fmt="plain", flush=True).flushes[0]
    assert _active(memory) == current and not set(again.created) & {r.id for r in memory.list(status="active")}
