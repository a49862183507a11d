"""What a tester migrating real data found: the original's config kept in charge after init, a huge note,
symlinks, note templates, the original's own records and config warnings kept off stdout."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.bench.locomo import default_data_dir, load_conversation
from remnic.config import settings_for, translate
from remnic.errors import MemoryFormatError
from remnic.index import text as T
from remnic.memfile.model import parse_file
from remnic.service.memory import Memory, template_dir


def test_init_leaves_the_original_config_in_charge(tmp_path: Path) -> None:
    (tmp_path / "engram.config.json").write_text(json.dumps({"recallBudgetChars": 8000}))
    assert run_cli("init", ".", cwd=tmp_path).code == 0
    config = run_cli("config", "--json", cwd=tmp_path).json()
    assert config["settings"]["recall"]["budgetChars"] == 8000
    assert "engram.config.json" in config["origins"]["recall.budgetChars"]
    assert config["settings"]["recall"]["topK"] == 10 and config["origins"]["recall.topK"] == "default"


def test_the_template_config_is_documented_and_sets_nothing(tmp_path: Path) -> None:
    data = json.loads((template_dir() / "remnic.config.json").read_text())
    assert translate(data, "template").nested == {}  # nothing that would outrank a config beside it
    assert "remnic config --defaults" in data["_about"]
    assert run_cli("init", str(tmp_path / "fresh")).code == 0
    listing = run_cli("config", cwd=tmp_path / "fresh")
    assert listing.code == 0 and not listing.err and "(memory repo" not in listing.out


def _sentences(n: int) -> str:
    return "\n".join(f"Line {i} says the harbour crane number {i} was painted on day {i}." for i in range(n))


def test_a_huge_note_gets_at_most_max_vectors_and_says_where_they_stop() -> None:
    rules = T.TextRules(max_vectors=40)
    text = _sentences(4000) + "\nThe zeppelin landed at the very end."
    plan = T.chunk_plan(text, "", rules)
    assert len(plan.texts) == 40 and plan.vector_end is not None and plan.vector_end < len(text)
    assert text[: plan.vector_end].endswith(plan.texts[-1].split(" ")[-1])  # the last embedded word
    assert len(T.chunk_plan(text, "", T.TextRules(max_vectors=0)).texts) > 40  # 0: no cap
    assert len(plan.passages) == len(T.passages_for(text, rules))  # every passage still read for BM25


def test_below_the_cap_every_memory_is_chunked_as_before() -> None:
    """The cap's cheap bound never misses a capped note, and every LoCoMo session is far below it."""
    rules, uncapped = T.TextRules(), T.TextRules(max_vectors=0)
    for n in (1, 5, 40, 200, 1000, 2000, 2600):
        text = _sentences(n)
        plan = T.chunk_plan(text, "", rules)
        assert plan.vector_end is None or rules.may_cap(text)
        if plan.vector_end is None:
            assert plan == T.chunk_plan(text, "", uncapped)
    data = default_data_dir()
    if not data.is_dir():
        pytest.skip("no LoCoMo data")
    for path in sorted(data.glob("*.json")):
        conv = load_conversation(path)
        for session in sorted({t.session for t in conv.turns}):
            text = "\n".join(f"{t.speaker}: {t.text}" for t in conv.turns if t.session == session)
            assert not rules.may_cap(text) and T.chunk_plan(text, "", rules) == T.chunk_plan(text, "", uncapped)


def test_indexing_a_capped_note_says_so_and_its_words_still_find_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root, recall={"max_vectors": 20}))
    try:
        (root / "facts" / "long.md").write_text(_sentences(600) + "\nThe zeppelin landed at the very end.\n")
        with caplog.at_level(logging.WARNING, logger="remnic.index.search"):
            memory.sync()
        said = [r.getMessage() for r in caplog.records if "facts/long.md" in r.getMessage()]
        assert said and "found by its words beyond the first" in said[0]
        assert "recall.maxVectors: 20" in said[0]
        hits = memory.recall("zeppelin landed", top_k=3).hits  # its last words: past the vectors, BM25's
        assert hits and hits[0].path == "facts/long.md"
    finally:
        memory.close()


def test_a_symlinked_note_is_skipped_not_malformed_and_export_completes(memory: Memory) -> None:
    memory.store("Releases are cut on Tuesdays", category="decision")
    target = next((memory.root / "decisions").glob("*.md"))
    (memory.root / "facts" / "link.md").symlink_to(Path("..") / "decisions" / target.name)
    git(memory.root, "add", "facts/link.md")
    git(memory.root, "commit", "-qm", "a link", "--no-verify")
    where = ("--memory-dir", str(memory.root))
    doctor = run_cli("doctor", "--json", *where)
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert checks["memory-files"]["status"] == "ok", checks["memory-files"]
    assert all(c["status"] != "fail" for c in checks.values())
    assert (
        "facts/link.md: a symbolic link: remnic reads and writes regular files only"
        in checks["skipped-files"]["problems"]
    )
    export = run_cli("export", *where)
    assert export.code == 0, export.err
    assert [json.loads(line)["path"] for line in export.out.splitlines()] == [
        target.relative_to(memory.root).as_posix()
    ]


