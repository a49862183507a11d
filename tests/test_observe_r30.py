"""Messy-transcript rules: a correction naming the value it replaces, keys past lead-ins and trailing
clauses, bare corrections, tasks for today and requests around a fact."""

from __future__ import annotations

from typing import Any

import pytest

from remnic.config import ObserveSettings
from remnic.observe.alike import replaces
from remnic.observe.dates import resolve_relative_dates
from remnic.observe.keys import value_key
from remnic.observe.normalize import standalone
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.service import Memory


def _plan(*lines: tuple[str, str]) -> list[MemoryObservation]:
    turns = [
        Turn(index=i, role="user", text=text, speaker=who, timestamp=f"2026-03-02T08:{i:02d}:00Z", turn_id=f"L{i}")
        for i, (who, text) in enumerate(lines)
    ]
    return plan_observations(turns, session_key="s", settings=ObserveSettings())


def _said(memory: Memory, session: str, text: str, hour: int) -> Any:
    line = f"[2026-03-02T{hour:02d}:00:00Z] Marek: {text}\n"
    return memory.observe_transcript(session, line, fmt="plain", flush=True).flushes[0]


def _statuses(memory: Memory) -> dict[str, str]:
    return {r.content.strip(): r.status for r in memory.list()}


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("From now on, the staging database runs on port 5433.", ("staging-database", {"port": "5433"})),
        ("Going forward, the staging database port is 5433.", ("staging-database", {"port": "5433"})),
        ("The API listens on port 8080.", ("api", {"port": "8080"})),
        ("The staging database port is 6543, not 5433.", ("staging-database", {"port": "6543"})),
        # a clause after a comma that says why or what else happened is not part of the value
        (
            "We bumped the cart cache TTL to 600 seconds, since 300 was too aggressive.",
            ("cart-cache", {"ttl": "600 seconds"}),
        ),
        ("Our team lead is Ewa now, Tomasz moved to payments.", ("team", {"lead": "Ewa"})),
        ("The staging DB port is 5434, because 5433 clashed.", ("staging-db", {"port": "5434"})),
        # unchanged: a list is not a trailing clause, a bare "runs on" has no attribute, "we" has no key
        ("The cities are Paris, London and Rome.", (None, {})),
        ("The job runs on Fridays.", (None, {})),
        ("We use Postgres, not MySQL.", (None, {})),
    ],
)
def test_keys_are_found_past_time_lead_ins_trailing_clauses_and_with_the_attribute_first(
    sentence: str, key: Any
) -> None:
    assert value_key(sentence, "Ana") == key


def test_a_correction_naming_the_old_value_replaces_the_statement_of_it() -> None:
    assert replaces("We deploy staging with Flux, not ArgoCD.", "Marek and others deploy staging with ArgoCD.")
    assert replaces("The staging port is 5433, not 5432 as the docs say.", "The staging port is 5432.")
    # "our port" is not "the staging port": a more general subject does not replace a specific one
    assert not replaces("Our port is 5433, not 5432 as the docs say.", "The staging port is 5432.")
    assert replaces("We use Postgres instead of MySQL.", "Ana and others use MySQL.")
    # another subject, the new value already there, a denial, or nothing said of what it is about
    assert not replaces("We deploy staging with Flux, not ArgoCD.", "We deploy prod with ArgoCD.")
    assert not replaces("We deploy staging with Flux, not ArgoCD.", "We deploy staging with Flux and ArgoCD.")
    assert not replaces("We deploy staging with Flux, not ArgoCD.", "We never deploy staging with ArgoCD.")
    assert not replaces("Postgres, not MySQL.", "We use MySQL.")
    assert not replaces("We deploy staging with Flux.", "We deploy staging with ArgoCD.")


