"""``remnic doctor``'s checks of the configured models: the embedding model (``embed.*``) and, when
``recall.rerank`` names one, the cross-encoder. Each loads its model and runs it (see
:mod:`remnic.index.model_probe`); a failure is a failed check naming the setting and the file, and the
doctor goes on with its other checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.index.embed_spec import EmbeddingError

if TYPE_CHECKING:  # pragma: no cover
    from remnic.config import RecallSettings
    from remnic.index.search import SearchIndex


def model_checks(index: SearchIndex, recall: RecallSettings) -> list[dict[str, Any]]:
    """The embedding model's check, and the rerank model's when ``recall.rerank`` is set."""
    checks = [embedding_check(index)]
    if recall.rerank:
        checks.append(rerank_check(recall))
    return checks


def _io(info: dict[str, Any]) -> str:
    shape = ", ".join(str(d) for d in info["shape"])
    return f"inputs {', '.join(info['inputs'])}; output {info['output']} ({shape})"


def embedding_check(index: SearchIndex) -> dict[str, Any]:
    from remnic.index.model_probe import describe_embedder

    name = "embedding-model"
    try:
        emb = index.embedder
        info = describe_embedder(emb)
    except EmbeddingError as exc:
        return {"name": name, "status": "fail", "detail": exc.message}
    if not info["loaded"]:
        detail = f"the packaged model ({emb.model_id}, {info['dim']} dims): {info['model']}"
    else:
        detail = (
            f"{info['model']} ({emb.model_id}): {_io(info)}; {info['dim']} dims; "
            f"tokenizer {info['tokenizer']} ({info['vocabulary']} ids)"
        )
        if info.get("int8"):
            detail += f"; int8 products (embed.int8) from {info['int8']}"
    return {"name": name, "status": "ok", "detail": detail, "model": info}


def rerank_check(recall: RecallSettings) -> dict[str, Any]:
    from remnic.index.model_probe import describe_reranker
    from remnic.index.rerank import RerankerSpec, get_reranker

    name = "rerank-model"
    try:
        model = get_reranker(RerankerSpec(Path(recall.rerank).expanduser(), max_length=recall.rerank_max_length))
        info = describe_reranker(model)
    except EmbeddingError as exc:  # RerankError
        return {"name": name, "status": "fail", "detail": exc.message}
    except OSError as exc:  # a file that cannot be read
        return {"name": name, "status": "fail", "detail": f"recall.rerank {recall.rerank}: {exc}"}
    detail = (
        f"{info['model']} ({info['modelId']}): {_io(info)}; tokenizer {info['tokenizer']} ({info['vocabulary']} ids)"
    )
    return {"name": name, "status": "ok", "detail": detail, "model": info}


def rerank_files(recall: RecallSettings) -> dict[str, Any] | None:
    """``status``'s cheap look at ``recall.rerank`` (None when unset): whether its model and tokenizer files
    are there, readable and not empty; ``state`` ok or missing, ``detail`` naming the setting and the file.
    Nothing is loaded: ``remnic doctor`` loads and runs the model (:func:`rerank_check`)."""
    if not recall.rerank:
        return None
    from remnic.index.embed_spec import shown
    from remnic.index.rerank import KEY, MODEL_FILE, TOKENIZER_FILE, RerankerSpec

    spec = RerankerSpec(Path(recall.rerank).expanduser())
    model, tokenizer = spec.model_file, spec.tokenizer_file
    said = None
    if not model.is_file():
        said = f"rerank model not found: {shown(model)} ({KEY} names a directory with {MODEL_FILE}, or the .onnx file)"
    elif not tokenizer.is_file():
        said = f"rerank tokenizer not found: {shown(tokenizer)} (put {TOKENIZER_FILE} beside the model)"
    else:
        said = next((f"{shown(f)} is unreadable or empty" for f in (model, tokenizer) if not _readable(f)), None)
    if said is None:
        return {"state": "ok", "model": shown(model), "detail": f"{KEY} {shown(model)} (`remnic doctor` runs it)"}
    step = "recall skips the rerank stage until it is fixed; `remnic doctor` loads and runs it"
    return {"state": "missing", "model": shown(model), "detail": f"{KEY}: {said}; {step}"}


def _readable(path: Path) -> bool:
    try:
        return os.access(path, os.R_OK) and path.stat().st_size > 0
    except OSError:
        return False
