"""Snapshots in the original Remnic's JSON shape, shared by the renderer tests."""

from __future__ import annotations

T0 = 1_767_261_600_000  # 2026-01-01T10:00:00.000Z


def bare(**overrides: object) -> dict:
    """A snapshot in the original's JSON shape with empty sections."""
    snap = {
        "schemaVersion": "1",
        "query": "which editor does Ben use",
        "snapshotId": "c0ffee00-0000-4000-8000-000000000001",
        "capturedAt": T0,
        "tierExplain": None,
        "results": [],
        "appliedResultLimit": 0,
        "appliedResults": [],
        "headroomResults": [],
        "filters": [],
        "budget": {"chars": 3000, "used": 0},
    }
    snap.update(overrides)
    return snap


def hit(memory_id: str = "pref-editor", **extra: object) -> dict:
    r = {
        "memoryId": memory_id,
        "path": f"preferences/{memory_id}.md",
        "servedBy": "hybrid",
        "scoreDecomposition": {"final": 0.75},
        "admittedBy": [],
    }
    r.update(extra)
    return r


def rich() -> dict:
    """Header members, two filters, a graph result and a rejected one, a tier explain with anchors."""
    return bare(
        sessionKey="sess-ben",
        namespace="ben",
        traceId="tr-9",
        tierExplain={
            "tier": "direct-answer",
            "tierReason": "single trusted preference",
            "filteredBy": ["trust-zone"],
            "candidatesConsidered": 6,
            "latencyMs": 4,
            "sourceAnchors": [{"path": "preferences/pref-editor.md", "lineRange": [3, 4]}, {"path": "notes/x.md"}],
        },
        filters=[
            {"name": "namespace-scope", "considered": 50, "admitted": 6},
            {"name": "recall-result-limit", "considered": 6, "admitted": 2, "reason": "k=2"},
        ],
        results=[
            hit(
                scoreDecomposition={"final": 0.9, "vector": 0.7, "bm25": 0.3, "importance": 0.6, "mmrPenalty": 0.1},
                admittedBy=["namespace-scope", "trust-zone"],
                graphPath=["ent-ben", "pref-editor"],
                auditEntryId="audit-1",
            ),
            hit("pref-old-editor", admittedBy=["namespace-scope"], rejectedBy="recall-result-limit"),
        ],
        budget={"chars": 3000, "used": 812},
    )
