"""Stage 2: the filter ladder. Each gate is a pure function and reports considered/admitted."""

from __future__ import annotations

from typing import Callable, Sequence

from .types import Candidate, StageCount

Gate = Callable[[Candidate], bool]


def run_gate(name: str, candidates: Sequence[Candidate], keep: Gate, reason: str = "") -> tuple[list[Candidate], StageCount]:
    """Apply one gate; rejected candidates remember the first gate that rejected them."""
    admitted = []
    for c in candidates:
        if keep(c):
            c.admitted_by.append(name)
            admitted.append(c)
        elif c.rejected_by is None:
            c.rejected_by = name
    stage = StageCount(name, len(candidates), len(admitted), reason if len(admitted) < len(candidates) else "")
    return admitted, stage


def token_overlap(query_terms: Sequence[str], memory_terms: set[str]) -> float:
    """Fraction of (distinct) query terms present in the memory's analysed text."""
    if not query_terms:
        return 1.0
    return sum(1 for t in query_terms if t in memory_terms) / len(query_terms)
