"""A new user's first hour, part two: store --supersedes, revert, forget, get, init, entities,
serve and the watcher's words — each as the tester met it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli, run_remnic

from remnic.config import settings_for
from remnic.service.memory import Memory


def _cli(memory: Memory, *args: str) -> str:
    result = run_cli(*args, "--memory-dir", str(memory.root))
    assert result.code == 0, result.err
    return result.out


def _decision(memory: Memory) -> str:
    return memory.store(
        "We cut releases every Tuesday", category="decision", tags=["ops", "release"], importance=0.95
    ).id


def test_store_supersedes_inherits_category_tags_and_importance_and_says_so(memory: Memory) -> None:
    old = _decision(memory)
    out = _cli(memory, "store", "We cut releases every Wednesday", "--supersedes", old)
    new = memory.list(status="active")[0]
    assert new.category == "decision" and new.path.startswith("decisions/")
    assert list(new.tags) == ["ops", "release"] and new.importance == 0.95
    head = git(memory.root, "rev-parse", "HEAD").strip()
    assert f"stored {new.id} → {new.path} in commit {head[:8]}" in out
    assert f"supersedes {old} (now superseded); category, tags, importance taken from it" in out
    assert memory.get(old).status == "superseded"


def test_what_the_caller_gives_is_kept_and_a_plain_store_is_still_a_fact(memory: Memory) -> None:
    old = _decision(memory)
    data = run_cli(
        "store", "Releases are on Wednesdays now", "--supersedes", old, "--category", "fact", "--tags", "x",
        "--importance", "0.3", "--json", "--memory-dir", str(memory.root),
    ).json()  # fmt: skip
    assert data["category"] == "fact" and data["frontmatter"]["tags"] == ["x"]
    assert data["frontmatter"]["importanceScore"] == 0.3 and data["superseded"] == old
    plain = memory.store("The cafeteria opens at eight").record  # the API's default, no supersedes
    assert plain.category == "fact" and plain.importance == 0.5 and not plain.tags
    # The API inherits only what is left None: an explicit category (HTTP's default "fact") is kept.
    other = memory.store("Deploys freeze on Fridays", category="decision", tags=["ops"], importance=0.8).id
    api = memory.store("Deploys freeze on Thursdays", category="fact", extra={"supersedes": other}).record
    assert api.category == "fact" and list(api.tags) == ["ops"] and api.importance == 0.8


def test_reverting_a_superseded_then_forgotten_memory_is_refused_naming_its_successor(memory: Memory) -> None:
    old = _decision(memory)
    path = memory.get(old).path
    new = memory.store("We cut releases every Wednesday", extra={"supersedes": old}).id
    memory.forget(old, "obsolete")
    head = git(memory.root, "rev-parse", "HEAD")
    refused = run_cli("versions", "revert", path, "v1", "--memory-dir", str(memory.root))
    assert refused.code == 2 and new in refused.err and "--force" in refused.err
    assert git(memory.root, "rev-parse", "HEAD") == head and memory.get(old).status == "forgotten"

    _cli(memory, "versions", "revert", path, "v1", "--force")
    assert memory.get(old).status == "active"
    assert "supersedes" not in memory.get(new).frontmatter  # one current memory each, no dangling claim
    message = git(memory.root, "log", "-1", "--format=%B")  # one commit for both files, naming both
    assert message.startswith(f"remnic revert: {path} to v1") and new in message.split("\n\n", 1)[1]
    assert sorted(git(memory.root, "show", "--name-only", "--format=", "HEAD").split()) == sorted(
        [path, memory.get(new).path]
    )


def test_a_revert_nobody_supersedes_needs_no_force(memory: Memory) -> None:
    rec = memory.store("The office opens at nine").record
    memory.update(rec.id, {"importanceScore": 0.9})
    assert "reverted" in _cli(memory, "versions", "revert", rec.path, "v1")


def test_forget_says_the_file_is_kept(memory: Memory) -> None:
    rec = memory.store("A passing thought").record
    out = _cli(memory, "forget", rec.id)
    assert "marked forgotten: the file is kept (status: forgotten) and left out of recall" in out
    assert "delete the file to remove its text (git history keeps it)" in out
    assert (memory.root / rec.path).is_file()


def test_get_shows_a_crlf_note_without_its_carriage_returns(memory: Memory) -> None:
    (memory.root / "facts" / "q3.md").write_bytes(b"We ship in Q3.\r\nThen we rest.\r\n")
    _cli(memory, "sync", "run")
    out = _cli(memory, "get", "facts/q3.md")
    assert "We ship in Q3.\nThen we rest." in out and "\\x0d" not in out


def test_a_second_init_says_updated_and_counts_in_the_singular(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "facts").mkdir()
    (root / "facts" / "one.md").write_text("One note.\n")
    first = run_cli("init", str(root))
    assert first.code == 0 and first.out.startswith("initialised memory repository")
    assert "found 1 memory file; `remnic sync run` adopts it (" in first.out
    again = run_cli("init", str(root), "--adopt", "notes/**")
    assert again.code == 0 and again.out.startswith("updated memory repository") and again.err == ""


def test_entities_list_writes_nothing_and_refresh_says_what_it_committed(memory: Memory) -> None:
    memory.store("Priya Raman approved the postgres upgrade")
    head = git(memory.root, "rev-parse", "HEAD").strip()
    out = _cli(memory, "entities", "list")
    assert "Priya Raman" in out and "entities/person-priya-raman.md" in out
    assert git(memory.root, "rev-parse", "HEAD").strip() == head
    assert git(memory.root, "status", "--porcelain") == "" and not list((memory.root / "entities").glob("*.md"))
    listed = run_cli("entities", "list", "--json", "--memory-dir", str(memory.root)).json()
    assert "rebuilt" not in listed and [e["name"] for e in listed["entities"]] == ["postgres", "Priya Raman"]
    refreshed = _cli(memory, "entities", "refresh")
    now = git(memory.root, "rev-parse", "HEAD").strip()
    assert now != head and f"2 pages written, 0 removed (commit {now[:12]})" in refreshed
    assert _cli(memory, "entities", "list") == out
    helped = " ".join(run_cli("entities", "list", "--help").out.split())
    assert "without writing anything (`remnic entities refresh` writes them)" in helped


def test_serve_and_daemon_refuse_a_missing_token_with_the_same_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "none.json"))
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    serve = run_remnic("serve", "--memory-dir", str(root), "--port", "18917", timeout=60)
    daemon = run_remnic("daemon", "start", "--memory-dir", str(root), "--port", "18918", timeout=60)
    assert serve.code == daemon.code == 2
    assert "no bearer token configured" in serve.err and "no bearer token configured" in daemon.err


def test_the_watchers_last_line_counts_changes_and_passes() -> None:
    from remnic.drivers.watch import watch_line

    assert watch_line({"event": "stopped", "syncs": 4, "changes": 1}) == (
        "stopped: 1 change synced in 4 sync passes; pending changes flushed"
    )


def test_a_secret_in_a_hand_edit_is_explained_once(memory: Memory) -> None:
    (memory.root / "facts" / "key.md").write_text("my key is AKIAABCDEFGHIJKLMNOP ok\n")
    out = run_cli("sync", "run", "--memory-dir", str(memory.root))
    line = next(x for x in (out.out + out.err).splitlines() if "facts/key.md" in x)
    assert line.count("not indexed") == 1 and line.count("not committed") == 1 and "store.scanSecrets" in line
