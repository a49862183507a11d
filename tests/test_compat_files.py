"""A memory directory written by the original Remnic reads as it is, and what remnic writes reads back there.

The fixture is a directory in the original's format and layout (dated category folders,
flat corrections, entity files, an archive, a namespace, its state files), using every
frontmatter key it writes. ``init`` + ``sync run`` + ``doctor`` must leave each file
byte-for-byte, and every memory must be found by recall.
"""

from __future__ import annotations

import json
from pathlib import Path

import original_remnic as original
import pytest
from conftest import git, run_cli

from remnic.config import settings_for
from remnic.memfile.model import parse_file
from remnic.service.memory import Memory


def _full_keys(text: str) -> dict:
    """Every optional key the original writes (one memory carries them all)."""
    return {
        "id": "fact-1778750467999-a1b2",
        "category": "fact",
        "created": "2026-05-14T09:25:00.100Z",
        "updated": "2026-05-14T09:25:00.100Z",
        "source": "extraction",
        "confidence": 0.9,
        "confidenceTier": "high",  # the review inbox writes words outside the tier names
        "tags": ["tooling", "ci/cd", "c++"],
        "entityRef": "project-atlas",
        "sourceConnector": "github.com/atlas",
        "toolScoped": True,
        "supersedes": "fact-1778750000000-old1",
        "expiresAt": "2026-06-13T09:25:00.100Z",
        "lineage": ["fact-1778750000000-old1", "fact-1778750000001-old2"],
        "blockedBy": "tomb-mabc123-x9y8z7",
        "tombstoneBlockTier": "normalized",
        "validAt": "2026-05-14T09:20:00.000Z",
        "invalidAt": "2026-12-31T00:00:00.000Z",
        "observedAt": "2026-05-14T09:20:55.000Z",
        "eventTimeSource": "extracted",
        "lifecycleState": "validated",
        "verificationState": "user_confirmed",
        "policyClass": "durable",
        "lastValidatedAt": "2026-05-15T00:00:00.000Z",
        "decayScore": 0.12,
        "heatScore": 0.66,
        "accessCount": 7,
        "lastAccessed": "2026-05-20T12:00:00.000Z",
        "mw_success": 3,
        "mw_fail": 0,
        "importanceScore": 0.8,
        "importanceLevel": "high",
        "importanceReasons": ['explicit "must" language'],
        "importanceKeywords": ["pipeline", "tests"],
        "parentId": "fact-1778750467000-prnt",
        "chunkIndex": 1,
        "chunkTotal": 3,
        "intentGoal": "ship: the release",  # a colon inside a plain value: fine for the original, not YAML
        "intentActionType": "configure",
        "intentEntityTypes": ["project", "tool"],
        "artifactType": "constraint",
        "sourceMemoryId": "fact-1778750467000-srce",
        "sourceTurnId": "t-77",
        "memoryKind": "note",
        "structuredAttributes": {"runner": "self-hosted", "city": "Austin"},
        "contentHash": original.content_hash(text),
        "derived_from": ["facts/a.md:2", "facts/b.md:5"],
        "derived_via": "merge",
        "reinforcement_count": 2,
        "last_reinforced_at": "2026-05-18T03:00:00.000Z",
        "sources": [
            {
                "sessionKey": "agent:main:discord:981",
                "turnId": "t-77",
                "observedAt": "2026-05-14T09:20:55.000Z",
                "quote": "CI runs on the self-hosted runner",
            }
        ],
        "provenance": "verified",
        "faithfulness": {"verdict": "entailed", "model": "judge-1", "at": "2026-05-14T09:30:00.000Z"},
        "driftState": "stale",
        "lastCorroborated": "2026-05-19T00:00:00.000Z",
        "type": "Memory Fact",
        "subject": "user",
        "reviewDismissed": True,
        "reviewDismissedAt": "2026-05-16T00:00:00.000Z",
        "flagged": True,
        "flaggedAt": "2026-05-16T00:00:01.000Z",
        "reviewReason": "low_confidence",
        "context": "seen twice in one session",
    }


def _memory(mid: str, category: str, text: str, **more: object) -> tuple[dict, str]:
    fm: dict = {
        "id": mid,
        "category": category,
        "created": "2026-05-01T10:00:00.000Z",
        "updated": "2026-05-01T10:00:00.000Z",
        "source": "extraction",
        "confidence": 0.86,
        "confidenceTier": "implied",
        "tags": [category.replace("_", "-")],
    }
    fm.update(more)
    if category == "fact" and "contentHash" not in fm:
        fm["contentHash"] = original.content_hash(text)
    return fm, text


