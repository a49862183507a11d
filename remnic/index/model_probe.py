"""What the configured models are, found by loading and running them: ``remnic doctor``'s model checks.

Each describe loads the model, runs it once on a short text and once on the tokenizer's highest token
id: a tokenizer that is not the model's own gives ids past the model's vocabulary, which fails only
on the texts holding such words (onnxruntime's "Gather … out of bounds"), so a recall would meet it
by chance; the probe meets it at once. Errors are :class:`EmbeddingError` (:class:`RerankError`) naming
the setting and the file.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .embed import Embedder, _default_model_path, _quiet_run
from .embed_spec import DEFAULT_TOKENIZER_PATH, EmbeddingError, run_failure, shown
from .int8 import cache_dir, kept_at
from .rerank import TOKENIZER_FILE, Reranker, RerankError

PROBE_TEXT = "remnic doctor checks the model"


def _shape(dims: Any) -> list[int | str]:
    return [d if isinstance(d, int) else str(d) for d in (dims or [])]


def _highest_id(session: Any, types: dict[str, Any], top: int) -> None:
    """Run ``session`` on one text of one token, the tokenizer's highest id (``types``: input name → dtype)."""
    cols = {name: np.zeros((1, 1), dtype=dtype) for name, dtype in types.items()}
    cols["input_ids"][0, 0] = top
    cols["attention_mask"][0, 0] = 1
    session.run(None, cols, _quiet_run())


def is_packaged(emb: Embedder) -> bool:
    """The packaged model as shipped, run as published: nothing about it configured that could fail to
    load. Its int8 rewrite (``embed.int8``) is made or read from a cache folder, so it is loaded and run."""
    s = emb.spec
    return (
        s.model_path is None and s.tokenizer_path is None and s.pooling == "mean" and not s.output_name and not emb.int8
    )


def describe_embedder(emb: Embedder) -> dict[str, Any]:
    """The embedding model's files, inputs, output and width; raises EmbeddingError. The packaged model
    is not loaded (a known-good file): its files are only looked for."""
    if is_packaged(emb):
        model = _default_model_path()
        if not model.is_file():
            raise EmbeddingError(f"{emb.model_label()}: embedding model file not found")
        if not DEFAULT_TOKENIZER_PATH.is_file():
            raise EmbeddingError(f"{emb.tokenizer_label()}: tokenizer file not found")
        return {"model": shown(model), "tokenizer": shown(DEFAULT_TOKENIZER_PATH), "dim": emb.dim, "loaded": False}
    emb.load()
    session, tok = emb._session, emb._tokenizer
    assert session is not None and tok is not None
    out = next(o for o in session.get_outputs() if o.name == emb._output_name)
    dim = int(emb.embed([PROBE_TEXT]).shape[1])
    vocabulary = tok.get_vocab_size()
    try:
        _highest_id(session, emb._input_types, vocabulary - 1)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own types
        raise EmbeddingError(run_failure(emb.model_label(), exc, emb.tokenizer_label())) from None
    int8 = None
    if emb.int8:
        where = kept_at(_default_model_path(), emb.model_label())
        int8 = where or f"rewritten in memory (cache folder {cache_dir()} not writable)"
    return {
        "model": emb.model_label(),
        "int8": int8,
        "tokenizer": emb.tokenizer_label(),
        "inputs": sorted(i.name for i in session.get_inputs()),
        "output": out.name,
        "shape": _shape(out.shape),
        "dim": dim,
        "vocabulary": vocabulary,
        "loaded": True,
    }


def describe_reranker(model: Reranker) -> dict[str, Any]:
    """The cross-encoder's files, inputs and output; raises RerankError."""
    scores = model.score(PROBE_TEXT, [PROBE_TEXT]).scores
    session, tok = model._session, model._tokenizer
    out = session.get_outputs()[0]
    vocabulary = tok.get_vocab_size()
    try:
        _highest_id(session, model._inputs, vocabulary - 1)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own types
        where = f"{TOKENIZER_FILE} beside it, {shown(model.spec.tokenizer_file)}"
        raise RerankError(run_failure(f"{model.label()}: the rerank model", exc, where)) from None
    return {
        "model": model.label(),
        "tokenizer": shown(model.spec.tokenizer_file),
        "inputs": sorted(model._inputs),
        "output": out.name,
        "shape": _shape(out.shape),
        "vocabulary": vocabulary,
        "modelId": model.model_id,
        "probe": scores[0],
    }
