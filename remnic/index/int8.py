"""The packaged model's int8 weights run as int8 matrix products (``embed.int8``).

The packaged all-MiniLM-L6-v2 stores each weight matrix as int8 with a scale per output column and
turns it back into float (``Cast``, ``Mul``) in front of its ``MatMul``: onnxruntime folds that at
load and computes in float, so the int8 is on disk only. :func:`rewrite` feeds the stored int8
weights to ``MatMulInteger`` instead, each call's activations quantized on the fly
(``DynamicQuantizeLinear``), the product scaled back to float; onnxruntime fuses the four nodes
into one (``DynamicQuantizeMatMul``). On LoCoMo's turns that is 1.9x fewer CPU-seconds per text,
vectors at cosine 0.993 on average (0.977 at worst) to the float products.

The same cache keeps the float model's fused-kernel rewrite (:mod:`.fused`, :func:`fused_model`).
The rewritten model is kept in the user's cache folder (:func:`cache_dir`), named by the original's
sha256 and its own, so a process after the first loads it straight from there (faster than the
original: no weights to fold, no ``onnx`` to import) once its bytes check out; every installation of
the same model shares one file. A file that does not check out is made again. The folder holds 23 MB
per model version and can be deleted at any time.

Hashing both files costs every process that embeds ~50 ms of CPU, so the folder also keeps a small
stamp per hashed file (the packaged model's keyed by its resolved path: its own folder may be read-only):
its size, mtime, ctime, inode and sha256 (:func:`.embed_spec._file_sha256`). A later process trusts
the recorded sha256 while the file's stat still matches: any write moves the ctime, which cannot be set back,
so a damaged rewrite or a newly installed model is hashed again and never matched to an old rewrite.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import by_interrupt
from remnic.fsio import write_atomic

from .embed_spec import EmbeddingError, _file_sha256

if TYPE_CHECKING:  # pragma: no cover - imports only for annotations
    import onnx
    import onnxruntime

__all__ = [
    "NEEDS_ONNX",
    "REWRITE_VERSION",
    "cache_dir",
    "forget",
    "fused_model",
    "int8_model",
    "kept_at",
    "open_session",
    "rewrite",
]

log = logging.getLogger(__name__)

REWRITE_VERSION = 1  # part of the cached file's name: a change to rewrite() must not load an old file
NEEDS_ONNX = (
    "the int8 rewrite of the packaged model (embed.int8) needs the onnx package: "
    "pip install onnx, or set embed.int8 to false"
)
_STALE_TMP_S = 3600.0  # a temporary file this old was left by a process that died while writing it
_memo: dict[str, str | bytes] = {}  # the original's sha256 -> cached path, rewritten bytes, or b"" (nothing to rewrite)
_memo_lock = threading.Lock()


def open_session(path: Path, opts: Any, *, int8: bool, label: str, fuse: bool = False) -> onnxruntime.InferenceSession:
    """The ORT session of the model at ``path``: its int8 rewrite when ``int8``, else its fused-kernel rewrite
    when ``fuse`` (:mod:`.fused`; the same vectors, so a fused model that will not load is skipped and the
    original used); a cached rewrite that no longer loads is dropped and made again. ``label`` names the
    model in errors."""
    import onnxruntime as ort

    for attempt in range(3):
        model: str | bytes = str(path)
        try:
            if int8:
                model = int8_model(path, label) or model
            elif fuse:
                model = _fused_or_none(path, label) or model
            return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
        except EmbeddingError:
            raise
        except ImportError as exc:
            if by_interrupt(exc):  # Ctrl-C while onnx or onnxruntime loaded: stop, as asked
                raise KeyboardInterrupt from exc
            if not int8:
                fuse = False  # the fused rewrite is an optimisation: without onnx, the original runs
                continue
            raise EmbeddingError(f"{label}: {NEEDS_ONNX} ({exc})") from exc
        except Exception as exc:
            if attempt == 0 and isinstance(model, str) and model != str(path):
                log.warning("the cached rewrite %s did not load (%s); making it again", model, exc)
                forget(model)
                continue
            if fuse and model != str(path):
                log.warning("the fused rewrite of %s did not load (%s); running the model as it is", label, exc)
                fuse = False
                continue
            what = "its int8 rewrite (embed.int8)" if int8 else "the ONNX model"
            raise EmbeddingError(f"{label}: could not load {what}: {exc}") from exc
    raise AssertionError("unreachable")


def rewrite(model: bytes) -> tuple[bytes, int]:
    """``model`` with each ``MatMul(x, Cast(int8 W) * scale)`` as an int8 product; and how many were rewritten.

    Only a 2-D weight read by that one ``MatMul``, with one scale or one per output column and no
    zero point, is rewritten; anything else stays as it was.
    """
    import onnx
    from onnx import TensorProto, helper

    parsed = onnx.load_from_string(model)
    graph = parsed.graph
    inits = {i.name: i for i in graph.initializer}
    made_by = {out: node for node in graph.node for out in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    for out in graph.output:
        uses[out.name] = uses.get(out.name, 0) + 1

    nodes: list[onnx.NodeProto] = []
    gone: set[int] = set()
    for node in graph.node:
        found = _dequantized_weight(node, made_by, inits, uses)
        if found is None:
            nodes.append(node)
            continue
        mul, cast = found
        p = f"remnic_i8_{len(gone) // 2}_"
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [node.input[0]], [p + "xq", p + "xs", p + "xz"], name=p + "q"),
            helper.make_node("MatMulInteger", [p + "xq", cast.input[0], p + "xz"], [p + "y"], name=p + "matmul"),
            helper.make_node("Cast", [p + "y"], [p + "yf"], to=TensorProto.FLOAT, name=p + "float"),
            helper.make_node("Mul", [p + "xs", mul.input[1]], [p + "s"], name=p + "scales"),
            helper.make_node("Mul", [p + "yf", p + "s"], list(node.output), name=p + "scaled"),
        ]
        gone.update((id(mul), id(cast)))
    if not gone:
        return model, 0
    del graph.node[:]
    graph.node.extend(n for n in nodes if id(n) not in gone)
    return parsed.SerializeToString(), len(gone) // 2


def _dequantized_weight(
    node: onnx.NodeProto,
    made_by: dict[str, onnx.NodeProto],
    inits: dict[str, onnx.TensorProto],
    uses: dict[str, int],
) -> tuple[onnx.NodeProto, onnx.NodeProto] | None:
    """The (Mul, Cast) that dequantize ``node``'s weight, when ``node`` is a MatMul on an int8 weight."""
    from onnx import TensorProto

    if node.op_type != "MatMul" or len(node.input) != 2:
        return None
    mul = made_by.get(node.input[1])
    if mul is None or mul.op_type != "Mul" or len(mul.input) != 2 or uses.get(node.input[1]) != 1:
        return None
    cast = made_by.get(mul.input[0])
    scale = inits.get(mul.input[1])
    if cast is None or cast.op_type != "Cast" or uses.get(mul.input[0]) != 1 or scale is None:
        return None
    weight = inits.get(cast.input[0])
    if weight is None or weight.data_type != TensorProto.INT8 or len(weight.dims) != 2:
        return None
    columns = weight.dims[1]
    if scale.data_type != TensorProto.FLOAT or tuple(scale.dims) not in ((), (1,), (1, 1), (columns,), (1, columns)):
        return None
    return mul, cast