ENTITY_PRIYA = """---
created: 2026-03-02T15:04:11.120Z
updated: 2026-05-10T08:00:00.000Z
synthesis_updated_at: "2026-05-10T08:00:00.000Z"
synthesis_timeline_count: 2
synthesis_version: 1
type: Person
---

# Priya Raman

**Type:** person
**Updated:** 2026-05-10T08:00:00.000Z

## Synthesis

Priya leads Project Atlas and owns the database migration.

## Timeline

- [2026-03-02T15:04:11.120Z] [source=extraction] [session=agent:main:discord:981] Priya joined the Atlas team.
- [2026-05-10T08:00:00.000Z] [source=extraction] Priya approved the Postgres 16 upgrade.

## Connected to

- [[project-atlas]] — leads

## Aliases

- P. Raman
"""

ENTITY_ATLAS = """---
created: 2026-01-10T09:00:00.000Z
updated: 2026-05-14T09:21:07.412Z
synthesis_updated_at: ""
synthesis_version: 0
---

# Project Atlas

**Type:** project
**Updated:** 2026-05-14T09:21:07.412Z

## Summary

Atlas is the billing platform rewrite, running on Kubernetes in two regions.

## Timeline

- [2026-05-14T09:21:07.412Z] [source=extraction] Atlas moved to Postgres 16.
"""


