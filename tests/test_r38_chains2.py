"""Session 38: pending replacements of one value decided in any order (approve, dismiss, flag, revert) leave
at most one current memory, and doctor's current-values names two current memories of one key; entity
pages are read without being written (list/show), and a person's page says when they left.

Real repositories in temp dirs (git; copies of one repository per state reached).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.errors import RemnicError
from remnic.memfile.model import MemoryRecord
from remnic.service.chain_links import hidden_by_flag, one_sided_links
from remnic.service.health_records import current_values_check
from remnic.service.memory import Memory

TTL = "The {} cache TTL is {} seconds."


def _key(value: int, keyed: bool) -> dict[str, Any]:
    return {"entityRef": "edge-cache", "structuredAttributes": {"ttl": f"{value} seconds"}} if keyed else {}


Chain = Callable[..., dict[str, str]]
# git's sample hooks (inert) are most of a repository's files: copies leave them out.
_COPY_IGNORE = shutil.ignore_patterns("*.sample")


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Chain:
    """``chain(root, count, keyed=...)``: A(100) ← B(200) current; P1(300), P2(400)… queued, each claiming B
    from its first version, at ``root``; its ids by name. Each shape is built once and copied: every test
    works on its own copy."""
    built: dict[tuple[int, bool], tuple[Path, dict[str, str]]] = {}

    def make(root: Path, count: int, *, keyed: bool) -> dict[str, str]:
        if (count, keyed) not in built:
            template = tmp_path_factory.mktemp("chain") / "repo"
            built[(count, keyed)] = (template, _build_chain(template, count, keyed=keyed))
        template, ids = built[(count, keyed)]
        shutil.copytree(template, root, ignore=_COPY_IGNORE)
        return dict(ids)

    return make


def _build_chain(root: Path, count: int, *, keyed: bool) -> dict[str, str]:
    mem = Memory.init(root, settings=settings_for(root))
    ids = {"A": mem.store(TTL.format("edge", 100), category="fact", extra=_key(100, keyed)).id}
    extra = {"supersedes": ids["A"], **_key(200, keyed)}
    ids["B"] = mem.store(TTL.format("edge", 200), category="fact", extra=extra).id
    for k in range(1, count + 1):
        value = 200 + 100 * k
        extra = {"status": "pending_review", "supersedes": ids["B"], **_key(value, keyed)}
        ids[f"P{k}"] = mem.store(TTL.format("edge", value), category="fact", extra=extra).id
    mem.close()
    return ids


def _open(root: Path) -> Memory:
    mem = Memory.open(root, settings=settings_for(root))
    mem.defer_index(build_missing=False)  # the states are judged from the files: no index to build
    return mem


def _step(mem: Memory, ids: dict[str, str], move: str) -> None:
    memory_id = ids[f"P{move[1]}"]
    try:
        if move[0] == "r":  # revert to the version before the latest
            versions = mem.versions(memory_id)
            if len(versions) > 1:
                mem.revert(memory_id, versions[-2].label)
        else:
            status = {"a": "active", "d": "rejected", "f": "quarantined"}[move[0]]
            mem.review_disposition(memory_id, status, reason_code="r")
    except RemnicError:  # refused (not waiting for review, a revert that would fork): nothing changed
        pass


def _records(mem: Memory, ids: dict[str, str]) -> dict[str, MemoryRecord]:
    """The chain's memory files as they are now, by id (one scan of the files, as doctor reads them)."""
    return {r.id: r for r in mem.files.scan().records if r.id in ids.values()}


def _state(records: dict[str, MemoryRecord], ids: dict[str, str]) -> tuple[Any, ...]:
    label = {v: k for k, v in ids.items()}
    out = []
    for name, memory_id in ids.items():
        fm = records[memory_id].frontmatter
        said = fm.get("supersedes")
        claims = tuple(label.get(i, i) for i in ([said] if isinstance(said, str) else said or []))
        out.append(
            (
                name,
                fm.get("status"),
                claims,
                label.get(str(fm.get("supersededBy") or ""), ""),
                bool(fm.get("reviewedAt")),
            )
        )
    return tuple(out)


