"""The optional rerank stage: a local cross-encoder rescores the best fused candidates.

Off unless ``recall.rerank`` names a cross-encoder exported to ONNX
(:mod:`remnic.index.rerank`). The top ``rerankTopN`` candidates by fused score
are scored in rank order, batch by batch, until ``rerankBudgetMs`` is spent; each
scored one gets the ``rerank`` term ``rerankWeight × sigmoid(logit)``, so the
decomposition still adds up and the X-ray shows what the model thought.
Candidates past the budget keep 0. A model that cannot be loaded leaves the
recall as it was and says why in the stage's reason.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from remnic.config import RecallSettings

from .types import Candidate, StageCount

if TYPE_CHECKING:  # pragma: no cover
    from .pool import Pool

log = logging.getLogger("remnic.recall")
TEXT_CHARS = 2000
"""Memory text handed to the model per candidate (its tokenizer truncates further)."""


def rerank(pool: Pool, ranked: Sequence[Candidate], query: str, s: RecallSettings) -> StageCount | None:
    """Score the best ``rerankTopN`` of ``ranked`` (best first) and set their ``rerank`` terms, in place."""
    if not s.rerank:
        return None
    from remnic.index.rerank import RerankError, RerankerSpec, get_reranker

    top = list(ranked[: max(0, s.rerank_top_n)])
    if not top:
        return StageCount("rerank", 0, 0, "no candidates")
    try:
        model = get_reranker(RerankerSpec(Path(s.rerank).expanduser(), max_length=s.rerank_max_length))
        pool.load(c.row for c in top)
        texts = [pool.content(c.row)[:TEXT_CHARS] for c in top]
        result = model.score(query, texts, budget_ms=s.rerank_budget_ms)
        name = model.model_id
    except (RerankError, OSError) as exc:
        log.warning("rerank skipped: %s", exc)
        return StageCount("rerank", len(top), 0, f"skipped: {exc}")
    scored = 0
    for c, score in zip(top, result.scores):
        if score is not None:
            c.terms.rerank = s.rerank_weight * score
            scored += 1
    reason = f"{name}: {scored} of {len(top)} scored in {result.ms:.1f} ms (budget {s.rerank_budget_ms:g} ms)"
    return StageCount("rerank", len(top), scored, reason)
