"""Messy real-world transcripts: chat that looks like code, secrets, host markup, long pastes, requests,
lists, repeated sentences, conjugation, identity, quotes and hypotheticals."""

from __future__ import annotations

import json
import subprocess

import pytest

from remnic.config import ObserveSettings
from remnic.errors import ValidationError
from remnic.observe.extract import classify, drop_reason, extract_turn, speaker_name
from remnic.observe.injected import strip_injected
from remnic.observe.normalize import standalone
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import MemoryObservation, Turn
from remnic.observe.secrets import SECRET_REASON
from remnic.observe.text import is_noise_line, prose_lines, sentences_of, split_sentences
from remnic.service import Memory

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def plan(*turns: Turn, **settings: object) -> list[MemoryObservation]:
    return plan_observations(
        list(turns), session_key="s", settings=ObserveSettings(**settings), now="2026-05-04T09:00:00Z"
    )


def kept(*turns: Turn) -> list[str]:
    return [o.fact.content for o in plan(*turns) if o.proposed_status is not None]


def user(text: str, index: int = 0, speaker: str | None = None) -> Turn:
    return Turn("user", text, index, speaker=speaker)


def assistant(text: str, index: int = 0) -> Turn:
    return Turn("assistant", text, index)


# --- 1. chat lines are not code or test output; text in any script is not noise ---


@pytest.mark.parametrize(
    "line",
    [
        "ok we decided to ship on Thursdays from now on",
        "let's go with pnpm from now on",
        "public holidays are days off for my whole team",
        "import the customer list before Friday",
        "class starts at 9 every Monday",
        "return the loaner laptops to IT when you leave",
        "東京に住んでいます。",
    ],
)
def test_chat_starting_with_a_code_or_test_runner_word_is_prose(line: str) -> None:
    assert not is_noise_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "ok 1 - adds two numbers",
        "not ok 2 - parses dates",
        "PASS src/x.test.ts",
        "let x = 5",
        "const retries: number = 3",
        "import numpy as np",
        'import { get } from "./cache";',
        "from remnic.observe import text",
        "def get(key):",
        "class Cache(Base):",
        "return cache[key]",
        "public static void main(String[] args) {",
        "12:30 — 14:00",
    ],
)
def test_code_and_test_runner_lines_are_still_noise(line: str) -> None:
    assert is_noise_line(line)


def test_a_claude_code_turn_opening_with_ok_keeps_its_facts() -> None:
    said = (
        "ok so context: I'm Sam, I lead the payments team at Fintrail. We decided last week to drop Redis "
        "and use Valkey instead. Can you look at src/cache.ts and tell me what breaks?"
    )
    assert kept(user(said, speaker="Sam")) == [
        "Sam leads the payments team at Fintrail.",
        "We decided last week to drop Redis and use Valkey instead.",
    ]


def test_separate_chat_lines_without_punctuation_are_separate_statements() -> None:
    text = (
        "ok we decided to ship on Thursdays from now on\nlet's go with pnpm from now on\npublic holidays are days off"
    )
    assert prose_lines(text) == [
        "ok we decided to ship on Thursdays from now on",
        "let's go with pnpm from now on",
        "public holidays are days off",
    ]
    assert prose_lines("- We deploy on Fridays\n  and roll back on Mondays.") == [
        "We deploy on Fridays and roll back on Mondays."
    ]  # an indented continuation is still one line


# --- 2. secrets ---


def test_a_sentence_holding_a_secret_is_rejected_and_its_words_never_carry_it() -> None:
    said = f"My AWS key is {AWS} and my GitHub token is {GITHUB}. We deploy on Fridays."
    for judge in (True, False):
        observations = plan(user(said), judge=judge)
        secret = observations[0]
        assert secret.verdict.kind == "reject" and secret.verdict.reason == SECRET_REASON
        assert secret.proposed_status is None
        assert all(AWS not in o.fact.content + o.fact.quote and GITHUB not in o.fact.content for o in observations)
        assert [o.fact.content for o in observations if o.proposed_status] == ["The user and others deploy on Fridays."]


