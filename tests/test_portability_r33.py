"""Round 33: an export of adopted notes restores into a new repository (the store.include pattern
travels with each line), a revert names every memory its commit changes, a long commit subject is cut
at a word, and a file name with a backslash is reachable by the path `list` shows.

Real repositories in temp dirs, driven through the service and the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, run_cli, settings_for

from remnic.errors import NotFoundError, ValidationError
from remnic.memfile.paths import repo_relative, to_posix
from remnic.repo.messages import MAX_SUBJECT, format_message
from remnic.service.memory import Memory

TRIP = "# Trip\n\nWe fly to Porto in May.\n"


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Memory]:
    """A folder of notes adopted with `init --adopt 'notes/**'` and synced, plus one ordinary memory."""
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "trip.md").write_text(TRIP, encoding="utf-8")
    mem = Memory.init(root, settings=settings_for(root), adopt=["notes/**"])
    mem.sync()
    mem.store("We cut releases every Tuesday", category="decision")
    yield mem
    mem.close()


def _new(tmp_path: Path, name: str = "new") -> Memory:
    root = tmp_path / name
    return Memory.init(root, settings=settings_for(root))


def _export(mem: Memory, tmp_path: Path) -> tuple[Path, list[dict]]:
    out = tmp_path / "backup.jsonl"
    result = run_cli("export", "--memory-dir", str(mem.root), "--out", str(out))
    assert result.code == 0, result.err
    return out, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_an_adopted_note_carries_its_pattern_and_import_into_a_new_repository_adds_it(
    vault: Memory, tmp_path: Path
) -> None:
    backup, lines = _export(vault, tmp_path)
    by_path = {line["path"]: line for line in lines}
    assert by_path["notes/trip.md"]["storeInclude"] == "notes/**"
    assert "storeInclude" not in by_path["decisions/we-cut-releases-every-tuesday.md"]  # a category folder needs none
    new = _new(tmp_path)
    try:
        dry = run_cli("import", str(backup), "--memory-dir", str(new.root), "--dry-run", "--json")
        assert dry.code == 0, dry.err
        assert dry.json()["storeIncludeAdded"] == ["notes/**"] and dry.json()["wouldImport"] == 2
        head = git(new.root, "rev-parse", "HEAD")
        assert git(new.root, "rev-parse", "HEAD") == head  # the dry run committed nothing
        done = run_cli("import", str(backup), "--memory-dir", str(new.root))
        assert done.code == 0, done.err
        assert "added store.include pattern 'notes/**' to remnic.config.json" in done.out
        # byte for byte, and the pattern in the import's own commit
        assert (new.root / "notes" / "trip.md").read_bytes() == (vault.root / "notes" / "trip.md").read_bytes()
        changed = git(new.root, "show", "--name-only", "--format=", "HEAD").split()
        assert sorted(changed) == ["decisions/we-cut-releases-every-tuesday.md", "notes/trip.md", "remnic.config.json"]
        config = json.loads((new.root / "remnic.config.json").read_text(encoding="utf-8"))
        assert config["store"]["include"] == ["notes/**"]
    finally:
        new.close()
    reopened = Memory.open(new.root)
    try:  # a new process reads the pattern from the config: the note is a memory, and found
        assert {r.path for r in reopened.list()} == {"notes/trip.md", "decisions/we-cut-releases-every-tuesday.md"}
        assert [h.path for h in reopened.recall("Porto trip in May").hits][:1] == ["notes/trip.md"]
    finally:
        reopened.close()
    again = run_cli("import", str(backup), "--memory-dir", str(vault.root), "--json")  # its own repository: as before
    assert again.code == 0 and again.json()["storeIncludeAdded"] == [] and again.json()["imported"] == 0


def test_an_export_from_before_store_include_names_the_pattern_to_add(vault: Memory, tmp_path: Path) -> None:
    _backup, lines = _export(vault, tmp_path)
    old = [{k: v for k, v in line.items() if k != "storeInclude"} for line in lines]
    new = _new(tmp_path)
    try:
        with pytest.raises(ValidationError) as caught:
            new.import_records(old)
        assert "`remnic init DIR --adopt 'notes/**'`" in str(caught.value.problems[0].message)
        assert not (new.root / "decisions" / "we-cut-releases-every-tuesday.md").exists()  # all or nothing
    finally:
        new.close()
    readied = Memory.init(tmp_path / "new", settings=settings_for(tmp_path / "new"), adopt=["notes/**"])
    try:  # the way the message names
        assert len(readied.import_records(old).records) == 2
    finally:
        readied.close()


def test_a_store_include_that_does_not_match_the_path_is_refused(vault: Memory, tmp_path: Path) -> None:
    _backup, lines = _export(vault, tmp_path)
    note = next(line for line in lines if line["path"] == "notes/trip.md")
    new = _new(tmp_path)
    try:
        with pytest.raises(ValidationError) as caught:
            new.import_records([{**note, "storeInclude": "journal/**"}])
        assert caught.value.problems[0].field == "storeInclude"
        assert "include" not in (new.root / "remnic.config.json").read_text(encoding="utf-8")
    finally:
        new.close()


def test_a_forced_revert_names_the_successor_it_changed(memory: Memory) -> None:
    old = memory.store("We cut releases every Tuesday", category="decision").record
    new = memory.store("We cut releases every Wednesday", category="decision", extra={"supersedes": old.id}).record
    result = run_cli("versions", "revert", old.id, "v1", "--force", "--memory-dir", str(memory.root), "--json")
    assert result.code == 0, result.err
    assert result.json()["alsoChanged"] == [{"id": new.id, "path": new.path, "change": "supersedes-dropped"}]
    assert "supersedes" not in memory.get(new.id).frontmatter
    subject, _, body = git(memory.root, "log", "-1", "--format=%s%x00%b").partition("\0")
    assert subject.endswith("and 1 linked memory") and len(subject) <= MAX_SUBJECT
    assert f"Also changed: {new.id} ({new.path}) no longer supersedes {old.id}" in body
    # v2 is superseded by Wednesday's, whose `supersedes` the revert gives back: named too
    text = run_cli("versions", "revert", old.id, "v2", "--memory-dir", str(memory.root))
    assert text.code == 0, text.err
    assert f"also changed in that commit:\n  {new.id} ({new.path}) supersedes {old.id} again" in text.out


def test_a_long_subject_is_cut_at_a_word_with_an_ellipsis_and_kept_whole_in_the_body() -> None:
    subject = "remnic revert: " + " ".join(f"word{i:03d}" for i in range(40))
    message = format_message(subject, {"Operation": "revert"})
    first, _, rest = message.partition("\n")
    assert first.endswith("…") and len(first) <= MAX_SUBJECT
    assert first[:-1].split()[-1].startswith("word") and len(first[:-1].split()[-1]) == 7  # a whole word
    assert rest.startswith("\n" + subject + "\n\nRemnic-Operation: revert")
    assert format_message("short", {}).startswith("short\n")


def test_a_file_name_with_a_backslash_is_reachable_by_the_path_list_shows(memory: Memory) -> None:
    name = "facts/a\\b.md"
    (memory.root / name).write_text("---\nid: mem_bslash000000000001\ncategory: fact\n---\nbackslash body\n")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-qm", "hand")
    assert name in {r.path for r in memory.list()}
    assert memory.get(name).id == "mem_bslash000000000001"
    assert [v.path for v in memory.versions(name)] == [name]
    shown = run_cli("get", name, "--memory-dir", str(memory.root), "--json")
    assert shown.code == 0 and shown.json()["path"] == name
    with pytest.raises(NotFoundError, match=r"facts/x\\y\.md"):  # the error names the path as typed
        memory.get("facts/x\\y.md")


def test_backslashes_are_separators_on_windows_only() -> None:
    assert to_posix("facts\\x.md", sep="\\") == "facts/x.md"
    assert to_posix("facts\\x.md", sep="/") == "facts\\x.md"
    assert repo_relative("./facts/a\\b.md") == "facts/a\\b.md"


# --- v3: the pattern is judged and written by the repository's own remnic.config.json ---


def _include(root: Path) -> list[str]:
    return json.loads((root / "remnic.config.json").read_text(encoding="utf-8")).get("store", {}).get("include", [])


def _commit_all(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "by hand")


def test_import_run_inside_the_old_vault_still_writes_the_pattern_to_the_new_repository(
    vault: Memory, tmp_path: Path
) -> None:
    backup, _lines = _export(vault, tmp_path)
    new = _new(tmp_path)
    new.close()
    # The vault's ./remnic.config.json is a config layer here, holding notes/**: not the new repository's.
    r = run_cli("import", str(backup), "--memory-dir", str(new.root), cwd=vault.root)
    assert r.code == 0, r.err
    assert "added store.include pattern 'notes/**'" in r.out
    assert "notes/**" in _include(new.root)
    listed = run_cli("list", "--memory-dir", str(new.root), "--json", cwd=tmp_path).json()
    assert "notes/trip.md" in json.dumps(listed)


def test_a_config_path_whose_include_replaces_the_repositorys_is_refused_not_reported_restored(
    vault: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backup, _lines = _export(vault, tmp_path)
    new = _new(tmp_path)
    new.close()
    mine = tmp_path / "mine.json"
    mine.write_text('{"store": {"include": ["docs/**"]}}\n', encoding="utf-8")
    monkeypatch.setenv("REMNIC_CONFIG_PATH", str(mine))
    r = run_cli("import", str(backup), "--memory-dir", str(new.root), cwd=tmp_path)
    assert r.code == 2 and "adopted notes restored" not in r.out
    assert "would not be a memory for this command" in r.err and "REMNIC_CONFIG_PATH" in r.err
    assert not (new.root / "notes" / "trip.md").exists() and _include(new.root) == []


def test_import_refuses_an_uncommitted_config_edit_and_keeps_the_files_layout(vault: Memory, tmp_path: Path) -> None:
    backup, _lines = _export(vault, tmp_path)
    new = _new(tmp_path)
    new.close()
    cfg = new.root / "remnic.config.json"
    layout = '{\n    "recall": {"topK": 9},\n    "store": {\n        "include": [\n            "docs/**"\n        ]\n    }\n}\n'
    cfg.write_text(layout, encoding="utf-8")
    for args in (("--dry-run",), ()):
        r = run_cli("import", str(backup), "--memory-dir", str(new.root), *args)
        assert r.code == 2 and "remnic.config.json has uncommitted changes" in r.err, r.err
    assert cfg.read_text(encoding="utf-8") == layout  # untouched, and still uncommitted
    assert git(new.root, "status", "--porcelain", "--", "remnic.config.json").strip()
    _commit_all(new.root)
    r = run_cli("import", str(backup), "--memory-dir", str(new.root))
    assert r.code == 0, r.err
    # Only the list changed: one pattern a line, indented as the one before it.
    assert cfg.read_text(encoding="utf-8") == layout.replace('"docs/**"', '"docs/**",\n            "notes/**"')


def test_a_broad_pattern_names_the_notes_here_it_makes_memories(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "inbox.md").write_text("# Inbox\n\nbuy milk\n", encoding="utf-8")
    old = Memory.init(root, settings=settings_for(root), adopt=["**"])
    old.sync()
    backup, lines = _export(old, tmp_path)
    old.close()
    assert lines[0]["storeInclude"] == "**"
    new = _new(tmp_path)
    new.close()
    (new.root / "scratch").mkdir()
    (new.root / "scratch" / "todo.md").write_text("my scratch todo\n", encoding="utf-8")
    _commit_all(new.root)
    dry = run_cli("import", str(backup), "--memory-dir", str(new.root), "--dry-run")
    assert "would make 1 note already here a memory too (scratch/todo.md" in dry.out, dry.out
    r = run_cli("import", str(backup), "--memory-dir", str(new.root), "--json")
    assert r.code == 0, r.err
    assert r.json()["alsoAdopted"] == ["scratch/todo.md"]


def test_import_messages_about_store_include(vault: Memory, tmp_path: Path) -> None:
    backup, lines = _export(vault, tmp_path)
    trip = next(line for line in lines if line["path"] == "notes/trip.md")
    new = _new(tmp_path)
    new.close()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**trip, "storeInclude": ["notes/**"]}) + "\n", encoding="utf-8")
    r = run_cli("import", str(bad), "--memory-dir", str(new.root))
    assert r.code == 2 and "storeInclude: must be a string (a glob pattern such as 'notes/**'), got an array" in r.err
    old = tmp_path / "old.jsonl"  # an export from before storeInclude, of a note at the root
    root_note = {k: v for k, v in trip.items() if k != "storeInclude"} | {"path": "trip.md"}
    old.write_text(json.dumps(root_note) + "\n", encoding="utf-8")
    r = run_cli("import", str(old), "--memory-dir", str(new.root))
    assert r.code == 2 and "--adopt '*.md'" in r.err
    real = tmp_path / "real.json"
    real.write_text("{}\n", encoding="utf-8")
    cfg = new.root / "remnic.config.json"
    cfg.unlink()
    cfg.symlink_to(real)
    _commit_all(new.root)
    r = run_cli("import", str(backup), "--memory-dir", str(new.root))
    assert r.code == 2 and "remnic.config.json is a symbolic link" in r.err, r.err
    assert "malformed memory file" not in r.err and real.read_text(encoding="utf-8") == "{}\n"


def test_reimport_after_the_pattern_was_removed_names_it(vault: Memory, tmp_path: Path) -> None:
    backup, _lines = _export(vault, tmp_path)
    cfg = vault.root / "remnic.config.json"
    data = json.loads(cfg.read_text(encoding="utf-8"))
    data["store"]["include"] = []
    cfg.write_text(json.dumps(data), encoding="utf-8")
    _commit_all(vault.root)
    vault.close()
    r = run_cli("import", str(backup), "--memory-dir", str(vault.root), cwd=tmp_path)
    assert r.code == 2
    assert "already exists in this repository, but is no memory: adding store.include 'notes/**'" in r.err, r.err


def test_a_windows_style_path_finds_the_file_with_slashes(tmp_path: Path) -> None:
    root = tmp_path / "r"
    mem = Memory.init(root, settings=settings_for(root))
    path = mem.store("Windows probe", category="fact").record.path
    mem.close()
    r = run_cli("get", path.replace("/", "\\"), "--memory-dir", str(root))
    assert r.code == 0 and path in r.out, r.err
    assert run_cli("versions", "list", path.replace("/", "\\"), "--memory-dir", str(root)).code == 0
