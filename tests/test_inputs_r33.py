"""Round 33 input fixes: cut-off JSON transcripts, dry runs that predict the real observe, the
versions JSON shapes and revisions, and import lines with repeated keys or null."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.errors import ValidationError
from remnic.observe.transcripts import detect_format, parse_transcript
from remnic.service import Memory

DOCUMENT = "a JSON document: an array of {role, content} messages or an object with a messages array (format openai)"
ANTHROPIC = 'or {"system", "messages": [...]} (format anthropic)'


def _error(text: str, fmt: str = "auto") -> str:
    with pytest.raises(ValidationError) as info:
        parse_transcript(text, fmt)
    return str(info.value)


def test_a_cut_off_json_transcript_is_named_as_a_json_document_where_it_ends() -> None:
    one_line = '{"messages":[{"role":"user","content":"I prefer tea."}\n'  # 54 characters, then a newline
    said = _error(one_line)
    assert said.startswith(
        "transcript:1: transcript: not valid JSON: the document is incomplete, the text ends at column 54"
    )
    assert DOCUMENT in said and ANTHROPIC in said and "claude-code" not in said
    # Asked for as openai: still line 1 (the line after the trailing newline is not where it broke).
    assert _error(one_line, "openai").startswith("transcript:1: transcript: not valid JSON: the document is incomplete")
    full = json.dumps({"system": "x", "messages": [{"role": "user", "content": "I prefer tea."}]}, indent=1)
    pretty = full[:60]  # cut inside a string on line 6
    said = _error(pretty)
    assert said.startswith("transcript:6: transcript: not valid JSON: the document is incomplete")
    assert "Unterminated string starting at line 6" in said and DOCUMENT in said and "Speaker:" not in said
    # Broken inside, not at the end: the line and column of the error.
    inside = '[{"role": "user", "content": "a"},\n {"role": "user" "content": "b"}]\n'
    assert _error(inside).startswith("transcript:2: transcript: not valid JSON (Expecting ',' delimiter at column 18)")


def test_a_host_file_with_a_broken_first_line_is_still_read_as_one() -> None:
    line = json.dumps({"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}})
    text = line[:20] + "\n" + line + "\n"
    assert detect_format(text) == "claude-code"
    assert _error(text).startswith("transcript:1: transcript: not valid JSON") and "(format claude-code)" in _error(
        text
    )


CHAT = """\
[2026-03-04T16:00:00Z] Ana: The staging DB port is 5432.
[2026-03-04T16:05:00Z] Ben: Ben owns the billing service.
[2026-03-04T16:06:00Z] Ana: We deploy staging with ArgoCD.
[2026-03-04T17:10:00Z] Ana: The release freeze starts on 20 March 2026.
[2026-03-04T17:11:00Z] Ben: Carla leads the data team.
"""


def _shape(result: object) -> dict[str, object]:
    data = result.to_dict()  # type: ignore[attr-defined]
    return {
        "pending": data["pendingTurns"],
        "flushes": [(f["reason"], f["turns"]) for f in data["flushes"]],
        "facts": sorted(o["fact"]["content"] for o in data["observations"]),
    }


def test_a_dry_run_predicts_the_same_command_without_it(memory: Memory) -> None:
    dry = memory.observe_transcript("s1", CHAT, fmt="plain", dry_run=True)
    assert all(f["commit"] is None for f in dry.to_dict()["flushes"])
    real = memory.observe_transcript("s1", CHAT, fmt="plain")
    # The 64-minute pause flushes the first three turns; the last two wait, in the preview too.
    assert _shape(real)["flushes"] == [("time-elapsed", [0, 2])] and _shape(real)["pending"] == 2
    assert _shape(dry) == _shape(real)
    left = memory.observe_transcript("s1", "", fmt="plain", dry_run=True)
    assert _shape(left) == {"pending": 2, "flushes": [], "facts": []}  # no trigger fires: nothing would be made
    flush = memory.observe_transcript("s1", "", fmt="plain", flush=True, dry_run=True)
    assert _shape(flush)["flushes"] == [("explicit", [3, 4])] and _shape(flush)["pending"] == 0
    assert _shape(flush) == _shape(memory.observe_transcript("s1", "", fmt="plain", flush=True))


def test_dry_run_text_says_which_trigger_fires_and_what_stays(memory: Memory, tmp_path: Path) -> None:
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT, encoding="utf-8")
    r = run_cli("observe", str(chat), "--session-key", "s1", "--dry-run", "--memory-dir", str(memory.root))
    assert r.code == 0, r.err
    assert "would flush time-elapsed turns 0-2" in r.out and "2 turns would wait in the session's buffer" in r.out


def test_versions_json_gives_version_as_the_number_everywhere(memory: Memory) -> None:
    rec = memory.store("The plan is to ship in May", category="fact").record
    memory.update(rec.id, {"tags": ["plan"]})
    d = str(memory.root)
    listed = run_cli("versions", "list", rec.id, "--memory-dir", d, "--json").json()["versions"]
    shown = run_cli("versions", "show", rec.id, "v1", "--memory-dir", d, "--json").json()
    diff = run_cli("versions", "diff", rec.id, "v1", "v2", "--memory-dir", d, "--json").json()
    assert listed[0]["version"] == shown["version"] == diff["from"]["version"] == 1 and diff["to"]["version"] == 2
    assert shown["title"] == f"{rec.path}@v1 ({listed[0]['sha'][:8]})"
    help_text = run_cli("versions", "show", "--help").out
    assert "version is the number" in help_text and "title" in help_text


def test_versions_name_a_commit_that_did_not_change_the_memory_and_take_head_n(memory: Memory) -> None:
    rec = memory.store("The plan is to ship in May", category="fact").record
    memory.update(rec.id, {"tags": ["plan"]})
    memory.store("Something else entirely", category="fact")
    d = str(memory.root)
    head = git(memory.root, "rev-parse", "HEAD").strip()
    r = run_cli("versions", "show", rec.id, head[:7], "--memory-dir", d)
    assert r.code == 2 and f"commit {head[:8]} did not change this memory" in r.err
    assert "the version in effect then is v2" in r.err
    v2 = run_cli("versions", "show", rec.id, "v2", "--memory-dir", d).out
    assert run_cli("versions", "show", rec.id, "HEAD~1", "--memory-dir", d).out == v2  # the commit that made v2
    assert run_cli("versions", "show", rec.id, "HEAD~2", "--memory-dir", d, "--json").json()["version"] == 1
    assert run_cli("versions", "diff", rec.id, "HEAD~2", "HEAD", "--memory-dir", d, "--json").json()["changed"]
    bad = run_cli("versions", "show", rec.id, "HEAD~9", "--memory-dir", d)
    assert bad.code == 2 and "no version 'HEAD~9'" in bad.err


def test_import_refuses_a_repeated_key_and_names_null_as_json_does(memory: Memory, tmp_path: Path) -> None:
    lines = tmp_path / "in.jsonl"
    lines.write_text('{"content":"a","content":"b"}\nnull\n{"content":"ok","frontmatter":{"x":1,"x":2}}\n')
    r = run_cli("import", str(lines), "--dry-run", "--memory-dir", str(memory.root))
    assert r.code == 2
    assert f"{lines}:1: content: the key appears twice" in r.err and f"{lines}:3: x: the key appears twice" in r.err
    assert f"{lines}:2: expected a JSON object, got null" in r.err and "NoneType" not in r.err


def test_importing_one_memory_says_memory_in_the_commit(memory: Memory, tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_text('{"content":"Only one line here"}\n')
    assert run_cli("import", str(one), "--quiet", "--memory-dir", str(memory.root)).code == 0
    assert git(memory.root, "log", "-1", "--format=%s").strip() == "remnic import: 1 memory"


def test_revert_names_the_version_and_head_specs_get_one_list(memory: Memory) -> None:
    rec = memory.store("The plan is to ship in May", category="fact").record
    memory.update(rec.id, {"tags": ["plan"]})
    memory.store("Something else entirely", category="fact")
    d = str(memory.root)
    lower = run_cli("versions", "show", rec.id, "head~1", "--memory-dir", d)
    assert lower.code == 0 and lower.out == run_cli("versions", "show", rec.id, "v2", "--memory-dir", d).out
    past = run_cli("versions", "show", rec.id, "HEAD~40", "--memory-dir", d)
    assert past.code == 2 and "HEAD~40 is before the first commit" in past.err
    assert "HEAD~N" in past.err and "a commit sha" not in past.err
    r = run_cli("versions", "revert", rec.id, "HEAD~2", "--memory-dir", d)
    assert r.code == 0 and f"reverted {rec.path} to v1 in a new commit" in r.out, r.out + r.err
