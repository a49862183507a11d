"""Round 34 (v1 finding 2): the rule leaving out the assistant's account of what a file, config, log or
command says keeps the assistant's ordinary facts: "X has …" (having is no saying), a present perfect ("has
been migrated"), a host name (api.acme.io, acme.com) or a library (D3.js, Socket.io) as the subject, and
things that are no document (a page, an environment, a dashboard, an issue, test results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import ObserveSettings
from remnic.observe.extract import drop_reason
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn
from remnic.service.memory import Memory

REASON = "assistant reporting what a file, log or command says"
# The tester's seven sentences: before the rule each was a memory, and still must be.
TESTERS_SEVEN = [
    "The pricing page has a 4% conversion rate since the redesign.",
    "The staging environment has 32 GB of RAM and 8 cores.",
    "The team dashboard has been migrated to Grafana 10.",
    "api.acme.io has a rate limit of 100 requests per minute.",
    "acme.com has its DNS hosted at Cloudflare.",
    "The blood test results show your vitamin D is low at 18 ng/mL.",
    "The login issue has been fixed in release 2.3.",
]
KEPT = [
    *TESTERS_SEVEN,
    "The landing page has a 3% conversion rate.",
    "D3.js has built-in support for geographic projections.",
    "Socket.io has automatic reconnection.",
    "example.com has an A record pointing to 93.184.216.34.",
    "The lab results show your cholesterol is 180.",
    "The MRI results showed a torn meniscus in your left knee.",
    "The support page lists Maria as the account manager.",
    "The issue tracker lists 40 open bugs for the mobile app.",
    "The API response includes the user's timezone.",
    "The main page sets the tone for the brand.",
    "In v2.0, the billing endpoint moved to /v2/billing.",
    "Three.js defines a Scene class.",
    "api.acme.io returns a 429 over the limit.",
    "The files listed in the README are deprecated.",
    "The config has been migrated to YAML.",
    "The spec has a 10 second timeout for the webhook.",  # a fact about the spec: "has" is no saying
    "The schema has a tenants table keyed by org_id.",
    "The dump has 40 GB of customer data, so keep it off laptops.",
    "The release notes have shipped with every version since 1.0.",
]
# The original finding (h1 5) and the rule's first tests: still no memory from the assistant.
DROPPED = [
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
    "The error message says the token expired.",
    "The stack trace points to db/pool.py line 42.",
    "src/app.py defines the port as 8000.",
    "The spec says the webhook times out after 10 seconds.",
    "The Dockerfile sets the base image to python:3.12-slim.",
    "/etc/hosts says api points to 127.0.0.1.",
    "The webpack.config.js sets the entry to src/index.ts.",
    "The logs showed the job failed twice.",
    "As the README states, the API is versioned.",
]


def plan(text: str) -> list[str]:
    turns = [Turn("assistant", text, 0, turn_id="t1", timestamp="2026-11-27T10:00:00Z")]
    observations = plan_observations(turns, session_key="s", settings=ObserveSettings())
    return [o.fact.content for o in observations if o.proposed_status is not None]


@pytest.mark.parametrize("said", KEPT)
def test_an_assistant_fact_about_a_thing_that_is_no_document_is_not_taken_for_a_report(said: str) -> None:
    assert drop_reason(said, "assistant") != REASON


@pytest.mark.parametrize("said", TESTERS_SEVEN)
def test_the_tester_s_sentences_are_each_a_memory(said: str) -> None:
    assert plan(said) != []


@pytest.mark.parametrize("said", DROPPED)
def test_the_assistant_telling_what_a_document_or_output_says_is_still_left_out(said: str) -> None:
    assert drop_reason(said, "assistant") == REASON
    assert plan(said) == []


def test_the_tester_s_transcript_stores_all_seven_in_a_real_repository(memory: Memory, tmp_path: Path) -> None:
    questions = ["How is the site doing?", "And infra?", "Anything else?", "Limits?", "DNS?", "My labs?", "Bugs?"]
    messages = []
    for question, answer in zip(questions, TESTERS_SEVEN, strict=True):
        messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(messages))
    result = run_cli(
        "observe", str(path), "--session-key", "s1", "--format", "openai", "--flush", "--json", "-q",
        "--memory-dir", str(memory.root),
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.json()["flushes"][0]["created"] == 7
    assert sorted(r.content for r in memory.list()) == sorted(TESTERS_SEVEN)
