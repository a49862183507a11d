"""`remnic versions` and `timeline` follow a memory's id, not its path: a path reused by another
memory, a rename then an uncommitted deletion, quoted hints, and paths typed from a sub-folder.
Real git repositories, the CLI in-process."""

from __future__ import annotations

import shlex
from pathlib import Path

from conftest import git, run_cli

from remnic.service.memory import Memory


def _sync(root: Path) -> None:
    r = run_cli("sync", "run", "--memory-dir", str(root))
    assert r.code == 0, r.err


def _frontmatter(root: Path, rel: str, key: str) -> str:
    line = next(x for x in (root / rel).read_text(encoding="utf-8").splitlines() if x.startswith(f"{key}:"))
    return line.split(":", 1)[1].strip()


def test_a_reused_path_keeps_each_memorys_own_history_and_revert_never_takes_the_others(memory: Memory) -> None:
    root, d = memory.root, str(memory.root)
    a = memory.store("Alpha beta gamma", category="fact")
    rel = a.record.path
    (root / rel).unlink()
    _sync(root)
    b = memory.store("Alpha beta gamma", category="fact")
    assert b.record.path == rel and b.record.id != a.record.id
    b_created = _frontmatter(root, rel, "created")

    old = run_cli("timeline", a.record.id, "--memory-dir", d, "--json").json()["events"]
    assert [(e["label"], e["status"]) for e in old] == [("v1", "active"), ("v2", "deleted")]
    new = run_cli("timeline", b.record.id, "--memory-dir", d, "--json").json()["events"]
    assert [(e["label"], e["status"], e["sha"]) for e in new] == [("v1", "active", b.commit)]
    by_path = run_cli("versions", "list", rel, "--memory-dir", d, "--json").json()["versions"]
    assert [v["sha"] for v in by_path] == [b.commit]

    same = run_cli("versions", "revert", b.record.id, "v1", "--memory-dir", d)
    assert same.code == 0, same.err
    assert _frontmatter(root, rel, "id") == b.record.id and _frontmatter(root, rel, "created") == b_created
    assert run_cli("versions", "revert", b.record.id, "v2", "--memory-dir", d).code == 2  # B has no v2

    # A's file is gone and B now sits at its path: restoring A must not overwrite B, --force or not.
    for force in ((), ("--force",)):
        refused = run_cli("versions", "revert", a.record.id, "v1", *force, "--memory-dir", d)
        assert refused.code == 2 and b.record.id in refused.err and rel in refused.err
    assert _frontmatter(root, rel, "id") == b.record.id
    assert "Alpha beta gamma" in memory.version_text(a.record.id, "v1")[1]
    assert a.record.id in memory.version_text(a.record.id, "v1")[1]


def test_a_memory_written_at_a_path_a_deleted_memory_held_earlier_has_no_older_versions(memory: Memory) -> None:
    root = memory.root
    first, second = "mem_firstmemory000000001", "mem_secondmemory00000001"
    (root / "facts").mkdir(exist_ok=True)
    (root / "facts/x.md").write_text(f"---\nid: {first}\n---\nFirst memory\n", encoding="utf-8")
    _sync(root)
    with (root / "facts/x.md").open("a", encoding="utf-8") as fh:
        fh.write("an edit\n")
    _sync(root)
    (root / "facts/x.md").unlink()
    _sync(root)
    (root / "facts/x.md").write_text(f"---\nid: {second}\n---\nSecond memory\n", encoding="utf-8")
    _sync(root)
    assert [v.change for v in memory.versions(first)] == ["A", "M", "D"]
    assert [v.change for v in memory.versions(second)] == ["A"]
    assert all(first in memory.version_text(first, f"v{n}")[1] for n in (1, 2))
    assert memory.versions("facts/x.md") == memory.versions(second)


def test_a_file_without_an_id_keeps_its_history_under_the_id_from_its_path(memory: Memory) -> None:
    root = memory.root
    (root / "facts").mkdir(exist_ok=True)
    (root / "facts/plain.md").write_text("A plain note\n", encoding="utf-8")
    git(root, "add", "facts/plain.md")
    git(root, "commit", "-qm", "a note, committed by hand")
    with (root / "facts/plain.md").open("a", encoding="utf-8") as fh:
        fh.write("more\n")
    git(root, "commit", "-qam", "an edit, committed by hand")
    rec = memory.get("facts/plain.md")
    assert "id:" not in (root / "facts/plain.md").read_text(encoding="utf-8")
    assert [v.label for v in memory.versions(rec.id)] == ["v1", "v2"]
    assert memory.versions("facts/plain.md") == memory.versions(rec.id)
    assert memory.revert(rec.id, "v1").changed
    text = (root / "facts/plain.md").read_text(encoding="utf-8")
    assert "A plain note" in text and "more" not in text


