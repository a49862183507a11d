"""Round 33: a replayed statement a correction replaced is the memory it was (never an active copy),
a genuine restatement after the correction revives it, and a fact said with a preference is not
joined into it when a later "…, not OLD" could replace it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from remnic.config import ObserveSettings, settings_for
from remnic.observe.alike import replaceable, replaces
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn
from remnic.service import Memory

OLD = "[2026-03-04T16:05:00Z] Dana: We deploy staging with ArgoCD.\n"
FIX = "[2026-03-05T23:31:00Z] Dana: Actually, we deploy staging with Flux, not ArgoCD.\n"
AGAIN = "[2026-03-07T10:00:00Z] Dana: We deploy staging with ArgoCD.\n"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    root = tmp_path / "mem"
    mem = Memory.init(root, settings=settings_for(root))
    yield mem
    mem.close()


def observe(mem: Memory, key: str, text: str) -> dict[str, int]:
    counts = {"created": 0, "reinforced": 0, "superseded": 0}
    for flush in mem.observe_transcript(key, text, fmt="plain", flush=True).flushes:
        for name in counts:
            counts[name] += flush.counts()[name] or 0
    return counts


def by_status(mem: Memory) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for record in mem.files.scan().records:
        out.setdefault(record.status, []).append(record.content)
    return {k: sorted(v) for k, v in out.items()}


def memory_files(mem: Memory) -> list[str]:
    return sorted(str(p.relative_to(mem.root)) for p in mem.root.glob("*/*.md"))


def test_a_replayed_statement_reinforces_what_replaced_it_and_a_later_one_revives_it(memory: Memory) -> None:
    observe(memory, "s1", OLD)
    assert observe(memory, "s2", FIX)["superseded"] == 1
    files = memory_files(memory)
    # The old transcript again under another key, with its timestamps: a replay, no new file.
    assert observe(memory, "s3", OLD) == {"created": 0, "reinforced": 1, "superseded": 0}
    assert memory_files(memory) == files
    assert by_status(memory) == {
        "active": ["We deploy staging with Flux, not ArgoCD."],
        "superseded": ["Dana and others deploy staging with ArgoCD."],
    }
    old = next(r for r in memory.files.scan().records if r.status == "superseded")
    assert old.frontmatter.get("reinforcement_count") == 1
    # Said again after the correction: the same memory current again, the correction superseded by it.
    assert observe(memory, "s4", AGAIN) == {"created": 0, "reinforced": 1, "superseded": 1}
    assert memory_files(memory) == files
    assert by_status(memory) == {
        "active": ["Dana and others deploy staging with ArgoCD."],
        "superseded": ["We deploy staging with Flux, not ArgoCD."],
    }


def test_a_replayed_keyed_value_adds_no_file(memory: Memory) -> None:
    first = "[2026-03-04T10:00:00Z] Dana: The rate limit is 100 requests per minute per tenant.\n"
    fix = "[2026-03-05T10:00:00Z] Dana: Actually the rate limit is 200 requests per minute per tenant, not 100.\n"
    observe(memory, "a", first)
    assert observe(memory, "b", fix)["superseded"] == 1
    files = memory_files(memory)
    assert observe(memory, "c", first) == {"created": 0, "reinforced": 1, "superseded": 0}
    assert memory_files(memory) == files
    assert by_status(memory)["active"] == ["The rate limit is 200 requests per minute per tenant, not 100."]


def test_a_fact_said_with_a_preference_stays_apart_so_its_correction_replaces_it(memory: Memory) -> None:
    said = (
        "[2026-03-04T16:05:00Z] Dana: I prefer Lua scripts in Redis over MULTI/EXEC, they're atomic and one "
        "round trip. We deploy staging with ArgoCD, so the limiter config goes in the helm values.\n"
    )
    observe(memory, "a", said)
    assert observe(memory, "b", FIX)["superseded"] == 1
    active = by_status(memory)["active"]
    assert any(c.startswith("Dana prefers Lua scripts") for c in active)
    assert not any("ArgoCD, so" in c for c in active)


def plan(text: str) -> list[str]:
    turn = Turn("user", text, 0, turn_id="L1", speaker="Mel", timestamp="2023-05-08T10:00:00Z")
    return [o.fact.content for o in plan_observations([turn], session_key="k", settings=ObserveSettings())]


def test_only_a_present_statement_naming_a_system_stays_out_of_a_preference() -> None:
    assert replaceable("We deploy staging with ArgoCD.")
    assert replaceable("The CI Redis port is 6390.")
    assert not replaceable("We went camping with the kids.")  # what happened: nothing to correct later
    assert not replaceable("We usually watch movies and hike.")  # no named value
    assert not replaceable("We don't use ArgoCD.")  # a denial is replaced by nothing
    assert not replaceable("There's a quote by J.K.") and not replaceable("Warrior II makes me feel strong.")
    # One that goes on about the fact keeps its subject there: still one fact.
    assert len(plan("That picture is from MinaLima. They made the props for the films, and I love their work.")) == 1
    assert len(plan("I love hiking. We went to the lake with the kids yesterday.")) == 1  # still one fact
    assert len(plan("I love Redis. We deploy staging with ArgoCD.")) == 2


def test_what_follows_from_the_replaced_statement_goes_with_it() -> None:
    fix = "Actually, we deploy staging with Flux, not ArgoCD."
    assert replaces(fix, "Dana and others deploy staging with ArgoCD, so the limiter config goes in the helm values.")
    assert not replaces(fix, "We moved to Berlin, so we deploy staging with ArgoCD.")  # the premise is other


# --- v1 findings: only the SAME statement revives what a correction replaced ---


@pytest.mark.parametrize(
    "said",
    [
        "We deploy production with ArgoCD.",  # another environment
        "We used to deploy staging with ArgoCD.",  # what was, not what is
        "We should deploy staging with ArgoCD.",  # a suggestion
        "We deploy staging with ArgoCD and Flux.",  # more than the old statement
    ],
)
def test_a_statement_only_like_a_replaced_one_is_a_new_fact_and_the_correction_stays(memory: Memory, said: str) -> None:
    observe(memory, "s1", OLD)
    observe(memory, "s2", FIX)
    counts = observe(memory, "s3", f"[2026-03-08T10:00:00Z] Dana: {said}\n")
    assert counts["superseded"] == 0 and counts["created"] == 1
    statuses = by_status(memory)
    assert "We deploy staging with Flux, not ArgoCD." in statuses["active"]
    assert statuses["superseded"] == ["Dana and others deploy staging with ArgoCD."]


PORT = "[2026-03-04T10:00:00Z] Dana: The staging DB port is 5433.\n"
PORT_FIX = "[2026-03-05T10:00:00Z] Dana: No, that's wrong, the staging DB port is 5434.\n"


def test_a_keyed_value_said_in_the_past_tense_does_not_revive_it(memory: Memory) -> None:
    observe(memory, "a", PORT)
    assert observe(memory, "b", PORT_FIX)["superseded"] == 1
    counts = observe(memory, "c", "[2026-03-08T10:00:00Z] Dana: The staging DB port used to be 5433.\n")
    assert counts == {"created": 1, "reinforced": 0, "superseded": 0}
    assert "The staging DB port is 5434." in by_status(memory)["active"]


def test_the_same_key_and_value_in_other_words_is_a_new_value_not_a_revival(memory: Memory) -> None:
    observe(memory, "a", PORT)
    observe(memory, "b", PORT_FIX)
    counts = observe(memory, "c", "[2026-03-08T10:00:00Z] Dana: Our staging DB port is 5433.\n")
    assert counts == {"created": 1, "reinforced": 0, "superseded": 1}  # through its key, as before
    assert by_status(memory) == {
        "active": ["Our staging DB port is 5433."],
        "superseded": ["The staging DB port is 5433.", "The staging DB port is 5434."],
    }


def flushes_of_one_call(mem: Memory, text: str) -> list[str]:
    return [f.reason for f in mem.observe_transcript("k", text, fmt="plain").flushes]


def test_one_call_of_several_flushes_revives_a_value_said_again_later_in_it(memory: Memory) -> None:
    text = (
        "[2026-03-02T08:00:00Z] Dana: The staging DB port is 5433.\n"
        "[2026-03-02T13:00:00Z] Dana: No, that's wrong, the staging DB port is 5434.\n"
        "[2026-03-02T18:00:00Z] Dana: The staging DB port is 5433.\n"
        "[2026-03-03T04:00:00Z] Dana: I hate YAML.\n"
    )
    assert flushes_of_one_call(memory, text) == ["time-elapsed"] * 3
    assert by_status(memory) == {
        "active": ["The staging DB port is 5433."],
        "superseded": ["The staging DB port is 5434."],
    }
    current = next(r for r in memory.files.scan().records if r.status == "active")
    assert "supersededBy" not in current.frontmatter and str(current.frontmatter.get("validAt")).startswith(
        "2026-03-02T18:00:00"
    )


def test_one_call_of_several_flushes_revives_a_replaced_statement_said_again(memory: Memory) -> None:
    text = (
        "[2026-03-02T08:00:00Z] Dana: We deploy staging with ArgoCD.\n"
        "[2026-03-02T13:00:00Z] Dana: Actually, we deploy staging with Flux, not ArgoCD.\n"
        "[2026-03-02T18:00:00Z] Dana: We deploy staging with ArgoCD.\n"
        "[2026-03-03T04:00:00Z] Dana: I hate YAML.\n"
    )
    assert flushes_of_one_call(memory, text) == ["time-elapsed"] * 3
    assert by_status(memory) == {
        "active": ["Dana and others deploy staging with ArgoCD."],
        "superseded": ["We deploy staging with Flux, not ArgoCD."],
    }


def test_a_dry_run_says_its_flushes_write_counts_are_not_computed(memory: Memory) -> None:
    text = OLD + FIX
    dry = memory.observe_transcript("k", text, fmt="plain", flush=True, dry_run=True).to_dict()
    (flush,) = dry["flushes"]
    assert flush["observations"] == 2 and flush["commit"] is None
    assert [flush[k] for k in ("created", "reinforced", "superseded", "createdIds")] == [None] * 4
    real = memory.observe_transcript("k", text, fmt="plain", flush=True).to_dict()
    assert real["flushes"][0]["created"] == 2 and real["flushes"][0]["createdIds"]


# --- v5 #1: a replay in ONE flush is a replay, as in two flushes ---


@pytest.mark.parametrize(
    ("first", "fix", "again", "current"),
    [
        (
            "The staging DB port is 5433.",
            "No, that's wrong, the staging DB port is 5434.",
            "The staging DB port is 5433.",
            "The staging DB port is 5433.",
        ),
        (
            "We deploy staging with ArgoCD.",
            "Actually, we deploy staging with Flux, not ArgoCD.",
            "We deploy staging with ArgoCD.",
            "Dana and others deploy staging with ArgoCD.",
        ),
    ],
)
def test_an_older_transcript_replayed_in_one_flush_leaves_the_revived_value_current(
    memory: Memory, first: str, fix: str, again: str, current: str
) -> None:
    old = f"[2026-03-02T08:00:00Z] Dana: {first}\n[2026-03-02T09:00:00Z] Dana: {fix}\n"
    observe(memory, "s1", old)
    observe(memory, "s2", f"[2026-03-05T08:00:00Z] Dana: {again}\n")
    before = by_status(memory)
    # The 2 March file again under another key, both lines in one flush: the first reinforces the
    # current value, and that does not make the 2 March correction "said after" it.
    counts = observe(memory, "s1b", old)
    assert counts["created"] == 0 and counts["superseded"] == 0
    assert by_status(memory) == before
    assert current in before["active"]
