"""Control characters in a transcript (a NUL, \\x01, a terminal escape — in the words or the speaker)
never reach the buffer, the archive or a memory file: a NUL made the file malformed (out of recall
after a reindex) and git called it binary. Tab and newline are kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from remnic import Memory
from remnic.config import settings_for
from remnic.observe.transcripts import parse_transcript, turns_from_messages

DIRTY = ("\x00", "\x01", "\x1b[31m", "\x1b[0m", "\x7f", "\x9b")


def _clean(text: str) -> bool:
    return not any(c in text for c in DIRTY) and "[31m" not in text and "[0m" not in text


def test_the_rule_drops_controls_and_whole_escapes_and_keeps_tab_and_newline() -> None:
    from remnic.memfile.validate import clean_text  # the one rule, beside the store's refusal of NUL

    assert clean_text("The billing API\x00 listens on port 8443.") == "The billing API listens on port 8443."
    assert clean_text("Hi\x00\x01\x02 there") == "Hi there"
    assert clean_text("\x1b[31mBen\x1b[0m") == "Ben"
    assert clean_text("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert clean_text("title\x1b]0;pwned\x07 here") == "title here"
    assert clean_text("plain words") == "plain words"


PLAIN = (
    "[2026-03-02T10:00:00Z] Ana: The billing API\x00 listens on port 8443.\n"
    "[2026-03-02T10:01:00Z] \x1b[31mBen\x1b[0m: Our CI runs\x01 on Buildkite\tand deploys take 7 minutes.\n"
)
OPENAI = json.dumps(
    [
        {"role": "user", "name": "\x1b[31mAna\x00", "content": "The billing API\u0000 listens on port 8443."},
        {"role": "assistant", "content": "Noted\x01."},
        {"role": "user", "content": [{"type": "text", "text": "Our CI runs on \x1b[1mBuildkite\x1b[0m."}]},
    ]
)


@pytest.mark.parametrize(("text", "fmt"), [(PLAIN, "plain"), (OPENAI, "openai")])
def test_every_format_reads_clean_turns(text: str, fmt: str) -> None:
    turns = parse_transcript(text, fmt).turns
    assert turns and all(_clean(t.text) and _clean(t.speaker or "") for t in turns)
    assert "The billing API listens on port 8443." in [t.text for t in turns]
    if fmt == "plain":
        assert turns[1].speaker == "Ben" and "\t" in turns[1].text


def test_api_messages_are_cleaned_too_speaker_and_kept_name_included() -> None:
    (turn,) = turns_from_messages([{"role": "user", "content": "We use Redis\x01 for caching.", "name": "\x1b[31mBen"}])
    assert turn.text == "We use Redis for caching." and turn.speaker == "Ben"
    assert json.loads(turn.kept) == {"name": "Ben"}


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root = tmp_path_factory.mktemp("nul") / "mem"
    mem = Memory.init(root, settings=settings_for(root))
    mem.observe_transcript("plain", PLAIN, fmt="plain", flush=True)
    mem.observe_transcript("openai", OPENAI, fmt="openai", flush=True)
    yield mem
    mem.close()


def test_no_memory_file_buffer_or_archive_holds_a_control_character(observed: Memory) -> None:
    files = [p for p in observed.root.rglob("*.md") if ".git" not in p.parts and p.name != "README.md"]
    assert files, "the facts were written"
    for path in [*files, *observed.root.rglob("*.jsonl"), *Path(observed.durable_dir).rglob("*.jsonl")]:
        raw = path.read_text(encoding="utf-8")
        assert _clean(raw) and "\\u0000" not in raw and "\\u001b" not in raw, path
    assert not observed.files.scan().problems  # doctor's memory-files check: none malformed


def test_the_cleaned_fact_is_found_after_a_reindex(observed: Memory) -> None:
    observed.reindex()
    hits = observed.recall("billing API port", top_k=3).hits
    assert any(h.content == "The billing API listens on port 8443." for h in hits)
