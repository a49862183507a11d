"""The graph tier's cost stays bounded around a hub (an entity named in many memories)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from remnic.recall import graph as G
from remnic.service.memory import Memory

COMMON: dict[str, Any] = dict(link_conf=0.9, wikilink_conf=0.85, entity_conf=0.75)


class Hub:
    """Row 0 links to rows 1–3; rows 1..n all share the entity ``hub``; ``fields`` records what is read."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.read: list[int] = []

    def fields(self, rows: Sequence[int]) -> dict[int, tuple[Mapping[str, Any], str]]:
        self.read.extend(rows)
        return {r: ({"links": ["1", "2", "3"]} if r == 0 else {"entityRef": "hub"}, "") for r in rows}

    def row_of_ref(self, ref: str) -> int | None:
        return int(ref) if ref.isdigit() else None

    def rows_with_entity(self, entity: str) -> list[int]:
        return list(range(1, self.n + 1)) if entity == "hub" else []


def test_a_hub_is_not_expanded_when_it_cannot_beat_what_was_found() -> None:
    hub = Hub(500)
    reached = G.traverse([1], hub, max_hops=2, min_confidence=0.5, max_nodes=9, **COMMON)
    assert [r.row for r in reached] == list(range(2, 11))  # one hop at 0.75 each: the lowest rows win ties
    assert all(r.confidences == [0.75] for r in reached)
    assert hub.read == [1]  # a second hop could only give 0.75 × 0.9 < 0.75: the 499 neighbours are not read


def test_each_hop_expands_a_bounded_number_of_nodes_strongest_first() -> None:
    hub = Hub(500)
    reached = G.traverse([0], hub, max_hops=3, min_confidence=0.1, max_nodes=1000, **COMMON)
    assert {1, 2, 3} <= {r.row for r in reached} and len(reached) == 500
    assert hub.read[:4] == [0, 1, 2, 3]  # the linked rows (0.9) are expanded before the entity's (0.675)
    assert len(hub.read) <= 1 + 3 * G.MAX_EXPAND_PER_HOP


def test_equal_paths_keep_the_first_found() -> None:
    class Diamond:
        def fields(self, rows: Sequence[int]) -> dict[int, tuple[Mapping[str, Any], str]]:
            links = {0: ["2", "1"], 1: ["3"], 2: ["3"], 3: []}
            return {r: ({"links": links[r]}, "") for r in rows}

        def row_of_ref(self, ref: str) -> int | None:
            return int(ref)

        def rows_with_entity(self, entity: str) -> list[int]:
            return []

    reached = {r.row: r for r in G.traverse([0], Diamond(), max_hops=2, min_confidence=0.1, max_nodes=9, **COMMON)}
    assert reached[3].path_rows == [0, 1, 3]  # edges are sorted by target: 1 is expanded first


@pytest.fixture
def hub_memory(memory: Memory) -> Memory:
    """40 memories naming one entity, in one import (one commit, one index batch: the hub is what is read)."""
    items = [
        {
            "content": f"Ana Souza prefers tool number {i} for the ledger work",
            "category": "preference",
            "entityRef": "Ana Souza",
        }
        for i in range(40)
    ]
    records = memory.import_records(items).records
    assert len(records) == 40 and all(r.frontmatter.get("entityRef") == "Ana Souza" for r in records)
    return memory


def test_recall_around_a_hub_reads_few_edges(hub_memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    edges_of = G.edges_of

    def counted(row: int, *args: Any, **kwargs: Any) -> list[G.Edge]:
        calls.append(row)
        return edges_of(row, *args, **kwargs)

    monkeypatch.setattr(G, "edges_of", counted)
    result = hub_memory.recall("what does Ana Souza prefer", top_k=5)
    assert len(result.hits) == 5
    assert 1 <= len(calls) <= 2  # the two seeds; their 40 neighbours already fill the tier


def test_the_shared_name_map_follows_writes(memory: Memory) -> None:
    first = memory.store("The first note about the lighthouse keeper", category="fact")
    memory.recall("lighthouse")
    idx = memory.index
    snap, catalog = idx._snap, idx._catalog
    lookup = G.CatalogLookup(snap, catalog, snap.alive)
    assert lookup.row_of_ref("no such title anywhere") is None
    assert G.CatalogLookup(snap, catalog, snap.alive)._shared is lookup._shared  # same generation: built once
    second = memory.store("A second note about the harbour pilot", category="fact", extra={"aliases": ["Pilot Jo"]})
    memory.recall("harbour")
    snap, catalog = idx._snap, idx._catalog
    fresh = G.CatalogLookup(snap, catalog, snap.alive)
    assert fresh._shared is not lookup._shared
    row = fresh.row_of_ref("Pilot Jo")
    assert row is not None and snap.ids[row] == second.id
    assert first.id != second.id