def _problems(
    mem: Memory, ids: dict[str, str], keyed: bool, records: dict[str, MemoryRecord] | None = None
) -> list[str]:
    """What is wrong in this state. ``records``: the files as :func:`_records` read them (a fresh scan when
    None); the exhaustive walk asks doctor's current-values check alone, on the same scan doctor reads."""
    whole = records is None
    records = _records(mem, ids) if records is None else records
    mine = list(records.values())
    active = sorted(k for k, i in ids.items() if records[i].status == "active")
    out = []
    if len(active) > 1 or (not active and not hidden_by_flag(mine)):
        out.append(f"current: {active}")
    out += [f"one-sided {a.id} {why}" for a, _, _, why in one_sided_links(mine)]
    if keyed:
        if whole:
            said = {c["name"]: c["status"] for c in mem.doctor()}["current-values"]
        else:
            said = current_values_check(mine)["status"]
        if said != ("warn" if len(active) > 1 else "ok"):
            out.append(f"doctor current-values {said} with {active} current")
    return out


def _explore(
    chain: Chain, tmp_path: Path, count: int, moves: str, depth: int, *, keyed: bool
) -> dict[tuple[str, ...], list[str]]:
    """Every order of up to ``depth`` of ``moves`` on P1..P<count>, one repository copy per state reached
    (orders reaching one state go on from one copy): the failures, by the order that reached them. A move
    refused on a copy (no commit, the same state) leaves that copy as good as a fresh one for the next move."""
    ids = chain(tmp_path / "s0", count, keyed=keyed)
    with _open(tmp_path / "s0") as mem:
        start = _state(_records(mem, ids), ids)
    seen: dict[tuple[Any, ...], tuple[Path, tuple[str, ...]]] = {start: (tmp_path / "s0", ())}
    failures: dict[tuple[str, ...], list[str]] = {}
    frontier, n = [start], 0
    steps = [m + str(k) for m in moves for k in range(1, count + 1)]
    for _ in range(depth):
        after = []
        for state in frontier:
            source, path = seen[state]
            spare: Path | None = None
            for move in steps:
                n += 1
                target, spare = spare or tmp_path / f"s{n}", None
                if not target.exists():
                    shutil.copytree(source, target, ignore=_COPY_IGNORE)
                with _open(target) as mem:
                    head = mem.head()
                    _step(mem, ids, move)
                    records = _records(mem, ids)
                    now = _state(records, ids)
                    if now in seen:
                        if now == state and mem.head() == head:
                            spare = target
                        continue
                    seen[now] = (target, (*path, move))
                    bad = _problems(mem, ids, keyed, records)
                if bad:
                    failures[(*path, move)] = bad
                else:
                    after.append(now)
        frontier = after
    return failures


@pytest.mark.parametrize(
    ("count", "steps", "keyed"),
    [
        *((2, ("a2", "a1", "d2"), k) for k in (False, True)),  # P1 approved as overtaken by P2; P2 dismissed
        *((3, ("d3", "a3", "a2", "d3"), k) for k in (False, True)),
        # P2's claim on P1 reverted, then its approval. Keyed only: without a key, a revert that drops a
        # claim makes the other memory current again, as asked (test_review_r30 holds that).
        (2, ("a2", "a1", "r2", "r2"), True),
    ],
)
def test_a_dismissed_replacement_leaves_its_value_one_current_memory(
    chain: Chain, tmp_path: Path, count: int, steps: tuple[str, ...], keyed: bool
) -> None:
    ids = chain(tmp_path / "m", count, keyed=keyed)
    with _open(tmp_path / "m") as mem:
        for move in steps:
            _step(mem, ids, move)
            assert _problems(mem, ids, keyed) == [], move
        if steps == ("a2", "a1", "d2"):
            p1, b = mem.get(ids["P1"]), mem.get(ids["B"])
            assert (p1.status, p1.frontmatter["supersedes"]) == ("active", ids["B"])
            assert (b.status, b.frontmatter["supersededBy"]) == ("superseded", ids["P1"])


@pytest.mark.slow
@pytest.mark.parametrize(("moves", "depth"), [("ad", 4), ("adfr", 2)])
def test_every_order_of_decisions_on_two_replacements_leaves_one_current_memory(
    chain: Chain, tmp_path: Path, moves: str, depth: int
) -> None:
    assert _explore(chain, tmp_path, 2, moves, depth, keyed=True) == {}