def original_directory(root: Path) -> dict[str, dict]:
    """Write the fixture; path → {id, text, status, category} of every memory in it."""
    memories: dict[str, tuple[dict, str]] = {}
    full_text = "CI runs on the self-hosted runner since May."
    memories["facts/2026-05-14/fact-1778750467999-a1b2.md"] = (_full_keys(full_text), full_text)
    cited = "Project Atlas runs on Postgres 16."
    memories["facts/2026-05-14/fact-1778750467412-q7kd.md"] = _memory(
        "fact-1778750467412-q7kd",
        "fact",
        cited + " [Source: agent:main:discord:981]",  # the hash is of the fact before its citation
        contentHash=original.content_hash(cited),
        entityRef="project-atlas",
        links=[{"targetId": "preference-1778400000000-zz01", "linkType": "related", "strength": 0.5}],
    )
    memories["preferences/2026-03-02/preference-1772463851120-a0zz.md"] = _memory(
        "preference-1772463851120-a0zz",
        "preference",
        "Prefers Vim keybindings in every editor.",
        status="superseded",
        supersededBy="preference-1778400000000-zz01",
        supersededAt="2026-05-10T08:00:00.000Z",
        invalidAt="2026-05-10T08:00:00.000Z",
        links=[
            {
                "targetId": "fact-1778750467412-q7kd",
                "linkType": "related",
                "strength": 0.6,
                "reason": 'same "tooling" discussion',
            }
        ],
        reinforcement_count=3,
        last_reinforced_at="2026-04-20T03:00:00.000Z",
    )
    memories["preferences/2026-05-10/preference-1778400000000-zz01.md"] = _memory(
        "preference-1778400000000-zz01",
        "preference",
        "Prefers Helix modal editing over Vim keybindings now.",
        supersedes="preference-1772463851120-a0zz",
    )
    memories["corrections/correction-1778751000000-m3x1.md"] = _memory(
        "correction-1778751000000-m3x1",
        "correction",
        "The staging bucket is eu-west-2, not us-east-1.",
        status="forgotten",
        forgottenAt="2026-05-15T10:00:00.000Z",
        forgottenReason='user said: "drop this"',
    )
    memories["corrections/correction-1778751000001-k2k2.md"] = _memory(
        "correction-1778751000001-k2k2", "correction", "The on-call rotation changes on Mondays, not Fridays."
    )
    for category, folder, text in (
        ("decision", "decisions", "We chose Postgres over MySQL for the ledger service."),
        ("relationship", "relationships", "Marco reports to Priya on the Atlas team."),
        ("principle", "principles", "Prefer boring technology for storage layers."),
        ("commitment", "commitments", "Ship the invoice export by the end of June."),
        ("moment", "moments", "The first Atlas invoice went out on launch night."),
        ("skill", "skills", "Knows how to tune autovacuum thresholds."),
        ("rule", "rules", "Never deploy billing changes on a Friday."),
        ("procedure", "procedures", "To rotate the API key: create a new key, deploy, then revoke the old one."),
        ("reasoning_trace", "reasoning-traces", "Latency rose because the cache warmed slowly after failover."),
        ("entity", "facts", "Kubernetes is the container platform Atlas runs on."),
    ):
        mid = f"{category}-17787510{len(memories):05d}-c{len(memories) % 10}de"
        memories[f"{folder}/2026-05-01/{mid}.md"] = _memory(mid, category, text, importanceScore=0.7)
    legacy = "decision-1770000000000-lgcy"  # before folders per category, everything went to facts/
    memories[f"facts/2026-02-01/{legacy}.md"] = _memory(legacy, "decision", "Invoices are numbered per region.")
    block_tags = original.write(*_memory("fact-1778751200000-blk1", "fact", "The VPN gateway lives in Frankfurt."))
    block_tags = block_tags.replace('tags: ["fact"]', "tags:\n  - network\n  - vpn")
    memories["archive/2026-01-01/fact-1767225600000-arc1.md"] = _memory(
        "fact-1767225600000-arc1", "fact", "The old build server was called Hopper."
    )
    memories["namespaces/team/facts/2026-05-01/fact-1778751300000-tm01.md"] = _memory(
        "fact-1778751300000-tm01", "fact", "The team standup is at 9:30 in the Oslo office."
    )
    out: dict[str, dict] = {}
    for rel, (fm, text) in memories.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(original.write(fm, text), encoding="utf-8")
        status = fm.get("status") or ("archived" if rel.startswith("archive/") else "active")
        out[rel] = {"id": fm["id"], "text": text, "status": status, "category": fm["category"]}
    rel = "facts/2026-05-14/fact-1778751200000-blk1.md"
    (root / rel).write_text(block_tags, encoding="utf-8")
    out[rel] = {"id": "fact-1778751200000-blk1", "text": "The VPN gateway lives in Frankfurt.", "status": "active"}
    out[rel]["category"] = "fact"
    (root / "entities").mkdir()
    (root / "entities/person-priya-raman.md").write_text(ENTITY_PRIYA, encoding="utf-8")
    (root / "entities/project-atlas.md").write_text(ENTITY_ATLAS, encoding="utf-8")
    out["entities/person-priya-raman.md"] = {
        "id": "person-priya-raman",
        "text": "Priya leads Project Atlas and owns the database migration.",
        "status": "active",
        "category": "entity",
    }
    out["entities/project-atlas.md"] = {
        "id": "project-atlas",
        "text": "Atlas is the billing platform rewrite, running on Kubernetes in two regions.",
        "status": "active",
        "category": "entity",
    }
    # The original's other files: state, identity, a profile, a question queue.
    (root / "state").mkdir()
    (root / "state/meta.json").write_text('{"extractionCount": 12}\n')
    (root / "state/fact-hashes.txt").write_text("# remnic-content-hash-index:v2\n" + "ab" * 32 + "\n")
    (root / "state/compression-guidelines.md").write_text("# Guidelines\n\nKeep facts short.\n")
    (root / "identity").mkdir()
    (root / "identity/identity-anchor.md").write_text("I am the Atlas team's assistant.\n")
    (root / "profile.md").write_text("# Profile\n\nThe user works on billing.\n")
    return out


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".remnic")
    }


@pytest.fixture
def adopted(tmp_path: Path) -> tuple[Memory, dict[str, dict], dict[str, bytes]]:
    root = tmp_path / "remnic-memory"
    root.mkdir()
    memories = original_directory(root)
    before = tree_bytes(root)
    assert run_cli("init", str(root)).code == 0
    result = run_cli("sync", "run", "--memory-dir", str(root))
    assert result.code == 0, result.out + result.err
    memory = Memory.open(settings=settings_for(root))
    yield memory, memories, before
    memory.close()


def test_an_original_directory_survives_init_sync_and_doctor_byte_for_byte(adopted: tuple) -> None:
    memory, memories, before = adopted
    root = memory.root
    after = tree_bytes(root)
    changed = [rel for rel, data in before.items() if after.get(rel) != data]
    assert changed == []
    doctor = run_cli("doctor", "--json", "--memory-dir", str(root))
    assert doctor.code == 0, doctor.out
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert (
        checks["memory-files"]["status"] == "ok" and f"{len(memories)} memory files" in checks["memory-files"]["detail"]
    )
    assert checks["working-tree"]["detail"] == "clean"
    skipped = "\n".join(checks["skipped-files"]["problems"])
    assert "profile.md: the original Remnic's profile.md: not a memory" in skipped
    assert "identity/identity-anchor.md: the original Remnic's identity/" in skipped and "--adopt" not in skipped
    assert "state/" not in skipped  # the original's records are neither memories nor worth a line
    assert tree_bytes(root) == after  # doctor changed nothing either
    tracked = set(git(root, "ls-files").splitlines())
    assert set(memories) <= tracked  # every memory is committed, as it was
    assert not any(p.startswith(("state/", "identity/")) or p == "profile.md" for p in tracked)
    again = run_cli("sync", "run", "--memory-dir", str(root))
    assert again.code == 0 and "nothing to sync" in again.out and tree_bytes(root) == after


