"""Stage 2: the filter ladder.

Every candidate walks the same gates, in this order::

    namespace-scope → [category-scope] → [date-scope] → [tag-match] → [as-of] → status-active →
    trust-zone → confidence-floor → similarity-floor → token-overlap → mmr-diversify →
    recall-result-limit → budget-fit

(``tag-match`` and ``as-of`` are the caller's filters, :mod:`remnic.recall.filters`: per-candidate
stages that appear only when the recall has them.)

Every output (the X-ray, ``RecallResult.stages``, ``remnic query --json``) uses these
names; ``recall-result-limit`` is the original Remnic's name for the top-k cut.
Scope is pushed into both retrievers, so every candidate
passes the scope stages; their reason says how far scope narrowed the index.
A per-candidate gate's verdict is one of:

- pass: appended to ``admitted_by``;
- drop: ``rejected_by`` and ``dropped_at`` are set, the candidate leaves the recall;
- exempt: the gate would have rejected it, but a tier keeps it (a pending_review
  memory shown as review context, a graph neighbour or episode sibling that does
  not repeat the query's words): ``rejected_by`` is set, ``dropped_at`` is not.

Counts are then a pure function of the verdicts, so they always chain: each
stage considers exactly what the previous one admitted, and considered −
admitted is the number it dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from .types import Candidate, StageCount

Gate = Callable[[Candidate], bool]

# Per-candidate stages, in ladder order (the index-level ones come before these).
CANDIDATE_STAGES = (
    "status-active",
    "trust-zone",
    "confidence-floor",
    "similarity-floor",
    "token-overlap",
    "mmr-diversify",
    "recall-result-limit",
    "budget-fit",
)
GATES = CANDIDATE_STAGES[:5]
"""The gates decided before scoring; the last three are decided by rank and size."""
SCOPE_STAGES = ("namespace-scope", "category-scope", "date-scope")
"""Index-level stages; category-scope and date-scope appear only when the recall has them."""
FILTER_STAGES = ("tag-match", "as-of")
"""The caller's filters (:mod:`.filters`), first of the per-candidate stages when the recall has them."""
LADDER = SCOPE_STAGES + FILTER_STAGES + CANDIDATE_STAGES
RESULT_LIMIT = "recall-result-limit"
"""The stage that cuts the ranked list to top-k."""


def passed(c: Candidate, name: str) -> None:
    c.admitted_by.append(name)


def drop(c: Candidate, name: str) -> None:
    if c.rejected_by is None:
        c.rejected_by = name
    c.dropped_at = name


def exempt(c: Candidate, name: str) -> None:
    """The gate would have rejected ``c``; a tier keeps it anyway."""
    if c.rejected_by is None:
        c.rejected_by = name


def run_gate(
    name: str, candidates: Sequence[Candidate], keep: Gate, reason: str = ""
) -> tuple[list[Candidate], StageCount]:
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


def chain(
    index_stages: Sequence[StageCount], candidates: Iterable[Candidate], stages: Sequence[str], reasons: dict[str, str]
) -> list[StageCount]:
    """The ladder's counts from the verdicts: ``index_stages`` first, then one count per stage name.

    The last index stage must admit exactly ``len(candidates)``.
    """
    pool = list(candidates)
    drops = Counter(c.dropped_at for c in pool if c.dropped_at is not None)
    out = list(index_stages)
    alive = len(pool)
    for name in stages:
        rejected = drops.get(name, 0)
        out.append(StageCount(name, alive, alive - rejected, reasons.get(name, "")))
        alive -= rejected
    return out


def scope_stages(names: Sequence[str], notes: Sequence[str], pool: int, entered: str) -> list[StageCount]:
    """The scope stages' counts: each admits the whole candidate pool, as scope was pushed into retrieval and
    nothing in the pool is out of it. Their reasons say how far each narrowed the index (the memories a
    narrower stage left out never became candidates); the last adds how the pool was drawn (``entered``).
    When a narrower stage follows, the first's reason says its count is that pool, not the memories it names."""
    out = []
    for i, (name, note) in enumerate(zip(names, notes, strict=True)):
        if i == 0 and len(names) > 1:
            note += f"; counted: the {pool} candidate{'' if pool == 1 else 's'} retrieved within {names[-1]}"
        out.append(StageCount(name, pool, pool, note + ("; " + entered if i == len(names) - 1 else "")))
    return out


def rejected_summary(candidates: Iterable[Candidate], stage: str, label: Callable[[Candidate], str]) -> str:
    """``rejected superseded ×2, forgotten ×1`` for the candidates ``stage`` dropped ('' if none)."""
    counts = Counter(label(c) for c in candidates if c.dropped_at == stage)
    if not counts:
        return ""
    return "rejected " + ", ".join(f"{k} ×{n}" for k, n in sorted(counts.items()))


def pool_reason(candidates: Iterable[Candidate], size: int, how: str) -> str:
    """``mmr-diversify``'s reason: the re-rank pool's size, how it is ordered, and how many candidates it
    cut for being beyond the pool. MMR itself only reorders (and at ``mmrLambda`` 1 not even that), so
    a rejection there is the pool cap, never diversity."""
    beyond = sum(1 for c in candidates if c.dropped_at == "mmr-diversify")
    cut = f"; rejected {beyond} beyond the re-rank pool (only its best {size} go on)" if beyond else ""
    return f"pool={size}, {how}{cut}"


def token_overlap(query_terms: Sequence[str], memory_terms: set[str]) -> float:
    """Fraction of (distinct) query terms present in the memory's analysed text."""
    if not query_terms:
        return 1.0
    return sum(1 for t in query_terms if t in memory_terms) / len(query_terms)