def test_doctor_names_two_current_memories_of_one_key(memory: Memory) -> None:
    key = {"entityRef": "staging-db", "structuredAttributes": {"port": "5432"}}
    memory.store("The staging DB port is 5432.", category="fact", extra=key)
    checks = {c["name"]: c for c in memory.doctor()}
    assert checks["current-values"]["status"] == "ok"
    other = memory.store(
        "The staging DB port is 5433.",
        category="fact",
        extra={"entityRef": "Staging DB", "structuredAttributes": {"Port": "5433"}},
    )
    checks = {c["name"]: c for c in memory.doctor()}
    assert checks["current-values"]["status"] == "warn"
    (line,) = checks["current-values"]["problems"]
    assert "staging-db port: 2 current memories" in line and other.id in line and "--supersedes" in line
    memory.forget(other.id)
    assert {c["name"]: c["status"] for c in memory.doctor()}["current-values"] == "ok"


def test_reading_entities_writes_nothing_and_shows_the_pages_as_built(memory: Memory) -> None:
    memory.store("Priya prefers async code reviews over meetings.", category="preference")
    memory.refresh_entities()
    memory.store("Priya left the company.", category="relationship", extra={"validAt": "2026-10-01T09:00:00Z"})
    head = memory.head()
    listed = run_cli("entities", "list", "--json", cwd=memory.root)
    shown = run_cli("entities", "show", "Priya", "--json", cwd=memory.root)
    text = run_cli("entities", "list", cwd=memory.root)
    assert listed.code == shown.code == text.code == 0, (listed.err, shown.err, text.err)
    assert memory.head() == head and memory.ledger.status_porcelain() == []  # no commit, no file written
    (row,) = listed.json()["entities"]
    assert row["factCount"] == 2 and row["left"]["date"] == "2026-10-01"
    entity = shown.json()["entity"]
    assert entity["left"]["text"] == "Priya left the company." and len(entity["timeline"]) == 2
    assert "Priya (left 2026-10-01)" in text.out
    assert "memoryCount: 1" in (memory.root / "entities/person-priya.md").read_text(encoding="utf-8")
    assert memory.refresh_entities()["commit"]  # the refresh writes them
    assert "memoryCount: 2" in (memory.root / "entities/person-priya.md").read_text(encoding="utf-8")


def test_a_person_who_joined_again_has_not_left(memory: Memory) -> None:
    memory.store("Priya left the company.", category="relationship", extra={"validAt": "2026-03-01T09:00:00Z"})
    memory.store("Priya joined our team.", category="relationship", extra={"validAt": "2026-06-01T09:00:00Z"})
    assert memory.entity("Priya")["left"] is None
    rows, _ = memory.entities()
    assert [r["left"] for r in rows] == [None]


def test_a_server_writes_entity_pages_after_an_observe_flushs_consolidation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads never write pages: the long-running process does, after each flush's background pass. The
    entity tools commit nothing, so MCP hosts are told they are read-only."""
    from test_server_http import make_env
    from test_server_mcp import http_client, run
    from test_sync_watch import wait_until

    env = next(gen := make_env(tmp_path, monkeypatch))
    try:
        head = env.memory.head()
        said = [{"role": "user", "content": "Priya Raman prefers async code reviews over meetings."}]
        r = env.call("POST", "/engram/v1/observe", {"sessionKey": "s1", "messages": said, "flush": True})
        assert r.status in (200, 202), r.raw
        page = env.root / "entities" / "person-priya-raman.md"
        wait_until(lambda: page.is_file() and env.memory._consolidation is None, timeout=60, what="the pages")
        assert env.memory.head() != head and env.memory.ledger.status_porcelain() == []  # written and committed
        assert env.memory.refresh_entities()["refreshed"] is False  # built at HEAD: nothing left to do
        listed = env.call("GET", "/remnic/v1/entities").json()
        assert [e["path"] for e in listed["entities"]] == ["entities/person-priya-raman.md"]
        assert "async code reviews" in page.read_text(encoding="utf-8")

        async def hints() -> dict[str, Any]:
            async with http_client(env, env.alice) as client:
                await client.call_tool("remnic_entity_get", {"name": "Priya"})
                tools = (await client.list_tools()).tools
                return {t.name: t.annotations.read_only_hint if t.annotations else None for t in tools}

        read_only = run(hints)
        assert read_only["remnic_entity_get"] is read_only["remnic_memory_entities"] is True
        assert read_only["remnic_memory_store"] is False
        assert env.memory.ledger.status_porcelain() == []
    finally:
        next(gen, None)