def test_every_original_memory_is_read_with_its_id_category_and_status(adopted: tuple) -> None:
    memory, memories, _ = adopted
    listed = {r.path: r for r in memory.list()}
    assert set(listed) == set(memories)
    for rel, want in memories.items():
        record = listed[rel]
        assert (record.id, record.category, record.status) == (want["id"], want["category"], want["status"]), rel
    full = listed["facts/2026-05-14/fact-1778750467999-a1b2.md"]
    assert full.frontmatter["intentGoal"] == "ship: the release" and full.confidence == 0.9
    assert full.frontmatter["structuredAttributes"] == {"runner": "self-hosted", "city": "Austin"}
    assert full.tags == ["tooling", "ci/cd", "c++"]
    assert listed["facts/2026-05-14/fact-1778751200000-blk1.md"].tags == ["network", "vpn"]
    priya = memory.get("person-priya-raman")
    assert priya.category == "entity" and "person" in priya.tags and "P. Raman" in priya.aliases
    assert memory.get("project-atlas").path == "entities/project-atlas.md"
    assert "id" not in priya.frontmatter  # an entity file is never given memory keys


def test_every_original_memory_is_recalled_and_only_active_ones_by_default(adopted: tuple) -> None:
    memory, memories, _ = adopted
    for rel, want in memories.items():
        # Entity pages are recalled when asked for (their timelines repeat the memories they cite).
        category = "entity" if rel.startswith("entities/") else None
        hits = [h.id for h in memory.recall(want["text"], top_k=5, namespace=None, category=category)]
        if want["status"] == "active":
            assert want["id"] in hits, (rel, hits)
        else:
            assert want["id"] not in hits, rel
    aliased = memory.recall("P. Raman", top_k=3, category="entity")  # an alias from ## Aliases
    assert aliased.hits[0].id == "person-priya-raman"


def test_an_edit_to_an_original_file_changes_only_updated_and_content_hash(adopted: tuple) -> None:
    memory, _, _ = adopted
    rel = "facts/2026-05-14/fact-1778750467999-a1b2.md"
    path = memory.root / rel
    before = path.read_text()
    path.write_text(before.replace("since May.", "since April."))
    report = memory.sync()
    assert [(c.kind, c.path, c.normalized) for c in report.changes] == [("modified", rel, ["contentHash", "updated"])]
    old_lines, new_lines = before.splitlines(), path.read_text().splitlines()
    differ = [(a, b) for a, b in zip(old_lines, new_lines) if a != b]
    assert [a.split(":")[0] for a, _ in differ] == [
        "updated",
        "contentHash",
        "CI runs on the self-hosted runner since May.",
    ]
    read_back = original.read(path.read_text())
    assert read_back["contentHash"] == original.content_hash("CI runs on the self-hosted runner since April.")
    assert len(read_back["updated"]) == len("2026-05-14T09:25:00.100Z") and read_back["updated"].endswith("Z")