@pytest.mark.parametrize(
    ("before", "after", "old", "new"),
    [
        (
            "From now on, the staging database runs on port 5433.",
            "Correction: the staging database port is 6543, not 5433.",
            "From now on, the staging database runs on port 5433.",
            "The staging database port is 6543, not 5433.",
        ),
        (
            "We deploy staging with ArgoCD.",
            "Actually, we deploy staging with Flux, not ArgoCD.",
            "Marek and others deploy staging with ArgoCD.",
            "We deploy staging with Flux, not ArgoCD.",
        ),
        (
            "The cart cache TTL is 300 seconds.",
            "We bumped the cart cache TTL to 600 seconds, since 300 was too aggressive.",
            "The cart cache TTL is 300 seconds.",
            "Marek and others bumped the cart cache TTL to 600 seconds, since 300 was too aggressive.",
        ),
        (
            "Our team lead is Tomasz.",
            "Our team lead is Ewa now, Tomasz moved to payments.",
            "Our team lead is Tomasz.",
            "Our team lead is Ewa now, Tomasz moved to payments.",
        ),
        (
            "The API rate limit is 100 requests per minute.",
            "No, that's wrong, the API rate limit is 500 requests per minute.",
            "The API rate limit is 100 requests per minute.",
            "The API rate limit is 500 requests per minute.",
        ),
    ],
)
def test_a_later_flush_supersedes_the_value_it_corrects_and_recall_ranks_only_the_new(
    memory: Memory, before: str, after: str, old: str, new: str
) -> None:
    _said(memory, "a", before, 8)
    flush = _said(memory, "b", after, 9)
    assert len(flush.superseded) == 1
    assert _statuses(memory) == {old: "superseded", new: "active"}
    contents = {r.id: r.content.strip() for r in memory.list()}
    assert [contents[h.id] for h in memory.recall(new, top_k=5).hits] == [new]


def test_a_correction_naming_the_old_value_supersedes_it_within_one_flush(memory: Memory) -> None:
    text = (
        "[2026-03-02T08:00:00Z] Marek: We deploy staging with ArgoCD.\n"
        "[2026-03-02T08:05:00Z] Marek: Actually, we deploy staging with Flux, not ArgoCD.\n"
    )
    memory.observe_transcript("one", text, fmt="plain", flush=True)
    assert _statuses(memory) == {
        "Marek and others deploy staging with ArgoCD.": "superseded",
        "We deploy staging with Flux, not ArgoCD.": "active",
    }


def test_a_value_said_against_nothing_earlier_just_stores(memory: Memory) -> None:
    _said(memory, "a", "We deploy prod with ArgoCD.", 8)
    flush = _said(memory, "b", "We use Postgres, not MySQL.", 9)
    assert flush.superseded == () and len(flush.created) == 1
    assert set(_statuses(memory).values()) == {"active"}


@pytest.mark.parametrize("bare", ["No, that is wrong.", "That's wrong.", "Nope, that's not right!", "Scratch that."])
def test_a_bare_correction_is_no_memory(bare: str) -> None:
    assert _plan(("Marek", bare)) == []


def test_a_bare_correction_before_the_right_value_leaves_only_the_value() -> None:
    found = _plan(("Marek", "No, that's wrong. The API rate limit is 500 requests per minute."))
    assert [(o.fact.content, o.fact.entity_ref) for o in found] == [
        ("The API rate limit is 500 requests per minute.", "api-rate")
    ]


@pytest.mark.parametrize("said", ["Actually, it is 5434 now.", "Actually, it's 5434 now.", "No, it is 5434."])
def test_a_pronoun_correction_takes_the_subject_of_the_turn_before(said: str) -> None:
    before, after = _plan(("Marek", "The staging DB port is 5433."), ("Kasia", said))
    assert after.fact.content.startswith("The staging DB port is 5434")
    assert (after.fact.entity_ref, dict(after.fact.structured_attributes)) == ("staging-db", {"port": "5434"})
    assert after.proposed_status == "active"


def test_a_pronoun_correction_with_nothing_to_resolve_it_is_deferred() -> None:
    # The turn before has no keyed fact, or two: "it" cannot be told for sure.
    for before in ("We use Postgres.", "The staging DB port is 5433 and the prod DB port is 5432."):
        found = _plan(("Marek", before), ("Kasia", "Actually, it is MySQL now."))
        assert [(o.fact.content, o.proposed_status) for o in found][-1] == ("It is MySQL now.", "pending_review")
    # A correction with its subject named is accepted as before.
    named = _plan(("Kasia", "Actually, the staging DB port is 5433, not 5432."))
    assert [o.proposed_status for o in named] == ["active"]


def test_a_pronoun_correction_replaces_the_value_when_persisted(memory: Memory) -> None:
    text = (
        "[2026-03-01T07:00:00Z] Marek: The staging DB port is 5433.\n"
        "[2026-03-01T07:01:00Z] Kasia: Actually, it is 5434 now.\n"
    )
    flush = memory.observe_transcript("o", text, fmt="plain", flush=True).flushes[0]
    assert len(flush.superseded) == 1
    assert _statuses(memory) == {
        "The staging DB port is 5433.": "superseded",
        "The staging DB port is 5434 now.": "active",
    }