def cache_dir() -> Path:
    """Where rewritten models are kept: ``$XDG_CACHE_HOME/remnic/models``, else ``~/.cache/remnic/models``
    (a relative ``XDG_CACHE_HOME`` is ignored, as the XDG base directory specification says)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "remnic" / "models"


def int8_model(source: Path, what: str) -> str | bytes | None:
    """What onnxruntime loads to run ``source`` in int8: the cached file's path, else the rewritten
    bytes (kept for the next process when the cache folder is writable); None when the model has no
    dequantized int8 weights (it then runs as it is). ``what`` names the model in errors."""

    def make(data: bytes) -> bytes | None:
        out, count = rewrite(data)
        return out if count else None

    return _rewritten(source, what, f"-i8v{REWRITE_VERSION}.onnx", make)


def fused_model(source: Path, what: str) -> str | bytes | None:
    """What onnxruntime loads to run ``source`` with fused attention and GELU kernels (:mod:`.fused`), like
    :func:`int8_model`; None when the model does not match that rewrite or its outputs would differ."""
    from . import fused

    def make(data: bytes) -> bytes | None:
        out, count = fused.rewrite(data)
        if not count:
            return None
        if not _fused_agrees(data, out):
            log.warning("%s: the fused-kernel rewrite gave other outputs than the model; not used", what)
            return None
        return out

    return _rewritten(source, what, f"-fav{fused.REWRITE_VERSION}.onnx", make)


def _fused_or_none(path: Path, label: str) -> str | bytes | None:
    """:func:`fused_model`, or None when making it fails in any way (a broken ``onnx`` install raising
    something other than ImportError on import, say): the rewrite is an optimisation, never a reason not to run."""
    try:
        return fused_model(path, label)
    except EmbeddingError:
        raise
    except Exception as exc:
        if by_interrupt(exc):
            raise KeyboardInterrupt from exc
        log.warning("%s: the fused-kernel rewrite could not be made (%s); running the model as it is", label, exc)
        return None


def _fused_agrees(original: bytes, rewritten: bytes) -> bool:
    """Whether the rewrite's outputs match the original's on padded probe texts. A failure to load or run
    raises (no ``.skip`` marker is written for what may be passing trouble: the next process tries again)."""
    import numpy as np
    import onnxruntime as ort

    from . import fused

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    a = ort.InferenceSession(original, sess_options=opts, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(rewritten, sess_options=opts, providers=["CPUExecutionProvider"])
    # Two padded batches of real word ids: the padding mask must be honoured exactly as the original does.
    ids = np.array([[101, 7592, 2088, 102, 0, 0, 0], [101, 1996, 4248, 2829, 4419, 14523, 102]], dtype=np.int64)
    mask = (ids > 0).astype(np.int64)
    feeds = [{"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}]
    feeds.append({k: v[:1, :4] for k, v in feeds[0].items()})
    return fused.agrees(a, b, feeds)


def _rewritten(source: Path, what: str, suffix: str, make: Callable[[bytes], bytes | None]) -> str | bytes | None:
    """``make(source's bytes)``, cached in :func:`cache_dir` under the source's sha256 and its own (and a
    ``.skip`` marker when ``make`` gives None, so the next process does not try again)."""
    digest = _file_sha256(source, what, stamps=cache_dir())
    key = digest + suffix
    with _memo_lock:
        if key in _memo:
            return _memo[key] or None
        folder = cache_dir()
        skip = folder / f"{digest[:24]}{suffix}.skip"
        if skip.is_file():
            _memo[key] = b""
            return None
        for cached in sorted(folder.glob(f"{digest[:24]}-*{suffix}")) if folder.is_dir() else []:
            if _checks_out(cached, suffix):
                _memo[key] = str(cached)
                return str(cached)
            log.warning("the cached rewrite %s is not the file it was written as; making it again", cached)
            _remove(cached)
        data = make(source.read_bytes())
        if data is not None:
            own = hashlib.sha256(data).hexdigest()
            _memo[key] = _keep(folder / f"{digest[:24]}-{own[:24]}{suffix}", data) or data
        else:
            _keep(skip, b"")
            _memo[key] = b""
        return _memo[key] or None


def kept_at(source: Path, what: str, *, fused: bool = False) -> str | None:
    """The cached file ``source``'s int8 (or ``fused``) rewrite runs from in this process (None: from
    memory, or not loaded)."""
    from . import fused as fused_rewrite

    suffix = f"-fav{fused_rewrite.REWRITE_VERSION}.onnx" if fused else f"-i8v{REWRITE_VERSION}.onnx"
    with _memo_lock:
        found = _memo.get(_file_sha256(source, what, stamps=cache_dir()) + suffix)
    return found if isinstance(found, str) else None


def _checks_out(path: Path, suffix: str) -> bool:
    """Whether a cached file's bytes hash to what its name says (damage that still loads runs wrong)."""
    named = path.name[: -len(suffix)].split("-")[-1]
    try:
        return len(named) == 24 and _file_sha256(path, "cached model", stamps=path.parent).startswith(named)
    except EmbeddingError:
        return False


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def forget(path: str) -> None:
    """A cached file onnxruntime could not load: dropped, so the next load rewrites the model again."""
    with _memo_lock:
        for key in [k for k, v in _memo.items() if v == path]:
            del _memo[key]
    _remove(Path(path))


def _keep(path: Path, data: bytes) -> str | None:
    """``data`` written at ``path`` atomically, readable by all (a shared cache folder); its path, or None
    when the cache folder cannot be written (the bytes are then used from memory, and rewritten again by
    the next process). Temporary files that a process killed while writing left behind are removed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(".*.onnx.tmp-*"):
            try:
                if time.time() - old.stat().st_mtime > _STALE_TMP_S:
                    old.unlink()
            except OSError:
                pass
        write_atomic(path, data, mode=0o644, durable=False)  # a cache: a crash only costs a rewrite
        return str(path)
    except OSError as exc:
        log.debug("rewritten model not cached at %s: %s", path, exc)
        return None
