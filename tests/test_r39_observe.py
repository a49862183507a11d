"""Round 39 (observe): a stated replacement retires the tool it names for a purpose that may have several
("We switched the frontend from React to Vue" retires "We use React for the frontend", never "We use
Tailwind for the frontend"); a runtime's major version is keyed ("We run Node 18" → "We upgraded Node from
18 to 20"); chatter said before a fact ("Brb, …", "Still flaky, but …", "Rerunning the pipeline, …") neither
rejects it nor stays in it; identifiers ("eu-west-1") are no words of another language.

Each case pairs what must change with what must not: a wrong supersession retires a fact still true."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from remnic.config import ObserveSettings
from remnic.observe.keys import value_key
from remnic.observe.language import other_language
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn
from remnic.service import Memory


def _retires(new: str, old: str) -> bool:
    """Whether ``new``'s key states another value for an attribute ``old``'s key states (what supersession
    asks of two observed facts)."""
    (e_new, a_new), (e_old, a_old) = value_key(new, "Ana"), value_key(old, "Ana")
    return bool(e_new) and e_new == e_old and _differ(a_new, a_old)


def _differ(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    return any(a[k].strip().lower() != b[k].strip().lower() for k in a.keys() & b.keys())


RULES = {
    "a tool named as replaced": (
        [
            ("We switched the frontend from React to Vue.", "We use React for the frontend."),
            ("We switched from React to Vue for the frontend.", "We use React for our frontend."),
            ("We switched scripting from Bash to Python.", "We use Bash for scripting."),
        ],
        [
            ("We switched the frontend from React to Vue.", "We use Tailwind for the frontend."),
            ("We switched the frontend from React to Vue.", "We use React for the admin frontend."),
            ("We use Vue for the frontend.", "We use React for the frontend."),
            ("We switched the frontend from Webpack to Vite.", "We switched the frontend from React to Vue."),
            ("We use Vue for the frontend now.", "We use Vite for the frontend now."),
            ("We switched the frontend from React to Vue.", "React is great for prototypes."),
            ("We switched the frontend from React to Vue.", "We use Vue for the admin and React for the site."),
            ("We might switch the frontend from React to Vue.", "We use React for the frontend."),
            ("We're switching the frontend from React to Vue.", "We use React for the frontend."),
        ],
    ),
    "a runtime's major version": (
        [
            ("We upgraded Node from 18 to 20.", "We run Node 18."),
            ("We're on Node 20 now.", "We run Node 18."),
            ("We upgraded to Node 20.", "We use Node 18."),
            ("The worker runs on Node 20.", "The worker runs on Node 18."),
            ("We upgraded the worker to Node 20.", "The worker runs on Node 18."),
            ("We upgraded the API from Python 3.11 to 3.12.", "The API runs on Python 3.11."),
        ],
        [
            ("We run Node 18 for the legacy billing service.", "We run Node 20."),
            ("We also run Node 16.", "We run Node 20."),
            ("We run Node 18 and Python 3.11.", "We run Node 20."),
            ("We ran Node 14 back then.", "We run Node 20."),
            ("We're upgrading to Node 22.", "We run Node 20."),
            ("We will upgrade to Node 22 next month.", "We run Node 20."),
            ("We moved from Node 20 to Deno 2.", "We run Node 20."),
            ("The worker runs on Debian 12.", "The worker runs on Node 20."),
            ("The worker runs on Node 18 in staging.", "The worker runs on Node 20."),
        ],
    ),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_a_replacement_retires_what_it_names_and_nothing_else(rule: str) -> None:
    retiring, still_true = RULES[rule]
    assert [pair for pair in retiring if not _retires(*pair)] == []
    assert [pair for pair in still_true if _retires(*pair)] == []


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        (
            "We use React for the frontend.",
            "We switched the frontend from React to Vue.",
            "We use Tailwind for the frontend.",
        ),
        ("We run Node 18.", "We upgraded Node from 18 to 20.", "The API runs on Python 3.11."),
    ],
)
def test_the_old_memory_leaves_and_the_other_stays(memory: Memory, old: str, new: str, kept: str) -> None:
    memory.observe(
        "a", [{"role": "user", "content": f"{old}\n{kept}", "timestamp": "2026-09-01T09:00:00Z"}], flush=True
    )
    memory.observe("b", [{"role": "user", "content": new, "timestamp": "2026-09-15T09:00:00Z"}], flush=True)
    status = {r.content.strip(): r.status for r in memory.list()}
    said = {text: s for text, s in status.items() if text.endswith(old.split(" ", 1)[1])}
    assert list(said.values()) == ["superseded"], status
    assert status[kept] == "active", status


def _planned(text: str) -> list[tuple[str, str]]:
    turn = Turn("user", text, 0, turn_id="L0", speaker="Kofi", timestamp="2026-09-01T09:00:00Z")
    return [
        (o.fact.content, o.verdict.kind) for o in plan_observations([turn], session_key="s", settings=ObserveSettings())
    ]


# Each chatter before a fact, then what stays whole: what qualifies the statement ("For now"), goes on with
# the chatter's subject ("… but fail on CI") or follows from it ("…, so we retry").
CHATTER = {
    "leaving": [
        ("Brb, the staging DB port is 5433.", ("The staging DB port is 5433.", "accept")),
        ("For now, we use SQLite for the cache.", ("For now, we use SQLite for the cache.", "reject")),
    ],
    "debugging": [
        ("Still flaky, but the CI runners are ARM machines.", ("The CI runners are ARM machines.", "accept")),
        (
            "Still flaky, so we retry the deploy job twice.",
            ("Still flaky, so Kofi and others retry the deploy job twice.", "reject"),
        ),
    ],
    "status": [
        ("Rerunning the pipeline, our release manager is Ewa now.", ("Our release manager is Ewa now.", "accept")),
        (
            "The tests pass locally but fail on CI because the CI runners are ARM machines.",
            ("The tests pass locally but fail on CI because the CI runners are ARM machines.", "reject"),
        ),
    ],
}


@pytest.mark.parametrize("kind", sorted(CHATTER))
def test_chatter_said_before_a_fact_is_left_out_of_it(kind: str) -> None:
    assert [_planned(said) for said, _ in CHATTER[kind]] == [[planned] for _, planned in CHATTER[kind]]


def test_identifiers_are_no_words_of_another_language() -> None:
    technical = ("eu-west-1, same as prod.", "us-east-1 para staging", "eu-west-1 da prod.")
    assert [other_language(s) for s in technical] == [None, None, None]
    assert other_language("Eu moro em Lisboa e gosto muito de café.") == "Portuguese"
    assert other_language("Ich bin müde.") == "German"
