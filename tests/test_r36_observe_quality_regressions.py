"""Round 36 (v5 R1–R5, N1, P1): the corrections, filler and trait rules of f7 narrowed where they took
wrong things — "it is 3" answering the assistant's question is no new port, "Friday" is no account owner,
"the port" among two ports names neither, Ben's "I meant" is not Ana's, a statement after "Let me check"
is kept, "Waymo doesn't drive in snow yet" is no person's trait, and names are not mangled."""

from __future__ import annotations

import pytest
import test_r36_observe_quality_corrections as corrections

from remnic.observe.extract import drop_reason
from remnic.observe.keys import value_key
from remnic.observe.normalize import standalone
from remnic.observe.referents import fits

_plan = corrections._plan  # one transcript helper for both modules
PORT, NOTED = corrections.PORT, corrections.NOTED


def _keys(*lines: str) -> list[tuple[str | None, dict[str, str]]]:
    return [(o.fact.entity_ref, dict(o.fact.structured_attributes)) for o in _plan(*lines)]


# --- R1: the antecedent does not outlive a question or another value of the other speaker ----------------


@pytest.mark.parametrize(
    "lines",
    [
        (PORT, "Bot: Noted. How many replicas should the API run?", "Dana: Actually, it is 3."),
        (PORT, "Bot: Which node version?", "Dana: No wait, it's 20."),
        ("Ana: The staging DB port is 5432.", "Ben: What time is the standup tomorrow?", "Ana: Actually it's 10."),
        (PORT, "Bot: Noted. Also, the README says the timeout is 30 seconds.", "Dana: Actually, it is 60."),
        ("Dana: Our account owner is Priya Shah.", "Bot: When is the renewal call?", "Dana: Actually it's Friday."),
        ("Dana: Our team lead is Ewa.", "Bot: Where is the team based?", "Dana: Actually, it is Berlin."),
        # with only an acknowledgement between: still not a value of that thing
        ("Dana: Our account owner is Priya Shah.", NOTED, "Dana: Actually it's Friday."),
        (PORT, NOTED, "Dana: Actually, it is 99999."),
        # the other speaker names a value of another thing with another verb (r36 verification)
        (PORT, "Bot: The config also sets the retry count to 5.", "Dana: Actually it's 7."),
        (PORT, "Bot: OK — the cache TTL defaults to 300 seconds.", "Dana: Actually it's 600."),
        (PORT, "Bot: I bumped the worker count to 12.", "Dana: No wait, it's 16."),
        (PORT, "Bot: Done, 4 replicas are up.", "Dana: Actually, it is 8."),
    ],
)
def test_it_answering_another_question_or_no_fitting_value_rewrites_nothing(lines: tuple[str, ...]) -> None:
    observations = _plan(*lines)
    assert observations[-1].fact.entity_ref is None
    assert len([o for o in observations if o.fact.entity_ref]) == 1


def test_an_acknowledgement_between_still_keeps_the_antecedent() -> None:
    last = _plan(PORT, "Bot: Got it — I'll use 5432 for staging.", "Dana: Actually, it is 5433.")[-1]
    assert (last.fact.content, last.proposed_status) == ("The staging DB port is 5433.", "active")


def test_fits_knows_a_port_and_a_person() -> None:
    assert fits("5432", "5433", "port") and not fits("5432", "99999", "port") and not fits("5432", "0", "port")
    assert fits("Priya Shah", "Kofi", "owner") and not fits("Priya Shah", "Friday", "owner")
    assert not fits("Ewa", "Tomorrow", "lead")


def test_a_person_is_still_corrected() -> None:
    last = _plan("Dana: Our team lead is Ewa.", NOTED, "Dana: Actually, it is Tomasz.")[-1]
    assert (last.fact.entity_ref, dict(last.fact.structured_attributes)) == ("team", {"lead": "Tomasz"})
    last = _plan("Dana: Our account owner is Priya Shah.", NOTED, "Dana: Sorry, I meant Kofi, not Priya Shah.")[-1]
    assert (last.fact.entity_ref, dict(last.fact.structured_attributes)) == ("account", {"owner": "Kofi"})


# --- R2, R5: "the port" among two ports, and someone else's "I meant" ------------------------------------


def test_the_port_naming_two_keys_resolves_neither() -> None:
    keys = _keys(PORT, "Dana: The Redis port is 6379.", "Bot: Noted, both saved.", "Dana: Actually the port is 5433.")
    assert keys[-1] == (None, {})


