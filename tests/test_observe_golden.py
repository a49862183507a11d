"""Golden cases of the observation pipeline: a transcript in, the turns and observations out.

Each directory under ``golden/observe/`` holds an ``input.*`` transcript in its host's format, a
``case.json`` (format, session key, clock, observe settings) and the expected ``expected.json`` /
``expected-verdicts.jsonl`` written by ``python tests/regen_golden.py`` (``make golden``) and
reviewed. These tests only read golden files.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from regen_golden import OBSERVE_FILES, observe_case_dirs, observe_input, render_observe_case

from remnic.observe.transcripts import parse_transcript

CASES = observe_case_dirs()
HINT = "if the change is intended, run `python tests/regen_golden.py` (make golden) and review the diff"
REQUIRED_FORMATS = {"claude-code", "codex", "openai", "anthropic", "plain"}


def _diff(expected: str, actual: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), f"{name} (golden)", f"{name} (now)"
        )
    )


def test_every_format_has_a_case() -> None:
    formats = {json.loads((d / "case.json").read_text())["format"] for d in CASES}
    assert formats >= REQUIRED_FORMATS


@pytest.mark.parametrize("case_dir", CASES, ids=[d.name for d in CASES])
def test_observe_golden_case(case_dir: Path) -> None:
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    text = observe_input(case_dir).read_text(encoding="utf-8")
    # Auto-detection finds the declared format, and naming it explicitly reads the same turns.
    assert parse_transcript(text).format == case["format"]
    assert parse_transcript(text, case["format"]).turns == parse_transcript(text).turns
    failures = []
    for name, data in render_observe_case(case_dir).items():
        path = case_dir / name
        assert path.exists(), f"{path} missing; {HINT}"
        if path.read_bytes() != data:
            failures.append(_diff(path.read_text(encoding="utf-8"), data.decode("utf-8"), name))
    assert not failures, f"golden mismatch in {case_dir.name}; {HINT}\n" + "\n".join(failures)
    assert sorted(p.name for p in case_dir.iterdir() if p.name.startswith("expected")) == sorted(OBSERVE_FILES)


def _expected(name: str) -> dict:
    return json.loads(
        (Path(__file__).resolve().parent.parent / "golden" / "observe" / name / "expected.json").read_text()
    )


def _accepted(name: str) -> dict[str, dict]:
    return {o["fact"]["content"]: o for o in _expected(name)["observations"] if o["judgeAccepted"]}


INJECTED_WORDS = ("make lint", "Python 3.12", "oat milk", "Lisbon", "Never push to main", "6543", "Summary of earlier")


def test_injected_host_text_never_becomes_a_turn_or_an_observation() -> None:
    for case_dir in CASES:
        expected = (case_dir / "expected.json").read_text(encoding="utf-8")
        for words in INJECTED_WORDS:
            assert words not in expected, (case_dir.name, words)


def test_coding_session_keeps_the_design_and_drops_the_debugging() -> None:
    accepted = _accepted("claude-code-design-and-debug")
    categories = sorted(o["fact"]["category"] for o in accepted.values())
    assert categories == ["commitment", "decision", "fact", "preference", "principle", "principle"]
    assert "Ana will write the cache migration guide by Friday, 8 May 2026." in accepted
    assert not any("flaky" in c or "Traceback" in c or "connection refused" in c for c in accepted)
    rejected = [o for o in _expected("claude-code-design-and-debug")["observations"] if not o["judgeAccepted"]]
    assert {o["judgeReason"] for o in rejected} == {"Debugging detail", "Ephemeral state"}


def test_correction_carries_the_supersession_key_of_the_fact_it_replaces() -> None:
    observations = _expected("codex-release-cadence")["observations"]
    keyed = [o for o in observations if o["fact"].get("entityRef") == "staging-db"]
    assert [(o["fact"]["category"], o["fact"]["structuredAttributes"]) for o in keyed] == [
        ("fact", {"port": "5432"}),
        ("correction", {"port": "5433"}),
    ]
    owners = [o["fact"].get("structuredAttributes") for o in _expected("anthropic-support-correction")["observations"]]
    assert {"owner": "Priya"} in owners and {"owner": "Dana"} in owners


def test_greetings_and_questions_give_nothing() -> None:
    expected = _expected("plain-greetings-and-questions")
    assert len(expected["turns"]) == 11 and expected["observations"] == []
