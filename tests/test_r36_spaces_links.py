"""One memory superseded on two clones by two different new memories: the merge keeps one `supersededBy` and
both new memories stay current. The pull names the memory, both successors and the command that makes one
chain again; doctor's supersession-links line names the same command, and running it clears the warning."""

from __future__ import annotations

import test_space_sync as sync_cases
from conftest import run_cli

from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair


def _links(mem: Memory) -> dict:
    return next(c for c in mem.doctor() if c["name"] == "supersession-links")


def test_a_memory_superseded_on_both_clones_is_reported_and_the_command_resolves_it(pair: Pair) -> None:
    ana, ben = pair
    old = ana.store("Releases happen on Tuesdays", category="fact").id
    ana.space_push()
    ben.space_pull()
    wed = ana.store("Releases happen on Wednesdays", category="fact", extra={"supersedes": old}).id
    ana.space_push()
    thu = ben.store("Releases happen on Thursdays", category="fact", extra={"supersedes": old}).id
    pulled = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json")
    assert pulled.code == 0, pulled.err
    (fork,) = pulled.json()["supersessionForks"]
    kept = ben.get(old).frontmatter["supersededBy"]
    other = wed if kept == thu else thu
    assert fork["id"] == old and fork["supersededBy"]["id"] == kept and fork["alsoSupersededBy"]["id"] == other
    assert fork["command"] == f"remnic update {kept} --supersedes {other}"
    assert {ben.get(wed).status, ben.get(thu).status} == {"active"}  # two current answers until resolved
    # The message names both successors and the command; doctor's line gives the same command.
    assert fork["command"] in fork["message"] and wed in fork["message"] and thu in fork["message"]
    check = _links(ben)
    assert check["status"] == "warn" and any(fork["command"] in p for p in check["problems"])
    assert "two successors" in check["detail"]
    done = run_cli("update", kept, "--supersedes", other, "--memory-dir", str(ben.root))
    assert done.code == 0, done.err
    assert _links(ben)["status"] == "ok"
    assert ben.get(other).status == "superseded" and ben.get(kept).status == "active"
    assert ben.get(old).frontmatter["supersededBy"] == kept


def test_the_pull_text_names_the_fork(pair: Pair) -> None:
    ana, ben = pair
    old = ana.store("Standups start at nine", category="fact").id
    ana.space_push()
    ben.space_pull()
    ana.store("Standups start at ten", category="fact", extra={"supersedes": old})
    ana.space_push()
    ben.store("Standups start at half past nine", category="fact", extra={"supersedes": old})
    pulled = run_cli("space", "pull", "--memory-dir", str(ben.root))
    assert pulled.code == 0, pulled.err
    kept = ben.get(old).frontmatter["supersededBy"]
    assert f"{old} (facts/standups-start-at-nine.md) was superseded on two clones" in pulled.out
    assert f"`remnic update {kept} --supersedes " in pulled.out