def test_observing_a_secret_commits_no_file_and_keeps_no_copy_of_it(memory: Memory) -> None:
    said = f"My AWS key is {AWS} and my GitHub token is {GITHUB}. We decided to deploy on Fridays."
    result = memory.observe("s1", [{"role": "user", "content": said}], flush=True)
    assert [o.fact.content for o in result.observations if o.judge_accepted] == ["We decided to deploy on Fridays."]
    assert result.flushes[0].counts()["rejected"] == 1
    tracked = subprocess.run(
        ["git", "-C", str(memory.root), "ls-files"], capture_output=True, text=True, check=True
    ).stdout
    history = subprocess.run(
        ["git", "-C", str(memory.root), "log", "-p", "--all"], capture_output=True, text=True, check=True
    ).stdout
    assert AWS not in tracked + history and GITHUB not in tracked + history
    # The buffer and the transcript archive keep the turn, without the key.
    for path in [*memory.root.rglob("*.jsonl"), *memory.durable_dir.rglob("*.jsonl")]:
        text = path.read_text(encoding="utf-8")
        assert AWS not in text and GITHUB not in text, path


# --- 3. host markup ---


@pytest.mark.parametrize(
    "tag", ["ide_selection", "ide_opened_file", "task-notification", "bash-notification", "user-memory-input"]
)
def test_claude_code_ide_and_notification_spans_are_host_text(tag: str) -> None:
    text = f"<{tag}>The user selected lines 1-9 of /src/app.py: we always use tabs</{tag}>\nWe deploy from main."
    assert strip_injected(text) == "We deploy from main."


def test_leftover_host_markup_never_reaches_a_memory() -> None:
    assert strip_injected("</ide_selection> We deploy from main. <some-host_tag>") == "We deploy from main."
    assert strip_injected("Use a <div> here.") == "Use a <div> here."  # HTML is not host markup


# --- 4. the cap applies to prose, after code and logs are gone ---


def test_a_long_pasted_log_does_not_crowd_out_what_follows_it() -> None:
    log = "".join(f"2026-05-04 09:41:{i % 60:02d},532 INFO [worker-3] batch {i} done\n" for i in range(120))
    said = (
        f"```\n{log}```\nAnyway, from now on we pin numpy to 1.26 in every service. I prefer uv over pip for installs."
    )
    assert len(said) > 5000
    assert kept(user(said)) == [
        "From now on we pin numpy to 1.26 in every service.",
        "The user prefers uv over pip for installs.",
    ]
    assert sentences_of("word " * 2000, 100)[0].count("word") <= 20  # the prose itself is still capped


# --- 5. requests and debugging status are not facts; durable rules are ---


@pytest.mark.parametrize(
    "sentence",
    [
        "I'd like you to add retries to the HTTP client.",
        "I want you to write the tests first.",
        "I was wondering if you could refactor the auth module.",
        "I'm getting a 502 from the gateway.",
        "I see the same error on my machine.",
        "I just pasted the error above.",
        "What I'm asking is whether Postgres supports this.",
        "I need to rotate our AWS keys.",
    ],
)
def test_requests_and_debugging_status_from_the_user_are_not_facts(sentence: str) -> None:
    assert isinstance(classify(sentence, "user", 4), str)


def test_durable_statements_next_to_requests_are_kept() -> None:
    assert kept(user("I need to rotate our AWS keys every 90 days.")) == [
        "The user needs to rotate our AWS keys every 90 days."
    ]
    assert kept(user("I'm getting married in June.")) == ["The user is getting married in June."]


