"""The transcript archive (r30): a torn last line, stemmed excerpts, flush's namespace, lock files in git.

Real git repositories and the real tantivy index; the CLI in-process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import git, run_cli

from remnic.config import settings_for
from remnic.observe.lcm.index import excerpt
from remnic.service.memory import Memory

ARCHIVE = "state/transcripts/default/s.jsonl"


def _turn(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _tear(path: Path) -> bytes:
    """Append the first 40 bytes of the file's first line, with no newline: a crash mid-append."""
    fragment = path.read_bytes()[:40]
    with open(path, "ab") as fh:
        fh.write(fragment)
    return fragment


def test_a_turn_after_a_torn_line_is_archived_searchable_and_counted(memory: Memory) -> None:
    memory.observe("s", _turn("first turn about pelicans"))
    path = memory.root / ARCHIVE
    fragment = _tear(path)

    torn = memory.lcm_status()
    assert torn["unreadable"] == {"lines": 1, "files": {ARCHIVE: 1}}  # the torn tail, before any append

    second = memory.observe("s", _turn("second turn about walruses"))
    assert second.first_turn_index == 1
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == fragment and lines[-1] == b""  # the fragment is a line of its own; nothing glued to it
    assert json.loads(lines[2])["content"] == "second turn about walruses"

    hits = memory.lcm_search("walruses")
    assert [(h["turnIndex"], h["content"]) for h in hits] == [(1, "second turn about walruses")]
    status = memory.lcm_status()
    assert status["stats"] == {"totalTurns": 2, "sessions": 1}
    assert status["unreadable"] == {"lines": 1, "files": {ARCHIVE: 1}}

    third = memory.observe("s", _turn("third turn about herons"))
    assert third.first_turn_index == 2  # numbering stays gap-free past the unreadable line
    indexes = [
        json.loads(x)["turnIndex"] for x in path.read_text().splitlines() if x.startswith('{"ts"') and x[-1] == "}"
    ]
    assert indexes == [0, 1, 2]
    assert memory.lcm_status()["unreadable"]["lines"] == 1  # counted once, not again on each catch-up


def test_lcm_status_and_doctor_report_the_unreadable_line(memory: Memory) -> None:
    memory.observe("s", _turn("first turn about pelicans"))
    root = str(memory.root)
    clean = {c["name"]: c for c in memory.doctor()}["archive"]
    assert clean["status"] == "ok"
    assert "unreadable" not in run_cli("lcm", "status", "--memory-dir", root).out

    _tear(memory.root / ARCHIVE)
    memory.observe("s", _turn("second turn about walruses"))
    out = run_cli("lcm", "status", "--memory-dir", root)
    assert out.code == 0 and "2 turns in 1 session" in out.out
    assert f"1 unreadable line(s) in {ARCHIVE} (1)" in out.out
    as_json = run_cli("lcm", "status", "--json", "--memory-dir", root).json()
    assert as_json["unreadable"] == {"lines": 1, "files": {ARCHIVE: 1}}

    check = {c["name"]: c for c in memory.doctor()}["archive"]
    assert check["status"] == "warn" and ARCHIVE in check["detail"]
    assert check["problems"] == [f"{ARCHIVE}: 1 unreadable line(s)"]
    doctor = run_cli("doctor", "--memory-dir", root)
    assert ARCHIVE in doctor.out + doctor.err


def test_a_compaction_after_a_torn_ledger_line_is_kept(memory: Memory) -> None:
    memory.observe("s", _turn("first turn about pelicans"))
    memory.lcm_record("s", 900, 100)
    ledger = memory.root / "state" / "lcm-compactions.jsonl"
    _tear(ledger)
    memory.lcm_record("s", 800, 50)
    last = json.loads(ledger.read_text().splitlines()[-1])
    assert (last["tokensBefore"], last["tokensAfter"]) == (800, 50)


