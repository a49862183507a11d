"""Notes written for other tools (an Obsidian vault, a Hugo site, hand-written files) are memories as they are.

Each foreign value is kept byte-for-byte and read where a reading exists; which files
are memories is a documented pattern and every other file is reported; TOML front
matter stays TOML; aliases, #tags and [[links]] work; times come from the notes or git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import GIT_IDENTITY, git, run_cli

from remnic.config import settings_for
from remnic.index.text import created_ts, updated_ts
from remnic.memfile.times import parse_time
from remnic.recall import graph as G
from remnic.service.memory import Memory


def vault(tmp_path: Path, **store: object) -> Memory:
    """A memory repository adopting every markdown note (``remnic init --adopt '**'``)."""
    root = tmp_path / "vault"
    return Memory.init(root, settings=settings_for(root, store=store), adopt=["**"])


def write(memory: Memory, rel: str, text: str) -> Path:
    path = memory.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def lines_kept(before: str, after: str) -> bool:
    """Every line of ``before`` is still in ``after``, in the same order (keys were only added)."""
    rest = iter(after.splitlines())
    return all(any(line == other for other in rest) for line in before.splitlines())


FOREIGN = {
    "decisions/adr-007.md": ("---\nstatus: accepted\ntitle: Use Postgres\n---\nWe use Postgres for the ledger.\n"),
    "notes/memory-cat.md": "---\ncategory: memory\n---\nThe office plant is a monstera.\n",
    "notes/confidence.md": "---\nconfidence: high\n---\nThe backup runs at 2am.\n",
    "notes/tags.md": "---\ntags: billing, invoices\n---\nInvoices are numbered per region.\n",
    "notes/dated.md": "---\nupdated: Jan 5, 2024\n---\nThe printer is on floor three.\n",
    "notes/numeric.md": "---\nid: 12345\n---\nZettel twelve thousand: the ledger is append-only.\n",
}


@pytest.fixture
def adopted(tmp_path: Path) -> tuple[Memory, dict[str, str]]:
    memory = vault(tmp_path)
    for rel, text in FOREIGN.items():
        write(memory, rel, text)
    report = memory.sync()
    assert not report.problems
    yield memory, FOREIGN
    memory.close()


def test_each_foreign_value_is_kept_and_read(adopted: tuple[Memory, dict[str, str]]) -> None:
    memory, files = adopted
    for rel, before in files.items():
        after = (memory.root / rel).read_text()
        assert lines_kept(before, after), (rel, after)  # the user's lines and body, unchanged
        assert after.endswith(before.split("---\n", 2)[2])
    by_path = {r.path: r for r in memory.list()}
    adr = by_path["decisions/adr-007.md"]
    assert adr.status == "active" and adr.frontmatter["status"] == "accepted" and adr.category == "decision"
    assert by_path["notes/memory-cat.md"].category == "fact"
    note = by_path["notes/confidence.md"]
    assert note.confidence == 0.85 and note.frontmatter["confidenceTier"] == "implied"
    assert by_path["notes/tags.md"].tags == ["billing", "invoices"]
    assert [r.path for r in memory.list(tag="invoices")] == ["notes/tags.md"]
    assert updated_ts(by_path["notes/dated.md"]) == parse_time("2024-01-05T00:00:00Z")
    numeric = memory.get("12345")
    assert (
        numeric.path == "notes/numeric.md"
        and (memory.root / "notes/numeric.md").read_text() == files["notes/numeric.md"]
    )  # a note with its own id is taken as it is
    assert memory.recall("which database do we use for the ledger", top_k=3).hits[0].path == "decisions/adr-007.md"


def test_only_unparsable_yaml_makes_a_note_malformed(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(memory, "a.md", "---\nstatus: [accepted\n---\nbroken yaml\n")
    write(
        memory, "b.md", "---\nstatus: who knows\nconfidence: 7\ntags: {x: 1}\ncreated: last tuesday\n---\nodd values\n"
    )
    report = memory.sync()
    assert report.malformed_paths == ["a.md"]
    assert [c.path for c in report.changes] == ["b.md"]
    record = memory.files.read("b.md")
    assert record.status == "active" and record.frontmatter["created"] == "last tuesday"


def test_the_users_updated_keeps_its_format_on_an_edit(adopted: tuple[Memory, dict[str, str]]) -> None:
    memory, _ = adopted
    path = memory.root / "notes/dated.md"
    path.write_text(path.read_text().replace("floor three", "floor four"))
    memory.sync()
    updated = memory.files.read("notes/dated.md").frontmatter["updated"]
    assert updated != "Jan 5, 2024" and parse_time(updated) is not None
    month, day, year = updated.replace(",", "").split()
    assert len(month) == 3 and day.isdigit() and len(year) == 4  # "Feb 9, 2026": the user's spelling


def test_partial_frontmatter_gets_its_defaults_and_the_body_is_untouched(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m"))
    body = "Ana moved to Lisbon.\n\n  Indented line kept.\n"
    write(memory, "facts/ana.md", "---\ntags: [people]\nsource: notebook\n---\n" + body)
    memory.sync()
    text = (memory.root / "facts/ana.md").read_text()
    record = memory.files.read("facts/ana.md")
    assert text.endswith("---\n" + body) and record.has_id
    for key in ("id", "category", "created", "updated", "confidence", "status", "importanceScore", "contentHash"):
        assert key in record.frontmatter, key
    assert record.frontmatter["source"] == "notebook" and record.frontmatter["tags"] == ["people"]


def test_readme_markdown_and_upper_case_files_as_documented(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(memory, "projects/README.md", "The projects folder note.\n")
    write(memory, "projects/atlas.markdown", "Atlas is the billing rewrite.\n")
    write(memory, "projects/LOUD.MD", "Upper-case extension note.\n")
    write(memory, "projects/diagram.png", "not really a png")
    report = memory.sync()
    assert sorted(c.path for c in report.changes) == ["projects/LOUD.MD", "projects/atlas.markdown"]
    skipped = {s["path"]: s["reason"] for s in report.skipped}
    assert skipped["projects/README.md"].startswith("README-like") and "attachment" in skipped["projects/diagram.png"]
    status = run_cli("status", "--json", "--memory-dir", str(memory.root)).json()
    assert {s["path"] for s in status["skipped"]} == {"projects/README.md", "projects/diagram.png"}
    doctor = run_cli("doctor", "--json", "--memory-dir", str(memory.root)).json()
    check = next(c for c in doctor["checks"] if c["name"] == "skipped-files")
    assert any(p.startswith("projects/README.md: README-like") for p in check["problems"])
    assert memory.recall("billing rewrite", top_k=2).hits[0].path == "projects/atlas.markdown"
    # README-like files are memories once asked for
    with Memory.open(settings=settings_for(memory.root, store={"include": ["**"], "readme_files": True})) as opted:
        assert [c.path for c in opted.sync(full=True).changes] == ["README.md", "projects/README.md"]


def test_frontmatter_only_notes_are_adopted_with_their_title_and_description(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(memory, "docs/_index.md", "---\ntitle: Deployment\ndescription: How releases reach production.\n---\n")
    write(memory, "docs/empty.md", "---\ntags: [todo]\n---\n")
    report = memory.sync()
    assert [c.path for c in report.changes] == ["docs/_index.md"]
    assert memory.recall("how do releases reach production", top_k=1).hits[0].path == "docs/_index.md"
    assert any(s["path"] == "docs/empty.md" and "no text" in s["reason"] for s in report.skipped)
    doctor = {c["name"]: c for c in memory.doctor()}
    assert (
        doctor["empty-files"]["problems"] == ["docs/empty.md"] and "write their text" in doctor["empty-files"]["detail"]
    )
    assert "docs/empty.md" not in (doctor["working-tree"].get("detail") or "")
    # following the advice changes something: the note is adopted
    (memory.root / "docs/empty.md").write_text("---\ntags: [todo]\n---\nRemember to rotate keys.\n")
    assert [c.path for c in memory.sync().changes] == ["docs/empty.md"]
    assert "empty-files" not in {c["name"] for c in memory.doctor()}


def test_toml_front_matter_is_read_and_left_in_toml(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    page = '+++\ntitle = "Release process"\ndate = 2023-03-01T10:00:00Z\ntags = ["ops", "release"]\n\n[params]\nicon = "ship"\n+++\n\nReleases are cut on Tuesdays by the release captain.\n'
    path = write(memory, "content/release.md", page)
    report = memory.sync()
    assert [c.path for c in report.changes] == ["content/release.md"] and path.read_text() == page
    record = memory.files.read("content/release.md")
    assert record.tags == ["ops", "release"] and created_ts(record) == parse_time("2023-03-01T10:00:00Z")
    assert memory.recall("who cuts releases", top_k=1).hits[0].path == "content/release.md"
    memory.forget(record.id, reason="moved to the wiki")
    after = path.read_text()
    assert after.startswith("+++\n") and after.count("+++") == 2 and "---" not in after
    assert 'status = "forgotten"' in after.split("[params]")[0]  # a top-level key, above the table
    assert after.endswith("\nReleases are cut on Tuesdays by the release captain.\n")


def test_aliases_and_body_tags_are_searchable(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(
        memory,
        "people/marguerite.md",
        "---\naliases: [Daisy, M. Okafor]\n---\nLeads the platform team. #people/leads\n",
    )
    write(memory, "ideas/cache.md", "Try a write-through cache for sessions #idea #perf\n\n```\n#notatag\n```\n")
    memory.sync()
    assert memory.recall("Daisy", top_k=1).hits[0].path == "people/marguerite.md"
    assert memory.files.read("ideas/cache.md").tags == ["idea", "perf"]
    assert [r.path for r in memory.list(tag="perf")] == ["ideas/cache.md"]
    assert [r.path for r in memory.list(tag="people/leads")] == ["people/marguerite.md"]


def test_wikilinks_by_title_alias_file_and_links_objects_are_graph_edges(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(memory, "notes/editor.md", "---\ntitle: Editor Preferences\n---\nShe uses helix with a modal keymap.\n")
    write(memory, "notes/runbook.md", "---\naliases: [Deploy Runbook]\n---\nStep one: freeze merges.\n")
    write(memory, "notes/Pager Rotation.md", "Pager duty rotates weekly.\n")
    write(memory, "notes/ledger.md", "---\nid: fact-1778750467412-q7kd\n---\nThe ledger is append-only.\n")
    seed = (
        '---\nrelated: "[[Pager Rotation]]"\nlinks:\n  - targetId: fact-1778750467412-q7kd\n'
        "    linkType: supports\n    strength: 0.8\n---\n"
        "The release captain is Ana. See [[Editor Preferences]] and [[Deploy Runbook|the runbook]].\n"
    )
    write(memory, "notes/captain.md", seed)
    memory.sync()
    memory.recall("release captain", top_k=1)
    with memory.index.lock:
        snap, _bm25, catalog = memory.index.view()
    lookup = G.CatalogLookup(snap, catalog, snap.alive)
    row = snap.row_of["notes/captain.md"]
    fm, content = lookup.fields([row])[row]
    edges = G.edges_of(row, fm, content, lookup, link_conf=0.9, wikilink_conf=0.85, entity_conf=0.75)
    reached = {snap.paths[e.target]: e.kind for e in edges}
    assert reached == {
        "notes/editor.md": "wikilink",  # [[Title]]
        "notes/runbook.md": "wikilink",  # [[alias|label]]
        "notes/Pager Rotation.md": "wikilink",  # [[file]] in a frontmatter value
        "notes/ledger.md": "link",  # the original Remnic's link object
    }
    with Memory.open(settings=settings_for(memory.root, store={"include": ["**"]}, recall={"graph_max_nodes": 5})) as m:
        snapshot = m.recall_xray("who is the release captain?", top_k=5)
        assert "notes/editor.md" in {r.path for r in snapshot.results if r.served_by == "graph"}


def test_a_folder_move_recategorises_in_one_sync_commit(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m"))
    record = memory.store("Ship on Tuesdays", category="fact").record
    before = int(git(memory.root, "rev-list", "--count", "HEAD"))
    (memory.root / "decisions/ship-on-tuesdays.md").write_bytes((memory.root / record.path).read_bytes())
    (memory.root / record.path).unlink()
    report = memory.sync()
    assert [(c.kind, c.path, c.normalized) for c in report.changes] == [
        ("renamed", "decisions/ship-on-tuesdays.md", ["category"])
    ]
    assert int(git(memory.root, "rev-list", "--count", "HEAD")) == before + 1
    moved = memory.get(record.id)
    assert moved.category == "decision" and moved.frontmatter["category"] == "decision"
    assert git(memory.root, "status", "--porcelain") == ""


def test_times_come_from_the_notes_keys_else_git_history(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(memory, "journal/dated.md", "---\ndate: 2023-03-01\n---\nKickoff of the Atlas project.\n")
    write(memory, "journal/plain.md", "A note committed long ago by hand.\n")
    write(memory, 'journal/a "quoted"\tcafé.md', "A note whose name git would quote.\n")
    env = {**os.environ, "GIT_AUTHOR_DATE": "2024-01-05T10:00:00Z", "GIT_COMMITTER_DATE": "2024-01-05T10:00:00Z"}
    subprocess.run(["git", *GIT_IDENTITY, "add", "journal"], cwd=memory.root, check=True)
    subprocess.run(["git", *GIT_IDENTITY, "commit", "-qm", "old notes"], cwd=memory.root, check=True, env=env)
    memory.sync()
    dated = memory.files.read("journal/dated.md")
    assert created_ts(dated) == parse_time("2023-03-01") and "created" not in dated.frontmatter
    plain = memory.files.read("journal/plain.md")
    assert plain.frontmatter["created"] == plain.frontmatter["updated"] == "2024-01-05T10:00:00.000Z"
    quoted = memory.files.read('journal/a "quoted"\tcafé.md')
    assert quoted.frontmatter["created"] == "2024-01-05T10:00:00.000Z"  # git's history, not the file's mtime


def test_init_in_a_folder_with_a_root_note_leaves_it_byte_for_byte(tmp_path: Path) -> None:
    root = tmp_path / "existing"
    (root / "facts").mkdir(parents=True)
    (root / "notes.md").write_bytes(b"my own notes\nnot a memory\n")
    (root / "facts/editor.md").write_text("Ana edits in helix.\n")
    result = run_cli("init", str(root))
    assert result.code == 0 and "notes.md: outside the memory folders" in result.out
    dry = run_cli("sync", "run", "--dry-run", "--memory-dir", str(root))
    assert dry.code == 0 and "A facts/editor.md" in dry.out and "--dry-run" in dry.out
    assert (root / "facts/editor.md").read_text() == "Ana edits in helix.\n"  # the dry run changed nothing
    assert "facts/editor.md" not in git(root, "ls-files")
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    assert run_cli("doctor", "--memory-dir", str(root)).code == 0
    assert (root / "notes.md").read_bytes() == b"my own notes\nnot a memory\n"
    assert "notes.md" not in git(root, "ls-files").split()
    # adopting it is asked for by name
    assert run_cli("init", str(root), "--adopt", "notes.md").code == 0
    report = run_cli("sync", "run", "--json", "--memory-dir", str(root)).json()
    assert [c["path"] for c in report["changes"]] == ["notes.md"]
    assert (root / "notes.md").read_text().endswith("---\nmy own notes\nnot a memory\n")


def test_adopting_a_pattern_later_picks_up_notes_already_committed(tmp_path: Path) -> None:
    root = tmp_path / "m"
    memory = Memory.init(root, settings=settings_for(root))
    write(memory, "notes/old.md", "A note committed by hand before it was adopted.\n")
    git(root, "add", "notes/old.md")
    git(root, "commit", "-qm", "my notes")
    assert memory.sync().changes == []  # not a memory yet
    memory.close()
    assert run_cli("init", str(root), "--adopt", "notes/**").code == 0
    report = run_cli("sync", "run", "--json", "--memory-dir", str(root)).json()
    assert [c["path"] for c in report["changes"]] == ["notes/old.md"]


def test_normalize_gives_a_committed_file_missing_its_times_gits_times_not_now(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    write(memory, "facts/vpn.md", "---\nid: mem_handmade000000000002\n---\n\nThe VPN needs a hardware key.\n")
    env = {**os.environ, "GIT_AUTHOR_DATE": "2024-01-02T10:00:00Z", "GIT_COMMITTER_DATE": "2024-01-02T10:00:00Z"}
    subprocess.run(["git", *GIT_IDENTITY, "add", "facts"], cwd=memory.root, check=True)
    subprocess.run(["git", *GIT_IDENTITY, "commit", "-qm", "by hand"], cwd=memory.root, check=True, env=env)
    memory.sync()
    out = run_cli("sync", "run", "--normalize", "--memory-dir", str(memory.root)).out
    assert "M facts/vpn.md" in out and "already in git" not in out  # this sync commits the new keys
    vpn = memory.files.read("facts/vpn.md")
    assert vpn.frontmatter["created"] == vpn.frontmatter["updated"] == "2024-01-02T10:00:00.000Z"