def test_the_port_with_its_old_value_still_picks_one_of_two() -> None:
    keys = _keys(PORT, "Dana: The Redis port is 6379.", NOTED, "Dana: Actually the port is 5433, not 5432.")
    assert keys[-1] == ("staging-db", {"port": "5433"})


def test_i_meant_corrects_only_the_speakers_own_value() -> None:
    assert _keys("Ana: The staging DB port is 5432.", "Ben: Sorry, I meant 5433.")[-1] == (None, {})
    assert _keys("Ana: The staging DB port is 5432.", "Ben: Sorry, I meant 5433, not 5432.")[-1] == (None, {})
    assert _keys("Ana: The staging DB port is 5432.", "Ana: Sorry, I meant 5433.")[-1] == (
        "staging-db",
        {"port": "5433"},
    )


# --- R3: a statement after "Let me …" or "Here's a screenshot …" is kept -------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "Let me check with my team first, but we always use pnpm.",
        "Let me think about it, but we never deploy on Fridays.",
        "Let me sleep on it; our staging DB port is 5432 though.",
        "Here's a screenshot of our dashboard, it shows our p99 latency target of 200 ms.",
        "Here are the logs from the outage, our on-call rotation is weekly.",
        # "the X is Y" after a dash, a comma or "but" (v8 M-1)
        "Let me look into it — the on-call rotation is biweekly.",
        "Let me look into it – the on-call rotation is biweekly.",
        "Let me look into it, the on-call rotation is biweekly.",
        "Let me think about it, but the on-call rotation is biweekly.",
        "Here's a screenshot — the on-call rotation is biweekly.",
    ],
)
def test_a_statement_after_filler_in_the_same_sentence_is_kept(said: str) -> None:
    assert drop_reason(said, "user") is None
    assert len(_plan(f"Dana: {said}")) == 1


@pytest.mark.parametrize(
    "said",
    [
        "Let me think about it.",
        "Let me check with my team first.",
        "Let me check, I'll get back to you.",
        "Let me think about it, thanks!",
        "Here's a screenshot of our dashboard.",
        "Here are the logs from our CI run, see below.",
    ],
)
def test_filler_alone_is_still_dropped(said: str) -> None:
    assert drop_reason(said, "user") is not None


# --- R4: a lasting trait is a known person's, and no one-off ------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "Waymo doesn't drive in snow yet.",
        "Tesla doesn't drive itself yet.",
        "Ana won't eat the leftovers.",
        "Ana doesn't eat pork yet.",
        "Ana doesn't eat the cake today.",
    ],
)
def test_one_offs_and_non_people_are_no_trait(said: str) -> None:
    # Ana is a speaker of the flush; Waymo and Tesla are no one's name here
    assert all("trait" not in o.verdict.reason for o in _plan("Ana: Hi all.", f"Ben: {said}"))


def test_a_name_said_as_a_persons_has_traits() -> None:
    contents = [o.fact.content for o in _plan("Ben: My colleague Kofi joins the offsite.", "Ben: Kofi is vegetarian.")]
    assert "Kofi is vegetarian." in contents
    assert [o.fact.content for o in _plan("Ben: Kofi is vegetarian.")] == []


# --- N1, P1: "by the way" with no comma; names that look like a hedge or a date -------------------------


def test_by_the_way_without_a_comma_is_no_part_of_the_value() -> None:
    assert value_key("Our team lead is Ewa by the way.", "Dana") == ("team", {"lead": "Ewa"})
    assert value_key("The staging DB port is 5433 by the way.", "Dana") == ("staging-db", {"port": "5433"})
    # a title's words, capitalised, are the value's (v8 L-1)
    assert value_key("The book club pick is Stop by the Way.", "Dana") == ("book-club", {"pick": "Stop by the Way"})


@pytest.mark.parametrize(
    "said",
    ["Our band name is Maybe Tomorrow.", "My favourite album is Definitely Maybe.", "Our film is Tomorrow Never Dies."],
)
def test_a_capitalised_name_keeps_its_words(said: str) -> None:
    content = standalone(said, speaker="Dana", timestamp="2026-03-04T09:00:00Z")[0]
    assert content.split(" is ", 1)[1] == said.split(" is ", 1)[1]


def test_dates_and_fillers_in_plain_words_still_go() -> None:
    said = standalone("We fly tomorrow. Tomorrow we rest.", speaker="Dana", timestamp="2026-03-04T09:00:00Z")[0]
    assert "tomorrow" not in said.lower() and "on 5 March 2026" in said
    assert "definitely" not in standalone("It's definitely changed me.", speaker="Dana", timestamp=None)[0]