def test_the_excerpt_centres_on_a_stemmed_match(memory: Memory) -> None:
    text = "filler " * 400 + "we are renaming the service " + "padding " * 400
    memory.observe("ex", _turn(text))
    limit = memory.settings.state.lcm_excerpt_chars
    for query in ("renamed", "renaming", "RENAMES"):
        hit = memory.lcm_search(query)[0]
        assert "we are renaming the service" in hit["content"], query
        assert len(hit["content"]) <= limit + 2
    # a word that only contains a query word is no match: "cat" is not in "concatenate"
    assert excerpt("concatenate " * 50 + "a cat sat " + "x " * 200, "cats", 40).find("a cat sat") > 0


def test_lcm_flush_refuses_an_invalid_namespace_as_search_does(memory: Memory) -> None:
    memory.observe("s", _turn("first turn about pelicans"))
    root = str(memory.root)
    search = run_cli("lcm", "search", "pelicans", "--namespace", "Bad NS!", "--memory-dir", root)
    for bad in ("Bad NS!", "../x"):
        out = run_cli("lcm", "flush", "s", "--namespace", bad, "--memory-dir", root)
        assert out.code == 2, out.err
        assert "--namespace" in out.err and "lowercase letters" in out.err and "is the key right" not in out.err
    flush = run_cli("lcm", "flush", "s", "--namespace", "Bad NS!", "--memory-dir", root)
    assert search.code == 2 and flush.err == search.err
    assert run_cli("lcm", "flush", "s", "--namespace", "default", "--memory-dir", root).code == 0


def test_state_commit_keeps_lock_files_out_of_git(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    user = Path(os.environ["HOME"]) / ".config" / "remnic" / "config.json"  # state.commit is user-only
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"state": {"commit": True}}))
    transcript = tmp_path / "t.txt"
    transcript.write_text("User: hello there about herons\n")
    assert run_cli("observe", str(transcript), "--session-key", "s", "--memory-dir", str(root)).code == 0
    lock = root / "state" / "observe-buffer" / "default" / "s.lock"
    assert lock.is_file()

    flushed = run_cli("lcm", "flush", "s", "--memory-dir", str(root))
    assert flushed.code == 0 and "state committed" in flushed.out
    tracked = git(root, "ls-files", "state").split()
    assert ARCHIVE in tracked and "state/observe-buffer/default/s.jsonl" in tracked
    assert not [p for p in tracked if p.endswith(".lock")]
    assert "*.lock" in (root / "state" / ".gitignore").read_text().splitlines()


def test_a_lock_file_committed_before_is_taken_out_of_git_and_kept_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root, state={"commit": True}))
    try:
        memory.observe("s", _turn("hello there about herons"))
        lock = root / "state" / "observe-buffer" / "default" / "s.lock"
        lock.touch()
        git(root, "add", "-f", "state/observe-buffer/default/s.lock")  # as an older remnic committed it
        git(root, "commit", "-qm", "old state commit")
        memory.observe("s", _turn("another turn about egrets"))
        assert memory.lcm_flush("s")["stateCommit"]
        tracked = git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", "state").split()
        assert ARCHIVE in tracked and not [p for p in tracked if p.endswith(".lock")]
        assert lock.is_file()  # still there for whoever holds it
        assert git(root, "status", "--porcelain", "--", "state") == ""
    finally:
        memory.close()


def test_the_state_gitignore_follows_the_setting(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    marker = root / "state" / ".gitignore"
    assert marker.read_text().splitlines()[-1] == "*"
    Memory.open(root, settings=settings_for(root, state={"commit": True})).close()
    assert marker.read_text().splitlines()[-1] == "*.lock"
    Memory.open(root, settings=settings_for(root)).close()
    assert marker.read_text().splitlines()[-1] == "*"
    marker.write_text("mine\n")  # a file the user wrote is theirs
    Memory.open(root, settings=settings_for(root, state={"commit": True})).close()
    assert marker.read_text() == "mine\n"
