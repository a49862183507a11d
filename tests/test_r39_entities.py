"""A forgotten entity page: its commit subject names the page, and `entities show` says it was forgotten."""

from __future__ import annotations

import json

from conftest import git, run_cli

from remnic.service.memory import Memory


def _forgotten_page(memory: Memory) -> str:
    """Priya Raman's page built, then forgotten: the forget commit's sha."""
    memory.store("Priya Raman prefers tea over coffee.", source="cli")
    assert memory.refresh_entities(source="cli")["written"] == ["entities/person-priya-raman.md"]
    result = memory.forget("person-priya-raman", source="cli")
    assert result.commit
    return result.commit


def test_forgetting_an_entity_page_commits_a_subject_naming_the_page(memory: Memory) -> None:
    sha = _forgotten_page(memory)
    subject = git(memory.root, "log", "-1", "--format=%s", sha).strip()
    assert subject == "remnic forget: Priya Raman (entity page)"
    memory.update("person-priya-raman", {"status": "active"}, operation="update", source="cli")
    assert git(memory.root, "log", "-1", "--format=%s").strip() == "remnic update: Priya Raman (entity page)"


def test_show_of_a_forgotten_entity_says_when_and_in_which_commit(memory: Memory) -> None:
    sha = _forgotten_page(memory)
    root = str(memory.root)
    for name in ("person-priya-raman", "Priya Raman", "priya"):
        shown = run_cli("--memory-dir", root, "entities", "show", name)
        assert shown.code == 1 and shown.out == ""
        assert (
            f"no entity named {name!r}: its page entities/person-priya-raman.md was forgotten on " in shown.err
            and f"in commit {sha[:8]}" in shown.err
        )
        assert "remnic update entities/person-priya-raman.md --status active" in shown.err
    shown = run_cli("--memory-dir", root, "--json", "entities", "show", "Priya")
    error = json.loads(shown.err)
    assert shown.code == 1 and shown.out == ""
    assert error["code"] == "not_found" and error["found"] is False and "was forgotten" in error["error"]
    # Listing leaves it out; a current page of the same first name is the one found.
    assert run_cli("--memory-dir", root, "--json", "entities", "list").json()["total"] == 0
    memory.store("Priya Shah approved the release plan.", source="cli")
    found = run_cli("--memory-dir", root, "--json", "entities", "show", "Priya")
    assert found.code == 0 and found.json()["entity"]["name"] == "Priya Shah"
