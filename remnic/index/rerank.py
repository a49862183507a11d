"""A local cross-encoder (ONNX) that scores (query, memory text) pairs: the optional rerank stage's model.

The model is whatever the user exported: a directory holding ``model.onnx`` and
its ``tokenizer.json`` (or the path of the ``.onnx`` file, with ``tokenizer.json``
beside it). Inputs ``input_ids`` and ``attention_mask`` (and ``token_type_ids``
when the graph takes them); the first output holds one logit per pair —
``(batch,)``, ``(batch, 1)``, or ``(batch, 2)`` for a two-class head, whose
second class is "relevant". Scores are ``sigmoid(logit)``. Nothing is downloaded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .embed import EmbeddingError, _file_sha256, _quiet_run
from .embed_spec import run_failure, shown

_INT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
KEY = "recall.rerank"


class RerankError(EmbeddingError):
    """The cross-encoder's files are missing, unloadable or of the wrong shape."""


@dataclass(frozen=True)
class RerankerSpec:
    path: Path
    """A directory with model.onnx + tokenizer.json, or the .onnx file (tokenizer.json beside it)."""
    max_length: int = 256
    threads: int = 1
    batch_size: int = 8

    @property
    def model_file(self) -> Path:
        return self.path / MODEL_FILE if self.path.is_dir() else self.path

    @property
    def tokenizer_file(self) -> Path:
        return (self.path if self.path.is_dir() else self.path.parent) / TOKENIZER_FILE


@dataclass
class RerankScores:
    scores: list[float | None]
    """sigmoid(logit) per text, None where the latency budget ran out before it was scored."""
    ms: float


class Reranker:
    def __init__(self, spec: RerankerSpec) -> None:
        self.spec = spec
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        try:
            return "rerank-" + _file_sha256(self.spec.model_file, f"{KEY}: rerank model")[:12]
        except EmbeddingError as exc:  # the file vanished since it loaded
            raise RerankError(exc.message) from None

    def label(self) -> str:
        """The setting and the model's absolute file, for messages."""
        return f"{KEY} {shown(self.spec.model_file)}"

    def _load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            model, tok_path = self.spec.model_file, self.spec.tokenizer_file
            if not model.is_file():
                raise RerankError(
                    f"{KEY}: rerank model not found: {shown(model)} ({KEY} names a directory with {MODEL_FILE}, "
                    "or the .onnx file)"
                )
            if not tok_path.is_file():
                raise RerankError(
                    f"{KEY}: rerank tokenizer not found: {shown(tok_path)} (put {TOKENIZER_FILE} beside the model)"
                )
            try:
                tok = Tokenizer.from_file(str(tok_path))
            except Exception as exc:  # tokenizers raises plain Exception subclasses
                raise RerankError(f"{KEY}: could not load the tokenizer {shown(tok_path)}: {exc}") from exc
            tok.enable_truncation(max_length=self.spec.max_length, strategy="only_second")
            tok.no_padding()
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = max(1, self.spec.threads)
            opts.inter_op_num_threads = 1
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            try:
                session = ort.InferenceSession(str(model), sess_options=opts, providers=["CPUExecutionProvider"])
            except Exception as exc:
                raise RerankError(f"{self.label()}: could not load the ONNX model: {exc}") from exc
            inputs = {i.name: i for i in session.get_inputs()}
            missing = [n for n in ("input_ids", "attention_mask") if n not in inputs]
            if missing:
                raise RerankError(f"{self.label()}: the rerank model lacks inputs {missing}; it has {sorted(inputs)}")
            self._inputs = {
                n: _INT_TYPES.get(inputs[n].type, np.int64)
                for n in ("input_ids", "attention_mask", "token_type_ids")
                if n in inputs
            }
            self._tokenizer = tok
            self._session = session

    def _run(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """sigmoid(logit) per text; any failure of the tokenizer or the model is a RerankError."""
        try:
            return self._logits(query, texts)
        except RerankError:
            raise
        except Exception as exc:  # noqa: BLE001 - onnxruntime's and tokenizers' own types: the model failed
            tok = f"{TOKENIZER_FILE} beside it, {shown(self.spec.tokenizer_file)}"
            raise RerankError(run_failure(f"{self.label()}: the rerank model", exc, tok)) from None

    def _logits(self, query: str, texts: Sequence[str]) -> np.ndarray:
        encs = self._tokenizer.encode_batch([(query, t) for t in texts])
        width = max(len(e.ids) for e in encs)
        cols = {n: np.zeros((len(encs), width), dtype=d) for n, d in self._inputs.items()}
        for row, e in enumerate(encs):
            k = len(e.ids)
            cols["input_ids"][row, :k] = e.ids
            cols["attention_mask"][row, :k] = e.attention_mask
            if "token_type_ids" in cols:
                cols["token_type_ids"][row, :k] = e.type_ids
        out = np.asarray(self._session.run(None, cols, _quiet_run())[0], dtype=np.float64)
        if out.ndim == 2 and out.shape[1] == 2:
            logits = out[:, 1] - out[:, 0]  # two-class head: log-odds of "relevant"
        elif out.ndim == 2 and out.shape[1] == 1:
            logits = out[:, 0]
        elif out.ndim == 1:
            logits = out
        else:
            raise RerankError(
                f"{self.label()}: the rerank model's output has shape {out.shape}; "
                "expected (batch,), (batch, 1) or (batch, 2)"
            )
        if len(logits) != len(texts):
            raise RerankError(f"{self.label()}: the rerank model gave {len(logits)} scores for {len(texts)} texts")
        return 1.0 / (1.0 + np.exp(-logits))

    def score(self, query: str, texts: Sequence[str], *, budget_ms: float | None = None) -> RerankScores:
        """Score texts in order, batch by batch, until done or ``budget_ms`` is spent (loading excluded)."""
        self._load()
        t0 = time.perf_counter()
        scores: list[float | None] = [None] * len(texts)
        step = max(1, self.spec.batch_size)
        for start in range(0, len(texts), step):
            if budget_ms is not None and start and (time.perf_counter() - t0) * 1000 >= budget_ms:
                break
            batch = texts[start : start + step]
            for i, v in enumerate(self._run(query, batch)):
                scores[start + i] = float(v)
        return RerankScores(scores, (time.perf_counter() - t0) * 1000)


_rerankers: dict[RerankerSpec, Reranker] = {}
_rerankers_lock = threading.Lock()


def get_reranker(spec: RerankerSpec) -> Reranker:
    """Process-wide :class:`Reranker` per spec, so each model loads once."""
    with _rerankers_lock:
        r = _rerankers.get(spec)
        if r is None:
            r = _rerankers[spec] = Reranker(spec)
        return r
