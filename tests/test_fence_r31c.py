"""The lost-fence rule, both ways: a memory whose opening '---' was mistyped, or which carries a YAML key with a
space, ``$`` or a digit first, is malformed; a note opening with a ``# Heading`` above remnic-looking keys is a
note. The rows are a verification's table of real memories and plain notes."""

from __future__ import annotations

import pytest
from conftest import git, run_cli

from remnic.config import StoreSettings
from remnic.memfile.model import lost_open_fence
from remnic.memfile.validate import check_text
from remnic.service.memory import Memory

MEM = (
    "id: mem_0123456789abcdef0123\ncategory: fact\ncreated: 2024-05-01T10:00:00.000Z\n"
    "updated: 2024-05-01T10:00:00.000Z\nsource: cli\nconfidence: 0.9\ntags: []\nstatus: active\n---\n\n"
    "The deploy target is staging.\n"
)
ORIG = (
    "id: fact-1778750467412-q7kd\ncategory: fact\ncreated: 2024-05-01T10:00:00.000Z\n"
    'updated: 2024-05-01T10:00:00.000Z\nintentGoal: deploy: staging\ntags: ["a"]\n---\n\nOriginal body.\n'
)
NOID = "category: decision\ncreated: 2024-05-01T10:00:00Z\nstatus: active\n---\n\nWe decided X.\n"
LINKS = "links:\n  - target: mem_aaaaaaaaaaaaaaaaaaaa\n    type: related\n"


def _extra(key: str) -> str:
    return MEM.replace("status: active\n", f"status: active\n{key}\n")


LOST = [
    MEM,
    "\n" + MEM,
    "   \n" + MEM,
    "\t\n" + MEM,
    MEM.replace("\n", "\r\n"),
    ("\n" + MEM).replace("\n", "\r\n"),
    "\ufeff" + MEM,
    "\ufeff\n" + MEM,
    "\ufeff" + ("\n" + MEM).replace("\n", "\r\n"),
    "# remnic memory\n" + MEM,  # a comment under the fence; remnic's id follows
    MEM.replace("category: fact\n", "# cat\ncategory: fact\n\n"),
    ORIG,
    "\n" + ORIG,
    NOID,
    " \n" + NOID,
    MEM.replace("id: mem_0123456789abcdef0123", 'id: "mem_0123456789abcdef0123"'),
    MEM.replace("id: mem_", '"id": mem_'),
    MEM.replace("0123\n", "0123  # id\n", 1),
    MEM.replace("tags: []\n", LINKS),
    MEM.replace("id: mem_0123456789abcdef0123\n", "").replace(
        "status: active\n", "status: active\nid: mem_0123456789abcdef0123\n"
    ),
    "id: mem_0123456789abcdef0123\ncategory: fact\n---\n\nbody\n",
    "status: active\ncreated: 2024-05-01T10:00:00Z\n---\nbody\n",
    "category: fact\nupdated: 2024-05-01T10:00:00+02:00\n---\nbody\n",
    "\n" + MEM.replace("---\n", "---  \n"),
    # a mistyped opening fence
    "----\n" + MEM,
    "--\n" + MEM,
    "- - -\n" + MEM,
    "\u2014\n" + MEM,  # an editor's em dash
    " ---\n" + MEM,
    "----\r\n" + MEM.replace("\n", "\r\n"),
    "\ufeff----\n" + MEM,
    "----\n" + NOID,
    "--\n# checked by Ann\n" + ORIG,
    # YAML keys with a space, `$` or a digit first
    _extra("reviewed by: alice"),
    _extra("$schema: x"),
    _extra("2fa: true"),
    "----\n" + _extra("reviewed by: alice"),
    "# checked\n" + _extra("reviewed by: alice"),
    "category: decision\nreviewed by: alice\nstatus: active\n---\nNo id, two own pairs.\n",
]

NOTES = [
    "Some thought about life.\n\n---\n\nMore.\n",
    "tags: #idea #work\n\n---\n\nBody\n",
    "layout: post\ntitle: Hello\ndate: 2024-05-01 10:00:00 +0000\ncategories: blog\n---\n\nPost\n",
    'title: "My post"\ndate: 2024-05-01T10:00:00Z\ndraft: true\n---\nText\n',
    "Date: 2024-05-01T10:00\nAttendees: Bob, Alice\n---\n\nNotes\n",
    "created: 2024-05-01T10:00\nstatus: draft\n---\nNotes\n",
    "status: active\ntitle: Project\n---\nBody\n",
    "status: active\ncategory: project\n---\nBody\n",
    "title:: My page\ntags:: a, b\n\n- bullet\n---\n",
    "alias:: x\n---\n- bullet\n",
    "# Title\nstatus: active\ncategory: fact\n---\n",
    "- status: active\n- category: fact\n---\n",
    "Author: me\nStatus: active\nCategory: fact\n---\nText\n",
    "id: 42\ncategory: fact\n---\nText\n",
    "id: 550e8400-e29b-41d4-a716-446655440000\nstatus: active\n---\n",
    "Title\n---\n\nBody\n",
    "Project: remnic\n---\n\nBody\n",
    "\n\n---\n\nBody\n",
    "# just a heading\n---\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "Intro\n```yaml\nid: mem_0123456789abcdef0123\ncategory: fact\n```\n---\n",
    'id = "mem_0123456789abcdef0123"\ncategory = "fact"\n+++\n\nbody\n',
    "created: 2024-05-01\nupdated: 2024-05-02\n---\nx\n",
    # a `# Heading` first: a note, however remnic-like the pairs under it
    "# Standup 2024-05-01\ncreated: 2024-05-01T10:00\nupdated: 2024-05-01T10:30\n\n---\n\n- Alice shipped it\n",
    "# Project Atlas\ncategory: decision\nstatus: active\n---\nWe go with Postgres.\n",
    "## Atlas\n\ncategory: decision\nstatus: active\n---\nWe go with Postgres.\n",
    "\n# Atlas\nreviewed by: alice\ncategory: decision\nstatus: active\n---\nWe go with Postgres.\n",
    # a dash line or spaced keys without remnic's evidence
    "----\ntitle: x\nauthor: me\n---\nA rule first.\n",
    "----\nSome prose here\n---\n",
    "- - -\nstatus: active\n---\nOne own pair.\n",
    "--\nJohn\n---\n",
    "Meeting notes: Q3\nstatus: active\n---\nOne own pair.\n",
    "Reviewed by: alice\nid: x\n---\n",
]