def test_swapped_files_cut_each_history_at_the_swap(memory: Memory) -> None:
    root, d = memory.root, str(memory.root)
    a = memory.store("The deploy window is Monday", category="fact").record
    b = memory.store("The office opens at nine", category="fact").record
    tmp = root / "facts/tmp.md"
    (root / a.path).rename(tmp)
    (root / b.path).rename(root / a.path)
    tmp.rename(root / b.path)
    _sync(root)
    for rec in (a, b):
        for n in range(1, len(memory.versions(rec.id)) + 1):
            text = memory.version_text(rec.id, f"v{n}")[1]
            assert f"id: {rec.id}" in text, (rec.id, n)
    diff = run_cli("versions", "diff", a.id, "--memory-dir", d)
    assert diff.code == 0 and b.id not in diff.out


def test_an_uncommitted_deletion_after_a_rename_shows_the_memorys_own_versions(memory: Memory) -> None:
    root, d = memory.root, str(memory.root)
    a = memory.store("Alpha fact", category="fact").record
    renamed = "facts/alpha-renamed.md"
    (root / a.path).rename(root / renamed)
    _sync(root)
    (root / a.path).write_text("A different memory\n", encoding="utf-8")
    _sync(root)
    other = _frontmatter(root, a.path, "id")
    (root / renamed).unlink()  # not synced

    events = run_cli("timeline", a.id, "--memory-dir", d, "--json").json()["events"]
    assert [(e["label"], e["status"], e["path"]) for e in events] == [
        ("v1", "active", a.path),
        ("v2", "active", renamed),
        ("working", "deleted", renamed),
    ]
    assert events[-1]["uncommitted"] is True
    table = run_cli("timeline", a.id, "--memory-dir", d).out
    assert "working" in table and "uncommitted" in table
    assert [e["label"] for e in memory.timeline(a.id)] == ["v1", "v2"]  # the API's: commits only

    shown = run_cli("versions", "show", a.id, "working", "--memory-dir", d, "--json").json()
    assert shown["deleted"] is True and shown["content"] == "" and shown["before"] == "v2"
    listed = run_cli("versions", "list", a.id, "--memory-dir", d, "--json").json()
    assert listed["uncommittedChanges"] is True and listed["path"] == renamed
    assert other not in run_cli("versions", "diff", a.id, "--memory-dir", d).out


def test_hints_quote_paths_with_spaces(memory: Memory) -> None:
    root, d = memory.root, str(memory.root)
    rel = "facts/My Notes é.md"
    (root / "facts").mkdir(exist_ok=True)
    (root / rel).write_text("Notes with a space\n", encoding="utf-8")
    _sync(root)
    (root / rel).unlink()
    _sync(root)
    quoted = shlex.quote(rel)
    shown = run_cli("versions", "show", rel, "v2", "--memory-dir", d)
    assert shown.code == 0 and f"`remnic versions show {quoted} v1`" in shown.out
    refused = run_cli("versions", "revert", rel, "v2", "--memory-dir", d)
    assert refused.code == 2 and f"`remnic versions revert {quoted} v1`" in refused.err
    hint = refused.err.split("`")[1]
    assert shlex.split(hint)[3:] == [rel, "v1"]


def test_a_path_typed_from_a_sub_folder_resolves_against_it(memory: Memory) -> None:
    root = memory.root
    rec = memory.store("Plain fact to find", category="fact").record
    name = rec.path.split("/", 1)[1]
    here = root / "facts"
    for args in (("versions", "list", name), ("versions", "list", f"./{name}"), ("get", name), ("timeline", name)):
        r = run_cli(*args, "--json", cwd=here)
        assert r.code == 0, (args, r.err)
    assert run_cli("versions", "list", name, "--json", cwd=here).json()["path"] == rec.path
    assert run_cli("get", name, "--json", cwd=here).json()["id"] == rec.id


def test_a_path_not_from_the_root_says_so_and_suggests_the_right_one(memory: Memory) -> None:
    rec = memory.store("Plain fact to find", category="fact").record
    name = rec.path.split("/", 1)[1]
    for cmd in (("versions", "list"), ("get",)):
        r = run_cli(*cmd, name, "--memory-dir", str(memory.root))
        assert r.code in (1, 2)
        assert "relative to the repository root" in r.err and f"did you mean {rec.path}" in r.err, r.err


def test_versions_list_reads_many_versions_in_one_batch(memory: Memory) -> None:
    root = memory.root
    rec = memory.store("Busy memory", category="fact").record
    for i in range(60):
        with (root / rec.path).open("a", encoding="utf-8") as fh:
            fh.write(f"line {i}\n")
        git(root, "commit", "-qam", f"edit {i}")
    versions = memory.versions(rec.id)
    assert len(versions) == 61 and [v.number for v in versions] == list(range(1, 62))
    assert memory.versions(rec.path) == versions
