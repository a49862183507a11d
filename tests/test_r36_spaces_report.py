"""What a pull says and when it holds the write lock: it names the repository it pulled into (the nearest one
above the working directory wins over the active space), says when the remote's branch was rewritten (a
force push) and how many of the dropped commits the next push restores, and commits hand edits first without
computing their vectors under the write lock (writers waiting for it would time out behind the model)."""

from __future__ import annotations

import pytest
import test_space_sync as sync_cases
from conftest import git, run_cli

from remnic.index.embed import Embedder
from remnic.repo.lock import process_lock
from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair


def test_a_force_pushed_remote_is_named_and_the_pull_says_which_repository(pair: Pair) -> None:
    ana, ben = pair
    for n in (1, 2):
        ana.store(f"Release note {n}: the pipeline went green", category="fact")
    ana.space_push()
    ben.space_pull()
    was = git(ben.root, "rev-parse", "origin/main").strip()
    git(ana.root, "reset", "-q", "--hard", "HEAD~2")  # history rewritten, then force-pushed
    ana.store("The deploy key rotates monthly", category="fact")
    git(ana.root, "push", "-q", "-f", "origin", "main")
    pulled = run_cli("space", "pull", "--memory-dir", str(ben.root))
    assert pulled.code == 0, pulled.err
    first, second = pulled.out.splitlines()[:2]
    assert first == f"pulled origin/main: merge (into {ben.root})"
    assert f"origin/main was rewritten since the last fetch (a force push): it was {was[:8]}" in second
    assert "2 commits it had are no longer on it; 2 of them are in this clone's history" in second
    assert "the next `remnic space push` puts them back" in second
    report = ben.space_pull()  # nothing rewritten since: nothing said
    assert report.history_rewritten is None and report.root == str(ben.root) and report.space is None


def test_a_push_refused_after_a_force_push_says_the_history_was_rewritten(pair: Pair) -> None:
    """The push fetches to explain its refusal, after which the pull it asks for can no longer see the rewrite."""
    ana, ben = pair
    for n in (1, 2):
        ana.store(f"Rollout step {n} is done", category="fact")
    ana.space_push()
    ben.space_pull()
    git(ana.root, "reset", "-q", "--hard", "HEAD~2")
    ana.store("The staging cluster moved to eu-west-1", category="fact")
    git(ana.root, "push", "-q", "-f", "origin", "main")
    ben.store("A note of ben's own", category="fact")
    pushed = run_cli("space", "push", "--memory-dir", str(ben.root))
    assert pushed.code != 0
    assert (
        "the remote's history was rewritten (force-pushed): 2 commit(s) it had are gone from origin/main" in pushed.err
    )
    assert "the next push puts those commits back on the remote" in pushed.err


def test_json_names_the_rewrite_and_the_repository(pair: Pair) -> None:
    ana, ben = pair
    ana.store("A note that will be rewritten away", category="fact")
    ana.space_push()
    ben.space_pull()
    was = git(ben.root, "rev-parse", "origin/main").strip()
    git(ana.root, "reset", "-q", "--hard", "HEAD~1")
    git(ana.root, "push", "-q", "-f", "origin", "main")
    data = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json").json()
    assert data["root"] == str(ben.root) and data["space"] is None
    now = git(ben.root, "rev-parse", "origin/main").strip()
    assert data["historyRewritten"] == {"tracking": "origin/main", "was": was, "now": now, "dropped": 1, "kept": 1}
    assert data["outcome"] == "up-to-date"  # this clone already has everything the remote has now


def test_hand_edits_are_committed_first_and_embedded_after_the_write_lock(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana, ben = pair
    ana.store("Something new on the other side", category="fact")
    ana.space_push()
    for n in range(12):
        (ben.root / "facts" / f"hand-{n}.md").write_text(f"HANDNOTE{n} the printer on floor {n} jams\n")
    lock = process_lock((ben.root / ".remnic" / "write.lock").resolve())
    calls: list[tuple[bool, str]] = []
    embed = Embedder.embed

    def watched(self: Embedder, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((lock._depth > 0, "\n".join(texts)))
        return embed(self, texts, *args, **kwargs)

    monkeypatch.setattr(Embedder, "embed", watched)
    report = ben.space_pull()
    hand = [(held, text) for held, text in calls if "HANDNOTE" in text]
    assert hand and not [text for held, text in hand if held]  # embedded, never under the write lock
    assert report.edits_commit is not None and report.outcome == "merge" and report.vectors_behind is None
    assert all(f"HANDNOTE{n}" in "".join(t for _, t in hand) for n in range(12))
    assert ben.vectors_pending()[0] == 0 and "vectors" in report.phases_ms
    assert [h.path for h in ben.recall("HANDNOTE7 printer jams on floor 7", top_k=1)] == ["facts/hand-7.md"]
