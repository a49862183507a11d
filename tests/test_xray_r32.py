"""Round 32's X-ray findings: what the index catches up from git, what a recall says it did.

- A catch-up records HEAD as what the index reflects, so it indexes what HEAD holds: an uncommitted
  hand edit or deletion read from the work tree became HEAD's text for good with
  ``recall.followEdits`` off (with it on the edit is indexed as an uncommitted edit, and healed).
- A query past ``recall.maxQueryChars`` is cut; the X-ray's namespace-scope reason, the result's
  ``notes`` and ``remnic query``'s footer say so.
- ``.remnic`` a file: one line naming it and the cure (exit 1); doctor reports a failed check.
- The index note is true for a malformed edit, a file put back by ``git checkout``, a deletion and
  other edits indexed earlier.
- A direct answer that scores below its rival "trails" it; a file scan's candidatesConsidered is
  its re-rank pool.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.errors import LedgerError
from remnic.index.state import WorktreeReport
from remnic.memfile.model import parse_file
from remnic.recall.fallback import scan_recall
from remnic.recall.pipeline import RecallOptions
from remnic.service.memory import Memory

TTL = "---\nid: mem_ttl\ncategory: fact\n---\nThe gateway cache TTL is 57 minutes.\n"
ZEBRA = "---\nid: mem_zebra\ncategory: fact\n---\nZebras graze in the east paddock.\n"


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).write_text(text, encoding="utf-8")


def open_repo(tmp_path: Path, *, follow_edits: bool) -> Memory:
    """A repository whose index is behind HEAD by a commit made with plain git (facts/ttl.md)."""
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    mem = Memory.open(settings=settings_for(root, recall={"follow_edits": follow_edits}))
    mem.store("Zebras graze in the east paddock", category="fact")
    mem.recall("zebras")  # the index reflects HEAD
    write(root, "facts/ttl.md", TTL)
    git(root, "add", "facts/ttl.md")
    git(root, "commit", "-q", "-m", "ttl by hand")
    return mem


def ids(mem: Memory, query: str) -> list[str]:
    return [h.id for h in mem.recall(query).hits]


def texts(mem: Memory, query: str) -> list[str]:
    return [h.content for h in mem.recall(query).hits]


# --- 1. the catch-up indexes HEAD's text ---


def test_with_follow_edits_off_a_catch_up_never_takes_an_uncommitted_edit_as_head(tmp_path: Path) -> None:
    mem = open_repo(tmp_path, follow_edits=False)
    root = mem.root
    write(root, "facts/ttl.md", TTL.replace("57 minutes", "99 minutes flamingo"))  # not committed
    result = mem.recall("gateway cache TTL")
    assert result.index["action"] == "catch-up"
    assert [h.content for h in result.hits if h.id == "mem_ttl"] == ["The gateway cache TTL is 57 minutes."]
    git(root, "checkout", "--", ".")
    assert "mem_ttl" not in ids(mem, "flamingo")
    assert "The gateway cache TTL is 57 minutes." in texts(mem, "gateway cache TTL")
    mem.close()


def test_with_follow_edits_off_an_uncommitted_deletion_does_not_drop_a_committed_memory(tmp_path: Path) -> None:
    mem = open_repo(tmp_path, follow_edits=False)
    root = mem.root
    (root / "facts/ttl.md").unlink()
    assert mem.recall("gateway cache TTL").index["action"] == "catch-up"
    git(root, "checkout", "--", ".")
    assert "mem_ttl" in ids(mem, "gateway cache TTL")  # the committed memory, on disk again, is found
    status = mem.status()
    assert status["index"]["count"] == status["memories"] == 2 and "mismatch" not in status["index"]
    mem.close()


def test_with_follow_edits_on_the_edit_is_searched_as_uncommitted_and_healed(tmp_path: Path) -> None:
    mem = open_repo(tmp_path, follow_edits=True)
    root = mem.root
    write(root, "facts/ttl.md", TTL.replace("57 minutes", "99 minutes flamingo"))
    first = mem.recall("flamingo")
    assert first.index["action"] == "catch-up" and "mem_ttl" in [h.id for h in first.hits]
    assert first.index["note"].startswith(
        "indexed 1 file(s) changed on disk since the last commit first (facts/ttl.md)"
    )
    git(root, "checkout", "--", ".")
    second = mem.recall("gateway cache TTL")
    assert "The gateway cache TTL is 57 minutes." in [h.content for h in second.hits]
    assert second.index["note"] == (
        "indexed 1 file(s) as committed again: their uncommitted edits were undone (facts/ttl.md)"
    )
    mem.close()


def test_a_catch_up_that_cannot_read_head_rebuilds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from remnic.repo.ledger import Ledger

    mem = open_repo(tmp_path, follow_edits=False)

    def fail(self: Ledger, specs: object) -> list[str | None]:
        raise LedgerError("git cat-file failed: boom")

    monkeypatch.setattr(Ledger, "blob_texts", fail)
    result = mem.recall("gateway cache TTL")
    assert result.index["action"] == "rebuild" and "boom" in result.index["reason"]
    assert "mem_ttl" in [h.id for h in result.hits]
    mem.close()


# --- 2. a cut query says so ---


def test_a_query_past_max_query_chars_is_said_to_be_cut(memory: Memory) -> None:
    memory.store("The zebra pelican lives in the east wing", category="fact")
    memory.store("Apples are stored in the cellar", category="fact")
    query = "apple banana " * 160 + "zebra pelican"  # 2093 characters
    said = "query cut to 2000 of 2093 characters (recall.maxQueryChars)"
    result = memory.recall(query, xray=True)
    assert result.notes == [said] and result.to_dict()["notes"] == [said]
    assert said in result.stages[0].reason and result.stages[0].name == "namespace-scope"
    assert result.xray is not None and said in result.xray.filters[0].reason and result.xray.query == query
    short = memory.recall("zebra pelican")
    assert short.notes == [] and "notes" not in short.to_dict() and "cut" not in short.stages[0].reason
    out = run_cli("query", query, "--memory-dir", str(memory.root))
    assert out.code == 0 and said in out.out.splitlines()
    xray = run_cli("xray", query, "--memory-dir", str(memory.root))
    assert "- namespace-scope: " in xray.out and said in xray.out


def test_a_file_scan_says_the_query_was_cut_too() -> None:
    records = [parse_file(TTL, "facts/ttl.md"), parse_file(ZEBRA, "facts/zebra.md")]
    settings = settings_for(Path("/nonexistent")).recall
    result = scan_recall(records, "zebras " * 300 + "gateway", RecallOptions(), settings, reason="test")
    said = "query cut to 2000 of 2107 characters (recall.maxQueryChars)"
    assert result.notes == [said] and said in result.stages[0].reason
    assert [h.id for h in result.hits] == ["mem_zebra"]  # "gateway", past the cut, was never searched


# --- 3. .remnic a file ---


def test_a_state_dir_that_is_a_file_is_one_line_and_doctor_fails_a_check(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    write(root, "facts/x.md", "---\nid: mem_x\ncategory: fact\n---\nx y z\n")
    shutil.rmtree(root / ".remnic")
    write(root, ".remnic", "junk\n")
    for args in (["xray", "x"], ["query", "x"], ["status"]):
        out = run_cli(*args, "--memory-dir", str(root))
        assert out.code == 1, (args, out.err)
        lines = out.err.strip().splitlines()
        assert len(lines) == 1 and f"{root / '.remnic'} is not a folder" in lines[0] and "mv " in lines[0], out.err
    doctor = run_cli("doctor", "--memory-dir", str(root))
    assert doctor.code == 1 and "Traceback" not in doctor.err
    failed = [line for line in doctor.out.splitlines() if line.startswith("[FAIL]")]
    assert len(failed) == 1 and "memory-dir" in failed[0] and ".remnic is not a folder" in failed[0]
    assert (root / ".remnic").read_text(encoding="utf-8") == "junk\n"  # nothing touched it


# --- 4. the index note is true ---


def test_a_malformed_edit_is_not_counted_as_indexed(memory: Memory) -> None:
    rec = memory.store("The ramen bar is on 5th street", category="fact")
    path = memory.root / memory.get(rec.id).path
    path.write_text(path.read_text(encoding="utf-8").replace("category: fact", "confidence: [oops"), encoding="utf-8")
    first = memory.recall("ramen", xray=True)
    assert first.index["worktree"]["indexed"] == 0
    assert (
        first.index["note"].startswith("searched 0 of 1 uncommitted edit(s)") and "indexed" not in first.index["note"]
    )
    assert memory.recall("ramen").index["note"] == first.index["note"]  # the same on every run


def test_a_file_put_back_by_git_checkout_is_not_called_uncommitted(memory: Memory) -> None:
    memory.store("The ramen bar is on 5th street", category="fact")
    kept = memory.store("Zebras graze in the east paddock", category="fact")
    path = memory.get(kept.id).path
    (memory.root / path).unlink()
    gone = memory.recall("zebras").index["note"]
    assert (
        gone
        == f"dropped 1 deleted file(s) from the index first ({path}); not committed: `remnic sync run` commits them"
    )
    git(memory.root, "checkout", "--", ".")
    back = memory.recall("zebras")
    assert back.index["note"] == f"indexed 1 file(s) as committed again: their uncommitted edits were undone ({path})"
    assert kept.id in [h.id for h in back.hits]


def test_a_new_edit_beside_older_ones_counts_them_all(memory: Memory) -> None:
    a = memory.get(memory.store("The ramen bar is on 5th street", category="fact").id).path
    b = memory.get(memory.store("Zebras graze in the east paddock", category="fact").id).path
    text = (memory.root / a).read_text(encoding="utf-8")
    (memory.root / a).write_text(text.replace("5th street", "6th avenue"), encoding="utf-8")
    assert (
        memory.recall("ramen")
        .index["note"]
        .startswith(f"indexed 1 file(s) changed on disk since the last commit first ({a})")
    )
    (memory.root / b).unlink()
    note = memory.recall("zebras").index["note"]
    assert (
        note
        == f"dropped 1 deleted file(s) from the index first ({b}); 2 uncommitted edit(s) in all: `remnic sync run` commits them"
    )
    assert memory.recall("ramen").index["note"].startswith("searched 2 uncommitted edit(s)")


def test_the_note_of_each_outcome() -> None:
    from remnic.index.reads import Reads

    def note(dirty: list[str], read: Reads) -> str | None:
        report = WorktreeReport(dirty=len(dirty), changed=len(read.removed) + len(read.upserts))
        report.record(read, dirty)
        return report.note()

    bad = Reads(removed=["facts/bad.md"], malformed=["facts/bad.md"], problems=["facts/bad.md: YAML"])
    assert note(["facts/bad.md"], bad) == (
        "searched 0 of 1 uncommitted edit(s) as they are on disk; could not search 1 malformed file(s) "
        "(facts/bad.md): fix them, then `remnic sync run`"
    )
    assert (
        note([], Reads(removed=["facts/gone.md"])) == "dropped 1 deleted file(s) from the index first (facts/gone.md)"
    )
    assert WorktreeReport().note() is None


# --- 5 and 6. the direct answer's rival, the file scan's pool ---


def test_a_direct_answer_that_scores_below_its_rival_trails_it(memory: Memory) -> None:
    memory.store("We decided the deploy window is Tuesday", category="decision", importance=0.9, confidence=0.95)
    memory.store("deploy window tuesday friday release train notes", category="fact", importance=0.1)
    snap = memory.recall_xray("deploy window tuesday release train")
    assert snap is not None and snap.tier_explain is not None
    reason = snap.tier_explain.tier_reason
    assert "direct-answer not taken: ambiguous:" in reason and " trails " in reason, reason
    assert "by -" not in reason and "leads" not in reason


def test_a_file_scans_candidates_considered_is_its_rerank_pool() -> None:
    records = [parse_file(TTL, "facts/ttl.md"), parse_file(ZEBRA, "facts/zebra.md")]
    records += [parse_file(f"---\nid: mem_{i}\n---\nUnrelated note {i}.\n", f"facts/n{i}.md") for i in range(4)]
    settings = settings_for(Path("/nonexistent")).recall
    result = scan_recall(records, "zebras paddock", RecallOptions(), settings, reason="test")
    assert result.tier is not None and result.tier.candidates_considered == 1
    assert "scanned 6 memory files" in result.tier.reason
