"""`remnic versions` on file names git quotes (non-ASCII, tab, quote), on copies and after a move
between category folders: real git repositories, the CLI in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.service.memory import Memory

# git C-quotes each of these in its plain output ("facts/caf\303\251.md"); -z output is the path.
# (A backslash is not here: remnic reads it as a folder separator in a path it is given.)
ODD_NAMES = ["facts/café.md", 'facts/say "hi".md', "facts/tab\there.md"]


def _sync(root: Path) -> None:
    r = run_cli("sync", "run", "--memory-dir", str(root))
    assert r.code == 0, r.err


def _clean(root: Path) -> None:
    """Nothing staged or left over, and no folder named after a quoted path (`"facts`)."""
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not [p.name for p in root.iterdir() if p.name.startswith('"')]


@pytest.mark.parametrize("rel", ODD_NAMES, ids=["non-ascii", "quote", "tab"])
def test_list_show_diff_revert_read_real_paths_from_git(memory: Memory, rel: str) -> None:
    d, root = str(memory.root), memory.root
    (root / rel).write_text("Note about the café\n", encoding="utf-8")
    _sync(root)
    with (root / rel).open("a", encoding="utf-8") as fh:
        fh.write("second line\n")
    _sync(root)

    listed = run_cli("versions", "list", rel, "--memory-dir", d, "--json")
    assert listed.code == 0, listed.err
    assert [(v["label"], v["path"]) for v in listed.json()["versions"]] == [("v1", rel), ("v2", rel)]
    text = run_cli("versions", "list", rel, "--memory-dir", d).out
    assert "\\303" not in text and '"facts' not in text

    shown = run_cli("versions", "show", rel, "v1", "--memory-dir", d)
    assert shown.code == 0 and "Note about the café" in shown.out and "second line" not in shown.out
    diff = run_cli("versions", "diff", rel, "v1", "v2", "--memory-dir", d)
    assert diff.code == 0, diff.err
    assert "+second line" in diff.out

    reverted = run_cli("versions", "revert", rel, "v1", "--memory-dir", d)
    assert reverted.code == 0, reverted.err
    assert "second line" not in (root / rel).read_text(encoding="utf-8")
    changed = git(root, "show", "-z", "--name-only", "--format=", "HEAD").strip("\0\n").split("\0")
    assert changed == [rel]
    _clean(root)


def test_a_rename_between_two_quoted_names_is_followed_and_reverted_at_the_new_name(memory: Memory) -> None:
    d, root = str(memory.root), memory.root
    old, new = "facts/théâtre.md", 'facts/crème "brûlée"\tnote.md'
    (root / old).write_text("Note about the theatre\n", encoding="utf-8")
    _sync(root)
    (root / old).rename(root / new)
    _sync(root)
    with (root / new).open("a", encoding="utf-8") as fh:
        fh.write("an edit after the move\n")
    _sync(root)

    for target in (old, new):  # the old name follows the file to where it went
        listed = run_cli("versions", "list", target, "--memory-dir", d, "--json").json()["versions"]
        assert [(v["path"], v["previousPath"]) for v in listed] == [(old, None), (new, old), (new, None)]
    diff = run_cli("versions", "diff", new, "v1", "v3", "--memory-dir", d)
    assert diff.code == 0 and "+an edit after the move" in diff.out
    assert "Note about the theatre" in run_cli("versions", "show", new, "v1", "--memory-dir", d).out

    reverted = run_cli("versions", "revert", new, "v1", "--memory-dir", d)
    assert reverted.code == 0, reverted.err
    assert "an edit after the move" not in (root / new).read_text(encoding="utf-8")
    assert not (root / old).exists()
    _clean(root)


def test_an_id_whose_file_is_gone_resolves_to_its_quoted_name(memory: Memory) -> None:
    d, root = str(memory.root), memory.root
    rel = 'facts/naïve "id".md'
    (root / rel).write_text("A note that will be deleted\n", encoding="utf-8")
    _sync(root)
    memory_id = memory.list()[0].id
    (root / rel).unlink()
    _sync(root)
    listed = run_cli("versions", "list", memory_id, "--memory-dir", d, "--json")
    assert listed.code == 0, listed.err
    assert [(v["path"], v["deleted"]) for v in listed.json()["versions"]] == [(rel, False), (rel, True)]


# --- copies ---


def _ids(*paths: Path) -> list[str]:
    return [next(line for line in p.read_text().splitlines() if line.startswith("id:")) for p in paths]


def test_a_copy_has_its_own_history_starting_where_it_was_copied(memory: Memory) -> None:
    d, root = str(memory.root), memory.root
    rec = memory.store("Ana is the release captain", category="fact").record
    memory.update(rec.id, {"tags": ["people"]})
    original = root / rec.path
    copy = root / "facts/copy.md"
    copy.write_bytes(original.read_bytes())
    _sync(root)  # the copy gets a fresh id
    assert len(set(_ids(original, copy))) == 2

    listed = run_cli("versions", "list", "facts/copy.md", "--memory-dir", d, "--json").json()["versions"]
    assert [(v["path"], v["change"], v["previousPath"]) for v in listed] == [("facts/copy.md", "A", None)]
    assert len(run_cli("versions", "list", rec.path, "--memory-dir", d, "--json").json()["versions"]) == 2
    assert run_cli("versions", "revert", "facts/copy.md", "v1", "--memory-dir", d).code == 0
    assert len(set(_ids(original, copy))) == 2
    _clean(root)


def test_a_copy_committed_with_the_originals_id_has_no_version_before_its_own_id(memory: Memory) -> None:
    d, root = str(memory.root), memory.root
    rec = memory.store("Ana is the release captain", category="fact").record
    original, copy = root / rec.path, root / "facts/copy.md"
    # A plain-git copy: its first version carries the original's id; sync then gives it its own. A
    # memory's versions are those whose file has its id, so that first one is not the copy's.
    copy.write_bytes(original.read_bytes())
    git(root, "add", "facts/copy.md")
    git(root, "commit", "-qm", "a copy by hand")
    copy.write_text(copy.read_text().replace(f"id: {rec.id}", "id: mem_p0000000000000000001"))
    with copy.open("a") as fh:
        fh.write("Ben is her deputy.\n")
    _sync(root)
    for target in ("facts/copy.md", "mem_p0000000000000000001"):
        listed = run_cli("versions", "list", target, "--memory-dir", d, "--json").json()["versions"]
        assert [(v["label"], v["change"]) for v in listed] == [("v1", "M")]
    assert [v.path for v in memory.versions(rec.id)] == [rec.path]

    refused = run_cli("versions", "revert", "facts/copy.md", "v2", "--memory-dir", d)
    assert refused.code == 2 and "valid versions: v1..v1" in refused.err
    reverted = run_cli("versions", "revert", "facts/copy.md", "v1", "--memory-dir", d)
    assert reverted.code == 0, reverted.err
    assert "Ben is her deputy" in copy.read_text()
    assert _ids(original, copy) == [f"id: {rec.id}", "id: mem_p0000000000000000001"]
    doctor = run_cli("doctor", "--memory-dir", d, "--json").json()
    assert not [c for c in doctor["checks"] if "duplicate" in str(c).lower() and c["status"] != "ok"]
    _clean(root)


# --- category folders ---


def test_revert_after_a_move_between_category_folders_keeps_the_folders_category(memory: Memory) -> None:
    d, root = str(memory.root), memory.root
    (root / "facts/x.md").write_text("We pick Postgres for storage\n")
    _sync(root)
    (root / "facts/x.md").rename(root / "decisions/x.md")
    _sync(root)  # the category follows the folder: decision
    with (root / "decisions/x.md").open("a") as fh:
        fh.write("Revisit in the spring.\n")
    _sync(root)
    assert "category: decision" in (root / "decisions/x.md").read_text()

    reverted = run_cli("versions", "revert", "decisions/x.md", "v1", "--memory-dir", d)
    assert reverted.code == 0, reverted.err
    text = (root / "decisions/x.md").read_text()
    assert "Revisit in the spring" not in text and "category: decision" in text
    assert run_cli("get", "decisions/x.md", "--memory-dir", d, "--json").json()["category"] == "decision"
    head = git(root, "rev-parse", "HEAD")
    _sync(root)  # nothing for sync to correct
    assert git(root, "rev-parse", "HEAD") == head
    _clean(root)


# --- the session hook's view of a project ---


def test_a_sessions_changed_files_are_read_as_real_names(memory: Memory, tmp_path: Path) -> None:
    from remnic.drivers.hooks import repo_context

    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "old.md").write_text("x\n")
    git(project, "add", "old.md")
    git(project, "commit", "-qm", "one")
    git(project, "mv", "old.md", "crème brûlée.md")
    (project / 'say "hi"\there.md').write_text("y\n")
    assert set(repo_context(memory, str(project)).changed) == {"crème brûlée.md", 'say "hi"\there.md'}