def test_a_template_placeholder_is_named_as_such() -> None:
    with pytest.raises(MemoryFormatError) as caught:
        parse_file("---\ntitle: Daily\ndate: {{date}}\n---\n\n# {{title}}\n", "Templates/daily.md")
    problem = caught.value.problems[0]
    assert "a template placeholder `{{date}}` is not YAML" in problem.message
    assert 'store.exclude, e.g. "Templates/**"' in problem.message and problem.line == 3


@pytest.mark.parametrize("settings", [None, {"folder": "Meta/Templates"}])
def test_adopting_a_vault_leaves_its_templates_folder_out(tmp_path: Path, settings: dict | None) -> None:
    vault = tmp_path / "vault"
    folder = settings["folder"] if settings else "Templates"
    (vault / ".obsidian").mkdir(parents=True)
    if settings:
        (vault / ".obsidian" / "templates.json").write_text(json.dumps(settings))
    (vault / folder).mkdir(parents=True)
    (vault / folder / "daily.md").write_text("---\ndate: {{date}}\n---\n\n# {{title}}\n")
    (vault / "ideas.md").write_text("Tapirs are related to horses.\n")
    init = run_cli("init", str(vault), "--adopt", "**", "--json")
    assert init.code == 0, init.err
    found = init.json()
    assert found["memoryFiles"] == 1 and f"{folder}/**" in found["exclude"]
    assert {"path": f"{folder}/daily.md", "reason": "excluded by store.exclude"} in found["skipped"]
    config = json.loads((vault / "remnic.config.json").read_text())
    assert config["store"] == {"include": ["**"], "exclude": [f"{folder}/**"]}
    sync = run_cli("sync", "run", "--json", "--memory-dir", str(vault))
    assert sync.code == 0 and not sync.json()["problems"], sync.out
    assert (vault / folder / "daily.md").read_text().startswith("---\ndate: {{date}}")


def test_the_originals_own_records_are_not_offered_for_adoption(tmp_path: Path) -> None:
    root = tmp_path / "orig"
    (root / "transcripts" / "2026-05-14").mkdir(parents=True)
    (root / "transcripts" / "2026-05-14" / "t.md").write_text("user: hi\n")
    (root / "profile.md").write_text("# Profile\n")
    (root / "notes.md").write_text("a note of mine\n")
    init = run_cli("init", str(root))
    assert init.code == 0, init.err
    assert "transcripts/2026-05-14/t.md: the original Remnic's transcripts/: not memories, never touched" in init.out
    assert "profile.md: the original Remnic's profile.md: not a memory, never touched" in init.out
    assert "notes.md: outside the memory folders" in init.out  # a note of the user's is still offered
    offered = [line for line in init.out.splitlines() if "--adopt" in line]
    assert offered == [
        "  ~ notes.md: outside the memory folders (add a pattern to store.include, or `remnic init --adopt PATTERN`)"
    ]
    (root / "transcripts" / "2026-05-14" / "u.md").write_text("user: and more\n")
    synced = run_cli("sync", "run", "--memory-dir", str(root), "--json")
    assert synced.code == 0, synced.err
    reasons = {s["path"]: s["reason"] for s in synced.json()["skipped"]}
    assert (
        reasons.get("transcripts/2026-05-14/u.md") == "the original Remnic's transcripts/: not memories, never touched"
    )


def test_a_stale_hash_in_remnics_spelling_follows_the_body_and_a_foreign_one_is_kept(memory: Memory) -> None:
    root = memory.root
    head = "---\nid: fact-1778750467412-q7k{}\ncategory: fact\ncontentHash: {}\n---\n\nHello world.\n"
    (root / "facts" / "own.md").write_text(head.format("d", "a" * 64))
    (root / "facts" / "foreign.md").write_text(head.format("e", "deadbeef"))
    memory.sync()
    for name in ("own", "foreign"):
        path = root / "facts" / f"{name}.md"
        path.write_text(path.read_text().replace("Hello", "Goodbye"))
    memory.sync()
    own = parse_file((root / "facts" / "own.md").read_text(), "facts/own.md").frontmatter["contentHash"]
    assert own != "a" * 64 and len(own) == 64
    assert "contentHash: deadbeef\n" in (root / "facts" / "foreign.md").read_text()


def test_an_uncommitted_symlinked_note_is_skipped_by_sync_and_no_uncommitted_change(memory: Memory) -> None:
    memory.store("Releases are cut on Tuesdays", category="decision")
    target = next((memory.root / "decisions").glob("*.md"))
    (memory.root / "facts" / "link.md").symlink_to(Path("..") / "decisions" / target.name)
    report = memory.sync()
    assert not report.problems and report.commit is None
    assert {"path": "facts/link.md", "reason": "a symbolic link: remnic reads and writes regular files only"} in (
        report.skipped
    )
    assert memory.status()["uncommitted"] == []
    assert {c["name"]: c for c in memory.doctor()}["working-tree"]["detail"] == "clean"
