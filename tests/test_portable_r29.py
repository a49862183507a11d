"""Export and import as a backup is used: restored into the repository it came from, dry runs that
predict the real run, symlinked files, and `--out` inside the repository.

Real repositories in temp dirs, driven through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import git, run_cli, snapshot_tree

from remnic.service.memory import Memory


def where(memory: Memory) -> tuple[str, str]:
    return ("--memory-dir", str(memory.root))


def backup(memory: Memory, tmp_path: Path) -> Path:
    out = tmp_path / "bk.jsonl"
    result = run_cli("export", "--out", str(out), *where(memory))
    assert result.code == 0, result.err
    return out


def head(memory: Memory) -> str:
    return git(memory.root, "rev-parse", "HEAD").strip()


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# --- an export imports again into its own repository: what is here is skipped, what is gone comes back ---


def test_reimporting_an_export_into_its_repository_skips_every_file_and_writes_nothing(
    memory: Memory, tmp_path: Path
) -> None:
    one = memory.store("Deploys happen on Tuesdays", category="fact").record
    two = memory.store("Ana prefers tabs", category="preference").record
    out = backup(memory, tmp_path)
    tree, before = snapshot_tree(memory.root), head(memory)

    result = run_cli("import", str(out), *where(memory), "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["imported"] == 0 and data["duplicates"] == 2 and data["commit"] is None
    assert {(s["id"], s["path"], s["reason"]) for s in data["skipped"]} == {
        (one.id, one.path, "file"),
        (two.id, two.path, "file"),
    }
    assert sorted(s["line"] for s in data["skipped"]) == [1, 2]
    assert snapshot_tree(memory.root) == tree and head(memory) == before

    text = run_cli("import", str(out), *where(memory))
    assert text.code == 0 and "nothing to import; skipped 2 exact duplicates" in text.out
    assert f"is {one.id} ({one.path})" in text.out


def test_reimporting_restores_only_the_lost_file_byte_for_byte(memory: Memory, tmp_path: Path) -> None:
    memory.store("Deploys happen on Tuesdays", category="fact")
    lost = memory.store("The VPN needs a hardware key", category="fact").record
    memory.store("Ana prefers tabs", category="preference")
    out = backup(memory, tmp_path)
    original = (memory.root / lost.path).read_bytes()
    git(memory.root, "rm", "-q", lost.path)
    git(memory.root, "commit", "-qm", "lose a file")

    result = run_cli("import", str(out), *where(memory), "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["ids"] == [lost.id] and data["imported"] == 1 and data["duplicates"] == 2
    assert lost.id not in {s["id"] for s in data["skipped"]}
    assert (memory.root / lost.path).read_bytes() == original
    assert git(memory.root, "status", "--porcelain").strip() == ""


def test_a_moved_file_with_the_same_bytes_is_found_by_its_id(memory: Memory, tmp_path: Path) -> None:
    record = memory.store("Deploys happen on Tuesdays", category="fact").record
    out = backup(memory, tmp_path)
    git(memory.root, "mv", record.path, "facts/deploys.md")
    git(memory.root, "commit", "-qm", "rename")

    data = run_cli("import", str(out), *where(memory), "--json").json()
    assert data["imported"] == 0
    assert data["skipped"] == [{"line": 1, "reason": "file", "id": record.id, "path": "facts/deploys.md"}]
    assert not (memory.root / record.path).exists()


def test_a_line_whose_file_here_has_other_text_is_still_refused(memory: Memory, tmp_path: Path) -> None:
    kept = memory.store("Deploys happen on Tuesdays", category="fact").record
    edited = memory.store("Ana prefers tabs", category="preference").record
    out = backup(memory, tmp_path)
    memory.update(edited.id, {"tags": ["style"]})
    tree, before = snapshot_tree(memory.root), head(memory)

    result = run_cli("import", str(out), *where(memory))
    assert result.code == 2
    assert f"'{edited.path}' already exists in this repository" in result.err
    assert f"'{edited.id}' already exists" in result.err
    assert kept.path not in result.err  # the identical line is no problem
    assert snapshot_tree(memory.root) == tree and head(memory) == before


# --- --dry-run predicts the real run, and both name what they skip ---


def test_dry_run_counts_and_names_duplicates_as_the_real_run_does(memory: Memory, tmp_path: Path) -> None:
    here = memory.store("Deploys happen on Tuesdays", category="fact").record
    out = backup(memory, tmp_path)
    restore = json.loads(out.read_text().splitlines()[0])
    batch = write_lines(
        tmp_path / "batch.jsonl",
        [
            restore,  # line 1: this very file is here
            {"content": "Deploys happen on Tuesdays", "category": "fact"},  # 2: its text is here
            {"content": "New policy: never deploy Fridays", "category": "fact"},  # 3: new
            {"content": "New policy: never deploy Fridays", "category": "decision"},  # 4: same text as line 3
        ],
    )
    expected = [
        {"line": 1, "reason": "file", "id": here.id, "path": here.path},
        {"line": 2, "reason": "text", "id": here.id, "path": here.path},
        {"line": 4, "reason": "batch", "sameAsLine": 3},
    ]

    dry = run_cli("import", str(batch), "--dry-run", *where(memory), "--json")
    assert dry.code == 0, dry.err
    predicted = dry.json()
    assert predicted["wouldImport"] == 1 and predicted["duplicates"] == 3 and predicted["valid"] == 4
    assert predicted["skipped"] == expected
    text = run_cli("import", str(batch), "--dry-run", *where(memory)).out
    assert "would import 1 memory, skip 3 exact duplicates" in text and "line 4: same text as line 3" in text

    real = run_cli("import", str(batch), *where(memory), "--json").json()
    assert real["imported"] == predicted["wouldImport"] and real["duplicates"] == predicted["duplicates"]
    assert real["skipped"] == expected
    (new,) = real["ids"]
    assert memory.get(new).content == "New policy: never deploy Fridays"


def test_a_duplicate_another_line_supersedes_stays_in_the_batch(memory: Memory, tmp_path: Path) -> None:
    here = memory.store("Deploys happen on Tuesdays", category="fact").record
    batch = write_lines(
        tmp_path / "batch.jsonl",
        [
            {"id": "mem_chosen0000000000001", "content": "Deploys happen on Tuesdays", "category": "fact"},
            {"content": "Deploys happen on Wednesdays", "category": "fact", "supersedes": "mem_chosen0000000000001"},
        ],
    )
    dry = run_cli("import", str(batch), "--dry-run", *where(memory), "--json").json()
    assert dry["wouldImport"] == 1 and dry["skipped"] == [
        {"line": 1, "reason": "text", "id": here.id, "path": here.path}
    ]
    real = run_cli("import", str(batch), *where(memory), "--json")
    assert real.code == 0, real.err
    data = real.json()
    assert data["imported"] == 1 and data["duplicates"] == 1
    assert memory.get(here.id).status == "superseded"


# --- a symlinked memory file is never left out silently ---


def test_export_names_a_symlink_to_a_file_outside_and_exits_1(memory: Memory, tmp_path: Path) -> None:
    memory.store("Real memory", category="fact")
    target = tmp_path / "target.md"
    target.write_text("---\nid: mem_linktarget000000001\n---\nLinked text\n")
    (memory.root / "facts" / "linked.md").symlink_to(target)

    result = run_cli("export", *where(memory))
    assert result.code == 1
    assert "facts/linked.md: left out of the export" in result.err and "symbolic link" in result.err
    assert "Linked text" not in result.out and "Real memory" in result.out
    data = run_cli("export", *where(memory), "--json", "--out", str(tmp_path / "e.jsonl"))
    assert data.code == 1
    assert [s["path"] for s in data.json()["skipped"]] == ["facts/linked.md"]
    assert data.json()["code"] == "export_incomplete"


def test_a_symlink_to_an_exported_memory_is_a_warning_only(memory: Memory, tmp_path: Path) -> None:
    record = memory.store("Releases are cut on Tuesdays", category="decision").record
    (memory.root / "facts" / "link.md").symlink_to(Path("..") / record.path)
    result = run_cli("export", *where(memory), "--json", "--out", str(tmp_path / "e.jsonl"))
    assert result.code == 0, result.err
    data = result.json()
    assert data["skipped"] == [] and data["memories"] == 1
    (warning,) = data["warnings"]
    assert "facts/link.md" in warning["message"] and f"links to {record.path}" in warning["message"]


# --- export --out inside the repository: refused only where the file would become a memory ---


def test_export_out_at_the_repository_root_is_written(memory: Memory) -> None:
    memory.store("Deploys happen on Tuesdays", category="fact")
    result = run_cli("export", "--out", "backup.jsonl", *where(memory), cwd=memory.root)
    assert result.code == 0, result.err
    assert "Deploys happen on Tuesdays" in (memory.root / "backup.jsonl").read_text()
    state = run_cli("export", "--out", ".remnic/backup.jsonl", *where(memory), cwd=memory.root)
    assert state.code == 0, state.err


def test_export_out_where_a_memory_file_would_be_is_refused_with_that_reason(memory: Memory) -> None:
    memory.store("Deploys happen on Tuesdays", category="fact")
    tree = snapshot_tree(memory.root)
    inside = run_cli("export", "-f", "md", "--out", "facts/all.md", *where(memory), cwd=memory.root)
    assert inside.code == 2
    assert "--out 'facts/all.md' would be a memory file of this repository" in inside.err
    assert "the next sync would take the export as a memory" in inside.err
    in_git = run_cli("export", "--out", ".git/backup.jsonl", *where(memory), cwd=memory.root)
    assert in_git.code == 2 and ".git folder" in in_git.err
    assert snapshot_tree(memory.root) == tree and not (memory.root / ".git" / "backup.jsonl").exists()


def test_a_file_with_frontmatter_but_no_text_is_named_not_silently_left_out(memory: Memory, tmp_path: Path) -> None:
    # export said "every memory file" and exited 0 while a placeholder's id and tags were not in it
    memory.store("Kept note", category="fact")
    (memory.root / "facts" / "placeholder.md").write_text(
        "---\nid: mem_01a21bc20e07574a1b99\ntags: [todo, q3]\n---\n", encoding="utf-8"
    )
    (memory.root / "facts" / "blank.md").write_text("\n", encoding="utf-8")
    out = tmp_path / "backup.jsonl"
    result = run_cli("export", "--out", str(out), "--json", "--memory-dir", str(memory.root))
    assert result.code == 1, result.err
    skipped = json.loads(result.out)["skipped"]
    assert [s["path"] for s in skipped] == ["facts/placeholder.md"]  # the blank file holds nothing to lose
    assert "no text yet" in json.dumps(skipped)
