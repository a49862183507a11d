"""Small leftovers of round 38's reports: capped problem lists on recall, line breaks in file names."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from remnic.memfile.paths import glob_match
from remnic.service.memory import Memory


def test_a_recall_with_many_broken_uncommitted_notes_names_ten_and_counts_the_rest(memory: Memory) -> None:
    memory.store("We deploy on Tuesdays")
    for i in range(15):
        (memory.root / "facts" / f"broken-{i:02d}.md").write_text("---\nid: [unclosed\n---\nbody\n")
    out = run_cli("query", "deploy", "--json", "--memory-dir", str(memory.root))
    assert out.code == 0, out.err
    index = out.json()["index"]
    for listed in (index["problems"], index["worktree"]["problems"]):
        assert len(listed) == 11, listed
        assert listed[-1].startswith("... and 5 more") and "remnic doctor" in listed[-1]


def test_a_line_break_in_a_name_is_matched_by_globs_like_any_character(tmp_path: Path) -> None:
    assert glob_match("**", "facts/two\nlines.md")
    assert glob_match("facts/*.md", "facts/two\nlines.md")
    assert glob_match("facts", "facts/two\nlines.md")
    assert not glob_match("notes/**", "facts/two\nlines.md")


def test_doctor_says_a_binary_file_named_md_is_no_note_and_how_to_leave_it_out(memory: Memory) -> None:
    memory.store("We deploy on Tuesdays")
    (memory.root / "facts" / "diagram.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    out = run_cli("doctor", "--json", "--memory-dir", str(memory.root))
    check = next(c for c in out.json()["checks"] if c["name"] == "memory-files")
    assert check["status"] == "fail"
    assert "binary data (facts/diagram.md)" in check["detail"] and '"exclude": ["facts/diagram.md"]' in check["detail"]


def test_import_names_the_line_of_a_number_past_the_digit_limit(memory: Memory, tmp_path: Path) -> None:
    huge = "9" * 5000
    lines = tmp_path / "big.jsonl"
    lines.write_text('{"content": "a fine line"}\n{"content": "big", "n": ' + huge + "}\n")
    whole = tmp_path / "big.json"
    whole.write_text('[{"content": "x", "n": ' + huge + "}]")
    for path, line in ((lines, 2), (whole, 1)):
        out = run_cli("import", str(path), "--memory-dir", str(memory.root))
        assert out.code != 0 and "Traceback" not in out.err
        assert f"{path}:{line}: invalid JSON: a number of more than" in out.err


def test_a_password_said_in_words_stays_out_of_the_store_commit_subject(memory: Memory) -> None:
    from conftest import git

    memory.store("The staging admin password is hunter2trombone for now")
    subject = git(memory.root, "log", "-1", "--format=%s")
    assert subject.startswith("remnic store:") and "hunter2trombone" not in subject


def test_doctor_does_not_call_every_config_warning_an_original_remnic_key(memory: Memory) -> None:
    import json

    (memory.root / "remnic.config.json").write_text(json.dumps({"state": {"commit": True}}))
    out = run_cli("doctor", "--json", "--memory-dir", str(memory.root))
    check = next(c for c in out.json()["checks"] if c["name"] == "config")
    assert check["status"] == "warn" and "original Remnic" not in check["detail"]
    assert "1 other warning(s)" in check["detail"] and any("state.commit" in p for p in check["problems"])


def test_a_ctrl_c_inside_a_native_import_stops_a_recall_instead_of_rebuilding(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnxruntime turns a Ctrl-C during its import into ImportError: recall must not take it for a damaged
    index (a full rebuild, then an answer as if nothing happened). A double: the signal cannot be timed."""
    import remnic.index.int8 as int8

    memory.store("We deploy on Tuesdays")

    def broken(*args: object, **kwargs: object) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise ImportError("onnxruntime_pybind11_state: initialization failed") from exc

    rebuilt: list[object] = []
    monkeypatch.setattr(type(memory.index), "rebuild", lambda *a, **k: rebuilt.append(a))
    monkeypatch.setattr(type(memory.index), "ensure_fresh", broken)
    with pytest.raises(KeyboardInterrupt):
        memory.recall("deploy")
    assert rebuilt == []
    monkeypatch.setattr(int8, "fused_model", broken)
    monkeypatch.setattr(int8, "_memo", {})
    with pytest.raises(KeyboardInterrupt):
        int8.open_session(int8.Path("/nonexistent.onnx"), None, int8=False, label="model", fuse=True)


def test_a_version_number_ending_in_a_year_is_no_date() -> None:
    from datetime import datetime

    from remnic.index.dates import find_dates

    assert not find_dates("v1.2.2026 shipped on time", datetime(2026, 1, 1))
    assert find_dates("Am 28.11.2026 war es kalt", datetime(2026, 1, 1))


def test_spacing_vowel_signs_take_a_column() -> None:
    from remnic.memfile.graphemes import display_width

    assert display_width("கா") == 2  # Tamil ka + the spacing vowel sign aa
    assert display_width("é") == 1 and display_width("e\u0301") == 1 and display_width("日本") == 4


def test_a_long_note_of_base64_lines_is_checked_in_one_pass() -> None:
    """The headless-key rule once tried every line as a start (a 300 KB note took 30 s, 1 MB minutes);
    the bound here is generous, the old cost grows with the square of the length."""
    import base64
    import time

    from remnic.memfile.secrets import secret_spans

    lines = [base64.b64encode(bytes([i % 256]) * 48).decode() for i in range(20000)]  # ~1.3 MB, no END line
    started = time.process_time()
    spans = list(secret_spans("notes on the private key rotation\n" + "\n".join(lines) + "\n"))
    assert time.process_time() - started < 10
    assert not any(name == "private key" for name, _, _ in spans)
    headless = "my private key:\n" + "\n".join(lines[:20]) + "\n-----END RSA PRIVATE KEY-----\n"
    assert any(name == "private key" for name, _, _ in secret_spans(headless))


def test_a_password_said_in_words_stays_out_of_update_and_share_subjects(memory: Memory) -> None:
    from conftest import git

    stored = memory.store("The staging database runs on port 5432").record
    memory.update(stored.id, {}, content="The root password is Kiwi7Mango! now")
    subject = git(memory.root, "log", "-1", "--format=%s")
    assert subject.startswith("remnic update:") and "Kiwi7Mango" not in subject


def test_forgetting_an_entity_page_a_read_showed_but_nobody_wrote_says_how(memory: Memory) -> None:
    memory.store("Kofi Mensah owns the billing service", category="fact")
    shown = run_cli("entities", "show", "Kofi Mensah", "--json", "--memory-dir", str(memory.root))
    assert shown.code == 0, shown.err
    page_id = shown.json()["entity"]["id"]
    out = run_cli("forget", page_id, "--memory-dir", str(memory.root))
    assert out.code != 0 and "remnic entities refresh" in out.err
    assert run_cli("entities", "refresh", "--memory-dir", str(memory.root)).code == 0
    assert run_cli("forget", page_id, "--memory-dir", str(memory.root)).code == 0