@pytest.mark.parametrize(
    "said",
    [
        "Today we need to fix the invoice rounding bug in the billing service.",
        "We need to fix the invoice rounding bug today.",
        "This morning I have to rebase the payments branch.",
        "I have a dentist appointment at 3pm so I will be offline for an hour.",
        "I'm away this afternoon.",
    ],
)
def test_a_task_for_today_or_a_short_absence_is_not_kept(said: str) -> None:
    assert [o for o in _plan(("Marek", said)) if o.proposed_status is not None] == []


@pytest.mark.parametrize(
    "said",
    [
        "We need to migrate billing to Postgres by June.",  # a plan with its date
        "I'm away on parental leave until September.",
        "Today is our tenth wedding anniversary.",
    ],
)
def test_plans_and_dated_facts_are_still_kept(said: str) -> None:
    assert [o.proposed_status for o in _plan(("Marek", said))] == ["active"]


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("Today is my last day before vacation.", "2 March 2026 is my last day before vacation."),
        ("I think that yesterday was the best day.", "I think that 1 March 2026 was the best day."),
        ("The party yesterday was fun.", "The party on 1 March 2026 was fun."),
        ("I was at home yesterday.", "I was at home on 1 March 2026."),
    ],
)
def test_a_relative_date_as_the_subject_takes_no_preposition(text: str, out: str) -> None:
    assert resolve_relative_dates(text, "2026-03-02T08:00:00Z")[0] == out


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("For context, I'm Lena and I lead the payments team.", "Lena leads the payments team."),
        ("For reference, our staging DB port is 5433.", "Our staging DB port is 5433."),
        ("Please always write commit messages in English.", "Always write commit messages in English."),
        ("Always squash before merging, please.", "Always squash before merging."),
        ("I'm vegetarian, so no pork at the offsite please.", "Lena is vegetarian."),
        ("I'm vegetarian, so please book the green menu.", "Lena is vegetarian."),
        # a "please" inside the fact and a trailing clause that is no request stay
        ("We said please and thank you at the offsite.", "Lena and others said please and thank you at the offsite."),
        ("I'm vegetarian, so I skip the barbecue.", "Lena is vegetarian, so Lena skips the barbecue."),
    ],
)
def test_lead_ins_and_requests_around_a_fact_go(said: str, stored: str) -> None:
    from remnic.observe.normalize import name_the_group

    content, _ = standalone(said, speaker="Lena", timestamp=None)
    assert name_the_group(content, "Lena") == stored


# --- "NEW, not OLD" replaces only the very statement of OLD (the frame rule) ---------------------------


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Actually, we deploy staging with Flux, not ArgoCD.", "We deploy staging with ArgoCD."),
        ("Going forward, we deploy with Flux, not ArgoCD.", "Marek and others deploy with ArgoCD."),
        ("We use Google Cloud, not AWS.", "We use AWS."),
        ("We use Postgres, not MySQL, for the billing service.", "We use MySQL for the billing service."),
        ("Ana likes Python, not Java.", "Ana likes Java."),
    ],
)
def test_the_same_frame_with_the_new_value_is_replaced(new: str, old: str) -> None:
    assert replaces(new, old)


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Ana likes Python, not Java.", "Ana maintains the Java SDK for the payments team."),
        ("Ana prefers tea, not coffee.", "Ana brings coffee to the Monday standup."),
        ("Ben is the owner, not Ana.", "Ben and Ana pairs on the billing service every Tuesday."),
        ("Ana reports to Ewa, not Tomasz.", "Tomasz reports to Ana."),
        ("Always use spaces, not tabs, for Python files.", "Always use tabs in Makefiles."),
        ("The API runs on port 8081, not 8080.", "The billing API runs on port 8080."),
        ("We chose Go rather than Rust for the CLI.", "We use Rust for the parser."),
        ('Ben said: "We use Postgres, not MySQL."', "We use MySQL."),
    ],
)
def test_a_shared_name_or_value_alone_replaces_nothing(new: str, old: str) -> None:
    assert not replaces(new, old)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("I maintain the Java SDK for the payments team.", "I like Python, not Java."),
        ("I bring coffee to the Monday standup.", "I prefer tea, not coffee."),
        ("Ben and I pair on the billing service every Tuesday.", "Ben is the owner, not me."),
        ("Tomasz reports to Ana.", "Ana reports to Ewa, not Tomasz."),
        ("Always use tabs in Makefiles.", "Always use spaces, not tabs, for Python files."),
        ("The billing API runs on port 8080.", "The API runs on port 8081, not 8080."),
    ],
)
def test_an_unrelated_memory_sharing_the_old_value_stays_active(memory: Memory, before: str, after: str) -> None:
    for session, text, hour in (("a", before, 7), ("b", after, 8)):
        line = f"[2026-03-0{hour - 6}T07:00:00Z] Ana: {text}\n"
        memory.observe_transcript(session, line, fmt="plain", flush=True)
    assert set(_statuses(memory).values()) == {"active"}
    assert len(_statuses(memory)) == 2


