"""Adopting an Obsidian vault: a file name several notes share, titles that are file names, the vault's
own README, and a capitalised category folder. Real files in real git repositories, the real index."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import run_cli

from remnic.config import settings_for
from remnic.index.manifest import SCHEMA_VERSION
from remnic.index.text import name_title
from remnic.memfile.model import MemoryRecord
from remnic.memfile.paths import case_twin, category_for_path, folder_category
from remnic.recall.graph import nearest_note
from remnic.render.xray import render_xray
from remnic.service.memory import Memory


def vault(tmp_path: Path, files: dict[str, str]) -> Memory:
    root = tmp_path / "vault"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return Memory.init(root, settings=settings_for(root, store={"include": ["**"]}), adopt=["**"])


def test_a_name_two_notes_share_links_to_the_nearest_and_the_xray_says_so(tmp_path: Path) -> None:
    memory = vault(
        tmp_path,
        {
            "Archive/Projects/Atlas.md": "The 2022 Atlas prototype used Nomad.\n",
            "Projects/Atlas.md": "Atlas is the current deployment platform on Kubernetes.\n",
            "Daily/2024-01-08.md": "Worked on the heron runbook for [[Atlas]].\n",
        },
    )
    memory.sync()
    result = memory.recall("heron runbook", top_k=3, xray=True)
    by_path = {h.path: h for h in result.hits}
    assert "Archive/Projects/Atlas.md" not in by_path
    atlas = by_path["Projects/Atlas.md"]
    assert atlas.served_by == "graph"
    snap = result.xray
    assert snap is not None
    assert (
        "over wikilink ([[Atlas]] names 2 notes: took Projects/Atlas.md, not Archive/Projects/Atlas.md)"
        in render_xray(snap, "text")
    )


def test_obsidian_picks_the_same_folder_first_then_the_shortest_path() -> None:
    notes = ["Archive/Projects/Atlas.md", "Projects/Atlas.md", "Daily/old/Atlas.md"]
    assert nearest_note(notes, "Daily/old/today.md") == "Daily/old/Atlas.md"
    assert nearest_note(notes, "Daily/today.md") == "Projects/Atlas.md"
    assert nearest_note(notes, None) == "Projects/Atlas.md"
    assert nearest_note(["b/Atlas.md", "a/Atlas.md"], "c/x.md") == "a/Atlas.md"  # equal length: by name


def test_a_file_name_is_searchable_as_a_title(tmp_path: Path) -> None:
    memory = vault(
        tmp_path,
        {
            "Zorblax renovation.md": "Call the plumber on Monday.\n",
            "C# style guide.md": "Use four spaces and name things plainly.\n",
            "other.md": "The herons nest by the pond in spring.\n",
        },
    )
    memory.sync()
    assert [h.path for h in memory.recall("Zorblax", top_k=3).hits][:1] == ["Zorblax renovation.md"]
    assert [h.path for h in memory.recall("style guide", top_k=3).hits][:1] == ["C# style guide.md"]
    assert SCHEMA_VERSION >= 9  # old indexes, whose titles lack file names, are rebuilt


def record(path: str, content: str, rid: str = "mem_x") -> MemoryRecord:
    return MemoryRecord(path=path, frontmatter={"id": rid}, body=content + "\n")


def test_a_name_made_from_the_text_is_no_second_title() -> None:
    assert name_title(record("Zorblax renovation.md", "Call the plumber.")) == "Zorblax renovation"
    assert name_title(record("notes/my_reading-list.md", "Dune.")) == "my reading list"
    # remnic's own names: a slug of the first words (numbered when taken), or the id
    text = "Caroline went to the LGBTQ support group on Sunday and liked it."
    assert name_title(record("facts/caroline-went-to-the-lgbtq-support-group-on-sunday-and.md", text)) == ""
    assert name_title(record("facts/caroline-went-to-the-lgbtq-support-group-on-sunday-and-2.md", text)) == ""
    assert name_title(record("facts/mem_x.md", "Anything.")) == ""
    assert name_title(record("entities/person-priya-raman.md", "Priya Raman is a person.")) == ""


def test_doctor_lists_the_vaults_own_readme_and_how_to_include_it(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"README.md": "# My vault\nHerons live here.\n", "one.md": "Egrets.\n"})
    memory.sync()
    check = next(c for c in memory.doctor() if c["name"] == "skipped-files")
    assert check["problems"] == ["README.md: README-like file (set store.readmeFiles to true to make it a memory)"]
    assert "none" not in check["detail"]
    assert memory.adoption()["skipped"] == [{"path": "README.md", "reason": check["problems"][0].split(": ", 1)[1]}]


def test_the_readme_remnic_lays_down_is_not_listed(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"one.md": "Egrets.\n"})
    assert (memory.root / "README.md").is_file()
    check = next(c for c in memory.doctor() if c["name"] == "skipped-files")
    assert check["problems"] == [] and check["detail"].startswith("none")
    # without an include pattern naming it, a top-level README is the repository's own
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "README.md").write_text("# Mine\n", encoding="utf-8")
    other = Memory.init(plain)
    assert next(c for c in other.doctor() if c["name"] == "skipped-files")["problems"] == []


def test_a_capitalised_category_folder_is_that_category_and_init_makes_no_twin(tmp_path: Path) -> None:
    assert category_for_path("Decisions/ch.md") == "decision"
    assert folder_category("namespaces/work/Reasoning-Traces/x.md") == "reasoning_trace"
    assert folder_category("People/x.md") is None
    assert case_twin("decisions/.gitkeep", ["Decisions", "facts"]) == "Decisions"
    assert case_twin("decisions/.gitkeep", ["decisions"]) is None
    memory = vault(tmp_path, {"Decisions/ch.md": "We chose ClickHouse.\n"})
    memory.sync()
    names = os.listdir(memory.root)
    assert "Decisions" in names and "decisions" not in names
    assert "facts" in names  # the other category folders are laid down as before
    assert "category: decision" in (memory.root / "Decisions/ch.md").read_text(encoding="utf-8")
    res = run_cli("list", "--category", "decision", "--json", cwd=memory.root)
    assert res.code == 0, res.err
    assert [m["path"] for m in res.json()["memories"]] == ["Decisions/ch.md"]


def test_a_new_memory_of_that_category_goes_into_the_vaults_folder(tmp_path: Path) -> None:
    memory = vault(tmp_path, {"Decisions/ch.md": "We chose ClickHouse.\n"})
    memory.sync()
    stored = memory.store("We chose Kafka for the event bus.", category="decision").record
    assert stored.path.startswith("Decisions/")
    assert "decisions" not in os.listdir(memory.root)