def test_files_remnic_writes_read_back_under_the_originals_rules(memory: Memory) -> None:
    stored = memory.store(
        'Deploys need a "go" from ops: always', category="decision", tags=["ops", "a: b", "c++"], importance=0.9
    ).record
    forgotten = memory.store("The old VPN is at 10.0.0.1", category="fact").record
    memory.forget(forgotten.id, reason='user said "drop it"\nand left')
    memory.update(stored.id, {"status": "archived", "tags": ["ops", "#release"]})
    (memory.root / "preferences/tabs.md").write_text("Ana prefers tabs.\n")
    memory.sync()
    imported = memory.import_records([{"content": "Imported: the SLA is 99.9%", "category": "commitment"}]).record
    emoji = memory.store("Launch day 🚀 went well", tags=["emoji🚀", "日本語"]).record
    assert 'tags: ["emoji🚀", "日本語"]' in (memory.root / emoji.path).read_text()  # as typed, not \U0001F680
    records = (
        memory.get(stored.id),
        memory.get(forgotten.id),
        memory.files.read("preferences/tabs.md"),
        imported,
        emoji,
    )
    for record in records:
        text = (memory.root / record.path).read_text()
        theirs = original.read(text)
        assert theirs is not None, record.path
        ours = parse_file(text, record.path)
        assert theirs["id"] == ours.id and theirs["category"] == ours.category, record.path
        assert theirs["status"] == ours.status and theirs["tags"] == ours.frontmatter["tags"], record.path
        assert theirs["confidence"] == ours.confidence and theirs["content"] == ours.content, record.path
        assert theirs["created"] == ours.frontmatter["created"] and theirs["updated"] == ours.frontmatter["updated"]
        assert theirs["contentHash"] == original.content_hash(ours.content), record.path
    theirs = original.read((memory.root / memory.get(forgotten.id).path).read_text())
    assert theirs["forgottenReason"] == 'user said "drop it"\nand left'
    assert original.read((memory.root / memory.get(stored.id).path).read_text())["tags"] == ["ops", "#release"]


def test_content_hash_is_verified_the_originals_way_and_never_respelled(tmp_path: Path) -> None:
    from remnic.memfile.values import hash_matches, normalized_text, original_hash

    assert normalized_text("Héllo, World!  It's 9:30.") == "héllo world it s 9 30"
    assert original_hash("Héllo, World!  It's 9:30.") == original.content_hash("Héllo, World!  It's 9:30.")
    # ASCII goes through a translation table and the rest character by character: both as the original.
    for text in [
        "Tabs\tand\x1cseparators\x1f, NBSP\u00a0here; e\u0301 and \u00e9 — “quotes” & emoji 😀!",
        "Ĳssel İstanbul ſtraße ΣΑΣ ٣ ① ½ ⅷ 𝔘 \u2028 line\u2029 [[Link|alias]] #tag @ana 50%",
        "",
    ]:
        assert normalized_text(text) == original.normalized(text), text
        assert original_hash(text) == original.content_hash(text), text
    assert hash_matches(original.content_hash("Atlas runs on PG."), "Atlas runs on PG. [Source: chat]") is True
    assert hash_matches(original.content_hash("Atlas runs on PG."), "Atlas runs on MySQL.") is False
    assert hash_matches("sha256:" + "0" * 64, "x") is False  # remnic's older spelling, checked its own way
    assert hash_matches("some-tool-value", "x") is None  # a spelling neither writes: left as it is


def test_config_written_by_the_original_loads_with_its_directory(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "remnic-memory"
    root.mkdir()
    original_directory(root)
    cfg = isolated_home / ".config" / "remnic" / "config.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(
        json.dumps({"remnic": {"memoryDir": str(root), "recallBudgetChars": 4000}, "server": {"port": 4400}})
    )
    assert run_cli("init").code == 0
    assert run_cli("sync", "run").code == 0
    result = run_cli("list", "--json")
    assert result.code == 0 and result.json()["count"] == 22


def test_normalize_is_the_one_way_to_have_original_files_rewritten(adopted: tuple) -> None:
    memory, memories, before = adopted
    head, on_disk = memory.ledger.head(), tree_bytes(memory.root)
    dry = run_cli("sync", "run", "--normalize", "--dry-run", "--memory-dir", str(memory.root))
    assert dry.code == 0 and "would sync" in dry.out
    assert tree_bytes(memory.root) == on_disk and memory.ledger.head() == head  # the dry run changed nothing
    result = run_cli("sync", "run", "--normalize", "--memory-dir", str(memory.root))
    assert result.code == 0, result.out
    rel = "corrections/correction-1778751000001-k2k2.md"
    text = (memory.root / rel).read_text()
    assert text.startswith(before[rel].decode().split("---\n\n")[0])  # every line kept, keys only added
    assert "status: active" in text and "importanceScore: 0.5" in text
    full = (memory.root / "facts/2026-05-14/fact-1778750467999-a1b2.md").read_text()
    assert "confidenceTier: implied" in full  # the tier follows the score when asked
    assert original.read(full)["intentGoal"] == "ship: the release"


def test_an_explicit_write_to_an_entity_file_keeps_it_an_entity(adopted: tuple) -> None:
    memory, _, _ = adopted
    memory.forget("person-priya-raman", reason="left the company")
    priya = memory.get("person-priya-raman")
    assert priya.category == "entity" and "person" in priya.tags and priya.status == "forgotten"
    assert (memory.root / priya.path).read_text().count("## Synthesis") == 1
