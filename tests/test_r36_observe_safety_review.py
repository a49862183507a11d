"""Why a memory waits for review is said where a person decides it: `remnic review list` (text and
--json), the `defer` lines of `remnic observe`; `observe --help` lists the formats it reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

HEDGED = """\
[2026-05-04T09:00:00Z] Ana: I think we might move the standup to 10:00 maybe.
[2026-05-04T09:01:00Z] Ana: We decided to cut releases every Tuesday.
[2026-05-04T09:02:00Z] Ana: Our team lunch is every Friday.
"""
HEDGE_REASON = "Hedged: the speaker is not sure"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review") / "mem"
    assert run_cli("init", str(root)).code == 0
    chat = root.parent / "chat.txt"
    chat.write_text(HEDGED, encoding="utf-8")
    observed = run_cli("observe", str(chat), "--session-key", "s", "--flush", "--memory-dir", str(root))
    assert observed.code == 0, observed.err
    (root.parent / "observe.out").write_text(observed.out, encoding="utf-8")
    return root


def test_observe_prints_the_judges_reason_beside_defer(repo: Path) -> None:
    out = (repo.parent / "observe.out").read_text(encoding="utf-8")
    (deferred,) = [line for line in out.splitlines() if line.startswith("defer")]
    assert deferred.endswith(f"({HEDGE_REASON})"), out


def test_review_list_says_why_each_memory_waits(repo: Path) -> None:
    d = ("--memory-dir", str(repo))
    listed = run_cli("review", "list", "--json", *d).json()["memories"]
    (hedged,) = [m for m in listed if "standup" in m["content"]]
    assert hedged["queueReason"] == HEDGE_REASON
    lunch = run_cli("list", "--json", *d).json()
    lunch_id = next(m["id"] for m in lunch["memories"] if "lunch" in m["content"])
    assert run_cli("review", "flag", lunch_id, "--reason", "stale", *d).code == 0
    listed = {m["id"]: m["queueReason"] for m in run_cli("review", "list", "--json", *d).json()["memories"]}
    assert listed[lunch_id] == "flagged by a person (stale)"
    text = run_cli("review", "list", *d).out
    assert "WHY" in text.splitlines()[0] and HEDGE_REASON in text and "flagged by a person (stale)" in text


def test_observe_help_lists_the_formats_it_promises() -> None:
    out = run_cli("observe", "--help").out
    assert "in one of the formats below" in out
    epilog = out.split("in one of the formats below", 1)[1]
    for fmt in ("claude-code", "codex", "openai", "anthropic", "plain"):
        assert f"\n  {fmt} " in epilog, fmt