@pytest.mark.parametrize("text", LOST)
def test_a_memory_with_a_lost_or_mistyped_fence_is_malformed(text: str) -> None:
    assert lost_open_fence(text)
    checked = check_text(text, "facts/a.md", StoreSettings())
    assert not checked.ok and checked.record is None
    [problem] = checked.problems
    assert (problem.path, problem.line, problem.field) == ("facts/a.md", 1, "frontmatter")
    assert "'---'" in problem.message


@pytest.mark.parametrize("text", NOTES)
def test_a_plain_note_is_not_malformed(text: str) -> None:
    assert not lost_open_fence(text)
    assert check_text(text, "facts/a.md", StoreSettings()).ok


@pytest.mark.parametrize(
    ("old", "new"),
    [("---\n", "----\n"), ("---\n", "- - -\n"), ("---\nid:", "id:"), ("---\n", "\n")],
)
def test_a_clone_keeps_the_memory_out_instead_of_adopting_it_under_a_new_id(memory: Memory, old: str, new: str) -> None:
    stored = memory.store("The deploy target is staging", category="fact").record
    path = memory.root / stored.path
    text = path.read_text(encoding="utf-8")
    damaged = text.replace(old, new, 1).replace("source:", "reviewed by: alice\nsource:", 1)
    path.write_text(damaged, encoding="utf-8")
    git(memory.root, "commit", "-qam", "typo")
    clone = memory.root.parent / "clone"
    git(memory.root.parent, "clone", "-q", str(memory.root), str(clone))

    for root in (memory.root, clone):
        result = run_cli("sync", "run", "--json", "--memory-dir", str(root))
        assert result.code == 1 and result.json()["malformed"] == [stored.path], result
        assert (root / stored.path).read_text(encoding="utf-8") == damaged
        listed = run_cli("list", "--json", "--memory-dir", str(root)).json()
        assert all(stored.id not in str(item) and "reviewed by" not in str(item) for item in listed), listed
        doctor = run_cli("doctor", "--json", "--memory-dir", str(root)).json()
        check = {c["name"]: c for c in doctor["checks"]}["memory-files"]
        assert check["status"] == "fail" and any(
            p.startswith(f"{stored.path}:1: frontmatter:") for p in check["problems"]
        )


def test_an_adopted_vault_keeps_notes_that_open_with_a_heading(tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault = tmp_path / "vault"
    (vault / "Meetings").mkdir(parents=True)
    standup = "# Standup 2024-05-01\ncreated: 2024-05-01T10:00\nupdated: 2024-05-01T10:30\n\n---\n\n- Alice shipped\n"
    atlas = "# Project Atlas\ncategory: decision\nstatus: active\n---\nWe go with Postgres.\n"
    (vault / "Meetings" / "standup.md").write_text(standup, encoding="utf-8")
    (vault / "Meetings" / "atlas.md").write_text(atlas, encoding="utf-8")
    assert run_cli("init", str(vault), "--adopt", "**").code == 0
    doctor = run_cli("doctor", "--json", "--memory-dir", str(vault)).json()
    check = {c["name"]: c for c in doctor["checks"]}["memory-files"]
    assert check["status"] == "ok" and "2 memory files, none malformed" in check["detail"], check
    result = run_cli("sync", "run", "--json", "--memory-dir", str(vault))
    assert result.code == 0 and result.json()["malformed"] == [], result
    assert "We go with Postgres." in (vault / "Meetings" / "atlas.md").read_text(encoding="utf-8")


def test_a_mistyped_fence_is_named_as_such_with_its_fix() -> None:
    from remnic.config import StoreSettings
    from remnic.memfile.validate import check_text

    memory = "id: mem_01a21d11f523822b86eb\ncategory: fact\nreviewed by: alice\n---\nThe deploy target.\n"
    [typo] = check_text("----\n" + memory, "facts/a.md", StoreSettings()).problems
    assert (typo.line, typo.message) == (1, "the opening '---' line is mistyped: replace that line with '---'")
    [lost] = check_text(memory, "facts/a.md", StoreSettings()).problems
    assert lost.message == "the opening '---' line is missing: add '---' as line 1"
