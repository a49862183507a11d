"""Versions after a pull merge followed by other commits, the other side of a supersession a revert
restores, `revert ... working`, and the version fields of `show --json` / `diff --json`. Real git
repositories and clones."""

from __future__ import annotations

import pytest
from conftest import git, run_cli
from test_space_sync import only, pair  # noqa: F401  (pair: the two clones, as a fixture here)

from remnic.errors import UsageError
from remnic.service.memory import Memory


def _merged(pair) -> tuple[Memory, str, str]:  # noqa: F811
    """ben pulls a change of ana's to the memory he changed too: (ben, id, the merge commit)."""
    ana, ben = pair
    mid = only(ana)
    ana.update(mid, {}, content="Deploys go out on Thursdays after the change board")
    ana.space_push()
    ben.update(mid, {"tags": ["ops", "release"]})
    ben.space_pull()
    merge = git(ben.root, "rev-parse", "HEAD").strip()
    assert len(git(ben.root, "show", "-s", "--format=%P", merge).split()) == 2
    return ben, mid, merge


def test_a_merge_stays_its_own_version_after_unrelated_commits(pair) -> None:  # noqa: F811
    ben, mid, merge = _merged(pair)
    ben.store("Something unrelated about lunch orders", category="fact")
    other = ben.store("Another unrelated memory about the parking lot", category="fact").record
    ben.forget(other.id)
    versions = ben.versions(mid)
    last = versions[-1]
    assert last.sha == merge and last.operation == "pull" and last.label == f"v{len(versions)}"
    assert "Thursdays" in ben.read_version(mid, merge[:8]).text
    assert ben.read_version(mid, last.label).text == ben.read_version(mid, "latest").text
    assert "release" in ben.version_diff(mid, "v1", merge[:7])
    events = ben.timeline(mid)
    assert events[-1]["sha"] == merge and all(other.id not in str(e["trailers"]) for e in events)
    cli = run_cli("versions", "list", mid, "--memory-dir", str(ben.root), "--json").json()["versions"]
    assert cli[-1]["sha"] == merge
    ben.revert(mid, "v1")
    assert "Thursdays" not in ben.get(mid).body
    ben.revert(mid, merge[:8])
    assert "Thursdays" in ben.get(mid).body and "release" in ben.get(mid).tags


def test_a_merge_followed_by_an_edit_of_the_same_memory_keeps_its_place(pair) -> None:  # noqa: F811
    ben, mid, merge = _merged(pair)
    ben.store("Something unrelated about lunch orders", category="fact")
    ben.update(mid, {"tags": ["ops"]})
    ops = [(v.sha == merge, v.operation) for v in ben.versions(mid)]
    assert ops[-2:] == [(True, "pull"), (False, "update")]
    number = next(v.number for v in ben.versions(mid) if v.sha == merge)
    assert "release" in ben.read_version(mid, f"v{number}").text


def test_reviving_a_successor_whose_predecessor_is_current_again_is_refused_then_forced(memory: Memory) -> None:
    p = memory.store("On-call rotation changes every Monday", category="fact").record
    q = memory.store("On-call rotation changes every Wednesday", extra={"supersedes": p.id}).record
    memory.review_disposition(q.id, "quarantined")
    memory.review_disposition(q.id, "rejected")
    assert memory.get(p.id).status == "active"
    head = memory.head()
    with pytest.raises(UsageError) as err:
        memory.revert(q.id, "v1")
    assert p.id in str(err.value) and p.path in str(err.value) and "--force" in str(err.value)
    assert memory.head() == head and memory.get(q.id).status == "rejected"
    memory.revert(q.id, "v1", force=True)
    old = memory.get(p.id)
    assert memory.get(q.id).status == "active"
    assert old.status == "superseded" and old.frontmatter["supersededBy"] == q.id
    changed = git(memory.root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([p.path, q.path])
    assert all(c["status"] == "ok" for c in memory.doctor() if c["name"] == "supersession-links")


def test_reverting_a_predecessor_to_superseded_gives_the_successor_its_claim_back(memory: Memory) -> None:
    a = memory.store("Staging DB is Postgres 15", category="fact").record
    b = memory.store("Staging DB is Postgres 16", extra={"supersedes": a.id}).record
    memory.revert(a.id, "v1", force=True)
    assert "supersedes" not in memory.get(b.id).frontmatter
    memory.revert(a.id, "v2")
    assert memory.get(a.id).frontmatter["supersededBy"] == b.id
    assert memory.get(b.id).frontmatter["supersedes"] == a.id
    changed = git(memory.root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([a.path, b.path])
    (check,) = [c for c in memory.doctor() if c["name"] == "supersession-links"]
    assert check["status"] == "ok"


def test_doctor_names_both_files_of_a_one_sided_link(memory: Memory) -> None:
    a = memory.store("Staging DB is Postgres 15", category="fact").record
    b = memory.store("Staging DB is Postgres 16", extra={"supersedes": a.id}).record
    path = memory.root / b.path
    path.write_text(path.read_text(encoding="utf-8").replace(f"supersedes: {a.id}\n", ""), encoding="utf-8")
    (check,) = [c for c in memory.doctor() if c["name"] == "supersession-links"]
    assert check["status"] == "warn"
    (line,) = check["problems"]
    assert a.path in line and b.path in line and "supersedes" in line
    assert "remnic sync run" in check["detail"]


def test_revert_to_working_says_why_and_help_does_not_offer_it(memory: Memory) -> None:
    rec = memory.store("The plan is to ship in May", category="fact").record
    r = run_cli("versions", "revert", rec.id, "working", "--memory-dir", str(memory.root))
    assert r.code == 2 and "not a committed version" in r.err and "remnic sync run" in r.err
    assert "no version 'working'" not in r.err
    help_text = run_cli("versions", "revert", "--help").out
    assert "'working'" not in help_text.split("positional arguments")[1].split("options")[0]


def test_show_and_diff_json_carry_the_version_fields(memory: Memory) -> None:
    rec = memory.store("The plan is to ship in May", category="fact").record
    memory.update(rec.id, {"tags": ["plan"]})
    d = str(memory.root)
    listed = run_cli("versions", "list", rec.id, "--memory-dir", d, "--json").json()["versions"]
    shown = run_cli("versions", "show", rec.id, "v1", "--memory-dir", d, "--json").json()
    for key in ("label", "sha", "path", "previousPath", "date"):
        assert shown[key] == listed[0][key], key
    assert (
        shown["number"] == shown["version"] == 1 and shown["title"].startswith(f"{rec.path}@v1") and "content" in shown
    )
    diff = run_cli("versions", "diff", rec.id, "--memory-dir", d, "--json").json()
    assert diff["changed"] and "plan" in diff["diff"]
    assert diff["from"]["sha"] == listed[0]["sha"] and diff["to"]["sha"] == listed[1]["sha"]
    assert diff["to"]["version"] == 2 and diff["from"]["label"] == "v1"
    (memory.root / rec.path).write_text("edited by hand\n" + (memory.root / rec.path).read_text(), encoding="utf-8")
    dirty = run_cli("versions", "diff", rec.id, "--memory-dir", d, "--json").json()
    assert dirty["to"]["label"] == "working" and dirty["to"]["version"] is None and dirty["from"]["label"] == "v2"