def test_an_unrelated_memory_in_the_same_flush_stays_active(memory: Memory) -> None:
    text = (
        "[2026-03-02T08:00:00Z] Ana: I maintain the Java SDK.\n[2026-03-02T08:01:00Z] Ana: I like Python, not Java.\n"
    )
    memory.observe_transcript("one", text, fmt="plain", flush=True)
    assert set(_statuses(memory).values()) == {"active"}


# --- "Actually, it is X" takes the key only when X is that thing's kind of value -------------------------


@pytest.mark.parametrize(
    ("before", "said"),
    [
        ("Our team lead is Ewa.", "Actually, it was my idea to hire her."),
        ("The staging DB port is 5433.", "Actually, it is a Postgres 16 instance now."),
        ("Our deploy day is Friday.", "Actually, it was Ben's call to move it."),
    ],
)
def test_a_pronoun_correction_that_is_no_value_of_that_thing_is_deferred(before: str, said: str) -> None:
    first, after = _plan(("Bob", before), ("Ana", said))
    assert after.fact.entity_ref is None and after.proposed_status == "pending_review"
    assert not after.fact.content.startswith(first.fact.content[:-1].rsplit(" ", 1)[0])


@pytest.mark.parametrize(
    ("before", "said", "value"),
    [
        ("Our team lead is Ewa.", "Actually, it is Tomasz.", {"lead": "Tomasz"}),
        ("The cart cache TTL is 300 seconds.", "Actually, it is 600 seconds.", {"ttl": "600 seconds"}),
        ("The API version is Python 3.12.", "Actually, it's Python 3.13.", {"version": "Python 3.13"}),
    ],
)
def test_a_pronoun_correction_of_the_same_kind_takes_the_key(before: str, said: str, value: Any) -> None:
    _, after = _plan(("Bob", before), ("Ana", said))
    assert dict(after.fact.structured_attributes) == value and after.proposed_status == "active"


def test_a_pronoun_correction_that_is_no_value_supersedes_nothing(memory: Memory) -> None:
    text = (
        "[2026-03-01T07:00:00Z] Bob: Our team lead is Ewa.\n"
        "[2026-03-01T07:00:05Z] Ana: Actually, it was my idea to hire her.\n"
    )
    flush = memory.observe_transcript("k", text, fmt="plain", flush=True).flushes[0]
    assert flush.superseded == ()
    assert _statuses(memory)["Our team lead is Ewa."] == "active"


