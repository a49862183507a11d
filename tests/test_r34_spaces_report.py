"""What `remnic space pull` merges and says: `--remote NAME` merges NAME's branch; malformed memory files
the pull brings in are reported (file, line), a conflict with a malformed side says so; a conflict pair
decided oppositely on two machines goes back to review; the same text stored on both sides leaves the
supersession linked both ways; a memory moved on both sides is reported at the path it has now. Real bare
remotes in temp dirs and two clones."""

from __future__ import annotations

import subprocess
from pathlib import Path

import test_space_sync as sync_cases
from conftest import git, run_cli
from test_space_sync import assert_clean, edit_body

from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair


def test_pull_from_a_named_remote_merges_that_remotes_branch(pair: Pair, tmp_path: Path) -> None:
    ana, ben = pair
    origin = git(ana.root, "remote", "get-url", "origin").strip()
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "--quiet", "--mirror", origin, str(mirror)], check=True)
    for mem in (ana, ben):
        git(mem.root, "remote", "add", "mirror", str(mirror))
    memory_id = ben.store("Only on the mirror: the VPN certificate expires in March", category="fact").id
    ben.space_push("mirror")

    report = ana.space_pull("mirror")

    assert report.tracking == "mirror/main" and report.outcome == "fast-forward"
    assert ana.head() == git(ana.root, "rev-parse", "mirror/main").strip()
    assert ana.get(memory_id).content.startswith("Only on the mirror")
    out = run_cli("space", "pull", "--memory-dir", str(ana.root), "--remote", "mirror", "--json")
    assert out.code == 0 and out.json()["tracking"] == "mirror/main" and out.json()["outcome"] == "up-to-date"
    assert ana.space_pull().tracking == "origin/main"  # the default stays the branch's upstream
    assert_clean(ana)


def break_tags(mem: Memory, memory_id: str, also: tuple[str, str] | None = None) -> str:
    """A plain-git edit on ``mem`` that leaves the memory's frontmatter unparseable, committed and pushed."""
    path = mem.get(memory_id).path
    full = mem.root / path
    text = full.read_text(encoding="utf-8").replace("tags: []", "tags: [db")
    if also is not None:
        text = text.replace(*also)
    full.write_text(text, encoding="utf-8")
    git(mem.root, "commit", "-qam", "hand edit via plain git")
    git(mem.root, "push", "-q", "origin", "main")
    return path


def test_a_malformed_memory_the_pull_brings_in_is_reported_with_its_line(pair: Pair) -> None:
    ana, ben = pair
    memory_id = ana.store("The staging database password rotates every 30 days", category="fact").id
    ana.space_push()
    ben.space_pull()
    path = break_tags(ana, memory_id)

    report = ben.space_pull()

    assert report.outcome == "fast-forward"
    (problem,) = report.problems
    assert problem["path"] == path and problem["line"] and "invalid YAML" in problem["message"]
    out = run_cli("space", "pull", "--memory-dir", str(ben.root))
    assert out.code == 0 and f"{path}:{problem['line']}: frontmatter: invalid YAML" in out.out
    assert "left out of recall" in out.out
    data = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json").json()
    assert [p["path"] for p in data["problems"]] == [path]  # still there: still said


def test_a_conflict_with_a_malformed_side_says_both_were_kept_as_they_are(pair: Pair) -> None:
    ana, ben = pair
    memory_id = ana.store("Build cache lives in bucket ci-cache-eu", category="fact").id
    ana.space_push()
    ben.space_pull()
    path = break_tags(ana, memory_id, ("ci-cache-eu\n", "ci-cache-us\n"))
    ben.update(memory_id, {"tags": ["ci", "storage"]})

    out = run_cli("space", "pull", "--memory-dir", str(ben.root))

    assert out.code == 0, out.err
    assert "status: unknown" not in out.out and "linked memories" not in out.out
    assert "is malformed, so both were kept exactly as they are" in out.out
    (head,) = [line for line in out.out.splitlines() if "kept exactly" in line]
    copy = next(p for p in (ben.root / "facts").iterdir() if "--conflict-" in p.name)
    assert head.strip().startswith(path) and f"facts/{copy.name} is malformed" in head
    assert f"facts/{copy.name}:" in out.out  # its problem, with the line
    assert ben.get(memory_id).tags == ["ci", "storage"]


def test_a_conflict_pair_decided_oppositely_on_two_machines_goes_back_to_review(pair: Pair) -> None:
    ana, ben = pair
    memory_id = ana.store("Releases ship on Thursdays", category="fact").id
    ana.space_push()
    ben.space_pull()
    edit_body(ana, memory_id, "Thursdays", "Wednesdays")
    ana.sync()
    ana.space_push()
    edit_body(ben, memory_id, "Thursdays", "Tuesdays")
    (conflict,) = ben.space_pull().conflicts
    copy_id = conflict["copyId"]
    ben.space_push()
    ana.space_pull()
    ana.review_disposition(memory_id, "active")
    ana.review_disposition(copy_id, "rejected")
    ana.space_push()
    ben.review_disposition(copy_id, "active")
    ben.review_disposition(memory_id, "rejected")

    report = ben.space_pull()

    assert {ben.get(i).status for i in (memory_id, copy_id)} == {"pending_review"}
    assert {r.id for r in ben.review_queue()} == {memory_id, copy_id}
    assert sorted(d["id"] for d in report.review_disputes) == sorted([memory_id, copy_id])
    assert all({d["thisSide"], d["otherSide"]} == {"active", "rejected"} for d in report.review_disputes)
    assert ben.recall("which day do releases ship", top_k=2)
    assert_clean(ben)


def test_the_same_text_stored_on_both_sides_links_the_supersession_both_ways(pair: Pair) -> None:
    ana, ben = pair
    theirs = ana.store("The CI runners use Ubuntu 22.04", category="fact").id
    ana.space_push()
    mine = ben.store("The CI runners use Ubuntu 22.04", category="fact").id

    report = ben.space_pull()

    (duplicate,) = report.duplicates
    assert duplicate["copyId"] == theirs and duplicate["id"] == mine
    assert ben.get(mine).frontmatter["supersedes"] == [theirs]
    assert ben.get(theirs).frontmatter["supersededBy"] == mine
    links = next(c for c in ben.doctor() if c["name"] == "supersession-links")
    assert links["status"] == "ok", links
    assert_clean(ben)


def test_a_memory_moved_on_both_sides_is_reported_at_the_path_it_has_now(pair: Pair) -> None:
    ana, ben = pair
    memory_id = ana.store("Kafka retention is 7 days", category="fact").id
    ana.space_push()
    ben.space_pull()
    old = ana.get(memory_id).path
    (ana.root / old).rename(ana.root / "facts/kafka-ana.md")
    edit_body(ana, memory_id, "7 days", "7 days (ana)")
    ana.sync()
    ana.space_push()
    (ben.root / old).rename(ben.root / "facts/kafka-ben.md")
    edit_body(ben, memory_id, "7 days", "7 days (ben)")

    report = ben.space_pull()

    (conflict,) = report.conflicts
    for key in ("path", "copyPath"):
        assert (ben.root / conflict[key]).is_file(), conflict
    assert conflict["path"] == ben.get(memory_id).path and conflict["pathStatus"] == "pending_review"
    assert conflict["copyPath"].startswith(conflict["path"].removesuffix(".md") + "--conflict-")
    assert "(ana)" in ben.get(conflict["copyId"]).content
    body = git(ben.root, "log", "-1", "--format=%b", "HEAD")
    assert f"{conflict['path']} <-> {conflict['copyPath']}" in body
    assert_clean(ben)