@pytest.mark.parametrize(
    "sentence",
    [
        "Added GET /health in app/routes.py; it returns 200 with the build sha.",
        "Updated the README with the new --retries flag.",
    ],
)
def test_assistant_work_narration_without_i_is_chatter(sentence: str) -> None:
    assert drop_reason(sentence, "assistant") == "assistant task chatter"


# --- 6. only a declarative reply is an answer ---


def test_a_reply_that_asks_back_or_instructs_is_no_answer() -> None:
    turns = [
        assistant("How should I lay out the migration?", 0),
        user("how is the users table laid out", 1),
        assistant("Shall I start with the API?", 2),
        user("not yet, first fix the lint errors in api.py", 3),
        assistant("Which database do you use?", 4),
        user("Postgres 16 on RDS.", 5),
    ]
    assert kept(*turns) == ['The user, asked "Which database do you use?": Postgres 16 on RDS.']


# --- 7. list items and lowercase sentences ---


def test_list_items_are_separate_facts() -> None:
    said = "- I prefer Terraform over CDK\n- we deploy from the `release` branch only\n- staging lives at https://staging.example.com"
    assert kept(user(said)) == [
        "The user prefers Terraform over CDK.",
        "The user and others deploy from the release branch only.",
        "Staging lives at https://staging.example.com.",
    ]


@pytest.mark.parametrize(
    "line,expected",
    [
        ("i prefer tabs. we use ruff. my manager is Tom.", ["i prefer tabs.", "we use ruff.", "my manager is Tom."]),
        ("Use e.g. redis. It works.", ["Use e.g. redis.", "It works."]),
        ("We run v2.3.1 now. i.e. the latest.", ["We run v2.3.1 now.", "i.e. the latest."]),
        ("I edited api.py and left. then I ate.", ["I edited api.py and left.", "then I ate."]),
        ("I was like... whatever, fine.", ["I was like... whatever, fine."]),
    ],
)
def test_a_lowercase_sentence_start_is_still_a_boundary(line: str, expected: list[str]) -> None:
    assert split_sentences(line) == expected


def test_chat_lowercase_i_is_the_first_person() -> None:
    facts = kept(user("i prefer tabs. we decided to use ruff instead of flake8. my manager is Tom.", speaker="Ana"))
    assert facts[0].startswith("Ana prefers tabs.") and "Ana's manager is Tom." in facts
    assert sentences_of("i'm in Porto, i.e. the north.", 4000) == ["I'm in Porto, i.e. the north."]


# --- 8. joins are bounded and never repeat a sentence ---


def test_a_sentence_repeated_in_a_turn_is_one_fact() -> None:
    assert kept(user("We always run migrations before deploys. " * 38)) == ["We always run migrations before deploys."]


def test_a_long_introduction_is_several_facts() -> None:
    said = (
        "I love hiking in the Alps. My sister lives in Lyon. I play the cello on weekends. I have two cats. "
        "I grew up in Porto. I like spicy food. I enjoy sci-fi novels. I love the sea."
    )
    facts = kept(user(said, speaker="Sam"))
    assert len(facts) == 2 and all(f.count(". ") <= 3 for f in facts)
    one = plan_observations(
        [user(said, speaker="Sam")], session_key="s", settings=ObserveSettings(join_max_sentences=8)
    )
    assert len([o for o in one if o.proposed_status]) == 1


# --- 9. the verb agrees, nothing else does ---


@pytest.mark.parametrize(
    "said,name,expected",
    [
        ("If I were in charge, we would use Go.", "Priya", "If Priya were in charge, we would use Go."),
        ("I no longer prefer tabs.", "Sam", "Sam no longer prefers tabs."),
        ("I myself prefer Go.", "Sam", "Sam prefers Go."),
        ("I just LOVE writing YAML.", "Sam", "Sam just loves writing YAML."),
        ("I kind of like it here.", "Sam", "Sam kind of likes it here."),
        ("I never use GitHub Actions.", "Sam", "Sam never uses GitHub Actions."),
    ],
)
def test_the_third_person_conjugates_the_verb_not_an_adverb(said: str, name: str, expected: str) -> None:
    assert standalone(said, speaker=name, timestamp=None)[0] == expected


