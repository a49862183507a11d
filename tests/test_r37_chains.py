"""Supersession chains kept on both sides through revert, review, flag and sync (round 37, tester E): a revert of
the newer memory gives the older one back, a memory waiting for review replaces nothing until approved, an
approval never leaves a one-sided or stale link, a flag or a hand deletion that hides a value says so, a
repeated revert makes no commit, and a revival leaves no superseded memory claiming the current one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.service.health_records import one_sided_check, stranded_check
from remnic.service.memory import Memory


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """One repository for the tests that store by hand (each its own subject)."""
    root = tmp_path_factory.mktemp("chains") / "mem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        mem = Memory.init(root, settings=settings_for(root))
        yield mem
        mem.close()


def checks(mem: Memory) -> tuple[dict[str, Any], dict[str, Any]]:
    records = mem.files.scan().records
    return one_sided_check(records), stranded_check(records)


def pair(mem: Memory, old: str, new: str) -> tuple[str, str]:
    a = mem.store(old, category="fact").id
    b = mem.store(new, category="fact", extra={"supersedes": a}).id
    assert mem.get(a).status == "superseded"
    return a, b


def head(mem: Memory) -> str:
    return git(mem.root, "rev-parse", "HEAD").strip()


def test_reverting_the_newer_memory_gives_the_older_one_back_and_again_is_a_no_op(memory: Memory) -> None:
    a = memory.store("The billing DB port is 5432.", category="fact").id
    b = memory.store("The billing DB port is 5433.", category="fact").id
    memory.update(b, {"supersedes": a})
    assert memory.get(a).status == "superseded"

    result = memory.revert(b, "v1", source="cli", force=False)
    assert result.changed
    assert [(x.id, x.change) for x in result.also_changed] == [(a, "current-again")]
    old = memory.get(a)
    assert old.status == "active" and "supersededBy" not in old.frontmatter and "invalidAt" not in old.frontmatter
    assert "supersedes" not in memory.get(b).frontmatter
    links, stranded = checks(memory)
    assert links["status"] == "ok" and stranded["status"] == "ok", (links, stranded)
    body = git(memory.root, "log", "-1", "--format=%B")
    assert a in body and "current again" in body

    # The file already holds v1 (only `updated` differs): nothing to commit, said so.
    before = head(memory)
    again = memory.revert(b, "v1", source="cli", force=False)
    assert again.changed is False and again.commit is None and head(memory) == before
    shown = run_cli("versions", "revert", b, "v1", "--memory-dir", str(memory.root))
    assert shown.code == 0 and "nothing to commit" in shown.out, shown
    assert head(memory) == before


def test_a_revert_to_the_text_already_there_makes_no_commit(memory: Memory) -> None:
    a = memory.store("The deploy window is Tuesday.", category="decision").id
    memory.update(a, {}, content="The deploy window is Thursday.")
    assert memory.revert(a, "v1", source="cli", force=False).changed
    before = head(memory)
    for _ in range(2):
        again = memory.revert(a, "v1", source="cli", force=False)
        assert again.changed is False and again.commit is None and head(memory) == before
    assert memory.get(a).content == "The deploy window is Tuesday."


def test_a_memory_waiting_for_review_replaces_nothing_until_approved(memory: Memory) -> None:
    a = memory.store("The API port is 8080.", category="fact").id
    # What POST suggestions writes: pending_review, naming the memory it would replace.
    p = memory.store("The API port is 9999.", category="fact", extra={"status": "pending_review", "supersedes": a}).id
    assert memory.get(a).status == "active"
    assert memory.get(p).frontmatter["supersedes"] == a  # the claim waits with it
    links, _ = checks(memory)
    assert links["status"] == "ok", links

    approved = memory.review_disposition(p, "active", source="cli")
    assert [(x.id, x.change) for x in approved.also_changed] == [(a, "superseded")]
    assert memory.get(a).status == "superseded" and memory.get(a).frontmatter["supersededBy"] == p
    assert not any("nothing superseded" in w for w in approved.warnings), approved.warnings

    # `update PENDING --supersedes ACTIVE`, then dismissed: the active memory is never touched.
    c = memory.store("The admin port is 7000.", category="fact").id
    q = memory.store("The admin port is 7001.", category="fact").id
    memory.update(q, {"status": "pending_review"})
    memory.update(q, {"supersedes": c})
    assert memory.get(c).status == "active"
    dismissed = memory.review_disposition(q, "rejected", source="cli")
    assert dismissed.also_changed == () and memory.get(c).status == "active"
    assert "supersededBy" not in memory.get(c).frontmatter


def test_flagging_the_current_value_says_the_value_is_hidden(memory: Memory) -> None:
    a, b = pair(memory, "The redis TTL is 300 seconds.", "The redis TTL is 600 seconds.")
    flagged = memory.review_disposition(b, "quarantined", reason_code="doubtful", source="cli")
    said = " ".join(flagged.warnings)
    assert a in said and f"remnic review dismiss {b}" in said, flagged.warnings
    _, stranded = checks(memory)
    assert stranded["status"] == "warn" and any(a in p and "quarantined" in p for p in stranded["problems"]), stranded
    memory.review_disposition(b, "rejected", source="cli")  # the dismiss revives it, and doctor is clean again
    assert memory.get(a).status == "active" and checks(memory)[1]["status"] == "ok"


def test_sync_of_a_hand_deleted_successor_names_the_stranded_value(memory: Memory) -> None:
    a, b = pair(memory, "The cache host is alpha.", "The cache host is beta.")
    (memory.root / memory.get(b).path).unlink()
    result = run_cli("sync", "run", "--memory-dir", str(memory.root))
    assert result.code == 0, result
    line = next((x for x in result.out.splitlines() if a in x), "")
    assert "stranded" in line and f"remnic update {a} --status active" in line, result.out
    memory.update(a, {"status": "active"})  # the command it names: the repository is consistent again


def test_doctor_flags_a_superseded_memory_claiming_the_current_one(memory: Memory) -> None:
    p = memory.store("The queue size is 10.", category="fact").id
    q = memory.store("The queue size is 20.", category="fact", extra={"supersedes": p}).id
    memory.store("The queue size is 30.", category="fact", extra={"supersedes": q})
    memory.update(p, {"status": "active"})  # current again; q, history, no longer claims it
    path = memory.root / memory.get(q).path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\nstatus: superseded\n", f"\nstatus: superseded\nsupersedes: {p}\n", 1), "utf-8")
    links, _ = checks(memory)
    assert links["status"] == "warn" and any(q in x and p in x and "loop" in x for x in links["problems"]), links
    path.write_text(text, "utf-8")


def test_doctor_words_a_fork_made_on_one_machine_for_what_it_is(memory: Memory) -> None:
    a, b = pair(memory, "The build host is red.", "The build host is blue.")
    c = memory.store("The build host is green.", category="fact").id
    path = memory.root / memory.get(c).path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\nstatus: active\n", f"\nstatus: active\nsupersedes: {a}\n", 1), "utf-8")
    links, _ = checks(memory)
    said = " ".join(links["problems"])
    assert links["status"] == "warn" and a in said and c in said, links
    assert "clone" not in said and "merge kept" not in said, said
    path.write_text(text, "utf-8")


def observe(mem: Memory, *lines: str) -> None:
    for n, line in enumerate(lines):
        mem.observe_transcript(f"s{n}-{abs(hash(line))}", line, fmt="plain", flush=True)


def by_text(mem: Memory, text: str) -> Any:
    return next(r for r in mem.list() if r.content == text)


def test_approving_a_queued_value_overtaken_or_said_again_leaves_no_one_sided_link(tmp_path: Path) -> None:
    with Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m")) as mem:
        observe(
            mem,
            "[2026-10-19T09:00:00Z] Carla: Our team lead is Ewa.\n",
            "[2026-10-26T09:00:00Z] Carla: I think our team lead is Marta now.\n",
            "[2026-11-09T09:00:00Z] Ewa: Our team lead is Nina now.\n",
        )
        guess = mem.review_queue()[0].id
        nina = by_text(mem, "Our team lead is Nina now.").id
        approved = mem.review_disposition(guess, "active", source="cli")
        assert approved.record.status == "superseded" and approved.record.frontmatter["supersededBy"] == nina
        assert guess in mem.get(nina).frontmatter["supersedes"]
        assert [(x.id, x.change) for x in approved.also_changed] == [(nina, "supersedes-it")]
        assert checks(mem)[0]["status"] == "ok", checks(mem)[0]

    with Memory.init(tmp_path / "n", settings=settings_for(tmp_path / "n")) as mem:
        observe(
            mem,
            "[2026-10-19T09:00:00Z] Carla: Our team lead is Ewa.\n",
            "[2026-10-26T09:00:00Z] Carla: I think our team lead is Marta now.\n",
        )
        guess = mem.review_queue()[0].id
        ewa = by_text(mem, "Our team lead is Ewa.").id
        mem.review_disposition(guess, "active", source="cli")
        mem.review_disposition(guess, "rejected", reason_code="not-yet", source="cli")
        observe(mem, "[2026-11-09T09:00:00Z] Ewa: Our team lead is Marta now.\n")
        again = mem.review_disposition(guess, "active", source="cli")
        assert again.record.status == "active" and ewa not in str(again.record.frontmatter.get("supersedes"))
        assert any(ewa in w for w in again.warnings), again.warnings
        assert checks(mem)[0]["status"] == "ok", checks(mem)[0]


def test_a_revival_drops_the_claim_a_superseded_memory_kept_on_it(tmp_path: Path) -> None:
    with Memory.init(tmp_path / "m", settings=settings_for(tmp_path / "m")) as mem:
        observe(
            mem,
            "[2026-10-05T09:00:00Z] Ben: The staging DB port is 5432.\n",
            "[2026-10-12T09:00:00Z] Ben: We switched the staging DB to port 5433.\n",
            "[2026-10-19T09:00:00Z] Ben: We moved the staging DB to port 6543.\n",
            "[2026-11-16T09:00:00Z] Ben: The staging DB port is 5432.\n",
        )
        first = by_text(mem, "The staging DB port is 5432.")
        middle = next(r for r in mem.list() if "5433" in r.content)
        assert first.status == "active" and middle.status == "superseded"
        assert first.id not in str(middle.frontmatter.get("supersedes"))
        assert checks(mem)[0]["status"] == "ok", checks(mem)[0]
