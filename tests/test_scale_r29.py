"""Scale: dedup reuses the index's vectors; entity pages report progress and count every memory."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import pytest

from remnic.service.dedup import dedup, memory_vectors
from remnic.service.memory import Memory

NEAR = [
    "The staging database runs on port 5433",
    "The staging database runs on port 5433 now",
    "Ana prefers tabs over spaces in Python",
    "Ana prefers tabs over spaces in python code",
    "Deploys happen every Tuesday afternoon",
]
LONG = [
    "Bob owns the billing service. It runs on postgres. Backups are nightly. Alerts page the on-call.",
    "The atlas project ships quarterly. Reviews happen on Fridays. The roadmap lives in the wiki.",
    "Kafka carries the ingest queue. Workers retry three times. Timeouts are thirty seconds.",
]


def _cached_rows(mem: Memory) -> int:
    with sqlite3.connect(mem.root / ".remnic" / "embeddings.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def _groups(mem: Memory) -> list[tuple[str, str, list[str], list[float]]]:
    return [
        (g.kind, g.survivor.id, [r.id for r in g.others], [round(s, 4) for s in g.similarity])
        for g in mem.dedup().groups
    ]


def test_dedup_finds_the_same_groups_from_the_index_as_from_the_model(memory: Memory) -> None:
    ids = [memory.store(text).record.id for text in NEAR]
    before = _groups(memory)  # no index yet: every memory is chunked and embedded
    assert [(kind, survivor, others) for kind, survivor, others, _ in before] == [
        ("near", ids[0], [ids[1]]),
        ("near", ids[2], [ids[3]]),
    ] or [(kind, survivor, others) for kind, survivor, others, _ in before] == [
        ("near", ids[2], [ids[3]]),
        ("near", ids[0], [ids[1]]),
    ]
    memory.refresh_index()
    assert _groups(memory) == before
    # A one-sentence memory's vector is its whole text's, as dedup embedded it before.
    records = [r for r in memory.list() if r.status == "active"]
    whole = memory.index.embed_texts([r.content for r in records])
    assert np.allclose(memory_vectors(memory, records), whole, atol=1e-5)


def _embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text dedup hands to the embedding step (the cache, then the model), recorded as it runs."""
    import remnic.index.rows as rows

    texts: list[str] = []
    real = rows.embed_texts

    def spy(embedder: Any, cache: Any, batch: list[str], *args: Any, **kwargs: Any) -> Any:
        texts.extend(batch)
        return real(embedder, cache, batch, *args, **kwargs)

    monkeypatch.setattr(rows, "embed_texts", spy)
    return texts


def test_dedup_on_an_indexed_repo_runs_no_text_through_the_model(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in LONG + NEAR:
        memory.store(text)
    memory.refresh_index()
    cached = _cached_rows(memory)
    embedded = _embedded(monkeypatch)
    seen: list[tuple[int, int]] = []
    result = dedup(memory, progress=lambda done, total: seen.append((done, total)))
    assert embedded == []  # every vector came from the index: not even the embedding cache was asked
    assert _cached_rows(memory) == cached
    # What progress there is counts the comparison of the memories, through to the last.
    assert seen and {total for _, total in seen} == {len(LONG + NEAR)} and seen[-1] == (8, 8)
    assert len(result.groups) == 2


def test_dedup_embeds_a_memory_edited_since_it_was_indexed(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in LONG:
        memory.store(text)
    memory.refresh_index()
    record = next(r for r in memory.list() if r.content == LONG[0])
    path = memory.root / record.path
    path.write_text(path.read_text().replace("nightly", "hourly"))
    embedded = _embedded(monkeypatch)
    seen: list[tuple[int, int]] = []
    dedup(memory, progress=lambda done, total: seen.append((done, total)))
    edited = LONG[0].replace("nightly", "hourly")
    assert any("hourly" in t for t in embedded) and all(t in edited for t in embedded)  # never the other two
    assert seen and seen[-1][0] == seen[-1][1] and seen[-1][1] >= 1


def test_entities_list_counts_every_memory_naming_the_entity_past_the_timeline_cap(memory: Memory) -> None:
    from dataclasses import replace

    from remnic.service.entities import refresh

    memory.settings.entities = replace(memory.settings.entities, timeline_max=2)
    for n in range(5):
        memory.store(f"Priya Raman reviewed the billing change number {n}.")
    seen: list[tuple[int, int]] = []
    assert refresh(memory, progress=lambda done, total: seen.append((done, total)))["commit"]
    assert seen and seen[-1] == (5, 5)  # every memory read is counted
    rows, _ = memory.entities(query="Priya")
    page = next(r for r in rows if r["name"] == "Priya Raman")
    assert page["factCount"] == 5 and len(memory.entity("Priya Raman")["timeline"]) == 2
    memory.store("Priya Raman approved the billing change.")
    rows, _ = memory.entities(query="Priya")
    assert next(r for r in rows if r["name"] == "Priya Raman")["factCount"] == 6