# --- 10. preferences said as "I'd rather", identity said in two words ---


def test_id_rather_is_a_preference() -> None:
    assert classify("I'd rather use Fastly than Cloudflare.", "user", 4)[0] == "preference"


@pytest.mark.parametrize("trait", ["vegetarian", "diabetic", "Brazilian", "left-handed", "Japanese"])
def test_a_lasting_trait_in_two_words_is_who_the_speaker_is(trait: str) -> None:
    assert kept(user(f"I'm {trait}.")) == [f"The user is {trait}."]


@pytest.mark.parametrize("state", ["tired", "confused", "done", "back", "fine", "here"])
def test_a_passing_state_in_two_words_is_not(state: str) -> None:
    assert kept(user(f"I'm {state}.")) == []


# --- 11. speaker names ---


def test_a_lowercase_speaker_name_is_capitalised_and_a_self_introduction_goes() -> None:
    assert speaker_name(user("x", speaker="olga"), ObserveSettings()) == "Olga"
    assert speaker_name(user("x", speaker="olga_k"), ObserveSettings()) == "olga_k"  # a handle
    assert kept(user("I run a small bakery in Riga.", speaker="olga")) == ["Olga runs a small bakery in Riga."]
    assert kept(user("I'm Olga — I run a small bakery in Riga.", speaker="Olga")) == [
        "Olga runs a small bakery in Riga."
    ]


# --- 12. dot-files, chat asides, quotes, hypotheticals ---


def test_dot_files_asides_and_quotations_are_kept_as_said() -> None:
    assert standalone("Secrets go in Vault, never in .env files.", speaker="Ana", timestamp=None)[0] == (
        "Secrets go in Vault, never in .env files."
    )
    assert standalone("we use ruff btw", speaker="Ana", timestamp=None)[0] == "We use ruff."
    assert standalone("We deploy on Fridays lol.", speaker="Ana", timestamp=None)[0] == "We deploy on Fridays."
    assert standalone('My manager Dana said "I hate Python".', speaker="Marcus", timestamp=None)[0] == (
        'Marcus\'s manager Dana said "I hate Python".'
    )
    cue = classify('My manager Dana said "I hate Python" at the offsite.', "user", 4)
    assert cue[0] == "relationship"  # the quoted "I hate" is Dana's, not a preference of Marcus


@pytest.mark.parametrize(
    "sentence",
    [
        "If I were to use Postgres for this, I'd need more RAM.",
        "Suppose I moved to Berlin next year.",
        "Imagine we used MongoDB instead.",
        "What if we dropped the cache entirely.",
        "Let's say we double the replicas.",
    ],
)
def test_hypotheticals_are_not_facts(sentence: str) -> None:
    assert drop_reason(sentence, "user") == "hypothetical"
    assert not extract_turn(user(sentence), ObserveSettings())


# --- 13. arguments are checked before anything is written ---


def test_an_unknown_flush_event_is_refused_before_any_write(memory: Memory) -> None:
    def state() -> list[str]:
        return sorted(str(p) for p in [*memory.root.rglob("*.jsonl"), *memory.durable_dir.rglob("*.jsonl")])

    before = state()
    with pytest.raises(ValidationError) as raised:
        memory.observe("s1", [{"role": "user", "content": "We decided to use Go."}], event="bogus")
    assert "event" in str(raised.value) and "valid options: explicit, session-end, compaction, reset" in str(
        raised.value
    )
    with pytest.raises(ValidationError):
        memory.observe_transcript("s1", "Ana: We decided to use Go.\n", fmt="plain", event="bogus")
    assert state() == before
    assert json.dumps(memory.observe("s1", [{"role": "user", "content": "We decided to use Go."}]).to_dict())
