"""A new category moves a memory's file to that category's folder under its own name and sub-folder:
a vault note's file name is its title and the target of [[links]], so it must not become a slug."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli

from remnic.config import settings_for
from remnic.service.memory import Memory


def vault(tmp_path: Path, files: dict[str, str]) -> Memory:
    root = tmp_path / "vault"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    memory = Memory.init(root, settings=settings_for(root, store={"include": ["**"]}), adopt=["**"])
    memory.sync()
    return memory


def _update(root: Path, target: str, category: str) -> str:
    result = run_cli("update", target, "--category", category, "--json", "--memory-dir", str(root))
    assert result.code == 0, result
    return str(result.json()["path"])


def _hits(root: Path, text: str) -> list[str]:
    return [h["path"] for h in run_cli("query", text, "--json", "--memory-dir", str(root)).json()["hits"]]


def test_a_vault_note_keeps_its_name_and_sub_folder_when_its_category_changes(tmp_path: Path) -> None:
    memory = vault(
        tmp_path,
        {
            "Facts/Quintessa.md": "The office plant needs water weekly.\n",
            "Facts/sub/Quintessa_plan.md": "Budget for the spring party.\n",
            "notes/kickoff.md": "Kickoff: see [[Quintessa]] for watering.\n",
        },
    )
    root = memory.root
    assert "Facts/Quintessa.md" in _hits(root, "quintessa")
    assert _update(root, "Facts/Quintessa.md", "decision") == "decisions/Quintessa.md"
    assert _update(root, "Facts/sub/Quintessa_plan.md", "decision") == "decisions/sub/Quintessa_plan.md"
    assert "decisions/Quintessa.md" in _hits(root, "quintessa")  # the file-name title is still searchable
    assert "decisions/sub/Quintessa_plan.md" in _hits(root, "quintessa plan")
    assert not (root / "Facts/Quintessa.md").exists() and not (root / "Facts/sub/Quintessa_plan.md").exists()
    tracked = git(root, "ls-files").split()
    assert "decisions/Quintessa.md" in tracked and "Facts/Quintessa.md" not in tracked
    assert "category: decision" in git(root, "show", "HEAD:decisions/sub/Quintessa_plan.md")
    assert git(root, "status", "--porcelain") == ""
    assert "see [[Quintessa]]" in (root / "notes/kickoff.md").read_text(encoding="utf-8")


def test_a_name_taken_in_the_new_folder_gets_a_number_and_the_vaults_folder_case_is_kept(tmp_path: Path) -> None:
    memory = vault(
        tmp_path,
        {
            "Facts/Quintessa.md": "The office plant needs water weekly.\n",
            "Decisions/Quintessa.md": "We chose a cactus instead.\n",
        },
    )
    root = memory.root
    assert _update(root, "Facts/Quintessa.md", "decision") == "Decisions/Quintessa-2.md"
    assert "We chose a cactus instead." in (root / "Decisions/Quintessa.md").read_text(encoding="utf-8")
    assert "The office plant" in (root / "Decisions/Quintessa-2.md").read_text(encoding="utf-8")


def test_a_file_already_in_the_new_categorys_folder_stays_where_it_is(memory: Memory) -> None:
    stored = memory.store("We deploy on Tuesdays.", category="decision").record
    path = memory.root / stored.path
    path.write_text(path.read_text(encoding="utf-8").replace("category: decision", "category: fact"), "utf-8")
    git(memory.root, "commit", "-qam", "hand edit")
    assert memory.get(stored.id).category == "fact"  # the frontmatter's category wins over the folder's
    assert _update(memory.root, stored.id, "decision") == stored.path  # not a -2 beside itself
    assert memory.get(stored.id).category == "decision"


def test_a_namespaced_memory_keeps_its_namespace_and_dated_sub_folder(memory: Memory) -> None:
    rel = "namespaces/work/facts/2026-05-14/fact-1778750467412-q7kd.md"
    (memory.root / rel).parent.mkdir(parents=True)
    (memory.root / rel).write_text("The VPN gateway is vpn2.\n", encoding="utf-8")
    memory.sync()
    assert _update(memory.root, rel, "rule") == "namespaces/work/rules/2026-05-14/fact-1778750467412-q7kd.md"