# --- keys: limiting clauses, possessive pronouns, future lead-ins ----------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "Our team lead is Tomasz, when Ewa is on leave.",
        "The DB port is 5433, but only on staging.",
        "The cache TTL is 600 seconds, unless the feature flag is off.",
        "The DB port is 5433, if the VPN is on.",
        "The office day is Friday, except in August.",
        "The DB port is 5433 only on staging.",
        "Its API listens on port 8080.",
        "Its API port is 8080.",
        "Their API listens on port 8080.",
        "His team lead is Ewa.",
        "Starting next month, the staging DB runs on port 6543.",
        "From next week, the staging DB port is 6543.",
        "As of tomorrow, the staging DB port is 6543.",
        "Starting on 1 April, the staging DB port is 6543.",
        "The staging DB runs on port 6543 starting next month.",
    ],
)
def test_a_value_that_holds_only_sometimes_later_or_for_someone_unnamed_has_no_key(sentence: str) -> None:
    assert value_key(sentence, "Ana") == (None, {})


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("Our API listens on port 8080.", ("api", {"port": "8080"})),
        ("Our API port is 8080.", ("api", {"port": "8080"})),
        ("As of today, the staging DB port is 6543.", ("staging-db", {"port": "6543"})),
        ("The cache TTL is 600 seconds, since 300 was too aggressive.", ("cache", {"ttl": "600 seconds"})),
        ("We moved the launch deadline from March 27 to April 3.", ("launch", {"deadline": "April 3"})),
    ],
)
def test_our_present_lead_ins_and_why_clauses_keep_the_key(sentence: str, key: Any) -> None:
    assert value_key(sentence, "Ana") == key


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Our team lead is Ewa.", "Our team lead is Tomasz, when Ewa is on leave."),
        ("The DB port is 5432.", "The DB port is 5433, but only on staging."),
        ("The cache TTL is 300 seconds.", "The cache TTL is 600 seconds, unless the feature flag is off."),
        ("The staging DB runs on port 5432.", "Starting next month, the staging DB runs on port 6543."),
    ],
)
def test_a_limited_or_future_value_leaves_the_current_one_active(memory: Memory, before: str, after: str) -> None:
    memory.observe_transcript("a", f"[2026-03-01T07:00:00Z] Ana: {before}\n", fmt="plain", flush=True)
    flush = memory.observe_transcript("b", f"[2026-03-02T07:00:00Z] Ana: {after}\n", fmt="plain", flush=True)
    assert flush.flushes[0].superseded == ()
    assert _statuses(memory)[before] == "active"


def test_its_api_does_not_replace_our_api(memory: Memory) -> None:
    memory.observe_transcript(
        "a", "[2026-03-01T07:00:00Z] Ana: The API listens on port 9090.\n", fmt="plain", flush=True
    )
    text = (
        "[2026-03-02T07:00:00Z] Ana: The billing service is new.\n"
        "[2026-03-02T07:00:05Z] Ana: Its API listens on port 8080.\n"
    )
    memory.observe_transcript("b", text, fmt="plain", flush=True)
    assert _statuses(memory)["The API listens on port 9090."] == "active"


# --- extraction: durable rules and habits stay, quotes stay the quoted person's ---------------------------


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        (
            "Now we have to sign every commit with a GPG key.",
            "Now Ana and others have to sign every commit with a GPG key.",
        ),
        ("Our kids must always say please.", "Our kids must always say please."),
        ("I'm always offline for an hour after lunch.", "Ana is always offline for an hour after lunch."),
        (
            "I am usually offline for an hour every day at noon for my kids.",
            "Ana is usually offline for an hour every day at noon for their kids.",
        ),
        ('Ben said: "We use Postgres, not MySQL."', 'Ben said: "We use Postgres, not MySQL."'),
    ],
)
def test_durable_rules_habits_and_quotes_are_kept_as_said(said: str, stored: str) -> None:
    assert [(o.fact.content, o.proposed_status) for o in _plan(("Ana", said))] == [(stored, "active")]


def test_a_rule_from_today_on_is_kept() -> None:
    found = _plan(("Ana", "We have to review every PR within 24 hours, starting today."))
    assert [o.proposed_status for o in found] == ["active"]
    assert "review every PR within 24 hours" in found[0].fact.content


@pytest.mark.parametrize(
    "said",
    [
        "We need to ship the hotfix this afternoon.",
        "Tonight I have to finish the release notes.",
        "I have to call the bank today.",
    ],
)
def test_a_one_off_task_for_today_is_still_not_kept(said: str) -> None:
    assert [o for o in _plan(("Marek", said)) if o.proposed_status is not None] == []


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("Always squash before merging please.", "Always squash before merging."),
        ("Please use the staging cluster for load tests.", "Use the staging cluster for load tests."),
        ("Always greet customers with please and thank you.", "Always greet customers with please and thank you."),
    ],
)
def test_please_goes_only_around_a_request(said: str, stored: str) -> None:
    assert standalone(said, speaker="Lena", timestamp=None)[0] == stored


def test_a_quoted_not_x_supersedes_nothing(memory: Memory) -> None:
    memory.observe_transcript("a", "[2026-03-01T07:00:00Z] Ana: We use MySQL.\n", fmt="plain", flush=True)
    line = '[2026-03-02T07:00:00Z] Ana: Ben said: "We use Postgres, not MySQL."\n'
    flush = memory.observe_transcript("b", line, fmt="plain", flush=True).flushes[0]
    assert flush.superseded == ()
    statuses = _statuses(memory)
    assert statuses['Ben said: "We use Postgres, not MySQL."'] == "active"
    assert list(statuses.values()) == ["active", "active"]
