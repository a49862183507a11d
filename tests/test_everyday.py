"""The daily loop as a new user meets it, through the CLI on real repositories (issue 14's acceptance).

Each test runs `remnic` commands in a fresh temporary repository (in-process for speed, as a real
subprocess where a one-shot process matters) and checks what a person would look at: the output,
the files, git.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli, snapshot_tree

from remnic.service import Memory

ROOT = Path(__file__).resolve().parents[1]


def cli(root: Path, *args: str) -> Any:
    result = run_cli(*args, "--memory-dir", str(root), "--json")
    assert result.code == 0, result.err
    return result.json()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    return root


# --- 1. supersession: the correction case ---


def test_a_correction_stored_with_supersedes_is_the_only_fact_recalled(repo: Path) -> None:
    old = cli(repo, "store", "The staging database listens on port 5432", "--category", "fact")
    new = cli(repo, "store", "The staging database listens on port 6543", "--supersedes", old["id"])
    hits = cli(repo, "query", "which port does the staging database listen on")
    assert [h["id"] for h in hits["hits"]] == [new["id"]]
    ladder = {f["name"]: f for f in hits["filters"]}
    assert "superseded ×1" in ladder["status-active"]["reason"]
    both = cli(repo, "query", "which port does the staging database listen on", "--include-superseded")
    assert {h["id"] for h in both["hits"]} == {old["id"], new["id"]}
    shown = cli(repo, "get", old["id"])
    assert shown["status"] == "superseded" and shown["frontmatter"]["supersededBy"] == new["id"]
    assert "invalidAt" in shown["frontmatter"]


def test_a_correction_imported_with_supersedes_leaves_only_the_new_fact(repo: Path, tmp_path: Path) -> None:
    old = cli(repo, "store", "Invoices are sent on the first of the month")
    batch = tmp_path / "fix.jsonl"
    batch.write_text(json.dumps({"content": "Invoices are sent on the fifth of the month", "supersedes": old["id"]}))
    new_id = cli(repo, "import", str(batch))["ids"][0]
    assert [h["id"] for h in cli(repo, "query", "when are invoices sent")["hits"]] == [new_id]


# --- 2. a fresh repository is healthy from its first write ---


def test_status_and_doctor_are_green_right_after_the_first_store(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    # The new repository has its (empty) index at once.
    status = json.loads(run_cli("status", "--json", "--memory-dir", str(root)).out)
    assert status["index"]["state"] == "ok" and status["index"]["commit"] == status["head"]
    doctor = run_cli("doctor", "--json", "--memory-dir", str(root))
    assert doctor.code == 0
    assert [c["name"] for c in json.loads(doctor.out)["checks"] if c["status"] != "ok"] == []
    assert run_cli("store", "We cut releases every Tuesday", "--memory-dir", str(root)).code == 0
    # A one-shot write leaves the index to the next recall: healthy, and said so.
    assert run_cli("store", "Ana prefers tabs", "--memory-dir", str(root)).code == 0
    status = json.loads(run_cli("status", "--json", "--memory-dir", str(root)).out)
    assert status["index"]["state"] == "behind"
    assert "index: ok" in run_cli("status", "--memory-dir", str(root)).out
    doctor = json.loads(run_cli("doctor", "--json", "--memory-dir", str(root)).out)
    assert all(c["status"] == "ok" for c in doctor["checks"]), doctor["checks"]


# --- 3. a query sees hand edits nobody has synced ---


def test_a_query_right_after_a_hand_edit_returns_the_new_text(repo: Path) -> None:
    stored = cli(repo, "store", "The coffee machine is on the second floor")
    assert cli(repo, "query", "where is the coffee machine")["hits"][0]["id"] == stored["id"]
    head = git(repo, "rev-parse", "HEAD")
    path = repo / stored["path"]
    path.write_text(path.read_text().replace("second floor", "third floor"), encoding="utf-8")
    result = cli(repo, "query", "where is the coffee machine")
    assert "third floor" in result["hits"][0]["content"]
    assert result["index"]["worktree"]["indexed"] == 1 and stored["path"] in result["index"]["worktree"]["paths"]
    assert git(repo, "rev-parse", "HEAD") == head  # indexed, not committed
    assert git(repo, "status", "--porcelain").strip() == f"M {stored['path']}"
    text = run_cli("query", "where is the coffee machine", "--memory-dir", str(repo)).out
    assert "third floor" in text and "`remnic sync run`" in text
    xray = run_cli("xray", "where is the coffee machine", "--memory-dir", str(repo)).out
    assert "index-note: searched 1 uncommitted edit(s)" in xray
    # Put back as git has it: the index follows back.
    git(repo, "checkout", "--", stored["path"])
    assert "second floor" in cli(repo, "query", "where is the coffee machine")["hits"][0]["content"]


def test_too_many_edits_are_reported_instead_of_indexed(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    from remnic.config import settings_for

    with Memory.init(root, settings=settings_for(root, recall={"follow_edits_max": 0})) as memory:
        rec = memory.store("The coffee machine is on the second floor").record
        memory.settle_index()  # the write's index update is done before the file changes
        path = root / rec.path
        path.write_text(path.read_text().replace("second floor", "third floor"), encoding="utf-8")
        result = memory.recall("coffee machine floor")
        assert "second floor" in result.hits[0].content
        assert result.index["worktree"]["deferred"] is True
        assert "not searched" in result.index["note"] and "remnic sync run" in result.index["note"]
        snapshot = memory.recall_xray("coffee machine floor")
        assert snapshot is not None and "not searched" in (snapshot.index_note or "")


def test_a_long_running_handle_sees_edits_through_file_events(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root) as memory:
        rec = memory.store("The coffee machine is on the second floor").record
        other = memory.store("The printer is next to the kitchen").record
        memory.settle_index()
        memory.recall("printer")
        memory.recall("printer")
        assert memory.edit_feed is not None  # the second recall opened the feed
        calls = []
        original = memory.ledger.status_porcelain
        memory.ledger.status_porcelain = lambda: calls.append(1) or original()  # type: ignore[method-assign]
        memory.recall("printer")
        assert calls == []  # nothing edited: git is not asked
        path = root / rec.path
        path.write_text(path.read_text().replace("second floor", "roof terrace"), encoding="utf-8")
        assert "roof terrace" in memory.recall("where is the coffee machine").hits[0].content
        assert calls == [1]
        (root / "facts" / "new-note.md").write_text("The bike shed is behind building C\n", encoding="utf-8")
        assert "bike shed" in memory.recall("where is the bike shed").hits[0].content
        os.unlink(root / other.path)
        assert other.id not in [h.id for h in memory.recall("printer kitchen").hits]


def test_http_recall_sees_a_hand_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_server_http import make_env

    for env in make_env(tmp_path, monkeypatch):
        stored = env.call("POST", "/engram/v1/memories", {"content": "The coffee machine is on the second floor"})
        path = env.root / stored.json()["path"]
        path.write_text(path.read_text().replace("second floor", "third floor"), encoding="utf-8")
        body = env.call("POST", "/engram/v1/recall", {"query": "where is the coffee machine"}).json()
        assert "third floor" in json.dumps(body)


# --- 4. progress on long work, phases, a rebuild reported as one ---


def test_import_reports_its_phases_and_leaves_the_index_ready(repo: Path, tmp_path: Path) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        "".join(json.dumps({"content": f"Fact {i} about the deploy window {i}"}) + "\n" for i in range(25))
    )
    result = cli(repo, "import", str(batch), "--quiet")
    assert set(result["phasesMs"]) == {"validate", "write", "index"} and result["index"]["embedded"] >= 25
    text = run_cli("import", str(batch), "--memory-dir", str(repo)).out
    assert "nothing to import" in text  # all exact duplicates now
    query = cli(repo, "query", "deploy window 7")
    assert query["index"]["action"] in ("none", "reloaded")  # import indexed: no rebuild hidden in a query


def test_a_query_that_rebuilds_the_index_says_so(repo: Path) -> None:
    cli(repo, "store", "The coffee machine is on the second floor")
    cli(repo, "query", "coffee machine")
    import shutil

    shutil.rmtree(repo / ".remnic" / "index")
    out = run_cli("query", "coffee machine", "--memory-dir", str(repo)).out
    assert "index rebuilt before this recall" in out and "not counted in the recall's time" in out


def _on_a_terminal(args: list[str]) -> str:
    """Run the CLI (in this process) with standard error on a pseudo-terminal; what it wrote there."""
    from remnic.cli import main

    leader, follower = pty.openpty()
    with (
        os.fdopen(follower, "w", encoding="utf-8") as terminal,
        contextlib.redirect_stderr(terminal),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        code = main(args)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert code == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bars_on_a_terminal_and_quiet_silences_them(repo: Path) -> None:
    cli(repo, "store", "The coffee machine is on the second floor")
    assert "embedding [" in _on_a_terminal(["reindex", "--memory-dir", str(repo)])
    assert "embedding [" not in _on_a_terminal(["reindex", "--quiet", "--memory-dir", str(repo)])
    piped = run_cli("reindex", "--memory-dir", str(repo))
    assert piped.code == 0 and "[" not in piped.err  # not a terminal (a pipe): no bar
    transcript = repo.parent / "chat.txt"
    transcript.write_text("".join(f"Ana: I moved the build to runner {i} today.\n" for i in range(12)))
    observed = _on_a_terminal(
        ["observe", str(transcript), "--session-key", "s", "--format", "plain", "--flush", "--memory-dir", str(repo)]
    )
    assert "observing [" in observed and "12/12" in observed


def test_observe_reports_each_turn_of_a_flush_to_a_progress_callback(repo: Path) -> None:
    from remnic import Memory

    seen: list[tuple[int, int]] = []
    text = "".join(f"Ana: The staging DB {i} port is {5400 + i}.\n" for i in range(5))
    with Memory.open(repo) as memory:
        memory.observe_transcript("s", text, fmt="plain", flush=True, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(i, 5) for i in range(1, 6)]


# --- 5. init on a folder of notes; sync run --dry-run ---


def test_init_and_sync_leave_a_root_notes_file_byte_for_byte(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "facts").mkdir(parents=True)
    notes = b"# My notes\r\n\r\nbuy milk\n- [ ] call Ana\n"
    (root / "notes.md").write_bytes(notes)
    (root / "facts" / "sky.md").write_text("---\ncategory: fact\ntags: [weather]  # mine\n---\nThe sky is blue.\n")
    assert run_cli("init", str(root)).code == 0
    before = snapshot_tree(root)
    dry = cli(root, "sync", "run", "--dry-run")
    assert [c["path"] for c in dry["changes"]] == ["facts/sky.md"] and snapshot_tree(root) == before
    assert cli(root, "sync", "run")["commit"]
    assert (root / "notes.md").read_bytes() == notes
    assert "notes.md" not in git(root, "ls-files").split()
    sky = (root / "facts" / "sky.md").read_text()
    assert sky.endswith("---\nThe sky is blue.\n") and "tags: [weather]  # mine" in sky and "id: " in sky


# --- 6. X-ray help, docs and output agree ---


def test_xray_names_and_namespace_default_agree_everywhere(repo: Path) -> None:
    cli(repo, "store", "The coffee machine is on the second floor")
    query = cli(repo, "query", "coffee machine", "--explain")
    xray = json.loads(run_cli("xray", "coffee machine", "--format", "json", "--memory-dir", str(repo)).out)
    names = [f["name"] for f in query["filters"]]
    assert names == [f["name"] for f in xray["filters"]] and "recall-result-limit" in names
    doc = (ROOT / "docs" / "xray.md").read_text()
    assert all(f"`{name}`" in doc for name in names)
    raw = xray["results"][0]["rawScores"]
    assert raw["vector"] != xray["results"][0]["scoreDecomposition"]["vector"] or raw["vector"] == 1.0
    assert "namespace" not in xray  # no --namespace: every namespace, and the help says so
    for command in ("query", "xray"):
        assert "every namespace" in run_cli(command, "--help").out


# --- 7. list paging, dedup, export → import ---


def test_list_pages_with_limit_and_offset(repo: Path) -> None:
    for word in ("alpha", "bravo", "charlie", "delta", "echo"):
        cli(repo, "store", f"The {word} project ships in spring")
    every = [m["id"] for m in cli(repo, "list")["memories"]]
    page = cli(repo, "list", "--limit", "2", "--offset", "2")
    assert [m["id"] for m in page["memories"]] == every[2:4]
    assert page["total"] == 5 and page["nextOffset"] == 4
    assert cli(repo, "list", "--limit", "2", "--offset", "4")["nextOffset"] is None
    assert run_cli("list", "--limit", "0", "--memory-dir", str(repo)).code == 2


def test_dedup_finds_exact_and_near_duplicates_and_merges_them_in_one_commit(repo: Path) -> None:
    keep = cli(repo, "store", "We cut releases every Tuesday", "--category", "decision")
    near = cli(repo, "store", "We cut releases every Tuesday.", "--category", "decision")
    cli(repo, "store", "Ana prefers tabs over spaces", "--category", "preference")
    (repo / "preferences" / "tabs-copy.md").write_text("Ana prefers tabs over spaces\n")
    cli(repo, "sync", "run")
    found = cli(repo, "dedup")
    kinds = sorted(g["kind"] for g in found["groups"])
    assert kinds == ["exact", "near"] and found["duplicates"] == 2 and found["commit"] is None
    near_group = next(g for g in found["groups"] if g["kind"] == "near")
    assert near_group["survivor"]["id"] == keep["id"] and near_group["duplicates"][0]["id"] == near["id"]
    head = git(repo, "rev-parse", "HEAD")
    merged = cli(repo, "dedup", "--merge")
    assert len(merged["merged"]) == 2 and git(repo, "rev-parse", "HEAD~1") == head  # one commit
    merged_away = cli(repo, "get", near["id"])
    assert merged_away["status"] == "archived" and merged_away["frontmatter"]["mergedInto"] == keep["id"]
    assert near["id"] in cli(repo, "get", keep["id"])["frontmatter"]["derived_from"]
    assert cli(repo, "dedup")["groups"] == []


def test_dedup_names_each_surviving_memory_once_in_its_commit(repo: Path) -> None:
    keep = cli(repo, "store", "We cut releases every Tuesday", "--category", "decision")
    cli(repo, "store", "We cut releases every Tuesday.", "--category", "decision")  # near
    (repo / "decisions" / "copy.md").write_text("---\ncategory: decision\n---\n\nWe cut releases every Tuesday\n")
    cli(repo, "sync", "run")
    groups = cli(repo, "dedup")["groups"]
    assert sorted(g["kind"] for g in groups) == ["exact", "near"] and {g["survivor"]["id"] for g in groups} == {
        keep["id"]
    }
    assert len(cli(repo, "dedup", "--merge")["merged"]) == 2
    assert git(repo, "log", "-1", "--format=%s").strip() == "remnic dedup: 2 duplicate(s) merged into 1 memory"


def test_export_then_import_into_a_fresh_repository_gives_the_same_files(repo: Path, tmp_path: Path) -> None:
    old = cli(repo, "store", "The office wifi password rotates monthly", "--tags", "it,security")
    cli(repo, "store", "The office wifi password rotates weekly", "--supersedes", old["id"])
    cli(repo, "store", "Ana leads the platform team", "--namespace", "team-a", "--category", "relationship")
    hand = "---\r\ncategory: fact\r\ntags: [weather]   # hand-written\r\n---\r\n\r\nThe sky is blue.\r\n"
    (repo / "facts" / "sky.md").write_bytes(hand.encode())
    cli(repo, "sync", "run")
    out = tmp_path / "export.jsonl"
    assert cli(repo, "export", "--out", str(out))["memories"] == 4
    fresh = tmp_path / "fresh"
    assert run_cli("init", str(fresh)).code == 0
    assert cli(fresh, "import", str(out))["imported"] == 4
    assert snapshot_tree(fresh) == snapshot_tree(repo)
    assert [h["content"] for h in cli(fresh, "query", "wifi password rotation")["hits"]] == [
        "The office wifi password rotates weekly"
    ]
    before = snapshot_tree(fresh)
    again = run_cli("import", str(out), "--memory-dir", str(fresh))
    assert again.code == 0 and "skipped 4 exact duplicates" in again.out  # restoring twice changes nothing
    assert snapshot_tree(fresh) == before
    md = run_cli("export", "--format", "md", "--memory-dir", str(repo)).out
    assert "## facts/sky.md" in md and "The sky is blue." in md


def test_an_export_line_without_file_is_a_new_memory_with_no_path_key(repo: Path, tmp_path: Path) -> None:
    cli(repo, "store", "Carol owns the vendor decisions", "--category", "decision")
    out = tmp_path / "export.jsonl"
    cli(repo, "export", "--out", str(out))
    line = json.loads(out.read_text().splitlines()[0])
    del line["file"], line["id"]
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(line) + "\n")
    fresh = tmp_path / "fresh"
    assert run_cli("init", str(fresh)).code == 0
    assert cli(fresh, "import", str(one))["imported"] == 1
    (new,) = cli(fresh, "list")["memories"]
    shown = cli(fresh, "get", new["id"])
    assert "path" not in shown["frontmatter"] and shown["content"] == "Carol owns the vendor decisions"
    assert "\npath:" not in (fresh / shown["path"]).read_text()


# --- 8. exit codes, help, engram ---


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["list"], 0),
        (["get", "mem_nope"], 1),
        (["update", "mem_nope", "--status", "archived"], 1),
        (["list", "--status", "sleeping"], 2),
        (["store", "x", "--importance", "7"], 2),
        (["export", "--format", "pdf"], 2),
        (["dedup", "--bogus"], 2),
        (["daemon", "status"], 3),
    ],
)
def test_exit_codes_are_the_documented_ones(repo: Path, args: list[str], code: int) -> None:
    assert run_cli(*args, "--memory-dir", str(repo)).code == code
    doc = (ROOT / "docs" / "cli.md").read_text()
    assert f"| {code} |" in doc


def test_engram_forwards_to_remnic_and_reads_engram_config_path(repo: Path, tmp_path: Path) -> None:
    engram = Path(sys.executable).with_name("engram")
    assert engram.exists(), "the engram console script is installed beside remnic"
    config = tmp_path / "legacy.json"
    config.write_text(json.dumps({"recallBudgetChars": 1234}))
    env = {**os.environ, "ENGRAM_CONFIG_PATH": str(config)}
    env.pop("REMNIC_CONFIG_PATH", None)
    proc = subprocess.run(
        [str(engram), "config", "--json", "--memory-dir", str(repo)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert "1234" in json.dumps(shown) and "ENGRAM_CONFIG_PATH" in json.dumps(shown)
    listed = subprocess.run([str(engram), "list", "--json", "--memory-dir", str(repo)], capture_output=True, text=True)
    assert listed.returncode == 0 and json.loads(listed.stdout)["total"] == 0
