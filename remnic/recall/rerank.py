"""The optional rerank stage: a local cross-encoder rescores the best fused candidates.

Off unless ``recall.rerank`` names a cross-encoder exported to ONNX
(:mod:`remnic.index.rerank`). The top ``rerankTopN`` candidates by fused score
are scored in rank order, batch by batch, until ``rerankBudgetMs`` is spent; each
scored one gets the ``rerank`` term ``rerankWeight × sigmoid(logit)``, so the
decomposition still adds up and the X-ray shows what the model thought.
Candidates past the budget keep 0. A model that cannot be loaded, or fails on
these texts (a tokenizer that is not its own), leaves the recall as it was and
says why in the stage's reason: never the index's fault, so never a rebuild.

With a pinned clock (``REMNIC_XRAY_CLOCK``, ``clock=``) the budget is not applied:
every one of the top N is scored and no time is reported, so the pinned X-ray
is the same bytes on every run (a wall-clock budget would score a different
number of candidates from run to run).
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


def rerank(
    pool: Pool, ranked: Sequence[Candidate], query: str, s: RecallSettings, *, pinned: bool = False
) -> StageCount | None:
    """Score the best ``rerankTopN`` of ``ranked`` (best first) and set their ``rerank`` terms, in place.

    ``pinned``: the recall's clock is pinned, so no wall-clock budget (see the module's note)."""
    if not s.rerank:
        return None
    from remnic.index.embed_spec import EmbeddingError
    from remnic.index.rerank import RerankerSpec, get_reranker

    top = list(ranked[: max(0, s.rerank_top_n)])
    if not top:
        return StageCount("rerank", 0, 0, "no candidates")
    try:
        model = get_reranker(RerankerSpec(Path(s.rerank).expanduser(), max_length=s.rerank_max_length))
        pool.load(c.row for c in top)
        texts = [pool.content(c.row)[:TEXT_CHARS] for c in top]
        result = model.score(query, texts, budget_ms=None if pinned else s.rerank_budget_ms)
        name = model.model_id
    except (EmbeddingError, OSError) as exc:  # RerankError, and a file that vanished under us
        log.warning("rerank skipped: %s", exc)
        return StageCount("rerank", len(top), 0, f"skipped: {exc}")
    scored = 0
    for c, score in zip(top, result.scores):
        if score is not None:
            c.terms.rerank = s.rerank_weight * score
            scored += 1
    if pinned:
        reason = f"{name}: {scored} of {len(top)} scored (clock pinned: no time budget)"
    else:
        reason = f"{name}: {scored} of {len(top)} scored in {result.ms:.1f} ms (budget {s.rerank_budget_ms:g} ms)"
    return StageCount("rerank", len(top), scored, reason)


def tier_note(stage: StageCount) -> str:
    """The rerank stage in the tier reason: "reranked by <model>: …", or "rerank skipped: <why>"."""
    if stage.admitted:
        return f"reranked by {stage.reason}"
    return f"rerank {stage.reason}" if stage.reason.startswith("skipped") else f"rerank: {stage.reason}"
