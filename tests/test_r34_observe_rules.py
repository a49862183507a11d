"""Round 34: "I now work from Porto" becomes "The user now works from Porto" (not "nows work"), and the
assistant's account of what a file, config, log or command says is not a memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from remnic.config import ObserveSettings
from remnic.observe.extract import drop_reason
from remnic.observe.normalize import replace_first_person
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn
from remnic.repo.githooks import hooks_source_dir
from remnic.service.memory import Memory

FIRST_PERSON = [
    ("I now work from Porto.", "Ana now works from Porto."),
    ("I seldom drink coffee.", "Ana seldom drinks coffee."),
    ("I soon start at Acme.", "Ana soon starts at Acme."),
    ("I switched teams last month; I now report to Kofi Mensah.", "Ana switched teams last month; Ana now reports to Kofi Mensah."),
    ("I nowadays cycle to work.", "Ana nowadays cycles to work."),
    ("I still live in Lisbon.", "Ana still lives in Lisbon."),
    ("I rarely eat meat.", "Ana rarely eats meat."),
    ("I mostly use vim.", "Ana mostly uses vim."),
    ("I usually go running.", "Ana usually goes running."),
    ("I currently lead the data team.", "Ana currently leads the data team."),
    ("I quite like jazz.", "Ana quite likes jazz."),
    ("I much prefer Go.", "Ana much prefers Go."),
    ("I somehow manage.", "Ana somehow manages."),
    ("I sure do love YAML.", "Ana sure does love YAML."),
    ("I right now work remotely.", "Ana right now works remotely."),
    ("I yesterday bought a bike.", "Ana yesterday bought a bike."),
    ("I last saw her in May.", "Ana last saw her in May."),  # "last" before a past form is an adverb …
    ("I last longer than him.", "Ana lasts longer than him."),  # … otherwise it is the verb
    ("I simply love it.", "Ana simply loves it."),  # -ly words are adverbs …
    ("I deeply care about it.", "Ana deeply cares about it."),
    ("I rely on Ana's notes.", "Ana relies on Ana's notes."),  # … unless a verb
    ("I reapply sunscreen every two hours.", "Ana reapplies sunscreen every two hours."),
    ("I apply for jobs.", "Ana applies for jobs."),
    ("I fly to Rome.", "Ana flies to Rome."),
    ("I supply the shop.", "Ana supplies the shop."),
    ("He is taller than I now.", "He is taller than Ana now."),  # no verb after it: nothing to agree
    ("I too.", "Ana too."),
    ("I like Italy.", "Ana likes Italy."),
    ("I no longer eat meat.", "Ana no longer eats meat."),
]  # fmt: skip


@pytest.mark.parametrize("said,expected", FIRST_PERSON, ids=[s for s, _ in FIRST_PERSON])
def test_an_adverb_between_i_and_its_verb_keeps_the_verb_agreeing(said: str, expected: str) -> None:
    assert replace_first_person(said, "Ana") == expected


REPORTED = [
    "The notes file mentions the Q3 budget is 40k.",
    "The config says the database is Oracle 19c.",
    "The log shows the nightly job runs at 03:00 UTC.",
    "According to the README, releases go out every Tuesday.",
    "The output of the command shows 3 replicas in eu-west-1.",
    "notes.txt says the launch is on 3 June 2027.",
    "`config.yaml` sets the request timeout to 30 seconds.",
    "Your .env file sets the API port to 8080.",
    "The package.json lists React 18.2 as a dependency.",
    "Per the config, the cache TTL is 600 seconds.",
    "Based on the logs, the worker restarts every 6 hours.",
    "It says the staging database is Postgres 15.",
]
KEPT_FROM_THE_ASSISTANT = [
    "The staging DB port is 5433.",
    "Argo is our deployment tool.",
    "Node.js has a new LTS release every October.",
    "The logs are stored in S3 for 30 days.",
]


def plan(role: str, text: str) -> list[str]:
    turns = [Turn(role, text, 0, turn_id="t1", timestamp="2026-11-27T10:00:00Z")]
    observations = plan_observations(turns, session_key="s", settings=ObserveSettings())
    return [o.fact.content for o in observations if o.proposed_status is not None]


@pytest.mark.parametrize("said", REPORTED)
def test_the_assistant_telling_what_a_file_or_command_says_is_no_memory(said: str) -> None:
    assert plan("assistant", said) == []
    assert drop_reason(said, "assistant") == "assistant reporting what a file, log or command says"
    assert drop_reason(said, "user") is None  # a person who says it vouches for it: judged as before


def test_a_person_telling_what_the_config_says_is_still_a_fact() -> None:
    assert plan("user", "The config says the database is Oracle 19c.") == [
        "The config says the database is Oracle 19c."
    ]
    assert plan("user", "The notes file mentions the Q3 budget is 40k.") == [
        "The notes file mentions the Q3 budget is 40k."
    ]


@pytest.mark.parametrize("said", KEPT_FROM_THE_ASSISTANT)
def test_the_assistant_s_own_statements_about_the_system_stay(said: str) -> None:
    assert plan("assistant", said) == [said]


def test_a_claude_code_session_end_stores_agreeing_verbs_and_no_file_report(memory: Memory, tmp_path: Path) -> None:
    """The tester's session through the real SessionEnd hook script, on a real repository."""
    rows = [
        ("user", "I now work from Porto."),
        ("assistant", "Noted."),
        ("user", "I seldom drink coffee."),
        ("assistant", "OK."),
        ("user", "I read the config for you."),
        ("assistant", "The config says the database is Oracle 19c."),
        ("user", "Can you read the notes file for me?"),
        ("assistant", "Done. The notes file mentions the Q3 budget is 40k."),
    ]
    path = tmp_path / "t.jsonl"
    with path.open("w") as fh:
        for i, (role, text) in enumerate(rows):
            content = text if role == "user" else [{"type": "text", "text": text}]
            line = {"type": role, "uuid": f"u{i}", "sessionId": "s", "timestamp": f"2026-11-27T10:0{i}:00Z",
                    "message": {"role": role, "content": content}}  # fmt: skip
            fh.write(json.dumps(line) + "\n")
    payload = {"session_id": "s", "transcript_path": str(path), "cwd": "/tmp", "hook_event_name": "SessionEnd"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REMNIC_", "VIRTUAL_ENV"))}
    env.update(PATH="/usr/bin:/bin", REMNIC_PYTHON=sys.executable, REMNIC_MEMORY_DIR=str(memory.root))
    script = hooks_source_dir() / "claude-code" / "session-end.sh"
    proc = subprocess.run(
        [str(script)], input=json.dumps({**payload, "reason": "other"}), capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(r.content for r in memory.list(status=None)) == [
        "The user now works from Porto.",
        "The user seldom drinks coffee.",
    ]
