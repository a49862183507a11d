"""`remnic sync run`: diff-aware, validating, normalising, committing; on real git repositories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import git, run_cli

from remnic.config import StoreSettings
from remnic.memfile.model import content_hash, original_hash, parse_file, provisional_id
from remnic.memfile.normalize import planned_changes, render
from remnic.memfile.validate import check_text
from remnic.service.memory import Memory
from remnic.sync.engine import indexed_paths
from remnic.sync.state import SyncState

STORE = StoreSettings()


def write(memory: Memory, rel: str, text: str | bytes) -> Path:
    path = memory.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


def head_subject(memory: Memory) -> str:
    return git(memory.root, "log", "-1", "--format=%s").strip()


def commit_count(memory: Memory) -> int:
    return int(git(memory.root, "rev-list", "--count", "HEAD"))


def porcelain(memory: Memory) -> str:
    return git(memory.root, "status", "--porcelain", "--untracked-files=all")


def committed_paths(memory: Memory, rev: str = "HEAD") -> list[str]:
    return sorted(p for p in git(memory.root, "show", "--name-only", "--format=", rev).splitlines() if p)


def index_paths(memory: Memory) -> dict[str, str | None]:
    """id → path as the index has it, for every memory file that parses."""
    return {r.id: memory.index.path_of(r.id) for r in memory.list()}


def assert_index_matches_files(memory: Memory, absent_ids: tuple[str, ...] = ()) -> None:
    """The index holds exactly the valid memory files, each under its id, and reflects HEAD."""
    live = {r.path: r.id for r in memory.list()}
    assert indexed_paths(memory.index) == set(live)
    for path, memory_id in live.items():
        assert memory.index.path_of(memory_id) == path, (memory_id, path)
    for memory_id in absent_ids:
        assert memory.index.path_of(memory_id) is None
    assert memory.index.manifest().commit == memory.ledger.head()


def found(memory: Memory, query: str) -> list[str]:
    """Ids recall returns for ``query`` (searchable = indexed with its current text)."""
    return [hit.id for hit in memory.recall(query, top_k=5)]


# --- pure parts: validation and normalisation ---


def test_body_only_file_gets_id_and_defaults_body_untouched() -> None:
    body = "Ana prefers tabs.\n\nSecond paragraph with  two spaces.\n"
    checked = check_text(body, "preferences/tabs.md", STORE)
    assert checked.ok and not checked.has_frontmatter
    plan = planned_changes(checked, now="2026-04-20T17:30:00.000Z", store=STORE)
    text, meta = render(checked, plan)
    assert text.endswith("---\n" + body)
    again = parse_file(text, "preferences/tabs.md")
    assert again.body == body
    assert again.id == provisional_id("preferences/tabs.md")
    assert again.frontmatter["category"] == "preference"
    assert again.frontmatter["source"] == "manual"
    assert again.frontmatter["status"] == "active"
    assert again.frontmatter["contentHash"] == original_hash(body.strip())
    assert again.frontmatter["created"] == again.frontmatter["updated"] == "2026-04-20T17:30:00.000Z"
    assert planned_changes(check_text(text, "preferences/tabs.md", STORE), now="x", store=STORE) == {}


def test_edit_patches_only_the_lines_it_must_keeping_comments_unknown_keys_and_order() -> None:
    text = (
        "---\n# written by hand\nzeta: keep me\nid: mem_hand1\ntags: [a, b]\n"
        "contentHash: sha256:stale\nupdated: 2020-01-01T00:00:00.000Z\nnested:\n  deep: [1, 2]\n---\n"
        "Edited body\r\nwith CRLF inside\n"
    )
    checked = check_text(text, "facts/x.md", STORE)
    plan = planned_changes(checked, now="2026-04-20T17:30:00.000Z", store=STORE)
    assert set(plan) == {"contentHash", "updated"}
    new, meta = render(checked, plan)
    lines = new.split("---\n")[1].splitlines()
    assert lines[:4] == ["# written by hand", "zeta: keep me", "id: mem_hand1", "tags: [a, b]"]
    assert lines[4] == "contentHash: " + content_hash("Edited body\r\nwith CRLF inside")
    assert lines[5] == "updated: 2026-04-20T17:30:00.000Z"
    assert lines[6:] == ["nested:", "  deep: [1, 2]"]
    assert new.endswith("---\nEdited body\r\nwith CRLF inside\n")


def test_crlf_and_bom_files_keep_their_line_endings_and_body() -> None:
    body = "Windows note\r\nline two\r\n"
    checked = check_text("\ufeff" + body, "facts/win.md", STORE)
    new, _ = render(checked, planned_changes(checked, now="2026-04-20T17:30:00.000Z", store=STORE))
    assert new.startswith("\ufeff---\r\nid: ")
    assert new.endswith("---\r\n" + body)
    assert "\n" not in new.replace("\r\n", "")
    record = parse_file(new, "facts/win.md")
    assert record.body == body


def test_problems_name_path_line_and_field() -> None:
    bad_yaml = check_text("---\nid: ok\ntags: [unclosed\n---\nbody\n", "facts/a.md", STORE)
    assert not bad_yaml.ok and bad_yaml.problems[0].path == "facts/a.md" and bad_yaml.problems[0].line
    foreign_status = check_text("---\nid: ok\nstatus: actve\n---\nbody\n", "facts/a.md", STORE)
    assert foreign_status.ok and foreign_status.record.status == "active"  # the user's value, read, not refused
    secret = check_text("my key is AKIAABCDEFGHIJKLMNOP ok\n", "facts/a.md", STORE)
    assert secret.problems[0].field == "content" and "secret" in secret.problems[0].message
    conflict = check_text("a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> other\n", "facts/a.md", STORE)
    assert conflict.problems[0].line == 2 and "conflict" in conflict.problems[0].message


# --- sync run on real repositories ---


def test_create_edit_and_nothing_changed(memory: Memory) -> None:
    first = memory.sync()
    body = "We cut releases every Tuesday.\n"
    write(memory, "decisions/release.md", body)
    before = commit_count(memory)
    report = memory.sync()
    assert [(c.kind, c.path) for c in report.changes] == [("added", "decisions/release.md")]
    assert report.commit and commit_count(memory) == before + 1
    assert head_subject(memory) == "remnic sync: add decisions/release.md"
    trailers = git(memory.root, "log", "-1", "--format=%(trailers:only,unfold)")
    assert "Remnic-Operation: sync" in trailers and f"Remnic-Memory-Id: {report.changes[0].id}" in trailers
    text = (memory.root / "decisions/release.md").read_text()
    assert text.endswith("---\n" + body)
    assert porcelain(memory) == ""
    assert memory.sync().mode == "noop"
    assert first.mode == "full"

    # A body edit: updated + contentHash follow, nothing else moves.
    path = memory.root / "decisions/release.md"
    path.write_text(text.replace("Tuesday", "Wednesday"))
    report = memory.sync()
    assert [(c.kind, c.normalized) for c in report.changes] == [("modified", ["contentHash", "updated"])]
    record = memory.files.read("decisions/release.md")
    assert record.frontmatter["contentHash"] == original_hash("We cut releases every Wednesday.")
    assert record.body == body.replace("Tuesday", "Wednesday")
    assert committed_paths(memory) == ["decisions/release.md"]
    assert_index_matches_files(memory)
    assert found(memory, "when do we cut releases? Wednesday")[0] == record.id


def test_only_processed_paths_are_committed_other_changes_stay(memory: Memory) -> None:
    (memory.root / "README.md").write_text("my own notes\n")
    (memory.root / "remnic.config.json").write_text('{"recall": {"topK": 5}}\n')
    git(memory.root, "add", "remnic.config.json")
    write(memory, "facts/editor.md", "Ana uses vim.\n")
    report = memory.sync()
    assert committed_paths(memory) == ["facts/editor.md"]
    status = porcelain(memory)
    assert " M README.md" in status and "M  remnic.config.json" in status
    assert report.pending == []


def test_malformed_file_amid_good_ones_is_reported_untouched_and_uncommitted(memory: Memory) -> None:
    bad = b"---\nid: mem_bad\nstatus: [actve\nconfidence: 2\n---\nBroken but mine\n"
    write(memory, "facts/bad.md", bad)
    write(memory, "facts/good-one.md", "Good one.\n")
    write(memory, "facts/good-two.md", "Good two.\n")
    write(memory, "facts/bad-yaml.md", "---\ntags: [oops\n---\nx\n")
    report = memory.sync()
    assert sorted(c.path for c in report.changes) == ["facts/good-one.md", "facts/good-two.md"]
    assert report.malformed_paths == ["facts/bad-yaml.md", "facts/bad.md"]
    fields = {(p.path, p.field, p.line) for p in report.problems}
    assert ("facts/bad.md", "frontmatter", 3) in fields
    assert (memory.root / "facts/bad.md").read_bytes() == bad
    assert committed_paths(memory) == ["facts/good-one.md", "facts/good-two.md"]
    assert "?? facts/bad.md" in porcelain(memory)
    assert indexed_paths(memory.index) == {"facts/good-one.md", "facts/good-two.md"}
    assert memory.index.path_of("mem_bad") is None
    doctor = {c["name"]: c for c in memory.doctor()}
    assert doctor["memory-files"]["status"] == "fail"
    assert any("facts/bad.md:3" in p for p in doctor["memory-files"]["problems"])

    # Still reported next time; once fixed it is indexed and committed.
    assert memory.sync().malformed_paths == ["facts/bad-yaml.md", "facts/bad.md"]
    write(memory, "facts/bad.md", bad.replace(b"[actve", b"active").replace(b"confidence: 2", b"confidence: 0.8"))
    (memory.root / "facts/bad-yaml.md").unlink()
    report = memory.sync()
    assert not report.problems
    assert [(c.kind, c.path, c.id) for c in report.changes] == [("added", "facts/bad.md", "mem_bad")]
    assert porcelain(memory) == ""
    assert SyncState.load(memory.root).pending == {}
    assert_index_matches_files(memory)
    assert found(memory, "broken but mine")[0] == "mem_bad"


def test_cli_reports_problems_with_exit_1_and_json(memory: Memory) -> None:
    write(memory, "facts/bad.md", "---\nstatus: [nope\n---\nx\n")
    write(memory, "facts/ok.md", "fine\n")
    result = run_cli("sync", "run", "--memory-dir", str(memory.root))
    assert result.code == 1
    assert "! facts/bad.md:2: frontmatter: invalid YAML" in result.out
    assert "A facts/ok.md" in result.out
    result = run_cli("sync", "run", "--json", "--memory-dir", str(memory.root))
    data = json.loads(result.out)
    assert data["malformed"] == ["facts/bad.md"] and data["problems"][0]["line"] == 2
    assert data["changes"] == []


def test_rename_keeps_id_and_history(memory: Memory) -> None:
    record = memory.store("Ana prefers four-space indentation", category="preference").record
    old = record.path
    (memory.root / old).rename(memory.root / "preferences/indentation.md")
    report = memory.sync()
    assert [(c.kind, c.previous_path, c.path, c.id) for c in report.changes] == [
        ("renamed", old, "preferences/indentation.md", record.id)
    ]
    assert head_subject(memory) == f"remnic sync: rename {old} -> preferences/indentation.md"
    versions = memory.versions("preferences/indentation.md")
    assert [v.path for v in versions] == [old, "preferences/indentation.md"]
    assert memory.get(record.id).path == "preferences/indentation.md"
    assert_index_matches_files(memory)


def test_git_mv_and_git_rm_staged_by_the_user_are_committed(memory: Memory) -> None:
    a = memory.store("First memory for git mv", category="fact").record
    b = memory.store("Second memory for git rm", category="fact").record
    git(memory.root, "mv", a.path, "facts/moved.md")
    git(memory.root, "rm", "-q", b.path)
    report = memory.sync()
    kinds = sorted((c.kind, c.path) for c in report.changes)
    assert kinds == [("deleted", b.path), ("renamed", "facts/moved.md")]
    assert porcelain(memory) == ""
    assert memory.get(a.id).path == "facts/moved.md"
    assert_index_matches_files(memory, absent_ids=(b.id,))


def test_rename_of_an_uncommitted_body_only_file_keeps_its_id_by_content(memory: Memory) -> None:
    write(memory, "facts/draft.md", "A draft about the deploy freeze.\n")
    first = memory.sync(commit=False)
    draft_id = first.changes[0].id
    assert first.not_committed and first.pending == ["facts/draft.md"]
    # The user renames and strips the frontmatter sync added: same content, so the same memory.
    (memory.root / "facts/draft.md").unlink()
    write(memory, "facts/deploy-freeze.md", "A draft about the deploy freeze.\n")
    report = memory.sync()
    assert [(c.kind, c.previous_path, c.path, c.id) for c in report.changes] == [
        ("renamed", "facts/draft.md", "facts/deploy-freeze.md", draft_id)
    ]
    assert committed_paths(memory) == ["facts/deploy-freeze.md"]
    assert porcelain(memory) == ""


def test_delete_leaves_the_index_and_is_committed(memory: Memory) -> None:
    record = memory.store("Temporary memory to delete", category="fact").record
    (memory.root / record.path).unlink()
    report = memory.sync()
    assert [(c.kind, c.path, c.id) for c in report.changes] == [("deleted", record.path, record.id)]
    assert head_subject(memory) == f"remnic sync: delete {record.path}"
    assert porcelain(memory) == ""
    assert_index_matches_files(memory, absent_ids=(record.id,))


def test_edit_committed_with_plain_git_is_indexed_and_its_stale_hash_fixed(memory: Memory) -> None:
    record = memory.store("The API rate limit is 100 per minute", category="fact").record
    memory.sync()
    path = memory.root / record.path
    path.write_text(path.read_text().replace("is 100 per", "is 250 per"))
    git(memory.root, "commit", "-qam", "bump the limit by hand")
    before = commit_count(memory)
    report = memory.sync()
    assert [(c.kind, c.origin) for c in report.changes] == [("modified", "git")]
    # contentHash was stale in the user's commit: sync fixes it in a commit of its own.
    assert report.commit and committed_paths(memory) == [record.path]
    assert report.changes[0].normalized == ["contentHash", "updated"]
    assert commit_count(memory) == before + 1
    assert SyncState.load(memory.root).commit == memory.ledger.head()
    assert memory.sync().mode == "noop"


def test_plain_git_commit_of_a_normalised_file_needs_no_sync_commit(memory: Memory) -> None:
    record = memory.store("Staging deploys at noon", category="fact").record
    memory.sync()
    path = memory.root / record.path
    text = path.read_text()
    git(memory.root, "mv", record.path, "facts/staging.md")
    git(memory.root, "commit", "-qm", "rename by hand")
    before = commit_count(memory)
    report = memory.sync()
    assert [(c.kind, c.path, c.origin) for c in report.changes] == [("renamed", "facts/staging.md", "git")]
    assert commit_count(memory) == before
    assert (memory.root / "facts/staging.md").read_text() == text

    git(memory.root, "rm", "-q", "facts/staging.md")
    git(memory.root, "commit", "-qm", "remove by hand")
    result = run_cli("sync", "run", "--memory-dir", str(memory.root))
    assert result.code == 0, result.err
    assert "indexed 1 change(s) already committed in git; nothing to commit" in result.out


def test_no_commit_leaves_edits_pending_until_a_committing_sync(memory: Memory) -> None:
    write(memory, "facts/a.md", "Alpha.\n")
    report = memory.sync(commit=False)
    assert report.commit is None and report.not_committed.startswith("--no-commit")
    assert "?? facts/a.md" in porcelain(memory)
    again = memory.sync(commit=False)
    assert again.changes == []  # unchanged since the last run: nothing new to report
    report = memory.sync()
    assert [c.path for c in report.changes] == ["facts/a.md"] and report.commit
    assert porcelain(memory) == ""


def test_checkout_of_an_older_commit_is_indexed_not_committed(memory: Memory) -> None:
    first = memory.store("Version one of the plan", category="decision").record
    old_head = memory.ledger.head()
    path = memory.root / first.path
    path.write_text(path.read_text().replace("one", "two"))
    later = memory.store("Added after the old commit", category="fact").record
    memory.sync()
    main_head = memory.ledger.head()
    git(memory.root, "checkout", "-q", old_head)
    report = memory.sync()
    by_path = {c.path: c for c in report.changes}
    assert by_path[later.path].kind == "deleted" and by_path[first.path].kind == "modified"
    assert all(c.origin == "git" for c in report.changes) and report.commit is None
    assert memory.ledger.head() == old_head
    assert "one" in memory.get(first.id).content
    assert_index_matches_files(memory, absent_ids=(later.id,))
    # An edit while detached is indexed but not committed.
    write(memory, "facts/detached.md", "Written while detached.\n")
    report = memory.sync()
    assert report.commit is None and "detached" in report.not_committed
    (memory.root / "facts/detached.md").unlink()
    git(memory.root, "checkout", "-q", "main")
    report = memory.sync()
    assert memory.ledger.head() == main_head
    assert "two" in memory.get(first.id).content and memory.get(later.id)
    assert porcelain(memory) == ""
    assert_index_matches_files(memory)


def test_copied_file_gets_a_new_id(memory: Memory) -> None:
    record = memory.store("Original memory to copy", category="fact").record
    memory.sync()
    shutil.copy(memory.root / record.path, memory.root / "facts/copy.md")
    report = memory.sync()
    change = report.changes[0]
    assert change.path == "facts/copy.md" and change.id != record.id and "copy got a new id" in change.note
    assert memory.files.read("facts/copy.md").id == change.id
    assert memory.files.read(record.path).id == record.id


def test_gitignored_memory_files_are_left_alone(memory: Memory) -> None:
    (memory.root / ".gitignore").write_text(".remnic/\ndrafts/\n")
    git(memory.root, "commit", "-qam", "ignore drafts")
    write(memory, "drafts/secret-plan.md", "Not for the index.\n")
    report = memory.sync()
    assert report.changes == []
    assert (memory.root / "drafts/secret-plan.md").read_text() == "Not for the index.\n"
    report = memory.sync(full=True)
    assert report.changes == [] and report.mode == "full"


def test_lost_state_falls_back_to_the_index_commit_or_a_full_pass(memory: Memory) -> None:
    kept = memory.store("Memory before the state is lost", category="fact").record
    write(memory, "facts/hand.md", "Hand written.\n")
    memory.sync()
    (memory.root / ".remnic" / "sync-state.json").unlink()
    before = commit_count(memory)
    report = memory.sync()
    assert report.changes == [] and commit_count(memory) == before
    assert memory.sync().mode == "noop"
    # Without state and index (`rm -rf .remnic`): a full pass rebuilds the index, commits nothing.
    memory.close()
    shutil.rmtree(memory.root / ".remnic")
    (memory.root / "facts/hand.md").unlink()  # and a deletion nobody synced yet
    memory = Memory.open(settings=memory.settings)  # a closed handle refuses calls: a new one, as a new process
    report = memory.sync()
    assert report.mode == "full" and [(c.kind, c.path) for c in report.changes] == [("deleted", "facts/hand.md")]
    assert commit_count(memory) == before + 1
    assert memory.sync().mode == "noop"
    assert_index_matches_files(memory)
    mapping = index_paths(memory)
    assert mapping[kept.id] == kept.path


def test_empty_new_file_waits_for_text(memory: Memory) -> None:
    write(memory, "facts/new.md", "")
    report = memory.sync()
    assert report.changes == [] and report.skipped[0]["path"] == "facts/new.md"
    assert (memory.root / "facts/new.md").read_text() == ""
    write(memory, "facts/new.md", "Now with text.\n")
    assert [c.path for c in memory.sync().changes] == ["facts/new.md"]


def test_mid_rebase_nothing_is_committed(memory: Memory) -> None:
    memory.store("Base memory", category="fact")
    git_dir = memory.root / ".git"
    (git_dir / "rebase-merge").mkdir()
    try:
        write(memory, "facts/during.md", "Written during a rebase.\n")
        report = memory.sync()
        assert report.commit is None and "rebase" in report.not_committed
    finally:
        (git_dir / "rebase-merge").rmdir()
    report = memory.sync()
    assert report.commit and [c.path for c in report.changes] == ["facts/during.md"]


def test_index_only_sync_comes_back_to_normalise_later(memory: Memory) -> None:
    memory.sync()
    write(memory, "facts/pulled.md", "Body-only file committed by someone else.\n")
    git(memory.root, "add", "facts/pulled.md")
    git(memory.root, "commit", "-qm", "plain add")
    report = memory.sync(commit=False, normalize=False)  # what the post-merge/checkout hooks run
    assert [c.normalized for c in report.changes] == [[]]
    assert (memory.root / "facts/pulled.md").read_text() == "Body-only file committed by someone else.\n"
    report = memory.sync()
    assert [c.path for c in report.changes] == ["facts/pulled.md"] and report.commit
    assert memory.files.read("facts/pulled.md").has_id


def test_history_rewritten_and_garbage_collected_falls_back_to_a_full_pass(memory: Memory) -> None:
    kept = memory.store("A memory the reset keeps", category="fact").record
    keep = memory.ledger.head()
    dropped = memory.store("A memory the reset throws away", category="fact").record
    memory.sync()
    memory.close()
    git(memory.root, "reset", "-q", "--hard", keep)
    git(memory.root, "reflog", "expire", "--expire=now", "--all")
    git(memory.root, "gc", "-q", "--prune=now")
    memory = Memory.open(settings=memory.settings)  # a closed handle refuses calls: a new one, as a new process
    assert not memory.ledger.commit_exists(SyncState.load(memory.root).commit)
    before = commit_count(memory)
    report = memory.sync()
    assert report.mode == "full" and report.changes == [] and commit_count(memory) == before
    assert_index_matches_files(memory, absent_ids=(dropped.id,))
    assert found(memory, "the reset keeps")[0] == kept.id


def test_a_file_whose_id_line_was_deleted_keeps_its_committed_id(memory: Memory) -> None:
    record = memory.store("Prod DB is db-prod-3", category="fact").record
    path = memory.root / record.path
    path.write_text("".join(line for line in path.read_text().splitlines(True) if not line.startswith("id:")))
    report = memory.sync()
    assert [(c.kind, c.path, c.id) for c in report.changes] == [("modified", record.path, record.id)]
    assert memory.files.read(record.path).frontmatter["id"] == record.id
    assert memory.get(record.id).path == record.path
    # Committed by hand without it: the sync base's version still names the id.
    path.write_text("".join(line for line in path.read_text().splitlines(True) if not line.startswith("id:")))
    git(memory.root, "commit", "-qam", "dropped the id line")
    memory.sync()
    assert memory.files.read(record.path).frontmatter["id"] == record.id
    assert_index_matches_files(memory)


def test_a_body_only_file_with_a_bom_is_indexed_with_the_text_get_returns(memory: Memory) -> None:
    write(memory, "facts/bom.md", b"\xef\xbb\xbfBOM note without frontmatter narwhal\n")
    memory.sync()
    assert (memory.root / "facts/bom.md").read_bytes().startswith(b"\xef\xbb\xbf---\n")  # the BOM stays first
    got = memory.files.read("facts/bom.md")
    assert got.content == "BOM note without frontmatter narwhal"
    with memory.index.lock:
        ((_fm, content),) = memory.index.view()[2].hit_fields(["facts/bom.md"]).values()
    assert content == got.content
