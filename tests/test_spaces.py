"""The spaces registry and its commands: create, list, switch, delete, clone, `--space` on every
command, recall across read-only spaces (the space named in results and in the X-ray), share,
promote and audit. Real repositories, the real CLI in-process and the real index."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.config import StoreSettings, load_settings
from remnic.config.spaces import load_registry, registry_path
from remnic.errors import ValidationError
from remnic.service.memory import Memory


def ok(*args: str) -> dict:
    result = run_cli(*args, "--json")
    assert result.code == 0, (args, result.err)
    return json.loads(result.out) if result.out.strip() else {}


def test_registry_location_follows_the_environment(tmp_path: Path) -> None:
    assert registry_path({"REMNIC_SPACES_PATH": str(tmp_path / "s.json")}) == tmp_path / "s.json"
    assert registry_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "remnic" / "spaces.json"
    assert registry_path({"HOME": str(tmp_path)}) == tmp_path / ".config" / "remnic" / "spaces.json"


def test_create_list_switch_and_space_flag(tmp_path: Path, spaces_file: Path) -> None:
    made = ok("space", "create", "work", "--path", str(tmp_path / "work"), "--kind", "project")
    assert made["created"] is True and made["mergeDriver"]["driver"].endswith("merge-file %O %A %B %P")
    assert (tmp_path / "work" / ".gitattributes").read_text().count("merge=remnic") == 2
    assert oct(spaces_file.stat().st_mode & 0o777) == "0o600"
    ok("space", "create", "home", "--path", str(tmp_path / "home-mem"))
    listed = ok("space", "list")
    assert [s["name"] for s in listed["spaces"]] == ["home", "work"] and listed["active"] is None
    stored = ok("store", "Standup moved to 9:30", "--space", "work")
    assert (tmp_path / "work" / stored["path"]).is_file()
    assert ok("list", "--space", "home")["count"] == 0 and ok("list", "--space", "work")["count"] == 1
    ok("space", "switch", "work")
    assert load_settings().memory_dir == tmp_path / "work"
    assert "active space work" in load_settings().origins["memoryDir"]
    assert ok("get", stored["id"])["id"] == stored["id"]  # the active space, no flag
    bad = run_cli("list", "--space", "nope")
    assert bad.code == 2 and "known spaces: home, work" in bad.err
    both = run_cli("list", "--space", "work", "--memory-dir", str(tmp_path))
    assert both.code == 2 and "give one of them" in both.err
    dup = run_cli("space", "create", "work")
    assert dup.code == 2 and "already exists" in dup.err
    kind = run_cli("space", "create", "x", "--kind", "galaxy")
    assert kind.code == 2 and "personal" in kind.err


def test_delete_keeps_files_unless_purge(tmp_path: Path, spaces_file: Path) -> None:
    ok("space", "create", "scratch", "--path", str(tmp_path / "scratch"))
    kept = run_cli("space", "delete", "scratch")
    assert kept.code == 0 and "--purge" in kept.out and "files are left at" in kept.out
    assert (tmp_path / "scratch" / ".git").is_dir() and "scratch" not in load_registry().spaces
    ok("space", "create", "scratch", "--path", str(tmp_path / "scratch"))  # the existing repository again
    gone = ok("space", "delete", "scratch", "--purge")
    assert gone["purged"] is True and gone["files"] > 10 and not (tmp_path / "scratch").exists()
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "keep.txt").write_text("not a memory repository")
    spaces_file.write_text(json.dumps({"spaces": {"plain": {"path": str(tmp_path / "plain")}}}))
    refused = run_cli("space", "delete", "plain", "--purge")
    assert refused.code == 2 and (tmp_path / "plain" / "keep.txt").exists()


def test_clone_registers_indexes_and_pulls(tmp_path: Path, spaces_file: Path) -> None:
    bare = tmp_path / "team.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)  # its HEAD names master
    ok("space", "create", "team", "--path", str(tmp_path / "a"), "--kind", "team", "--remote", str(bare))
    ok("store", "The team retro is on Fridays", "--space", "team")
    pushed = ok("space", "push", "team")
    assert pushed["upstreamSet"] is True
    cloned = ok("space", "clone", str(bare), str(tmp_path / "b"), "--name", "team-b")
    assert cloned["indexed"] == 1 and cloned["remote"] == str(bare) and cloned["kind"] == "team"
    assert "remnic merge-file" in git(tmp_path / "b", "config", "merge.remnic.driver")
    ok("store", "The team demo is on Thursdays", "--space", "team")
    ok("space", "push", "team")
    pulled = ok("space", "pull", "team-b")
    assert pulled["outcome"] == "fast-forward" and len(pulled["changed"]) == 1 and pulled["indexed"] == 1
    hits = ok("query", "when is the team demo", "--space", "team-b")
    assert "Thursdays" in json.dumps(hits)
    taken = run_cli("space", "clone", str(bare), str(tmp_path / "b"), "--name", "again")
    assert taken.code == 2 and "not empty" in taken.err


def test_recall_spans_read_only_spaces_and_names_the_space(tmp_path: Path, spaces_file: Path) -> None:
    ok("space", "create", "mine", "--path", str(tmp_path / "mine"))
    ok("init", str(tmp_path / "handbook"))
    ok("store", "The espresso machine on floor two is descaled on Fridays", "--memory-dir", str(tmp_path / "handbook"))
    registered = ok(
        "space", "create", "handbook", "--path", str(tmp_path / "handbook"), "--read-only", "--kind", "team"
    )
    assert registered["created"] is False  # the repository already there, registered as it is
    ok("store", "The coffee machine is descaled on Mondays", "--space", "mine")
    with Memory.open(settings=load_settings(tmp_path / "mine")) as mem:
        result = mem.recall("when is the coffee machine descaled", top_k=5, xray=True)
        spaces = {h.content: h.space for h in result.hits}
        assert spaces["The coffee machine is descaled on Mondays"] == "mine"
        assert spaces["The espresso machine on floor two is descaled on Fridays"] == "handbook"
        assert result.to_dict()["spaces"] == ["mine", "handbook"]
        assert [h.rank for h in result.hits] == list(range(1, len(result.hits) + 1))
        provenance = {r.memory_id: r.provenance.space for r in result.xray.results}
        assert set(provenance.values()) == {"mine", "handbook"}
        assert mem.recall("descaled", top_k=5, spaces=False).spaces is None
    text = run_cli("xray", "when is the espresso machine descaled", "--space", "mine")
    assert text.code == 0 and "space=handbook" in text.out
    listed = run_cli("query", "when is the espresso machine descaled", "--space", "mine").out
    assert "space handbook: facts/" in listed and "space mine:" not in listed  # only the other space is named
    refused = run_cli("space", "push", "handbook")
    assert refused.code == 2 and "read-only" in refused.err
    head = git(tmp_path / "handbook", "rev-parse", "HEAD")
    written = run_cli("store", "A note for the handbook", "--space", "handbook")
    assert written.code == 2 and "read-only" in written.err
    assert git(tmp_path / "handbook", "rev-parse", "HEAD") == head


def test_share_and_promote_copy_with_provenance_and_refuse_secrets(tmp_path: Path, spaces_file: Path) -> None:
    ok("space", "create", "mine", "--path", str(tmp_path / "mine"))
    ok("space", "create", "team", "--path", str(tmp_path / "team"), "--kind", "team")
    ok("space", "create", "ref", "--path", str(tmp_path / "ref"), "--read-only")
    source = ok("store", "Deploys need two approvals", "--space", "mine", "--tags", "ops")
    before = int(git(tmp_path / "team", "rev-list", "--count", "HEAD"))
    shared = ok("space", "share", source["id"], "--to", "team", "--space", "mine")
    assert shared["id"] != source["id"] and shared["sourceMemoryId"] == source["id"]
    assert shared["sourceSpace"] == "mine" and shared["changed"] is True
    assert int(git(tmp_path / "team", "rev-list", "--count", "HEAD")) == before + 1
    message = git(tmp_path / "team", "log", "-1", "--format=%B")
    assert "Remnic-Operation: share" in message and f"Remnic-Source-Memory-Id: {source['id']}" in message
    assert "Remnic-Source-Space: mine" in message
    copy = ok("get", shared["id"], "--space", "team")
    assert copy["frontmatter"]["tags"] == ["ops"] and copy["content"] == "Deploys need two approvals"
    again = ok("space", "share", source["id"], "--to", "team", "--space", "mine")
    assert again["changed"] is False and again["id"] == shared["id"]
    assert run_cli("space", "share", source["id"], "--to", "ref", "--space", "mine").code == 2
    assert run_cli("space", "share", source["id"], "--to", "nowhere", "--space", "mine").code == 2

    promoted = ok("space", "promote", source["id"], "--space", "mine")
    assert promoted["namespace"] == "shared" and promoted["path"].startswith("namespaces/shared/")
    assert ok("get", promoted["id"], "--space", "mine")["frontmatter"]["sourceMemoryId"] == source["id"]

    secret_file = tmp_path / "mine" / "facts" / "key.md"
    secret_file.write_text("The deploy key is AKIAABCDEFGHIJKLMNOP\n")  # committed by hand, outside remnic
    git(tmp_path / "mine", "add", "facts/key.md")
    git(tmp_path / "mine", "commit", "-qm", "a note with a key")
    head = git(tmp_path / "team", "rev-parse", "HEAD")
    with Memory.open(settings=load_settings(tmp_path / "mine")) as mem:
        mem.settings.store = StoreSettings(scan_secrets=False)  # this space lets it in; the team space does not
        mem.sync()
        record = next(r for r in mem.list() if "AKIA" in r.content)
        with pytest.raises(ValidationError, match="secret"):
            mem.share(record.id, "team")
    assert git(tmp_path / "team", "rev-parse", "HEAD") == head


def test_audit_lists_who_sent_what(tmp_path: Path, spaces_file: Path) -> None:
    ok("space", "create", "mine", "--path", str(tmp_path / "mine"))
    ok("space", "create", "team", "--path", str(tmp_path / "team"))
    start = git(tmp_path / "team", "rev-parse", "HEAD").strip()
    git(tmp_path / "team", "config", "user.name", "Ana")
    git(tmp_path / "team", "config", "user.email", "ana@example.com")
    source = ok("store", "Incidents get a written review", "--space", "mine")
    ok("space", "share", source["id"], "--to", "team", "--space", "mine")
    rows = ok("space", "audit", "team", "--since", start)
    (row,) = rows["commits"]
    assert row["operation"] == "share" and row["sourceSpace"] == "mine" and row["sourceMemoryId"] == source["id"]
    assert row["author"] == "Ana" and row["email"] == "ana@example.com" and row["local"] is True
    assert len(ok("space", "audit", "team")["commits"]) == 2
    bad = run_cli("space", "audit", "team", "--since", "deadbeef")
    assert bad.code == 2 and "since" in bad.err


def test_init_and_hooks_install_register_the_merge_driver(tmp_path: Path) -> None:
    ok("init", str(tmp_path / "m"))
    driver = git(tmp_path / "m", "config", "merge.remnic.driver").strip()
    assert driver == f"{shlex.quote(sys.executable)} -P -m remnic merge-file %O %A %B %P"  # an absolute path
    assert "*.md merge=remnic" in (tmp_path / "m" / ".gitattributes").read_text()
    # A repository made without remnic: hooks install adds both, committing .gitattributes.
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q")
    (plain / ".gitattributes").write_text("*.png binary\n")
    git(plain, "add", ".gitattributes")
    git(plain, "commit", "-qm", "attributes")
    ok("init", str(plain))
    git(plain, "config", "--remove-section", "merge.remnic")
    check = next(c for c in ok("doctor", "--memory-dir", str(plain))["checks"] if c["name"] == "merge")
    assert check["status"] == "warn" and "remnic hooks install" in check["detail"]
    installed = ok("hooks", "install", "--memory-dir", str(plain))
    assert installed["mergeDriver"]["configured"] is True
    assert (plain / ".gitattributes").read_text().startswith("*.png binary\n")
    assert "merge=remnic" in git(plain, "show", "HEAD:.gitattributes")
